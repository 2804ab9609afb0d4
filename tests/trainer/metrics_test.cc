// MetricStore's aggregation (Lightning's rules) and the metrics line of the
// log (metrics.csv is tested with the CSVLogger, csv_logger_test.cc).
#include "trialshim/trainer/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/testutil/status_matchers.h"

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
