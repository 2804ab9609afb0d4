// The TensorBoardLogger (tensorboard_logger.cc): its event files read back
// by a reader that shares no code with the writer (tests/data/loggers/
// read_tfevents.py: the TFRecord framing and both masked CRC-32Cs checked
// in Python, every record decoded by protoc), the file's name and place,
// and hparams.yaml.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/tfevents.h"
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

}  // namespace
}  // namespace trialshim::trainer
