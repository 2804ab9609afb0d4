#include "trialshim/hypertune/hypertune.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "trialshim/base/number_format.h"

namespace trialshim::hypertune {
namespace {

// Appends `s` as a JSON string the way Python's json.dumps writes it with
// ensure_ascii=True: everything outside ' '..'~' becomes \uXXXX (lowercase
// hex, surrogate pairs above U+FFFF), with the short escapes Python uses.
void AppendPythonJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  auto append_u = [out](uint32_t u) {
    out->append("\\u");
    for (int shift = 12; shift >= 0; shift -= 4) {
      out->push_back(kHex[(u >> shift) & 0xF]);
    }
  };
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\b':
          out->append("\\b");
          break;
        case '\f':
          out->append("\\f");
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            append_u(c);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      continue;
    }
    // Decode one UTF-8 sequence; invalid bytes become U+FFFD (a Python str
    // can not hold them, so this only matters for garbage input).
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    uint32_t cp = 0xFFFD;
    if (len > 0 && i + len <= s.size()) {
      uint32_t v = c & (0x7F >> len);
      bool ok = true;
      for (int k = 1; k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) {
          ok = false;
          break;
        }
        v = (v << 6) | (cc & 0x3F);
      }
      if (ok) {
        cp = v;
        i += len;
      } else {
        ++i;
      }
    } else {
      ++i;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      append_u(0xD800 + (cp >> 10));
      append_u(0xDC00 + (cp & 0x3FF));
    } else {
      append_u(cp);
    }
  }
  out->push_back('"');
}

// mkdir -p that tolerates another process creating the same directories.
Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    std::string prefix = dir.substr(0, pos);
    if (prefix.empty()) continue;
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      return Status::IOError("cannot create directory '" + prefix +
                             "': " + std::strerror(errno));
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IOError("'" + dir + "' is not a directory");
  }
  return Status::Ok();
}

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("cannot write '" + path +
                             "': " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

HypertuneReporter HypertuneReporter::FromEnvironment() {
  const char* path = std::getenv("CLOUD_ML_HP_METRIC_FILE");
  const char* trial = std::getenv("CLOUD_ML_TRIAL_ID");
  // os.environ.get keeps an empty value, so only an unset variable defaults.
  return HypertuneReporter(path ? path : kDefaultMetricPath,
                           trial ? trial : "0");
}

HypertuneReporter::HypertuneReporter(std::string path, std::string trial_id)
    : path_(std::move(path)), trial_id_(std::move(trial_id)) {}

std::string HypertuneReporter::FormatLine(std::string_view tag, double value,
                                          int64_t global_step,
                                          std::string_view checkpoint_path,
                                          std::string_view trial_id,
                                          double timestamp) {
  if (tag.empty()) tag = kDefaultMetricTag;
  // Built in the reference's dict order, so a tag that collides with a fixed
  // key ("trial", "global_step") is overwritten exactly as in Python; the
  // bool marks a JSON number (only the timestamp).
  std::map<std::string, std::pair<bool, std::string>> body;
  body["timestamp"] = {true, FormatPythonFloat(timestamp)};
  body["trial"] = {false, std::string(trial_id)};
  body[std::string(tag)] = {false, FormatPythonFloat(value)};
  body["global_step"] = {false, std::to_string(global_step)};
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

Status HypertuneReporter::Report(std::string_view tag, double value,
                                 int64_t global_step,
                                 std::string_view checkpoint_path) {
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  lines_.push_back(
      FormatLine(tag, value, global_step, checkpoint_path, trial_id_, now));
  while (lines_.size() > kMaxMetricEntries) lines_.pop_front();

  std::string contents;
  for (const std::string& l : lines_) {
    contents.append(l);
    contents.push_back('\n');
  }

  size_t slash = path_.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash);
  TRIALSHIM_RETURN_IF_ERROR(MakeDirs(dir));

  // The temporary file sits beside the target so rename() is atomic. O_EXCL
  // with a per-process counter keeps concurrent writers apart; mode 0666 is
  // narrowed by the umask, as Python's open() would do.
  static std::atomic<int> counter{0};
  std::string base =
      slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::string tmp_prefix = (dir.empty() ? "" : dir + "/") + "." + base + ".tmp";
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = tmp_prefix + "." + std::to_string(getpid()) + "." +
          std::to_string(counter++);
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    return Status::IOError("cannot create '" + tmp +
                           "': " + std::strerror(errno));
  }
  Status written = WriteAll(fd, contents, tmp);
  if (close(fd) != 0 && written.ok()) {
    written =
        Status::IOError("cannot write '" + tmp + "': " + std::strerror(errno));
  }
  if (written.ok() && rename(tmp.c_str(), path_.c_str()) != 0) {
    written = Status::IOError("cannot rename '" + tmp + "' to '" + path_ +
                              "': " + std::strerror(errno));
  }
  if (!written.ok()) unlink(tmp.c_str());
  return written;
}

namespace {

// A report's global_step: cloudml-hypertune writes it as a string; anything
// that does not fit in 64 bits reads as 0 (a float cast would be undefined).
int64_t GlobalStep(const nlohmann::json& g) {
  if (g.is_string()) {
    return std::strtoll(g.get_ref<const std::string&>().c_str(), nullptr, 10);
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
    out.reports.push_back(report);
  }
  return out;
}

}  // namespace trialshim::hypertune
