// Learning-rate schedules: their formulas step by step, and as the Trainer
// drives them: the scheduler a module returns from configure_optimizers is
// stepped per epoch or per optimizer step, and reduce-on-plateau reads the
// monitored validation metric. Every expected rate is worked out by hand in
// the tables.
#include "trialshim/trainer/scheduler.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/scripted_module.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using config::Node;
using scripted::CapturedLog;
using scripted::Quiet;
using scripted::ScriptedModule;
using scripted::ScriptedOptions;
using scripted::TinyData;
using trialshim::testing::TempDir;

constexpr int64_t kStepsPerEpoch = 4;  // TinyData: four rows, batch 1

// The rate of every step of `epochs` epochs when it changes per epoch.
std::vector<double> PerEpoch(const std::vector<double>& lrs) {
  std::vector<double> out;
  for (double lr : lrs) out.insert(out.end(), kStepsPerEpoch, lr);
  return out;
}

void ExpectRates(const std::vector<double>& got,
                 const std::vector<double>& want, const std::string& name) {
  ASSERT_EQ(got.size(), want.size()) << "case " << name;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-15)
        << "case " << name << ", step " << i << " (epoch " << i / kStepsPerEpoch
        << ")";
  }
}

TEST(SchedulerTest, LearningRatesFollowTheirFormulas) {
  struct Case {
    std::string name;
    std::string yaml_name;
    config::Node::Map extra;
    std::vector<double> want;  // lr before any step, then after each step
  };
  const double pi = M_PI;
  const std::vector<Case> cases = {
      {"step",
       "step",
       {{"step_size", Node::Int(2)}, {"gamma", Node::Double(0.5)}},
       {1, 1, 0.5, 0.5, 0.25}},
      {"exponential",
       "exponential",
       {{"gamma", Node::Double(0.5)}},
       {1, 0.5, 0.25, 0.125, 0.0625}},
      {"cosine with warmup",
       "cosine",
       {{"warmup", Node::Int(2)},
        {"total", Node::Int(4)},
        {"warmup_start_factor", Node::Double(0.0)}},
       {0, 0.5, 1, 0.5 * (1 + std::cos(pi * 0.5)), 0}},
  };
  for (const auto& c : cases) {
    auto w = torch::zeros({1}, torch::requires_grad());
    torch::optim::SGD opt({w}, torch::optim::SGDOptions(1.0));
    Node::Map map = {{"name", Node::String(c.yaml_name)}};
    for (const auto& e : c.extra) map.push_back(e);
    auto sched = MakeScheduler(Node::MakeMap(map), opt, 10, 100);
    ASSERT_OK(sched) << "case " << c.name;
    for (size_t i = 0; i < c.want.size(); ++i) {
      if (i > 0) sched->scheduler->Step();
      EXPECT_NEAR(GetLearningRates(opt)[0], c.want[i], 1e-12)
          << "case " << c.name << " count " << i;
    }
  }
  // Plateau: halves after patience 1 + 1 bad validations.
  auto w = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD opt({w}, torch::optim::SGDOptions(1.0));
  ReduceLrOnPlateau plateau(opt, false, 0.5, 1, 1e-4, 0, 0.0);
  std::vector<std::pair<double, double>> steps = {
      {1.0, 1.0}, {1.0, 1.0}, {1.0, 0.5}, {0.4, 0.5}, {0.4, 0.5}, {0.4, 0.25}};
  for (size_t i = 0; i < steps.size(); ++i) {
    plateau.Step(steps[i].first);
    EXPECT_DOUBLE_EQ(GetLearningRates(opt)[0], steps[i].second)
        << "case plateau step " << i;
  }
  auto bad = MakeScheduler(Node::MakeMap({{"name", Node::String("cosin")}}),
                           opt, 10, 100);
  EXPECT_THAT(bad, StatusIs(_, HasSubstr("did you mean 'cosine'")))
      << "case unknown name";
}

TEST(SchedulerTrainerTest, ClosedFormSchedulesFollowHandComputedRates) {
  struct Case {
    std::string name;
    Node::Map scheduler;
    int64_t epochs;
    std::vector<double> want;  // group 0's rate at every step
  };
  // Base rate 0.1 throughout. cos(pi/6) = sqrt(3)/2, so the cosine's
  // values are 0.5 +- sqrt(3)/4 = 0.9330127018922193 / 0.0669872981077807.
  const std::vector<Case> cases = {
      {"step per epoch: halves every 2 epochs",
       {{"name", Node::String("step")},
        {"step_size", Node::Int(2)},
        {"gamma", Node::Double(0.5)}},
       5,
       PerEpoch({0.1, 0.1, 0.05, 0.05, 0.025})},
      {"step per step: /10 every 3 steps",
       {{"name", Node::String("step")},
        {"interval", Node::String("step")},
        {"step_size", Node::Int(3)},
        {"gamma", Node::Double(0.1)}},
       2,
       {0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001}},
      {"exponential per epoch",
       {{"name", Node::String("exponential")}, {"gamma", Node::Double(0.5)}},
       4,
       PerEpoch({0.1, 0.05, 0.025, 0.0125})},
      {"exponential per step",
       {{"name", Node::String("exponential")},
        {"interval", Node::String("step")},
        {"gamma", Node::Double(0.5)}},
       1,
       {0.1, 0.05, 0.025, 0.0125}},
      // warmup 2 from 0.1 * base; total = the trainer's 8 stepping batches;
      // counts 2..8 run a half cosine over 6 counts.
      {"cosine per step, warmup 2, total from the trainer",
       {{"name", Node::String("cosine")},
        {"interval", Node::String("step")},
        {"warmup", Node::Int(2)},
        {"warmup_start_factor", Node::Double(0.1)}},
       2,
       {0.01, 0.055, 0.1, 0.1 * 0.9330127018922193, 0.075, 0.05, 0.025,
        0.1 * 0.0669872981077807}},
      // total = max_epochs = 4; warmup 1 from 0.5 * base; then counts 1..4
      // over 3: 1, 0.75, 0.25 (and 0 at count 4, after the last epoch).
      {"cosine per epoch, warmup 1, total from max_epochs",
       {{"name", Node::String("cosine")},
        {"warmup", Node::Int(1)},
        {"warmup_start_factor", Node::Double(0.5)}},
       4,
       PerEpoch({0.05, 0.1, 0.075, 0.025})},
      {"cosine per epoch with a floor",
       {{"name", Node::String("cosine")},
        {"total", Node::Int(2)},
        {"min_lr_factor", Node::Double(0.2)}},
       4,
       PerEpoch({0.1, 0.06, 0.02, 0.02})},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.lr = 0.1;
    o.scheduler = Node::MakeMap(c.scheduler);
    auto model = std::make_shared<ScriptedModule>(o);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(c.epochs)
                        .enable_checkpointing(false));
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    ExpectRates(model->seen_lrs(), c.want, c.name);
  }
}

TEST(SchedulerTrainerTest, ReduceOnPlateauFollowsTheMonitoredMetric) {
  struct Case {
    std::string name;
    std::string metric;  // what the module logs
    std::vector<double> script;
    Node::Map scheduler;
    int64_t check_val_every_n_epoch;
    std::vector<double> want;  // the rate of each epoch
  };
  // PyTorch's rule: the rate drops once more than `patience` validations in
  // a row did not improve on the best by the relative threshold (1e-4).
  const std::vector<Case> cases = {
      {"min: drops after patience 2 + 1 flat epochs, then again",
       "val_loss",
       {1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9},
       {{"name", Node::String("plateau")},
        {"factor", Node::Double(0.5)},
        {"patience", Node::Int(2)}},
       1,
       {0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025}},
      {"min: improvements under the threshold do not count",
       "val_loss",
       {1.0, 0.99995, 0.99992, 0.5},
       {{"name", Node::String("plateau")},
        {"factor", Node::Double(0.5)},
        {"patience", Node::Int(1)}},
       1,
       {0.1, 0.1, 0.1, 0.05, 0.05}},
      {"max: monitors val_acc",
       "val_acc",
       {0.5, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7, 0.7},
       {{"name", Node::String("plateau")},
        {"monitor", Node::String("val_acc")},
        {"mode", Node::String("max")},
        {"factor", Node::Double(0.1)},
        {"patience", Node::Int(1)}},
       1,
       {0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001}},
      {"cooldown 1 and a floor at min_lr",
       "val_loss",
       {1, 1, 1, 1, 1, 1, 1},
       {{"name", Node::String("plateau")},
        {"factor", Node::Double(0.5)},
        {"patience", Node::Int(0)},
        {"cooldown", Node::Int(1)},
        {"min_lr", Node::Double(0.03)}},
       1,
       {0.1, 0.1, 0.05, 0.05, 0.03, 0.03, 0.03}},
      // Validations after epochs 1, 3, 5: epochs without one do not count
      // as bad ones.
      {"validation every 2nd epoch",
       "val_loss",
       {1, 1, 1, 1},
       {{"name", Node::String("plateau")},
        {"factor", Node::Double(0.5)},
        {"patience", Node::Int(1)}},
       2,
       {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.lr = 0.1;
    o.scheduler = Node::MakeMap(c.scheduler);
    o.script = c.script;
    o.metric = c.metric;
    auto model = std::make_shared<ScriptedModule>(o);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(static_cast<int64_t>(c.want.size()))
                        .check_val_every_n_epoch(c.check_val_every_n_epoch)
                        .enable_checkpointing(false));
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    ExpectRates(model->seen_lrs(), PerEpoch(c.want), c.name);
  }
}

}  // namespace
}  // namespace trialshim::trainer
