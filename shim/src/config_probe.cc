// ConfigFromCommand: a Hydra app's `--cfg all`, read back; see
// config_probe.h.
#include "trialshim/shim/config_probe.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "trialshim/base/subprocess.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::shim {
namespace {

constexpr size_t kMaxOutput = 64 << 20;  // a config, not a training log

std::string Shown(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return "`" + out + "`";
}

// The app's own config directory: hydra.runtime.config_sources' entry of
// provider "main" and schema "file".
std::string MainConfigDir(const config::Node& hydra) {
  const config::Node* sources = hydra.Find("runtime.config_sources");
  if (sources == nullptr || !sources->is_list()) return "";
  for (const config::Node& s : sources->AsList()) {
    const config::Node* provider = s.Get("provider");
    const config::Node* schema = s.Get("schema");
    const config::Node* path = s.Get("path");
    if (provider && provider->is_string() && provider->AsString() == "main" &&
        schema && schema->is_string() && schema->AsString() == "file" && path &&
        path->is_string()) {
      return path->AsString();
    }
  }
  return "";
}

}  // namespace

StatusOr<config::ComposeResult> ConfigFromCommand(
    const std::vector<std::string>& command,
    std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), {"--cfg", "all"});
  SubprocessOptions options;
  options.parent_death_signal = SIGKILL;
  options.in = Stdio::Null();
  // Bounded: an app that never answers (it waits for a GPU, a lock, a
  // prompt) would hold the trial until Vertex's timeout; RunCaptured kills
  // it, with all it started, after `timeout`.
  StatusOr<CapturedRun> run = RunCaptured(argv, options, timeout, kMaxOutput);
  if (!run.ok()) {
    std::string message = "--config-from-command: running " + Shown(argv) +
                          ": " + run.status().message();
    if (run.status().message().find("did not finish") != std::string::npos) {
      message += " (a Hydra app prints its config for --cfg all and exits; " +
                 std::string(kConfigProbeTimeoutVariable) +
                 " sets the seconds it may take)";
    }
    return Status(run.status().code(), message);
  }
  const std::string& out = run->out;
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(
        "--config-from-command: " + Shown(argv) + " " + why +
        " (a Hydra app prints its composed config for --cfg all; without one, "
        "give --config-path and --config-name instead)");
  };
  if (run->exit_code != 0) {
    return refuse("exited with status " + std::to_string(run->exit_code));
  }
  StatusOr<config::Node> printed =
      config::LoadYamlString(out, "<" + command[0] + " --cfg all>");
  if (!printed.ok()) {
    return refuse("printed what is not YAML: " + printed.status().message());
  }
  const config::Node* hydra =
      printed->is_map() ? printed->Get("hydra") : nullptr;
  if (hydra == nullptr || !hydra->is_map()) {
    return refuse("printed no config with a hydra: node");
  }
  config::ComposeResult result;
  result.hydra = *hydra;
  result.config = std::move(printed).value();
  result.config.Erase("hydra");
  if (const config::Node* choices = result.hydra.Find("runtime.choices");
      choices && choices->is_map()) {
    for (const auto& [group, option] : choices->AsMap()) {
      if (option.is_null()) {
        result.choices.emplace_back(group, std::nullopt);
      } else if (option.is_scalar()) {
        result.choices.emplace_back(group, config::PythonStr(option));
      }
    }
  }
  std::string dir = MainConfigDir(result.hydra);
  if (!dir.empty()) {
    StatusOr<config::ConfigRepository> repo =
        config::ConfigRepository::Open(dir);
    if (repo.ok()) result.repository = std::move(repo).value();
  }
  return result;
}

}  // namespace trialshim::shim
