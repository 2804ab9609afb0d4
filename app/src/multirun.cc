#include "multirun.h"

#include <algorithm>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "run_job.h"
#include "trialshim/base/file.h"
#include "trialshim/base/lock.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/sweepers.h"
#include "trialshim/search/optuna_study.h"

namespace trialshim::app::internal {
namespace {

using config::HydraScope;
using config::Node;

constexpr char kBasicSweeper[] =
    "hydra._internal.core_plugins.basic_sweeper.BasicSweeper";
constexpr char kOptunaSweeper[] =
    "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper";

// The sweeper Hydra instantiates (hydra.sweeper._target_): Hydra's basic
// one, or hydra-optuna-sweeper's, whose study trialshim runs; and Hydra's
// basic launcher. Whether it is the Optuna sweeper.
StatusOr<bool> CheckPlugins(const config::ComposeResult& master) {
  const Node* choices = master.hydra.Find("runtime.choices");
  auto choice = [&](const char* group) {
    const Node* c = choices ? choices->Get(group) : nullptr;
    return c && c->is_string() ? c->AsString() : std::string("basic");
  };
  const Node* target = master.hydra.Find("sweeper._target_");
  std::string t = target && target->is_string() ? target->AsString() : "";
  if (t != kBasicSweeper && t != kOptunaSweeper) {
    return Status::InvalidArgument(
        "hydra/sweeper=" + choice("hydra/sweeper") + " (" + t +
        "): a trialshim app's multirun has Hydra's basic sweeper and "
        "hydra-optuna-sweeper's study (override hydra/sweeper: optuna); "
        "other sweepers are Python plugins");
  }
  if (std::string launcher = choice("hydra/launcher"); launcher != "basic") {
    return Status::InvalidArgument(
        "hydra/launcher=" + launcher +
        ": a trialshim app's multirun runs its jobs one after another, as "
        "Hydra's basic launcher does; the '" +
        launcher + "' launcher is a Python plugin");
  }
  return t == kOptunaSweeper;
}

StatusOr<std::optional<int64_t>> MaxBatchSize(
    const config::ComposeResult& master, NowCache* now) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      Node n, config::ResolveHydra(master, "sweeper.max_batch_size", false,
                                   HydraScope::kHydraOnly, now));
  if (n.is_int()) return std::optional<int64_t>(n.AsInt());
  return std::optional<int64_t>();
}

// hydra.hydra_logging and hydra.verbose, resolved once for the plugins'
// loggers: hydra_logging alone, as BasicLauncher configures it before and
// after each job.
class HydraLogging {
 public:
  static StatusOr<HydraLogging> Read(const config::ComposeResult& master,
                                     NowCache* now) {
    HydraLogging l;
    TRIALSHIM_ASSIGN_OR_RETURN(
        l.logging_, config::ResolveHydra(master, "hydra_logging", false,
                                         HydraScope::kWholeConfig, now));
    TRIALSHIM_ASSIGN_OR_RETURN(
        l.verbose_, config::ResolveHydra(master, "verbose", false,
                                         HydraScope::kWholeConfig, now));
    return l;
  }
  // The logger of a plugin's module `name`.
  StatusOr<std::unique_ptr<Logger>> For(const std::string& name) const {
    return Logger::FromConfig(logging_, Node(), verbose_, name);
  }

 private:
  Node logging_;
  Node verbose_;
};

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

// Hydra's BasicLauncher.launch: the sweep directory, then a batch's jobs
// one after another, numbered on, each composed at its turn.
class Launcher {
 public:
  Launcher(const config::ComposeRequest& request,
           const config::ComposeResult& master, std::string sweep_dir,
           NowCache* now, const Task& task, Logger* log,
           const std::function<void(const std::string&)>& report)
      : request_(request), master_(master), sweep_dir_(std::move(sweep_dir)),
        now_(now), task_(task), log_(log), report_(report) {}

  // Makes and locks the sweep directory, once: a second multirun into it
  // while this one runs would run the same job numbers in the same
  // directories (each resuming the other's checkpoints, writing over its
  // outputs), as two sweeps on one --out would. kUnavailable names the
  // holder (base/lock.h).
  Status PrepareSweepDir() {
    if (lock_) return Status::Ok();
    TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(sweep_dir_));
    TRIALSHIM_ASSIGN_OR_RETURN(DirectoryLock lock,
                               DirectoryLock::Acquire(sweep_dir_));
    lock_.emplace(std::move(lock));
    return Status::Ok();
  }

  // 0 when every job exited 0, else the first failed job's code (the
  // batch ran on) or a stopped job's (at once). `validate`: compose the
  // whole batch before any job runs (the basic sweeper's
  // validate_batch_is_legal). `returns` receives each job's
  // Job::return_value().
  StatusOr<int> Launch(const std::vector<std::vector<std::string>>& batch,
                       bool validate, std::vector<Node>* returns = nullptr) {
    std::vector<std::optional<config::ComposeResult>> composed(batch.size());
    for (size_t i = 0; validate && i < batch.size(); ++i) {
      TRIALSHIM_ASSIGN_OR_RETURN(
          composed[i], ComposeSweepJob(request_, master_, batch[i], idx_ + i));
    }
    TRIALSHIM_RETURN_IF_ERROR(PrepareSweepDir());
    log_->Info("Launching " + std::to_string(batch.size()) + " jobs locally");
    int failed = 0;
    for (size_t i = 0; i < batch.size(); ++i, ++idx_) {
      std::cout.flush();
      log_->Info("\t#" + std::to_string(idx_) + " : " + JobLine(batch[i]));
      if (!composed[i]) {
        TRIALSHIM_ASSIGN_OR_RETURN(
            composed[i], ComposeSweepJob(request_, master_, batch[i], idx_));
      }
      TRIALSHIM_ASSIGN_OR_RETURN(
          std::string output_dir,
          JobDir(*composed[i], "sweep.dir", "sweep.subdir", now_));
      Node returned;
      TRIALSHIM_ASSIGN_OR_RETURN(int code, RunJob(std::move(*composed[i]),
                                                  output_dir, now_, task_,
                                                  &returned));
      std::cout.flush();
      if (returns) returns->push_back(std::move(returned));
      if (code == 0) continue;
      report_("job #" + std::to_string(idx_) + " with overrides " +
              PythonList(batch[i]) + " exited with code " +
              std::to_string(code));
      if (StoppedBySignal(code)) return code;
      if (failed == 0) failed = code;
    }
    return failed;
  }

 private:
  const config::ComposeRequest& request_;
  const config::ComposeResult& master_;
  std::string sweep_dir_;
  NowCache* now_;
  const Task& task_;
  Logger* log_;
  const std::function<void(const std::string&)>& report_;
  size_t idx_ = 0;
  std::optional<DirectoryLock> lock_;
};

// Hydra's BasicSweeper.sweep: multirun.yaml, then the cartesian product of
// the axes in batches of max_batch_size.
StatusOr<int> BasicSweep(const config::ComposeResult& master,
                         const std::vector<std::string>& sweep,
                         const Node& params, const std::string& sweep_dir,
                         NowCache* now, Launcher* launcher) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::vector<config::BasicSweepAxis> axes,
      config::ReadBasicSweep(sweep, &master.repository, &params));
  std::vector<std::vector<std::string>> jobs = config::BasicSweepJobs(axes);
  TRIALSHIM_ASSIGN_OR_RETURN(std::optional<int64_t> max_batch,
                             MaxBatchSize(master, now));
  TRIALSHIM_RETURN_IF_ERROR(launcher->PrepareSweepDir());
  TRIALSHIM_RETURN_IF_ERROR(WriteFileDurably(
      sweep_dir + "/multirun.yaml",
      config::ToYaml(config::ConfigView(master, "all"))));
  for (const auto& batch :
       config::SplitIntoBatches(std::move(jobs), max_batch)) {
    TRIALSHIM_ASSIGN_OR_RETURN(int code, launcher->Launch(batch, true));
    if (code != 0) return code;
  }
  return 0;
}

// hydra-optuna-sweeper 1.2.0's sweep (tuning/optuna_study.h): batches of
// n_jobs trials until n_trials, each job's return value told, then
// optimization_results.yaml. The plugin writes no multirun.yaml.
StatusOr<int> OptunaSweep(tuning::OptunaSweeperConfig settings,
                          const std::vector<std::string>& sweep,
                          const std::string& sweep_dir,
                          const HydraLogging& logging, Launcher* launcher) {
  TRIALSHIM_ASSIGN_OR_RETURN(tuning::OptunaSweep read,
                             tuning::ReadOptunaSweep(std::move(settings), sweep));
  TRIALSHIM_ASSIGN_OR_RETURN(tuning::OptunaStudy study,
                             tuning::OptunaStudy::Create(std::move(read)));
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::unique_ptr<Logger> log,
      logging.For("hydra_plugins.hydra_optuna_sweeper._impl"));
  for (const std::string& line : study.StartLines()) log->Info(line);
  int64_t number = 0;
  for (int64_t left = study.n_trials(); left > 0;) {
    const int64_t n = std::min(left, study.n_jobs());
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> batch,
                               study.Ask(n));
    std::vector<Node> returns;
    TRIALSHIM_ASSIGN_OR_RETURN(int code,
                               launcher->Launch(batch, false, &returns));
    if (code != 0) return code;
    for (size_t i = 0; i < batch.size(); ++i, ++number) {
      Status told = study.Tell(number, returns[i]);
      if (!told.ok()) {
        return told.WithPrefix(
            "job #" + std::to_string(number) + " with overrides " +
            PythonList(batch[i]) +
            " (its task gives the objective to Job::set_return_value)");
      }
    }
    left -= n;
  }
  TRIALSHIM_ASSIGN_OR_RETURN(tuning::OptunaStudy::Results results,
                             study.Finish());
  TRIALSHIM_RETURN_IF_ERROR(WriteFileDurably(
      sweep_dir + "/optimization_results.yaml", results.yaml));
  for (const std::string& line : results.lines) log->Info(line);
  return 0;
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
  TRIALSHIM_ASSIGN_OR_RETURN(bool optuna, CheckPlugins(master));
  // The Optuna sweeper's node is read once, as Hydra instantiates it; the
  // basic sweeper's params alone (max_batch_size is read when it sweeps).
  std::optional<tuning::OptunaSweeperConfig> settings;
  Node params;
  if (optuna) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        settings,
        tuning::ReadOptunaSweeperConfig(master, "a trialshim app", &now));
    params = settings->params;
  } else {
    TRIALSHIM_ASSIGN_OR_RETURN(
        params, config::ResolveHydra(master, "sweeper.params", false,
                                     HydraScope::kWholeConfig, &now));
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> sweep,
                             config::SweeperParamsOverrides(params));
  for (const Node& o : master.hydra.Find("overrides.task")->AsList()) {
    sweep.push_back(o.AsString());
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::string sweep_dir,
                             JobDir(master, "sweep.dir", "", &now));
  TRIALSHIM_ASSIGN_OR_RETURN(HydraLogging logging,
                             HydraLogging::Read(master, &now));
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::unique_ptr<Logger> log,
      logging.For("hydra._internal.core_plugins.basic_launcher"));
  Launcher launcher(request, master, sweep_dir, &now, task, log.get(), report);
  return optuna ? OptunaSweep(std::move(*settings), sweep, sweep_dir, logging,
                              &launcher)
                : BasicSweep(master, sweep, params, sweep_dir, &now, &launcher);
}

}  // namespace trialshim::app::internal
