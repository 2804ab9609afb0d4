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

namespace {

// `at` moved back to the start of the UTF-8 character it falls in.
size_t CharStart(std::string_view s, size_t at) {
  while (at > 0 && at < s.size() &&
         (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) {
    --at;
  }
  return at;
}

}  // namespace

std::string Abbreviated(std::string_view value, size_t max) {
  if (value.size() <= max) return std::string(value);
  // Two thirds of the budget for the head (where a path's root and a
  // JSON's start say what it is), a third for the tail (its file name).
  size_t head = CharStart(value, max * 2 / 3);
  size_t tail = CharStart(value, value.size() - max / 3);
  return std::string(value.substr(0, head)) + "... (" +
         std::to_string(value.size()) + " bytes) ..." +
         std::string(value.substr(tail));
}

}  // namespace trialshim
