// The NVIDIA GPUs this machine has, as its driver lists them, for
// `trialshim env`: the shim never links LibTorch (or CUDA), so it reads the
// driver's /proc files rather than asking CUDA. Which LibTorch and CUDA a
// trainer was built with, and which devices that build sees, is the
// trainer's to say (`digits-train --version`).
#ifndef TRIALSHIM_SHIM_GPUS_H_
#define TRIALSHIM_SHIM_GPUS_H_

#include <string>
#include <vector>

namespace trialshim::shim {

struct GpuReport {
  std::string driver;                // "580.159.04", "" when unknown
  std::vector<std::string> models;   // "NVIDIA H100 80GB HBM3", by bus id
};

// Reads `proc`/driver/nvidia/version and `proc`/driver/nvidia/gpus/*/
// information. No driver: an empty report.
GpuReport ReadGpus(const std::string& proc = "/proc");

// "# GPUs: ..." lines for `trialshim env`'s shell output, with
// CUDA_VISIBLE_DEVICES when `visible` is not null.
std::string GpuComment(const GpuReport& report, const char* visible);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_GPUS_H_
