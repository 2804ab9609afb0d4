// The local tuning-job runner (sweep.h): RunSweep runs a Sweeper
// (sweeper.h), Prepare, Loop, Save, whose parts live in sweep_*.cc, one
// concern each. Here: the result's own functions (states, the Pareto
// ranks, the leaderboard) and when trials.json is written: as each trial
// is recorded or ends, since it is what --resume needs; trials.csv and the
// report only at the end, as their cost grows with the number of trials.
#include "trialshim/tuning/sweep.h"

#include <algorithm>
#include <chrono>

#include "sweeper.h"
#include "trialshim/base/file.h"
#include "trialshim/search/pareto.h"

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

namespace internal {

double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

StatusOr<SweepResult> Sweeper::Run() {
  TRIALSHIM_RETURN_IF_ERROR(Prepare());
  TRIALSHIM_RETURN_IF_ERROR(Loop());
  TRIALSHIM_RETURN_IF_ERROR(Save());
  return std::move(result_);
}

// Records the first failure to write a record: the sweep then stops its
// trials, as it can no longer say what they did.
void Sweeper::Note(Status s) {
  if (!s.ok() && error_.ok()) error_ = std::move(s);
}

// trials.json's text: the trials of this run and those recorded before
// that it has not rerun yet (prior_), which a record written now must
// keep, or a stopped resume would lose them for the next.
std::string Sweeper::RecordJson() const {
  if (prior_.empty()) return TrialsJson(result_);
  SweepResult all = result_;
  for (const auto& [id, r] : prior_) all.trials.push_back(r);
  std::sort(
      all.trials.begin(), all.trials.end(),
      [](const TrialRecord& a, const TrialRecord& b) { return a.id < b.id; });
  return TrialsJson(all);
}

// trials.json is what --resume needs, so it is rewritten as each trial
// ends; the CSV and the page only at the end (Save), as their cost grows
// with the number of trials.
Status Sweeper::Changed(size_t index) {
  if (options_.on_progress) {
    options_.on_progress(result_, &result_.trials[index]);
  }
  if (result_.trials[index].state == TrialState::kActive) return Status::Ok();
  return WriteFileDurably(options_.out_dir + "/trials.json", RecordJson());
}

Status Sweeper::Save() {
  TRIALSHIM_RETURN_IF_ERROR(
      WriteFileDurably(options_.out_dir + "/trials.json", RecordJson()));
  TRIALSHIM_RETURN_IF_ERROR(
      WriteFileDurably(options_.out_dir + "/trials.csv", TrialsCsv(result_)));
  return WriteFileDurably(options_.out_dir + "/report.html",
                          ReportHtml(result_));
}

}  // namespace internal

StatusOr<SweepResult> RunSweep(const JobSpec& job,
                               const SweepOptions& options) {
  return internal::Sweeper(job, options).Run();
}

}  // namespace trialshim::tuning
