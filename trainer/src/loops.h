// The loops of Trainer::fit, cut where Lightning cuts its own
// (lightning/pytorch/loops/): FitLoop runs epochs until a limit or a stop,
// TrainingEpochLoop runs one epoch's batches and its validation, and
// EvaluationLoop runs one pass over a validation or test loader (also for
// Trainer::validate and Trainer::test). Everything a checkpoint holds (the
// epoch, the position in it, the global step, the metrics) stays in the
// Trainer, so a checkpoint written from any loop resumes the same way; the
// loops hold only what one fit fixes before its first epoch. Private to the
// trainer library.
#ifndef TRIALSHIM_TRAINER_SRC_LOOPS_H_
#define TRIALSHIM_TRAINER_SRC_LOOPS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {

// What one fit iterates over, fixed before its first epoch.
struct FitPlan {
  std::shared_ptr<Loader> train;
  std::shared_ptr<Loader> val;  // may be null
  int64_t train_batches = 0;    // per epoch, after the limits
  int64_t val_batches = 0;
  // Lightning's val_check_batch: validate after every this many training
  // batches (within an epoch, or across epochs when
  // check_val_every_n_epoch is unset).
  int64_t val_check_batch = 1;
  bool dev_run = false;        // trainer.fast_dev_run
  bool checkpointing = false;  // enable_checkpointing and not a dev run
  bool step_scheduler = false;  // the scheduler steps per optimizer step
  // The hooks this rank calls, in order: user callbacks, then the
  // checkpoint callbacks (rank 0 only: the others would write the same
  // files).
  std::vector<std::shared_ptr<Callback>> callbacks;
};

// Lightning's _EvaluationLoop: `limit` batches of a loader under
// NoGradGuard, module.eval(), returning the stage's epoch metrics.
class Trainer::EvaluationLoop {
 public:
  EvaluationLoop(Trainer& trainer, Stage stage)
      : trainer_(trainer), stage_(stage) {}
  StatusOr<Metrics> run(Module& module, Loader& loader, int64_t limit);

 private:
  Trainer& trainer_;
  Stage stage_;
};

// Lightning's TrainingEpochLoop: one epoch from trainer.resume_batch_ on
// (optimizer steps, step schedulers, step logging, batch hooks, a stop on
// SIGTERM or max_steps), then the epoch's training means and validation.
class Trainer::TrainingEpochLoop {
 public:
  TrainingEpochLoop(Trainer& trainer, const FitPlan& plan)
      : trainer_(trainer), plan_(plan) {}
  // Cancelled after SIGTERM (last.ckpt written when checkpointing).
  Status run(Module& module);

  // Of the epoch run last.
  std::chrono::steady_clock::time_point started() const { return started_; }
  double train_seconds() const { return train_seconds_; }
  double train_samples() const { return train_samples_; }
  const Metrics& train_metrics() const { return train_metrics_; }
  bool validated() const { return validated_; }

 private:
  Status OnRunStart(Module& module);
  // One batch; `stepped` when it ended with an optimizer step.
  Status Advance(Module& module, int64_t batch_idx, bool* stepped);
  Status OnRunEnd(Module& module);
  // Whether validation is due after batch `b` of this epoch.
  bool ValDue(int64_t b) const;
  // A validation, its logging and on_validation_end; `mid_epoch` before
  // the epoch's last batch (then also the tuning report).
  Status Validate(Module& module, bool mid_epoch);

  Trainer& trainer_;
  const FitPlan& plan_;
  std::chrono::steady_clock::time_point started_;
  double train_seconds_ = 0;
  double train_samples_ = 0;
  Metrics train_metrics_;
  bool validated_ = false;
  // The last batch run was followed by a validation (val_check_interval).
  bool validated_last_batch_ = false;
};

// Lightning's FitLoop: sets the fit up (strategy, data, limits, optimizer,
// callbacks, resume, seed, sanity check), runs TrainingEpochLoop per epoch
// and ends it (epoch schedulers, epoch hooks, the tuning report, the final
// model).
class Trainer::FitLoop {
 public:
  explicit FitLoop(Trainer& trainer) : trainer_(trainer) {}
  Status run(Module& module, DataModule& data);

 private:
  Status SetupData(Module& module, DataModule& data);
  Status SetLimits();
  Status OnRunStart(Module& module);
  Status ConfigureCallbacks();
  Status OnFitStart(Module& module);
  bool Done() const;
  Status OnAdvanceEnd(Module& module, const TrainingEpochLoop& epoch);
  void LogEpoch(const TrainingEpochLoop& epoch) const;
  Status OnRunEnd(Module& module);
  // Whether validation is due after batch `b` of this epoch.
  bool ValDue(int64_t b) const;
  // A validation, its logging and on_validation_end; `mid_epoch` before
  // the epoch's last batch (then also the tuning report).
  Status Validate(Module& module, bool mid_epoch);

  Trainer& trainer_;
  FitPlan plan_;
};

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_SRC_LOOPS_H_
