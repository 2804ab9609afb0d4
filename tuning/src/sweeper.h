// The Sweeper, the class behind RunSweep (sweep.h), private to tuning.
// One sweep is Prepare, Loop, Save; its member functions live in one file
// per concern, which this header ties together:
//   sweep.cc          RunSweep, and when the record is written (Changed, Save)
//   sweep_prepare.cc  the command, the study's settings and --out, checked
//                     before the first trial
//   sweep_resume.cc   --resume: the record read back and checked against
//                     this sweep
//   sweep_suggest.cc  the values each trial is given (grid, random, Bayesian)
//   sweep_loop.cc     the loop: starts, waits, reaps, times out, stops
//   sweep_start.cc    one trial started: its directory, environment, process
//   sweep_finish.cc   one trial ended: its outcome from exit and metrics
// trials.json's format itself is sweep_record.h's.
#ifndef TRIALSHIM_TUNING_SRC_SWEEPER_H_
#define TRIALSHIM_TUNING_SRC_SWEEPER_H_

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/base/lock.h"
#include "trialshim/base/status.h"
#include "trialshim/base/subprocess.h"
#include "trialshim/hypertune/hypertune.h"
#include "trialshim/search/bayesian.h"
#include "trialshim/search/early_stopping.h"
#include "trialshim/tuning/container.h"
#include "trialshim/tuning/sweep.h"

namespace trialshim::tuning::internal {

using Clock = std::chrono::steady_clock;

// Seconds since the epoch, as trials.json records times.
double Now();

// A trial the sweep has started and not yet reaped.
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

  StatusOr<SweepResult> Run();

 private:
  // sweep_prepare.cc
  Status Prepare();
  Status PrepareCommand();
  Status PrepareStudy();
  Status PrepareOutDir();
  Status NothingToResume() const;
  Status ExcludeOutTree();
  std::vector<int64_t> TrialDirectories() const;

  // sweep_resume.cc
  Status CheckSameCommand(const std::vector<std::string>& recorded) const;
  Status Refuse(const std::string& what) const;
  Status LoadPrevious(const std::string& path);
  Status LoadTrial(TrialRecord r, int64_t last_id);

  // sweep_suggest.cc
  StatusOr<Assignment> Values(int64_t id) const;
  void Scalarize(int64_t id, const std::vector<std::vector<double>>& points,
                 std::vector<Observation>* observed) const;
  bool MultiObjective() const { return result_.objectives.size() > 1; }

  // sweep_loop.cc
  Status Loop();
  void Terminate(Running* r, bool stop);
  void Kill(Running* r);
  void Wait(Clock::time_point last_tick);
  void Reap();
  void Follow();
  bool Done(int64_t id) const {
    return std::find(done_ids_.begin(), done_ids_.end(), id) != done_ids_.end();
  }
  int StopLevel() const { return options_.stop ? options_.stop->load() : 0; }

  // sweep_start.cc
  Status Start(int64_t id);
  std::vector<std::string> Environment(const TrialRecord& t,
                                       const std::string& dir);
  Status GiveWorkdir(const std::string& dir, WorkdirView view,
                     SubprocessOptions* spawn);
  void OpenOverlayWorkdir(int64_t id) const;
  void FallBackToLinks(const std::string& why);
  Status KeepEarlierReports(const std::string& dir, TrialRecord* t);
  StatusOr<DirectoryLock> LockTrialDirectory(const std::string& dir);
  Status PrepareTrialDirectory(const std::string& dir,
                               std::optional<DirectoryLock>* lock);

  // sweep_finish.cc
  void Finish(Running& r, int status);
  void Measure(TrialRecord* t, const MeasurementLog* log = nullptr);
  void MeasureFrom(TrialRecord* t, const MeasurementLog* log);
  void MeasureOthers(TrialRecord* t, const std::string& metric_file);
  void Completed(const TrialRecord& t);
  Status Fail(size_t index, std::string reason);

  // sweep.cc
  void Note(Status s);
  std::string RecordJson() const;
  Status Changed(size_t index);
  Status Save();

  const JobSpec& job_;
  const SweepOptions& options_;
  std::optional<DirectoryLock> out_lock_;
  Status error_;  // the first record that could not be written
  SweepResult result_;
  std::vector<std::string> argv_;
  std::vector<Running> running_;
  std::vector<int64_t> done_ids_;
  std::vector<CompletedCurve> completed_;   // see Completed()
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
  std::string out_abs_;                                   // --out, absolute
  std::string out_tree_;  // its top entry in the working directory, or ""
  int64_t max_trials_ = 1;
  int parallel_ = 1;
  int64_t max_failed_ = 0;
  int64_t failed_ = 0;
  double timeout_ = 0;
};

}  // namespace trialshim::tuning::internal

#endif  // TRIALSHIM_TUNING_SRC_SWEEPER_H_
