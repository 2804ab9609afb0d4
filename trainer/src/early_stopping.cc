#include "trialshim/trainer/callbacks.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <string>

#include "monitor.h"
#include "trialshim/base/number_format.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {

using internal::Better;
using internal::Number;
using internal::MissingMetric;
using internal::Worst;

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)), best_(Worst(options_.mode())) {}

Status EarlyStopping::on_validation_end(Trainer& trainer, Module&) {
  if (options_.check_on_train_epoch_end().value_or(false)) return Status::Ok();
  return Check(trainer);
}

Status EarlyStopping::on_train_epoch_end(Trainer& trainer, Module&) {
  if (!options_.check_on_train_epoch_end().value_or(false)) return Status::Ok();
  return Check(trainer);
}

// Lightning's _log_info: "[rank: N] " under several ranks.
void EarlyStopping::Log(Trainer& trainer, const std::string& message) const {
  if (trainer.world_size() <= 1) {
    trainer.console().info("{}", message);
  } else if (!options_.log_rank_zero_only() || trainer.is_global_zero()) {
    trainer.console().info("[rank: {}] {}", trainer.global_rank(), message);
  }
}

Status EarlyStopping::Check(Trainer& trainer) {
  const std::string& monitor = options_.monitor();
  auto it = trainer.callback_metrics().find(monitor);
  if (it == trainer.callback_metrics().end()) {
    Status missing = MissingMetric(trainer, "EarlyStopping", monitor);
    if (options_.strict()) return missing;
    if (options_.verbose()) trainer.console().warn("{}", missing.message());
    return Status::Ok();
  }
  const double value = it->second;
  const Mode mode = options_.mode();
  const char* op = mode == Mode::kMin ? "<" : ">";
  const std::string shown = FormatPythonFloat(value);
  std::string reason;
  if (options_.check_finite() && !std::isfinite(value)) {
    reason = "monitored metric " + monitor + " = " + shown + " is not finite";
  } else if (options_.stopping_threshold() &&
             Better(mode, value, *options_.stopping_threshold())) {
    reason = "stopping threshold reached: " + monitor + " = " + shown + " " +
             op + " " + FormatPythonFloat(*options_.stopping_threshold());
  } else if (options_.divergence_threshold() &&
             Better(mode, *options_.divergence_threshold(), value)) {
    reason = "divergence threshold reached: " + monitor + " = " + shown + " " +
             (mode == Mode::kMin ? ">" : "<") + " " +
             FormatPythonFloat(*options_.divergence_threshold());
  } else if (Better(mode, value, best_, options_.min_delta())) {
    if (options_.verbose()) {
      Log(trainer, std::isfinite(best_)
                       ? "Metric " + monitor + " improved by " +
                             FormatPythonFloat(std::fabs(best_ - value)) +
                             " >= min_delta = " +
                             FormatPythonFloat(std::fabs(options_.min_delta())) +
                             ". New best score: " + shown
                       : "Metric " + monitor + " improved. New best score: " +
                             shown);
    }
    best_ = value;
    wait_ = 0;
    return Status::Ok();
  } else if (++wait_ >= options_.patience()) {
    reason = "monitored metric " + monitor + " did not improve in the last " +
             std::to_string(wait_) + " validations; best score: " +
             FormatPythonFloat(best_);
  }
  if (!reason.empty()) {
    reason_ = reason;
    trainer.set_should_stop(true);
    if (options_.verbose()) Log(trainer, reason);
  }
  return Status::Ok();
}

nlohmann::json EarlyStopping::state_dict() const {
  return {{"best", Number(best_)}, {"wait", wait_}};
}

Status EarlyStopping::load_state_dict(const nlohmann::json& state) {
  try {
    best_ = state.at("best").is_null() ? Worst(options_.mode())
                                       : state.at("best").get<double>();
    wait_ = state.at("wait").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss(std::string("bad EarlyStopping state: ") +
                            e.what());
  }
  return Status::Ok();
}

}  // namespace trialshim::trainer
