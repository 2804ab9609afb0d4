#include "trialshim/trainer/module.h"

#include "trialshim/trainer/step_log.h"

namespace trialshim::trainer {

void Module::log(const std::string& name, double value,
                 const LogOptions& options) {
  if (metrics_ != nullptr) metrics_->Log(name, value, options);
}

void Module::log(const std::string& name, const torch::Tensor& value,
                 const LogOptions& options) {
  if (metrics_ != nullptr) metrics_->Log(name, value, options);
}

}  // namespace trialshim::trainer
