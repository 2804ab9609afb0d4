// Running the trainer the way a container entrypoint must.
//
// RunProgram picks the lightest mode that keeps the platform's contract:
//  - exec: the usual case. trialshim replaces itself with the program
//    (execvp), so signals, the exit code and the PID are the program's own
//    and nothing stays in between. Not with --kill-after (which needs a
//    supervisor to act) or a metric regex.
//  - init: when trialshim is PID 1 (a container's entrypoint). The kernel
//    drops signals that PID 1 has no handler for, and orphans are reparented
//    to PID 1, so like `tini -g` it forks the program into a process group
//    of its own, forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and
//    SIGUSR2 to that whole group (so a trainer behind `bash -c` gets them
//    too; the program's supervisor passes them on to what left the group),
//    reaps every zombie, and exits with the program's status (128+N if
//    it died of signal N) once the program's group is gone: a trainer still
//    checkpointing after its shell died is waited for (RunOptions::kill_after
//    bounds that), and what a program that exited by itself left in its
//    group gets SIGTERM, then SIGKILL after 10 s. A process that leaves the
//    group (setsid) is not waited for; it ends with trialshim (below).
//  - scrape: with a metric regex. The program runs as a child whose stdout
//    and stderr go through pipes; every byte is passed on as soon as it is
//    read, and every complete line is matched with RE2. In a pattern that
//    names its groups, (?P<value>...) (else the first group) is the metric
//    value and (?P<step>...) the global step; in one that does not, the
//    first group is the value and a second one the step. Without a step
//    group the matches are numbered 1, 2, ... in the order they are
//    reported (a step group that captures no number gives step 0). Each
//    match is reported through a HypertuneReporter. Signals, the
//    process group and the exit status as in init mode.
// In every mode the program starts as a base/subprocess.h child does: an
// empty signal mask and every signal at its default disposition, so a Python
// trainer without a SIGTERM handler still stops on SIGTERM, and a program
// that cannot be run is a message and 127/126. When supervised and not
// PID 1, the program runs contained (base/subprocess.h): its whole process
// tree, what left its group or session included, gets SIGTERM when
// trialshim exits or dies (kill -9 too), and SIGKILL after kill_after (10 s
// when unset). As PID 1 the kernel does that: when PID 1 ends, every
// process of its PID namespace is killed.
#ifndef TRIALSHIM_SHIM_PROCESS_H_
#define TRIALSHIM_SHIM_PROCESS_H_

#include <chrono>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/hypertune/hypertune.h"

namespace trialshim::shim {

struct RunOptions {
  // RE2 pattern matched against each output line; empty turns scraping off.
  // Default: "".
  std::string metric_regex;
  // Hypertune tag of scraped metrics; empty means kDefaultMetricTag.
  // Default: "".
  std::string metric_tag;
  // Where scraped metrics go; null means HypertuneReporter::FromEnvironment().
  // Not owned. Default: null.
  hypertune::HypertuneReporter* reporter = nullptr;
  // Supervise (fork, forward, reap) even when not PID 1. For tests.
  // Default: false.
  bool force_supervise = false;
  // SIGKILL the program's process group this long after a forwarded
  // SIGTERM, SIGINT, SIGHUP or SIGQUIT if it is still there (non-zero makes
  // trialshim supervise). Zero waits as long as it takes (on Vertex, until
  // the VM is reclaimed). Default: 0.
  std::chrono::milliseconds kill_after{0};
};

struct RunResult {
  // The code trialshim should exit with: the program's own, 128+N for a
  // program killed by signal N, 126/127 when it could not be run, 2 for a
  // bad regex, 1 for a failure of the shim itself or when the program
  // succeeded but every metric report failed.
  int exit_code = 0;
  // Why the program did not run, supervision failed, or every metric
  // report failed; empty otherwise.
  std::string error;
  // Problems that did not stop the program (a metric file that could not be
  // written, a match that is not a number), for stderr.
  std::vector<std::string> warnings;
  // Metrics reported while scraping.
  int metrics_reported = 0;
};

// Runs argv[0] (looked up in PATH when it has no '/') with argv. In exec
// mode it returns only if the program could not be started. argv must not
// be empty.
RunResult RunProgram(const std::vector<std::string>& argv,
                     const RunOptions& options);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_PROCESS_H_
