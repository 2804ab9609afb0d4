#include "sigterm.h"

namespace trialshim::trainer::internal {
namespace {
volatile sig_atomic_t g_requested = 0;
void OnSigterm(int) { g_requested = 1; }
}  // namespace

SigtermGuard::SigtermGuard(bool enable) {
  g_requested = 0;
  if (!enable) return;
  struct sigaction action {};
  action.sa_handler = OnSigterm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  installed_ = sigaction(SIGTERM, &action, &previous_) == 0;
}

SigtermGuard::~SigtermGuard() {
  if (installed_) sigaction(SIGTERM, &previous_, nullptr);
}

bool SigtermGuard::requested() { return g_requested != 0; }

}  // namespace trialshim::trainer::internal
