// One job of an app, as Hydra 1.3.2's run_job runs it (private to the app
// library): used for a run (hydra.run.dir) and for each job of a multirun
// (hydra.sweep.dir/hydra.sweep.subdir).
#ifndef TRIALSHIM_APP_SRC_RUN_JOB_H_
#define TRIALSHIM_APP_SRC_RUN_JOB_H_

#include <map>
#include <string>
#include <vector>

#include "trialshim/app/app.h"
#include "trialshim/base/status.h"
#include "trialshim/config/compose.h"

namespace trialshim::app::internal {

// Python's repr() of a list of strings: ['a=1', 'b=2'].
std::string PythonList(const std::vector<std::string>& items);

// ${now:...} values shared by the resolutions of one run or multirun
// (config::ResolveOptions::now).
using NowCache = std::map<std::string, config::Node>;

// A job's config, composed as a run composes it. Hydra's colorlog plugin is
// Python (lightning-hydra-template overrides both logging groups with it):
// its options log as Hydra's default configs do, without colours, under
// what the app's configs set, and `warnings` says so.
StatusOr<config::ComposeResult> ComposeJob(config::ComposeRequest request);

// hydra.<key> ("run.dir", "sweep.dir") resolved as Hydra reads it (in the
// whole config: ${now:...}, ${hydra.job.name}, the task's keys), as a path;
// `subdir_key` ("sweep.subdir"), if not empty, appended. Made absolute.
StatusOr<std::string> JobDir(const config::ComposeResult& composed,
                             const std::string& key,
                             const std::string& subdir_key, NowCache* now);

// Under hydra.verbose (for Hydra's own logger) Hydra logs its --info all
// through hydra_logging alone, before a job's logging replaces it.
Status LogHydraDebug(const config::ComposeResult& composed, NowCache* now);

// run_job: hydra.runtime.output_dir set to `output_dir`, the directory and
// its .hydra files, hydra.job.env_set and hydra.job.chdir for the task's
// time (both undone after it, as Hydra undoes them), the job's log, then
// the task. Its exit code; a task that throws is logged as Hydra logs it
// and gives 1. `return_value`, if given, receives Job::return_value().
StatusOr<int> RunJob(config::ComposeResult composed,
                     const std::string& output_dir, NowCache* now,
                     const Task& task, config::Node* return_value = nullptr);

}  // namespace trialshim::app::internal

#endif  // TRIALSHIM_APP_SRC_RUN_JOB_H_
