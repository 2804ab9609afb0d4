#include "trialshim/trainer/callbacks.h"

#include <string>
#include <torch/optim.h>
#include <utility>

#include "trialshim/trainer/optim.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {

namespace {

// Group `g`'s (momentum, weight decay), as Lightning's _extract_momentum
// (betas[0] when the optimizer has betas, else momentum or 0).
std::pair<double, double> MomentumAndDecay(const torch::optim::OptimizerOptions& o) {
  using namespace torch::optim;
  if (auto* a = dynamic_cast<const AdamOptions*>(&o))
    return {std::get<0>(a->betas()), a->weight_decay()};
  if (auto* a = dynamic_cast<const AdamWOptions*>(&o))
    return {std::get<0>(a->betas()), a->weight_decay()};
  if (auto* a = dynamic_cast<const SGDOptions*>(&o))
    return {a->momentum(), a->weight_decay()};
  if (auto* a = dynamic_cast<const RMSpropOptions*>(&o))
    return {a->momentum(), a->weight_decay()};
  if (auto* a = dynamic_cast<const AdagradOptions*>(&o))
    return {0.0, a->weight_decay()};
  return {0.0, 0.0};
}

}  // namespace

// Lightning's names (lr_monitor.py _add_suffix): "lr-Adam" for one param
// group, "lr-Adam/pg1", "lr-Adam/pg2", ... for several.
Metrics LearningRateMonitor::Read(Trainer& trainer) const {
  Metrics out;
  torch::optim::Optimizer* optimizer = trainer.optimizer();
  if (optimizer == nullptr) return out;
  const std::string base = "lr-" + OptimizerName(*optimizer);
  const auto& groups = optimizer->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string name =
        groups.size() > 1 ? base + "/pg" + std::to_string(i + 1) : base;
    out[name] = groups[i].options().get_lr();
    auto [momentum, decay] = MomentumAndDecay(groups[i].options());
    if (options_.log_momentum()) out[name + "-momentum"] = momentum;
    if (options_.log_weight_decay()) out[name + "-weight_decay"] = decay;
  }
  return out;
}

// The hooks after a step see the rates a per-step scheduler already moved,
// so the rates a step runs with are read before it: at the start of the fit
// (after a resume), of every epoch (after the epoch's scheduler step) and
// after every step. As Lightning's, a row has no epoch and its step is the
// number of optimizer steps before the rates were read.
Status LearningRateMonitor::on_fit_start(Trainer& trainer, Module&) {
  next_ = Read(trainer);
  return Status::Ok();
}

Status LearningRateMonitor::on_train_epoch_start(Trainer& trainer, Module&) {
  next_ = Read(trainer);
  if (options_.logging_interval() == "epoch" && !next_.empty())
    trainer.log_metrics(next_, trainer.global_step(), std::nullopt);
  return Status::Ok();
}

Status LearningRateMonitor::on_train_batch_end(Trainer& trainer, Module&,
                                               int64_t) {
  if (options_.logging_interval() == "step" && !next_.empty() &&
      trainer.global_step() % trainer.options().log_every_n_steps() == 0) {
    trainer.log_metrics(next_, trainer.global_step() - 1, std::nullopt);
  }
  next_ = Read(trainer);
  return Status::Ok();
}

}  // namespace trialshim::trainer
