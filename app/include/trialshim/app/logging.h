// Logging as a Hydra app's task logs: Python's logging configured from
// hydra.hydra_logging then hydra.job_logging (logging.config.dictConfig),
// for a C++ task.
//
// The handlers Hydra's configs use are honoured: logging.StreamHandler
// (stream ext://sys.stdout or ext://sys.stderr) and logging.FileHandler
// (filename, mode a|w), each with its formatter's format ("[%(asctime)s]
// [%(name)s][%(levelname)s] - %(message)s" by default: %(asctime)s,
// %(name)s, %(levelname)s, %(levelno)s, %(message)s, %(process)d with
// Python's width and flags) and datefmt, and their own level; root.level
// filters. Levels are what logging._checkLevel takes: an int or a name of
// logging._nameToLevel (WARN and FATAL too). A root given without handlers
// (hydra/job_logging=disabled) ends with none, as dictConfig leaves it: then
// WARNING and above go to stderr as bare messages, as Python's last-resort
// handler does. disable_existing_loggers (dictConfig's default: true)
// silences the logger, which stands for an app's module-level
// logging.getLogger(__name__), created before Hydra configures logging.
// hydra.verbose (true, or a list naming the logger) turns DEBUG on.
#ifndef TRIALSHIM_APP_LOGGING_H_
#define TRIALSHIM_APP_LOGGING_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::app {

// Python's levels.
enum class Level { kDebug = 10, kInfo = 20, kWarning = 30, kError = 40 };

// logging._checkLevel of a config value: an int (a bool is one, as in
// Python) as it is, a name of logging._nameToLevel (CRITICAL, FATAL, ERROR,
// WARN, WARNING, INFO, DEBUG, NOTSET; case-sensitive) as its number.
// InvalidArgument naming `where` otherwise. (dictConfig skips a null level:
// callers do.)
StatusOr<int> CheckLevel(const config::Node& level, const std::string& where);

// logging.getLevelName of a number: WARNING for 30 (also WARN's number),
// CRITICAL for 50 (FATAL's), "Level 25" for one without a name.
std::string LevelName(int level);

class Logger {
 public:
  // From the resolved hydra.hydra_logging and hydra.job_logging nodes,
  // applied in that order as Hydra applies them (a null root is skipped:
  // hydra/job_logging=none keeps Hydra's console handler; a root given
  // replaces the level it gives and all the handlers);
  // `verbose`: hydra.verbose; `name`: the logger's name (%(name)s).
  // InvalidArgument for a format or handler it can not honour, IOError (the
  // file and the reason) for a log file it can not open.
  static StatusOr<std::unique_ptr<Logger>> FromConfig(
      const config::Node& hydra_logging, const config::Node& job_logging,
      const config::Node& verbose, std::string name);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  void Log(Level level, std::string_view message);
  void Debug(std::string_view m) { Log(Level::kDebug, m); }
  void Info(std::string_view m) { Log(Level::kInfo, m); }
  void Warning(std::string_view m) { Log(Level::kWarning, m); }
  void Error(std::string_view m) { Log(Level::kError, m); }

 private:
  struct Handler {
    int fd = -1;
    bool owns_fd = false;
    std::string format;
    std::string datefmt;  // "" for Python's default asctime
    int level = 0;
  };
  Logger() = default;
  static StatusOr<Handler> MakeHandler(const config::Node& config,
                                       const std::string& name,
                                       const std::string& where, bool attached);
  Status ApplyRoot(const config::Node& config, const std::string& where);
  void CloseHandlers();

  std::string name_;
  int level_ = static_cast<int>(Level::kWarning);
  bool disabled_ = false;  // by disable_existing_loggers
  std::vector<Handler> handlers_;
  std::mutex mu_;
};

// Whether hydra.verbose turns DEBUG on for the Python logger `name`: true,
// or a name (or list of names) of that logger, of an ancestor ("hydra" for
// "hydra._internal.hydra") or "root".
bool IsVerbose(const config::Node& verbose, const std::string& name);

}  // namespace trialshim::app

#endif  // TRIALSHIM_APP_LOGGING_H_
