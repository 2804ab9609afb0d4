#include "trialshim/trainer/optim.h"

#include <torch/optim.h>

#include "node_read.h"
#include "trialshim/base/spell.h"

namespace trialshim::trainer {
namespace {

// The optimizer `name` with the options of its own keys in `r`.
StatusOr<std::shared_ptr<torch::optim::Optimizer>> BuildOptimizer(
    const std::string& name, const internal::MapReader& r,
    const std::vector<torch::Tensor>& parameters, double lr,
    double weight_decay) {
  std::shared_ptr<torch::optim::Optimizer> opt;
  if (name == "sgd") {
    TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
        {"name", "lr", "weight_decay", "momentum", "dampening", "nesterov"}));
    double momentum = 0, dampening = 0;
    bool nesterov = false;
    TRIALSHIM_RETURN_IF_ERROR(r.Double("momentum", &momentum));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("dampening", &dampening));
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("nesterov", &nesterov));
    opt = std::make_shared<torch::optim::SGD>(
        parameters, torch::optim::SGDOptions(lr)
                        .momentum(momentum)
                        .dampening(dampening)
                        .nesterov(nesterov)
                        .weight_decay(weight_decay));
  } else if (name == "adam" || name == "adamw") {
    TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
        {"name", "lr", "weight_decay", "betas", "eps", "amsgrad"}));
    std::vector<double> betas = {0.9, 0.999};
    double eps = 1e-8;
    bool amsgrad = false;
    TRIALSHIM_RETURN_IF_ERROR(r.Doubles("betas", 2, &betas));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("eps", &eps));
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("amsgrad", &amsgrad));
    if (name == "adam") {
      opt = std::make_shared<torch::optim::Adam>(
          parameters, torch::optim::AdamOptions(lr)
                          .betas({betas[0], betas[1]})
                          .eps(eps)
                          .weight_decay(weight_decay)
                          .amsgrad(amsgrad));
    } else {
      opt = std::make_shared<torch::optim::AdamW>(
          parameters, torch::optim::AdamWOptions(lr)
                          .betas({betas[0], betas[1]})
                          .eps(eps)
                          .weight_decay(weight_decay)
                          .amsgrad(amsgrad));
    }
  } else if (name == "rmsprop") {
    TRIALSHIM_RETURN_IF_ERROR(
        r.CheckKeys({"name", "lr", "weight_decay", "alpha", "eps", "momentum",
                     "centered"}));
    double alpha = 0.99, eps = 1e-8, momentum = 0;
    bool centered = false;
    TRIALSHIM_RETURN_IF_ERROR(r.Double("alpha", &alpha));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("eps", &eps));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("momentum", &momentum));
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("centered", &centered));
    opt = std::make_shared<torch::optim::RMSprop>(
        parameters, torch::optim::RMSpropOptions(lr)
                        .alpha(alpha)
                        .eps(eps)
                        .momentum(momentum)
                        .centered(centered)
                        .weight_decay(weight_decay));
  } else {
    TRIALSHIM_RETURN_IF_ERROR(
        r.CheckKeys({"name", "lr", "weight_decay", "lr_decay", "eps",
                     "initial_accumulator_value"}));
    double lr_decay = 0, eps = 1e-10, initial = 0;
    TRIALSHIM_RETURN_IF_ERROR(r.Double("lr_decay", &lr_decay));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("eps", &eps));
    TRIALSHIM_RETURN_IF_ERROR(
        r.Double("initial_accumulator_value", &initial));
    opt = std::make_shared<torch::optim::Adagrad>(
        parameters, torch::optim::AdagradOptions(lr)
                        .lr_decay(lr_decay)
                        .eps(eps)
                        .initial_accumulator_value(initial)
                        .weight_decay(weight_decay));
  }
  return opt;
}

}  // namespace

StatusOr<std::shared_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const config::Node& node, std::vector<torch::Tensor> parameters,
    const std::string& prefix) {
  internal::MapReader r(node, prefix);
  if (!node.is_map()) {
    return Status::InvalidArgument(
        prefix + ": expected a map with a name, got " + node.type_name());
  }
  std::string name;
  TRIALSHIM_RETURN_IF_ERROR(r.String("name", &name));
  double lr = -1;
  TRIALSHIM_RETURN_IF_ERROR(r.Double("lr", &lr));
  static const std::vector<std::string> kNames = {"sgd", "adam", "adamw",
                                                  "rmsprop", "adagrad"};
  if (std::find(kNames.begin(), kNames.end(), name) == kNames.end()) {
    return Status::InvalidArgument(
        prefix + ".name: unknown optimizer '" + name +
        "'; expected one of sgd, adam, adamw, rmsprop, adagrad" +
        DidYouMean(name, kNames));
  }
  if (!(lr > 0)) {
    return Status::InvalidArgument(prefix + ".lr: expected a number > 0" +
                                   std::string(lr == -1 ? " (missing)" : ""));
  }
  double weight_decay = name == "adamw" ? 0.01 : 0.0;
  TRIALSHIM_RETURN_IF_ERROR(r.Double("weight_decay", &weight_decay));
  try {
    return BuildOptimizer(name, r, parameters, lr, weight_decay);
  } catch (const c10::Error& e) {
    return Status::InvalidArgument(prefix + ": " + e.what_without_backtrace());
  }
}

std::string OptimizerName(const torch::optim::Optimizer& optimizer) {
  if (dynamic_cast<const torch::optim::SGD*>(&optimizer)) return "SGD";
  if (dynamic_cast<const torch::optim::Adam*>(&optimizer)) return "Adam";
  if (dynamic_cast<const torch::optim::AdamW*>(&optimizer)) return "AdamW";
  if (dynamic_cast<const torch::optim::RMSprop*>(&optimizer)) return "RMSprop";
  if (dynamic_cast<const torch::optim::Adagrad*>(&optimizer)) return "Adagrad";
  return "Optimizer";
}

}  // namespace trialshim::trainer
