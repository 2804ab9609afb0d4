#include "translate_flags.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "options.h"
#include "trialshim/base/python_text.h"
#include "trialshim/base/subprocess.h"
#include "trialshim/shim/config_probe.h"

namespace trialshim::cli {

using translate::LoadKeyMapFile;
using translate::ParseKeyMapping;
using translate::TranslateOptions;

void AddTranslateFlags(CLI::App* cmd, TranslateFlags* flags, bool command) {
  using translate::OptionId;
  CLI::Option* path =
      AddOption(cmd, OptionId::kConfigPath, &flags->config_path);
  CLI::Option* name =
      AddOption(cmd, OptionId::kConfigName, &flags->config_name);
  path->needs(name);
  name->needs(path);
  AddOption(cmd, OptionId::kMap, &flags->maps);
  AddOption(cmd, OptionId::kMapFile, &flags->map_file);
  AddOption(cmd, OptionId::kKeep, &flags->keep);
  AddOption(cmd, OptionId::kAddUnknown, &flags->add_unknown);
  if (command) {
    AddOption(cmd, OptionId::kConfigFromCommand, &flags->config_from_command)
        ->excludes(path);
  }
}

Status BuildTranslateContext(const TranslateFlags& flags,
                             TranslateContext* ctx) {
  TranslateOptions& opts = ctx->options;
  if (!flags.map_file.empty()) {
    TRIALSHIM_ASSIGN_OR_RETURN(opts.key_map, LoadKeyMapFile(flags.map_file));
  }
  for (const std::string& m : flags.maps) {
    TRIALSHIM_ASSIGN_OR_RETURN(auto mapping, ParseKeyMapping(m));
    opts.key_map.push_back(std::move(mapping));
  }
  opts.keep_flags = flags.keep;
  opts.add_unknown = flags.add_unknown;
  if (flags.config_path.empty()) return Status::Ok();

  config::ComposeRequest request;
  request.config_path = flags.config_path;
  request.config_name = flags.config_name;
  StatusOr<config::ComposeResult> composed = config::Compose(request);
  if (!composed.ok()) {
    return composed.status().WithPrefix("--config-path " + flags.config_path +
                                        " --config-name " + flags.config_name);
  }
  ctx->composed = std::move(composed).value();
  opts.config = &*ctx->composed;
  // The composition's repository: its search path, and the directory
  // listings it has read already.
  opts.repository = &ctx->composed->repository;
  opts.recompose = [request](const std::vector<std::string>& overrides) {
    config::ComposeRequest with = request;
    with.overrides = overrides;
    return config::Compose(with);
  };
  return Status::Ok();
}

namespace {

// Whether the program exec would run for `program` (a name without '/' is
// looked up in PATH) is a trialshim app.
bool IsAppProgram(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string file = program.find('/') != std::string::npos
                         ? program
                         : FindProgram(program, path ? path : "");
  return !file.empty() && translate::IsTrialshimApp(file);
}

// How long the app may take to print its config: kConfigProbeTimeout, or
// the seconds in TRIALSHIM_CONFIG_PROBE_TIMEOUT.
StatusOr<std::chrono::milliseconds> ProbeTimeout() {
  const char* text = std::getenv(shim::kConfigProbeTimeoutVariable);
  if (text == nullptr || *text == '\0') return shim::kConfigProbeTimeout;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  // A day at most: beyond that it is no bound, and the milliseconds stay
  // far inside their range.
  if (end == text || *end != '\0' || !(seconds > 0) || seconds > 86400) {
    return Status::InvalidArgument(
        std::string(shim::kConfigProbeTimeoutVariable) + "='" + text +
        "': expected the seconds --config-from-command's app may take, "
        "more than 0 and at most 86400");
  }
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::ceil(seconds * 1000)));
}

// --config-from-command: the config the app prints for its static
// arguments (config_probe.h); a group switched by the trial's arguments asks
// it again.
Status AskConfig(const std::string& program,
                 const std::vector<std::string>& args, TranslateContext* ctx) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> probe,
                             translate::StaticArgs(args, ctx->options));
  probe.insert(probe.begin(), program);
  TRIALSHIM_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, ProbeTimeout());
  TRIALSHIM_ASSIGN_OR_RETURN(ctx->composed,
                             shim::ConfigFromCommand(probe, timeout));
  ctx->options.config = &*ctx->composed;
  if (ctx->composed->repository.dir().empty()) return Status::Ok();
  ctx->options.repository = &ctx->composed->repository;
  ctx->options.recompose = [probe,
                            timeout](const std::vector<std::string>& groups) {
    std::vector<std::string> again = probe;
    again.insert(again.end(), groups.begin(), groups.end());
    return shim::ConfigFromCommand(again, timeout);
  };
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::string>> TranslateCommand(
    const TranslateFlags& flags, const std::vector<std::string>& command) {
  // The composed config lives on until exit (or the exec right after, in a
  // trial): freeing its trees was a tenth of a config-checked start-up.
  static std::vector<std::unique_ptr<TranslateContext>> kept;
  TranslateContext& ctx = *kept.emplace_back(new TranslateContext);
  TRIALSHIM_RETURN_IF_ERROR(BuildTranslateContext(flags, &ctx));
  std::vector<std::string> args(command.begin() + 1, command.end());
  if (flags.config_from_command) {
    TRIALSHIM_RETURN_IF_ERROR(AskConfig(command[0], args, &ctx));
  } else if (flags.config_path.empty()) {
    // Without a config, Vertex's 32.0 for an int key would reach the app as
    // data.batch_size=32.0, which its schema refuses: the app has the config.
    ctx.options.leave_to_app = IsAppProgram(command[0]);
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> translated,
                             TranslateToArgv(args, ctx.options));
  translated.insert(translated.begin(), command[0]);
  return translated;
}

std::string ArgvJson(const std::vector<std::string>& args) {
  std::string out = "[";
  for (const std::string& a : args) {
    if (out.size() > 1) out += ", ";
    AppendPythonJsonString(a, &out, Utf8Errors::kSurrogateEscape);
  }
  return out + "]";
}

}  // namespace trialshim::cli
