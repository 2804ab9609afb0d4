#include "multirun.h"

#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "run_job.h"
#include "trialshim/base/file.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/sweepers.h"
#include "trialshim/config/emit.h"

namespace trialshim::app::internal {
namespace {

using config::HydraScope;
using config::Node;

// Hydra's own sweeper and launcher are the ones a multirun here has.
Status CheckPlugins(const config::ComposeResult& master) {
  const Node* choices = master.hydra.Find("runtime.choices");
  auto choice = [&](const char* group) {
    const Node* c = choices ? choices->Get(group) : nullptr;
    return c && c->is_string() ? c->AsString() : std::string("basic");
  };
  if (std::string sweeper = choice("hydra/sweeper"); sweeper != "basic") {
    return Status::InvalidArgument(
        "hydra/sweeper=" + sweeper +
        ": a trialshim app's multirun has Hydra's basic sweeper only (the " +
        (sweeper == "optuna" ? std::string("Optuna sweeper, hydra-optuna-") +
                                   "sweeper's search, is not in trialshim "
                                   "apps yet"
                             : "'" + sweeper + "' sweeper is a Python plugin") +
        ")");
  }
  if (std::string launcher = choice("hydra/launcher"); launcher != "basic") {
    return Status::InvalidArgument(
        "hydra/launcher=" + launcher +
        ": a trialshim app's multirun runs its jobs one after another, as "
        "Hydra's basic launcher does; the '" +
        launcher + "' launcher is a Python plugin");
  }
  return Status::Ok();
}

StatusOr<std::optional<int64_t>> MaxBatchSize(
    const config::ComposeResult& master, NowCache* now) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      Node n, config::ResolveHydra(master, "sweeper.max_batch_size", false,
                                   HydraScope::kHydraOnly, now));
  if (n.is_int()) return std::optional<int64_t>(n.AsInt());
  return std::optional<int64_t>();
}

// The launcher's logger: hydra_logging alone, as BasicLauncher configures it.
StatusOr<std::unique_ptr<Logger>> LauncherLog(
    const config::ComposeResult& master, NowCache* now) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      Node logging, config::ResolveHydra(master, "hydra_logging", false,
                                         HydraScope::kWholeConfig, now));
  TRIALSHIM_ASSIGN_OR_RETURN(
      Node verbose, config::ResolveHydra(master, "verbose", false,
                                         HydraScope::kWholeConfig, now));
  return Logger::FromConfig(logging, Node(), verbose,
                            "hydra._internal.core_plugins.basic_launcher");
}

// Hydra's load_sweep_config: the job's overrides after the multirun's own
// Hydra overrides, composed as a run; then the job's id and num.
StatusOr<config::ComposeResult> ComposeSweepJob(
    const config::ComposeRequest& request, const config::ComposeResult& master,
    const std::vector<std::string>& job, size_t idx) {
  config::ComposeRequest r = request;
  r.mode = config::ComposeMode::kRun;
  r.overrides.clear();
  for (const Node& o : master.hydra.Find("overrides.hydra")->AsList()) {
    r.overrides.push_back(o.AsString());
  }
  r.overrides.insert(r.overrides.end(), job.begin(), job.end());
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed, ComposeJob(r));
  Node* job_node = composed.hydra.FindMutable("job");
  job_node->Set("id", Node::String(std::to_string(idx)));  // JobConf.id: str
  job_node->Set("num", Node::Int(static_cast<int64_t>(idx)));
  return composed;
}

// Python's " ".join(filter_overrides(overrides)): without hydra.* ones.
std::string JobLine(const std::vector<std::string>& job) {
  std::vector<std::string> shown;
  for (const std::string& o : job) {
    if (!StartsWith(o, "hydra.")) shown.push_back(o);
  }
  return JoinStrings(shown, " ");
}

bool StoppedBySignal(int code) {
  return code == 128 + SIGINT || code == 128 + SIGTERM || code == 128 + SIGHUP;
}

}  // namespace

StatusOr<int> Multirun(config::ComposeRequest request, bool add_mode,
                       const Task& task,
                       const std::function<void(const std::string&)>& report) {
  if (add_mode) request.overrides.push_back("hydra.mode=MULTIRUN");
  request.mode = config::ComposeMode::kMultirun;
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult master,
                             ComposeJob(request));
  NowCache now;  // every job sees the multirun's times (Hydra's copy_cache)
  TRIALSHIM_RETURN_IF_ERROR(LogHydraDebug(master, &now));
  TRIALSHIM_RETURN_IF_ERROR(CheckPlugins(master));
  TRIALSHIM_ASSIGN_OR_RETURN(
      Node params, config::ResolveHydra(master, "sweeper.params", false,
                                        HydraScope::kWholeConfig, &now));
  std::vector<std::string> task_overrides;
  for (const Node& o : master.hydra.Find("overrides.task")->AsList()) {
    task_overrides.push_back(o.AsString());
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> sweep,
                             config::SweeperParamsOverrides(params));
  sweep.insert(sweep.end(), task_overrides.begin(), task_overrides.end());
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::vector<config::BasicSweepAxis> axes,
      config::ReadBasicSweep(sweep, &master.repository, &params));
  std::vector<std::vector<std::string>> jobs = config::BasicSweepJobs(axes);
  TRIALSHIM_ASSIGN_OR_RETURN(std::optional<int64_t> max_batch,
                             MaxBatchSize(master, &now));
  TRIALSHIM_ASSIGN_OR_RETURN(std::string sweep_dir,
                             JobDir(master, "sweep.dir", "", &now));
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(sweep_dir));
  TRIALSHIM_RETURN_IF_ERROR(WriteFileDurably(
      sweep_dir + "/multirun.yaml",
      config::ToYaml(config::ConfigView(master, "all"))));
  TRIALSHIM_ASSIGN_OR_RETURN(std::unique_ptr<Logger> log,
                             LauncherLog(master, &now));
  size_t idx = 0;
  for (const auto& batch :
       config::SplitIntoBatches(std::move(jobs), max_batch)) {
    std::vector<config::ComposeResult> composed;
    for (size_t i = 0; i < batch.size(); ++i) {
      TRIALSHIM_ASSIGN_OR_RETURN(
          config::ComposeResult c,
          ComposeSweepJob(request, master, batch[i], idx + i));
      composed.push_back(std::move(c));
    }
    log->Info("Launching " + std::to_string(batch.size()) + " jobs locally");
    int failed = 0;
    for (size_t i = 0; i < batch.size(); ++i, ++idx) {
      std::cout.flush();
      log->Info("\t#" + std::to_string(idx) + " : " + JobLine(batch[i]));
      TRIALSHIM_ASSIGN_OR_RETURN(
          std::string output_dir,
          JobDir(composed[i], "sweep.dir", "sweep.subdir", &now));
      TRIALSHIM_ASSIGN_OR_RETURN(
          int code, RunJob(std::move(composed[i]), output_dir, &now, task));
      std::cout.flush();
      if (code == 0) continue;
      report("job #" + std::to_string(idx) + " with overrides " +
             PythonList(batch[i]) + " exited with code " +
             std::to_string(code));
      if (StoppedBySignal(code)) return code;
      if (failed == 0) failed = code;
    }
    if (failed != 0) return failed;
  }
  return 0;
}

}  // namespace trialshim::app::internal
