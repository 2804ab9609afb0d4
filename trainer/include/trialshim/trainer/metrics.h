// Logged metrics: how Module::log values are aggregated (the loggers that
// write them are in loggers.h).
//
// MetricStore follows Lightning's rules. A value logged with on_step is
// kept for the current step; with on_epoch it is averaged over the epoch,
// weighted by batch size. Logged with both, the names get "_step" and
// "_epoch" suffixes. Defaults depend on the stage: training logs on_step,
// validation and test log on_epoch.
//
// MetricStore is not thread-safe.
#ifndef TRIALSHIM_TRAINER_METRICS_H_
#define TRIALSHIM_TRAINER_METRICS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::trainer {

// Options of one Module::log call; unset fields take the stage's default.
struct LogOptions {
  // Keep the value of this step (training default: true; else false).
  std::optional<bool> on_step;
  // Average over the epoch (training default: false; else true).
  std::optional<bool> on_epoch;
  // Show on the progress bar and in the per-epoch log line. Default: false.
  bool prog_bar = false;
  // Under trainer.strategy=ddp, average the value over all ranks before it
  // is logged (else rank 0's own value is). Validation metrics are always
  // averaged. Default: false.
  bool sync_dist = false;

  LogOptions& SyncDist(bool v) {
    sync_dist = v;
    return *this;
  }
  LogOptions& OnStep(bool v) {
    on_step = v;
    return *this;
  }
  LogOptions& OnEpoch(bool v) {
    on_epoch = v;
    return *this;
  }
  LogOptions& ProgBar(bool v) {
    prog_bar = v;
    return *this;
  }
};

enum class Stage { kTrain, kValidate, kTest, kSanity };

class MetricStore {
 public:
  // Starts a step of `stage` over a batch of `batch_size` rows.
  void BeginStep(Stage stage, int64_t batch_size);
  void Log(const std::string& name, double value, const LogOptions& options);

  // The on_step values logged since BeginStep (suffixed names).
  const std::map<std::string, double>& step_values() const { return step_; }
  // The epoch means of `stage` so far (suffixed names).
  std::map<std::string, double> EpochValues(Stage stage) const;
  void ResetEpoch(Stage stage);
  // Names logged with prog_bar.
  const std::set<std::string>& prog_bar() const { return prog_bar_; }
  // Names logged with sync_dist.
  const std::set<std::string>& sync_dist() const { return sync_dist_; }

  // The training epoch's running sums, for a mid-epoch checkpoint.
  nlohmann::json State() const;
  Status LoadState(const nlohmann::json& state);

 private:
  struct Mean {
    double sum = 0;
    double weight = 0;
  };
  Stage stage_ = Stage::kTrain;
  int64_t batch_size_ = 1;
  std::map<std::string, double> step_;
  std::map<Stage, std::map<std::string, Mean>> epoch_;
  std::set<std::string> prog_bar_;
  std::set<std::string> sync_dist_;
};

// "name=value" pairs with 4 significant digits, space separated: the
// metrics of the per-epoch log line and the progress bar.
std::string JoinMetrics(const std::map<std::string, double>& metrics);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_METRICS_H_
