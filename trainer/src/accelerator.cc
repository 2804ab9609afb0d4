// trainer.accelerator, trainer.devices and trainer.precision: the device a
// fit runs on, the processes of a machine, and the dtypes of its steps.
#include "trialshim/trainer/accelerator.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "device_launcher.h"
#include "torch_build.h"
#include "trialshim/trainer/precision.h"
#include "trialshim/trainer/step_log.h"
#include "trialshim/trainer/trainer.h"

#ifdef TRIALSHIM_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace trialshim::trainer {
namespace {

#ifdef TRIALSHIM_TORCH_CUDA
constexpr bool kCudaBuild = true;
#else
constexpr bool kCudaBuild = false;
#endif

std::string TorchVersion() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." +
         std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// "LibTorch 2.11.0 with CUDA 13.0" or "LibTorch 1.13.0 (CPU only)".
std::string LibraryText(const BuildInfo& info) {
  return "LibTorch " + info.torch_version +
         (info.cuda_version.empty() ? " (CPU only: no CUDA in this build)"
                                    : " with CUDA " + info.cuda_version);
}

}  // namespace

BuildInfo DescribeBuild() {
  BuildInfo info;
  info.torch_version = TorchVersion();
#ifdef TRIALSHIM_TORCH_CUDA
  info.cuda_version = TRIALSHIM_TORCH_CUDA;
  const int64_t count = torch::cuda::device_count();
  for (int64_t i = 0; i < count; ++i) {
    const cudaDeviceProp* p =
        at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
    char gib[32];
    std::snprintf(gib, sizeof(gib), "%.1f",
                  static_cast<double>(p->totalGlobalMem) / (1 << 30));
    info.devices.push_back(std::string(p->name) + " (sm_" +
                           std::to_string(p->major) + std::to_string(p->minor) +
                           ", " + gib + " GiB)");
  }
#endif
  return info;
}

std::string BuildInfoText(const BuildInfo& info) {
  std::string out = LibraryText(info);
  if (info.cuda_version.empty()) return out;
  out += "; " + std::to_string(info.devices.size()) + " CUDA device(s)";
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible != nullptr) out += std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")";
  for (size_t i = 0; i < info.devices.size(); ++i) {
    out += (i == 0 ? ": " : ", ") + std::to_string(i) + " " + info.devices[i];
  }
  return out;
}

Status Trainer::SetupDevice(bool launch) {
  const std::string& acc = options_.accelerator();
  BuildInfo build;
  build.torch_version = TorchVersion();
  const int64_t count = kCudaBuild ? torch::cuda::device_count() : 0;
  if (acc == "cuda" && count == 0) {
    if (!kCudaBuild) {
      return Status::InvalidArgument(
          "trainer.accelerator=gpu, but this trainer was built against " +
          LibraryText(build) +
          ": build it against a CUDA LibTorch (`make gpu`, docs/gpu.md), or "
          "set trainer.accelerator=cpu");
    }
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return Status::InvalidArgument(
        "trainer.accelerator=gpu, but this machine has no CUDA device "
        "LibTorch can see" +
        (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")"
                 : std::string()) +
        ": run it where there is a GPU, or set trainer.accelerator=cpu "
        "(auto picks the GPU when there is one)");
  }
  const bool cuda = acc != "cpu" && count > 0;
  std::vector<int64_t> ids = options_.device_ids();
  if (!cuda && !ids.empty()) {
    return Status::InvalidArgument(
        "trainer.devices lists CUDA devices, but the fit runs on the CPU: "
        "give a count (trainer.devices=" + std::to_string(ids.size()) + ")");
  }
  int64_t processes = options_.devices();
  if (processes == -1) processes = cuda ? count : 1;
  if (cuda && ids.empty()) {
    for (int64_t i = 0; i < processes; ++i) ids.push_back(i);
  }
  for (int64_t id : ids) {
    if (id >= count) {
      return Status::InvalidArgument(
          "trainer.devices asks for CUDA device " + std::to_string(id) +
          ", but LibTorch sees " + std::to_string(count) +
          " (devices 0 .. " + std::to_string(count - 1) + ")");
    }
  }
  const char* launched = std::getenv("LOCAL_RANK");
  if (launch && processes > 1 && (launched == nullptr || *launched == '\0')) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        launcher_,
        internal::DeviceLauncher::Start(processes, options_.num_nodes(),
                                        options_.launch_command()));
    console().info("trainer.devices={}: started local ranks 1..{} of this "
                   "machine's {} processes",
                   processes, processes - 1, processes);
  }
  device_ = torch::Device(torch::kCPU);
  if (cuda) {
    // LOCAL_RANK (set by the launcher above, `trialshim launch` or
    // torchrun; never for a plain replica) picks this process's device.
    const char* local = std::getenv("LOCAL_RANK");
    const int64_t rank = local ? std::strtoll(local, nullptr, 10) : 0;
    const int64_t index = options_.devices() == -1
                              ? rank % std::max<int64_t>(count, 1)
                              : ids[static_cast<size_t>(rank) % ids.size()];
    device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
#ifdef TRIALSHIM_TORCH_CUDA
    // What NCCL and allocations without a device use.
    c10::cuda::set_device(device_.index());
#endif
  }
  return Status::Ok();
}

Status Trainer::SetupPrecision(Module& module) {
  const std::string& precision = options_.precision();
  const bool cuda = device_.is_cuda();
  if (!cuda && (precision == "16-mixed" || precision == "16-true")) {
    // Lightning's connector refuses the same: "AMP with fp16 is not
    // supported on CPU".
    return Status::InvalidArgument(
        "trainer.precision=" + precision +
        " needs a CUDA device (float16 is not supported on the CPU, as in "
        "Lightning); use trainer.precision=bf16-mixed");
  }
  dtype_.reset();
  if (precision == "64-true") dtype_ = torch::kDouble;
  if (precision == "bf16-true") dtype_ = torch::kBFloat16;
  if (precision == "16-true") dtype_ = torch::kHalf;
  autocast_.reset();
  if (precision == "bf16-mixed") autocast_ = at::kBFloat16;
  if (precision == "16-mixed") autocast_ = at::kHalf;
  scaler_.reset();
  if (precision == "16-mixed") scaler_ = std::make_unique<GradScaler>();
  if (!options_.float32_matmul_precision().empty()) {
    at::globalContext().setFloat32MatmulPrecision(
        options_.float32_matmul_precision());
  } else if (cuda && precision == "32-true") {
    // Lightning's hint for tensor-core GPUs, once.
    console().info(
        "This CUDA device has tensor cores: trainer.float32_matmul_precision="
        "high runs float32 matrix products in TF32 (faster, as "
        "torch.set_float32_matmul_precision('high'))");
  }
  module.to(device_);
  if (dtype_) module.to(*dtype_);
  step_log_->set_deferred(cuda);
  loss_check_ = torch::Tensor();
  unchecked_losses_ = 0;
  return Status::Ok();
}

}  // namespace trialshim::trainer
