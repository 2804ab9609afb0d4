#include "sigterm.h"

#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {
namespace internal {
namespace {
volatile sig_atomic_t g_signal = 0;
void OnStopSignal(int sig) { g_signal = sig; }
}  // namespace

SigtermGuard::SigtermGuard(bool enable) {
  g_signal = 0;
  if (!enable) return;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < kSignals; ++i) {
    installed_[i] = sigaction(kStopSignals[i], &action, &previous_[i]) == 0;
  }
}

SigtermGuard::~SigtermGuard() {
  for (int i = 0; i < kSignals; ++i) {
    if (installed_[i]) sigaction(kStopSignals[i], &previous_[i], nullptr);
  }
}

bool SigtermGuard::requested() { return g_signal != 0; }

const char* SigtermGuard::name() {
  switch (g_signal) {
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "SIGTERM";
  }
}

}  // namespace internal

int StopSignal() { return internal::g_signal; }

}  // namespace trialshim::trainer
