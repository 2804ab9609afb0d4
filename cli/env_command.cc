// `trialshim env`: what the run path would export from CLUSTER_SPEC /
// TF_CONFIG, and why, as shell (`eval "$(trialshim env)"`) or JSON.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "options.h"
#include "trialshim/base/strings.h"
#include "trialshim/shim/cluster_spec.h"
#include "trialshim/shim/gpus.h"

namespace trialshim::cli {

using shim::EnvExport;
using shim::ExplainDistributedEnvironment;
using shim::ProcessEnvironment;
namespace {

int RunEnv(const std::string& format) {
  StatusOr<std::vector<EnvExport>> exports =
      ExplainDistributedEnvironment(ProcessEnvironment());
  if (!exports.ok()) {
    std::cerr << "trialshim env: error: " << exports.status().message() << "\n";
    return ExitCodeFor(exports.status());
  }
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const EnvExport& e : *exports) {
      out.push_back({{"name", e.name},
                     {"value", e.value},
                     {"reason", e.reason},
                     {"exported", !e.already_set}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << shim::GpuComment(shim::ReadGpus(),
                                std::getenv("CUDA_VISIBLE_DEVICES"));
  if (exports->empty()) {
    std::cout << "# no CLUSTER_SPEC or TF_CONFIG: a single-process trial, "
                 "nothing to export\n";
    return 0;
  }
  for (const EnvExport& e : *exports) {
    if (e.already_set) {
      std::cout << "# " << e.name << "=" << ShellQuote(e.value)
                << " kept: already set (derived: " << e.reason << ")\n";
    } else {
      std::cout << "export " << e.name << "=" << ShellQuote(e.value) << "  # "
                << e.reason << "\n";
    }
  }
  return 0;
}

}  // namespace

void AddEnvCommand(CLI::App& app, int* exit_code) {
  auto format = std::make_shared<std::string>("sh");
  CLI::App* cmd = app.add_subcommand(
      "env",
      "Print the torch.distributed variables (MASTER_ADDR, MASTER_PORT, "
      "WORLD_SIZE, RANK, TRIALSHIM_ROLE) derived from "
      "CLUSTER_SPEC or TF_CONFIG, and why");
  AddOption(cmd, translate::OptionId::kEnvFormat, format.get())
      ->check(CLI::IsMember({"sh", "json"}))
      ->capture_default_str();
  cmd->callback([format, exit_code] { *exit_code = RunEnv(*format); });
}

}  // namespace trialshim::cli
