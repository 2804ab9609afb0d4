// Module: the model and its training logic, Lightning's LightningModule in
// C++.
//
// Subclass it, register layers as with any torch::nn::Module, and implement
// training_step (return the loss) and configure_optimizers; validation_step
// and test_step are optional. Inside a step, log(name, value) records a
// metric with Lightning's aggregation rules (see metrics.h); the Trainer
// writes logged metrics to its loggers, the console and the callbacks, and
// reports the tuning metric from them.
//
// A Module is driven by one Trainer at a time from one thread. Build it with
// std::make_shared (torch::nn::Module needs a shared_ptr for submodules).
#ifndef TRIALSHIM_TRAINER_MODULE_H_
#define TRIALSHIM_TRAINER_MODULE_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <string>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/trainer/data.h"
#include "trialshim/trainer/metrics.h"
#include "trialshim/trainer/scheduler.h"

namespace trialshim::trainer {

class Trainer;
class StepLog;

// What configure_optimizers returns.
struct OptimizerConfig {
  // Required.
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  // Optional (scheduler.scheduler may be null).
  SchedulerConfig scheduler;
};

class Module : public torch::nn::Module {
 public:
  ~Module() override = default;

  // The loss of one training batch (a scalar with a graph).
  virtual torch::Tensor training_step(const Batch& batch,
                                      int64_t batch_idx) = 0;
  // Runs under NoGradGuard in eval mode; logs what it measures.
  virtual void validation_step(const Batch& batch, int64_t batch_idx) {
    (void)batch;
    (void)batch_idx;
  }
  virtual void test_step(const Batch& batch, int64_t batch_idx) {
    validation_step(batch, batch_idx);
  }
  // Called once per fit, after the module is on its device. The trainer's
  // estimated_stepping_batches() is known by then (for schedules).
  virtual StatusOr<OptimizerConfig> configure_optimizers() = 0;

  // Records a metric; a no-op outside a Trainer's step.
  void log(const std::string& name, double value,
           const LogOptions& options = {});
  // Same for a one-element tensor (read with item()).
  void log(const std::string& name, const torch::Tensor& value,
           const LogOptions& options = {});

  // The Trainer running this module, or null.
  Trainer* trainer() const { return trainer_; }

  // Lightning's save_hyperparameters: a map the Trainer gives every logger
  // at fit start (hparams.yaml, TensorBoard's hparams). Default: none (an
  // empty map is logged, as Lightning logs an empty hparams_initial).
  void save_hyperparameters(config::Node hparams) {
    hparams_ = std::move(hparams);
  }
  const config::Node& hparams() const { return hparams_; }

 private:
  friend class Trainer;
  Trainer* trainer_ = nullptr;
  StepLog* metrics_ = nullptr;
  config::Node hparams_;
};

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_MODULE_H_
