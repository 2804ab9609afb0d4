#include "trialshim/base/strings.h"

namespace trialshim {

std::string ShellQuote(std::string_view word) {
  constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/@%+=,";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string_view::npos) {
    return std::string(word);
  }
  if (word.find('\'') != std::string_view::npos &&
      word.find_first_of("\"$`\\!") == std::string_view::npos) {
    return "\"" + std::string(word) + "\"";
  }
  return "'" + ReplaceAll(std::string(word), "'", "'\\''") + "'";
}

}  // namespace trialshim
