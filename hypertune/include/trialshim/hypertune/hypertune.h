// HypertuneReporter: reports a tuning metric exactly as cloudml-hypertune
// does, so Vertex AI (and Katib's JSON file collector) read it.
//
// The file is JSON lines, one object per report with keys sorted and
// Python's json.dumps spacing: checkpoint_path (string), global_step
// (integer as a string), timestamp (a float number), trial (string) and the
// metric tag with str(float(value)) as a string ("0.1", "1e-05", "nan").
// Each report rewrites the whole file with this reporter's last 100
// reports; the new contents go to a temporary file that is renamed over the
// old one, so a reader never sees half a file. Parent directories are
// created as needed, tolerating another process creating them at the same
// time. Not thread-safe: use one reporter per thread, or guard it.
#ifndef TRIALSHIM_HYPERTUNE_HYPERTUNE_H_
#define TRIALSHIM_HYPERTUNE_HYPERTUNE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::hypertune {

inline constexpr char kDefaultMetricTag[] = "training/hptuning/metric";
inline constexpr char kDefaultMetricPath[] = "/tmp/hypertune/output.metrics";
inline constexpr size_t kMaxMetricEntries = 100;

class HypertuneReporter {
 public:
  // Path from CLOUD_ML_HP_METRIC_FILE (else kDefaultMetricPath), trial id
  // from CLOUD_ML_TRIAL_ID (else "0").
  static HypertuneReporter FromEnvironment();
  HypertuneReporter(std::string path, std::string trial_id);

  // Appends one report and rewrites the file. An empty tag means
  // kDefaultMetricTag. IOError if the file can not be written.
  //
  // A regular file (or none) is replaced durably (base/file.h). A path that
  // is something else was named on purpose by whoever set
  // CLOUD_ML_HP_METRIC_FILE, and is written into as cloudml-hypertune's
  // open(path, 'w') writes into it, never replaced by a file: a device
  // (/dev/null, /dev/stdout; /dev/full fails with ENOSPC as in Python), a
  // FIFO with a reader; a symbolic link is followed (a link to a regular
  // file replaces that file durably). Refused with IOError naming it: a
  // FIFO nobody reads (Python would block until one does; a trainer stuck
  // there would idle a paid trial), a directory, a socket.
  Status Report(std::string_view tag, double value, int64_t global_step = 0,
                std::string_view checkpoint_path = "");
  // Report with global_step as a string, as cloudml-hypertune is given one
  // (a step a trainer printed): written as its str(int(global_step) if
  // global_step else 0), of any size ("99999999999999999999" stays those
  // digits); InvalidArgument, and nothing written, where Python's int()
  // raises ("12abc", "1.5"; base/python_number.h PythonIntText).
  Status ReportStepText(std::string_view tag, double value,
                        std::string_view global_step,
                        std::string_view checkpoint_path = "");

  const std::string& path() const { return path_; }
  const std::string& trial_id() const { return trial_id_; }

  // One line as cloudml-hypertune writes it (without the newline).
  static std::string FormatLine(std::string_view tag, double value,
                                int64_t global_step,
                                std::string_view checkpoint_path,
                                std::string_view trial_id, double timestamp);

 private:
  // Appends one report, its global_step already as digits, and rewrites
  // the file.
  Status Append(std::string_view tag, double value,
                std::string_view global_step, std::string_view checkpoint_path);

  std::string path_;
  std::string trial_id_;
  std::deque<std::string> lines_;
};

// What a metric file says, read back by `trialshim sweep` from a trial
// that may have written anything there. Lines that are not JSON objects are
// skipped; a report's value is NaN when it is not a number or a string
// holding one, its global_step 0 when it has none that fits in 64 bits (a
// string is read as Python's int() reads it: "12abc" is none), its
// timestamp 0 when it has none that is a number.
//
// The file is untrusted input, read through base's ReadFileTail: only a
// regular file (not a symbolic link, FIFO or device), without blocking, and
// at most its last MetricFileLimits::max_bytes; a line longer than max_line
// is skipped. What was refused or left out is said in MetricFile::problem.
struct MetricReport {
  double value = 0;
  int64_t global_step = 0;
  double timestamp = 0;  // Unix seconds
};
struct MetricFileLimits {
  // The last this many bytes of the file are read. cloudml-hypertune keeps
  // 100 reports of about 200 bytes. Default: 1 MiB.
  size_t max_bytes = 1 << 20;
  // A longer line is skipped. Default: 64 KiB.
  size_t max_line = 64 << 10;
};
struct MetricFile {
  bool exists = false;                  // whether something is at the path
  std::vector<MetricReport> reports;    // of the tag asked for, in file order
  std::vector<std::string> other_tags;  // metric tags reported instead (20 at
                                        // most, each cut to 100 bytes)
  // Why the file was not read, or only in part ("... is a FIFO, not a
  // regular file"; "... is 2147483648 bytes: only its last 1048576 were
  // read"; "... 1 line longer than 65536 bytes skipped"); empty when it was
  // read whole.
  std::string problem;
};
MetricFile ReadMetricFile(const std::string& path, std::string_view tag,
                          const MetricFileLimits& limits = {});

}  // namespace trialshim::hypertune

#endif  // TRIALSHIM_HYPERTUNE_HYPERTUNE_H_
