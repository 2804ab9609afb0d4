// Before the first trial (Sweeper::Prepare): the trial's command as this
// machine runs it, the study's settings (the spec's, where a flag does not
// override them) and --out, created, locked and either fresh or a sweep
// --resume continues (sweep_resume.cc reads its record). Whatever would
// fail in every trial fails here, once, with nothing started.
#include <cstdlib>
#include <filesystem>

#include "sweeper.h"
#include "trialshim/base/file.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"

namespace trialshim::tuning::internal {

namespace fs = std::filesystem;

namespace {

std::string IdList(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

}  // namespace

Status Sweeper::Prepare() {
  if (job_.worker_pools.empty() || !job_.worker_pools[0].has_container ||
      job_.worker_pools[0].container.command.empty()) {
    return Status::InvalidArgument(
        "the job has no workerPoolSpecs[0].containerSpec.command to run");
  }
  if (job_.metrics.empty()) {
    return Status::InvalidArgument("the job has no studySpec.metrics");
  }
  if (options_.out_dir.empty()) {
    return Status::InvalidArgument("no output directory given");
  }
  TRIALSHIM_RETURN_IF_ERROR(PrepareCommand());
  TRIALSHIM_RETURN_IF_ERROR(PrepareStudy());
  return PrepareOutDir();
}

// The trial's command as this machine runs it (Container): what can not
// run here fails before the first trial, not in each.
Status Sweeper::PrepareCommand() {
  const ContainerSpec& c = job_.worker_pools[0].container;
  container_.emplace(options_.workdir, options_.volumes, options_.self_exe);
  view_ = options_.workdir_view;
  argv_ = c.command;
  argv_.insert(argv_.end(), c.args.begin(), c.args.end());
  result_.command = argv_;  // as the spec says, for --resume to compare
  argv_ = container_->MapTokens(argv_);
  for (const auto& [k, v] : c.env)
    env_.emplace_back(k, container_->MapToken(v));
  // What can not run here fails before the first trial, not in each.
  std::string path_var = getenv("PATH") ? getenv("PATH") : "";
  for (const auto& [k, v] : env_) {
    if (k == "PATH") path_var = v;
  }
  std::string near = fs::path(job_.file).parent_path().string();
  StatusOr<std::string> program =
      container_->ResolveProgram(argv_[0], path_var, near);
  if (!program.ok()) {
    return program.status().WithPrefix("workerPoolSpecs[0].containerSpec");
  }
  program_ = *program;
  // What execve() would refuse in every trial is refused before the first.
  std::vector<std::string> env;
  for (const auto& [k, v] : env_) env.push_back(k + "=" + v);
  TRIALSHIM_RETURN_IF_ERROR(
      CheckExecLimits(argv_, EnvironmentWith(env), argv_[0], ExecArgSpace())
          .WithPrefix("workerPoolSpecs[0].containerSpec command + args"));
  return Status::Ok();
}

// The study's settings: the spec's, where a flag does not override them.
Status Sweeper::PrepareStudy() {
  result_.out_dir = options_.out_dir;
  result_.display_name = job_.display_name;
  for (const MetricSpec& m : job_.metrics) {
    result_.objectives.push_back(
        {m.id, m.goal == Goal::kMinimize ? Goal::kMinimize : Goal::kMaximize});
  }
  result_.metric_id = result_.objectives[0].id;
  result_.goal = result_.objectives[0].goal;
  result_.parameters = job_.parameters;
  result_.seed = options_.seed;
  Algorithm algorithm = options_.algorithm.value_or(job_.algorithm);
  result_.algorithm = algorithm;
  if (algorithm == Algorithm::kUnspecified) {
    result_.notes.push_back(
        "ALGORITHM_UNSPECIFIED: Bayesian optimization (Gaussian process, "
        "a confidence bound in a trust region), as on Vertex");
    // Several objectives: it minimises their scalarization (Values).
    bayesian_.emplace(job_.parameters,
                      MultiObjective() ? Goal::kMinimize : result_.goal,
                      options_.seed);
  }
  if (MultiObjective()) {
    result_.notes.push_back(
        "several metrics: the answer is their Pareto front" +
        std::string(bayesian_ ? "; the Bayesian search fits ParEGO's "
                                "scalarization of them, weights drawn per "
                                "trial"
                              : "") +
        "; early stopping and the learning curves follow '" +
        result_.metric_id + "'");
  }

  max_trials_ =
      options_.max_trials > 0 ? options_.max_trials : job_.MaxTrials();
  if (algorithm == Algorithm::kGridSearch) {
    StatusOr<uint64_t> size = GridSize(job_.parameters);
    if (!size.ok()) return size.status();
    if (*size < static_cast<uint64_t>(max_trials_)) {
      result_.notes.push_back("the grid has " + std::to_string(*size) +
                              " points: running " + std::to_string(*size) +
                              " trials, not " + std::to_string(max_trials_));
      max_trials_ = static_cast<int64_t>(*size);
    }
  }
  parallel_ =
      options_.parallel > 0
          ? options_.parallel
          : static_cast<int>(std::max<int64_t>(1, job_.ParallelTrials()));
  max_failed_ = job_.max_failed_trial_count.value_or(0);
  timeout_ = options_.trial_timeout_seconds > 0 ? options_.trial_timeout_seconds
                                                : job_.trial_timeout_seconds;
  if (job_.stopping != StoppingRule::kNone) {
    result_.notes.push_back(
        std::string("early stopping: ") +
        (job_.stopping == StoppingRule::kMedian ? "median rule"
                                                : "decay-curve rule") +
        ", trials compared at the same " +
        (job_.stopping_use_elapsed ? "elapsed time" : "global_step"));
  }
  return Status::Ok();
}

// --out: created, locked, and either fresh or (--resume) a sweep whose
// record describes every trial directory in it.
Status Sweeper::PrepareOutDir() {
  std::error_code ec;
  // (Trial directories without a record are refused below, saying so.)
  if (options_.resume &&
      !fs::exists(fs::path(options_.out_dir) / "trials.json", ec) &&
      TrialDirectories().empty()) {
    return NothingToResume();
  }
  fs::create_directories(options_.out_dir, ec);
  if (ec) {
    return Status::IOError("can not create " + options_.out_dir + ": " +
                           ec.message());
  }
  out_abs_ = fs::absolute(options_.out_dir).lexically_normal().string();
  TRIALSHIM_RETURN_IF_ERROR(ExcludeOutTree());
  // Two sweeps on one --out would both run every trial.
  TRIALSHIM_ASSIGN_OR_RETURN(DirectoryLock lock,
                             DirectoryLock::Acquire(options_.out_dir));
  out_lock_.emplace(std::move(lock));
  // What a killed sweep was writing (trials.json, trials.csv, the report).
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(options_.out_dir).status());
  std::string state = options_.out_dir + "/trials.json";
  std::vector<int64_t> dirs = TrialDirectories();
  if (fs::exists(state)) {
    if (!options_.resume) {
      return Status::InvalidArgument(
          options_.out_dir +
          " already holds a sweep: --resume continues it, or choose "
          "another --out");
    }
    TRIALSHIM_RETURN_IF_ERROR(LoadPrevious(state));
    for (int64_t id : dirs) {
      if (recorded_.count(id) == 0) {
        return Refuse("trials.json does not describe trial directory " +
                      options_.out_dir + "/" + std::to_string(id));
      }
    }
  } else if (!dirs.empty()) {
    return Status::InvalidArgument(
        options_.out_dir + " holds trial directories (" + IdList(dirs) +
        ") but no trials.json, the record of their values and outcomes: "
        "the sweep can not tell what they hold and will not overwrite "
        "them; choose another --out (nothing in " +
        options_.out_dir + " was changed)");
  } else {
    result_.job_id = std::to_string(static_cast<int64_t>(Now() * 1000));
  }
  return Status::Ok();
}

// --resume where --out holds no record: a mistyped --out, most likely,
// which must not start a fresh sweep beside the one meant. Names the
// sweep directories beside it that are close to it.
Status Sweeper::NothingToResume() const {
  fs::path out(options_.out_dir);
  if (out.filename().empty()) out = out.parent_path();  // "a/b/"
  fs::path parent = out.parent_path();
  std::vector<std::string> sweeps;
  std::error_code ec;
  for (fs::directory_iterator it(parent.empty() ? "." : parent, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code ignored;
    if (fs::exists(it->path() / "trials.json", ignored)) {
      sweeps.push_back((parent / it->path().filename()).string());
    }
  }
  std::sort(sweeps.begin(), sweeps.end());
  std::vector<std::string> close =
      ClosestMatches(out.string(), sweeps, /*max_results=*/1);
  return Status::InvalidArgument(
      "--resume: " + Abbreviated(options_.out_dir) +
      " holds no sweep (no trials.json) to continue" +
      (close.empty() ? "; give the --out of the sweep to continue, or "
                       "leave out --resume to start one"
                     : " (did you mean --out " + ShellQuote(close[0]) + "?)") +
      "; nothing was created");
}

// The top-level entry of the working directory that holds --out is not
// linked into the trials' working directories (container.h): a trial
// would find every other trial's files there.
Status Sweeper::ExcludeOutTree() {
  fs::path rel = fs::path(out_abs_).lexically_relative(container_->workdir());
  if (rel.empty() || *rel.begin() == "..") return Status::Ok();
  if (rel == ".") {
    return Status::InvalidArgument(
        "--out " + options_.out_dir +
        " is the working directory itself, which every trial sees: choose "
        "a directory of its own (default: sweeps/<job name>)");
  }
  out_tree_ = rel.begin()->string();
  return Status::Ok();
}

// The trial directories (named by a positive id) under --out.
std::vector<int64_t> Sweeper::TrialDirectories() const {
  std::vector<int64_t> ids;
  std::error_code ec;
  for (fs::directory_iterator it(options_.out_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name.size() > 18 || name[0] == '0' ||
        name.find_first_not_of("0123456789") != std::string::npos ||
        !it->is_directory(ec)) {
      continue;
    }
    ids.push_back(std::stoll(name));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace trialshim::tuning::internal
