// The texts a Hydra app prints instead of running (private to the app
// library): --help, --hydra-help and --info, as Hydra 1.3.2 prints them.
#ifndef TRIALSHIM_APP_SRC_HELP_H_
#define TRIALSHIM_APP_SRC_HELP_H_

#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/compose.h"

namespace trialshim::app::internal {

// hydra.help.template with $APP_CONFIG_GROUPS ("db: mysql, pg" per group
// that has options) and $CONFIG (the task config as YAML) filled in, as
// Hydra's app_help prints it (print() adds the last newline).
StatusOr<std::string> AppHelp(const config::ComposeResult& composed,
                              bool resolve);

// Whether a trialshim app takes Hydra's flag `id`: not --shell-completion
// or --experimental-rerun (both need Python). The others are listed by
// --hydra-help; these are refused by name.
bool Supported(config::HydraFlagId id);

// hydra.hydra_help.template with the flags a trialshim app takes (Hydra's
// others are not listed) and Hydra's groups.
StatusOr<std::string> HydraHelp(const config::ComposeResult& composed);

// --info searchpath | defaults | defaults-tree | config | plugins | all, as
// Hydra prints them (plugins without Hydra's import timings).
StatusOr<std::string> Info(const std::string& what,
                           const config::ComposeResult& composed);

// --info all as Hydra logs it under hydra.verbose: a message per line, the
// config YAML one message.
std::vector<std::string> AllInfo(const config::ComposeResult& composed);

}  // namespace trialshim::app::internal

#endif  // TRIALSHIM_APP_SRC_HELP_H_
