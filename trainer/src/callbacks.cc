// The built-in callbacks from the `callbacks:` config (CallbacksFromConfig).
// The callbacks themselves: model_checkpoint.cc (with checkpoint_name.cc),
// early_stopping.cc, lr_monitor.cc, model_summary.cc, progress_bar.cc.
#include "trialshim/trainer/callbacks.h"

#include <optional>

#include "node_read.h"
#include "trialshim/trainer/options.h"

namespace trialshim::trainer {

namespace {

StatusOr<Mode> ModeOf(const internal::MapReader& r, const std::string& prefix) {
  std::string m = "min";
  TRIALSHIM_RETURN_IF_ERROR(r.String("mode", &m));
  if (m == "min") return Mode::kMin;
  if (m == "max") return Mode::kMax;
  return Status::InvalidArgument(prefix + ".mode: expected min|max, got '" +
                                 m + "'");
}

// A number or null (unset), for Lightning's Optional[float] keywords.
Status OptionalDouble(const internal::MapReader& r, const config::Node& node,
                      const std::string& key, std::optional<double>* out) {
  const config::Node* v = node.Get(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  double d = 0;
  TRIALSHIM_RETURN_IF_ERROR(r.Double(key, &d));
  *out = d;
  return Status::Ok();
}

// ModelCheckpoint's triggers: every_n_train_steps, every_n_epochs and
// train_time_interval (a duration as trainer.max_time; 0 when unset).
Status ReadTriggers(const internal::MapReader& r, const config::Node& node,
                    const std::string& prefix, int64_t* steps,
                    int64_t* epochs, double* interval) {
  TRIALSHIM_RETURN_IF_ERROR(r.Int("every_n_train_steps", steps));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("every_n_epochs", epochs));
  const config::Node* time = node.Get("train_time_interval");
  const bool by_time = time != nullptr && !time->is_null();
  if (by_time) {
    TRIALSHIM_RETURN_IF_ERROR(
        ParseDuration(*time, prefix + ".train_time_interval", interval));
  }
  // Lightning's __init_triggers: every_n_epochs is 1 when no trigger is
  // set (null is unset); those that fire exclude each other.
  auto set = [&](const char* key) {
    const config::Node* v = node.Get(key);
    return v != nullptr && !v->is_null();
  };
  if (!set("every_n_train_steps") && !set("every_n_epochs") && !by_time) {
    *epochs = 1;
  }
  if (*steps < 0 || *epochs < 0) {
    return Status::InvalidArgument(
        prefix + ": every_n_train_steps and every_n_epochs must be >= 0");
  }
  if ((*steps >= 1) + (*epochs >= 1) + (by_time ? 1 : 0) > 1) {
    return Status::InvalidArgument(
        prefix + ": every_n_train_steps=" + std::to_string(*steps) +
        ", every_n_epochs=" + std::to_string(*epochs) +
        " and train_time_interval should be mutually exclusive (as in "
        "Lightning)");
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<Callback>> MakeModelCheckpoint(
    const config::Node& node, const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
      {"dirpath", "filename", "monitor", "verbose", "save_last", "save_top_k",
       "save_weights_only", "mode", "auto_insert_metric_name",
       "every_n_train_steps", "train_time_interval", "every_n_epochs",
       "save_on_train_epoch_end", "enable_version_counter"}));
  ModelCheckpointOptions o;
  std::string dirpath, filename, monitor;
  int64_t top_k = 1, steps = 0, epochs = 0;
  bool weights_only = false, auto_insert = true, verbose = false,
       versions = true, on_epoch_end = true;
  TRIALSHIM_RETURN_IF_ERROR(r.String("dirpath", &dirpath));
  TRIALSHIM_RETURN_IF_ERROR(r.String("filename", &filename));
  TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &monitor));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("save_top_k", &top_k));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_weights_only", &weights_only));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("auto_insert_metric_name", &auto_insert));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("verbose", &verbose));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("enable_version_counter", &versions));
  // The epoch's validation ends before its on_train_epoch_end, so saving
  // after it (false) and at the epoch's end (true, null) is one point.
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_on_train_epoch_end", &on_epoch_end));
  TRIALSHIM_ASSIGN_OR_RETURN(Mode mode, ModeOf(r, prefix));
  TRIALSHIM_RETURN_IF_ERROR(CheckCheckpointFilename(filename, auto_insert)
                                .WithPrefix(prefix + ".filename"));
  if (top_k < -1) {
    return Status::InvalidArgument(prefix + ".save_top_k: expected -1, 0 or "
                                   "more, got " + std::to_string(top_k));
  }
  const config::Node* last = node.Get("save_last");
  if (last != nullptr && last->is_string() && last->AsString() == "link") {
    o.save_last(true).save_last_link(true);
  } else if (last != nullptr && !last->is_null()) {
    bool v = true;
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_last", &v));
    o.save_last(v);
  }
  double interval = 0;
  TRIALSHIM_RETURN_IF_ERROR(
      ReadTriggers(r, node, prefix, &steps, &epochs, &interval));
  return std::shared_ptr<Callback>(std::make_shared<ModelCheckpoint>(
      o.dirpath(MapGcsUri(dirpath))
          .filename(filename)
          .auto_insert_metric_name(auto_insert)
          .monitor(monitor)
          .mode(mode)
          .save_top_k(top_k)
          .save_weights_only(weights_only)
          .every_n_epochs(epochs)
          .every_n_train_steps(steps)
          .train_time_interval(interval)
          .verbose(verbose)
          .enable_version_counter(versions)));
}

StatusOr<std::shared_ptr<Callback>> MakeEarlyStopping(
    const config::Node& node, const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
      {"monitor", "min_delta", "patience", "verbose", "mode", "strict",
       "check_finite", "stopping_threshold", "divergence_threshold",
       "check_on_train_epoch_end", "log_rank_zero_only"}));
  EarlyStoppingOptions o;
  std::string monitor = "val_loss";
  int64_t patience = 3;
  double min_delta = 0;
  bool check_finite = true, strict = true, verbose = false, rank_zero = false;
  std::optional<double> stop_at, diverge_at;
  TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &monitor));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("patience", &patience));
  TRIALSHIM_RETURN_IF_ERROR(r.Double("min_delta", &min_delta));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("check_finite", &check_finite));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("strict", &strict));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("verbose", &verbose));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("log_rank_zero_only", &rank_zero));
  TRIALSHIM_RETURN_IF_ERROR(
      OptionalDouble(r, node, "stopping_threshold", &stop_at));
  TRIALSHIM_RETURN_IF_ERROR(
      OptionalDouble(r, node, "divergence_threshold", &diverge_at));
  const config::Node* on_epoch = node.Get("check_on_train_epoch_end");
  if (on_epoch != nullptr && !on_epoch->is_null()) {
    bool v = false;
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("check_on_train_epoch_end", &v));
    o.check_on_train_epoch_end(v);
  }
  TRIALSHIM_ASSIGN_OR_RETURN(Mode mode, ModeOf(r, prefix));
  return std::shared_ptr<Callback>(std::make_shared<EarlyStopping>(
      o.monitor(monitor)
          .mode(mode)
          .patience(patience)
          .min_delta(min_delta)
          .check_finite(check_finite)
          .stopping_threshold(stop_at)
          .divergence_threshold(diverge_at)
          .strict(strict)
          .verbose(verbose)
          .log_rank_zero_only(rank_zero)));
}

StatusOr<std::shared_ptr<Callback>> MakeLrMonitor(const config::Node& node,
                                                  const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(
      r.CheckKeys({"logging_interval", "log_momentum", "log_weight_decay"}));
  std::string interval = "epoch";
  bool momentum = false, decay = false;
  TRIALSHIM_RETURN_IF_ERROR(r.String("logging_interval", &interval));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("log_momentum", &momentum));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("log_weight_decay", &decay));
  if (interval != "epoch" && interval != "step") {
    return Status::InvalidArgument(prefix +
                                   ".logging_interval: expected epoch|step, "
                                   "got '" + interval + "'");
  }
  return std::shared_ptr<Callback>(std::make_shared<LearningRateMonitor>(
      LearningRateMonitorOptions()
          .logging_interval(interval)
          .log_momentum(momentum)
          .log_weight_decay(decay)));
}

StatusOr<std::shared_ptr<Callback>> MakeDeviceStats(const config::Node& node,
                                                     const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"cpu_stats"}));
  const config::Node* cpu = node.is_map() ? node.Get("cpu_stats") : nullptr;
  std::optional<bool> cpu_stats;
  if (cpu != nullptr && !cpu->is_null()) {
    bool v = false;
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("cpu_stats", &v));
    cpu_stats = v;
  }
  return std::shared_ptr<Callback>(std::make_shared<DeviceStatsMonitor>(cpu_stats));
}

StatusOr<std::shared_ptr<Callback>> MakeModelSummary(
    const config::Node& node, const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"max_depth"}));
  int64_t depth = 1;
  TRIALSHIM_RETURN_IF_ERROR(r.Int("max_depth", &depth));
  if (depth < -1) {
    return Status::InvalidArgument(prefix +
                                   ".max_depth: expected -1, 0 or more, got " +
                                   std::to_string(depth));
  }
  return std::shared_ptr<Callback>(std::make_shared<ModelSummary>(depth));
}

StatusOr<std::shared_ptr<Callback>> MakeProgressBar(
    const config::Node& node, const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"refresh_rate"}));
  int64_t rate = 1;
  TRIALSHIM_RETURN_IF_ERROR(r.Int("refresh_rate", &rate));
  if (rate < 0) {
    return Status::InvalidArgument(prefix +
                                   ".refresh_rate: expected an int >= 0, got " +
                                   std::to_string(rate));
  }
  return std::shared_ptr<Callback>(std::make_shared<ProgressBar>(rate));
}

}  // namespace

StatusOr<std::vector<std::shared_ptr<Callback>>> CallbacksFromConfig(
    const config::Node& node) {
  std::vector<std::shared_ptr<Callback>> out;
  internal::MapReader top(node, "callbacks");
  TRIALSHIM_RETURN_IF_ERROR(
      top.CheckKeys({"model_checkpoint", "early_stopping", "lr_monitor",
                     "model_summary", "progress_bar", "device_stats"}));
  if (node.is_null()) return out;
  for (const auto& [name, value] : node.AsMap()) {
    if (value.is_null()) continue;
    const std::string prefix = "callbacks." + name;
    StatusOr<std::shared_ptr<Callback>> made =
        name == "model_checkpoint" ? MakeModelCheckpoint(value, prefix)
        : name == "early_stopping" ? MakeEarlyStopping(value, prefix)
        : name == "lr_monitor"     ? MakeLrMonitor(value, prefix)
        : name == "model_summary"  ? MakeModelSummary(value, prefix)
        : name == "device_stats"   ? MakeDeviceStats(value, prefix)
                                   : MakeProgressBar(value, prefix);
    if (!made.ok()) return made.status();
    out.push_back(*made);
  }
  return out;
}

}  // namespace trialshim::trainer
