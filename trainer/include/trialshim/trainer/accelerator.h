// What this build of the trainer runs on: the LibTorch it was built
// against, whether that LibTorch has CUDA (`make gpu` builds against PyPI's
// CUDA LibTorch; `make build` against Debian's CPU one), and the CUDA
// devices it sees now. digits-train --version and the fit's first log line
// print it; docs/gpu.md says how the two builds differ.
#ifndef TRIALSHIM_TRAINER_ACCELERATOR_H_
#define TRIALSHIM_TRAINER_ACCELERATOR_H_

#include <string>
#include <vector>

namespace trialshim::trainer {

struct BuildInfo {
  std::string torch_version;  // "2.11.0"
  // The CUDA this LibTorch was built for ("13.0"); "" for a CPU LibTorch.
  std::string cuda_version;
  // The CUDA devices visible now (CUDA_VISIBLE_DEVICES applies), e.g.
  // "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)". Empty without CUDA.
  std::vector<std::string> devices;
};

// Initializes CUDA (about a second) when the LibTorch has it.
BuildInfo DescribeBuild();
// "LibTorch 2.11.0 with CUDA 13.0; 1 CUDA device: 0 NVIDIA H100 ...", or
// "LibTorch 1.13.1 (CPU only: no CUDA in this build)".
std::string BuildInfoText(const BuildInfo& info);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_ACCELERATOR_H_
