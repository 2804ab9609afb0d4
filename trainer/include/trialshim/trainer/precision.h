// Mixed precision: the autocast scope of a step and the gradient scaler of
// float16 training, on the CPU and on CUDA.
//
// AutocastGuard is torch.autocast(device_type, dtype) as a C++ scope; the
// Trainer runs training_step (and the evaluation steps) under it, backward
// outside, as Lightning's MixedPrecision plugin does.
// GradScaler is torch.amp.GradScaler: the loss is multiplied by a scale so
// float16 gradients do not underflow; before the optimizer step the
// gradients are divided by it and checked, and a step whose gradients hold
// an inf or NaN is skipped while the scale backs off; after
// growth_interval clean steps the scale grows. As in PyTorch, that check
// is one host sync per optimizer step (Lightning's 16-mixed pays it too).
#ifndef TRIALSHIM_TRAINER_PRECISION_H_
#define TRIALSHIM_TRAINER_PRECISION_H_

#include <ATen/autocast_mode.h>
#include <nlohmann/json.hpp>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::trainer {

// Autocast to `dtype` on `device`'s type for the guard's lifetime (no-op
// when `dtype` is nullopt), restoring what was set before.
class AutocastGuard {
 public:
  AutocastGuard(const torch::Device& device,
                std::optional<at::ScalarType> dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_ = false;
  at::DeviceType type_ = at::kCPU;
  bool was_enabled_ = false;
  at::ScalarType was_dtype_ = at::kBFloat16;
};

// torch.amp.GradScaler's defaults (torch/amp/grad_scaler.py).
struct GradScalerOptions {
  double init_scale = 65536.0;  // 2**16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {}) : options_(options) {}

  // loss * scale.
  torch::Tensor Scale(const torch::Tensor& loss) const {
    return loss * scale_;
  }
  // Divides `grads` (in place) by the scale and says whether any of them
  // holds an inf or NaN (the one host sync). Undefined tensors are skipped.
  bool UnscaleAndCheck(std::vector<torch::Tensor>& grads);
  // After the step (taken or skipped): back off on `found_inf`, else grow
  // after growth_interval clean steps. Returns the new scale.
  double Update(bool found_inf);

  double scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  // Saved in checkpoints as GradScaler.state_dict() holds it.
  nlohmann::json State() const;
  Status LoadState(const nlohmann::json& state);

 private:
  GradScalerOptions options_;
  double scale_ = static_cast<float>(options_.init_scale);  // float32, as torch's
  int64_t growth_tracker_ = 0;
};

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_PRECISION_H_
