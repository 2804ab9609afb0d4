// The trialshim subcommands. Each one registers its flags on the CLI11 app
// and, when chosen, runs and stores the process exit code. Commands are the
// only code besides main() that prints; all logic lives in the libraries.
#ifndef TRIALSHIM_CLI_COMMANDS_H_
#define TRIALSHIM_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trialshim::cli {

// What main() keeps away from CLI11: the words after the first "--".
using Trailing = std::vector<std::string>;

// Each Add* registers one subcommand on `app`; when it runs, it writes the
// exit code to *exit_code.
void AddComposeCommand(CLI::App& app, int* exit_code);
// `trialshim translate` (translate_command.cc) and the top-level
// `trialshim [OPTIONS] -- COMMAND` (run_command.cc) also read the arguments
// after the first "--", which main() keeps away from CLI11 in *trailing.
void AddTranslateCommand(CLI::App& app, const std::vector<std::string>* trailing,
                         int* exit_code);
void SetUpRunCommand(CLI::App& app, const std::vector<std::string>* trailing,
                     int* exit_code);
// `trialshim env` (env_command.cc) and `trialshim launch` (launch_command.cc).
void AddEnvCommand(CLI::App& app, int* exit_code);
void AddLaunchCommand(CLI::App& app, int* exit_code);
// `trialshim check` (check_command.cc) and `trialshim sweep`
// (sweep_command.cc): a Vertex tuning job spec, checked or run locally;
// `trialshim job` (job_command.cc) writes one from a Hydra sweep. job and
// sweep read their COMMAND after "--" from *trailing, as run does.
void AddCheckCommand(CLI::App& app, int* exit_code);
void AddSweepCommand(CLI::App& app, const std::vector<std::string>* trailing,
                     int* exit_code);
void AddJobCommand(CLI::App& app, const std::vector<std::string>* trailing,
                   int* exit_code);

}  // namespace trialshim::cli

#endif  // TRIALSHIM_CLI_COMMANDS_H_
