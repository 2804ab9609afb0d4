// TrainerOptions: every knob of the Trainer, with Lightning's names.
//
// Each field has a documented default and a chainable setter in the LibTorch
// style (`TrainerOptions().max_epochs(20).seed(7)`); the getter has the same
// name. FromConfig reads the composed and resolved `trainer:` node of a Hydra
// config with Lightning's key names, checking every type, and refuses unknown
// keys with the nearest known one ("did you mean 'max_epochs'?"), so a typo
// in a tuning job fails on its first trial instead of being silently ignored.
//
// Every Lightning 2.x Trainer argument is a known key (checked against
// lightning/pytorch/trainer/trainer.py of Lightning 2.6.2): those this
// trainer implements are read with Lightning's defaults and spellings;
// those it does not (profiler, plugins, sync_batchnorm, ...) are accepted
// at their default or null and refused otherwise, saying why; none is
// ever "unknown". A `_target_` naming Lightning's Trainer class
// (lightning.pytorch.Trainer, pytorch_lightning.Trainer and their
// .trainer.Trainer spellings) is accepted and dropped.
//
// This header does not include LibTorch, so a program can read and check its
// options without paying for the torch headers.
#ifndef TRIALSHIM_TRAINER_OPTIONS_H_
#define TRIALSHIM_TRAINER_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace spdlog {
class logger;
}

namespace trialshim::trainer {

class Logger;

// Declares a field `name_` with getter `name()` and chainable setter
// `name(value)`, the way LibTorch's TORCH_ARG does for its options.
#define TRIALSHIM_ARG(T, name)                             \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
                                                           \
 private:                                                  \
  T name##_

// How many batches of an epoch to use: a fraction of them (Lightning's float)
// or a fixed count (Lightning's int).
struct BatchLimit {
  bool is_fraction = true;
  double fraction = 1.0;
  int64_t count = 0;

  static BatchLimit Fraction(double f) { return BatchLimit{true, f, 0}; }
  static BatchLimit Count(int64_t n) { return BatchLimit{false, 1.0, n}; }
  // The number of batches to use out of `available`.
  int64_t Apply(int64_t available) const;
};

// Lightning's Trainer(logger=...): true (the default loggers, see
// DefaultLoggers in loggers.h), false or [] (none), or these loggers. From a
// config, `trainer.logger` may also hold logger nodes (`_target_: ...`, one
// or a list): FromConfig keeps them in `config` and MakeTrainer (app.h)
// instantiates them through the registry.
struct LoggerOption {
  LoggerOption(bool on = true) : enabled(on) {}  // NOLINT: implicit
  LoggerOption(std::shared_ptr<Logger> logger)   // NOLINT: implicit
      : loggers{std::move(logger)} {}
  LoggerOption(std::vector<std::shared_ptr<Logger>> list)  // NOLINT: implicit
      : loggers(std::move(list)) {}
  LoggerOption(std::initializer_list<std::shared_ptr<Logger>> list)
      : loggers(list) {}

  // false: no logger at all.
  bool enabled = true;
  // Empty with `enabled`: the default loggers.
  std::vector<std::shared_ptr<Logger>> loggers;
  // The `trainer.logger` node(s) still to instantiate (null: none).
  config::Node config;
};

class TrainerOptions {
 public:
  TrainerOptions();

  // Reads a resolved `trainer:` map (and optionally the `hypertune:` map:
  // `monitor`, `tag`). Missing keys keep their defaults; a null value also
  // means the default. InvalidArgument names the key ("trainer.max_epochs"),
  // its file:line:col when known, what was expected and what was found.
  static StatusOr<TrainerOptions> FromConfig(
      const config::Node& trainer, const config::Node* hypertune = nullptr);

  // The keys FromConfig accepts under `trainer:`, in documentation order.
  static const std::vector<std::string>& ConfigKeys();

  // Stop after this many epochs. -1: no epoch limit. Unset (null), as
  // Lightning's _parse_loop_limits: 1000 when max_steps is -1 and max_time
  // is unset, else no epoch limit. Default: unset.
  TRIALSHIM_ARG(std::optional<int64_t>, max_epochs);
  // Stop after this many optimizer steps. -1: unlimited. Default: -1.
  TRIALSHIM_ARG(int64_t, max_steps) = -1;
  // EarlyStopping (any should_stop) can not stop before this many epochs.
  // Default: 0.
  TRIALSHIM_ARG(int64_t, min_epochs) = 0;
  // ... nor before this many optimizer steps. -1: none. Default: -1.
  TRIALSHIM_ARG(int64_t, min_steps) = -1;
  // Stop (as a should_stop, after the current step) once this many
  // seconds of fitting have passed, counted across resumes as Lightning's
  // Timer does. Config: "DD:HH:MM:SS" or a map of days, hours, minutes,
  // seconds, milliseconds, microseconds, weeks. -1: none. Default: -1.
  TRIALSHIM_ARG(double, max_time) = -1;
  // Validate in every n-th training epoch; unset (config null): count
  // val_check_interval's batches across epochs, which must then be a
  // count (as Lightning). Default: 1.
  TRIALSHIM_ARG(std::optional<int64_t>, check_val_every_n_epoch) = 1;
  // Validate after every this many training batches (a count) or this
  // fraction of an epoch's batches (a float; 1.0: at the epoch's end), as
  // Lightning's val_check_interval. A validation before the epoch's end
  // also runs EarlyStopping, ModelCheckpoint (saving there, as Lightning
  // does then) and the tuning report. Default: fraction 1.0.
  TRIALSHIM_ARG(BatchLimit, val_check_interval);
  // Training batches used per epoch. Default: all (fraction 1.0).
  TRIALSHIM_ARG(BatchLimit, limit_train_batches);
  // Validation batches used per validation. Default: all (fraction 1.0).
  TRIALSHIM_ARG(BatchLimit, limit_val_batches);
  // Test batches used by test(). Default: all (fraction 1.0).
  TRIALSHIM_ARG(BatchLimit, limit_test_batches);
  // "32-true", "64-true" (module and floating batch tensors in double),
  // "bf16-true" (in bfloat16), "bf16-mixed" (the steps under autocast to
  // bfloat16, as torch.autocast(device_type)), and on CUDA "16-mixed"
  // (autocast to float16 with a gradient scaler, as Lightning's
  // MixedPrecision("16-mixed")) and "16-true" (in float16). Config also
  // takes Lightning's short spellings 32, 64, 16, "bf16". Default: "32-true".
  TRIALSHIM_ARG(std::string, precision) = "32-true";
  // Gradient clipping threshold; 0 turns clipping off. Default: 0.
  TRIALSHIM_ARG(double, gradient_clip_val) = 0.0;
  // "norm" (clip the total 2-norm) or "value" (clamp each element).
  // Default: "norm".
  TRIALSHIM_ARG(std::string, gradient_clip_algorithm) = "norm";
  // Accumulate gradients over this many batches per optimizer step; each
  // batch's loss is divided by it, as Lightning does. Default: 1.
  TRIALSHIM_ARG(int64_t, accumulate_grad_batches) = 1;
  // Deterministic algorithms only, one intra-op thread and a stable
  // shuffle, so a resumed run ends exactly like an uninterrupted one.
  // Default: false.
  // Config: true, false or "warn" (deterministic_warn_only).
  TRIALSHIM_ARG(bool, deterministic) = false;
  // With deterministic: an op without a deterministic implementation warns
  // instead of failing (Lightning's deterministic="warn"). Default: false.
  TRIALSHIM_ARG(bool, deterministic_warn_only) = false;
  // cuDNN's autotuner (on CUDA; no effect on CPU). Default: false.
  TRIALSHIM_ARG(bool, benchmark) = false;
  // Evaluation under c10::InferenceMode (true) or NoGradGuard (false).
  // Default: true.
  TRIALSHIM_ARG(bool, inference_mode) = true;
  // Autograd anomaly detection (slow; names the op that made a NaN).
  // Default: false.
  TRIALSHIM_ARG(bool, detect_anomaly) = false;
  // Run only this many train and val batches for one epoch, without
  // checkpoints, resume or tuning reports: a smoke test. 0: off. Default: 0.
  TRIALSHIM_ARG(int64_t, fast_dev_run) = 0;
  // Validation batches run before training to catch bugs early; their
  // metrics are discarded. -1: all of them. Default: 2.
  TRIALSHIM_ARG(int64_t, num_sanity_val_steps) = 2;
  // Write on_step metrics to metrics.csv every n optimizer steps. Default: 50.
  TRIALSHIM_ARG(int64_t, log_every_n_steps) = 50;
  // A progress bar on a terminal (one line per epoch otherwise): fit adds
  // a ProgressBar callback when none is given. Default: true.
  TRIALSHIM_ARG(bool, enable_progress_bar) = true;
  // Checkpoints: a ModelCheckpoint is added when none is given, resume
  // looks for checkpoints at start, and SIGTERM saves one. Default: true.
  TRIALSHIM_ARG(bool, enable_checkpointing) = true;
  // Print Lightning's model summary table at the start of fit: fit adds a
  // ModelSummary callback when none is given. Default: true.
  TRIALSHIM_ARG(bool, enable_model_summary) = true;
  // Where metrics.csv, the default checkpoint directory and the final model
  // go. "": the current directory. Default: "".
  TRIALSHIM_ARG(std::string, default_root_dir) = "";
  // Seed for every random generator (torch, the data shuffle). -1: not
  // seeded (a random seed is drawn and logged). Default: -1.
  TRIALSHIM_ARG(int64_t, seed) = -1;
  // Threads for LibTorch's intra-op pool and for OpenBLAS together. 0: 1,
  // which beat 2 threads at every batch size measured (bench/README.md,
  // trainer). Default: 0.
  TRIALSHIM_ARG(int64_t, num_threads) = 0;
  // "auto" (CUDA when LibTorch has it and a device is present), "cpu" or
  // "cuda" (an error without one; config "gpu" is "cuda"). Lightning's
  // mps, tpu, hpu and ipu are refused: not available in this build.
  // Default: "auto".
  TRIALSHIM_ARG(std::string, accelerator) = "auto";
  // On a non-finite loss or gradient: "error" stops with a message naming
  // the step and learning rate; "skip" drops the step and carries on.
  // Default: "error".
  TRIALSHIM_ARG(std::string, on_nonfinite) = "error";
  // Checkpoint to resume from. "" (config null): the newest valid
  // checkpoint in the checkpoint directory (none is fine; unlike Lightning,
  // whose null starts fresh, so a preempted trial resumes); "none": never
  // resume; "last": the checkpoint directory's last.ckpt (none: start
  // fresh, as Lightning); "best": the best ranked checkpoint that last.ckpt
  // names (an error when there is none, as Lightning); else a path (gs://
  // URIs map to /gcs/). Default: "".
  TRIALSHIM_ARG(std::string, ckpt_path) = "";
  // The settings that define the run (the composed config; MakeTrainer
  // sets the job's): recorded in every checkpoint, and a checkpoint of the
  // checkpoint directory whose settings differ (another run's, say a
  // second multirun into the same sweep directory) is kept aside
  // ("<name>.other-run-N", named at WARNING with what differs) and never
  // resumed. Keys that may differ on a resume, such as trainer.max_epochs,
  // are left out (trainer/src/run_identity.h). A checkpoint that
  // trainer.ckpt_path names is resumed anyway, with that WARNING. Null:
  // the module's hparams(). Default: null.
  TRIALSHIM_ARG(config::Node, run_config);
  // Checkpoint directory. "": $AIP_CHECKPOINT_DIR (gs:// mapped to /gcs/)
  // when set, else <default_root_dir>/checkpoints. Default: "".
  TRIALSHIM_ARG(std::string, checkpoint_dir) = "";
  // Directory for the final model. "": $AIP_MODEL_DIR (gs:// mapped) when
  // set, else default_root_dir. Default: "".
  TRIALSHIM_ARG(std::string, model_dir) = "";
  // The logged metrics reported to the tuning service after each
  // validation, in order, one cloudml-hypertune report each (a study with
  // several metricSpecs needs each of them reported; `hypertune.monitor`
  // is a name or a list of names). Empty reports nothing. Default: {}.
  TRIALSHIM_ARG(std::vector<std::string>, hypertune_monitor) = {};
  // The tags they are reported under, one per monitor (empty: each
  // monitor's own name). Default: {}.
  TRIALSHIM_ARG(std::vector<std::string>, hypertune_tag) = {};
  // Catch SIGTERM, SIGINT and SIGHUP during fit: finish the step,
  // checkpoint, return Cancelled (the program exits 128 + StopSignal(), 143
  // for SIGTERM). Default: true.
  TRIALSHIM_ARG(bool, handle_sigterm) = true;
  // "auto": data-parallel ("ddp") when the environment describes several
  // ranks (WORLD_SIZE > 1, as `trialshim launch` and the shim's CLUSTER_SPEC
  // translation export), else one process. "ddp": c10d data parallelism
  // across the ranks of MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK (WORLD_SIZE
  // must be set; 1 is allowed). "single_device": one process; an error
  // under WORLD_SIZE > 1, where every rank would write the same files.
  // Default: "auto".
  TRIALSHIM_ARG(std::string, strategy) = "auto";
  // Devices, one process each, on this machine, as Lightning's devices:
  // N, -1 (every CUDA device; one process on the CPU) or, through
  // device_ids, a list of CUDA device indices. Without a launcher
  // (LOCAL_RANK unset) a fit with N > 1 starts the other N - 1 processes
  // itself, as Lightning's DDP launcher does (launch_command); under a
  // launcher (`trialshim launch`, torchrun) N must equal LOCAL_WORLD_SIZE.
  // Default: -1 ("auto").
  TRIALSHIM_ARG(int64_t, devices) = -1;
  // trainer.devices as a list: the CUDA devices, by index, that local rank
  // 0, 1, ... use. Empty: devices 0 .. N-1. Default: empty.
  TRIALSHIM_ARG(std::vector<int64_t>, device_ids);
  // The command that starts local rank N (1 .. devices-1) of `devices`,
  // run with LOCAL_RANK, RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK,
  // MASTER_ADDR and MASTER_PORT set. Unset: this process's own command
  // line (/proc/self/cmdline); MakeTrainer (app.h) sets the job's overrides
  // pinned to its run directory, as Lightning does for Hydra apps.
  // Default: unset.
  TRIALSHIM_ARG(std::function<std::vector<std::string>(int64_t)>,
                launch_command);
  // torch.set_float32_matmul_precision: "highest" (float32 throughout),
  // "high" (TF32 tensor cores on CUDA) or "medium" (bfloat16 inside); ""
  // leaves LibTorch's setting ("highest"). Not a Lightning argument: a
  // Lightning script calls torch.set_float32_matmul_precision. Default: "".
  TRIALSHIM_ARG(std::string, float32_matmul_precision) = "";
  // Machines: with N > 1, WORLD_SIZE must be N times the processes per
  // machine (LOCAL_WORLD_SIZE), as the launcher set it. Default: 1.
  TRIALSHIM_ARG(int64_t, num_nodes) = 1;
  // Where the trainer's messages go (Lightning's console output; named
  // `console` because `logger` is Lightning's metrics logger, below).
  // Default: spdlog's default logger.
  TRIALSHIM_ARG(std::shared_ptr<spdlog::logger>, console);
  // Where logged metrics and hyperparameters go (see LoggerOption).
  // Default: true.
  TRIALSHIM_ARG(LoggerOption, logger);
};

// Seconds of a Lightning duration (max_time, train_time_interval):
// "DD:HH:MM:SS" or a map of datetime.timedelta's keywords. InvalidArgument
// names `key` (the full key, "trainer.max_time").
Status ParseDuration(const config::Node& node, const std::string& key,
                     double* seconds);

// Maps a Cloud Storage URI to its Cloud Storage FUSE path, as Vertex mounts
// it ("gs://b/p" -> "/gcs/b/p"); other paths are returned unchanged.
std::string MapGcsUri(const std::string& path);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_OPTIONS_H_
