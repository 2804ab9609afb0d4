#include "trialshim/base/number_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "trialshim/base/python_text.h"

namespace trialshim {

std::string FormatPythonFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, then laid out as Python's
  // float_repr_style 'short' does: exponent form when exp < -4 or exp >= 16.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exp = std::atoi(sci.c_str() + e + 1);
  bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+',
                  std::abs(exp));
    out += ebuf;
  } else if (exp < 0) {
    out = "0." + std::string(-exp - 1, '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out = digits + std::string(exp + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
  }
  return negative ? "-" + out : out;
}

StatusOr<std::string> PythonIntText(std::string_view text) {
  // Python's limit on converting a str to an int
  // (sys.int_info.default_max_str_digits).
  constexpr size_t kMaxDigits = 4300;
  const std::string_view space = " \t\n\v\f\r";
  std::string_view s = text;
  s.remove_prefix(std::min(s.find_first_not_of(space), s.size()));
  s.remove_suffix(s.size() - (s.find_last_not_of(space) + 1));
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  std::string digits;
  bool valid = !s.empty();
  for (size_t i = 0; i < s.size() && valid; ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      digits += s[i];
    } else {  // '_' only between two digits
      valid = s[i] == '_' && i > 0 && s[i - 1] != '_' && i + 1 < s.size();
    }
  }
  if (!valid) {
    // "%.200R": the repr, cut after 200 characters.
    std::u32string shown =
        DecodeUtf8(PythonStringRepr(text), Utf8Errors::kSurrogateEscape);
    shown.resize(std::min<size_t>(shown.size(), 200));
    std::string message = "invalid literal for int() with base 10: ";
    for (char32_t c : shown) AppendUtf8(c, &message);
    return Status::InvalidArgument(message);
  }
  if (digits.size() > kMaxDigits) {
    return Status::InvalidArgument(
        "Exceeds the limit (4300 digits) for integer string conversion: "
        "value has " +
        std::to_string(digits.size()) +
        " digits; use sys.set_int_max_str_digits() to increase the limit");
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  return (negative && digits != "0" ? "-" : "") + digits;
}

}  // namespace trialshim
