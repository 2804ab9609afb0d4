// CLI11 options from trialshim's option table (shim/options.h): the
// spellings and help come from the table, the variable and any check on the
// value from the command that registers it.
#ifndef TRIALSHIM_CLI_OPTIONS_H_
#define TRIALSHIM_CLI_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <type_traits>

#include "trialshim/translate/options.h"

namespace trialshim::cli {

// Registers option `id` on `cmd`, storing into *value: a flag when *value is
// a bool (the table says it takes no value), else an option.
template <typename T>
CLI::Option* AddOption(CLI::App* cmd, translate::OptionId id, T* value) {
  const translate::Option& o = translate::GetOption(id);
  std::string names(o.names), help(o.help);
  if constexpr (std::is_same_v<T, bool>) {
    return cmd->add_flag(names, *value, help);
  } else {
    return cmd->add_option(names, *value, help);
  }
}

}  // namespace trialshim::cli

#endif  // TRIALSHIM_CLI_OPTIONS_H_
