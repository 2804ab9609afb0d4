// Loggers: where the Trainer's logged metrics and hyperparameters go, as
// Lightning's loggers (lightning.pytorch.loggers, read at Lightning 2.6.2)
// write them, so that tools reading a Lightning run read ours.
//
// A Logger gets the Trainer's default_root_dir when the Trainer is made
// (set_default_save_dir), then, on the rank that writes files (rank 0):
// the module's hyperparameters at fit start (log_hyperparams, then save),
// one call per logged row (log_metrics: the metrics, the step, and the
// epoch the Trainer adds as Lightning's logger connector does), save() at
// the end of every epoch and after test, and finalize() when fit ends.
// Every directory is save_dir/name/version: name "" (or null) means none,
// version none means the next free "version_N" in save_dir/name (scanned
// as Lightning scans it, on first use), a number N means "version_N", a
// string is the directory's own name. gs:// save dirs map to /gcs/
// (MapGcsUri).
//
//   CsvLogger (lightning.pytorch.loggers.CSVLogger): metrics.csv, written
//     as Lightning's ExperimentWriter writes it (csv.DictWriter: one row per
//     log call, the sorted union of keys as header, "step" added, "\r\n",
//     floats as Python's repr), and hparams.yaml beside it (as
//     save_hparams_to_yaml writes it through OmegaConf).
//   TensorBoardLogger (lightning.pytorch.loggers.TensorBoardLogger):
//     events.out.tfevents.<time>.<host>.<pid>.<n> (TFRecord framing, Event
//     protos: brain.Event:2, then one scalar summary per metric and step;
//     hyperparameters flattened with '/' as the hparams plugin's three
//     summaries, with hp_metric = -1, as torch's summary.hparams makes
//     them: a bool is a number there), and hparams.yaml.
//
// Where ours differ from Lightning's, on purpose:
//   - save_dir may be left out: the Trainer's default_root_dir (for the
//     TensorBoardLogger on Vertex, $AIP_TENSORBOARD_LOG_DIR when set).
//   - metrics.csv is replaced durably (base/file.h) rather than appended,
//     at flush_logs_every_n_steps, at every epoch end, after test and at
//     the end (Lightning's trainer also saves after every log call; a
//     durable rewrite each time would cost an fsync per call). The event
//     file is appended and flushed as SummaryWriter flushes it, and
//     fsync'd at every save().
//   - A resumed fit: a CsvLogger whose metrics.csv exists (a fixed
//     version, e.g. the default logger) keeps the rows before the
//     checkpoint's step, so a preempted run's file ends as an uninterrupted
//     one's (Lightning starts that file anew); a TensorBoardLogger writes a
//     SessionLog START at that step, as TensorFlow's writers mark a
//     restart, so TensorBoard drops what the killed run logged after it.
//   - TensorBoardLogger: no log_graph (refused when true), no $VARS or ~
//     expansion in the directory; of SummaryWriter's keywords max_queue,
//     flush_secs and filename_suffix are honoured, others refused; the
//     first event's source_metadata names this writer.
//
// Loggers are driven from one thread; none is thread-safe.
#ifndef TRIALSHIM_TRAINER_LOGGERS_H_
#define TRIALSHIM_TRAINER_LOGGERS_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/instantiate.h"
#include "trialshim/config/node.h"

namespace trialshim::trainer {

class Logger {
 public:
  virtual ~Logger() = default;

  // Lightning's properties. version() is the directory's version ("3" for
  // version_3, or the string given); the first call of version() or
  // log_dir() picks the next free version when none was given.
  virtual std::string name() const = 0;
  virtual std::string version() = 0;
  virtual std::string save_dir() const = 0;
  virtual std::string log_dir() = 0;

  // The Trainer's default_root_dir, before any other call (when the
  // Trainer is made): the save_dir of a logger made without one. Default:
  // ignored.
  virtual void set_default_save_dir(const std::string& dir) { (void)dir; }
  // Fit resumed from a checkpoint at `global_step` (before log_hyperparams).
  // Default: nothing.
  virtual Status resume(int64_t global_step) {
    (void)global_step;
    return Status::Ok();
  }
  // A map of hyperparameters (nested maps and lists allowed).
  virtual Status log_hyperparams(const config::Node& params) = 0;
  // One row of metrics at `step`; `epoch` (an int) is logged as "epoch".
  virtual Status log_metrics(const std::map<std::string, double>& metrics,
                             int64_t step, std::optional<int64_t> epoch) = 0;
  // Writes what was logged.
  virtual Status save() = 0;
  // The run ended: "success", "failed" or "interrupted".
  virtual Status finalize(const std::string& status) = 0;
};

// Lightning's `version`: none (the next free version_N), a number N
// (version_N) or the directory's name.
using LoggerVersion = std::variant<std::monostate, int64_t, std::string>;

// What CsvLogger and TensorBoardLogger share: the directory and the prefix.
struct LoggerDirOptions {
  // Where the name/version directories go. "": the Trainer's
  // default_root_dir. Default: "".
  std::string save_dir;
  // The experiment's directory under save_dir; "" for none (Lightning's
  // None). Default: "lightning_logs".
  std::string name = "lightning_logs";
  // Default: none (the next free version_N).
  LoggerVersion version;
  // Put before every metric name with "-" ("train" -> "train-loss").
  // Default: "".
  std::string prefix;
};

// The next free version under `dir`, as Lightning's _get_next_version:
// 1 + the largest N of the subdirectories named "version_N..." (the text
// between the first and second '_' all digits), 0 when there are none or
// `dir` can not be listed.
int64_t NextLoggerVersion(const std::string& dir);

// Python's os.path.join: a part that starts with '/' restarts the path;
// "" parts add a trailing '/' ("a", "" -> "a/").
std::string PathJoin(const std::vector<std::string>& parts);

// A Logger with Lightning's save_dir/name/version directory.
class DirLogger : public Logger {
 public:
  explicit DirLogger(LoggerDirOptions options);
  std::string name() const override { return options_.name; }
  std::string version() override;
  std::string save_dir() const override { return save_dir_; }
  std::string log_dir() override;
  void set_default_save_dir(const std::string& dir) override;

 protected:
  // `metrics` with the prefix on every name.
  std::map<std::string, double> Prefixed(
      const std::map<std::string, double>& metrics) const;
  // The epoch's name after the prefix ("epoch", "train-epoch").
  std::string EpochName() const;

 private:
  LoggerDirOptions options_;
  std::string save_dir_;
  std::optional<std::string> version_;  // resolved
};

// metrics.csv, exactly as Lightning's CSVLogger writes it: one row per
// logging call, columns sorted by name (the epoch, "step" and the
// metrics), empty cells for metrics not in that row, floats as Python's
// repr, rows as csv.DictWriter ends them ("\r\n"). Each Flush replaces the
// file durably (base/file.h), so a reader or a restart never sees half a
// file.
class MetricsCsv {
 public:
  // `epoch_column`: the epoch's name ("epoch", or with the logger's prefix).
  explicit MetricsCsv(std::string path, std::string epoch_column = "epoch")
      : path_(std::move(path)), epoch_column_(std::move(epoch_column)) {}

  // One row: the epoch (an empty cell when none) and step plus the metrics.
  void Add(std::optional<int64_t> epoch, int64_t step,
           const std::map<std::string, double>& metrics);
  // Replaces the file durably (base/file.h), creating its directory.
  // IOError names the file and the reason.
  Status Flush() const;
  // On a resume that writes to the same file: its rows logged before
  // `global_step` (the checkpoint's) become this log's first rows; rows
  // past it are dropped, since the resumed run logs those steps again. A
  // missing file is no error; one that does not read as ours is DataLoss,
  // naming it.
  Status Resume(int64_t global_step);
  const std::string& path() const { return path_; }
  size_t rows() const { return rows_.size(); }
  // The file's text as Flush writes it.
  std::string Render() const;

 private:
  struct Row {
    int64_t step;
    std::map<std::string, std::string> cells;  // as Python prints them
  };
  std::string path_;
  std::string epoch_column_;
  std::vector<Row> rows_;
  std::set<std::string> keys_;
};

struct CsvLoggerOptions : LoggerDirOptions {
  // Write metrics.csv when (step + 1) is a multiple of this, besides the
  // Trainer's save() calls. Default: 100.
  int64_t flush_logs_every_n_steps = 100;
};

class CsvLogger : public DirLogger {
 public:
  explicit CsvLogger(CsvLoggerOptions options);
  Status resume(int64_t global_step) override;
  // Merges `params` (a map) into the logged ones and rewrites hparams.yaml.
  Status log_hyperparams(const config::Node& params) override;
  Status log_metrics(const std::map<std::string, double>& metrics, int64_t step,
                     std::optional<int64_t> epoch) override;
  Status save() override;
  Status finalize(const std::string& status) override;

 private:
  // Lightning's `experiment`: creates log_dir and the writer on first use
  // (a metrics.csv left there by an earlier run is replaced on the first
  // save, unless resume() continued it).
  StatusOr<MetricsCsv*> Experiment();

  int64_t flush_every_;
  std::optional<MetricsCsv> csv_;
  config::Node hparams_ = config::Node::MakeMap();
};

struct TensorBoardLoggerOptions : LoggerDirOptions {
  // Log hp_metric = -1 with the hyperparameters, so that TensorBoard's
  // hparams view shows the run before any metric. Default: true.
  bool default_hp_metric = true;
  // A directory under save_dir/name/version for the event file. Default:
  // "" (none).
  std::string sub_dir;
  // SummaryWriter's: flush after this many events or seconds, and a suffix
  // for the event file's name. Defaults: 10, 120, "".
  int64_t max_queue = 10;
  double flush_secs = 120;
  std::string filename_suffix;
};

class TensorBoardLogger : public DirLogger {
 public:
  explicit TensorBoardLogger(TensorBoardLoggerOptions options);
  ~TensorBoardLogger() override;  // closes the event file
  TensorBoardLogger(const TensorBoardLogger&) = delete;
  TensorBoardLogger& operator=(const TensorBoardLogger&) = delete;
  // On Vertex, $AIP_TENSORBOARD_LOG_DIR (gs:// mapped) wins over `dir`.
  void set_default_save_dir(const std::string& dir) override;
  std::string log_dir() override;
  // The event file ("" before the first event).
  const std::string& event_file() const { return path_; }
  Status resume(int64_t global_step) override;
  Status log_hyperparams(const config::Node& params) override;
  Status log_metrics(const std::map<std::string, double>& metrics, int64_t step,
                     std::optional<int64_t> epoch) override;
  Status save() override;
  Status finalize(const std::string& status) override;

 private:
  // Opens the event file on first use and writes its file_version event.
  Status Open();
  // Frames one serialized Event as a TFRecord and queues it.
  Status Write(const std::string& event);
  Status Flush();

  TensorBoardLoggerOptions tb_;
  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t queued_ = 0;
  double last_flush_ = 0;
  config::Node hparams_ = config::Node::MakeMap();
};

// The Trainer's logger=true: a CsvLogger writing
// <default_root_dir>/metrics.csv (name "", version ""), where this trainer
// always wrote it, and on Vertex with $AIP_TENSORBOARD_LOG_DIR set (the job
// asked for Vertex TensorBoard) a TensorBoardLogger writing straight into
// that directory. Lightning's default is one TensorBoardLogger under
// default_root_dir/lightning_logs/version_N (a CsvLogger there when
// tensorboard is not installed); the tuning tools and earlier runs read
// metrics.csv where it is, so it stays.
std::vector<std::shared_ptr<Logger>> DefaultLoggers();

// Registers CSVLogger and TensorBoardLogger under lightning.pytorch.loggers
// and pytorch_lightning.loggers (also .csv_logs.CSVLogger and
// .tensorboard.TensorBoardLogger), with Lightning's keyword names, made as
// Logger. Unknown keywords are refused with did-you-mean.
Status RegisterLoggerTargets(config::Registry* registry);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_LOGGERS_H_
