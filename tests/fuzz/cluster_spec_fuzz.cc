// Fuzzes CLUSTER_SPEC / TF_CONFIG parsing: the JSON Vertex puts in every
// replica's environment. The first byte picks the variable and whether the
// environment already sets some of the derived variables.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "fuzz_util.h"
#include "trialshim/shim/cluster_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialshim;
  if (size == 0) return 0;
  uint8_t mode = data[0];
  std::string json(fuzz::AsView(data + 1, size - 1));

  StatusOr<shim::ClusterTask> task =
      shim::ParseClusterSpec(json, (mode & 1) ? "TF_CONFIG" : "CLUSTER_SPEC");
  if (task.ok()) {
    (void)shim::ClusterRoleName(task->role);
    if (task->world_size < 1) __builtin_trap();
  } else if (task.status().message().empty()) {
    __builtin_trap();
  }

  std::map<std::string, std::string> env;
  env[(mode & 1) ? "TF_CONFIG" : "CLUSTER_SPEC"] = json;
  if (mode & 2) env["CLUSTER_SPEC"] = "";  // empty: falls back to TF_CONFIG
  if (mode & 4) env["MASTER_PORT"] = "1234";
  if (mode & 8) env["RANK"] = "7";
  shim::EnvLookup lookup =
      [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  (void)shim::ExplainDistributedEnvironment(lookup);
  (void)shim::DistributedEnvironment(lookup);
  return 0;
}
