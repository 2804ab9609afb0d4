// An app's multirun (private to the app library), as Hydra 1.3.2's
// Hydra.multirun with its basic sweeper and basic launcher runs one: the
// multirun's config composed without the sweeps (config::ComposeMode::
// kMultirun) and saved as <hydra.sweep.dir>/multirun.yaml; the jobs from
// hydra.sweeper.params and the command line's overrides
// (config::BasicSweepJobs), in batches of hydra.sweeper.max_batch_size; each
// batch composed whole before any of its jobs runs (Hydra's
// validate_batch_is_legal); its jobs run one after another in this process
// (run_job.h) with hydra.job.id and hydra.job.num, in
// <hydra.sweep.dir>/<hydra.sweep.subdir>, all seeing the multirun's
// ${now:...} times; "Launching N jobs locally" and "#N : overrides" logged
// through hydra_logging. A job that fails (a non-zero exit) lets the rest of
// its batch run and then ends the multirun with its exit code, as Hydra
// raises a failed job's error after the batch; one stopped by a signal
// (128+SIGINT, SIGTERM or SIGHUP, the trainer's code after it checkpoints)
// ends it at once, as KeyboardInterrupt ends Hydra's. The sweep directory
// is locked while the multirun runs (base/lock.h, its ".trialshim.lock"),
// so a second multirun into it is refused (kUnavailable, exit 1, naming
// the first) as a second `trialshim sweep` on one --out is.
//
// With hydra/sweeper: optuna (hydra.sweeper._target_ the plugin's), as
// hydra-optuna-sweeper 1.2.0's sweep runs one, its study run by
// trialshim's search engine (tuning/optuna_study.h): no multirun.yaml (the
// plugin writes none); the plugin's lines ("Study name: ...") through
// hydra_logging; batches of n_jobs trials, each job composed at its turn
// (the plugin does not validate a batch first), launched as above; each
// job's Job::return_value told to the study (one it can not take ends the
// multirun, naming the job); then <hydra.sweep.dir>/optimization_results.
// yaml and the best trial's lines. docs/hydra-sweep-to-vertex.md says what
// differs from the plugin.
//
// Other sweepers and launchers (joblib, submitit) are Python plugins:
// refused, naming them.
#ifndef TRIALSHIM_APP_SRC_MULTIRUN_H_
#define TRIALSHIM_APP_SRC_MULTIRUN_H_

#include <functional>
#include <string>

#include "trialshim/app/app.h"
#include "trialshim/base/status.h"
#include "trialshim/config/compose.h"

namespace trialshim::app::internal {

// `request` is the app's (mode kRun, overrides as given); `add_mode`: append
// hydra.mode=MULTIRUN, as Hydra does unless the configs set the mode.
// `report` receives what goes to stderr (a failed job, the mode warning).
StatusOr<int> Multirun(config::ComposeRequest request, bool add_mode,
                       const Task& task,
                       const std::function<void(const std::string&)>& report);

}  // namespace trialshim::app::internal

#endif  // TRIALSHIM_APP_SRC_MULTIRUN_H_
