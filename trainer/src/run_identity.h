// What makes a checkpoint this run's (private to the trainer).
//
// A checkpoint directory outlives the run that wrote it: a second multirun
// into the same hydra.sweep.dir, a run into an old hydra.run.dir or a
// reused AIP_CHECKPOINT_DIR finds the first run's checkpoints. Resuming one
// of those trains nothing and reports the other run's metric under this
// run's parameters. So every checkpoint records the settings that define
// its run (the "run" entry of the Trainer's state), and the Trainer resumes
// only a checkpoint whose settings equal its own (trainer.cc, Resume).
//
// The settings are the composed config (TrainerOptions::run_config, which
// MakeTrainer sets to the job's config; else the module's hparams()),
// flattened to "dotted.key" -> its value as one line of JSON, without the
// keys that may differ on a resume (MayDifferOnResume), and the world size
// (the global batch and each rank's shard depend on it). The run directory
// inside a value is written "${run_dir}": a restarted Vertex trial gets a
// new hydra.run.dir (a new ${now:...}) but resumes from the same
// AIP_CHECKPOINT_DIR, and is the same run. Mirrors
// examples/vertex/train.py, whose checkpoints record the same.
#ifndef TRIALSHIM_TRAINER_SRC_RUN_IDENTITY_H_
#define TRIALSHIM_TRAINER_SRC_RUN_IDENTITY_H_

#include <nlohmann/json.hpp>
#include <string>

#include "trialshim/config/node.h"

namespace trialshim::trainer {

class Module;
class TrainerOptions;

namespace internal {

// Whether the dotted `key` may differ between a run and the run that resumes
// its checkpoint: how long it runs (trainer.max_epochs, max_steps,
// max_time, ...), which checkpoint it resumes and where it writes
// (ckpt_path, checkpoint_dir, default_root_dir, model_dir, paths.*), when
// it stops and what it saves and logs (callbacks.*, trainer.callbacks:
// they change no step, and their state is the checkpoint's), how it is
// watched and reported (loggers, the progress bar, log_every_n_steps,
// hypertune.*, optimized_metric, tags, extras), and the hardware
// (accelerator, devices, strategy, num_nodes, num_threads, benchmark,
// deterministic, detect_anomaly: what they change of the math is the world
// size, recorded apart; the rest changes how, not what, is computed).
// Everything else (model, optimizer, scheduler, data, seed, precision, the
// other trainer.* keys such as accumulate_grad_batches or
// gradient_clip_val) defines the run.
bool MayDifferOnResume(const std::string& key);

// {"settings": {"dotted.key": "<value as one line of JSON>", ...},
//  "world_size": N}: `settings` (a map; null or a scalar: none) flattened,
// list items numbered ("tags.0"), without the keys that may differ, with
// `run_dir` (an absolute path; "" for none) in a string written
// "${run_dir}".
nlohmann::json RunIdentity(const config::Node& settings, int world_size,
                           const std::string& run_dir = "");

// The identity of the run `options` (run_config, else `module`'s hparams;
// its default_root_dir the run directory) describes on `world_size` ranks.
nlohmann::json RunIdentityOf(const TrainerOptions& options,
                             const Module& module, int world_size);

// How the run recorded in a checkpoint's trainer `state` ("run") differs
// from `ours`: "" when it is the same run; else the differing keys, sorted,
// at most `max_shown` of them ("optimizer.lr: 0.01 there, 0.001 here;
// model.dropout: absent there, 0.2 here; and 3 more"), each value cut to
// 80 characters. A checkpoint that records no run (written by a trainer
// before this check) is another run's: it can not be shown to be ours.
std::string RunDifferences(const nlohmann::json& state,
                           const nlohmann::json& ours, size_t max_shown = 4);

}  // namespace internal
}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_SRC_RUN_IDENTITY_H_
