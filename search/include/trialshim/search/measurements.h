// Measurements: a trial's intermediate results, as `trialshim sweep` reads
// them from the trial's metric file while it runs.
//
// A trainer reports through cloudml-hypertune (or HypertuneReporter), which
// rewrites the whole file on each report and keeps only its last 100
// reports, so a long run's early reports are gone by the time it ends.
// MeasurementLog follows the file while the trial runs and keeps every
// report it has seen: each Update() stats the file and reads it again only
// when it changed (size, modification time or inode), then appends the
// reports that follow the last one it already holds. cloudml-hypertune
// writes in place (open "w", write), so a reader can find a file cut short;
// a torn last line is not JSON and is skipped until a later Update() reads
// it whole. The file is the trial's, so it is read as untrusted input
// (hypertune::ReadMetricFile): a FIFO, a link to /dev/zero or a file of any
// size costs at most the limits' bytes and never blocks, and problem() says
// what was refused or cut. Not thread-safe.
#ifndef TRIALSHIM_SEARCH_MEASUREMENTS_H_
#define TRIALSHIM_SEARCH_MEASUREMENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

// One report of the study's metric (Vertex's Measurement).
struct Measurement {
  int64_t step = 0;            // global_step
  double elapsed_seconds = 0;  // since the trial started (elapsedDuration)
  double value = 0;            // NaN when the report was not a number
};

// The measurement that becomes a trial's final one: the last, or with
// BEST_MEASUREMENT the best finite one by `goal`. nullopt when there is
// none (no reports; with BEST, none finite). The last one may be NaN.
std::optional<Measurement> SelectMeasurement(
    const std::vector<Measurement>& measurements,
    MeasurementSelection selection, Goal goal);

class MeasurementLog {
 public:
  // `path` is the metric file, `tag` the metric, `start_time` the trial's
  // start (Unix seconds; report timestamps are measured from it).
  MeasurementLog(std::string path, std::string tag, double start_time);

  // Reads the file again if it changed since the last call (or always,
  // with `force`: a file rewritten at the same size within the file
  // system's clock tick looks unchanged); true when new measurements were
  // appended. A missing file is no change.
  bool Update(bool force = false);

  const std::vector<Measurement>& measurements() const { return all_; }
  // From the last read: whether the file existed, and the metric tags it
  // held other than `tag` (for the INFEASIBLE reason).
  bool exists() const { return exists_; }
  const std::vector<std::string>& other_tags() const { return other_tags_; }
  // From the last read: why the file was not read, or only in part (see
  // hypertune::MetricFile::problem); empty when it was read whole.
  const std::string& problem() const { return problem_; }

 private:
  std::string path_, tag_;
  double start_time_;
  std::vector<Measurement> all_;
  double last_timestamp_ = 0;  // of all_.back(), as the file had it
  bool exists_ = false;
  std::vector<std::string> other_tags_;
  std::string problem_;
  // What the file looked like when last read.
  int64_t size_ = -1, mtime_ns_ = -1;
  uint64_t inode_ = 0;
};

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_MEASUREMENTS_H_
