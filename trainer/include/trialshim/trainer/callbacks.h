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
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"
#include "trialshim/trainer/options.h"

namespace torch::nn {
class Module;
}

namespace trialshim::trainer {

class Module;
class Trainer;
using Metrics = std::map<std::string, double>;

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

// Checkpoint files are named as Lightning names them, `.ckpt` included, so
// configs and scripts that look for "last.ckpt" or "epoch=3-step=100.ckpt"
// find them; but a file holds trialshim's checked safetensors layout
// (checkpoint.h), not a torch.save() pickle: Lightning's
// load_from_checkpoint can not read it; safetensors.torch.load_file can.
class ModelCheckpointOptions {
 public:
  // Directory. "": the trainer's checkpoint directory. Default: "".
  TRIALSHIM_ARG(std::string, dirpath) = "";
  // Lightning's filename template: "{epoch}-{step}" when "" ->
  // "epoch=3-step=100.ckpt"; "{epoch:03d}-{val_loss:.2f}" with Python's
  // format specs (FormatCheckpointName). A "/" in it (a metric named
  // "val/loss") makes a subdirectory, as in Lightning. Default: "".
  TRIALSHIM_ARG(std::string, filename) = "";
  // Insert "name=" before each {name} of filename. Default: true.
  TRIALSHIM_ARG(bool, auto_insert_metric_name) = true;
  // Metric that ranks checkpoints. "": keep the newest. Default: "".
  TRIALSHIM_ARG(std::string, monitor) = "";
  // Default: min.
  TRIALSHIM_ARG(Mode, mode) = Mode::kMin;
  // Ranked checkpoints kept; 0 keeps none, -1 all. Default: 1.
  TRIALSHIM_ARG(int64_t, save_top_k) = 1;
  // Also write last.ckpt at every save. Unlike Lightning this defaults to
  // true: a preempted trial resumes from its latest state. Default: true.
  TRIALSHIM_ARG(bool, save_last) = true;
  // Lightning's save_last="link": last.ckpt is a symbolic link to the
  // ranked checkpoint written at the same save (a file when none was:
  // unlike Lightning, it never points at an older state). Default: false.
  TRIALSHIM_ARG(bool, save_last_link) = false;
  // The model's tensors only (no optimizer state): such a file can not
  // resume a fit, and resuming skips it. Default: false.
  TRIALSHIM_ARG(bool, save_weights_only) = false;
  // Save after every n-th epoch; 0: not at epoch ends. Default: 1.
  TRIALSHIM_ARG(int64_t, every_n_epochs) = 1;
  // Save after every n-th optimizer step (mid-epoch; resuming continues at
  // the next batch); 0: off. Default: 0.
  TRIALSHIM_ARG(int64_t, every_n_train_steps) = 0;
  // Save after a step once this many seconds passed since the last such
  // save (what a preemptible VM needs); 0: off. Default: 0.
  TRIALSHIM_ARG(double, train_time_interval) = 0;
  // Log each save and ranking decision with Lightning's messages.
  // Default: false.
  TRIALSHIM_ARG(bool, verbose) = false;
  // "-v1", "-v2", ... after a name whose file exists. Default: true.
  TRIALSHIM_ARG(bool, enable_version_counter) = true;
};

// Lightning's ModelCheckpoint._format_checkpoint_name and
// format_checkpoint_name (lightning/pytorch/callbacks/model_checkpoint.py,
// Lightning 2.6.2) for `filename` ("" is "{epoch}-{step}"): each "{name"
// becomes "name={name" when auto_insert_metric_name, then the template is
// formatted with Python's str.format rules ("{epoch:03d}", "{val_loss:.2f}")
// from `metrics` plus the integers epoch and step; a name not among them is
// the integer 0, as Lightning's torch.tensor(0). ModelCheckpoint passes its
// metrics rounded to float32, as Lightning's logged tensors are. `version`
// > 0 appends "-v<version>". Returns the name with ".ckpt"; InvalidArgument
// where Python would raise ("{epoch:.2q}", "{val_loss:d}", "{{0[}"), and
// where it would build no usable name (a width past
// kMaxPythonFormatWidth, a NUL character; base/python_format.h).
StatusOr<std::string> FormatCheckpointName(
    const std::string& filename, const std::map<std::string, double>& metrics,
    int64_t epoch, int64_t step, bool auto_insert_metric_name,
    int64_t version = 0);

// Whether `filename` can name a checkpoint at all, before the first save:
// InvalidArgument with FormatCheckpointName's error when it formats for no
// choice of the names it holds as a logged metric (a float) or a missing
// one (the int 0). ModelCheckpoint checks it in on_fit_start, and
// CallbacksFromConfig when it builds the callback.
Status CheckCheckpointFilename(const std::string& filename,
                               bool auto_insert_metric_name);

class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(ModelCheckpointOptions options = {});
  std::string state_key() const override { return "ModelCheckpoint"; }
  // Refuses a filename no checkpoint can be named by
  // (CheckCheckpointFilename); removes what a killed run left half-written
  // in its own dirpath (the trainer clears its checkpoint directory itself).
  Status on_fit_start(Trainer& trainer, Module& module) override;
  // every_n_train_steps and train_time_interval.
  Status on_train_batch_end(Trainer& trainer, Module& module,
                            int64_t batch_idx) override;
  Status on_validation_end(Trainer& trainer, Module& module) override;
  // every_n_epochs, after the epoch's validation (so Lightning's
  // save_on_train_epoch_end true and false save at the same point).
  Status on_train_epoch_end(Trainer& trainer, Module& module) override;
  nlohmann::json state_dict() const override;
  // The ranking the checkpoint holds, reconciled with the files present
  // (see ReconcileWithFiles).
  Status load_state_dict(const nlohmann::json& state) override;
  bool is_checkpoint_callback() const override { return true; }

  const ModelCheckpointOptions& options() const { return options_; }
  const std::string& dirpath() const { return options_.dirpath(); }
  const std::string& best_model_path() const { return best_path_; }
  const std::string& last_model_path() const { return last_path_; }

 private:
  // One save: the ranked copy (when the monitored value earns a place),
  // last.ckpt, the evictions. `fresh`: the monitored value is this save's
  // (not a validation's of an earlier epoch).
  Status Save(Trainer& trainer, bool fresh);
  // Whether the ranking takes `score`; sets *score from the metrics.
  StatusOr<bool> Ranks(Trainer& trainer, bool fresh, double* score);
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

  ModelCheckpointOptions options_;
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
  // As Lightning's _last_global_step_saved: one save per optimizer step.
  int64_t last_step_saved_ = -1;
  std::chrono::steady_clock::time_point last_time_saved_{};
};

class EarlyStoppingOptions {
 public:
  // Metric watched. Default: "val_loss".
  TRIALSHIM_ARG(std::string, monitor) = "val_loss";
  // Default: min.
  TRIALSHIM_ARG(Mode, mode) = Mode::kMin;
  // Checks without improvement before stopping. Default: 3.
  TRIALSHIM_ARG(int64_t, patience) = 3;
  // Smallest change that counts as improvement. Default: 0.
  TRIALSHIM_ARG(double, min_delta) = 0.0;
  // Stop at once when the metric is NaN or infinite. Default: true.
  TRIALSHIM_ARG(bool, check_finite) = true;
  // Stop at once when the metric is better than this. Default: none.
  TRIALSHIM_ARG(std::optional<double>, stopping_threshold);
  // Stop at once when the metric is worse than this. Default: none.
  TRIALSHIM_ARG(std::optional<double>, divergence_threshold);
  // A monitor that was not logged is an error (false: the check is
  // skipped, with a warning when verbose). Default: true.
  TRIALSHIM_ARG(bool, strict) = true;
  // Log improvements and the stop as Lightning's messages. Default: false.
  TRIALSHIM_ARG(bool, verbose) = false;
  // Check at every training epoch's end (true), after each validation
  // (false), or (unset) after each validation: Lightning's choice when
  // validation runs within epochs; with one validation per epoch, its
  // epoch-end check sees the same value. Default: unset.
  TRIALSHIM_ARG(std::optional<bool>, check_on_train_epoch_end);
  // Under ddp, only rank 0 logs the messages. Default: false.
  TRIALSHIM_ARG(bool, log_rank_zero_only) = false;
};

// Lightning's EarlyStopping._evaluate_stopping_criteria, in its order:
// non-finite, stopping_threshold, divergence_threshold, improvement,
// patience.
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  std::string state_key() const override { return "EarlyStopping"; }
  Status on_validation_end(Trainer& trainer, Module& module) override;
  Status on_train_epoch_end(Trainer& trainer, Module& module) override;
  nlohmann::json state_dict() const override;
  Status load_state_dict(const nlohmann::json& state) override;

  int64_t wait_count() const { return wait_; }
  double best_score() const { return best_; }
  // Why it stopped ("" if it did not).
  const std::string& reason() const { return reason_; }

 private:
  Status Check(Trainer& trainer);
  void Log(Trainer& trainer, const std::string& message) const;
  EarlyStoppingOptions options_;
  double best_;
  int64_t wait_ = 0;
  std::string reason_;
};

// Logs each param group's learning rate as Lightning names it:
// "lr-<Optimizer>" with one group, "lr-<Optimizer>/pg1", "/pg2", ... with
// several; with log_momentum also "<that>-momentum" (betas[0] for Adam-like
// optimizers, else momentum, 0 without), with log_weight_decay
// "<that>-weight_decay". Per "step" (every log_every_n_steps optimizer
// steps, in that step's row) or per "epoch" (at its start, at the number of
// steps before it). A step's row holds the rate that step ran with, as
// Lightning logs it before the optimizer step, not the one a per-step
// scheduler set after it. Rows have no epoch, as Lightning's (it calls its
// loggers directly).
class LearningRateMonitorOptions {
 public:
  // "epoch" or "step". Default: "epoch".
  TRIALSHIM_ARG(std::string, logging_interval) = "epoch";
  TRIALSHIM_ARG(bool, log_momentum) = false;
  TRIALSHIM_ARG(bool, log_weight_decay) = false;
};

class LearningRateMonitor : public Callback {
 public:
  explicit LearningRateMonitor(LearningRateMonitorOptions options = {})
      : options_(std::move(options)) {}
  explicit LearningRateMonitor(std::string logging_interval)
      : LearningRateMonitor(LearningRateMonitorOptions().logging_interval(
            std::move(logging_interval))) {}
  std::string state_key() const override { return "LearningRateMonitor"; }
  Status on_fit_start(Trainer& trainer, Module& module) override;
  Status on_train_epoch_start(Trainer& trainer, Module& module) override;
  Status on_train_batch_end(Trainer& trainer, Module& module,
                            int64_t batch_idx) override;

 private:
  // The values the next step runs with, by column name.
  Metrics Read(Trainer& trainer) const;
  LearningRateMonitorOptions options_;
  Metrics next_;
};

// Lightning's DeviceStatsMonitor: every log_every_n_steps optimizer steps,
// rank 0 logs the device's statistics under
// "DeviceStatsMonitor.on_train_batch_end/<name>". On CUDA these are
// torch.cuda.memory_stats's "allocated_bytes.all.current", ".peak",
// "reserved_bytes.all.*", "active_bytes.all.*", "num_alloc_retries" and
// "num_ooms" (Lightning logs the whole dict). With cpu_stats (default: on
// the CPU only, as Lightning's None) it adds psutil's "cpu_percent" (every
// core since the last call), "cpu_vm_percent" and "cpu_swap_percent", read
// from /proc. Lightning logs the same at on_train_batch_start; this
// trainer has no such hook.
class DeviceStatsMonitor : public Callback {
 public:
  explicit DeviceStatsMonitor(std::optional<bool> cpu_stats = std::nullopt)
      : cpu_stats_(cpu_stats) {}
  std::string state_key() const override { return "DeviceStatsMonitor"; }
  Status on_train_batch_end(Trainer& trainer, Module& module,
                            int64_t batch_idx) override;

 private:
  std::optional<bool> cpu_stats_;
  // /proc/stat's busy and total jiffies at the last call.
  uint64_t busy_ = 0, total_ = 0;
};

// Lightning's ModelSummary: at the start of fit, rank 0 logs the table of
// the module's children (max_depth 1; -1: every submodule; 0: no table;
// the parameters no row counts in a row "other params") in Lightning 2.6's
// layout -- "  | Name | Type | Params | Mode", then the
// trainable, non-trainable and total parameter counts, the estimated size
// in MB at the precision's width and the modules in train and eval mode.
// Lightning's FLOPs column needs its FlopCounterMode and is left out.
// RichModelSummary is the same table. fit adds one unless
// trainer.enable_model_summary=false.
class ModelSummary : public Callback {
 public:
  explicit ModelSummary(int64_t max_depth = 1) : max_depth_(max_depth) {}
  std::string state_key() const override { return "ModelSummary"; }
  Status on_fit_start(Trainer& trainer, Module& module) override;

 private:
  int64_t max_depth_;
};

// The table ModelSummary logs, for `module` holding parameters of
// `bits_per_param` bits.
std::string SummarizeModel(const torch::nn::Module& module, int64_t max_depth,
                           int bits_per_param);

// Lightning's TQDMProgressBar on one line of stderr: the epoch, a bar over
// its batches and the last step's prog_bar metrics, redrawn at most every
// 100 ms and cleared at the end of the epoch. Silent unless stderr is a
// terminal. fit adds one unless trainer.enable_progress_bar=false (adding
// one then is an error, as in Lightning).
class ProgressBar : public Callback {
 public:
  // Redraw every refresh_rate batches (Lightning's TQDMProgressBar
  // refresh_rate; 0 draws nothing). Default: 1.
  explicit ProgressBar(int64_t refresh_rate = 1)
      : refresh_rate_(refresh_rate) {}
  std::string state_key() const override { return "ProgressBar"; }
  Status on_fit_start(Trainer& trainer, Module& module) override;
  Status on_train_batch_end(Trainer& trainer, Module& module,
                            int64_t batch_idx) override;
  Status on_train_epoch_end(Trainer& trainer, Module& module) override;
  void on_exception(Trainer& trainer, Module& module,
                    const Status& status) override;

 private:
  void Clear();
  int64_t refresh_rate_;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point last_drawn_{};
};

// Builds callbacks from a `callbacks:` map whose entries are null (off) or
// maps of options with Lightning's keyword names: model_checkpoint
// (ModelCheckpointOptions' fields; save_last also "link";
// train_time_interval a duration as trainer.max_time; every_n_epochs
// defaults to 0 when every_n_train_steps or train_time_interval is given,
// and the three exclude each other, as in Lightning), early_stopping
// (EarlyStoppingOptions' fields), lr_monitor (logging_interval,
// log_momentum, log_weight_decay), model_summary (max_depth), progress_bar
// (refresh_rate). InvalidArgument for unknown names or keys (with
// did-you-mean).
StatusOr<std::vector<std::shared_ptr<Callback>>> CallbacksFromConfig(
    const config::Node& callbacks);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_CALLBACKS_H_
