// Catches SIGTERM while a fit runs, so the trainer can finish the current
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

  // True once SIGTERM arrived during this guard's life.
  static bool requested();

 private:
  bool installed_ = false;
  struct sigaction previous_ {};
};

}  // namespace trialshim::trainer::internal

#endif  // TRIALSHIM_TRAINER_SRC_SIGTERM_H_
