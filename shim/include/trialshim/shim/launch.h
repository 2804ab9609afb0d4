// Launch: N local ranks of one command, like torchrun on a single machine.
//
// Each rank is the command run with MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
// RANK, LOCAL_RANK and LOCAL_WORLD_SIZE set, in its own process group (so a
// rank's own children get the signals too), stdin from /dev/null, and its
// stdout and stderr read line by line and handed to a sink with the rank, so
// the caller can prefix "[rank i] ". Supervision follows torchrun: a rank that
// exits non-zero (or dies of a signal) makes the launcher stop the others,
// SIGTERM first and SIGKILL after a grace period, and the launch fails with
// that rank's code (128+N for signal N). SIGTERM, SIGINT, SIGHUP, SIGQUIT,
// SIGUSR1 and SIGUSR2 sent to the launcher are forwarded to every rank; the
// launcher then waits for them to end (a rank failing after that gives the
// others up to 1 s to finish their handlers before SIGTERM). Ranks are killed
// (PR_SET_PDEATHSIG) if the launcher itself dies. Launch installs handlers for
// those signals while it runs and restores the previous ones before returning,
// so call it from one thread of a program that does not handle them itself.
#ifndef TRIALSHIM_SHIM_LAUNCH_H_
#define TRIALSHIM_SHIM_LAUNCH_H_

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/config/status.h"

namespace trialshim::shim {

struct LaunchOptions {
  // Number of ranks, at least 1. Default: 1.
  int nproc = 1;
  // Rendezvous address the ranks are given. Default: "127.0.0.1".
  std::string master_addr = "127.0.0.1";
  // MASTER_PORT, 1..65535; 0 picks a free port on master_addr. Default: 0.
  int master_port = 0;
  // How long a rank has to exit after SIGTERM before it gets SIGKILL, when
  // another rank failed. Default: 30 s (torchrun's).
  std::chrono::milliseconds grace{30000};
  // Receives every output line of every rank, without its newline (a last
  // line without one is delivered at end of output). stream is 1 or 2.
  // Called from the launching thread only. Default: lines are dropped.
  std::function<void(int rank, int stream, std::string_view line)> on_line;
};

struct LaunchResult {
  // 0 when every rank exited 0; else the code of the first rank that failed
  // (its exit status, or 128+N if it died of signal N).
  int exit_code = 0;
  // The first rank that failed, -1 if none.
  int failed_rank = -1;
  // Every rank's code, by rank (0, exit status, or 128+N).
  std::vector<int> rank_codes;
  // The port the ranks were given (useful when it was picked).
  int master_port = 0;
  // Set when a forwarded signal, not a failing rank, ended the job.
  int forwarded_signal = 0;
};

// Runs `argv` (argv[0] searched in PATH) as options.nproc ranks and waits for
// all of them. InvalidArgument for bad options or an empty command; IOError
// when a process or pipe can not be created. A command that can not be
// executed is a failing rank with code 127 (not found) or 126, its reason on
// that rank's stderr.
StatusOr<LaunchResult> Launch(const std::vector<std::string>& argv,
                              const LaunchOptions& options);

// A TCP port that was free on `addr` a moment ago (bind to port 0).
StatusOr<int> PickFreePort(const std::string& addr);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_LAUNCH_H_
