// Optimizers from a config map, with PyTorch's names and defaults.
//
//   name: sgd | adam | adamw | rmsprop | adagrad   (required)
//   lr (required, > 0), weight_decay (0; AdamW: 0.01)
//   sgd: momentum (0), dampening (0), nesterov (false)
//   adam, adamw: betas ([0.9, 0.999]), eps (1e-8), amsgrad (false)
//   rmsprop: alpha (0.99), eps (1e-8), momentum (0), centered (false)
//   adagrad: lr_decay (0), eps (1e-10), initial_accumulator_value (0)
//
// Unknown keys and names are InvalidArgument with did-you-mean, so a
// mistyped hyperparameter fails the trial at once instead of being ignored.
#ifndef TRIALSHIM_TRAINER_OPTIM_H_
#define TRIALSHIM_TRAINER_OPTIM_H_

#include <torch/optim/optimizer.h>

#include <memory>
#include <string>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::trainer {

// `prefix` names the node in messages ("optimizer").
StatusOr<std::shared_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const config::Node& node, std::vector<torch::Tensor> parameters,
    const std::string& prefix = "optimizer");

// The optimizer's PyTorch class name ("Adam", "SGD"), for LearningRateMonitor.
std::string OptimizerName(const torch::optim::Optimizer& optimizer);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_OPTIM_H_
