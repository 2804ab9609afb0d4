#include "trialshim/trainer/precision.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>

namespace trialshim::trainer {
namespace {

// LibTorch 2.4 made autocast's switches per device type; 1.x had one pair
// of functions for CUDA ("gpu") and one for the CPU.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool IsEnabled(at::DeviceType t) { return at::autocast::is_autocast_enabled(t); }
void SetEnabled(at::DeviceType t, bool on) {
  at::autocast::set_autocast_enabled(t, on);
}
at::ScalarType GetDtype(at::DeviceType t) {
  return at::autocast::get_autocast_dtype(t);
}
void SetDtype(at::DeviceType t, at::ScalarType d) {
  at::autocast::set_autocast_dtype(t, d);
}
#else
bool IsEnabled(at::DeviceType t) {
  return t == at::kCUDA ? at::autocast::is_enabled()
                        : at::autocast::is_cpu_enabled();
}
void SetEnabled(at::DeviceType t, bool on) {
  t == at::kCUDA ? at::autocast::set_enabled(on)
                 : at::autocast::set_cpu_enabled(on);
}
at::ScalarType GetDtype(at::DeviceType t) {
  return t == at::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                        : at::autocast::get_autocast_cpu_dtype();
}
void SetDtype(at::DeviceType t, at::ScalarType d) {
  t == at::kCUDA ? at::autocast::set_autocast_gpu_dtype(d)
                 : at::autocast::set_autocast_cpu_dtype(d);
}
#endif

}  // namespace

AutocastGuard::AutocastGuard(const torch::Device& device,
                             std::optional<at::ScalarType> dtype)
    : enabled_(dtype.has_value()), type_(device.type()) {
  if (!enabled_) return;
  was_enabled_ = IsEnabled(type_);
  was_dtype_ = GetDtype(type_);
  SetEnabled(type_, true);
  SetDtype(type_, *dtype);
  at::autocast::increment_nesting();
}

// As torch.autocast's __exit__: the cast cache lives as long as the
// outermost autocast scope.
AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(type_, was_enabled_);
  SetDtype(type_, was_dtype_);
}

bool GradScaler::UnscaleAndCheck(std::vector<torch::Tensor>& grads) {
  std::vector<torch::Tensor> defined;
  for (const auto& g : grads) {
    if (g.defined()) defined.push_back(g);
  }
  if (defined.empty()) return false;
  torch::NoGradGuard no_grad;
  const torch::Device device = defined.front().device();
  // The scale is a float32 in PyTorch, and so is its inverse.
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  torch::Tensor found_inf = torch::zeros({1}, f32);
  torch::Tensor inv_scale =
      torch::full({1}, static_cast<float>(1.0 / scale_), f32);
  if (device.is_cuda()) {
    // One fused kernel for every gradient, as GradScaler.unscale_ does.
    at::_amp_foreach_non_finite_check_and_unscale_(defined, found_inf,
                                                   inv_scale);
  } else {
    // LibTorch 1.13 has no CPU kernel for the fused op; the same arithmetic.
    for (auto& g : defined) {
      g.mul_(inv_scale.to(g.dtype()));
      found_inf.add_(torch::logical_not(torch::isfinite(g)).any().to(torch::kFloat));
    }
  }
  return found_inf.item<float>() > 0;
}

// torch's _amp_update_scale_ (aten/src/ATen/native/cuda/AmpKernels.cu),
// on the host: the found_inf it reads was synced by UnscaleAndCheck.
double GradScaler::Update(bool found_inf) {
  if (found_inf) {
    scale_ = static_cast<float>(scale_ * options_.backoff_factor);
    growth_tracker_ = 0;
    return scale_;
  }
  const int64_t successful = growth_tracker_ + 1;
  if (successful == options_.growth_interval) {
    const float grown = static_cast<float>(scale_ * options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  } else {
    growth_tracker_ = successful;
  }
  return scale_;
}

nlohmann::json GradScaler::State() const {
  return {{"scale", scale_},
          {"growth_factor", options_.growth_factor},
          {"backoff_factor", options_.backoff_factor},
          {"growth_interval", options_.growth_interval},
          {"_growth_tracker", growth_tracker_}};
}

Status GradScaler::LoadState(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("scale") ||
      !state["scale"].is_number() || !(state["scale"].get<double>() > 0) ||
      !state.contains("_growth_tracker") ||
      !state["_growth_tracker"].is_number_integer()) {
    return Status::DataLoss(
        "grad_scaler: expected {scale > 0, _growth_tracker: int}");
  }
  scale_ = state["scale"].get<double>();
  growth_tracker_ = state["_growth_tracker"].get<int64_t>();
  return Status::Ok();
}

}  // namespace trialshim::trainer
