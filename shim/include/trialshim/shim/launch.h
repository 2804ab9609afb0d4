// Launch: N local worker processes of one command on each of M nodes, like
// torchrun with its default static rendezvous, but knowing Vertex AI.
//
// The nodes are Vertex's replicas: unless given, the node count, this node's
// rank and the rendezvous address come from CLUSTER_SPEC (or TF_CONFIG), as
// cluster_spec.h reads them (replicas = nodes, replica rank = node rank, the
// primary = master); without either it is one node on 127.0.0.1 and a free
// port. Each worker gets exactly the environment torchrun's agent gives
// (torch/distributed/elastic/agent/server/local_elastic_agent.py): RANK
// (global), WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
// GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME=default,
// MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT=0,
// TORCHELASTIC_MAX_RESTARTS=0, NCCL_ASYNC_ERROR_HANDLING (1 unless set), and
// OMP_NUM_THREADS=1 when unset and N > 1, as torchrun does. One difference on
// purpose: TORCHELASTIC_USE_AGENT_STORE=False, since there is no agent store
// here: global rank 0 hosts the TCPStore at MASTER_ADDR:MASTER_PORT, as
// env:// does without torchrun.
//
// Each worker runs in its own process group (so its own children get the
// signals too), stdin from /dev/null, its stdout and stderr read line by line
// and handed to a sink with the global rank, so the caller can prefix
// "[rank i] ". Supervision follows torchrun: a worker that exits non-zero (or
// dies of a signal) makes the launcher stop the others on this node, SIGTERM
// first and SIGKILL after a grace period, and the launch fails with that
// worker's code (128+N for signal N); workers on other nodes learn it from
// their collectives. SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2
// sent to the launcher are forwarded to every worker; the launcher then waits
// for them to end (a worker failing after that gives the others up to 1 s to
// finish their handlers before SIGTERM). Workers are killed
// (PR_SET_PDEATHSIG) if the launcher itself dies. Launch installs handlers for
// those signals while it runs and restores the previous ones before
// returning, so call it from one thread of a program that does not handle
// them itself.
#ifndef TRIALSHIM_SHIM_LAUNCH_H_
#define TRIALSHIM_SHIM_LAUNCH_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/shim/cluster_spec.h"

namespace trialshim::shim {

struct LaunchOptions {
  // Workers on this node (torchrun's --nproc-per-node), at least 1.
  // Default: 1.
  int nproc = 1;
  // Nodes (--nnodes). Default: the replicas of CLUSTER_SPEC / TF_CONFIG
  // (primary and workers), else 1.
  std::optional<int> nnodes;
  // This node's rank, 0..nnodes-1 (--node-rank). Default: this replica's rank
  // in CLUSTER_SPEC / TF_CONFIG, else 0.
  std::optional<int> node_rank;
  // Rendezvous host (--master-addr). Default: the primary's host in
  // CLUSTER_SPEC / TF_CONFIG, else "127.0.0.1" (only valid for one node).
  std::optional<std::string> master_addr;
  // Rendezvous port, 1..65535, or 0 for a free one (one node only).
  // Default: the primary's port in CLUSTER_SPEC / TF_CONFIG, else a free
  // port on one node and torchrun's 29500 on several.
  std::optional<int> master_port;
  // TORCHELASTIC_RUN_ID. Default: "none", torchrun's --rdzv-id default.
  std::string run_id = "none";
  // Where CLUSTER_SPEC and TF_CONFIG are read. Default: this process's
  // environment.
  EnvLookup env = ProcessEnvironment();
  // How long a worker has to exit after SIGTERM before it gets SIGKILL, when
  // another worker failed. Default: 30 s (torchrun's).
  std::chrono::milliseconds grace{30000};
  // Receives every output line of every worker, without its newline (a last
  // line without one is delivered at end of output), with the worker's
  // global rank. stream is 1 or 2. Called from the launching thread only.
  // Default: lines are dropped.
  std::function<void(int rank, int stream, std::string_view line)> on_line;
};

// Where the workers of this node sit in the whole job, and why.
struct LaunchTopology {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;
  int master_port = 0;  // 0: pick a free port when launching
  // "--nnodes" / "CLUSTER_SPEC" / "default", for each field, for messages
  // and `trialshim launch --dry-run`.
  std::string nnodes_from, node_rank_from, master_from;
};

// Fills what `options` leaves unset from CLUSTER_SPEC / TF_CONFIG (read
// through options.env) and checks the whole: InvalidArgument for a bad
// value, a node rank out of range, several nodes with no rendezvous address,
// or a replica that takes no part in the collective (a reduction server or
// evaluator).
StatusOr<LaunchTopology> ResolveTopology(const LaunchOptions& options);

// The variables torchrun would set for local worker `local_rank`, in
// torchrun's order; OMP_NUM_THREADS and NCCL_ASYNC_ERROR_HANDLING only when
// options.env lacks them.
std::vector<std::pair<std::string, std::string>> WorkerEnvironment(
    const LaunchOptions& options, const LaunchTopology& topology,
    int local_rank);

struct LaunchResult {
  // 0 when every worker exited 0; else the code of the first that failed
  // (its exit status, or 128+N if it died of signal N).
  int exit_code = 0;
  // The global rank of the first worker that failed, -1 if none.
  int failed_rank = -1;
  // Every local worker's code, by local rank (0, exit status, or 128+N).
  std::vector<int> rank_codes;
  // The port the ranks were given (useful when it was picked).
  int master_port = 0;
  // Set when a forwarded signal, not a failing rank, ended the job.
  int forwarded_signal = 0;
};

// Runs `argv` as options.nproc workers and waits for all of them. argv[0] is
// searched in PATH; a "*.py" script runs as `python3 -u SCRIPT` (torchrun's
// `python -u`; $PYTHON_EXEC names another interpreter). InvalidArgument for
// bad options (see ResolveTopology) or an empty command; IOError when a
// process or pipe can not be created. A command that can not be executed is
// a failing worker with code 127 (not found) or 126, its reason on that
// worker's stderr.
StatusOr<LaunchResult> Launch(const std::vector<std::string>& argv,
                              const LaunchOptions& options);

// A TCP port that was free on `addr` a moment ago (bind to port 0).
StatusOr<int> PickFreePort(const std::string& addr);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_LAUNCH_H_
