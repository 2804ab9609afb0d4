// Fuzzes reading a metric file back (`trialshim sweep` reads each trial's
// CLOUD_ML_HP_METRIC_FILE, which the trial may have filled with anything).
// The first byte picks the tag asked for; the rest is the file. Also a
// round trip: a report written by HypertuneReporter::FormatLine, with the
// value and step taken from the input's first bytes, must read back as the
// same value (NaN as NaN) and step.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "trialshim/hypertune/hypertune.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialshim;
  if (size == 0) return 0;
  static const fuzz::ScratchDir scratch;
  const std::string tag = (data[0] & 1) ? "accuracy" : hypertune::kDefaultMetricTag;
  const std::string path =
      scratch.Write("output.metrics", fuzz::AsView(data + 1, size - 1));
  hypertune::MetricFile read = hypertune::ReadMetricFile(path, tag);
  if (!read.exists) __builtin_trap();

  if (size < 1 + 2 * sizeof(double)) return 0;
  double value = 0;
  int64_t step = 0;
  std::memcpy(&value, data + 1, sizeof value);
  std::memcpy(&step, data + 1 + sizeof value, sizeof step);
  const std::string line = hypertune::HypertuneReporter::FormatLine(
      tag, value, step, "gs://b/ckpt", "7", 1700000000.5);
  hypertune::MetricFile back =
      hypertune::ReadMetricFile(scratch.Write("round_trip.metrics", line), tag);
  if (back.reports.size() != 1 || back.reports[0].global_step != step) {
    __builtin_trap();
  }
  const double got = back.reports[0].value;
  if (std::isnan(value) ? !std::isnan(got) : got != value) __builtin_trap();
  return 0;
}
