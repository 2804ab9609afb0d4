// Fuzzes CLUSTER_SPEC / TF_CONFIG parsing: the JSON Vertex puts in every
// replica's environment. The first byte picks the variable and whether the
// environment already sets some of the derived variables.
#include <cctype>
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
  // Open finding F3 (README.md): a number out of double's range throws
  // out of the parser. Skipped: exponents of 3+ digits, 300+ digit runs.
  if (fuzz::SkipKnownFindings()) {
    size_t run = 0;
    for (size_t i = 0; i < json.size(); ++i) {
      run = isdigit(static_cast<unsigned char>(json[i])) ? run + 1 : 0;
      if (run >= 300) return 0;
      if ((json[i] == 'e' || json[i] == 'E') && i > 0 &&
          isdigit(static_cast<unsigned char>(json[i - 1]))) {
        size_t j = i + 1;
        if (j < json.size() && (json[j] == '+' || json[j] == '-')) ++j;
        size_t k = j;
        while (k < json.size() && isdigit(static_cast<unsigned char>(json[k])))
          ++k;
        if (k - j >= 3) return 0;
      }
    }
  }

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
