// Python's int() and float() of a str; see python_number.h.
#include "trialshim/base/python_number.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>

#include "trialshim/base/python_text.h"

namespace trialshim {
namespace {

// Python's limit on converting a str to an int
// (sys.int_info.default_max_str_digits).
constexpr size_t kMaxIntDigits = 4300;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// What int() and float() strip: ASCII whitespace (Py_ISSPACE).
std::string_view Strip(std::string_view s) {
  const std::string_view space = " \t\n\v\f\r";
  s.remove_prefix(std::min(s.find_first_not_of(space), s.size()));
  s.remove_suffix(s.size() - (s.find_last_not_of(space) + 1));
  return s;
}

// Python's digitpart, digit (["_"] digit)*, at s[*p]: its digits are
// appended to *out and *p moved past it. False when s[*p] is no digit.
bool DigitPart(std::string_view s, size_t* p, std::string* out) {
  if (*p >= s.size() || !IsDigit(s[*p])) return false;
  while (*p < s.size()) {
    if (IsDigit(s[*p])) {
      *out += s[(*p)++];
    } else if (s[*p] == '_' && *p + 1 < s.size() && IsDigit(s[*p + 1])) {
      ++*p;
    } else {
      break;
    }
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i]) return false;
  }
  return true;
}

// float()'s text as from_chars reads it: no underscores, no '+' ("-1.5e3",
// "inf", "-nan"), or "" when float() refuses it.
std::string FloatText(std::string_view text) {
  std::string_view s = Strip(text);
  std::string out;
  size_t p = 0;
  if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    if (s[p++] == '-') out += '-';  // from_chars takes no '+'
  }
  std::string_view rest = s.substr(p);
  for (const char* word : {"inf", "infinity", "nan"}) {
    if (EqualsIgnoreCase(rest, word)) return out + word;
  }
  const bool whole = DigitPart(s, &p, &out);
  bool fraction = false;
  if (p < s.size() && s[p] == '.') {
    out += s[p++];
    fraction = DigitPart(s, &p, &out);
  }
  if (!whole && !fraction) return "";
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    out += s[p++];
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) out += s[p++];
    if (!DigitPart(s, &p, &out)) return "";
  }
  return p == s.size() ? out : "";
}

}  // namespace

StatusOr<std::string> PythonIntText(std::string_view text) {
  std::string_view s = Strip(text);
  size_t p = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++p;
  std::string digits;
  const bool scanned = DigitPart(s, &p, &digits);
  // Python's long_from_string_base counts the digits before it looks at
  // what follows them (but after a misplaced underscore).
  if (scanned && digits.size() > kMaxIntDigits &&
      (p == s.size() || s[p] != '_')) {
    return Status::InvalidArgument(
        "Exceeds the limit (4300 digits) for integer string conversion: "
        "value has " +
        std::to_string(digits.size()) +
        " digits; use sys.set_int_max_str_digits() to increase the limit");
  }
  if (!scanned || p != s.size()) {
    // "%.200R": the repr, cut after 200 characters.
    std::u32string shown =
        DecodeUtf8(PythonStringRepr(text), Utf8Errors::kSurrogateEscape);
    shown.resize(std::min<size_t>(shown.size(), 200));
    std::string message = "invalid literal for int() with base 10: ";
    for (char32_t c : shown) AppendUtf8(c, &message);
    return Status::InvalidArgument(message);
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  return (negative && digits != "0" ? "-" : "") + digits;
}

StatusOr<std::optional<int64_t>> ParsePythonInt(std::string_view text) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::string digits, PythonIntText(text));
  int64_t value = 0;
  auto res = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (res.ec != std::errc()) return std::optional<int64_t>();
  return std::optional<int64_t>(value);
}

StatusOr<double> ParsePythonFloat(std::string_view text) {
  const std::string clean = FloatText(text);
  if (clean.empty()) {
    return Status::InvalidArgument("could not convert string to float: " +
                                   PythonStringRepr(text));
  }
  double value = 0;
  auto res = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (res.ec == std::errc::result_out_of_range) {
    // from_chars leaves the value alone; strtod rounds as float() does:
    // +-inf above the range, 0.0 (or the nearest subnormal) below it.
    value = std::strtod(clean.c_str(), nullptr);
  } else if (res.ec != std::errc() || res.ptr != clean.data() + clean.size()) {
    return Status::Internal("float text '" + clean + "' not read");
  }
  return value;
}

bool PythonIntAccepts(std::string_view text) {
  return PythonIntText(text).ok();
}

bool PythonFloatAccepts(std::string_view text) {
  return !FloatText(text).empty();
}

}  // namespace trialshim
