// Callbacks: code that runs at fixed points of Trainer::fit, with
// Lightning's hooks and built-ins.
//
// Hooks return a Status; a non-OK one stops fit with that status. The
// Trainer calls user callbacks in the order added and checkpoint callbacks
// last (as Lightning does), so a checkpoint holds the state every other
// callback reached in that epoch. A callback's state_dict is saved in every
// checkpoint under its state_key and given back on resume.
#ifndef TRIALSHIM_TRAINER_CALLBACKS_H_
#define TRIALSHIM_TRAINER_CALLBACKS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"
#include "trialshim/trainer/options.h"

namespace trialshim::trainer {

class Module;
class Trainer;

class Callback {
 public:
  virtual ~Callback() = default;
  // Key of this callback's state in a checkpoint; unique per trainer.
  virtual std::string state_key() const = 0;

  virtual Status on_fit_start(Trainer&, Module&) { return Status::Ok(); }
  virtual Status on_train_epoch_start(Trainer&, Module&) {
    return Status::Ok();
  }
  // After each optimizer step.
  virtual Status on_train_batch_end(Trainer&, Module&, int64_t batch_idx) {
    (void)batch_idx;
    return Status::Ok();
  }
  // After validation, with its metrics in trainer.callback_metrics().
  virtual Status on_validation_end(Trainer&, Module&) { return Status::Ok(); }
  // After the epoch's validation and scheduler step.
  virtual Status on_train_epoch_end(Trainer&, Module&) { return Status::Ok(); }
  virtual Status on_fit_end(Trainer&, Module&) { return Status::Ok(); }
  // When fit fails or is cancelled (SIGTERM), with its status; on_fit_end
  // is not called then.
  virtual void on_exception(Trainer&, Module&, const Status& status) {
    (void)status;
  }

  virtual nlohmann::json state_dict() const { return nullptr; }
  virtual Status load_state_dict(const nlohmann::json&) { return Status::Ok(); }
  // Checkpoint callbacks run after the others.
  virtual bool is_checkpoint_callback() const { return false; }
};

// "min" or "max" comparisons with a margin.
enum class Mode { kMin, kMax };

class ModelCheckpointOptions {
 public:
  // Directory. "": the trainer's checkpoint directory. Default: "".
  TRIALSHIM_ARG(std::string, dirpath) = "";
  // Metric that ranks checkpoints. "": keep the newest. Default: "".
  TRIALSHIM_ARG(std::string, monitor) = "";
  // Default: min.
  TRIALSHIM_ARG(Mode, mode) = Mode::kMin;
  // Ranked checkpoints kept ("epochE-stepS.ckpt"); 0 keeps none, -1 all.
  // Default: 1.
  TRIALSHIM_ARG(int64_t, save_top_k) = 1;
  // Also write last.ckpt every time. Unlike Lightning this defaults to
  // true: a preempted trial resumes from its latest state. Default: true.
  TRIALSHIM_ARG(bool, save_last) = true;
  // Save after every n-th epoch. Default: 1.
  TRIALSHIM_ARG(int64_t, every_n_epochs) = 1;
};

class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(ModelCheckpointOptions options = {});
  std::string state_key() const override { return "ModelCheckpoint"; }
  // Removes what a killed run left half-written in its own dirpath (the
  // trainer clears its checkpoint directory itself).
  Status on_fit_start(Trainer& trainer, Module& module) override;
  Status on_validation_end(Trainer& trainer, Module& module) override;
  Status on_train_epoch_end(Trainer& trainer, Module& module) override;
  nlohmann::json state_dict() const override;
  // The ranking the checkpoint holds, reconciled with the files present
  // (see ReconcileWithFiles).
  Status load_state_dict(const nlohmann::json& state) override;
  bool is_checkpoint_callback() const override { return true; }

  const std::string& best_model_path() const { return best_path_; }
  const std::string& last_model_path() const { return last_path_; }

 private:
  ModelCheckpointOptions options_;
  // A checkpoint holds the ranking as it was before its ranked copy was
  // written and the checkpoint it displaced was deleted; a kill between
  // those steps leaves the copy missing and the displaced file behind.
  // Drops ranked paths whose file is gone, takes back ranked files of the
  // directory the ranking does not name (each holds its own score), and
  // evicts down to save_top_k again.
  void ReconcileWithFiles();
  // Sorts kept_ best first, drops what is past save_top_k (returned, for
  // the caller to delete) and sets best_path_.
  std::vector<std::string> Rank();

  // Ranked checkpoints kept: (score, path), best first.
  std::vector<std::pair<double, std::string>> kept_;
  std::string best_path_;
  std::string last_path_;
  // Validation ran in this epoch / ever in this run. Once the monitored
  // metric comes from validation, epochs without one are not ranked: their
  // value would be the last validation's again.
  bool validated_now_ = false;
  bool validated_ever_ = false;
  bool warned_missing_ = false;
};

class EarlyStoppingOptions {
 public:
  // Metric watched. Default: "val_loss".
  TRIALSHIM_ARG(std::string, monitor) = "val_loss";
  // Default: min.
  TRIALSHIM_ARG(Mode, mode) = Mode::kMin;
  // Validations without improvement before stopping. Default: 3.
  TRIALSHIM_ARG(int64_t, patience) = 3;
  // Smallest change that counts as improvement. Default: 0.
  TRIALSHIM_ARG(double, min_delta) = 0.0;
  // Stop at once when the metric is NaN or infinite. Default: true.
  TRIALSHIM_ARG(bool, check_finite) = true;
};

class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  std::string state_key() const override { return "EarlyStopping"; }
  Status on_validation_end(Trainer& trainer, Module& module) override;
  nlohmann::json state_dict() const override;
  Status load_state_dict(const nlohmann::json& state) override;

  int64_t wait_count() const { return wait_; }
  double best_score() const { return best_; }
  // Why it stopped ("" if it did not).
  const std::string& reason() const { return reason_; }

 private:
  EarlyStoppingOptions options_;
  double best_;
  int64_t wait_ = 0;
  std::string reason_;
};

// Logs each param group's learning rate as "lr-<Optimizer>" (groups after
// the first: "lr-<Optimizer>/pg<i>"), per "step" (every log_every_n_steps
// optimizer steps, in that step's row) or per "epoch" (at its start). A
// step's row holds the rate that step ran with, as Lightning logs it before
// the optimizer step, not the one a per-step scheduler set after it.
class LearningRateMonitor : public Callback {
 public:
  explicit LearningRateMonitor(std::string logging_interval = "epoch")
      : interval_(std::move(logging_interval)) {}
  std::string state_key() const override { return "LearningRateMonitor"; }
  Status on_fit_start(Trainer& trainer, Module& module) override;
  Status on_train_epoch_start(Trainer& trainer, Module& module) override;
  Status on_train_batch_end(Trainer& trainer, Module& module,
                            int64_t batch_idx) override;

 private:
  void Record(Trainer& trainer, const std::vector<double>& lrs);
  std::string interval_;
  // The rates the next optimizer step runs with.
  std::vector<double> next_lrs_;
};

// Lightning's TQDMProgressBar on one line of stderr: the epoch, a bar over
// its batches and the last step's prog_bar metrics, redrawn at most every
// 100 ms and cleared at the end of the epoch. Silent unless stderr is a
// terminal. fit adds one unless trainer.enable_progress_bar=false (adding
// one then is an error, as in Lightning).
class ProgressBar : public Callback {
 public:
  std::string state_key() const override { return "ProgressBar"; }
  Status on_fit_start(Trainer& trainer, Module& module) override;
  Status on_train_batch_end(Trainer& trainer, Module& module,
                            int64_t batch_idx) override;
  Status on_train_epoch_end(Trainer& trainer, Module& module) override;
  void on_exception(Trainer& trainer, Module& module,
                    const Status& status) override;

 private:
  void Clear();
  bool enabled_ = false;
  std::chrono::steady_clock::time_point last_drawn_{};
};

// Builds callbacks from a `callbacks:` map whose entries are null (off) or
// maps of options: model_checkpoint {dirpath, monitor, mode, save_top_k,
// save_last, every_n_epochs}, early_stopping {monitor, mode, patience,
// min_delta, check_finite}, lr_monitor {logging_interval}.
// InvalidArgument for unknown names or keys (with did-you-mean).
StatusOr<std::vector<std::shared_ptr<Callback>>> CallbacksFromConfig(
    const config::Node& callbacks);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_CALLBACKS_H_
