// `trialshim compose`: prints the config Hydra would compose.
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/emit.h"

namespace trialshim::cli {

using translate::OptionId;
namespace {

struct ComposeFlags {
  std::string config_path;
  std::string config_name;
  bool resolve = false;
  std::string format = "yaml";
  std::string cfg = "job";
  std::string job_name = "app";
  std::vector<std::string> overrides;
};

int RunCompose(const ComposeFlags& flags) {
  config::ComposeRequest request;
  request.config_path = flags.config_path;
  request.config_name = flags.config_name;
  request.overrides = flags.overrides;
  request.job_name = flags.job_name;
  StatusOr<config::ComposeResult> composed = config::Compose(request);
  if (!composed.ok()) {
    std::cerr << "trialshim compose: error: " << composed.status().message()
              << "\n";
    return ExitCodeFor(composed.status());
  }
  for (const std::string& w : composed->warnings) {
    std::cerr << "trialshim compose: warning: " << w << "\n";
  }
  config::Node out = config::ConfigView(*composed, flags.cfg);
  if (flags.resolve) {
    StatusOr<config::Node> resolved = config::ResolveShown(out, *composed);
    if (!resolved.ok()) {
      std::cerr << "trialshim compose: error: " << resolved.status().message()
                << "\n";
      return ExitCodeFor(resolved.status());
    }
    out = std::move(resolved).value();
  }
  std::cout << (flags.format == "json" ? config::ToJson(out) + "\n"
                                       : config::ToYaml(out));
  return 0;
}

}  // namespace

void AddComposeCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ComposeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compose", "Print the config Hydra would compose (as a Hydra app's --cfg)");
  AddOption(cmd, OptionId::kComposeConfigPath, &flags->config_path)->required();
  AddOption(cmd, OptionId::kComposeConfigName, &flags->config_name)->required();
  AddOption(cmd, OptionId::kResolve, &flags->resolve);
  AddOption(cmd, OptionId::kComposeFormat, &flags->format)
      ->check(CLI::IsMember({"yaml", "json"}))
      ->capture_default_str();
  AddOption(cmd, OptionId::kComposeCfg, &flags->cfg)
      ->check(CLI::IsMember({"job", "hydra", "all"}))
      ->capture_default_str();
  AddOption(cmd, OptionId::kComposeJobName, &flags->job_name)
      ->capture_default_str();
  cmd->add_option("overrides", flags->overrides, "Hydra overrides");
  cmd->callback([flags, exit_code] { *exit_code = RunCompose(*flags); });
}

}  // namespace trialshim::cli
