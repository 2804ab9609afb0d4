// trialshim: a thin main over the config and shim libraries.
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "trialshim/translate/options.h"

int main(int argc, char** argv) {
  using namespace trialshim::cli;
  CLI::App app{
      "trialshim: Vertex AI tuning trials for Hydra apps.\n"
      "Usage: trialshim [OPTIONS] -- COMMAND [ARG...]  translates each ARG "
      "(--key=value -> key=value) and runs COMMAND; or a subcommand"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("trialshim ") +
                                        TRIALSHIM_VERSION);
  int exit_code = 0;
  // Everything after the first "--" is the COMMAND (or translate's ARGs):
  // CLI11 never sees it, so no trainer argument can be taken for ours.
  std::vector<std::string> trailing;

  // The subcommands, one line each.
  AddComposeCommand(app, &exit_code);
  AddEnvCommand(app, &exit_code);
  AddLaunchCommand(app, &exit_code);
  AddCheckCommand(app, &exit_code);
  AddSweepCommand(app, &trailing, &exit_code);
  AddJobCommand(app, &trailing, &exit_code);
  AddTranslateCommand(app, &trailing, &exit_code);
  SetUpRunCommand(app, &trailing, &exit_code);

  // Other subcommands parse their own "--" (compose's overrides).
  int parsed_argc = argc;
  const std::string first = argc < 2 ? "" : argv[1];
  bool own_dashdash =
      argc < 2 || first == "translate" || first == "job" || first == "sweep";
  if (!own_dashdash) {
    // Not get_subcommand(): it throws when there is none, and the first
    // exception costs every trial start-up a noticeable fraction.
    const std::function<bool(CLI::App*)> named = [&](CLI::App* sub) {
      return sub->check_name(argv[1]);
    };
    own_dashdash = app.get_subcommands(named).empty();
  }
  if (own_dashdash) {
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--") {
        trailing.assign(argv + i + 1, argv + argc);
        parsed_argc = i;
        break;
      }
    }
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 lists what it could not place, last first; say what was meant.
    std::string explained =
        e.get_exit_code() == 0
            ? ""
            : trialshim::translate::ExplainCommandLine(
                  argv[0], std::vector<std::string>(argv + 1, argv + argc));
    if (explained.empty()) return app.exit(e) == 0 ? 0 : 2;
    std::cerr << "trialshim: error: " << explained << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "trialshim: internal error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
