// Catches SIGTERM (Vertex's preemption), SIGINT (Ctrl-C) and SIGHUP (a
// closed terminal) while a fit runs, so the trainer can finish the current
// step and checkpoint before exiting. Private to the trainer.
#ifndef TRIALSHIM_TRAINER_SRC_SIGTERM_H_
#define TRIALSHIM_TRAINER_SRC_SIGTERM_H_

#include <signal.h>

namespace trialshim::trainer::internal {

// Installs the handler (when `enable`) and restores the previous one on
// destruction. Only a flag is set in the handler (async-signal-safe).
class SigtermGuard {
 public:
  explicit SigtermGuard(bool enable);
  ~SigtermGuard();
  SigtermGuard(const SigtermGuard&) = delete;
  SigtermGuard& operator=(const SigtermGuard&) = delete;

  // True once one of the signals arrived during this guard's life.
  static bool requested();
  // "SIGTERM", "SIGINT" or "SIGHUP": the one that arrived (the last).
  static const char* name();

 private:
  static constexpr int kSignals = 3;
  static constexpr int kStopSignals[kSignals] = {SIGTERM, SIGINT, SIGHUP};
  bool installed_[kSignals] = {};
  struct sigaction previous_[kSignals] {};
};

}  // namespace trialshim::trainer::internal

#endif  // TRIALSHIM_TRAINER_SRC_SIGTERM_H_
