#include "trialshim/shim/cluster_spec.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"

namespace trialshim::shim {
namespace {

using nlohmann::json;

// Where a task type sits: which pools hold the primary and the workers in
// this shape, and the role of the task's own pool.
struct PoolKind {
  const char* type;
  ClusterRole role;
  bool workerpool_shape;
};

// The workerpoolN names follow workerPoolSpecs[N], whose roles Vertex's
// "Distributed training" page tabulates: [0] the primary ("chief, scheduler,
// or master"), [1] the workers, [2] parameter servers or Reduction Server,
// [3] evaluators (custom_job.proto names the primary's node workerpool0-0).
// The other names are TF_CONFIG's, TensorFlow's task types.
constexpr PoolKind kPoolKinds[] = {
    {"workerpool0", ClusterRole::kPrimary, true},
    {"workerpool1", ClusterRole::kWorker, true},
    {"workerpool2", ClusterRole::kReductionServer, true},
    {"workerpool3", ClusterRole::kEvaluator, true},
    {"chief", ClusterRole::kPrimary, false},
    {"master", ClusterRole::kPrimary, false},
    {"worker", ClusterRole::kWorker, false},
    {"ps", ClusterRole::kReductionServer, false},
    {"evaluator", ClusterRole::kEvaluator, false},
};

// A value of the spec as a message shows it: JSON, abbreviated (a
// 120 KB CLUSTER_SPEC must not bury the message).
std::string Quote(const json& value) { return Abbreviated(value.dump()); }

// The pool `name` of `cluster` as a list of addresses; nullopt when absent.
StatusOr<std::optional<std::vector<std::string>>> Pool(const json& cluster,
                                                       const std::string& name,
                                                       const std::string& src) {
  auto it = cluster.find(name);
  if (it == cluster.end()) return std::optional<std::vector<std::string>>();
  if (!it->is_array()) {
    return Status::InvalidArgument(src + ": cluster." + name +
                                   ": expected a list of \"host:port\" "
                                   "addresses, got " +
                                   Quote(*it));
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& addr = (*it)[i];
    if (!addr.is_string()) {
      return Status::InvalidArgument(src + ": cluster." + name + "[" +
                                     std::to_string(i) +
                                     "]: expected a \"host:port\" string, "
                                     "got " +
                                     Quote(addr));
    }
    std::string text = addr.get<std::string>();
    // setenv() would cut MASTER_ADDR at a NUL ("\u0000" in JSON), and no
    // host or port holds control characters.
    auto control = std::find_if(text.begin(), text.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (control != text.end()) {
      return Status::InvalidArgument(
          src + ": cluster." + name + "[" + std::to_string(i) +
          "]: control character " + Quote(json(std::string(1, *control))) +
          " in address " + Quote(addr) + " (expected \"host:port\")");
    }
    out.push_back(std::move(text));
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

// Splits "host:port" or "[v6]:port". The port is after the last colon, so
// an IPv6 host needs the brackets URLs use; they are dropped, since
// MASTER_ADDR holds the bare host.
Status SplitAddress(const std::string& address, const std::string& field,
                    std::string* host, int* port) {
  size_t colon = address.rfind(':');
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(field + ": " + why + " in \"" +
                                   Abbreviated(address) +
                                   "\" (expected \"host:port\")");
  };
  if (colon == std::string::npos) return bad("no port");
  std::string h = address.substr(0, colon);
  std::string p = address.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  }
  if (h.empty()) return bad("empty host");
  if (p.empty() || p.size() > 5 ||
      p.find_first_not_of("0123456789") != std::string::npos) {
    return bad("port is not a number");
  }
  int value = std::atoi(p.c_str());
  if (value < 1 || value > 65535) return bad("port out of range 1..65535");
  *host = h;
  *port = value;
  return Status::Ok();
}

// The document's two sections, "cluster" and "task", both objects.
Status FindSections(const json& doc, const std::string& src,
                    const json** cluster, const json** task) {
  if (!doc.is_object()) {
    return Status::InvalidArgument(src + ": expected a JSON object, got " +
                                   Quote(doc));
  }
  auto cluster_it = doc.find("cluster");
  if (cluster_it == doc.end()) {
    return Status::InvalidArgument(src + ": cluster: missing");
  }
  if (!cluster_it->is_object()) {
    return Status::InvalidArgument(src +
                                   ": cluster: expected an object of "
                                   "pools, got " +
                                   Quote(*cluster_it));
  }
  *cluster = &*cluster_it;
  auto task_it = doc.find("task");
  if (task_it == doc.end()) {
    return Status::InvalidArgument(src + ": task: missing");
  }
  if (!task_it->is_object()) {
    return Status::InvalidArgument(src + ": task: expected an object, got " +
                                   Quote(*task_it));
  }
  *task = &*task_it;
  return Status::Ok();
}

// task.type (returned as its pool kind), task.index and task.trial.
StatusOr<const PoolKind*> ParseTaskFields(const json& task,
                                          const std::string& src,
                                          ClusterTask* out) {
  auto type_it = task.find("type");
  if (type_it == task.end()) {
    return Status::InvalidArgument(src + ": task.type: missing");
  }
  if (!type_it->is_string()) {
    return Status::InvalidArgument(src +
                                   ": task.type: expected a string, "
                                   "got " +
                                   Quote(*type_it));
  }
  out->type = type_it->get<std::string>();
  const PoolKind* kind = nullptr;
  std::vector<std::string> known;
  for (const PoolKind& k : kPoolKinds) {
    known.push_back(k.type);
    if (out->type == k.type) kind = &k;
  }
  if (kind == nullptr) {
    return Status::InvalidArgument(
        src + ": task.type: unknown pool \"" + Abbreviated(out->type) +
        "\" (expected workerpool0..3, chief, master, worker, ps or "
        "evaluator)" +
        DidYouMean(Abbreviated(out->type), known));
  }
  out->role = kind->role;

  // A missing index is 0, the one replica of a pool. The bound keeps the
  // int conversion and rank + 1 in range; no pool comes near it.
  auto index_it = task.find("index");
  if (index_it != task.end()) {
    if (!index_it->is_number_integer() || index_it->get<int64_t>() < 0 ||
        index_it->get<int64_t>() > 1000000) {
      return Status::InvalidArgument(src +
                                     ": task.index: expected a "
                                     "non-negative integer, got " +
                                     Quote(*index_it));
    }
    out->index = index_it->get<int>();
  }
  // task.trial, a tuning trial's id: a string, or a number taken as its
  // text.
  auto trial_it = task.find("trial");
  if (trial_it != task.end() && !trial_it->is_null()) {
    if (trial_it->is_string()) {
      out->trial = trial_it->get<std::string>();
    } else if (trial_it->is_number_integer()) {
      out->trial = trial_it->dump();
    } else {
      return Status::InvalidArgument(src +
                                     ": task.trial: expected a string, "
                                     "got " +
                                     Quote(*trial_it));
    }
  }
  return kind;
}

// The primary's address (master) and the world size: the primary and the
// workers, in the shape of `kind`. Pool 2 and 3 replicas (reduction or
// parameter servers, evaluators) are no ranks of the collective, so they do
// not count. Vertex's page wants exactly one primary replica; TF_CONFIG
// calls it "chief" or "master", and "chief" wins when both appear.
Status ParseReplicas(const json& cluster, const PoolKind& kind,
                     const std::string& src, ClusterTask* out) {
  std::string primary_pool;
  std::string worker_pool;
  if (kind.workerpool_shape) {
    primary_pool = "workerpool0";
    worker_pool = "workerpool1";
  } else {
    primary_pool = cluster.contains("chief") || !cluster.contains("master")
                       ? "chief"
                       : "master";
    worker_pool = "worker";
  }
  TRIALSHIM_ASSIGN_OR_RETURN(auto primary, Pool(cluster, primary_pool, src));
  if (!primary.has_value()) {
    return Status::InvalidArgument(
        src + ": cluster." + primary_pool + ": missing (the primary replica" +
        (kind.workerpool_shape ? "" : "; \"master\" is also accepted") + ")");
  }
  if (primary->size() != 1) {
    return Status::InvalidArgument(
        src + ": cluster." + primary_pool +
        ": expected exactly one address (the primary replica), got " +
        std::to_string(primary->size()));
  }
  out->primary_field = "cluster." + primary_pool + "[0]";
  TRIALSHIM_RETURN_IF_ERROR(SplitAddress((*primary)[0],
                                         src + ": " + out->primary_field,
                                         &out->master_addr, &out->master_port));
  TRIALSHIM_ASSIGN_OR_RETURN(auto workers, Pool(cluster, worker_pool, src));
  out->world_size = 1 + (workers ? static_cast<int>(workers->size()) : 0);
  return Status::Ok();
}

// Every pool named must be well formed, even those this task is not in, and
// the task must be in its pool: every replica then reads the same document
// the same way, and a spec that stops one replica stops them all.
Status CheckPools(const json& cluster, const PoolKind& kind,
                  const std::string& src, const ClusterTask& out) {
  for (const PoolKind& k : kPoolKinds) {
    if (k.workerpool_shape != kind.workerpool_shape) continue;
    TRIALSHIM_ASSIGN_OR_RETURN(auto pool, Pool(cluster, k.type, src));
    // TF_CONFIG never lists the evaluator in the cluster: it is alone.
    if (out.type == k.type && k.role != ClusterRole::kEvaluator) {
      if (!pool.has_value()) {
        return Status::InvalidArgument(src + ": task.type: \"" +
                                       Abbreviated(out.type) +
                                       "\" is not a pool of cluster");
      }
      if (out.index >= static_cast<int>(pool->size())) {
        return Status::InvalidArgument(
            src + ": task.index: " + std::to_string(out.index) +
            " is out of range: cluster." + out.type + " has " +
            std::to_string(pool->size()) + " address(es)");
      }
    }
  }
  return Status::Ok();
}

StatusOr<ClusterTask> ParseParsed(const json& doc, const std::string& src) {
  const json* cluster = nullptr;
  const json* task = nullptr;
  TRIALSHIM_RETURN_IF_ERROR(FindSections(doc, src, &cluster, &task));
  ClusterTask out;
  out.source = src;
  TRIALSHIM_ASSIGN_OR_RETURN(const PoolKind* kind,
                             ParseTaskFields(*task, src, &out));
  TRIALSHIM_RETURN_IF_ERROR(ParseReplicas(*cluster, *kind, src, &out));
  TRIALSHIM_RETURN_IF_ERROR(CheckPools(*cluster, *kind, src, out));
  // The ranks of torch.distributed's env:// rendezvous: the primary is 0
  // (it hosts MASTER_ADDR:MASTER_PORT), worker i is i + 1.
  if (out.role == ClusterRole::kPrimary) {
    out.rank = 0;
  } else if (out.role == ClusterRole::kWorker) {
    out.rank = out.index + 1;
  }
  return out;
}

// A variable the environment already has keeps its value: whoever set it
// (the image, a launcher, the user) knows better than the spec.
void Add(std::vector<EnvExport>* out, const EnvLookup& env, std::string name,
         std::string value, std::string reason) {
  EnvExport e;
  e.name = std::move(name);
  e.reason = std::move(reason);
  std::optional<std::string> existing = env(e.name);
  if (existing.has_value()) {
    e.value = *existing;
    e.already_set = true;
  } else {
    e.value = std::move(value);
  }
  out->push_back(std::move(e));
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

const char* ClusterRoleName(ClusterRole role) {
  switch (role) {
    case ClusterRole::kPrimary:
      return "primary";
    case ClusterRole::kWorker:
      return "worker";
    case ClusterRole::kReductionServer:
      return "reduction_server";
    case ClusterRole::kEvaluator:
      return "evaluator";
  }
  return "unknown";
}

StatusOr<ClusterTask> ParseClusterSpec(std::string_view text,
                                       std::string_view source) {
  std::string src(source);
  // nlohmann reports parse errors by exception; keep them inside.
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument(src + ": not valid JSON at byte " +
                                   std::to_string(e.byte) + ": " +
                                   Abbreviated(e.what()));
  } catch (const json::exception& e) {
    // Well-formed JSON nlohmann can not hold, e.g. 1e999 (out_of_range 406).
    return Status::InvalidArgument(
        src + ": unsupported JSON: " + Abbreviated(e.what()));
  }
  try {
    return ParseParsed(doc, src);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(src + ": " + Abbreviated(e.what()));
  }
}

StatusOr<std::vector<EnvExport>> ExplainDistributedEnvironment(
    const EnvLookup& env) {
  std::vector<EnvExport> out;
  // Vertex's page offers both; CLUSTER_SPEC first, as it names the pools by
  // their position in workerPoolSpecs. An empty value counts as unset.
  std::string source = "CLUSTER_SPEC";
  std::optional<std::string> text = env(source);
  if (!text.has_value() || text->empty()) {
    source = "TF_CONFIG";
    text = env(source);
  }
  if (!text.has_value() || text->empty()) return out;
  TRIALSHIM_ASSIGN_OR_RETURN(ClusterTask task, ParseClusterSpec(*text, source));

  std::string who =
      "task " + task.type + "[" + std::to_string(task.index) + "] of " + source;
  Add(&out, env, "TRIALSHIM_ROLE", ClusterRoleName(task.role), who);
  if (!task.rank.has_value()) return out;
  std::string primary = task.primary_field + " of " + source;
  Add(&out, env, "MASTER_ADDR", task.master_addr,
      "host of the primary, " + primary);
  Add(&out, env, "MASTER_PORT", std::to_string(task.master_port),
      "port of the primary, " + primary);
  Add(&out, env, "WORLD_SIZE", std::to_string(task.world_size),
      "1 primary + " + std::to_string(task.world_size - 1) + " worker(s)");
  Add(&out, env, "RANK", std::to_string(*task.rank),
      task.role == ClusterRole::kPrimary
          ? who + ": the primary is rank 0"
          : who + ": workers follow the primary, rank = index + 1");
  // Lightning's LightningEnvironment.node_rank reads NODE_RANK, else
  // GROUP_RANK (lightning/fabric/plugins/environments/lightning.py).
  Add(&out, env, "NODE_RANK", std::to_string(*task.rank),
      "= RANK: the node rank PyTorch Lightning reads when it starts its own "
      "processes");
  return out;
}

StatusOr<std::vector<std::pair<std::string, std::string>>>
DistributedEnvironment(const EnvLookup& env) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<EnvExport> all,
                             ExplainDistributedEnvironment(env));
  std::vector<std::pair<std::string, std::string>> out;
  for (EnvExport& e : all) {
    if (!e.already_set) out.emplace_back(e.name, e.value);
  }
  return out;
}

}  // namespace trialshim::shim
