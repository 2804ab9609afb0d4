// trialshim: a thin main over the config and shim libraries.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"trialshim: Vertex AI tuning trials for Hydra apps"};
  app.require_subcommand(0, 1);
  int exit_code = 0;
  trialshim::shim::AddComposeCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "trialshim: internal error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
