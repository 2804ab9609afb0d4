// A trial's intermediate measurements, followed through its metric file.
// See measurements.h.
#include "trialshim/search/measurements.h"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "trialshim/hypertune/hypertune.h"

namespace trialshim::tuning {

std::optional<Measurement> SelectMeasurement(
    const std::vector<Measurement>& measurements,
    MeasurementSelection selection, Goal goal) {
  if (measurements.empty()) return std::nullopt;
  if (selection != MeasurementSelection::kBest) return measurements.back();
  std::optional<Measurement> best;
  for (const Measurement& m : measurements) {
    if (!std::isfinite(m.value)) continue;
    bool better = !best || (goal == Goal::kMinimize ? m.value < best->value
                                                    : m.value > best->value);
    if (better) best = m;
  }
  return best;
}

MeasurementLog::MeasurementLog(std::string path, std::string tag,
                               double start_time)
    : path_(std::move(path)), tag_(std::move(tag)), start_time_(start_time) {}

namespace {

// The same report: NaN values compare equal (the bits need not).
bool Same(const hypertune::MetricReport& a, double timestamp, int64_t step,
          double value) {
  return a.timestamp == timestamp && a.global_step == step &&
         (a.value == value || (std::isnan(a.value) && std::isnan(value)));
}

}  // namespace

bool MeasurementLog::Update(bool force) {
  // lstat: what is at the path, not what a link there points to; the
  // file is read (or refused) by ReadMetricFile.
  struct stat st;
  if (lstat(path_.c_str(), &st) != 0) return false;
  int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (!force && st.st_size == size_ && mtime_ns == mtime_ns_ &&
      st.st_ino == inode_) {
    return false;
  }
  size_ = st.st_size;
  mtime_ns_ = mtime_ns;
  inode_ = st.st_ino;

  hypertune::MetricFile file = hypertune::ReadMetricFile(path_, tag_);
  exists_ = file.exists;
  other_tags_ = file.other_tags;
  problem_ = file.problem;
  const std::vector<hypertune::MetricReport>& reports = file.reports;
  // Where the new reports start: after the last one already held (looked
  // for from the end, as the file may repeat a value). Not found: the
  // window of 100 moved past it, so the file's reports newer than it are
  // new; without timestamps that can not be told, and the file is taken
  // as the whole history unless it is shorter (then it was read torn).
  size_t from = 0;
  if (!all_.empty()) {
    const Measurement& last = all_.back();
    size_t k = reports.size();
    while (k > 0 &&
           !Same(reports[k - 1], last_timestamp_, last.step, last.value)) {
      --k;
    }
    if (k > 0) {
      from = k;
    } else if (last_timestamp_ > 0) {
      while (from < reports.size() &&
             !(reports[from].timestamp > last_timestamp_)) {
        ++from;
      }
    } else if (reports.size() >= all_.size()) {
      all_.clear();
    } else {
      return false;
    }
  }
  if (from >= reports.size()) return false;
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  for (size_t i = from; i < reports.size(); ++i) {
    const hypertune::MetricReport& r = reports[i];
    double at = r.timestamp > 0 ? r.timestamp : now;
    all_.push_back({r.global_step, std::max(0.0, at - start_time_), r.value});
    last_timestamp_ = r.timestamp;
  }
  return true;
}

}  // namespace trialshim::tuning
