#include "trialshim/hypertune/hypertune.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/base/python_text.h"

namespace trialshim::hypertune {

HypertuneReporter HypertuneReporter::FromEnvironment() {
  const char* path = std::getenv("CLOUD_ML_HP_METRIC_FILE");
  const char* trial = std::getenv("CLOUD_ML_TRIAL_ID");
  // os.environ.get keeps an empty value, so only an unset variable defaults.
  return HypertuneReporter(path ? path : kDefaultMetricPath,
                           trial ? trial : "0");
}

HypertuneReporter::HypertuneReporter(std::string path, std::string trial_id)
    : path_(std::move(path)), trial_id_(std::move(trial_id)) {}

namespace {

// FormatLine with global_step as the digits str(int(global_step)) gives.
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
  // str(int(global_step) if global_step else 0)
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
  lines_.push_back(
      Line(tag, value, global_step, checkpoint_path, trial_id_, now));
  while (lines_.size() > kMaxMetricEntries) lines_.pop_front();

  std::string contents;
  for (const std::string& l : lines_) {
    contents.append(l);
    contents.push_back('\n');
  }

  size_t slash = path_.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash);
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));

  // Mode 0666 is narrowed by the umask, as Python's open() would do.
  return WriteFileDurably(path_, contents, 0666);
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

MetricFile ReadMetricFile(const std::string& path, std::string_view tag) {
  static const char* const kNotMetrics[] = {"timestamp", "trial", "global_step",
                                            "checkpoint_path"};
  MetricFile out;
  std::ifstream in(path);
  out.exists = static_cast<bool>(in);
  std::string line;
  while (std::getline(in, line)) {
    auto entry =
        nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object()) continue;
    auto it = entry.find(tag);
    if (it == entry.end()) {
      for (const auto& [key, value] : entry.items()) {
        if (std::find(std::begin(kNotMetrics), std::end(kNotMetrics), key) ==
                std::end(kNotMetrics) &&
            std::find(out.other_tags.begin(), out.other_tags.end(), key) ==
                out.other_tags.end()) {
          out.other_tags.push_back(key);
        }
      }
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
  return out;
}

}  // namespace trialshim::hypertune
