// The local tuning-job runner: scheduling, process supervision and metric
// collection; its record (trials.json, trials.csv) is sweep_record.cc's.
// See sweep.h for the contract.
#include "trialshim/tuning/sweep.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "sweep_record.h"
#include "trialshim/base/file.h"
#include "trialshim/base/lock.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/base/subprocess.h"
#include "trialshim/hypertune/hypertune.h"
#include "trialshim/search/bayesian.h"
#include "trialshim/search/early_stopping.h"
#include "trialshim/search/pareto.h"
#include "trialshim/tuning/container.h"

extern char** environ;

namespace trialshim::tuning {

const char* TrialStateName(TrialState s) {
  switch (s) {
    case TrialState::kPending:
      return "PENDING";
    case TrialState::kActive:
      return "ACTIVE";
    case TrialState::kSucceeded:
      return "SUCCEEDED";
    case TrialState::kInfeasible:
      return "INFEASIBLE";
    case TrialState::kFailed:
      return "FAILED";
    case TrialState::kStopped:
      return "STOPPED";
    case TrialState::kStopping:
      return "STOPPING";
  }
  return "?";
}

bool IsFinal(TrialState s) {
  return s == TrialState::kSucceeded || s == TrialState::kInfeasible ||
         s == TrialState::kFailed;
}

std::vector<int> SweepResult::ParetoRanks() const {
  if (objectives.size() < 2) return {};
  std::vector<size_t> succeeded;
  std::vector<std::vector<double>> points;
  for (size_t i = 0; i < trials.size(); ++i) {
    const TrialRecord& t = trials[i];
    if (t.state != TrialState::kSucceeded ||
        t.values.size() != objectives.size()) {
      continue;
    }
    succeeded.push_back(i);
    points.push_back(t.values);
  }
  std::vector<Goal> goals;
  for (const Objective& o : objectives) goals.push_back(o.goal);
  std::vector<int> ranks(trials.size(), -1);
  std::vector<int> of_succeeded = tuning::ParetoRanks(points, goals);
  for (size_t k = 0; k < succeeded.size(); ++k) {
    ranks[succeeded[k]] = of_succeeded[k];
  }
  return ranks;
}

std::vector<size_t> SweepResult::Leaderboard() const {
  std::vector<size_t> order(trials.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  bool minimize = goal == Goal::kMinimize;
  std::vector<int> ranks = ParetoRanks();
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TrialRecord& x = trials[a];
    const TrialRecord& y = trials[b];
    bool xs = x.state == TrialState::kSucceeded && x.metric;
    bool ys = y.state == TrialState::kSucceeded && y.metric;
    if (xs != ys) return xs;
    if (xs && !ranks.empty() && ranks[a] != ranks[b])
      return ranks[a] < ranks[b];
    if (xs && *x.metric != *y.metric) {
      return minimize ? *x.metric < *y.metric : *x.metric > *y.metric;
    }
    return x.id < y.id;
  });
  return order;
}

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Why a trial failed, from the end of its log: the last line that is not
// context. OmegaConf and Hydra end an error with indented details,
// "full_key: ..." / "object_type=..." lines and the HYDRA_FULL_ERROR
// advice, which say nothing on their own; a Python traceback ends with the
// exception, which is kept. The trial may have replaced the log with
// anything (ReadFileTail).
std::string FailureLine(const std::string& path) {
  StatusOr<FileTail> read = ReadFileTail(path, 8192);
  if (!read.ok()) return "";
  const std::string& tail = read->data;
  auto context = [](const std::string& line) {
    return line.find_first_not_of(" \t\r") == std::string::npos ||
           line[0] == ' ' || line[0] == '\t' || StartsWith(line, "full_key:") ||
           StartsWith(line, "object_type=") ||
           StartsWith(line, "reference_type=") ||
           StartsWith(line, "Set the environment variable HYDRA_FULL_ERROR");
  };
  std::string line;
  for (size_t end = tail.size(); end > 0;) {
    size_t begin = tail.rfind('\n', end - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    line = tail.substr(begin, end - begin);
    end = begin == 0 ? 0 : begin - 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!context(line)) break;
    line.clear();
  }
  if (line.size() > 200) line = line.substr(0, 197) + "...";
  return line;
}

struct Running {
  size_t index = 0;  // into result.trials
  Subprocess proc;
  int pidfd = -1;
  Clock::time_point started;
  Clock::time_point deadline = Clock::time_point::max();
  Clock::time_point kill_at = Clock::time_point::max();
  bool terminated = false;  // we sent SIGTERM
  bool killed = false;      // we sent SIGKILL
  bool timed_out = false;
  bool stop_requested = false;
  std::optional<MeasurementLog> log;  // the trial's metric file, followed
  std::vector<Measurement> earlier;   // from the runs before a resume

  std::vector<Measurement> Measurements() const {
    std::vector<Measurement> all = earlier;
    const std::vector<Measurement>& now = log->measurements();
    all.insert(all.end(), now.begin(), now.end());
    return all;
  }
};

class Sweeper {
 public:
  Sweeper(const JobSpec& job, const SweepOptions& options)
      : job_(job), options_(options) {}

  StatusOr<SweepResult> Run() {
    TRIALSHIM_RETURN_IF_ERROR(Prepare());
    TRIALSHIM_RETURN_IF_ERROR(Loop());
    TRIALSHIM_RETURN_IF_ERROR(Save());
    return std::move(result_);
  }

 private:
  Status Prepare() {
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
  Status PrepareCommand() {
    const ContainerSpec& c = job_.worker_pools[0].container;
    container_.emplace(options_.workdir, options_.volumes, options_.self_exe);
    view_ = options_.workdir_view;
    argv_ = c.command;
    argv_.insert(argv_.end(), c.args.begin(), c.args.end());
    result_.command = argv_;  // as the spec says, for --resume to compare
    argv_ = container_->MapTokens(argv_);
    for (const auto& [k, v] : c.env) env_.emplace_back(k, container_->MapToken(v));
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
  Status PrepareStudy() {
    result_.out_dir = options_.out_dir;
    result_.display_name = job_.display_name;
    for (const MetricSpec& m : job_.metrics) {
      result_.objectives.push_back({m.id, m.goal == Goal::kMinimize
                                              ? Goal::kMinimize
                                              : Goal::kMaximize});
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
    timeout_ = options_.trial_timeout_seconds > 0
                   ? options_.trial_timeout_seconds
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
  Status PrepareOutDir() {
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
    TRIALSHIM_RETURN_IF_ERROR(
        RemoveStaleTemporaries(options_.out_dir).status());
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
  Status NothingToResume() const {
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
        (close.empty()
             ? "; give the --out of the sweep to continue, or "
               "leave out --resume to start one"
             : " (did you mean --out " + ShellQuote(close[0]) + "?)") +
        "; nothing was created");
  }

  // A record of trials that ran another command, or other fixed
  // arguments, than this sweep's (a Hydra sweep's trainer.max_epochs=5
  // where they ran 40): one leaderboard would compare trials that trained
  // differently, so it is refused, naming the first difference.
  Status CheckSameCommand(const std::vector<std::string>& recorded) const {
    const std::vector<std::string>& now = result_.command;
    if (recorded == now) return Status::Ok();
    auto missing = [](const std::vector<std::string>& from,
                      const std::vector<std::string>& in) -> std::string {
      for (const std::string& w : from) {
        if (std::find(in.begin(), in.end(), w) == in.end()) return w;
      }
      return "";
    };
    std::string was = missing(recorded, now), is = missing(now, recorded);
    std::string what =
        !was.empty() && !is.empty()
            ? "its trials ran with " + ShellQuote(Abbreviated(was)) +
                  ", this sweep gives " + ShellQuote(Abbreviated(is))
        : !was.empty() ? "its trials ran with " + ShellQuote(Abbreviated(was)) +
                             ", which this sweep lacks"
        : !is.empty() ? "this sweep adds " + ShellQuote(Abbreviated(is)) +
                            ", which its trials ran without"
                      : "its trials ran the same words in another order";
    std::string same = was.empty() ? "the same command as before"
                                   : ShellQuote(Abbreviated(was)) + " again";
    return Status::InvalidArgument(
        "can not resume " + Abbreviated(options_.out_dir) + ": " + what +
        " (the trials' command and fixed arguments differ; one leaderboard "
        "would mix the two). Give " +
        same +
        " to continue it, or a new --out for a sweep of its own; nothing in " +
        Abbreviated(options_.out_dir) + " was changed");
  }

  // The top-level entry of the working directory that holds --out is not
  // linked into the trials' working directories (container.h): a trial
  // would find every other trial's files there.
  Status ExcludeOutTree() {
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
  std::vector<int64_t> TrialDirectories() const {
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

  static std::string IdList(const std::vector<int64_t>& ids) {
    std::string out;
    for (int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
    return out;
  }

  // A record that does not match the sweep directory is never guessed
  // around: finished trials' directories hold the work it describes.
  Status Refuse(const std::string& what) const {
    return Status::InvalidArgument(
        "can not resume " + options_.out_dir + ": " + what +
        " (an edited or damaged record?). Restore trials.json, or choose "
        "another --out; nothing in " + options_.out_dir + " was changed");
  }

  // Reads trials.json for --resume (sweep_record.h) and checks it against
  // this sweep: ids it runs, the values its search gives them; anything
  // else is refused (Refuse).
  Status LoadPrevious(const std::string& path) {
    StatusOr<internal::Record> record = internal::ReadRecord(path, result_);
    if (record.status().code() == StatusCode::kInvalidArgument) {
      return Status::InvalidArgument(options_.out_dir + " holds " +
                                     record.status().message() +
                                     "; choose another --out");
    }
    // What could not be read at all (a FIFO, a directory, EIO) is told as
    // it is, a runtime failure, not as a damaged record.
    if (record.status().code() == StatusCode::kIOError) {
      return record.status().WithPrefix("can not resume " + options_.out_dir);
    }
    if (!record.ok()) return Refuse(record.status().message());
    if (record->command) {
      TRIALSHIM_RETURN_IF_ERROR(CheckSameCommand(*record->command));
    }
    result_.job_id = record->job_id;
    int64_t last_id = 0;  // for the --max-trials hint
    for (const TrialRecord& r : record->trials)
      last_id = std::max(last_id, r.id);
    for (TrialRecord& r : record->trials) {
      TRIALSHIM_RETURN_IF_ERROR(LoadTrial(std::move(r), last_id));
    }
    if (!result_.trials.empty()) {
      result_.notes.push_back(
          "resumed: " + std::to_string(result_.trials.size()) +
          " finished trials kept");
    }
    return Status::Ok();
  }

  // One recorded trial (LoadPrevious); `last_id` is the record's largest.
  Status LoadTrial(TrialRecord r, int64_t last_id) {
    std::string name = "trial " + std::to_string(r.id);
    recorded_.insert(r.id);
    if (r.id > max_trials_) {
      return Status::InvalidArgument(
          "can not resume " + options_.out_dir + ": it holds " + name +
          ", beyond the " + std::to_string(max_trials_) +
          " trials this sweep runs; continue it with --max-trials " +
          std::to_string(last_id) + " or more");
    }
    if (!bayesian_) {
      TRIALSHIM_ASSIGN_OR_RETURN(Assignment values, Values(r.id));
      if (!SameValues(r.parameters, values)) {
        return Refuse(name + "'s parameters are not the ones this search "
                      "gives it");
      }
    }
    bool stopping = r.state == TrialState::kStopping;
    if (!IsFinal(r.state) && !stopping) {  // reran, from where it was
      if (bayesian_) planned_[r.id] = r.parameters;
      prior_[r.id] = std::move(r);
      return Status::Ok();
    }
    // The rule stopped it and the sweep died before it ended: it ends as it
    // would have, from what it had reported.
    if (stopping) {
      Measure(&r);
      MeasureOthers(&r, options_.out_dir + "/" + std::to_string(r.id) +
                            "/output.metrics");
    }
    done_ids_.push_back(r.id);
    if (r.state == TrialState::kFailed) ++failed_;
    Completed(r);
    result_.trials.push_back(std::move(r));
    return Status::Ok();
  }

  static bool SameValues(Assignment a, Assignment b) {
    auto by_id = [](const ParameterValue& x, const ParameterValue& y) {
      return x.id < y.id;
    };
    std::sort(a.begin(), a.end(), by_id);
    std::sort(b.begin(), b.end(), by_id);
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const ParameterValue& x, const ParameterValue& y) {
                        return x.id == y.id && x.number == y.number &&
                               x.text == y.text;
                      });
  }

  StatusOr<Assignment> Values(int64_t id) const {
    if (result_.algorithm == Algorithm::kGridSearch) {
      return GridPoint(job_.parameters, static_cast<uint64_t>(id - 1));
    }
    if (!bayesian_) return RandomPoint(job_.parameters, options_.seed, id);
    auto planned = planned_.find(id);
    if (planned != planned_.end()) return planned->second;
    // Finished trials are the observations; started ones are pending.
    std::vector<Observation> observed;
    std::vector<Assignment> pending;
    std::vector<std::vector<double>> points;  // several objectives
    for (const TrialRecord& t : result_.trials) {
      if (t.state == TrialState::kActive) pending.push_back(t.parameters);
      if (!IsFinal(t.state)) continue;
      Observation o{t.parameters, Observation::Kind::kFailed, 0};
      if (t.state == TrialState::kSucceeded && t.metric) {
        o.kind = Observation::Kind::kSucceeded;
        o.value = *t.metric;
        points.push_back(t.values);
      } else if (t.state == TrialState::kInfeasible) {
        o.kind = Observation::Kind::kInfeasible;
      }
      observed.push_back(std::move(o));
    }
    if (MultiObjective()) Scalarize(id, points, &observed);
    return bayesian_->Suggest(id, observed, pending);
  }

  bool MultiObjective() const { return result_.objectives.size() > 1; }

  // The succeeded observations' values become ParEGO's scalarization of
  // `points` (theirs, in order) with the weights of trial `id`.
  void Scalarize(int64_t id, const std::vector<std::vector<double>>& points,
                 std::vector<Observation>* observed) const {
    std::vector<Goal> goals;
    for (const Objective& o : result_.objectives) goals.push_back(o.goal);
    std::vector<double> s = tuning::Scalarize(
        points, goals, ChebyshevWeights(goals.size(), options_.seed, id));
    size_t k = 0;
    for (Observation& o : *observed) {
      if (o.kind == Observation::Kind::kSucceeded) o.value = s[k++];
    }
  }

  bool Done(int64_t id) const {
    return std::find(done_ids_.begin(), done_ids_.end(), id) != done_ids_.end();
  }

  int StopLevel() const { return options_.stop ? options_.stop->load() : 0; }

  Status Loop() {
    int64_t next_id = 1;
    bool stopping = false;
    auto last_tick = Clock::now();
    while (true) {
      if (!stopping && (StopLevel() > 0 || result_.failed || !error_.ok())) {
        stopping = true;
        if (StopLevel() > 0) result_.stopped = true;
        for (Running& r : running_) Terminate(&r, /*stop=*/true);
      }
      if (StopLevel() > 1) {
        for (Running& r : running_) Kill(&r);
      }
      while (!stopping && static_cast<int>(running_.size()) < parallel_) {
        while (next_id <= max_trials_ && Done(next_id)) ++next_id;
        if (next_id > max_trials_) break;
        Note(Start(next_id++));
        if (result_.failed || !error_.ok()) break;
      }
      if (running_.empty()) break;

      Wait(last_tick);
      Reap();
      Follow();
      auto now = Clock::now();
      for (Running& r : running_) {
        if (!r.terminated && now >= r.deadline) {
          r.timed_out = true;
          Terminate(&r, /*stop=*/false);
        }
        if (now >= r.kill_at) Kill(&r);
      }
      if (options_.on_progress &&
          now - last_tick >=
              std::chrono::duration<double>(options_.tick_seconds)) {
        last_tick = now;
        for (Running& r : running_) {
          result_.trials[r.index].seconds =
              std::chrono::duration<double>(now - r.started).count();
        }
        options_.on_progress(result_, nullptr);
      }
    }
    std::sort(
        result_.trials.begin(), result_.trials.end(),
        [](const TrialRecord& a, const TrialRecord& b) { return a.id < b.id; });
    if (!error_.ok()) {
      return error_.WithPrefix(
          "the sweep stopped its trials (" + options_.out_dir +
          "/trials.json keeps the trials recorded before)");
    }
    if (result_.failed) {
      result_.notes.push_back("the job failed: " + std::to_string(failed_) +
                              " trials failed (maxFailedTrialCount " +
                              std::to_string(max_failed_) + ")");
    }
    return Status::Ok();
  }

  void Terminate(Running* r, bool stop) {
    if (stop) r->stop_requested = true;
    if (r->terminated) return;
    r->terminated = true;
    r->proc.Kill(SIGTERM, /*group=*/true).IgnoreError();
    r->kill_at =
        Clock::now() +
        std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(options_.kill_grace_seconds));
  }

  void Kill(Running* r) {
    if (r->killed) return;
    r->killed = true;
    r->kill_at = Clock::time_point::max();
    r->proc.Kill(SIGKILL, /*group=*/true).IgnoreError();
  }

  // Sleeps until a child may have exited, a deadline or a tick is due.
  void Wait(Clock::time_point last_tick) {
    auto now = Clock::now();
    auto wake =
        last_tick + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(options_.tick_seconds));
    for (const Running& r : running_) {
      wake = std::min({wake, r.deadline, r.kill_at});
    }
    // A stop request arrives as a signal, which interrupts poll(), but one
    // that lands just before poll() is only seen at the next wake-up.
    double ms = std::chrono::duration<double, std::milli>(wake - now).count();
    int timeout = static_cast<int>(std::clamp(ms, 0.0, 200.0));
    std::vector<pollfd> fds;
    bool all_fds = true;
    for (const Running& r : running_) {
      if (r.pidfd < 0)
        all_fds = false;
      else
        fds.push_back({r.pidfd, POLLIN, 0});
    }
    if (!all_fds) timeout = std::min(timeout, 10);
    poll(fds.data(), fds.size(), timeout);
  }

  void Reap() {
    for (size_t i = 0; i < running_.size();) {
      if (running_[i].proc.Poll()) {
        Running r = std::move(running_[i]);
        running_.erase(running_.begin() + i);
        OpenOverlayWorkdir(result_.trials[r.index].id);
        Finish(r, r.proc.wait_status());
      } else {
        ++i;
      }
    }
  }

  std::vector<std::string> Environment(const TrialRecord& t,
                                       const std::string& dir) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      size_t eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    // Vertex sets these only with a baseOutputDirectory; do not leak ours.
    for (const char* k :
         {"AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"}) {
      env.erase(k);
    }
    for (const auto& [k, v] : env_) env[k] = v;
    env["PWD"] = "";  // the trial's working directory (GiveWorkdir)
    std::string id = std::to_string(t.id);
    env["CLOUD_ML_TRIAL_ID"] = id;
    env["CLOUD_ML_JOB_ID"] = result_.job_id;
    env["CLOUD_ML_HP_METRIC_FILE"] = dir + "/output.metrics";
    env["CLUSTER_SPEC"] =
        nlohmann::json{
            {"cluster", {{"workerpool0", {"localhost:2222"}}}},
            {"environment", "cloud"},
            {"task", {{"type", "workerpool0"}, {"index", 0}, {"trial", id}}}}
            .dump();
    if (job_.base_output_directory) {
      env["AIP_MODEL_DIR"] = dir + "/model/";
      env["AIP_CHECKPOINT_DIR"] = dir + "/checkpoints/";
      env["AIP_TENSORBOARD_LOG_DIR"] = dir + "/logs/";
    }
    std::vector<std::string> out;
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
  }

  // Starts trial `id` in its directory: a new one, or, for a trial a
  // resume reruns, the one its first run left (checkpoints and all), as
  // Vertex restarts a trial with the same AIP_CHECKPOINT_DIR.
  Status Start(int64_t id) {
    TrialRecord t;
    t.id = id;
    TRIALSHIM_ASSIGN_OR_RETURN(t.parameters, Values(id));
    auto prior = prior_.find(id);
    double prior_seconds = 0;
    if (prior != prior_.end()) {
      t.measurements = std::move(prior->second.measurements);
      prior_seconds = prior->second.seconds;
      prior_.erase(prior);
    }
    std::string dir = out_abs_ + "/" + std::to_string(id);
    std::string log = dir + "/log";
    // A rerun's directory is one the record describes already: what the
    // trial will use of it (its lock, its log) is checked before the record
    // is rewritten, so a directory that can not be used (a planted link, a
    // FIFO as its log) stops the sweep with the record as it was.
    struct stat st;
    const bool rerun = lstat(dir.c_str(), &st) == 0;
    if (rerun && !S_ISDIR(st.st_mode)) {
      return Status::IOError("cannot use trial directory " + dir +
                             ": it is not a directory (a symbolic link?)");
    }
    std::optional<DirectoryLock> lock;
    if (rerun) TRIALSHIM_RETURN_IF_ERROR(PrepareTrialDirectory(dir, &lock));
    t.state = TrialState::kActive;
    t.start_time = Now();
    t.seconds = prior_seconds;
    result_.trials.push_back(std::move(t));
    size_t index = result_.trials.size() - 1;
    TrialRecord& rec = result_.trials[index];
    // A new trial is recorded before its directory exists, so that every
    // trial directory is one the record describes (a resume refuses any
    // other), and a Bayesian suggestion, which depends on the trials before
    // it, is rerun with these very values.
    TRIALSHIM_RETURN_IF_ERROR(
        WriteFileDurably(options_.out_dir + "/trials.json", RecordJson()));
    if (!rerun) TRIALSHIM_RETURN_IF_ERROR(PrepareTrialDirectory(dir, &lock));
    TRIALSHIM_RETURN_IF_ERROR(KeepEarlierReports(dir, &rec));
    if (job_.base_output_directory) {
      for (const char* sub : {"model", "checkpoints", "logs"}) {
        TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir + "/" + sub));
      }
    }
    std::vector<std::string> args = argv_;
    for (const ParameterValue& v : rec.parameters) args.push_back(v.Arg());
    if (rerun) {
      TRIALSHIM_RETURN_IF_ERROR(AppendToLog(
          log, "--- trialshim sweep: trial " + std::to_string(id) +
                   " started again in this directory ---\n"));
    }
    SubprocessOptions spawn;
    spawn.program = program_;
    spawn.env = Environment(rec, dir);
    TRIALSHIM_RETURN_IF_ERROR(GiveWorkdir(dir, &spawn));
    spawn.in = Stdio::Null();
    // Opened as a file of ours (OwnFile): never through a link, never
    // blocking on a FIFO.
    spawn.out = Stdio::OwnFile(log, /*append=*/true);
    spawn.err = Stdio::SameAsStdout();
    // Its own process group (the default), under a supervisor that holds
    // its whole tree (contain): stopping a trial stops all it started, even
    // what left its group. And SIGKILL to that tree when the sweep dies
    // (SIGHUP, kill -9): SIGTERM can be caught or ignored by a trainer, and
    // an orphaned process would keep training in a directory --resume reuses.
    spawn.contain = true;
    spawn.parent_death_signal = SIGKILL;
    Running r;
    Status started = r.proc.Start(args, spawn);
    if (!started.ok() && r.proc.private_overlay_failed() &&
        options_.workdir_view == WorkdirView::kAuto) {
      FallBackToLinks(started.message());
      TRIALSHIM_RETURN_IF_ERROR(GiveWorkdir(dir, &spawn));
      started = r.proc.Start(args, spawn);
    }
    if (!started.ok()) {
      if (r.proc.start_failure_exit_code() == 1) return started;
      TRIALSHIM_RETURN_IF_ERROR(
          AppendToLog(log, "trialshim sweep: " + started.message() + "\n"));
      rec.exit_code = r.proc.start_failure_exit_code();
      return Fail(index, started.message());
    }
    r.index = index;
    r.earlier = rec.measurements;
    // Elapsed time counts the earlier runs too, as Vertex's elapsedDuration.
    r.log.emplace(dir + "/output.metrics", result_.metric_id,
                  rec.start_time - prior_seconds);
    r.pidfd = static_cast<int>(syscall(SYS_pidfd_open, r.proc.pid(), 0));
    r.started = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(prior_seconds));
    if (timeout_ > 0) {
      r.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(timeout_));
    }
    running_.push_back(std::move(r));
    return Changed(index);
  }

  // The trial's working directory (container.h): the working directory
  // itself through a private overlay, or <dir>/work/ linking its entries.
  // Sets spawn's cwd, PWD and overlay.
  Status GiveWorkdir(const std::string& dir, SubprocessOptions* spawn) {
    std::string cwd = dir + "/work";
    spawn->private_overlay.reset();
    if (view_ == WorkdirView::kLinks) {
      std::vector<std::string> exclude;
      if (!out_tree_.empty()) exclude.push_back(out_tree_);
      TRIALSHIM_RETURN_IF_ERROR(container_->LinkWorkdir(cwd, exclude));
    } else {
      TRIALSHIM_ASSIGN_OR_RETURN(spawn->private_overlay,
                                 container_->TrialOverlay(dir, out_abs_));
      cwd = container_->workdir();
    }
    spawn->cwd = cwd;
    for (std::string& e : *spawn->env) {
      if (StartsWith(e, "PWD=")) e = "PWD=" + cwd;  // for shells
    }
    return Status::Ok();
  }

  // overlayfs leaves its work directory (<id>/.overlay/work) mode 000:
  // opened to its owner once the trial is gone, so that `rm -rf` of a
  // sweep works without root. Best effort (a link-farm trial has none).
  void OpenOverlayWorkdir(int64_t id) const {
    std::string work = out_abs_ + "/" + std::to_string(id) + "/.overlay/work";
    struct stat st;
    if (lstat(work.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      (void)chmod(work.c_str(), 0700);
    }
  }

  // Where the kernel refuses the overlay: links for this trial and every
  // later one, and the user told once what is then shared.
  void FallBackToLinks(const std::string& why) {
    view_ = WorkdirView::kLinks;
    const std::string& w = container_->workdir();
    std::string text =
        why + "; so each trial runs in <out>/<id>/work/ instead, linking " +
        "every entry of " + w +
        " but outputs/, multirun/ and --out: what a trial writes inside a "
        "linked directory (logs/, data/ ...) or through an absolute path "
        "into " + w + " reaches your files and the other trials "
        "(--private-workdir links chooses this without this warning)";
    if (options_.on_warning) {
      options_.on_warning(text);
    } else {
      result_.notes.push_back(text);
    }
  }

  // A rerun's metric file is from its earlier run: its reports (when the
  // record has none, as after kill -9 of the sweep) join the trial's, and
  // the file moves aside to output.metrics.N, as a restarted trainer's
  // cloudml-hypertune starts a new one.
  Status KeepEarlierReports(const std::string& dir, TrialRecord* t) {
    std::string file = dir + "/output.metrics";
    if (!fs::exists(file)) return Status::Ok();
    if (t->measurements.empty()) {
      MeasurementLog earlier(file, result_.metric_id, t->start_time - t->seconds);
      earlier.Update(/*force=*/true);
      t->measurements = earlier.measurements();
    }
    int n = 1;
    while (fs::exists(file + "." + std::to_string(n))) ++n;
    std::error_code ec;
    fs::rename(file, file + "." + std::to_string(n), ec);
    if (ec) return IOErrorFor("rename", file, ec.value());
    return Status::Ok();
  }

  Status Fail(size_t index, std::string reason) {
    TrialRecord& t = result_.trials[index];
    t.state = TrialState::kFailed;
    t.reason = std::move(reason);
    ++failed_;
    if (max_failed_ > 0 && failed_ >= max_failed_) result_.failed = true;
    return Changed(index);
  }

  // Records the first failure to write a record: the sweep then stops its
  // trials, as it can no longer say what they did.
  void Note(Status s) {
    if (!s.ok() && error_.ok()) error_ = std::move(s);
  }

  // Creates a trial's directory (a rerun keeps what is in it) and locks it
  // for the trial: the lock is inherited by the trial's processes and held
  // until the last of them exits. A killed sweep's trials are being killed
  // by their supervisors (contain) when a --resume starts, so it waits a
  // moment; a process that outlived that keeps its directory from the
  // --resume (kUnavailable names it).
  StatusOr<DirectoryLock> LockTrialDirectory(const std::string& dir) {
    TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));
    return DirectoryLock::Acquire(dir, {/*inherit=*/true,
                                        /*wait=*/std::chrono::seconds(10)});
  }

  // Locks a trial's directory (`*lock`, ours until the trial has started
  // with it; the trial holds it after) and checks that its log can be
  // appended to: a plain file of the directory or none (OpenOwnFile).
  Status PrepareTrialDirectory(const std::string& dir,
                               std::optional<DirectoryLock>* lock) {
    TRIALSHIM_ASSIGN_OR_RETURN(DirectoryLock held, LockTrialDirectory(dir));
    lock->emplace(std::move(held));
    return OpenOwnFile(dir + "/log", O_WRONLY | O_APPEND | O_CREAT).status();
  }

  // Appends `text` to a trial's log, a file of ours (OpenOwnFile).
  static Status AppendToLog(const std::string& log, std::string_view text) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        ScopedFd fd, OpenOwnFile(log, O_WRONLY | O_APPEND | O_CREAT));
    while (!text.empty()) {
      ssize_t n = write(fd.get(), text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IOErrorFor("write", log, errno);
      text.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  // trials.json's text: the trials of this run and those recorded before
  // that it has not rerun yet (prior_), which a record written now must
  // keep, or a stopped resume would lose them for the next.
  std::string RecordJson() const {
    if (prior_.empty()) return TrialsJson(result_);
    SweepResult all = result_;
    for (const auto& [id, r] : prior_) all.trials.push_back(r);
    std::sort(
        all.trials.begin(), all.trials.end(),
        [](const TrialRecord& a, const TrialRecord& b) { return a.id < b.id; });
    return TrialsJson(all);
  }

  void Finish(Running& r, int status) {
    if (r.pidfd >= 0) close(r.pidfd);
    // Whatever is left of the trial's process group goes with it.
    r.proc.Kill(SIGKILL, /*group=*/true).IgnoreError();
    TrialRecord& t = result_.trials[r.index];
    t.seconds = std::chrono::duration<double>(Clock::now() - r.started).count();
    if (WIFEXITED(status)) t.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) t.signal = WTERMSIG(status);
    std::string dir = options_.out_dir + "/" + std::to_string(t.id);

    r.log->Update(/*force=*/true);
    t.measurements = r.Measurements();
    t.reports = static_cast<int>(t.measurements.size());
    if (t.stopped_early) {  // however it ended after the SIGTERM
      Measure(&t, &*r.log);
      MeasureOthers(&t, dir + "/output.metrics");
      Completed(t);
      Note(Changed(r.index));
      return;
    }
    if (r.timed_out) {
      Note(Fail(r.index, "timed out after " + FormatNumber(timeout_) + "s"));
      return;
    }
    bool clean = t.exit_code == 0;
    if (clean) {
      Measure(&t, &*r.log);
      MeasureOthers(&t, dir + "/output.metrics");
    }
    if (r.stop_requested && !(clean && t.state == TrialState::kSucceeded)) {
      t.state = TrialState::kStopped;
      t.reason = "stopped by the sweep";
    } else if (!clean) {
      std::string why = t.signal ? "killed by " + internal::SignalName(t.signal)
                                 : "exit code " + std::to_string(t.exit_code);
      std::string last = FailureLine(dir + "/log");
      Note(Fail(r.index, last.empty() ? why : why + ": " + last));
      return;
    }
    Completed(t);
    Note(Changed(r.index));
  }

  // Turns a trial's measurements into SUCCEEDED or INFEASIBLE. `log` (null
  // for a STOPPING trial a resume finishes) says why there are none, and
  // what of its metric file was refused or cut (added to the reason).
  void Measure(TrialRecord* t, const MeasurementLog* log = nullptr) {
    MeasureFrom(t, log);
    if (log && !log->problem().empty()) {
      t->reason += (t->reason.empty() ? "" : "; ") + log->problem();
    }
  }

  void MeasureFrom(TrialRecord* t, const MeasurementLog* log) {
    t->reports = static_cast<int>(t->measurements.size());
    if (t->measurements.empty()) {
      t->state = TrialState::kInfeasible;
      if (log && !log->exists()) {
        t->reason =
            "exited 0 but reported no metric (no file at "
            "CLOUD_ML_HP_METRIC_FILE)";
      } else if (log && !log->other_tags().empty()) {
        std::string list;
        for (const std::string& o : log->other_tags())
          list += (list.empty() ? "" : ", ") + o;
        t->reason = "metric '" + result_.metric_id +
                    "' never reported; the file has: " + list;
      } else {
        t->reason = "metric '" + result_.metric_id + "' never reported";
      }
      return;
    }
    std::optional<Measurement> chosen = SelectMeasurement(
        t->measurements, job_.measurement_selection, result_.goal);
    if (!chosen || !std::isfinite(chosen->value)) {
      t->state = TrialState::kInfeasible;
      t->reason =
          "metric '" + result_.metric_id + "' is " +
          (chosen ? FormatNumber(chosen->value) : std::string("never finite"));
      return;
    }
    t->state = TrialState::kSucceeded;
    t->metric = chosen->value;
    t->metric_step = chosen->step;
  }

  // With several objectives, a SUCCEEDED trial's value of each other
  // metric: its last report at or before the step chosen for the first (the
  // same measurement), else its last; without a finite one the trial is
  // INFEASIBLE, as Vertex makes a trial that misses a metric.
  void MeasureOthers(TrialRecord* t, const std::string& metric_file) {
    if (!MultiObjective() || t->state != TrialState::kSucceeded) return;
    t->values = {*t->metric};
    for (size_t i = 1; i < result_.objectives.size(); ++i) {
      const std::string& id = result_.objectives[i].id;
      MeasurementLog log(metric_file, id, t->start_time);
      log.Update(/*force=*/true);
      std::optional<double> at, last;
      for (const Measurement& m : log.measurements()) {
        last = m.value;
        if (m.step <= t->metric_step) at = m.value;
      }
      std::optional<double> value = at ? at : last;
      if (!value || !std::isfinite(*value)) {
        t->state = TrialState::kInfeasible;
        t->reason = "metric '" + id + "' " +
                    (value ? "is " + FormatNumber(*value)
                           : std::string("never reported"));
        t->metric.reset();
        t->values.clear();
        return;
      }
      t->values.push_back(*value);
    }
  }

  // Reads what the running trials reported since the last call and asks
  // the stopping rule about each trial that reported something new.
  void Follow() {
    for (Running& r : running_) {
      if (!r.log->Update()) continue;
      TrialRecord& t = result_.trials[r.index];
      t.measurements = r.Measurements();
      t.reports = static_cast<int>(t.measurements.size());
      if (job_.stopping == StoppingRule::kNone || r.terminated) continue;
      StoppingDecision d = ShouldStop(job_.stopping, job_.stopping_use_elapsed,
                                      result_.goal, completed_, t.measurements);
      if (!d.stop) continue;
      t.state = TrialState::kStopping;
      t.stopped_early = true;
      t.reason = "stopped early: " + d.reason;
      Terminate(&r, /*stop=*/false);
      Note(Changed(r.index));
    }
  }

  // Keeps a trial that succeeded for the stopping rules to compare with
  // (copied once, not at every poll).
  void Completed(const TrialRecord& t) {
    if (job_.stopping != StoppingRule::kNone &&
        t.state == TrialState::kSucceeded && t.metric) {
      completed_.push_back({t.measurements, *t.metric});
    }
  }

  // trials.json is what --resume needs, so it is rewritten as each trial
  // ends; the CSV and the page only at the end (Save), as their cost grows
  // with the number of trials.
  Status Changed(size_t index) {
    if (options_.on_progress) {
      options_.on_progress(result_, &result_.trials[index]);
    }
    if (result_.trials[index].state == TrialState::kActive) return Status::Ok();
    return WriteFileDurably(options_.out_dir + "/trials.json", RecordJson());
  }

  Status Save() {
    TRIALSHIM_RETURN_IF_ERROR(
        WriteFileDurably(options_.out_dir + "/trials.json", RecordJson()));
    TRIALSHIM_RETURN_IF_ERROR(
        WriteFileDurably(options_.out_dir + "/trials.csv", TrialsCsv(result_)));
    return WriteFileDurably(options_.out_dir + "/report.html",
                            ReportHtml(result_));
  }

  const JobSpec& job_;
  const SweepOptions& options_;
  std::optional<DirectoryLock> out_lock_;
  Status error_;  // the first record that could not be written
  SweepResult result_;
  std::vector<std::string> argv_;
  std::vector<Running> running_;
  std::vector<int64_t> done_ids_;
  std::vector<CompletedCurve> completed_;  // see Completed()
  std::optional<BayesianSearch> bayesian_;  // ALGORITHM_UNSPECIFIED
  std::map<int64_t, Assignment> planned_;   // recorded, not yet finished
  std::map<int64_t, TrialRecord> prior_;    // recorded, to rerun (resume)
  std::set<int64_t> recorded_;              // every id trials.json had
  std::optional<Container> container_;
  // How trials get their working directory now: options_'s, until the
  // kernel refuses the overlay (FallBackToLinks).
  WorkdirView view_ = WorkdirView::kAuto;
  std::string program_;  // what argv_[0] runs here (Container)
  std::vector<std::pair<std::string, std::string>> env_;  // containerSpec's
  std::string out_abs_;   // --out, absolute
  std::string out_tree_;  // its top entry in the working directory, or 
  int64_t max_trials_ = 1;
  int parallel_ = 1;
  int64_t max_failed_ = 0;
  int64_t failed_ = 0;
  double timeout_ = 0;
};

}  // namespace

StatusOr<SweepResult> RunSweep(const JobSpec& job,
                               const SweepOptions& options) {
  return Sweeper(job, options).Run();
}

}  // namespace trialshim::tuning
