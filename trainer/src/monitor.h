// What the callbacks that watch a logged metric share (ModelCheckpoint,
// EarlyStopping): comparisons by Mode, the state_dict form of a score, and
// the error for a metric that was never logged. Private to the trainer.
#ifndef TRIALSHIM_TRAINER_SRC_MONITOR_H_
#define TRIALSHIM_TRAINER_SRC_MONITOR_H_

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "trialshim/base/status.h"
#include "trialshim/trainer/callbacks.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer::internal {

// Whether `a` beats `b` by more than `margin` under `mode`.
inline bool Better(Mode mode, double a, double b, double margin = 0) {
  return mode == Mode::kMin ? a < b - margin : a > b + margin;
}

// The start of a search for the best score.
inline double Worst(Mode mode) {
  return mode == Mode::kMin ? std::numeric_limits<double>::infinity()
                            : -std::numeric_limits<double>::infinity();
}

// A score in a state_dict: JSON has no inf or nan, so those are null.
inline nlohmann::json Number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// InvalidArgument: `who` monitors a metric that was not logged, with the
// names of those that were.
inline Status MissingMetric(const Trainer& trainer, const std::string& who,
                            const std::string& monitor) {
  std::string logged;
  for (const auto& [name, value] : trainer.callback_metrics()) {
    logged += (logged.empty() ? "" : ", ") + name;
  }
  return Status::InvalidArgument(who + " monitors '" + monitor +
                                 "', which was not logged; logged metrics: " +
                                 (logged.empty() ? "none" : logged));
}

}  // namespace trialshim::trainer::internal

#endif  // TRIALSHIM_TRAINER_SRC_MONITOR_H_
