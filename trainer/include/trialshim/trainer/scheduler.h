// Learning-rate schedulers, written over the optimizer's per-group learning
// rates (LibTorch 1.13's C++ API has only StepLR, which can not be
// checkpointed).
//
// A scheduler records each param group's learning rate when it is built
// (the base rates), sets the rate for "count 0" at once, and on every
// Step() advances its count by one and writes the new rate into every group.
// The closed-form schedules (step, exponential, cosine with linear warmup)
// depend only on the count, so a checkpoint holds just that;
// ReduceLROnPlateau also keeps its best value, patience counters and the
// current rates. The Trainer steps a scheduler once per epoch or once per
// optimizer step (SchedulerConfig::interval). Not thread-safe.
#ifndef TRIALSHIM_TRAINER_SCHEDULER_H_
#define TRIALSHIM_TRAINER_SCHEDULER_H_

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::trainer {

// The learning rate of every param group, in order.
std::vector<double> GetLearningRates(const torch::optim::Optimizer& optimizer);
void SetLearningRates(torch::optim::Optimizer& optimizer,
                      const std::vector<double>& lrs);

class LrScheduler {
 public:
  // `optimizer` must outlive the scheduler.
  explicit LrScheduler(torch::optim::Optimizer& optimizer);
  virtual ~LrScheduler() = default;

  // Advances by one epoch or step. `metric` is the monitored value
  // (ReduceLROnPlateau only; the others ignore it).
  void Step(double metric = std::numeric_limits<double>::quiet_NaN());
  int64_t count() const { return count_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  virtual std::string name() const = 0;
  // True if Step needs the monitored metric.
  virtual bool needs_metric() const { return false; }

  // Checkpoint state; LoadState also writes the restored rates into the
  // optimizer. DataLoss if the state does not fit this scheduler.
  virtual nlohmann::json State() const;
  virtual Status LoadState(const nlohmann::json& state);

 protected:
  // The rates for the current count_ (after it was advanced).
  virtual std::vector<double> ComputeLrs(double metric) = 0;
  // Applies ComputeLrs for count_; constructors of subclasses call it.
  void Apply();

  torch::optim::Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t count_ = 0;
};

// lr = base * gamma ^ floor(count / step_size).
class StepLr : public LrScheduler {
 public:
  StepLr(torch::optim::Optimizer& optimizer, int64_t step_size, double gamma);
  std::string name() const override { return "step"; }

 protected:
  std::vector<double> ComputeLrs(double metric) override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base * gamma ^ count.
class ExponentialLr : public LrScheduler {
 public:
  ExponentialLr(torch::optim::Optimizer& optimizer, double gamma);
  std::string name() const override { return "exponential"; }

 protected:
  std::vector<double> ComputeLrs(double metric) override;

 private:
  double gamma_;
};

// Linear warmup from base * warmup_start_factor to base over warmup counts,
// then a half cosine from base down to base * min_lr_factor at count
// `total`, flat after it.
class CosineWarmupLr : public LrScheduler {
 public:
  CosineWarmupLr(torch::optim::Optimizer& optimizer, int64_t warmup,
                 int64_t total, double warmup_start_factor,
                 double min_lr_factor);
  std::string name() const override { return "cosine"; }

 protected:
  std::vector<double> ComputeLrs(double metric) override;

 private:
  int64_t warmup_;
  int64_t total_;
  double start_factor_;
  double min_factor_;
};

// PyTorch's ReduceLROnPlateau (relative threshold): multiplies every rate by
// `factor` after `patience` counts without improvement, then waits
// `cooldown` counts; never below min_lr.
class ReduceLrOnPlateau : public LrScheduler {
 public:
  ReduceLrOnPlateau(torch::optim::Optimizer& optimizer, bool maximize,
                    double factor, int64_t patience, double threshold,
                    int64_t cooldown, double min_lr);
  std::string name() const override { return "plateau"; }
  bool needs_metric() const override { return true; }
  nlohmann::json State() const override;
  Status LoadState(const nlohmann::json& state) override;

 protected:
  std::vector<double> ComputeLrs(double metric) override;

 private:
  bool maximize_;
  double factor_;
  int64_t patience_;
  double threshold_;
  int64_t cooldown_;
  double min_lr_;
  double best_;
  int64_t bad_counts_ = 0;
  int64_t cooldown_left_ = 0;
};

enum class SchedulerInterval { kEpoch, kStep };

// A scheduler and when the Trainer steps it.
struct SchedulerConfig {
  std::shared_ptr<LrScheduler> scheduler;  // null: none
  // Step once per training epoch (after validation) or per optimizer step.
  // Default: epoch.
  SchedulerInterval interval = SchedulerInterval::kEpoch;
  // The logged metric given to a scheduler that needs one. Default:
  // "val_loss".
  std::string monitor = "val_loss";
};

// Builds a scheduler from a config map:
//   name: none | step | exponential | cosine | plateau   (default none)
//   interval: epoch | step                               (default epoch)
//   step: step_size (1), gamma (0.1); exponential: gamma (0.9);
//   cosine: warmup (0), total (the run's length in `interval` units, given
//     as `total_epochs` / `total_steps`), warmup_start_factor (0.01),
//     min_lr_factor (0.0);
//   plateau: monitor (val_loss), mode (min), factor (0.1), patience (10),
//     threshold (1e-4), cooldown (0), min_lr (0).
// A null node means no scheduler. InvalidArgument names the bad key
// ("scheduler.gamma") with did-you-mean for unknown ones.
StatusOr<SchedulerConfig> MakeScheduler(const config::Node& node,
                                        torch::optim::Optimizer& optimizer,
                                        int64_t total_epochs,
                                        int64_t total_steps);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_SCHEDULER_H_
