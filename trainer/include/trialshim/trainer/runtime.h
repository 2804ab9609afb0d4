// The numeric runtime under LibTorch: which BLAS it calls and how many
// threads it uses.
//
// Debian's LibTorch calls whatever libblas.so.3 the alternatives system
// points at. The reference BLAS is 7-18x slower than OpenBLAS on an MLP, so
// the Trainer logs which one it found and warns on the reference one.
// at::set_num_threads does not govern OpenBLAS's own pool, and the two
// pools oversubscribe the cores (3x slower here), so SetNumThreads sets
// both: OpenBLAS through openblas_set_num_threads, found with dlsym so that
// nothing links OpenBLAS directly.
#ifndef TRIALSHIM_TRAINER_RUNTIME_H_
#define TRIALSHIM_TRAINER_RUNTIME_H_

#include <cstdint>
#include <string>

namespace trialshim::trainer {

struct BlasInfo {
  // "OpenBLAS <config>", "MKL", "reference BLAS" or "unknown".
  std::string name;
  // The shared object that provides sgemm_ ("" when not found).
  std::string library;
  bool is_reference = false;
  bool is_openblas = false;
};

BlasInfo DetectBlas();

// The thread count to use: `requested` if > 0, else 1. One thread beat two
// at every batch size measured (64 to 1024 rows; bench/README.md, trainer):
// OpenMP's spinning hand-off costs more than these matrices gain.
int ChooseNumThreads(int64_t requested);

// Sets LibTorch's intra-op threads and OpenBLAS's threads to `n`.
void SetNumThreads(int n);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_RUNTIME_H_
