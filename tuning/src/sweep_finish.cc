// One trial ended (Sweeper::Finish): its outcome from how it exited and
// what it reported. Exit 0 with a finite value of the metric is SUCCEEDED,
// without one INFEASIBLE; anything else FAILED, with the last line of its
// log that says why; a trial the sweep stopped is STOPPED, one the
// stopping rule stopped ends on what it had reported.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "sweep_record.h"
#include "sweeper.h"
#include "trialshim/base/file.h"
#include "trialshim/base/strings.h"

namespace trialshim::tuning::internal {

namespace {

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

}  // namespace

void Sweeper::Finish(Running& r, int status) {
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
void Sweeper::Measure(TrialRecord* t, const MeasurementLog* log) {
  MeasureFrom(t, log);
  if (log && !log->problem().empty()) {
    t->reason += (t->reason.empty() ? "" : "; ") + log->problem();
  }
}

void Sweeper::MeasureFrom(TrialRecord* t, const MeasurementLog* log) {
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
void Sweeper::MeasureOthers(TrialRecord* t, const std::string& metric_file) {
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

// Keeps a trial that succeeded for the stopping rules to compare with
// (copied once, not at every poll).
void Sweeper::Completed(const TrialRecord& t) {
  if (job_.stopping != StoppingRule::kNone &&
      t.state == TrialState::kSucceeded && t.metric) {
    completed_.push_back({t.measurements, *t.metric});
  }
}

Status Sweeper::Fail(size_t index, std::string reason) {
  TrialRecord& t = result_.trials[index];
  t.state = TrialState::kFailed;
  t.reason = std::move(reason);
  ++failed_;
  if (max_failed_ > 0 && failed_ >= max_failed_) result_.failed = true;
  return Changed(index);
}

}  // namespace trialshim::tuning::internal
