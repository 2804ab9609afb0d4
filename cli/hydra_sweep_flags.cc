#include "hydra_sweep_flags.h"

#include "options.h"
#include "trialshim/base/strings.h"

namespace trialshim::cli {

using translate::OptionId;

void HydraSweepFlags::Add(CLI::App* cmd, bool required) {
  CLI::Option* path = AddOption(cmd, OptionId::kSweepConfigPath, &config_path);
  CLI::Option* name = AddOption(cmd, OptionId::kSweepConfigName, &config_name);
  if (required) {
    path->required();
    name->required();
  } else {
    path->needs(name);
    name->needs(path);
  }
  AddOption(cmd, OptionId::kMetric, &metrics);
  AddOption(cmd, OptionId::kDirection, &directions)
      ->check(CLI::IsMember({"minimize", "maximize"}));
}

tuning::HydraSweepRequest HydraSweepFlags::Request(
    const std::vector<std::string>& command) const {
  tuning::HydraSweepRequest r;
  r.config_path = config_path;
  r.config_name = config_name;
  r.overrides = overrides;
  r.command = command;
  r.metrics = metrics;
  r.directions = directions;
  r.machine_type = machine_type;
  r.accelerator = accelerator;
  r.replica_count = replica_count;
  r.display_name = display_name;
  return r;
}

std::string HydraSweepFlags::CommandLine(
    const std::string& program, const std::string& sub,
    const std::vector<std::string>& command,
    const std::vector<std::string>& more) const {
  std::vector<std::string> words = {
      program, sub, "--config-path", config_path, "--config-name", config_name};
  for (const std::string& m : metrics)
    words.insert(words.end(), {"--metric", m});
  for (const std::string& d : directions) {
    words.insert(words.end(), {"--direction", d});
  }
  words.insert(words.end(), more.begin(), more.end());
  words.insert(words.end(), overrides.begin(), overrides.end());
  words.push_back("--");
  words.insert(words.end(), command.begin(), command.end());
  std::string line;
  for (const std::string& w : words) {
    line += (line.empty() ? "" : " ") + ShellQuote(w);
  }
  return line;
}

}  // namespace trialshim::cli
