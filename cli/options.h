// CLI11 options from trialshim's option table (shim/options.h): the
// spellings and help come from the table, the variable and any check on the
// value from the command that registers it.
#ifndef TRIALSHIM_CLI_OPTIONS_H_
#define TRIALSHIM_CLI_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <string>
#include <type_traits>

#include "trialshim/translate/options.h"

namespace trialshim::cli {

// A check for an integer option of type T: the decimal digits of a value T
// holds, nothing else. CLI11 2.1 converts with strtoll, which clamps what
// does not fit (--max-trials 99999999999999999999 became 2^63-1) and stops
// quietly at "1e20"'s 'e' on some paths: an integer option takes an integer,
// or the command is refused naming it.
template <typename T>
CLI::Validator IntegerText() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        T v{};
        const char* end = text.data() + text.size();
        const char* begin = text.data();
        if (!text.empty() && text[0] == '+') ++begin;
        auto [at, ec] = std::from_chars(begin, end, v);
        if (ec == std::errc() && at == end && begin != end) return "";
        std::string range = "[" + std::to_string(std::numeric_limits<T>::min()) +
                            ", " + std::to_string(std::numeric_limits<T>::max()) +
                            "]";
        return "expected an integer in " + range + ", got '" + text + "'" +
               (ec == std::errc::result_out_of_range ? " (out of range)" : "");
      },
      "");
}

// Registers option `id` on `cmd`, storing into *value: a flag when *value is
// a bool (the table says it takes no value), else an option; an integer
// option takes only an integer its type holds (IntegerText).
template <typename T>
CLI::Option* AddOption(CLI::App* cmd, translate::OptionId id, T* value) {
  const translate::Option& o = translate::GetOption(id);
  std::string names(o.names), help(o.help);
  if constexpr (std::is_same_v<T, bool>) {
    return cmd->add_flag(names, *value, help);
  } else if constexpr (std::is_integral_v<T>) {
    return cmd->add_option(names, *value, help)->check(IntegerText<T>());
  } else {
    return cmd->add_option(names, *value, help);
  }
}

}  // namespace trialshim::cli

#endif  // TRIALSHIM_CLI_OPTIONS_H_
