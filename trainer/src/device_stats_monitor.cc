// Lightning's DeviceStatsMonitor (callbacks.h): the CUDA caching
// allocator's statistics, and psutil's CPU figures read from /proc.
#include <torch/torch.h>

#include <fstream>
#include <sstream>

#include "torch_build.h"
#include "trialshim/trainer/callbacks.h"
#include "trialshim/trainer/trainer.h"

#ifdef TRIALSHIM_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace trialshim::trainer {
namespace {

// torch.cuda.memory_stats's names for the aggregate ("all") pool.
void CudaStats(const torch::Device& device, Metrics* out) {
#ifdef TRIALSHIM_TORCH_CUDA
  using c10::CachingAllocator::StatType;
  const auto s = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  const auto all = static_cast<size_t>(StatType::AGGREGATE);
  auto put = [&](const std::string& name, const auto& stat) {
    (*out)[name + ".all.current"] = static_cast<double>(stat[all].current);
    (*out)[name + ".all.peak"] = static_cast<double>(stat[all].peak);
  };
  put("allocated_bytes", s.allocated_bytes);
  put("reserved_bytes", s.reserved_bytes);
  put("active_bytes", s.active_bytes);
  (*out)["num_alloc_retries"] = static_cast<double>(s.num_alloc_retries);
  (*out)["num_ooms"] = static_cast<double>(s.num_ooms);
#else
  (void)device;
  (void)out;
#endif
}

// "Key: N kB" from /proc/meminfo.
double MemInfo(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key + ":");
  return at == std::string::npos ? 0 : std::atof(text.c_str() + at + key.size() + 2);
}

}  // namespace

Status DeviceStatsMonitor::on_train_batch_end(Trainer& trainer, Module&,
                                              int64_t) {
  if (trainer.global_rank() != 0 ||
      trainer.global_step() % trainer.options().log_every_n_steps() != 0) {
    return Status::Ok();
  }
  const torch::Device device = trainer.device();
  Metrics stats;
  if (device.is_cuda()) CudaStats(device, &stats);
  if (cpu_stats_.value_or(!device.is_cuda())) {
    // psutil's cpu_percent(): every core's busy share since the last call.
    std::ifstream stat("/proc/stat");
    std::string cpu;
    uint64_t v = 0, total = 0, idle = 0;
    stat >> cpu;
    for (int i = 0; stat >> v && i < 10; ++i) {
      total += v;
      if (i == 3 || i == 4) idle += v;  // idle, iowait
    }
    const uint64_t busy = total - idle;
    if (total > total_) {
      stats["cpu_percent"] =
          100.0 * static_cast<double>(busy - busy_) / static_cast<double>(total - total_);
    }
    busy_ = busy;
    total_ = total;
    std::ifstream mem_file("/proc/meminfo");
    std::stringstream mem;
    mem << "\n" << mem_file.rdbuf();
    const double mem_total = MemInfo(mem.str(), "MemTotal");
    const double swap_total = MemInfo(mem.str(), "SwapTotal");
    // psutil's virtual_memory().percent and swap_memory().percent.
    if (mem_total > 0) {
      stats["cpu_vm_percent"] =
          100.0 * (mem_total - MemInfo(mem.str(), "MemAvailable")) / mem_total;
    }
    stats["cpu_swap_percent"] =
        swap_total > 0
            ? 100.0 * (swap_total - MemInfo(mem.str(), "SwapFree")) / swap_total
            : 0.0;
  }
  Metrics prefixed;
  for (const auto& [k, v] : stats) {
    prefixed["DeviceStatsMonitor.on_train_batch_end/" + k] = v;
  }
  if (!prefixed.empty()) {
    trainer.log_metrics(prefixed, trainer.global_step() - 1, std::nullopt);
  }
  return Status::Ok();
}

}  // namespace trialshim::trainer
