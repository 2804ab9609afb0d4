// trials.json and trials.csv, the record of a sweep (private to tuning):
// how a SweepResult is written (TrialsJson, TrialsCsv in sweep.h) and how
// trials.json is read back for --resume (ReadRecord), checked on its own
// terms. What depends on the sweep that resumes it (ids within
// --max-trials, the values its search gives, what is rerun) is
// sweep_resume.cc's.
#ifndef TRIALSHIM_TUNING_SRC_SWEEP_RECORD_H_
#define TRIALSHIM_TUNING_SRC_SWEEP_RECORD_H_

#include <optional>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/tuning/sweep.h"

namespace trialshim::tuning::internal {

// Identifies the search a sweep directory holds (its metrics, algorithm,
// seed and parameters), so --resume can refuse to mix two different ones.
std::string Fingerprint(const SweepResult& r);

// What a trials.json holds.
struct Record {
  std::string job_id;
  // The trials' command (SweepResult::command); absent from records
  // written before it was kept.
  std::optional<std::vector<std::string>> command;
  std::vector<TrialRecord> trials;  // in the record's order
};

// Reads trials.json as written for `shape` (its Fingerprint, metrics and
// parameters): every trial an object listed once with a positive id, a
// known state, a value of its type and range for every active parameter,
// and a finite value of every metric when it SUCCEEDED. A record of another
// search is InvalidArgument ("a sweep of a different search ..."); anything
// else wrong is DataLoss saying what. Integers are read only from JSON
// integers (a float beyond int64 would make the conversion undefined).
// The file is read as every input is (ReadInputFile, at most 1 GiB): a
// FIFO, a directory or a device there is an IOError naming it.
StatusOr<Record> ReadRecord(const std::string& path, const SweepResult& shape);

// "SIGTERM" for SIGTERM, as trials.json names the signal that ended a
// trial; SignalNumber reads it back (0 for anything else).
std::string SignalName(int sig);
int SignalNumber(const std::string& name);

}  // namespace trialshim::tuning::internal

#endif  // TRIALSHIM_TUNING_SRC_SWEEP_RECORD_H_
