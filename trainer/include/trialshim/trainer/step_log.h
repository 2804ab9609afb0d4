// What Module::log feeds the MetricStore through, so that values logged as
// CUDA tensors stay on the GPU until the host needs them.
//
// An item() per logged tensor makes the CPU wait for the GPU at every
// step, so it can no longer queue the next step's kernels while the GPU
// runs this one's (on small models that wait is most of a step). With
// `deferred` set (the fit runs on CUDA), BeginStep and every Log are
// queued, device values as tensors, and Flush() copies all pending values
// to the host in one transfer and replays the calls into the MetricStore
// in their order: the store ends up exactly as if it had been fed at once.
// The trainer flushes when it reads the store (every log_every_n_steps
// steps, at the end of an epoch, for validation and for ddp's per-step
// agreement).
#ifndef TRIALSHIM_TRAINER_STEP_LOG_H_
#define TRIALSHIM_TRAINER_STEP_LOG_H_

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/trainer/metrics.h"

namespace trialshim::trainer {

class StepLog {
 public:
  explicit StepLog(MetricStore* store) : store_(store) {}

  void set_deferred(bool deferred) {
    Flush();
    deferred_ = deferred;
  }
  bool deferred() const { return deferred_; }
  bool pending() const { return !calls_.empty(); }

  void BeginStep(Stage stage, int64_t batch_size);
  void Log(const std::string& name, double value, const LogOptions& options);
  // A one-element tensor, kept on its device while deferred (read at once
  // otherwise).
  void Log(const std::string& name, const torch::Tensor& value,
           const LogOptions& options);
  // Replays what is pending into the store.
  void Flush();

  MetricStore& store() {
    Flush();
    return *store_;
  }

 private:
  struct Call {
    bool begin_step = false;  // else Log
    Stage stage = Stage::kTrain;
    int64_t batch_size = 0;
    std::string name;
    double value = 0;
    int64_t tensor = -1;  // index into tensors_, or -1 for `value`
    LogOptions options;
  };

  MetricStore* store_;
  bool deferred_ = false;
  std::vector<Call> calls_;
  std::vector<torch::Tensor> tensors_;
};

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_STEP_LOG_H_
