// The CSVLogger (csv_logger.cc): metrics.csv and hparams.yaml byte for byte
// as Lightning 2.6.2's CSVLogger writes them (checked against its writer's
// code run by /usr/bin/python3: tests/data/loggers/lightning_csv_logger.py),
// MetricsCsv's durable writes and its resume. The Anchors* test gives the
// same calls to the installed Lightning 2.2.5's CSVLogger, which writes
// hparams.yaml at every save (docs/lightning-differences.md).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testutil/anchors.h"
#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/trainer/loggers.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

TEST(MetricsCsvTest, WritesWhatCsvLoggerWrites) {
  testing::TempDir dir;
  MetricsCsv csv(dir.Join("metrics.csv"));
  csv.Add(0, 49, {{"train_loss", 0.25}});
  csv.Add(0, 99, {{"val_loss", 1e-05}, {"val_acc", 0.9}});
  csv.Add(1, 149, {{"train_loss", 2.0}, {"lr-Adam", 0.001}});
  ASSERT_OK(csv.Flush());
  // Lightning: csv.DictWriter over the sorted union of keys ("\r\n" after
  // each row), floats as Python's str(float).
  EXPECT_EQ(testing::ReadFile(dir.Join("metrics.csv")),
            "epoch,lr-Adam,step,train_loss,val_acc,val_loss\r\n"
            "0,,49,0.25,,\r\n"
            "0,,99,,0.9,1e-05\r\n"
            "1,0.001,149,2.0,,\r\n");
}

// A metrics.csv that can not be written is an IOError naming the file and
// the reason, and the last good file stays, with no temporary beside it.
TEST(MetricsCsvTest, WriteFailureKeepsTheOldFileAndNoTemporary) {
  testing::ExpectFailedWriteKeepsTheOldFile(
      "metrics.csv", 40, [](const std::string& path, int version) {
        MetricsCsv csv(path);
        csv.Add(0, 9, {{"train_loss", 0.5}});
        for (int step = 19; version == 1 && step < 200; step += 10) {
          csv.Add(0, step, {{"train_loss", 0.25}});
        }
        return csv.Flush();
      });
}

// Resume keeps the rows before the checkpoint's step and drops the rest
// (a kill -9 after the checkpoint logged steps the resumed run logs again).
TEST(MetricsCsvTest, ResumeKeepsTheHistoryBeforeTheCheckpoint) {
  testing::TempDir dir;
  {
    MetricsCsv first(dir.Join("metrics.csv"));
    first.Add(0, 9, {{"train_loss", 0.5}});
    first.Add(0, 9, {{"val_loss", 0.25}});
    first.Add(1, 19, {{"train_loss", 0.125}});
    ASSERT_OK(first.Flush());
  }
  MetricsCsv resumed(dir.Join("metrics.csv"));
  ASSERT_OK(resumed.Resume(/*global_step=*/10));
  resumed.Add(1, 19, {{"train_loss", 0.375}, {"lr-SGD", 0.1}});
  EXPECT_EQ(resumed.Render(),
            "epoch,lr-SGD,step,train_loss,val_loss\r\n"
            "0,,9,0.5,\r\n"
            "0,,9,,0.25\r\n"
            "1,0.1,19,0.375,\r\n");

  MetricsCsv fresh(dir.Join("absent.csv"));
  EXPECT_OK(fresh.Resume(10));
  EXPECT_EQ(fresh.Render(), "epoch,step\r\n");

  struct Case {
    const char* name;
    std::string text;
  } damaged[] = {
      {"short row", "epoch,step,a\r\n0,1\r\n"},
      {"not a number", "epoch,step,a\r\n0,1,x\r\n"},
      {"no step", "epoch,a\r\n0,1\r\n"},
      {"open quote", "epoch,step\r\n\"0,1\r\n"},
  };
  for (const Case& c : damaged) {
    std::string path = dir.Write(std::string(c.name) + ".csv", c.text);
    Status s = MetricsCsv(path).Resume(10);
    EXPECT_THAT(s, StatusIs(StatusCode::kDataLoss,
                            HasSubstr(path + " can not be continued")))
        << c.name;
  }
}

// One call of the logger, as the comparison script replays it.
struct Op {
  enum Kind { kLog, kSave, kHparams } kind;
  std::map<std::string, double> metrics;
  int64_t step = 0;
  std::optional<int64_t> epoch;
  std::string yaml;  // kHparams
};

Op Log(int64_t step, std::optional<int64_t> epoch,
       std::map<std::string, double> metrics) {
  return Op{Op::kLog, std::move(metrics), step, epoch, ""};
}
Op Save() { return Op{Op::kSave, {}, 0, std::nullopt, ""}; }
Op Hparams(std::string yaml) {
  return Op{Op::kHparams, {}, 0, std::nullopt, std::move(yaml)};
}

std::string Hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// Runs `ops` through our CsvLogger into <dir>/ours; returns the ops file the
// Python script takes for the same calls.
std::string RunOurs(const testing::TempDir& dir, const std::string& prefix,
                    int64_t flush_every, const std::vector<Op>& ops) {
  CsvLoggerOptions o;
  o.save_dir = dir.path();
  o.name = "";
  o.version = std::string("ours");
  o.prefix = prefix;
  o.flush_logs_every_n_steps = flush_every;
  CsvLogger logger(o);
  nlohmann::json spec = {{"prefix", prefix},
                         {"flush_logs_every_n_steps", flush_every},
                         {"ops", nlohmann::json::array()}};
  for (const Op& op : ops) {
    nlohmann::json j;
    if (op.kind == Op::kLog) {
      EXPECT_OK(logger.log_metrics(op.metrics, op.step, op.epoch));
      nlohmann::json m = nlohmann::json::object();
      for (const auto& [k, v] : op.metrics) m[k] = Hex(v);
      j = {{"op", "log"},
           {"metrics", m},
           {"step", op.step},
           {"epoch", op.epoch ? nlohmann::json(*op.epoch) : nlohmann::json()}};
    } else if (op.kind == Op::kSave) {
      EXPECT_OK(logger.save());
      j = {{"op", "save"}};
    } else {
      auto params = config::LoadYamlString(op.yaml, "hparams");
      EXPECT_OK(params);
      if (params.ok()) {
        EXPECT_OK(logger.log_hyperparams(*params));
      }
      j = {{"op", "hparams"}, {"yaml", op.yaml}};
    }
    spec["ops"].push_back(j);
  }
  EXPECT_OK(logger.finalize("success"));
  return dir.Write("ops.json", spec.dump());
}

const std::string kCsvScript =
    std::string(TRIALSHIM_TEST_DATA_DIR) + "/loggers/lightning_csv_logger.py";

// RunOurs, and Lightning 2.6.2's writer reproduced by the Python script into
// <dir>/lightning.
void RunBoth(const testing::TempDir& dir, const std::string& prefix,
             int64_t flush_every, const std::vector<Op>& ops) {
  const std::string ops_file = RunOurs(dir, prefix, flush_every, ops);
  testing::Finished f = testing::RunToEnd(
      {"/usr/bin/python3", kCsvScript, ops_file, dir.Join("lightning")});
  ASSERT_EQ(f.exit_code, 0) << f.err;
}

struct CsvCase {
  const char* name;
  std::string prefix;
  int64_t flush_every;
  std::vector<Op> ops;
  bool hparams() const {
    for (const Op& op : ops) {
      if (op.kind == Op::kHparams) return true;
    }
    return false;
  }
};

const std::vector<CsvCase>& CsvCases() {
  static const std::vector<CsvCase> cases = {
      {"keys appear later: the file is rewritten with the new header",
       "",
       100,
       {Log(49, 0, {{"train_loss", 0.25}}), Save(),
        Log(99, 0, {{"val_loss", 1e-05}, {"val_acc", 0.9}}), Save(),
        Log(149, 1, {{"train_loss", 2.0}, {"lr-Adam", 0.001}}), Save()}},
      {"flush every 2 steps, no trainer saves",
       "",
       2,
       {Log(0, 0, {{"a", 0.1}}), Log(1, 0, {{"a", 0.2}}),
        Log(2, 0, {{"b", 1e16}}), Log(3, 0, {{"a", 123.0}, {"c", -0.0}})}},
      {"prefix on every key, the epoch's too",
       "train",
       100,
       {Log(9, 0, {{"loss", 1.0 / 3}}), Log(19, 1, {{"loss", 2.5e-7}}),
        Save()}},
      {"rows without an epoch, names that need quoting",
       "",
       100,
       {Log(4, std::nullopt, {{"lr-SGD", 0.01}}),
        Log(5, 2, {{"a,b", 1.5}, {"q\"uote", 2.0}, {"line\nbreak", 3.0}}),
        Save()}},
      {"non-finite values",
       "",
       100,
       {Log(0, 0,
            {{"loss", std::nan("")}, {"up", INFINITY}, {"down", -INFINITY}}),
        Save()}},
      {"hyperparameters merged as dict.update, as OmegaConf saves them",
       "",
       100,
       {Hparams("lr: 0.001\nbatch_size: 64\nname: mlp\nnested:\n  hidden: [64, "
                "32]\n"
                "  dropout: 0.1\nflag: true\nnone: null\n"
                "quoted: 'yes'\nnumeric_text: '1.0'\nempty: ''\n"),
        Hparams("lr: 0.01\nextra: {a: 1}\n"), Log(0, 0, {{"loss", 0.5}}),
        Save()}},
      {"empty hyperparameters (a module that saved none)",
       "",
       100,
       {Hparams("{}"), Log(0, 0, {{"loss", 0.5}}), Save()}},
  };
  return cases;
}

TEST(CsvLoggerTest, WritesWhatLightningsCsvLoggerWrites) {
  for (const CsvCase& c : CsvCases()) {
    SCOPED_TRACE(c.name);
    testing::TempDir dir;
    RunBoth(dir, c.prefix, c.flush_every, c.ops);
    for (const char* file : {"metrics.csv", "hparams.yaml"}) {
      const bool want = c.hparams() || std::string(file) == "metrics.csv";
      ASSERT_EQ(std::filesystem::exists(dir.Join(std::string("ours/") + file)),
                want)
          << file;
      ASSERT_EQ(
          std::filesystem::exists(dir.Join(std::string("lightning/") + file)),
          want)
          << file;
      if (!want) continue;
      EXPECT_EQ(testing::ReadFile(dir.Join(std::string("ours/") + file)),
                testing::ReadFile(dir.Join(std::string("lightning/") + file)))
          << file;
    }
  }
}

// The installed Lightning 2.2.5's CSVLogger on the same calls: the same
// metrics.csv; the same hparams.yaml where hyperparameters were logged, and
// where none were, 2.2.5 writes "{}" all the same (its ExperimentWriter
// saves hparams.yaml at every save; 2.6 only in log_hyperparams, which a
// Trainer calls at every fit start, so a fit writes it in both).
TEST(AnchorsCsvLogger, WritesWhatLightning225Writes) {
  SKIP_WITHOUT_ANCHORS();
  std::vector<std::unique_ptr<testing::TempDir>> dirs;
  std::vector<std::string> args = {"--installed"};
  for (const CsvCase& c : CsvCases()) {
    dirs.push_back(std::make_unique<testing::TempDir>());
    args.push_back(RunOurs(*dirs.back(), c.prefix, c.flush_every, c.ops));
    args.push_back(dirs.back()->Join("lightning"));
  }
  testing::Finished f = testing::RunToEnd([&] {
    std::vector<std::string> argv = {testing::AnchorsPython(), kCsvScript};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }());
  ASSERT_EQ(f.exit_code, 0) << f.err;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const CsvCase& c = CsvCases()[i];
    const testing::TempDir& dir = *dirs[i];
    SCOPED_TRACE(c.name);
    EXPECT_EQ(testing::ReadFile(dir.Join("ours/metrics.csv")),
              testing::ReadFile(dir.Join("lightning/metrics.csv")));
    if (c.hparams()) {
      EXPECT_EQ(testing::ReadFile(dir.Join("ours/hparams.yaml")),
                testing::ReadFile(dir.Join("lightning/hparams.yaml")));
    } else {
      EXPECT_FALSE(std::filesystem::exists(dir.Join("ours/hparams.yaml")));
      EXPECT_EQ(testing::ReadFile(dir.Join("lightning/hparams.yaml")), "{}\n");
    }
  }
}

// Nothing logged, nothing written (as _ExperimentWriter.save).
TEST(CsvLoggerTest, WritesNoFileWithoutRows) {
  testing::TempDir dir;
  CsvLoggerOptions o;
  o.save_dir = dir.path();
  CsvLogger logger(o);
  ASSERT_OK(logger.save());
  ASSERT_OK(logger.finalize("success"));
  EXPECT_FALSE(std::filesystem::exists(
      dir.Join("lightning_logs/version_0/metrics.csv")));
}

// A resumed fit continues a metrics.csv in a fixed version directory; an
// automatic version starts a new directory, as in Lightning.
TEST(CsvLoggerTest, ResumeContinuesAFixedVersion) {
  testing::TempDir dir;
  CsvLoggerOptions o;
  o.save_dir = dir.path();
  o.version = int64_t{0};
  {
    CsvLogger first(o);
    ASSERT_OK(first.log_metrics({{"loss", 1.0}}, 9, 0));
    ASSERT_OK(first.log_metrics({{"loss", 0.5}}, 19, 1));
    ASSERT_OK(first.finalize("interrupted"));
  }
  CsvLogger resumed(o);
  ASSERT_OK(resumed.resume(10));
  ASSERT_OK(resumed.log_metrics({{"loss", 0.25}}, 19, 1));
  ASSERT_OK(resumed.finalize("success"));
  EXPECT_EQ(testing::ReadFile(dir.Join("lightning_logs/version_0/metrics.csv")),
            "epoch,loss,step\r\n0,1.0,9\r\n1,0.25,19\r\n");

  CsvLoggerOptions automatic;
  automatic.save_dir = dir.path();
  CsvLogger next(automatic);
  EXPECT_EQ(next.log_dir(), dir.Join("lightning_logs/version_1"));
}

}  // namespace
}  // namespace trialshim::trainer
