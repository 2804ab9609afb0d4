#include "trialshim/trainer/module.h"

namespace trialshim::trainer {

void Module::log(const std::string& name, double value,
                 const LogOptions& options) {
  if (metrics_ != nullptr) metrics_->Log(name, value, options);
}

void Module::log(const std::string& name, const torch::Tensor& value,
                 const LogOptions& options) {
  if (metrics_ != nullptr) {
    metrics_->Log(name, value.detach().item<double>(), options);
  }
}

}  // namespace trialshim::trainer
