// Logger: a subset of Python's logging.config.dictConfig, the part Hydra's
// job_logging configs use, with Python's record formatting.
#include "trialshim/app/logging.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/python_text.h"

namespace trialshim::app {
namespace {

// The fields a format may name, as Python's LogRecord has them.
const std::vector<std::string>& Fields() {
  static const std::vector<std::string> fields = {
      "asctime", "name", "levelname", "levelno", "message", "process"};
  return fields;
}

// Python's "%(key)<flags><width>[.<precision>]<s|d>" for one record.
struct Record {
  std::string asctime, name, levelname, message;
  int levelno = 0;
  long process = 0;
};

// Checks `format` (InvalidArgument naming the bad part) or, with `record`,
// formats it.
StatusOr<std::string> Format(const std::string& format, const Record* record,
                             const std::string& where) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t close = format.find(')', i);
    if (i + 1 >= format.size() || format[i + 1] != '(' ||
        close == std::string::npos) {
      return Status::InvalidArgument(where + ": '" + format +
                                     "' is not a %(name)s style format");
    }
    std::string key = format.substr(i + 2, close - i - 2);
    size_t spec_end = format.find_first_of("sd", close + 1);
    if (spec_end == std::string::npos) {
      return Status::InvalidArgument(where + ": '%(" + key +
                                     ")' has no conversion (s or d)");
    }
    std::string spec = format.substr(close + 1, spec_end - close - 1);
    if (std::find(Fields().begin(), Fields().end(), key) == Fields().end()) {
      return Status::InvalidArgument(where + ": %(" + key +
                                     ") is not supported" +
                                     DidYouMean(key, Fields()));
    }
    i = spec_end;
    if (record == nullptr) continue;
    std::string value = key == "asctime"     ? record->asctime
                        : key == "name"      ? record->name
                        : key == "levelname" ? record->levelname
                        : key == "message"   ? record->message
                        : key == "levelno"   ? std::to_string(record->levelno)
                                             : std::to_string(record->process);
    // Width and '-' (left-justify), as Python's %-formatting pads.
    bool left = spec.find('-') != std::string::npos;
    size_t width = 0;
    for (char c : spec) {
      if (c == '.') break;
      if (c >= '0' && c <= '9') width = width * 10 + static_cast<size_t>(c - '0');
    }
    if (size_t dot = spec.find('.'); dot != std::string::npos) {
      value = value.substr(0, std::strtoul(spec.c_str() + dot + 1, nullptr, 10));
    }
    if (value.size() < width) {
      std::string pad(width - value.size(), ' ');
      value = left ? value + pad : pad + value;
    }
    out += value;
  }
  return out;
}

// Python's asctime: "2026-11-24 02:14:02,044", or strftime(datefmt).
// Formatter.formatTime: default_time_format then default_msec_format
// ('%s,%03d'), the milliseconds truncated, in local time (time.localtime).
std::string AscTime(const std::string& datefmt) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  std::tm local{};
  localtime_r(&tv.tv_sec, &local);
  char buf[256];
  if (!datefmt.empty()) {
    size_t n = std::strftime(buf, sizeof buf, datefmt.c_str(), &local);
    return std::string(buf, n);
  }
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &local);
  char ms[8];
  std::snprintf(ms, sizeof ms, ",%03d", static_cast<int>(tv.tv_usec / 1000));
  return std::string(buf) + ms;
}

void WriteAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a log line is not worth failing the task for
    done += static_cast<size_t>(n);
  }
}

// logging._nameToLevel (logging/__init__.py), in its order.
const std::vector<std::pair<std::string, int>>& NameToLevel() {
  static const std::vector<std::pair<std::string, int>> names = {
      {"CRITICAL", 50}, {"FATAL", 50}, {"ERROR", 40}, {"WARN", 30},
      {"WARNING", 30},  {"INFO", 20},  {"DEBUG", 10}, {"NOTSET", 0}};
  return names;
}

}  // namespace

// logging._checkLevel: isinstance(level, int) (bools are ints) as it is;
// a str must be a key of _nameToLevel; anything else is a TypeError.
StatusOr<int> CheckLevel(const config::Node& n, const std::string& where) {
  if (n.is_bool()) return n.AsBool() ? 1 : 0;
  if (n.is_int()) {
    return static_cast<int>(std::clamp<int64_t>(n.AsInt(), INT_MIN, INT_MAX));
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : NameToLevel()) {
    if (n.is_string() && n.AsString() == name) return value;
    names.push_back(name);
  }
  const std::string expected =
      "a level is an int or one of " + JoinStrings(names, ", ") +
      " (Python's logging._nameToLevel, case-sensitive)";
  if (!n.is_string()) {
    return Status::InvalidArgument(where + ": level " + config::PythonRepr(n) +
                                   " is not an int or a level name; " +
                                   expected);
  }
  std::string upper = n.AsString();  // for the hint: names are upper case
  for (char& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return Status::InvalidArgument(where + ": unknown level '" + n.AsString() +
                                 "'" + DidYouMean(upper, names) + "; " +
                                 expected);
}

// logging.getLevelName: _levelToName has one name for each number, WARNING
// for 30 (WARN's too) and CRITICAL for 50 (FATAL's).
std::string LevelName(int level) {
  switch (level) {
    case 50:
      return "CRITICAL";
    case 40:
      return "ERROR";
    case 30:
      return "WARNING";
    case 20:
      return "INFO";
    case 10:
      return "DEBUG";
    case 0:
      return "NOTSET";
    default:
      return "Level " + std::to_string(level);
  }
}

StatusOr<Logger::Handler> Logger::MakeHandler(const config::Node& config,
                                              const std::string& name,
                                              const std::string& where,
                                              bool attached) {
  const std::string at = where + ".handlers." + name;
  const config::Node* h = config.Find("handlers." + name);
  if (h == nullptr || !h->is_map()) {
    return Status::InvalidArgument(at + " is not a handler's settings");
  }
  Handler out;
  out.format = "%(message)s";
  if (const config::Node* level = h->Get("level"); level && !level->is_null()) {
    TRIALSHIM_ASSIGN_OR_RETURN(out.level, CheckLevel(*level, at + ".level"));
  }
  if (const config::Node* f = h->Get("formatter"); f && f->is_string()) {
    const config::Node* fmt = config.Find("formatters." + f->AsString());
    if (fmt == nullptr || !fmt->is_map()) {
      return Status::InvalidArgument(at + ".formatter names '" + f->AsString() +
                                     "', which is not in " + where +
                                     ".formatters");
    }
    if (const config::Node* s = fmt->Get("format"); s && s->is_string()) {
      out.format = s->AsString();
    }
    if (const config::Node* d = fmt->Get("datefmt"); d && d->is_string()) {
      out.datefmt = d->AsString();
    }
  }
  TRIALSHIM_RETURN_IF_ERROR(
      Format(out.format, nullptr, where + ".formatters").status());
  const config::Node* cls = h->Get("class");
  std::string kind = cls && cls->is_string() ? cls->AsString() : "";
  // dictConfig builds StreamHandler(stream): no stream is sys.stderr.
  if (kind == "logging.StreamHandler") {
    const config::Node* stream = h->Get("stream");
    out.fd = stream && stream->is_string() &&
                     stream->AsString() == "ext://sys.stdout"
                 ? STDOUT_FILENO
                 : STDERR_FILENO;
    return out;
  }
  if (kind != "logging.FileHandler") {
    return Status::InvalidArgument(
        at + ".class '" + kind +
        "' is not supported (logging.StreamHandler, logging.FileHandler)");
  }
  const config::Node* file = h->Get("filename");
  const config::Node* mode = h->Get("mode");
  if (file == nullptr || !file->is_string()) {
    return Status::InvalidArgument(at + ".filename is missing");
  }
  // FileHandler's mode defaults to 'a'. Its delay: true (Hydra's
  // hydra_debug.yaml) would open the file at the first record; it is opened
  // here at once where a logger has the handler, and not at all where none
  // has (no record reaches it).
  const config::Node* delay = h->Get("delay");
  if (!attached && delay && delay->is_bool() && delay->AsBool()) return out;
  const bool truncate = mode && mode->is_string() && mode->AsString() == "w";
  // O_NONBLOCK: a FIFO nobody reads fails (ENXIO) rather than hanging the
  // app before its task; once open, writes block as Python's would.
  out.fd = open(file->AsString().c_str(),
                O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                    (truncate ? O_TRUNC : O_APPEND),
                0644);
  int flags = out.fd < 0 ? -1 : fcntl(out.fd, F_GETFL);
  if (flags < 0 || fcntl(out.fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    int err = errno;
    if (out.fd >= 0) close(out.fd);
    return Status::IOError("cannot open log file " + file->AsString() + ": " +
                           std::strerror(err));
  }
  out.owns_fd = true;
  return out;
}

// Hydra's configure_log (hydra/core/utils.py) skips dictConfig when root is
// null (hydra/job_logging=none), keeping Hydra's handlers. Else dictConfig
// (logging/config.py, non-incremental): every handler declared is built (a
// FileHandler opens its file, though no logger has it), in sorted order;
// common_logger_config gives root the level given (a null one is no
// level) and replaces all its handlers with those listed, none where
// `handlers` is absent (hydra/job_logging=disabled). Existing loggers not
// named are disabled, or enabled again, by disable_existing_loggers.
Status Logger::ApplyRoot(const config::Node& config, const std::string& where) {
  const config::Node* root = config.Get("root");
  if (root == nullptr || !root->is_map()) return Status::Ok();
  // Handlers built and not attached: closed on the way out.
  struct Built {
    std::map<std::string, Handler> handlers;  // sorted, as dictConfig
    ~Built() {
      for (auto& [name, h] : handlers) {
        if (h.owns_fd) close(h.fd);
      }
    }
  } built;
  if (const config::Node* all = config.Get("handlers"); all && all->is_map()) {
    const config::Node* listed = root->Get("handlers");
    for (const auto& [name, settings] : all->AsMap()) {
      bool attached = false;
      for (size_t i = 0; listed && listed->is_list() && i < listed->size();
           ++i) {
        attached |= listed->AsList()[i].is_string() &&
                    listed->AsList()[i].AsString() == name;
      }
      TRIALSHIM_ASSIGN_OR_RETURN(Handler h,
                                 MakeHandler(config, name, where, attached));
      built.handlers[name] = h;
    }
  }
  if (const config::Node* level = root->Get("level");
      level && !level->is_null()) {
    TRIALSHIM_ASSIGN_OR_RETURN(level_,
                               CheckLevel(*level, where + ".root.level"));
  }
  const config::Node* disable = config.Get("disable_existing_loggers");
  disabled_ = disable == nullptr || !disable->is_bool() || disable->AsBool();
  CloseHandlers();
  const config::Node* names = root->Get("handlers");
  if (names == nullptr || !names->is_list()) return Status::Ok();
  std::vector<std::string> attached;
  for (const config::Node& name : names->AsList()) {
    const std::string key = name.is_string() ? name.AsString() : "";
    if (std::find(attached.begin(), attached.end(), key) != attached.end()) {
      continue;  // addHandler adds a handler once
    }
    auto it = built.handlers.find(key);
    if (it == built.handlers.end()) {
      return Status::InvalidArgument(
          where + ".root.handlers names '" + config::PythonStr(name) +
          "', which is not in " + where + ".handlers");
    }
    handlers_.push_back(it->second);
    built.handlers.erase(it);
    attached.push_back(key);
  }
  return Status::Ok();
}

void Logger::CloseHandlers() {
  for (const Handler& h : handlers_) {
    if (h.owns_fd) close(h.fd);
  }
  handlers_.clear();
}

// configure_log: true sets the root logger to DEBUG; a name or a list of
// names, getLogger(name).setLevel(DEBUG) for each (a logger below it
// inherits DEBUG), and getLogger("root") is the root logger.
bool IsVerbose(const config::Node& verbose, const std::string& name) {
  if (verbose.is_bool()) return verbose.AsBool();
  // Python's getLogger(n).setLevel(DEBUG) reaches n's descendants.
  auto names = [&name](const config::Node& n) {
    if (!n.is_string()) return false;
    const std::string& s = n.AsString();
    return s == "root" || s == name || StartsWith(name, s + ".");
  };
  if (verbose.is_string()) return names(verbose);
  if (verbose.is_list()) {
    const auto& list = verbose.AsList();
    return std::any_of(list.begin(), list.end(), names);
  }
  return false;
}

StatusOr<std::unique_ptr<Logger>> Logger::FromConfig(
    const config::Node& hydra_logging, const config::Node& job_logging,
    const config::Node& verbose, std::string name) {
  std::unique_ptr<Logger> log(new Logger());
  log->name_ = std::move(name);
  // As Hydra: its own logging first, then the job's on top of it.
  TRIALSHIM_RETURN_IF_ERROR(log->ApplyRoot(hydra_logging, "hydra.hydra_logging"));
  TRIALSHIM_RETURN_IF_ERROR(log->ApplyRoot(job_logging, "hydra.job_logging"));
  if (IsVerbose(verbose, log->name_)) {
    log->level_ = static_cast<int>(Level::kDebug);
  }
  return log;
}

Logger::~Logger() { CloseHandlers(); }

void Logger::Log(Level level, std::string_view message) {
  const int n = static_cast<int>(level);
  if (disabled_ || n < level_) return;
  Record r;
  r.name = name_;
  r.levelname = LevelName(n);
  r.levelno = n;
  r.message = std::string(message);
  r.process = static_cast<long>(getpid());
  std::lock_guard<std::mutex> lock(mu_);
  if (handlers_.empty()) {
    // Python's lastResort handler: WARNING and above, the bare message.
    if (n >= static_cast<int>(Level::kWarning)) {
      WriteAll(STDERR_FILENO, r.message + "\n");
    }
    return;
  }
  for (const Handler& h : handlers_) {
    if (n < h.level) continue;
    r.asctime = AscTime(h.datefmt);
    StatusOr<std::string> line = Format(h.format, &r, "");
    if (line.ok()) WriteAll(h.fd, *line + "\n");
  }
}

}  // namespace trialshim::app
