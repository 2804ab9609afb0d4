// The TensorBoardLogger (tensorboard_logger.cc): its event files read back
// by a reader that shares no code with the writer (tests/data/loggers/
// read_tfevents.py: the TFRecord framing and both masked CRC-32Cs checked
// in Python, every record decoded by protoc), the file's name and place,
// and hparams.yaml. The Anchors* test reads them with TensorBoard's own
// reader beside what Lightning 2.2.5's TensorBoardLogger writes for the same
// calls (tests/anchors/tensorboard_events.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>
#include <variant>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/tfevents.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/trainer/loggers.h"

namespace trialshim::trainer {
namespace {

double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using testing::ReadEvents;
using testing::Summaries;

TEST(TensorBoardLoggerTest, EventsReadBackByAnIndependentReader) {
  testing::TempDir dir;
  TensorBoardLoggerOptions o;
  o.save_dir = dir.path();
  TensorBoardLogger logger(o);
  const double start = Now();
  auto params = config::LoadYamlString(
      "lr: 0.001\nname: mlp\nflag: true\nnone: null\n"
      "net: {hidden: [64, 32], dropout: 0.1}\n"
      "layers: [{w: 1}, {w: 2}]\n",
      "hparams");
  ASSERT_OK(params);
  ASSERT_OK(logger.log_hyperparams(*params));
  ASSERT_OK(logger.save());
  ASSERT_OK(logger.log_metrics({{"train_loss", 0.25}, {"val_acc", 0.1}}, 9, 0));
  ASSERT_OK(logger.log_metrics({{"train_loss", -3.0}}, 19, 1));
  ASSERT_OK(logger.finalize("success"));
  const double end = Now();

  // events.out.tfevents.<10-digit time>.<host>.<pid>.<n>, in version_0.
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const std::string file = logger.event_file();
  EXPECT_EQ(std::filesystem::path(file).parent_path(),
            std::filesystem::path(dir.Join("lightning_logs/version_0")));
  const std::string base = std::filesystem::path(file).filename().string();
  const std::string head = "events.out.tfevents.";
  const std::string tail =
      "." + std::string(host) + "." + std::to_string(getpid()) + ".";
  ASSERT_EQ(base.substr(0, head.size()), head) << base;
  const std::string time = base.substr(head.size(), 10);
  EXPECT_EQ(time.find_first_not_of("0123456789"), std::string::npos) << base;
  EXPECT_NEAR(std::stod(time), start, 2) << base;
  EXPECT_EQ(base.substr(head.size() + 10, tail.size()), tail) << base;
  const std::string uid = base.substr(head.size() + 10 + tail.size());
  EXPECT_TRUE(!uid.empty() &&
              uid.find_first_not_of("0123456789") == std::string::npos)
      << base;

  std::vector<nlohmann::json> events = ReadEvents(file);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["file_version"], "brain.Event:2");
  EXPECT_EQ(events[0]["writer"], "trialshim.trainer.TensorBoardLogger");
  for (const auto& e : events) {
    EXPECT_GE(e["wall_time"].get<double>(), start - 1) << e.dump();
    EXPECT_LE(e["wall_time"].get<double>(), end + 1) << e.dump();
  }
  // Scalars as Lightning logs them (the epoch after the metrics; a float32
  // prints as its shortest text), hp_metric and the hparams plugin first.
  EXPECT_EQ(
      Summaries(events),
      (std::vector<std::string>{
          "0 hp_metric -1", "0 _hparams_/experiment hparams",
          "0 _hparams_/session_start_info hparams",
          "0 _hparams_/session_end_info hparams", "9 train_loss 0.25",
          "9 val_acc 0.1", "9 epoch 0", "19 train_loss -3", "19 epoch 1"}));
  // Upstream's field numbers, seen without our .proto files: file_version
  // is 3, source_metadata 10; summary 5, value 1, tag 1, simple_value 2.
  EXPECT_NE(events[0]["raw"].get<std::string>().find("3: \"brain.Event:2\""),
            std::string::npos)
      << events[0]["raw"];
  EXPECT_NE(events[0]["raw"].get<std::string>().find("10 {\n  1: \"trialshim"),
            std::string::npos)
      << events[0]["raw"];
  const std::string scalar = events[5]["raw"];
  EXPECT_NE(
      scalar.find("2: 9\n5 {\n  1 {\n    1: \"train_loss\"\n    2: 0x3e800000"),
      std::string::npos)
      << scalar;

  // The hparams plugin's content, as torch's summary.hparams makes it:
  // flattened with "/", lists of maps by index, other values as Python's
  // str(); a bool is a number (an int in Python).
  const auto content = [&](size_t event) {
    return events[event]["values"][0]["content"].get<std::string>();
  };
  const std::string experiment = content(2), start_info = content(3),
                    end_info = content(4);
  for (const char* want :
       {"hparam_infos { name: \"lr\" type: DATA_TYPE_FLOAT64 }",
        "hparam_infos { name: \"name\" type: DATA_TYPE_STRING }",
        "hparam_infos { name: \"flag\" type: DATA_TYPE_FLOAT64 }",
        "hparam_infos { name: \"none\" type: DATA_TYPE_STRING }",
        "hparam_infos { name: \"net/hidden\" type: DATA_TYPE_STRING }",
        "hparam_infos { name: \"net/dropout\" type: DATA_TYPE_FLOAT64 }",
        "hparam_infos { name: \"layers/1/w\" type: DATA_TYPE_FLOAT64 }",
        "metric_infos { name { tag: \"hp_metric\" } }"}) {
    EXPECT_NE(experiment.find(want), std::string::npos) << want << "\n"
                                                        << experiment;
  }
  for (const char* want :
       {"key: \"lr\" value { number_value: 0.001 }",
        "key: \"name\" value { string_value: \"mlp\" }",
        "key: \"flag\" value { number_value: 1 }",
        "key: \"none\" value { string_value: \"None\" }",
        "key: \"net/hidden\" value { string_value: \"[64, 32]\" }",
        "key: \"layers/0/w\" value { number_value: 1 }"}) {
    EXPECT_NE(start_info.find(want), std::string::npos) << want << "\n"
                                                        << start_info;
  }
  EXPECT_EQ(end_info, "session_end_info { status: STATUS_SUCCESS }");

  // hparams.yaml beside it, written once (as Lightning's save()).
  EXPECT_EQ(
      testing::ReadFile(dir.Join("lightning_logs/version_0/hparams.yaml")),
      "lr: 0.001\nname: mlp\nflag: true\nnone: null\nnet:\n  hidden:\n"
      "  - 64\n  - 32\n  dropout: 0.1\nlayers:\n- w: 1\n- w: 2\n");
}

TEST(TensorBoardLoggerTest, OptionsShapeTheFileAndItsEvents) {
  struct Case {
    const char* name;
    TensorBoardLoggerOptions options;
    std::string want_dir;  // relative to save_dir
    std::vector<std::string> want;
  };
  auto with = [](auto edit) {
    TensorBoardLoggerOptions o;
    edit(o);
    return o;
  };
  const std::vector<Case> cases = {
      {"no hp_metric: hyperparameters only in hparams.yaml",
       with([](auto& o) { o.default_hp_metric = false; }),
       "lightning_logs/version_0",
       {"4 loss 0.5", "4 epoch 2"}},
      {"prefix, name, version string, sub_dir",
       with([](auto& o) {
         o.prefix = "fold1";
         o.name = "tb";
         o.version = std::string("run-a");
         o.sub_dir = "train";
       }),
       "tb/run-a/train",
       {"0 fold1-hp_metric -1", "0 _hparams_/experiment hparams",
        "0 _hparams_/session_start_info hparams",
        "0 _hparams_/session_end_info hparams", "4 fold1-loss 0.5",
        "4 fold1-epoch 2"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testing::TempDir dir;
    TensorBoardLoggerOptions o = c.options;
    o.save_dir = dir.path();
    o.filename_suffix = ".v2";
    TensorBoardLogger logger(o);
    ASSERT_OK(logger.log_hyperparams(
        config::Node::MakeMap({{"lr", config::Node::Double(0.5)}})));
    ASSERT_OK(logger.log_metrics({{"loss", 0.5}}, 4, 2));
    ASSERT_OK(logger.finalize("success"));
    EXPECT_EQ(std::filesystem::path(logger.event_file()).parent_path(),
              std::filesystem::path(dir.Join(c.want_dir)));
    EXPECT_EQ(logger.event_file().substr(logger.event_file().size() - 3),
              ".v2");
    EXPECT_EQ(Summaries(ReadEvents(logger.event_file())), c.want);
    EXPECT_EQ(testing::ReadFile(dir.Join(c.want_dir + "/hparams.yaml")),
              "lr: 0.5\n");
  }
}

// A resumed fit marks the restart (SessionLog START at the checkpoint's
// step), so TensorBoard drops what the killed run logged after it.
TEST(TensorBoardLoggerTest, ResumeWritesASessionStart) {
  testing::TempDir dir;
  TensorBoardLoggerOptions o;
  o.save_dir = dir.path();
  o.default_hp_metric = false;
  TensorBoardLogger logger(o);
  ASSERT_OK(logger.resume(30));
  ASSERT_OK(logger.log_metrics({{"loss", 1.0}}, 30, 3));
  ASSERT_OK(logger.finalize("success"));
  std::vector<nlohmann::json> events = ReadEvents(logger.event_file());
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1]["session_log"], "START");
  EXPECT_EQ(events[1]["step"], 30);
}

// On Vertex, a TensorBoardLogger without save_dir writes into
// $AIP_TENSORBOARD_LOG_DIR (gs:// read through /gcs/); one with a save_dir
// keeps it.
TEST(TensorBoardLoggerTest, VertexDirectoryWhenNoSaveDir) {
  testing::TempDir dir;
  const std::string d = dir.path();
  struct Case {
    const char* name;
    std::string env;  // "": unset
    std::string save_dir;
    std::string want;
  };
  const Case cases[] = {
      {"no env: the trainer's root", "", "",
       d + "/root/lightning_logs/version_0"},
      {"env: the Vertex dir", d + "/vertex", "",
       d + "/vertex/lightning_logs/version_0"},
      {"gs:// env is read through /gcs/", "gs://bucket/tb", "",
       "/gcs/bucket/tb/lightning_logs/version_0"},
      {"an explicit save_dir wins", d + "/vertex", d + "/mine",
       d + "/mine/lightning_logs/version_0"},
  };
  for (const Case& c : cases) {
    if (!c.env.empty()) {
      setenv("AIP_TENSORBOARD_LOG_DIR", c.env.c_str(), 1);
    } else {
      unsetenv("AIP_TENSORBOARD_LOG_DIR");
    }
    TensorBoardLoggerOptions o;
    o.save_dir = c.save_dir;
    TensorBoardLogger logger(o);
    logger.set_default_save_dir(d + "/root");
    EXPECT_EQ(logger.log_dir(), c.want) << c.name;
  }
  unsetenv("AIP_TENSORBOARD_LOG_DIR");
}

// --- Beside Lightning (the anchors): the same calls through our logger and
// Lightning 2.2.5's TensorBoardLogger, both files read by TensorBoard's
// LegacyEventFileLoader and EventAccumulator: the summaries in file order,
// the scalars (float32 values), the hparams plugin's three contents, the
// file's place and name, and hparams.yaml.

struct TensorBoardCase {
  const char* name;
  TensorBoardLoggerOptions options;
  std::string params;  // YAML; "" for no log_hyperparams
  // (step, epoch, metrics), each one log_metrics call.
  std::vector<std::tuple<int64_t, int64_t, std::map<std::string, double>>>
      metrics;
  std::string status = "success";
  // Holds a list of maps, which 2.6 flattens by index (layers/0/w) as we
  // do, and 2.2.5 logs as its str().
  bool list_of_maps = false;
};

std::string Hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// The file's path under its save_dir with the time, process id and counter
// of its name left out.
std::string Shape(const std::string& relative) {
  static const std::regex name("tfevents\\.[0-9]{10}\\.(.*)\\.[0-9]+\\.[0-9]+");
  return std::regex_replace(relative, name, "tfevents.<time>.$1.<pid>.<n>");
}

TEST(AnchorsTensorBoardLogger, TensorBoardReadsWhatLightningWrites) {
  SKIP_WITHOUT_ANCHORS();
  auto with = [](auto edit) {
    TensorBoardLoggerOptions o;
    edit(o);
    return o;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<TensorBoardCase> cases = {
      {"hyperparameters and metrics",
       {},
       "lr: 0.001\nname: mlp\nflag: true\nnone: null\nwidth: 64\n"
       "net: {hidden: [64, 32], dropout: 0.1}\n",
       {{9, 0, {{"train_loss", 0.25}, {"val_acc", 0.1}}},
        {19, 1, {{"train_loss", -3.0}}}}},
      {"values a float32 rounds, and non-finite ones",
       {},
       "",
       {{1,
         0,
         {{"big", 1e10},
          {"tiny", 1e-40},
          {"third", 1.0 / 3},
          {"inf", inf},
          {"ninf", -inf},
          {"nan", std::nan("")}}}}},
      {"no hp_metric: hyperparameters only in hparams.yaml",
       with([](auto& o) { o.default_hp_metric = false; }),
       "lr: 0.5\n",
       {{4, 2, {{"loss", 0.5}}}}},
      {"prefix, name, version string, sub_dir, suffix",
       with([](auto& o) {
         o.prefix = "fold1";
         o.name = "tb";
         o.version = std::string("run-a");
         o.sub_dir = "train";
         o.filename_suffix = ".v2";
       }),
       "lr: 0.5\n",
       {{4, 2, {{"loss", 0.5}}}}},
      {"finalized as failed",
       {},
       "lr: 0.5\n",
       {{0, 0, {{"loss", 1}}}},
       "failed"},
      {"a list of maps", {}, "layers: [{w: 1}, {w: 2}]\n", {}, "success", true},
  };
  testing::TempDir root;
  nlohmann::ordered_json input = nlohmann::ordered_json::array();
  std::vector<std::string> ours;
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorBoardCase& c = cases[i];
    TensorBoardLoggerOptions o = c.options;
    o.save_dir = root.Join("ours" + std::to_string(i));
    TensorBoardLogger logger(o);
    nlohmann::ordered_json lightning = {
        {"dir", root.Join("lightning" + std::to_string(i))},
        {"options", {{"default_hp_metric", o.default_hp_metric}}},
        {"status", c.status},
        {"metrics", nlohmann::ordered_json::array()}};
    if (!o.prefix.empty()) lightning["options"]["prefix"] = o.prefix;
    if (!o.name.empty()) lightning["options"]["name"] = o.name;
    if (const auto* v = std::get_if<std::string>(&o.version)) {
      lightning["options"]["version"] = *v;
    }
    if (!o.sub_dir.empty()) lightning["options"]["sub_dir"] = o.sub_dir;
    if (!o.filename_suffix.empty()) {
      lightning["options"]["filename_suffix"] = o.filename_suffix;
    }
    if (!c.params.empty()) {
      StatusOr<config::Node> params = config::LoadYamlString(c.params, "p");
      ASSERT_OK(params) << c.name;
      ASSERT_OK(logger.log_hyperparams(*params)) << c.name;
      lightning["params"] =
          nlohmann::ordered_json::parse(config::ToJson(*params));
    }
    for (const auto& [step, epoch, metrics] : c.metrics) {
      ASSERT_OK(logger.log_metrics(metrics, step, epoch)) << c.name;
      // Lightning's Trainer adds the epoch after the module's metrics.
      nlohmann::ordered_json m = nlohmann::ordered_json::object();
      for (const auto& [k, v] : metrics) m[k] = Hex(v);
      m["epoch"] = Hex(static_cast<double>(epoch));
      lightning["metrics"].push_back(nlohmann::ordered_json::array({step, m}));
    }
    ASSERT_OK(logger.save()) << c.name;
    ASSERT_OK(logger.finalize(c.status)) << c.name;
    ours.push_back(std::filesystem::relative(logger.event_file(), o.save_dir));
    input.push_back({{"ours", logger.event_file()}, {"lightning", lightning}});
  }
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/tensorboard_events.py",
                                {root.Write("cases.json", input.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json got = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(got.size(), cases.size()) << f.out;
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorBoardCase& c = cases[i];
    nlohmann::json view = got[i];
    if (c.list_of_maps) {
      const std::string ours_start =
          view["ours"]["hparams"]["_hparams_/session_start_info"];
      const std::string theirs_start =
          view["lightning"]["hparams"]["_hparams_/session_start_info"];
      EXPECT_NE(ours_start.find("key: \"layers/1/w\" value { number_value: "
                                "2.0 }"),
                std::string::npos)
          << ours_start;
      EXPECT_NE(theirs_start.find("key: \"layers\" value { string_value: "
                                  "\"[{\\'w\\': 1}, {\\'w\\': 2}]\" }"),
                std::string::npos)
          << theirs_start;
      view["ours"].erase("hparams");
      view["lightning"].erase("hparams");
    }
    EXPECT_EQ(view["ours"].dump(1), view["lightning"].dump(1)) << c.name;
    EXPECT_EQ(Shape(ours[i]), Shape(view["lightning_file"])) << c.name;
    const std::string dir =
        std::filesystem::path(ours[i]).parent_path().string();
    EXPECT_EQ(testing::ReadFile(root.Join("ours" + std::to_string(i) + "/" +
                                          dir + "/hparams.yaml")),
              testing::ReadFile(root.Join("lightning" + std::to_string(i) +
                                          "/" + dir + "/hparams.yaml")))
        << c.name;
  }
}

}  // namespace
}  // namespace trialshim::trainer
