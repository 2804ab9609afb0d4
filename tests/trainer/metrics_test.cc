// MetricStore's aggregation (Lightning's rules), MetricsCsv's file (what
// Lightning's CSVLogger writes) and the metrics line of the log.
#include "trialshim/trainer/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

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
  // Lightning: csv.DictWriter over the sorted union of keys, floats as
  // Python's str(float).
  EXPECT_EQ(testing::ReadFile(dir.Join("metrics.csv")),
            "epoch,lr-Adam,step,train_loss,val_acc,val_loss\n"
            "0,,49,0.25,,\n"
            "0,,99,,0.9,1e-05\n"
            "1,0.001,149,2.0,,\n");
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
