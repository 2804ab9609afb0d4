// Sweep: runs a HyperparameterTuningJob here, trial by trial, the way
// Vertex AI would run it. Backs `trialshim sweep`.
//
// The values come from search.h (GRID_SEARCH, RANDOM_SEARCH) or, for
// ALGORITHM_UNSPECIFIED, from the Bayesian search of bayesian.h, as Vertex
// runs it: fitted to the trials finished when a trial starts, with the
// running ones as pending.
//
// Each trial runs workerPoolSpecs[0].containerSpec's command + args (the
// image is not used) with its values appended as "--id=value" (search.h),
// as in a container of its own (container.h): the spec's paths mapped by
// --volume and relative to the working directory, a command named
// trialshim run by this very binary, and a working directory of its own
// (SweepOptions::workdir_view): the working directory's own path through a
// private overlay whose upper directory is <out>/<id>/work/, so whatever a
// trial writes there (Hydra's outputs/, a template's logs/) lands in its
// own work/ and the user's files never change; or, where the kernel refuses
// that (one warning per sweep, on_warning), <out>/<id>/work/ linking the
// working directory's entries.
// A command that can not run here is refused before the first trial. A
// trial is started through Subprocess (no shell) in its own process group,
// contained (its whole tree, what left the group included, is stopped with
// it and killed with SIGKILL if the sweep dies, kill -9 too), with stdin
// from /dev/null and stdout+stderr appended to <out>/<id>/log. Its
// environment is
// this process's, then containerSpec.env, then what Vertex gives a trial:
// CLOUD_ML_TRIAL_ID (1, 2, ...), CLOUD_ML_JOB_ID, CLOUD_ML_HP_METRIC_FILE
// (<out>/<id>/output.metrics), CLUSTER_SPEC, and, only when
// baseOutputDirectory is set, AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and
// AIP_TENSORBOARD_LOG_DIR as <out>/<id>/{model,checkpoints,logs}/ (created).
//
// Outcomes, as on Vertex: exit 0 with the metric reported -> SUCCEEDED
// (metric = last report, or the best with BEST_MEASUREMENT); exit 0 without
// it, or with a non-finite value -> INFEASIBLE; any other exit, a signal,
// or the per-trial timeout (scheduling.timeout) -> FAILED. After
// maxFailedTrialCount failures (0: no limit) no trial starts and running
// ones are stopped. A stop request (SIGINT/SIGTERM in the command) sends
// SIGTERM to every running trial's process group, then SIGKILL after the
// grace period; those trials end STOPPED and a --resume reruns them.
//
// Several metrics (a multi-objective study): a trial succeeds with a value
// of each, taken at the measurement chosen for the first (the last report
// of each other metric at or before that step); the answer is the Pareto
// front (pareto.h), and the Bayesian search fits ParEGO's scalarization of
// them with weights drawn per trial. Early stopping and the learning curves
// follow the first metric.
//
// Early stopping: while trials run, their metric files are followed
// (measurements.h) and every report kept as an intermediate measurement.
// With a decayCurveStoppingSpec or medianAutomatedStoppingSpec the rule of
// early_stopping.h is asked after each new report; a trial it stops goes
// STOPPING (recorded in trials.json at once) and gets SIGTERM, so it can
// checkpoint, then SIGKILL after the grace period. It ends as Vertex ends
// it: SUCCEEDED with its final measurement chosen from the intermediate
// ones by measurementSelectionType (INFEASIBLE if it has none), whatever
// its exit, with stopped_early set (AI Platform's isTrialStoppedEarly). A
// resume finishes a STOPPING trial the same way instead of rerunning it.
//
// <out>/trials.json is rewritten (temp file + rename) as each trial starts
// (before its directory exists: every trial directory is one the record
// describes) and ends, so results survive a crash; trials.csv and
// report.html are written when the sweep returns (stopped or not).
//
// Resume reads trials.json and refuses, changing nothing, what it can not
// vouch for: an out_dir without a record (InvalidArgument naming a
// sibling sweep directory close to it: a mistyped --out must not start a
// fresh sweep), a different spec/seed/algorithm, a different command or
// fixed argument (trainer.max_epochs=5 where its trials ran 40: one
// leaderboard would mix the two; named, with both ways out), a record that is
// not one (a trial listed twice, without a valid id, with an unknown state,
// values this search would not give it, SUCCEEDED without a finite metric), an
// id beyond the trials this sweep runs (naming the --max-trials that continues
// it), or a trial directory the record does not describe; a directory with
// trial directories and no record is refused with or without --resume. Nothing
// is ever emptied. SUCCEEDED, INFEASIBLE and FAILED trials are kept; the others
// rerun with the same values (from the record) in the directory their first run
// left, as Vertex restarts a preempted trial with the same AIP_CHECKPOINT_DIR:
// checkpoints, model and work/ stay, the log is appended to, the earlier metric
// file moves to output.metrics.N and its reports stay the trial's.
//
// Library code: nothing is printed; progress comes through callbacks.
// RunSweep is not reentrant (it owns its children until it returns).
#ifndef TRIALSHIM_TUNING_SWEEP_H_
#define TRIALSHIM_TUNING_SWEEP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/search/measurements.h"
#include "trialshim/search/search.h"
#include "trialshim/tuning/container.h"
#include "trialshim/tuning/job_spec.h"

namespace trialshim::tuning {

// One metric of the study and its goal.
struct Objective {
  std::string id;
  Goal goal = Goal::kMaximize;
};

enum class TrialState {
  kPending,
  kActive,
  kSucceeded,
  kInfeasible,
  kFailed,
  kStopped,  // by a stop request of the sweep; a resume reruns it
  kStopping  // by the early-stopping rule; ends SUCCEEDED or INFEASIBLE
};
// "PENDING", "ACTIVE", "SUCCEEDED", "INFEASIBLE", "FAILED", "STOPPED",
// "STOPPING".
const char* TrialStateName(TrialState s);
// SUCCEEDED, INFEASIBLE and FAILED: a resumed sweep does not rerun these.
bool IsFinal(TrialState s);

struct TrialRecord {
  int64_t id = 0;  // CLOUD_ML_TRIAL_ID
  Assignment parameters;
  TrialState state = TrialState::kPending;
  std::optional<double> metric;  // the selected measurement, finite
  int64_t metric_step = 0;       // its global_step
  // With several objectives, every objective's value at that measurement
  // (values[0] == *metric), for a SUCCEEDED trial; else empty.
  std::vector<double> values;
  int reports = 0;               // measurements.size()
  int exit_code = -1;            // -1 unless it exited
  int signal = 0;                // the signal that ended it, or 0
  double start_time = 0;         // Unix time
  double seconds = 0;            // wall time so far / in all
  std::string reason;            // why INFEASIBLE, FAILED, STOPPED or stopped
  // Every report of the metric seen while the trial ran, in order.
  std::vector<Measurement> measurements;
  bool stopped_early = false;  // the early-stopping rule stopped it
};

struct SweepResult {
  std::string job_id;  // CLOUD_ML_JOB_ID of every trial
  std::string display_name;
  // The study's metrics, none kUnspecified; the first is metric_id/goal,
  // which the measurements, early stopping and the curves follow.
  std::vector<Objective> objectives;
  std::string metric_id;
  Goal goal = Goal::kMaximize;                     // never kUnspecified
  Algorithm algorithm = Algorithm::kRandomSearch;  // as run
  uint64_t seed = 0;
  std::vector<ParameterSpec> parameters;
  // What every trial runs before its values: containerSpec command + args,
  // as the spec gives them (a Hydra sweep's fixed overrides among them).
  std::vector<std::string> command;
  std::vector<TrialRecord> trials;  // by id, all that were started
  std::vector<std::string> notes;   // things the user should know
  bool stopped = false;             // a stop request ended it
  bool failed = false;              // maxFailedTrialCount was reached
  std::string out_dir;

  // Indices into `trials`: SUCCEEDED ones best first by the goal (ties by
  // id), then the rest by id. With several objectives the SUCCEEDED ones go
  // by Pareto rank (the front first), then by the first objective.
  std::vector<size_t> Leaderboard() const;
  // With several objectives, the Pareto rank of each trial (0: on the
  // front; -1: not SUCCEEDED), by index into `trials`; else empty.
  std::vector<int> ParetoRanks() const;
};

struct SweepOptions {
  // Trials at once; 0 takes parallelTrialCount. Default: 0.
  int parallel = 0;
  // Trials in all; 0 takes maxTrialCount. Default: 0.
  int64_t max_trials = 0;
  // Overrides studySpec.algorithm. ALGORITHM_UNSPECIFIED runs the Bayesian
  // search (bayesian.h), as Vertex does. Default: the job's.
  std::optional<Algorithm> algorithm;
  // Seed of the random and Bayesian searches. Default: 0.
  uint64_t seed = 0;
  // The sweep directory (created). Required.
  std::string out_dir;
  // Continue the sweep in out_dir instead of refusing a used one.
  // Default: false.
  bool resume = false;
  // Per-trial limit in seconds; 0 takes scheduling.timeout (0: none).
  // Default: 0.
  double trial_timeout_seconds = 0;
  // Between SIGTERM and SIGKILL when stopping a trial. Default: 10.
  double kill_grace_seconds = 10;
  // The binary run for a command named trialshim (container.h). Default:
  // empty (/proc/self/exe).
  std::string self_exe;
  // The directory the spec's relative paths mean, standing for the image's
  // WORKDIR (container.h). Default: empty (the current directory).
  std::string workdir;
  // --volume mappings of the image's paths (container.h). Default: none.
  std::vector<Volume> volumes;
  // How each trial gets a working directory of its own (container.h).
  // Default: kAuto (the overlay, else links with a warning).
  WorkdirView workdir_view = WorkdirView::kAuto;
  // Told what the user should know at once, such as the fallback from the
  // overlay to links (once per sweep). Default: none (into notes instead).
  std::function<void(const std::string&)> on_warning;
  // Polled; non-zero asks the sweep to stop, 2 or more kills trials at
  // once. Set it from a signal handler. Not owned. Default: null.
  const std::atomic<int>* stop = nullptr;
  // Called on every trial state change, and every tick_seconds while
  // trials run (with changed == nullptr). Default: none.
  std::function<void(const SweepResult&, const TrialRecord* changed)>
      on_progress;
  double tick_seconds = 1;
};

// Runs the sweep. InvalidArgument for a job that can not run (no
// containerSpec command, a command that can not run here, a grid over
// DOUBLE, a used out_dir without resume, a resume refused as above);
// IOError when out_dir can not be written. Failing trials are results, not
// errors.
StatusOr<SweepResult> RunSweep(const JobSpec& job, const SweepOptions& options);

// The result files, as RunSweep writes them.
std::string TrialsJson(const SweepResult& result);
std::string TrialsCsv(const SweepResult& result);
// A standalone HTML page (inline SVG, no scripts or network): the metric
// per trial with the best-so-far line, the learning curves, parallel
// coordinates, parameter importance, the metric against each parameter,
// and the leaderboard.
std::string ReportHtml(const SweepResult& result);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_SWEEP_H_
