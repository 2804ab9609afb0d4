#include "translate_flags.h"

namespace trialshim::cli {

using shim::LoadKeyMapFile;
using shim::ParseKeyMapping;
using shim::TranslateOptions;

void AddTranslateFlags(CLI::App* cmd, TranslateFlags* flags) {
  CLI::Option* path = cmd->add_option(
      "--config-path", flags->config_path,
      "Config directory of the trainer: check keys and group options "
      "against the composed config (default: off)");
  CLI::Option* name =
      cmd->add_option("--config-name", flags->config_name,
                      "Primary config name, with --config-path");
  path->needs(name);
  name->needs(path);
  cmd->add_option("--map", flags->maps,
                  "Rename a key: FROM=TO, e.g. lr=optimizer.lr (repeatable)");
  cmd->add_option("--map-file", flags->map_file,
                  "YAML mapping of FROM: TO key renames");
  cmd->add_option("--keep", flags->keep,
                  "A flag of the trainer's own to pass through untouched, "
                  "e.g. --keep=--local_rank (repeatable)");
  cmd->add_flag("--add-unknown", flags->add_unknown,
                "With --config-path: turn unknown keys into +key=value "
                "instead of refusing them");
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

  TRIALSHIM_ASSIGN_OR_RETURN(ctx->repository,
                             config::ConfigRepository::Open(flags.config_path));
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
  opts.repository = &*ctx->repository;
  opts.recompose = [request](const std::vector<std::string>& overrides) {
    config::ComposeRequest with = request;
    with.overrides = overrides;
    return config::Compose(with);
  };
  return Status::Ok();
}

StatusOr<std::vector<std::string>> TranslateCommand(
    const TranslateFlags& flags, const std::vector<std::string>& command) {
  TranslateContext ctx;
  TRIALSHIM_RETURN_IF_ERROR(BuildTranslateContext(flags, &ctx));
  std::vector<std::string> args(command.begin() + 1, command.end());
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> translated,
                             TranslateToArgv(args, ctx.options));
  translated.insert(translated.begin(), command[0]);
  return translated;
}

}  // namespace trialshim::cli
