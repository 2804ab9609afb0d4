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

// The thread count to use: `requested` if > 0; 1 when deterministic;
// otherwise one per core for batches of at least `big_batch` rows and 1 for
// smaller ones (small matrices lose more to thread hand-off than they gain).
int ChooseNumThreads(int64_t requested, int64_t batch_size, bool deterministic,
                     int64_t big_batch);

// Sets LibTorch's intra-op threads and OpenBLAS's threads to `n`.
void SetNumThreads(int n);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_RUNTIME_H_
