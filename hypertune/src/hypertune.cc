#include "trialshim/hypertune/hypertune.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/base/python_number.h"
#include "trialshim/base/python_text.h"

namespace trialshim::hypertune {

// cloudml-hypertune's HyperTune.__init__ (hypertune/hypertune.py) reads
// the same two variables; the trial id is written as str() of what it read,
// so the default is "0", the str() of its default 0.
HypertuneReporter HypertuneReporter::FromEnvironment() {
  const char* path = std::getenv("CLOUD_ML_HP_METRIC_FILE");
  const char* trial = std::getenv("CLOUD_ML_TRIAL_ID");
  // os.environ.get keeps an empty value, so only an unset variable defaults.
  return HypertuneReporter(path ? path : kDefaultMetricPath,
                           trial ? trial : "0");
}

namespace {

// Writes `contents` into what `path` names, as open(path, 'w') does, for a
// path that is not a regular file (see Report in hypertune.h): the open
// never blocks (a FIFO without a reader is ENXIO), then the writes do as
// Python's would.
Status WriteInto(const std::string& path, std::string_view contents) {
  int fd = open(path.c_str(),
                O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                0666);
  if (fd < 0) {
    if (errno == ENXIO) {
      return Status::IOError(
          "cannot write " + path +
          ": it is a FIFO that no process reads, or a socket (a trainer "
          "would wait there for ever)");
    }
    return IOErrorFor("write", path, errno);
  }
  Status st;
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    st = IOErrorFor("write", path, errno);
  }
  while (st.ok() && !contents.empty()) {
    ssize_t n = write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      st = IOErrorFor("write", path, errno);
      break;
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  if (close(fd) != 0 && st.ok()) st = IOErrorFor("write", path, errno);
  return st;
}

// The metric file: replaced durably where it is a regular file or absent;
// else written into, never replaced (hypertune.h, Report). A durable
// replace would turn /dev/null into a regular file (as root, for everyone).
Status WriteMetricFile(const std::string& path, std::string_view contents) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) {
    return WriteFileDurably(path, contents, 0666);
  }
  if (S_ISLNK(st.st_mode) && stat(path.c_str(), &st) == 0 &&
      S_ISREG(st.st_mode)) {
    // Python writes the link's target; so do we, durably, keeping the link.
    char* target = realpath(path.c_str(), nullptr);
    if (target == nullptr) return IOErrorFor("write", path, errno);
    std::string resolved = target;
    free(target);
    return WriteFileDurably(resolved, contents, 0666);
  }
  return WriteInto(path, contents);
}

}  // namespace

HypertuneReporter::HypertuneReporter(std::string path, std::string trial_id)
    : path_(std::move(path)), trial_id_(std::move(trial_id)) {}

namespace {

// FormatLine with global_step as the digits str(int(global_step)) gives.
// report_hyperparameter_tuning_metric's metric_body: every value a string
// but the timestamp (time.time(), a JSON number), the metric as
// str(float(value)) so that "nan" and "inf" survive JSON; then
// _dump_metrics_to_file's json.dumps(metric, sort_keys=True): ", " and ": "
// separators, and ensure_ascii: a non-ASCII tag is written as \uXXXX.
std::string Line(std::string_view tag, double value,
                 std::string_view global_step, std::string_view checkpoint_path,
                 std::string_view trial_id, double timestamp) {
  if (tag.empty()) tag = kDefaultMetricTag;
  // Built in the reference's dict order, so a tag that collides with a fixed
  // key ("trial", "global_step") is overwritten exactly as in Python; the
  // bool marks a JSON number (only the timestamp).
  std::map<std::string, std::pair<bool, std::string>> body;
  body["timestamp"] = {true, FormatPythonFloat(timestamp)};
  body["trial"] = {false, std::string(trial_id)};
  body[std::string(tag)] = {false, FormatPythonFloat(value)};
  body["global_step"] = {false, std::string(global_step)};
  body["checkpoint_path"] = {false, std::string(checkpoint_path)};
  std::string line = "{";
  bool first = true;
  for (const auto& [key, val] : body) {  // std::map: byte order == code point
    if (!first) line.append(", ");
    first = false;
    AppendPythonJsonString(key, &line);
    line.append(": ");
    if (val.first) {
      line.append(val.second);
    } else {
      AppendPythonJsonString(val.second, &line);
    }
  }
  line.push_back('}');
  return line;
}

}  // namespace

std::string HypertuneReporter::FormatLine(std::string_view tag, double value,
                                          int64_t global_step,
                                          std::string_view checkpoint_path,
                                          std::string_view trial_id,
                                          double timestamp) {
  return Line(tag, value, std::to_string(global_step), checkpoint_path,
              trial_id, timestamp);
}

Status HypertuneReporter::Report(std::string_view tag, double value,
                                 int64_t global_step,
                                 std::string_view checkpoint_path) {
  return Append(tag, value, std::to_string(global_step), checkpoint_path);
}

Status HypertuneReporter::ReportStepText(std::string_view tag, double value,
                                         std::string_view global_step,
                                         std::string_view checkpoint_path) {
  // str(int(global_step) if global_step else 0): "" is falsy, so it is 0
  // as None is; anything else goes through int().
  StatusOr<std::string> digits =
      global_step.empty() ? std::string("0") : PythonIntText(global_step);
  if (!digits.ok()) return digits.status().WithPrefix("global_step");
  return Append(tag, value, *digits, checkpoint_path);
}

Status HypertuneReporter::Append(std::string_view tag, double value,
                                 std::string_view global_step,
                                 std::string_view checkpoint_path) {
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  // metrics_queue is a deque(maxlen=100): the oldest report falls out, and
  // every report rewrites the file with the whole queue.
  lines_.push_back(
      Line(tag, value, global_step, checkpoint_path, trial_id_, now));
  while (lines_.size() > kMaxMetricEntries) lines_.pop_front();

  std::string contents;
  for (const std::string& l : lines_) {
    contents.append(l);
    contents.push_back('\n');
  }

  // HyperTune() makes the directory once, with os.makedirs(dirname); we
  // make it at each report, so one removed meanwhile comes back. A bare
  // file name ("out.metrics") is written in the working directory, where
  // Python's os.makedirs('') raises FileNotFoundError in HyperTune().
  size_t slash = path_.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash);
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));

  // Mode 0666 is narrowed by the umask, as Python's open() would do.
  return WriteMetricFile(path_, contents);
}

namespace {

// A report's global_step: cloudml-hypertune writes it as a string,
// str(int(step)), so a string is read as int() reads it; anything that is no
// integer or does not fit in 64 bits reads as 0 (a float cast would be
// undefined).
int64_t GlobalStep(const nlohmann::json& g) {
  if (g.is_string()) {
    StatusOr<std::string> digits =
        PythonIntText(g.get_ref<const std::string&>());
    int64_t step = 0;
    if (!digits.ok() ||
        std::from_chars(digits->data(), digits->data() + digits->size(), step)
                .ec != std::errc()) {
      return 0;
    }
    return step;
  }
  if (g.is_number_unsigned()) {
    uint64_t u = g.get<uint64_t>();
    return u <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(u) : 0;
  }
  if (g.is_number_integer()) return g.get<int64_t>();
  if (g.is_number_float()) {
    double d = g.get<double>();
    return d >= -9.2e18 && d <= 9.2e18 ? static_cast<int64_t>(d) : 0;
  }
  return 0;
}

// The value as cloudml-hypertune writes it, str(float(v)), which strtod
// reads back exactly ("nan", "inf", "1e-05"; repr round-trips); a JSON
// number too, for files another writer made.
double MetricValue(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    char* end = nullptr;
    double value = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return value;
  }
  return NAN;
}

}  // namespace

namespace {

constexpr size_t kMaxOtherTags = 20;
constexpr size_t kMaxTagShown = 100;

// Adds the metric tags of `entry` (a report of another tag) to `tags`: its
// keys but the four that metric_body always has.
void AddOtherTags(const nlohmann::json& entry, std::vector<std::string>* tags) {
  static const char* const kNotMetrics[] = {"timestamp", "trial", "global_step",
                                            "checkpoint_path"};
  for (const auto& [key, value] : entry.items()) {
    if (tags->size() >= kMaxOtherTags) return;
    if (std::find(std::begin(kNotMetrics), std::end(kNotMetrics), key) !=
        std::end(kNotMetrics)) {
      continue;
    }
    std::string shown = key.size() <= kMaxTagShown
                            ? key
                            : key.substr(0, kMaxTagShown) + "...";
    if (std::find(tags->begin(), tags->end(), shown) == tags->end()) {
      tags->push_back(std::move(shown));
    }
  }
}

}  // namespace

MetricFile ReadMetricFile(const std::string& path, std::string_view tag,
                          const MetricFileLimits& limits) {
  MetricFile out;
  StatusOr<FileTail> tail = ReadFileTail(path, limits.max_bytes);
  if (!tail.ok()) {
    out.exists = tail.status().code() != StatusCode::kNotFound;
    if (out.exists) out.problem = tail.status().message() + "; not read";
    return out;
  }
  out.exists = true;
  std::string_view text = tail->data;
  size_t too_long = 0;
  if (tail->cut()) {
    out.problem = path + " is " + std::to_string(tail->size) +
                  " bytes: only its last " + std::to_string(text.size()) +
                  " were read";
    // What comes before the first newline is the end of a line cut short;
    // with no newline at all, the tail is part of one line longer than it.
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) ++too_long;
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.size() > limits.max_line) {
      ++too_long;
      continue;
    }
    auto entry =
        nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object()) continue;
    auto it = entry.find(tag);
    if (it == entry.end()) {
      AddOtherTags(entry, &out.other_tags);
      continue;
    }
    MetricReport report;
    report.value = MetricValue(*it);
    if (auto g = entry.find("global_step"); g != entry.end()) {
      report.global_step = GlobalStep(*g);
    }
    if (auto ts = entry.find("timestamp");
        ts != entry.end() && ts->is_number()) {
      report.timestamp = ts->get<double>();
    }
    out.reports.push_back(report);
  }
  if (too_long > 0) {
    out.problem += (out.problem.empty() ? path + ": " : "; ") +
                   std::to_string(too_long) +
                   (too_long == 1 ? " line" : " lines") + " longer than " +
                   std::to_string(limits.max_line) + " bytes skipped";
  }
  return out;
}

}  // namespace trialshim::hypertune
