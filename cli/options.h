// CLI11 options from trialshim's option table (shim/options.h): the
// spellings and help come from the table, the variable and any check on the
// value from the command that registers it.
#ifndef TRIALSHIM_CLI_OPTIONS_H_
#define TRIALSHIM_CLI_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>

#include "trialshim/base/strings.h"
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

// The bound of a number option as a message shows it: 1, 0.5, 604800.
template <typename T>
std::string BoundText(T v) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.15g", v);
    return buf;
  }
}

// The project's check of a number option's range, instead of CLI11's
// Range, PositiveNumber and NonNegativeNumber, which print their bounds
// with %f ("Value 0 not in range 0.000000 to 1797693...", DBL_MAX as 309
// digits): "--parallel: must be at least 1, got '0'", or with an upper
// bound "must be from 1 to 4096, got '0'". Text that is not a number of
// type T is left to IntegerText (integers) or CLI11's conversion.
template <typename T>
CLI::Validator Bounded(T min, T max = std::numeric_limits<T>::max()) {
  bool open = max == std::numeric_limits<T>::max();
  std::string want = open ? "at least " + BoundText(min)
                          : "from " + BoundText(min) + " to " + BoundText(max);
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        T v{};
        if constexpr (std::is_integral_v<T>) {
          const char* begin = text.data() + (StartsWith(text, "+") ? 1 : 0);
          const char* end = text.data() + text.size();
          auto [at, ec] = std::from_chars(begin, end, v);
          if (ec != std::errc() || at != end) return "";
        } else {
          char* end = nullptr;
          v = std::strtod(text.c_str(), &end);
          if (text.empty() || *end != '\0') return "";
        }
        if (v >= min && v <= max) return "";
        return "must be " + want + ", got '" + Abbreviated(text) + "'";
      },
      open ? ">=" + BoundText(min)
           : "[" + BoundText(min) + ".." + BoundText(max) + "]");
}

// CLI11's ExistingFile and ExistingDirectory, saying the path abbreviated
// (a 100 KB path would bury the message): "--workdir: no such directory:
// PATH".
inline CLI::Validator Existing(bool directory) {
  return CLI::Validator(
      [directory](std::string& path) -> std::string {
        std::error_code ec;
        std::filesystem::file_status st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st)) {
          return std::string("no such ") + (directory ? "directory" : "file") +
                 ": " + Abbreviated(path);
        }
        if (std::filesystem::is_directory(st) != directory) {
          return Abbreviated(path) + " is " +
                 (directory ? "not a directory" : "a directory, not a file");
        }
        return "";
      },
      directory ? "DIR" : "FILE");
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
