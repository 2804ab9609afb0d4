// The trainer in a task run by trialshim::app::Run: what every such task
// would otherwise repeat (docs/cpp-apps.md).
#ifndef TRIALSHIM_TRAINER_APP_H_
#define TRIALSHIM_TRAINER_APP_H_

#include <functional>
#include <memory>
#include <optional>

#include "trialshim/app/app.h"
#include "trialshim/app/logging.h"
#include "trialshim/config/instantiate.h"
#include "trialshim/config/schema.h"
#include "trialshim/trainer/trainer.h"

namespace spdlog {
class logger;
}

namespace trialshim::trainer {

// The top level of a training app's config, laid out as
// lightning-hydra-template's configs/train.yaml: the groups (each a node its
// _target_ builds), the template's own keys, and ours (hypertune). Bound
// with TrainConfigSchema() (or given to AppOptions::schema through
// app::SchemaOf), a mistyped top-level key is refused with did-you-mean
// before anything runs.
struct TrainConfig {
  std::optional<int64_t> seed;  // null: not seeded
  config::Node data, model, optimizer, scheduler, trainer, callbacks, logger,
      hypertune;
  config::Node paths, task_name, tags, train, test, ckpt_path, extras,
      optimized_metric;
};
const config::Schema<TrainConfig>& TrainConfigSchema();

// A Trainer for the job: options from the config's `trainer:` (and
// `hypertune:`) nodes, the run directory as default_root_dir unless given,
// the app's log (Hydra's layout), a callback for each non-null entry of
// `callbacks:`, and the loggers, all instantiated from `registry` by their
// _target_. Loggers come from a top-level `logger:` map of named logger
// nodes (lightning-hydra-template's logger/ group; null entries skipped, an
// empty map means none), else from `trainer.logger` (true, false, a logger
// node or a list of them); neither: the default loggers (loggers.h). The
// job's config is the run's identity (TrainerOptions::run_config).
StatusOr<std::unique_ptr<Trainer>> MakeTrainer(const app::Job& job,
                                               const config::Registry& registry);

// A module's optimizer and scheduler as the config's partials, the way
// lightning-hydra-template modules take them: `optimizer` (a torch.optim
// target) and `scheduler` (null or absent: none).
struct OptimizerPartials {
  config::Partial optimizer;
  std::optional<config::Partial> scheduler;

  // Instantiates the top-level `optimizer` and `scheduler` of `cfg`.
  static StatusOr<OptimizerPartials> FromConfig(const config::Node& cfg,
                                                const config::Registry& registry);
  // What Module::configure_optimizers returns: the optimizer called with the
  // module's parameters, then the scheduler with that optimizer and the
  // run's length (total_epochs, total_steps).
  StatusOr<OptimizerConfig> Configure(const Module& module) const;
};

// The task's exit code for `fit`: 0; 128+N after SIGTERM/SIGINT/SIGHUP (the
// checkpoint is written; logged as a warning); otherwise the error, on
// stderr as Hydra reports the exception a Python fit raises
// (app::Job::Fail), as ExitCodeFor (2 for a config error). A c10::Error
// thrown is a runtime failure.
int ExitCodeOf(const app::Job& job, const std::function<Status()>& fit);

// The job's return value as lightning-hydra-template's train.py returns
// its metric (utils.get_metric_value): the trainer's callback metric named
// by the config's optimized_metric (app::Job::set_return_value), which a
// multirun with hydra/sweeper: optuna takes as the trial's objective, and
// "Retrieved metric value! <name=value>" logged. Without optimized_metric
// (null or absent) nothing is returned, silently (the template logs that it
// skips). A list of names (several hydra.sweeper.direction) returns the
// list of their values, in its order, each looked up and logged as the
// template does one. InvalidArgument with the template's message when no
// metric of a name was logged.
Status ReturnOptimizedMetric(const app::Job& job, const Trainer& trainer);

// A spdlog logger whose lines go to `log` (which must outlive it) at the
// matching level; set it as TrainerOptions::console.
std::shared_ptr<spdlog::logger> SpdlogFor(app::Logger* log);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_APP_H_
