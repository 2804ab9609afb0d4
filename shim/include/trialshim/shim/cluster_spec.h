// Vertex AI's cluster description to PyTorch's env:// rendezvous variables.
//
// A multi-replica Vertex job tells every replica who it is in CLUSTER_SPEC
// (and, for TensorFlow, TF_CONFIG), but a custom container gets no
// MASTER_ADDR / MASTER_PORT / WORLD_SIZE / RANK, which torch.distributed's
// env:// init (and trialshim's trainer) need. This parses both shapes seen in
// the wild,
//
//   {"cluster": {"workerpool0": ["host:2222"], "workerpool1": [...], ...},
//    "task": {"type": "workerpool1", "index": 0, "trial": "3"}}
//   {"cluster": {"chief": ["host:2222"], "worker": [...], "ps": [...]},
//    "task": {"type": "worker", "index": 0}}
//
// and derives those variables the way Google's own samples do: the primary
// (workerpool0 / chief / master) is rank 0 and its address is MASTER_ADDR and
// MASTER_PORT; workerpool1 / worker index i is rank i + 1; WORLD_SIZE is
// 1 + the number of workers. Pools 2 and 3 (reduction server or parameter
// server, evaluator) take no part in the collective: they get only
// TRIALSHIM_ROLE. A variable already set in the environment is never
// overridden. A missing CLUSTER_SPEC and TF_CONFIG means a single-process
// trial (nothing to export); a malformed one is InvalidArgument naming the
// variable and the field ("CLUSTER_SPEC: task.index: ..."). No I/O besides
// the lookup function the caller passes.
#ifndef TRIALSHIM_SHIM_CLUSTER_SPEC_H_
#define TRIALSHIM_SHIM_CLUSTER_SPEC_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::shim {

// Reads one environment variable: nullopt when it is unset. Tests pass a
// map; programs pass ProcessEnvironment().
using EnvLookup =
    std::function<std::optional<std::string>(const std::string& name)>;

// Looks names up in this process's environment (getenv).
EnvLookup ProcessEnvironment();

// What a replica does in the job, from its pool.
enum class ClusterRole {
  kPrimary,          // workerpool0, chief, master: rank 0
  kWorker,           // workerpool1, worker: rank index + 1
  kReductionServer,  // workerpool2, ps: no rank
  kEvaluator,        // workerpool3, evaluator: no rank
};

// "primary", "worker", "reduction_server", "evaluator": the TRIALSHIM_ROLE
// value.
const char* ClusterRoleName(ClusterRole role);

// This replica's place in the cluster, as parsed.
struct ClusterTask {
  std::string source;  // the variable it came from: CLUSTER_SPEC or TF_CONFIG
  std::string type;    // task.type as written ("workerpool1", "worker")
  int index = 0;       // task.index
  ClusterRole role = ClusterRole::kPrimary;
  std::string trial;          // task.trial, "" when absent
  std::string primary_field;  // "cluster.workerpool0[0]"
  std::string master_addr;    // the primary's host ("[..]" removed for IPv6)
  int master_port = 0;        // the primary's port
  int world_size = 1;         // 1 + number of workers
  std::optional<int> rank;    // unset for reduction servers and evaluators
};

// Parses one JSON document read from the variable `source` ("CLUSTER_SPEC"
// or "TF_CONFIG"; only used in messages). InvalidArgument names the field.
StatusOr<ClusterTask> ParseClusterSpec(std::string_view json,
                                       std::string_view source);

// One variable trialshim would export, and why.
struct EnvExport {
  std::string name;
  std::string value;   // the derived value
  std::string reason;  // "cluster.workerpool0[0] of CLUSTER_SPEC"
  // Set when the environment already has `name`: then it is kept as is and
  // `value` is the value already there.
  bool already_set = false;
};

// The variables a replica should see, with reasons, from CLUSTER_SPEC (or,
// when absent or empty, TF_CONFIG). Empty when neither is set. Variables:
// MASTER_ADDR, MASTER_PORT, WORLD_SIZE (replicas), RANK (this replica),
// NODE_RANK (= RANK, for Lightning's own launcher), TRIALSHIM_ROLE;
// reduction servers and evaluators get TRIALSHIM_ROLE only.
// What managed PyTorch images export for a replica, and no LOCAL_RANK: that
// one claims a per-process launcher started us (PyTorch Lightning then
// never starts its own processes); `trialshim launch` sets it per process.
StatusOr<std::vector<EnvExport>> ExplainDistributedEnvironment(
    const EnvLookup& env);

// Only what must be set before exec: ExplainDistributedEnvironment's
// variables that are not already set, as (name, value) pairs.
StatusOr<std::vector<std::pair<std::string, std::string>>>
DistributedEnvironment(const EnvLookup& env);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_CLUSTER_SPEC_H_
