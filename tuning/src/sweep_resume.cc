// --resume: trials.json read back (sweep_record.h checks it on its own
// terms) and checked against this sweep: the same command, ids within
// --max-trials, the values this search gives them. Finished trials are
// kept; the others are rerun in their directories (sweep_start.cc). A
// record that does not match is refused, never guessed around.
#include "sweep_record.h"
#include "sweeper.h"
#include "trialshim/base/strings.h"

namespace trialshim::tuning::internal {

namespace {

bool SameValues(Assignment a, Assignment b) {
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

}  // namespace

// A record of trials that ran another command, or other fixed
// arguments, than this sweep's (a Hydra sweep's trainer.max_epochs=5
// where they ran 40): one leaderboard would compare trials that trained
// differently, so it is refused, naming the first difference.
Status Sweeper::CheckSameCommand(
    const std::vector<std::string>& recorded) const {
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

// A record that does not match the sweep directory is never guessed
// around: finished trials' directories hold the work it describes.
Status Sweeper::Refuse(const std::string& what) const {
  return Status::InvalidArgument(
      "can not resume " + options_.out_dir + ": " + what +
      " (an edited or damaged record?). Restore trials.json, or choose "
      "another --out; nothing in " +
      options_.out_dir + " was changed");
}

// Reads trials.json for --resume (sweep_record.h) and checks it against
// this sweep: ids it runs, the values its search gives them; anything
// else is refused (Refuse).
Status Sweeper::LoadPrevious(const std::string& path) {
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
  for (const TrialRecord& r : record->trials) last_id = std::max(last_id, r.id);
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
Status Sweeper::LoadTrial(TrialRecord r, int64_t last_id) {
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
      return Refuse(name +
                    "'s parameters are not the ones this search "
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
    MeasureOthers(
        &r, options_.out_dir + "/" + std::to_string(r.id) + "/output.metrics");
  }
  done_ids_.push_back(r.id);
  if (r.state == TrialState::kFailed) ++failed_;
  Completed(r);
  result_.trials.push_back(std::move(r));
  return Status::Ok();
}

}  // namespace trialshim::tuning::internal
