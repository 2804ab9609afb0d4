// Small string helpers shared by the config engine and the shim, which
// both rewrite keys and paths (std::string has neither before C++20).
#ifndef TRIALSHIM_BASE_STRINGS_H_
#define TRIALSHIM_BASE_STRINGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace trialshim {

inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// `s` with every non-overlapping `from` replaced by `to`, left to right;
// the replacement text is never searched again. `from` must not be empty.
inline std::string ReplaceAll(std::string s, std::string_view from,
                              std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

// The items with `sep` between each two (Python's sep.join(items)).
inline std::string JoinStrings(const std::vector<std::string>& items,
                               std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

// `word` as one word for sh, for a command a message tells the user to run:
// as it is when plainly safe, in double quotes when it holds single quotes
// but nothing double quotes would expand ("+act='relu,gelu'"), else in
// single quotes.
std::string ShellQuote(std::string_view word);

// A user-supplied value as an error message shows it: whole when it has at
// most `max` bytes, else its first and last bytes around
// "... (N bytes) ...", so a 100 KB path or CLUSTER_SPEC names itself in
// one line instead of burying the message. Cuts fall on UTF-8 character
// boundaries.
std::string Abbreviated(std::string_view value, size_t max = 160);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_STRINGS_H_
