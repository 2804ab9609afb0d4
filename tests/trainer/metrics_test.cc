// MetricStore's aggregation (Lightning's rules), MetricsCsv's file (what
// Lightning's CSVLogger writes) and the metrics line of the log.
#include "trialshim/trainer/metrics.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::trainer {
namespace {

TEST(MetricStoreTest, FollowsLightningAggregation) {
  MetricStore store;
  store.BeginStep(Stage::kTrain, 2);
  store.Log("loss", 1.0, {});
  store.Log("acc", 0.5, LogOptions().OnEpoch(true));
  store.BeginStep(Stage::kTrain, 6);
  store.Log("loss", 3.0, {});
  store.Log("acc", 1.0, LogOptions().OnEpoch(true));
  EXPECT_EQ(store.step_values(),
            (std::map<std::string, double>{{"acc_step", 1.0}, {"loss", 3.0}}));
  // Epoch means are weighted by batch size: (0.5*2 + 1*6) / 8.
  EXPECT_EQ(store.EpochValues(Stage::kTrain),
            (std::map<std::string, double>{{"acc_epoch", 0.875}}));
  store.BeginStep(Stage::kValidate, 4);
  store.Log("val_loss", 2.0, {});
  EXPECT_TRUE(store.step_values().empty());
  EXPECT_EQ(store.EpochValues(Stage::kValidate),
            (std::map<std::string, double>{{"val_loss", 2.0}}));

  MetricStore restored;
  ASSERT_OK(restored.LoadState(store.State()));
  EXPECT_EQ(restored.EpochValues(Stage::kTrain),
            store.EpochValues(Stage::kTrain));
}

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
  struct Case {
    const char* name;
    std::string target;  // relative to the test's directory
    rlim_t size_limit;   // 0: none
    int reason;
  };
  const Case cases[] = {
      {"file size limit (as a full disk)", "metrics.csv", 40, EFBIG},
      {"parent is a regular file", "file/metrics.csv", 0, ENOTDIR},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testing::TempDir dir;
    dir.Write("file", "f");
    MetricsCsv csv(dir.Join(c.target));
    csv.Add(0, 9, {{"train_loss", 0.5}});
    std::set<std::string> want = {"file"};
    std::string before;
    if (c.size_limit > 0) {
      ASSERT_OK(csv.Flush());
      before = testing::ReadFile(csv.path());
      want.insert(c.target);
    }
    for (int step = 19; step < 200; step += 10) {
      csv.Add(0, step, {{"train_loss", 0.25}});
    }
    Status s;
    {
      testing::FileSizeLimit limit(c.size_limit ? c.size_limit : RLIM_INFINITY);
      s = csv.Flush();
    }
    EXPECT_EQ(s.code(), StatusCode::kIOError);
    EXPECT_NE(s.message().find(c.size_limit ? csv.path() : dir.Join("file")),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(std::strerror(c.reason)), std::string::npos)
        << s.message();
    EXPECT_EQ(testing::ReadFile(csv.path()), before);
    EXPECT_EQ(testing::ListDir(dir.path()), want);
  }
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
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << c.name;
    EXPECT_NE(s.message().find(path + " can not be continued"), std::string::npos)
        << c.name << ": " << s.message();
  }
}

TEST(JoinMetricsTest, FourSignificantDigitsByName) {
  struct Case {
    std::string name;
    std::map<std::string, double> metrics;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"none", {}, ""},
      {"sorted by name",
       {{"val_loss", 0.123456}, {"acc", 0.5}},
       "acc=0.5 val_loss=0.1235"},
      {"large and tiny", {{"a", 123456.0}, {"b", 1e-7}}, "a=1.235e+05 b=1e-07"},
      {"not finite", {{"a", std::nan("")}, {"b", -INFINITY}}, "a=nan b=-inf"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(JoinMetrics(c.metrics), c.want) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::trainer
