// The trialshim subcommands. Each one registers its flags on the CLI11 app
// and, when chosen, runs and stores the process exit code. Commands are the
// only code besides main() that prints; all logic lives in the libraries.
#ifndef TRIALSHIM_SHIM_SRC_COMMANDS_H_
#define TRIALSHIM_SHIM_SRC_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace trialshim::shim {

// Each Add* registers one subcommand on `app`; when it runs, it writes the
// exit code to *exit_code.
void AddComposeCommand(CLI::App& app, int* exit_code);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_SRC_COMMANDS_H_
