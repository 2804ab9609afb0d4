// Trainer: runs a Module's training, validation and test loops, with the
// checkpointing, restart and reporting a hyperparameter-tuning trial needs.
//
// fit(module, data) trains for options().max_epochs / max_steps. Before the
// first step it resumes from a checkpoint (options().ckpt_path, else the
// newest valid *.ckpt in the checkpoint directory). A checkpoint that fails
// its checks (truncated, corrupt) is renamed "<name>.unreadable-N" so that
// nothing overwrites it, named at WARNING with the reason, and the run goes
// on from an older one or, with none left, from epoch 0 (a preempted trial
// must still give a measurement); that restart is logged at WARNING and
// kept in the "restarts" list of every later checkpoint's trainer state
// (time, resumed_from or null, and each file, where it was kept and why).
// Every checkpoint records the settings of its run (options().run_config):
// one of another run (other settings, say a second multirun into the same
// sweep directory) is renamed "<name>.other-run-N", named at WARNING with
// what differs, and never resumed, unless ckpt_path names it. A *.ckpt
// that is not a regular file (a FIFO, a link, a directory) is kept aside
// as an unreadable one before training, and never opened in a way that
// could block. A checkpoint holds the model, the optimizer, the
// scheduler, the epoch and batch position, the global step, the logged
// metrics, every callback's state and the RNG state, so a resumed run with
// deterministic=true ends with exactly the metrics of an uninterrupted one.
// After every validation the monitored metric is reported the way
// cloudml-hypertune reports it. On SIGTERM (handle_sigterm) fit finishes
// the current optimizer step, writes last.ckpt and returns Cancelled; the
// program should exit with 143. At the end the model's parameters are saved
// as model.pt in the model directory.
//
// With trainer.strategy=ddp (or auto under WORLD_SIZE > 1) fit joins the
// ranks of the environment (distributed.h) and trains data-parallel: rank
// 0's weights are broadcast, each rank reads its own shard of every epoch,
// gradients are averaged after every backward (so clipping sees the global
// gradient), validation runs on the whole validation set on every rank and
// its metrics are averaged (every rank's EarlyStopping and ModelCheckpoint
// see the same monitor value), sync_dist metrics are averaged, and a stop
// (SIGTERM on any rank, a skipped non-finite step) is agreed at every
// optimizer step. Only rank 0 writes checkpoints, the loggers' files, the
// tuning metric and the model; every rank resumes from the same checkpoint
// (a mismatch is an error). A rank that dies or hangs makes fit fail with a
// Status naming it within TRIALSHIM_DIST_TIMEOUT.
//
// trainer.accelerator picks the CPU or a CUDA device; trainer.devices > 1
// without a launcher starts one process per device, as Lightning does; on
// CUDA the logged values and the loss check stay on the device until the
// loggers need them (docs/gpu.md). A CUDA out-of-memory error is returned
// with the batch size and what to change.
//
// Every LibTorch error (c10::Error) and every exception from user steps is
// caught here and returned as a Status. One Trainer drives one fit at a
// time, from one thread.
#ifndef TRIALSHIM_TRAINER_TRAINER_H_
#define TRIALSHIM_TRAINER_TRAINER_H_

#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/base/lock.h"
#include "trialshim/base/status.h"
#include "trialshim/trainer/callbacks.h"
#include "trialshim/trainer/data.h"
#include "trialshim/trainer/loggers.h"
#include "trialshim/trainer/metrics.h"
#include "trialshim/trainer/module.h"
#include "trialshim/trainer/options.h"

namespace spdlog {
class logger;
}
namespace trialshim::hypertune {
class HypertuneReporter;
}

namespace trialshim::trainer {

class DistributedContext;
class GradScaler;
class StepLog;
struct OpenedCheckpoint;
namespace internal {
class DeviceLauncher;
}  // namespace internal
using Metrics = std::map<std::string, double>;

class Trainer {
 public:
  explicit Trainer(TrainerOptions options = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  Trainer& add_callback(std::shared_ptr<Callback> callback);

  // Status codes: InvalidArgument for configuration problems (no
  // optimizer, a checkpoint that does not fit the model, a non-finite loss
  // with on_nonfinite=error, an unknown hypertune monitor), Cancelled after
  // SIGTERM (checkpoint written), IOError/Internal for runtime failures.
  Status fit(Module& module, DataModule& data);
  // One pass over the val/test loader; returns the epoch metrics.
  StatusOr<Metrics> validate(Module& module, DataModule& data);
  StatusOr<Metrics> test(Module& module, DataModule& data);

  const TrainerOptions& options() const { return options_; }
  // The device fit runs on (set at fit's start).
  const torch::Device& device() const { return device_; }
  int64_t current_epoch() const { return epoch_; }
  int64_t global_step() const { return global_step_; }
  // The latest value of every logged metric (epoch means for on_epoch).
  const Metrics& callback_metrics() const { return callback_metrics_; }
  bool should_stop() const { return should_stop_; }
  // During on_validation_end of a validation before the epoch's end
  // (trainer.val_check_interval), where checkpoints are saved, as
  // Lightning does then.
  bool validating_mid_epoch() const { return validating_mid_epoch_; }
  void set_should_stop(bool stop) { should_stop_ = stop; }
  // Optimizer steps a whole fit takes (for schedules), -1 when unbounded.
  int64_t estimated_stepping_batches() const { return stepping_batches_; }
  // Training batches per epoch, after the limits (0 before fit).
  int64_t num_training_batches() const { return num_training_batches_; }
  // The last optimizer step's values of the metrics logged with prog_bar.
  Metrics progress_bar_metrics() const;
  torch::optim::Optimizer* optimizer() const { return optim_.optimizer.get(); }
  LrScheduler* scheduler() const { return optim_.scheduler.scheduler.get(); }
  const std::string& root_dir() const { return root_dir_; }
  const std::string& checkpoint_dir() const { return checkpoint_dir_; }
  // The checkpoint written last ("" before the first).
  const std::string& last_checkpoint() const { return last_checkpoint_; }
  // Where the resumed state came from ("" when starting fresh).
  const std::string& resumed_from() const { return resumed_from_; }
  spdlog::logger& console() const { return *options_.console(); }
  // Lightning's trainer.loggers (options().logger made into loggers; the
  // default ones when it is true) and trainer.logger (the first, or null).
  const std::vector<std::shared_ptr<Logger>>& loggers() const {
    return loggers_;
  }
  Logger* logger() const {
    return loggers_.empty() ? nullptr : loggers_[0].get();
  }
  int64_t seed() const { return seed_; }
  // The data-parallel group during a ddp fit, else null.
  DistributedContext* distributed() const { return dist_.get(); }
  // Lightning's names: this process's rank, the number of ranks, rank 0.
  int global_rank() const;
  int world_size() const;
  bool is_global_zero() const { return global_rank() == 0; }

  // Writes a checkpoint of the current state (temp file + rename);
  // weights_only: the module's tensors without the optimizer's (such a
  // file can not resume a fit).
  Status save_checkpoint(const std::string& path, bool weights_only = false);
  // Adds metrics logged outside a step to callback_metrics and, with the
  // current epoch and step, to every logger.
  void log_metrics(const Metrics& metrics);
  // The same at `step` with `epoch` (none: no "epoch" column), as a
  // Lightning callback calls its loggers' log_metrics (LearningRateMonitor).
  void log_metrics(const Metrics& metrics, int64_t step,
                   std::optional<int64_t> epoch);

 private:
  // fit's loops (src/loops.h), named as Lightning's; members, so they
  // share the state a checkpoint holds.
  class FitLoop;
  class TrainingEpochLoop;
  class EvaluationLoop;

  // `launch`: fit, which starts the other processes of trainer.devices.
  Status Setup(Module& module, bool launch = false);
  // accelerator.cc: trainer.accelerator and trainer.devices (with `launch`,
  // starting the other processes of this machine when this one is the
  // first), then trainer.precision and the float32 matmul precision.
  Status SetupDevice(bool launch);
  Status SetupPrecision(Module& module);
  // validate() and test(): one evaluation pass outside fit.
  StatusOr<Metrics> Evaluate(Module& module, DataModule& data, Stage stage);
  Status Resume(Module& module);
  Status RestoreState(const OpenedCheckpoint& opened, const std::string& path,
                      Module& module);
  // Resume's handling of a checkpoint that fails its checks, is not a
  // regular file, or (`tag` "other-run") is another run's: a JSON record
  // of it ({file, kept_as, why}).
  StatusOr<nlohmann::json> KeepAside(const std::string& path,
                                     const std::string& why,
                                     const char* tag = "unreadable");
  void RecordRestart(const nlohmann::json& unreadable, const std::string& from);
  // Rank 0 locks the checkpoint directory for the whole fit: a second
  // trainer on it would resume from, and overwrite, this one's checkpoints.
  Status LockCheckpointDir();
  // One batch's forward and backward; with the last batch of an
  // accumulation, the optimizer step (`stepped`).
  Status TrainStep(Module& module, const Batch& batch, int64_t batch_idx,
                   bool last_in_epoch, bool* stepped);
  Status NonFinite(const std::string& what, double value, int64_t batch_idx);
  // The loss's check for inf/NaN: at once, or (CUDA, on_nonfinite=error)
  // counted on the device and read by CheckDeferredLosses.
  Status CheckLoss(const torch::Tensor& loss, int64_t batch_idx);
  Status CheckDeferredLosses(int64_t batch_idx);
  // 16-mixed: unscales the gradients; false when they hold an inf or NaN
  // and the optimizer step is to be skipped (the scale backs off).
  bool UnscaleGradients();
  // A CUDA out-of-memory error, with the batch size and what to change.
  Status OutOfMemory(const c10::Error& e) const;
  // The batch on the device, in the precision's dtype.
  Batch Prepare(const Batch& batch) const;
  // trainer.max_time: the fit's seconds so far, across resumes.
  double TimeElapsed() const;
  bool MaxTimeReached() const {
    return options_.max_time() >= 0 && TimeElapsed() >= options_.max_time();
  }
  // min_epochs and min_steps let a requested stop happen.
  bool CanStopEarly() const {
    return epoch_ + 1 >= options_.min_epochs() &&
           global_step_ >= options_.min_steps();
  }
  // trainer.ckpt_path's "last" and "best": the file they name, "" for none.
  StatusOr<std::string> SpecialCheckpoint(const std::string& which) const;
  Status ReportHypertune();
  // Rank 0: every logger's save() (finalize(status) at the end of fit).
  Status SaveLoggers(const char* finalize_status = nullptr);
  // Rank 0 at fit start: the module's hyperparameters to every logger.
  Status LogHyperparams(const Module& module);
  Status SaveFinalModel(Module& module);
  bool MaxStepsReached() const {
    return options_.max_steps() >= 0 && global_step_ >= options_.max_steps();
  }
  // trainer.strategy: joins the ranks of the environment for ddp.
  Status SetupStrategy();
  // ddp: joins the group, agrees on the seed and the resumed position,
  // prepares the module. No-op for one process.
  Status SetupDistributed(Module& module);
  // ddp with several ranks: averages `flags` and `metrics` (the names in
  // `only`, or all) in one collective that also checks that every rank
  // logged the same names. No-op otherwise.
  Status SyncMetrics(Metrics* metrics, const std::set<std::string>* only,
                     std::vector<double>* flags = nullptr);
  // SIGTERM seen by this process, or (ddp) by any rank at the last step.
  bool StopRequested();
  bool distributed_group() const;
  std::vector<std::shared_ptr<Callback>> OrderedCallbacks() const;

  TrainerOptions options_;
  Module* module_ = nullptr;  // during fit
  std::vector<std::shared_ptr<Callback>> callbacks_;
  OptimizerConfig optim_;
  MetricStore metrics_;
  std::vector<std::shared_ptr<Logger>> loggers_;
  Status logger_error_;  // the first failed log_metrics, returned at save
  Metrics callback_metrics_;
  torch::Device device_ = torch::kCPU;
  // 64-true / bf16-true: the module's and the batches' floating dtype.
  std::optional<torch::Dtype> dtype_;
  // bf16-mixed / 16-mixed: steps run under autocast to this dtype on the
  // device's type (precision.h).
  std::optional<at::ScalarType> autocast_;
  // 16-mixed: the loss scale (precision.h).
  std::unique_ptr<GradScaler> scaler_;
  // What Module::log feeds metrics_ through (step_log.h): deferred on CUDA.
  std::unique_ptr<StepLog> step_log_;
  // CUDA with on_nonfinite=error: 0 until a loss since the last check was
  // inf or NaN, kept on the device (read when the step log is flushed).
  torch::Tensor loss_check_;
  int64_t unchecked_losses_ = 0;
  // max_time: time_elapsed_ before this fit (from a checkpoint), and when
  // this fit started.
  double time_elapsed_ = 0;
  std::chrono::steady_clock::time_point fit_started_{};
  std::string root_dir_;
  std::string checkpoint_dir_;
  std::optional<DirectoryLock> checkpoint_lock_;
  std::string last_checkpoint_;
  std::string resumed_from_;
  // Restarts after unreadable checkpoints, carried in every checkpoint.
  nlohmann::json restarts_ = nlohmann::json::array();
  int64_t seed_ = 0;
  int64_t epoch_ = 0;
  int64_t max_epochs_ = 0;
  int64_t global_step_ = 0;
  int64_t stepping_batches_ = -1;
  int64_t num_training_batches_ = 0;
  // Where a checkpoint written now resumes: epoch and batch within it.
  int64_t resume_epoch_ = 0;
  int64_t resume_batch_ = 0;
  int64_t accumulated_ = 0;       // batches in the current accumulation
  bool group_nonfinite_ = false;  // a skipped batch in this accumulation
  int64_t skipped_steps_ = 0;
  int64_t last_batch_size_ = 0;  // for an out-of-memory message
  bool should_stop_ = false;
  bool validated_once_ = false;
  bool validating_mid_epoch_ = false;
  std::unique_ptr<hypertune::HypertuneReporter> hypertune_;
  std::unique_ptr<DistributedContext> dist_;
  // trainer.devices > 1 without a launcher: the processes this one started.
  std::unique_ptr<internal::DeviceLauncher> launcher_;
  bool primary_ = true;       // writes files (rank 0, or the only process)
  bool stop_agreed_ = false;  // ddp: some rank saw SIGTERM at this step
  Metrics step_values_;       // the last step's values, sync_dist averaged
};

// The signal (SIGTERM, SIGINT or SIGHUP) that made the last fit return
// Cancelled after checkpointing, or 0: a program exits with 128 + it, as
// a process killed by that signal would.
int StopSignal();

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_TRAINER_H_
