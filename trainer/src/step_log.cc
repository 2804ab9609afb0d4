#include "trialshim/trainer/step_log.h"

#include <torch/torch.h>

namespace trialshim::trainer {

void StepLog::BeginStep(Stage stage, int64_t batch_size) {
  if (!deferred_) return store_->BeginStep(stage, batch_size);
  Call c;
  c.begin_step = true;
  c.stage = stage;
  c.batch_size = batch_size;
  calls_.push_back(std::move(c));
}

void StepLog::Log(const std::string& name, double value,
                  const LogOptions& options) {
  if (!deferred_) return store_->Log(name, value, options);
  Call c;
  c.name = name;
  c.value = value;
  c.options = options;
  calls_.push_back(std::move(c));
}

void StepLog::Log(const std::string& name, const torch::Tensor& value,
                  const LogOptions& options) {
  if (!deferred_) {
    return Log(name, value.detach().item<double>(), options);
  }
  Call c;
  c.name = name;
  c.tensor = static_cast<int64_t>(tensors_.size());
  c.options = options;
  // Kept as logged (as Lightning keeps a logged tensor): no kernel now.
  tensors_.push_back(value.detach().reshape({}));
  calls_.push_back(std::move(c));
}

void StepLog::Flush() {
  if (calls_.empty()) return;
  std::vector<double> values;
  if (!tensors_.empty()) {
    for (auto& t : tensors_) t = t.to(torch::kDouble);
    torch::Tensor host = torch::stack(tensors_).to(torch::kCPU);
    values.assign(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
  }
  for (const Call& c : calls_) {
    if (c.begin_step) {
      store_->BeginStep(c.stage, c.batch_size);
    } else {
      store_->Log(c.name, c.tensor < 0 ? c.value : values[c.tensor], c.options);
    }
  }
  calls_.clear();
  tensors_.clear();
}

}  // namespace trialshim::trainer
