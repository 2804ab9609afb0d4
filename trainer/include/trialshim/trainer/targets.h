// The trainer's `_target_`s: optimizers, learning-rate schedulers and
// callbacks under the class paths Lightning/Hydra configs write, built on
// MakeOptimizer, MakeScheduler and CallbacksFromConfig (see
// config/instantiate.h for the registry and its semantics).
//
//   optimizers (made as torch::optim::Optimizer; keyword `params` is a
//   std::vector<torch::Tensor>, so configs write them as `_partial_: true`):
//     torch.optim.SGD | Adam | AdamW | RMSprop | Adagrad (also
//     torch.optim.<module>.<Class>), with PyTorch's keywords and default lr
//     (Adam/AdamW 1e-3, RMSprop/Adagrad 1e-2; SGD needs lr).
//   schedulers (made as LrScheduler; keyword `optimizer` is the
//   std::shared_ptr<torch::optim::Optimizer> an optimizer target made; the
//   scheduler keeps it alive):
//     torch.optim.lr_scheduler.StepLR (step_size, gamma),
//     ExponentialLR (gamma), CosineAnnealingLR (T_max, eta_min; it stays at
//     eta_min after T_max where PyTorch's rises again; eta_min needs every
//     param group at one lr), ReduceLROnPlateau (mode, factor, patience,
//     threshold, cooldown, min_lr; threshold_mode rel only). Lightning's
//     monitor and interval are not the scheduler's: set them in the
//     SchedulerConfig configure_optimizers returns.
//   trialshim.trainer.Scheduler (made as SchedulerConfig): scheduler.h's own
//     (name: step|exponential|cosine|plateau, interval, warmup, ...), which
//     takes the run's length as total_epochs / total_steps.
//   callbacks (made as Callback), as lightning.pytorch.callbacks.<Class>,
//   pytorch_lightning.callbacks.<Class> and the <module>.<Class> spellings,
//   with all of Lightning 2.6's keywords (callbacks.h):
//     ModelCheckpoint, EarlyStopping, LearningRateMonitor,
//     ModelSummary / RichModelSummary (max_depth; the same table),
//     TQDMProgressBar / RichProgressBar (refresh_rate; our ProgressBar).
//   loggers (made as Logger): CSVLogger and TensorBoardLogger as
//     lightning.pytorch.loggers.<Class> (see loggers.h, RegisterLoggerTargets).
// Every target also answers to its native name ("torch::optim::Adam",
// "trialshim::trainer::ModelCheckpoint").
//
// Lightning's and PyTorch's other keywords of these classes are accepted at
// their default value (or null) and refused otherwise, naming the keyword:
// a config written for Lightning instantiates unless it asks for a feature
// this trainer lacks. A null supported keyword means our default (so
// ModelCheckpoint's save_last: null saves last.ckpt, see callbacks.h).
#ifndef TRIALSHIM_TRAINER_TARGETS_H_
#define TRIALSHIM_TRAINER_TARGETS_H_

#include "trialshim/base/status.h"
#include "trialshim/config/instantiate.h"

namespace trialshim::trainer {

// Adds the targets above to `registry`; InvalidArgument if one of their
// names is taken already.
Status RegisterTrainerTargets(config::Registry* registry);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_TARGETS_H_
