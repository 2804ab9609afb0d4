// CPython 3.11's format() for int and float (Python/formatter_unicode.c,
// Python/pystrtod.c) and str.format's parser (Objects/stringlib/
// unicode_format.h), step by step; the names of CPython's functions are
// given where a step follows one.
#include "trialshim/base/python_format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

#include "trialshim/base/number_format.h"
#include "trialshim/base/python_text.h"

namespace trialshim {
namespace {

Status ValueError(std::string message) {
  return Status::InvalidArgument(std::move(message));
}

std::string Utf8(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) AppendUtf8(c, &out);
  return out;
}

// A code point as CPython's messages name it: 'q', or '\x1' when it is not
// printable ASCII.
std::string CodeName(char32_t c) {
  if (c > 32 && c < 128) return std::string("'") + static_cast<char>(c) + "'";
  char buf[24];
  std::snprintf(buf, sizeof buf, "'\\x%x'", static_cast<unsigned>(c));
  return buf;
}

bool Among(std::u32string_view set, char32_t c) {
  return set.find(c) != std::u32string_view::npos;
}

enum class Grouping { kNone, kComma, kUnderscore, kUnderFour };

// InternalFormatSpec.
struct Spec {
  char32_t fill = U' ';
  char32_t align = U'>';
  char32_t sign = 0;
  bool no_neg_0 = false;  // 'z'
  bool alternate = false;
  int64_t width = -1;
  Grouping grouping = Grouping::kNone;
  int64_t precision = -1;
  char32_t type = 0;
};

// get_integer (formatter_unicode.c): the decimal digits at s[*pos], into
// *value; returns how many there were.
StatusOr<size_t> GetInteger(std::u32string_view s, size_t* pos,
                            int64_t* value) {
  int64_t acc = 0;
  size_t n = 0;
  for (; *pos < s.size() && s[*pos] >= U'0' && s[*pos] <= U'9'; ++*pos, ++n) {
    const int digit = static_cast<int>(s[*pos] - U'0');
    if (acc > (INT64_MAX - digit) / 10)
      return ValueError("Too many decimal digits in format string");
    acc = acc * 10 + digit;
  }
  *value = acc;
  return n;
}

// The end of parse_internal_render_format_spec: which types take a
// thousands separator (PEP 378), and '_' in every four digits for b, o, x
// and X (PEP 515).
Status CheckGrouping(Spec* f) {
  if (f->grouping == Grouping::kNone || Among(U"defgEGF%", f->type) ||
      f->type == 0) {
    return Status::Ok();
  }
  if (Among(U"boxX", f->type) && f->grouping == Grouping::kUnderscore) {
    f->grouping = Grouping::kUnderFour;
    return Status::Ok();
  }
  return ValueError(std::string("Cannot specify '") +
                    (f->grouping == Grouping::kComma ? ',' : '_') + "' with " +
                    CodeName(f->type) + ".");
}

// parse_internal_render_format_spec. A fill is any code point, but only
// before an align; a '0' before the width is the fill only when none was
// given, and aligns '=' only when no align was: format(5, '<05') is
// '50000'.
StatusOr<Spec> ParseSpec(std::string_view text, const char* type_name,
                         char32_t default_type) {
  const std::u32string s = DecodeUtf8(text, Utf8Errors::kSurrogateEscape);
  auto is_align = [](char32_t c) {
    return c == U'<' || c == U'>' || c == U'=' || c == U'^';
  };
  Spec f;
  f.type = default_type;
  size_t pos = 0;
  const bool fill_given = s.size() >= 2 && is_align(s[1]);
  if (fill_given) {
    f.fill = s[0];
    f.align = s[1];
    pos = 2;
  } else if (!s.empty() && is_align(s[0])) {
    f.align = s[pos++];
  }
  const bool align_given = pos > 0;
  auto take = [&](char32_t c) {
    const bool found = pos < s.size() && s[pos] == c;
    pos += found ? 1 : 0;
    return found;
  };
  if (pos < s.size() && Among(U" +-", s[pos])) f.sign = s[pos++];
  f.no_neg_0 = take(U'z');
  f.alternate = take(U'#');
  if (!fill_given && take(U'0')) {
    f.fill = U'0';
    if (!align_given) f.align = U'=';
  }
  TRIALSHIM_ASSIGN_OR_RETURN(size_t digits, GetInteger(s, &pos, &f.width));
  if (digits == 0) f.width = -1;
  if (take(U',')) f.grouping = Grouping::kComma;
  if (take(U'_')) {
    if (f.grouping != Grouping::kNone)
      return ValueError("Cannot specify both ',' and '_'.");
    f.grouping = Grouping::kUnderscore;
  }
  if (f.grouping == Grouping::kUnderscore && pos < s.size() && s[pos] == U',')
    return ValueError("Cannot specify both ',' and '_'.");
  if (take(U'.')) {
    TRIALSHIM_ASSIGN_OR_RETURN(digits, GetInteger(s, &pos, &f.precision));
    if (digits == 0) return ValueError("Format specifier missing precision");
  }
  if (s.size() - pos > 1) {
    return ValueError("Invalid format specifier '" + std::string(text) +
                      "' for object of type '" + type_name + "'");
  }
  if (s.size() - pos == 1) f.type = s[pos];
  TRIALSHIM_RETURN_IF_ERROR(CheckGrouping(&f));
  return f;
}

// A formatted number in the parts calc_number_widths lays out.
struct Number {
  bool negative = false;
  std::string prefix;         // "0x"
  std::string digits;         // the integer part, which grouping applies to
  bool decimal = false;       // a '.' after the digits
  std::string remainder;      // after it: fraction, exponent, "inf", '%'
  int64_t remainder_len = 0;  // in code points
};

// _PyUnicode_InsertThousandsGrouping: `digits` in groups of `size` (0:
// none) from the right, with leading zeros (and separators) up to
// min_width: zero padding is grouped too, format(1234, '010,') is
// '00,001,234'.
std::string Group(const std::string& digits, int64_t size, char sep,
                  int64_t min_width) {
  std::string out;  // right to left
  int64_t remaining = static_cast<int64_t>(digits.size());
  bool use_sep = false;
  auto put = [&](int64_t l) {
    const int64_t chars = std::max<int64_t>(0, std::min(remaining, l));
    if (use_sep) out += sep;
    for (int64_t k = 1; k <= chars; ++k) out += digits[remaining - k];
    out.append(std::max<int64_t>(0, l - remaining), '0');
    remaining -= chars;
  };
  for (bool done = size == 0; !done;) {
    const int64_t l =
        std::min(size, std::max({remaining, min_width, int64_t{1}}));
    put(l);
    use_sep = true;
    min_width -= l;
    done = remaining <= 0 && min_width <= 0;
    min_width -= 1;  // the separator
  }
  if (size == 0) put(std::max({remaining, min_width, int64_t{1}}));
  std::reverse(out.begin(), out.end());
  return out;
}

std::string TooLarge(const char* what, int64_t n) {
  return std::string(what) + " " + std::to_string(n) +
         " is too large (at most " + std::to_string(kMaxPythonFormatWidth) +
         " here)";
}

// calc_number_widths and fill_number: [lpad][sign][prefix][spad]digits
// [.remainder][rpad], only one of the three paddings non-empty; '=' pads
// between the sign and the digits (format(-5, '=+6') is '-    5').
StatusOr<std::string> Layout(const Number& n, const Spec& f) {
  if (f.width > kMaxPythonFormatWidth)
    return ValueError(TooLarge("width", f.width));
  char sign = n.negative ? '-' : 0;
  if (!n.negative && (f.sign == U'+' || f.sign == U' '))
    sign = static_cast<char>(f.sign);
  const int64_t fixed = (sign ? 1 : 0) + static_cast<int64_t>(n.prefix.size()) +
                        (n.decimal ? 1 : 0) + n.remainder_len;
  const int64_t min_width =
      f.fill == U'0' && f.align == U'=' ? f.width - fixed : 0;
  const int64_t size = f.grouping == Grouping::kNone        ? 0
                       : f.grouping == Grouping::kUnderFour ? 4
                                                            : 3;
  const std::string grouped =
      n.digits.empty()
          ? ""
          : Group(n.digits, size, f.grouping == Grouping::kComma ? ',' : '_',
                  min_width);
  const int64_t padding = std::max<int64_t>(
      0, f.width - fixed - static_cast<int64_t>(grouped.size()));
  int64_t left = 0, inner = 0, right = 0;
  switch (f.align) {
    case U'<':
      right = padding;
      break;
    case U'^':
      left = padding / 2;
      right = padding - left;
      break;
    case U'=':
      inner = padding;
      break;
    default:
      left = padding;
  }
  std::string fill;
  AppendUtf8(f.fill, &fill);
  std::string out;
  for (int64_t k = 0; k < left; ++k) out += fill;
  if (sign) out += sign;
  out += n.prefix;
  for (int64_t k = 0; k < inner; ++k) out += fill;
  out += grouped;
  if (n.decimal) out += '.';
  out += n.remainder;
  for (int64_t k = 0; k < right; ++k) out += fill;
  return out;
}

// format_long_internal, for the int types.
StatusOr<std::string> FormatInt(int64_t v, const Spec& f) {
  if (f.precision != -1)
    return ValueError("Precision not allowed in integer format specifier");
  if (f.no_neg_0) {
    return ValueError(
        "Negative zero coercion (z) not allowed in integer format specifier");
  }
  Number n;
  if (f.type == U'c') {
    if (f.sign != 0)
      return ValueError("Sign not allowed with integer format specifier 'c'");
    if (f.alternate) {
      return ValueError(
          "Alternate form (#) not allowed with integer format specifier 'c'");
    }
    if (v < 0 || v > 0x10ffff)
      return ValueError("%c arg not in range(0x110000)");
    // Text is UTF-8: only the surrogates that stand for bytes have one.
    if (v >= 0xd800 && v <= 0xdfff && !(v >= 0xdc80 && v <= 0xdcff))
      return ValueError("%c arg " + std::to_string(v) + " is a surrogate");
    AppendUtf8(static_cast<char32_t>(v), &n.remainder);
    n.remainder_len = 1;
    return Layout(n, f);
  }
  const uint64_t base = f.type == U'b'         ? 2
                        : f.type == U'o'       ? 8
                        : Among(U"xX", f.type) ? 16
                                               : 10;
  const char* symbols =
      f.type == U'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  n.negative = v < 0;
  uint64_t mag =
      n.negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    n.digits += symbols[mag % base];
    mag /= base;
  } while (mag != 0);
  std::reverse(n.digits.begin(), n.digits.end());
  if (f.alternate && base != 10)
    n.prefix = std::string("0") + static_cast<char>(f.type);
  return Layout(n, f);
}

std::string Printf(const char* format, int precision, double x) {
  const int size = std::snprintf(nullptr, 0, format, precision, x);
  std::string out(static_cast<size_t>(size) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, precision, x);
  out.resize(static_cast<size_t>(size));
  return out;
}

// format_float_short's 'g' mode for a finite x >= 0: `precision`
// significant digits (trailing zeros dropped unless `alt`), exponent form
// when the point would fall outside them; add_dot_0 (no type given) keeps
// room for a ".0" and adds it: format(123.0, '.3g') is '123' but
// format(123.0, '.3') is '1.23e+02', and format(1.0, '.3') is '1.0'.
std::string FormatG(double x, int precision, bool alt, bool add_dot_0,
                    bool upper) {
  const int p = precision == 0 ? 1 : precision;
  const std::string sci = Printf("%.*e", p - 1, x);  // d.ddde+XX
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, 1) + (e > 1 ? sci.substr(2, e - 2) : "");
  const int decpt = std::atoi(sci.c_str() + e + 1) + 1;
  if (!alt) {
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  }
  const int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > p - (add_dot_0 ? 1 : 0)) {
    std::string out = digits.substr(0, 1);
    if (n > 1 || alt) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "%c%c%02d", upper ? 'E' : 'e',
                  decpt - 1 < 0 ? '-' : '+', std::abs(decpt - 1));
    return out + exp;
  }
  if (decpt <= 0) return "0." + std::string(-decpt, '0') + digits;
  if (decpt < n) return digits.substr(0, decpt) + "." + digits.substr(decpt);
  digits += std::string(decpt - n, '0');
  return digits + (alt ? "." : add_dot_0 ? ".0" : "");
}

// PyOS_double_to_string for x >= 0 (or NaN): type r (repr), e, f or g.
std::string FloatText(double x, char type, int precision, bool alt,
                      bool add_dot_0) {
  const bool upper = type == 'E' || type == 'F' || type == 'G';
  if (std::isnan(x)) return upper ? "NAN" : "nan";
  if (std::isinf(x)) return upper ? "INF" : "inf";
  const char lower = static_cast<char>(type | 0x20);
  if (lower == 'g') return FormatG(x, precision, alt, add_dot_0, upper);
  // repr; '#' still shows the point: format(1e16, '#') is '1.e+16'.
  if (type == 'r') {
    std::string text = FormatPythonFloat(x);
    if (alt && text.find('.') == std::string::npos)
      text.insert(std::min(text.find('e'), text.size()), ".");
    return text;
  }
  const std::string format = std::string(alt ? "%#.*" : "%.*") + type;
  return Printf(format.c_str(), precision, x);
}

// format_float_internal. No type is repr (or 'g' with a ".0" given a
// precision); 'n' is 'g' in the C locale; '%' is 'f' of 100 times the
// value. A NaN has no sign (format(float('-nan'), '+') is '+nan').
StatusOr<std::string> FormatFloat(double v, const Spec& f) {
  if (f.precision > INT_MAX) return ValueError("precision too big");
  if (f.precision > kMaxPythonFormatWidth)
    return ValueError(TooLarge("precision", f.precision));
  char type = f.type == U'n' ? 'g' : static_cast<char>(f.type);
  int precision = static_cast<int>(f.precision);
  const bool add_dot_0 = f.type == 0;  // like str() or 'g', with a ".0"
  if (add_dot_0) type = precision < 0 ? 'r' : 'g';
  const bool percent = type == '%';
  if (percent) {
    type = 'f';
    v *= 100;
  }
  if (precision < 0) precision = 6;
  Number n;
  n.negative = std::signbit(v) && !std::isnan(v);  // NaN has no sign
  const std::string text =
      FloatText(std::fabs(v), type, precision, f.alternate, add_dot_0);
  // 'z' (PEP 682, new in 3.11): a negative number that rounds to zero
  // loses its sign, format(-0.0001, 'z.2f') is '0.00'.
  if (f.no_neg_0 && std::isfinite(v) &&
      text.find_first_of("123456789") >= text.find_first_of("eE")) {
    n.negative = false;
  }
  const size_t int_end = text.find_first_not_of("0123456789");
  n.digits = text.substr(0, int_end);
  if (int_end != std::string::npos) {
    n.decimal = text[int_end] == '.';
    n.remainder = text.substr(int_end + (n.decimal ? 1 : 0));
  }
  if (percent) n.remainder += '%';
  n.remainder_len = static_cast<int64_t>(n.remainder.size());
  return Layout(n, f);
}

}  // namespace

// int.__format__ and float.__format__: an int takes a float type, formatted
// as float(value); a float takes no int type ('d' is "Unknown format
// code").
StatusOr<std::string> FormatPythonNumber(const PythonNumber& value,
                                         std::string_view spec) {
  if (spec.empty()) {
    return value.is_int ? std::to_string(value.i) : FormatPythonFloat(value.d);
  }
  const char* type_name = value.is_int ? "int" : "float";
  TRIALSHIM_ASSIGN_OR_RETURN(
      Spec f, ParseSpec(spec, type_name, value.is_int ? U'd' : 0));
  const bool float_type = f.type != 0 && Among(U"eEfFgG%", f.type);
  if (value.is_int && f.type != 0 && Among(U"bcdoxXn", f.type))
    return FormatInt(value.i, f);
  if (value.is_int && float_type)
    return FormatFloat(static_cast<double>(value.i), f);
  if (!value.is_int && (float_type || f.type == 0 || f.type == U'n'))
    return FormatFloat(value.d, f);
  return ValueError("Unknown format code " + CodeName(f.type) +
                    " for object of type '" + type_name + "'");
}

namespace {

// str.format's MarkupIterator and render_field over one mapping argument.
class TemplateFormatter {
 public:
  explicit TemplateFormatter(const PythonMapping& mapping)
      : mapping_(mapping) {}

  // build_string: recursion_depth starts at 2 (a spec may hold fields, but
  // no deeper: "{0[a]:{0[b]:{0[c]}}}" is "Max string recursion exceeded").
  StatusOr<std::string> Build(std::u32string_view s, int depth);

 private:
  struct Field {
    std::u32string_view name, spec;
    char32_t conversion = 0;
    bool nested = false;  // the spec holds fields
  };
  StatusOr<Field> ParseField(std::u32string_view s, size_t* pos);
  StatusOr<int64_t> Index(std::u32string_view first);
  StatusOr<const PythonNumber*> Resolve(std::u32string_view name);
  StatusOr<const PythonNumber*> Item(const PythonNumber* value,
                                     std::u32string_view key);

  const PythonMapping& mapping_;
  enum class Numbering { kInit, kAuto, kManual } numbering_ = Numbering::kInit;
  int64_t next_auto_ = 0;
};

StatusOr<std::string> TemplateFormatter::Build(std::u32string_view s,
                                               int depth) {
  if (depth <= 0) return ValueError("Max string recursion exceeded");
  std::string out;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    char32_t c = 0;
    bool markup = false;
    while (pos < s.size() && !markup) {
      c = s[pos++];
      markup = c == U'{' || c == U'}';
    }
    // MarkupIterator_next: "{{" and "}}" are literal braces; a '}' alone is
    // an error wherever it is, a '{' alone only at the end.
    const bool at_end = pos >= s.size();
    size_t len = pos - start;
    if (c == U'}' && (at_end || s[pos] != c))
      return ValueError("Single '}' encountered in format string");
    if (at_end && c == U'{')
      return ValueError("Single '{' encountered in format string");
    if (!at_end) {  // "{{" and "}}" are literal braces
      markup = s[pos] != c;
      if (markup) {
        --len;
      } else {
        ++pos;
      }
    }
    out += Utf8(s.substr(start, len));
    if (!markup) continue;
    TRIALSHIM_ASSIGN_OR_RETURN(Field field, ParseField(s, &pos));
    TRIALSHIM_ASSIGN_OR_RETURN(const PythonNumber* value, Resolve(field.name));
    if (field.conversion != 0) {
      const std::string name = Utf8(field.name);
      if (!Among(U"rsa", field.conversion)) {
        const char32_t c = field.conversion;
        char code[24];
        std::snprintf(code, sizeof code, c > 32 && c < 127 ? "%c" : "\\x%x",
                      static_cast<unsigned>(c));
        return ValueError(std::string("Unknown conversion specifier ") + code);
      }
      return ValueError("field '" + name + "': conversion '!" +
                        static_cast<char>(field.conversion) +
                        "' is not supported (only numbers are formatted)");
    }
    std::string spec = Utf8(field.spec);
    if (field.nested) {
      TRIALSHIM_ASSIGN_OR_RETURN(spec, Build(field.spec, depth - 1));
    }
    TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                               FormatPythonNumber(*value, spec));
    out += text;
  }
  return out;
}

// parse_field: after a '{', the field name, a "!x" conversion and a
// ":spec", up to the '}' that closes the field. Within "[...]" of the name
// nothing ends it: "{0[a:b]}" is the key 'a:b'.
StatusOr<TemplateFormatter::Field> TemplateFormatter::ParseField(
    std::u32string_view s, size_t* pos) {
  Field f;
  const size_t name_start = *pos;
  char32_t c = 0;
  bool ended = false;
  while (*pos < s.size() && !ended) {
    c = s[(*pos)++];
    if (c == U'{') return ValueError("unexpected '{' in field name");
    if (c == U'[') {
      while (*pos < s.size() && s[*pos] != U']') ++*pos;
    }
    ended = c == U'}' || c == U':' || c == U'!';
  }
  if (!ended) return ValueError("expected '}' before end of string");
  f.name = s.substr(name_start, *pos - 1 - name_start);
  if (c == U'}') return f;
  if (c == U'!') {
    if (*pos >= s.size()) {
      return ValueError("end of string while looking for conversion specifier");
    }
    f.conversion = s[(*pos)++];
    if (*pos < s.size()) {
      c = s[(*pos)++];
      if (c == U'}') return f;
      if (c != U':')
        return ValueError("expected ':' after conversion specifier");
    }
  }
  const size_t spec_start = *pos;
  for (size_t open = 1; *pos < s.size();) {
    c = s[(*pos)++];
    if (c == U'{') {
      f.nested = true;
      ++open;
    } else if (c == U'}' && --open == 0) {
      f.spec = s.substr(spec_start, *pos - 1 - spec_start);
      return f;
    }
  }
  return ValueError("unmatched '{' in format spec");
}

// get_integer (unicode_format.h): a field's index, or -1 when `text` is not
// all digits.
StatusOr<int64_t> TemplateFormatter::Index(std::u32string_view text) {
  if (text.empty()) return -1;
  int64_t value = 0;
  size_t pos = 0;
  TRIALSHIM_ASSIGN_OR_RETURN(size_t digits, GetInteger(text, &pos, &value));
  return digits == text.size() ? value : -1;
}

// get_field_object: argument 0 (the mapping), then each "[key]". The
// first field fixes automatic ("{}") or manual ("{0}") numbering for the
// rest; a second automatic field asks for argument 1, which is not there
// ("{[a]}{}" is "Replacement index 1 out of range", an IndexError).
StatusOr<const PythonNumber*> TemplateFormatter::Resolve(
    std::u32string_view name) {
  size_t pos = std::min(name.find_first_of(U".["), name.size());
  const std::u32string_view first = name.substr(0, pos);
  TRIALSHIM_ASSIGN_OR_RETURN(int64_t index, Index(first));
  if (first.empty() || index != -1) {
    if (numbering_ == Numbering::kInit)
      numbering_ = first.empty() ? Numbering::kAuto : Numbering::kManual;
    if (numbering_ == Numbering::kManual && first.empty()) {
      return ValueError(
          "cannot switch from manual field specification to automatic "
          "field numbering");
    }
    if (numbering_ == Numbering::kAuto && !first.empty()) {
      return ValueError(
          "cannot switch from automatic field numbering to manual field "
          "specification");
    }
    if (first.empty()) index = next_auto_++;
  }
  if (index == -1)
    return Status::InvalidArgument("KeyError: " +
                                   PythonStringRepr(Utf8(first)));
  if (index != 0) {
    return ValueError("Replacement index " + std::to_string(index) +
                      " out of range for positional args tuple");
  }
  const PythonNumber* value = nullptr;  // the mapping itself
  while (pos < name.size()) {           // FieldNameIterator_next
    const char32_t c = name[pos++];
    if (c != U'.' && c != U'[') {
      return ValueError(
          "Only '.' or '[' may follow ']' in format field specifier");
    }
    const size_t start = pos;
    pos = std::min(name.find_first_of(c == U'.' ? U".[" : U"]", pos),
                   name.size());
    if (c == U'[' && pos == name.size())
      return ValueError("Missing ']' in format string");
    const std::u32string_view part = name.substr(start, pos - start);
    if (c == U'[') ++pos;
    if (part.empty()) return ValueError("Empty attribute in format string");
    if (c == U'.') {
      return ValueError("field '" + Utf8(name) +
                        "': attributes are not supported (only numbers "
                        "are formatted)");
    }
    TRIALSHIM_ASSIGN_OR_RETURN(value, Item(value, part));
  }
  if (value == nullptr) {
    return ValueError("field '" + Utf8(name) +
                      "': formatting the mapping itself is not supported "
                      "(only numbers are formatted)");
  }
  return value;
}

// getitem: mapping[key] (an int key when all digits, so "{0[0]}" is
// KeyError: 0), or a number's.
StatusOr<const PythonNumber*> TemplateFormatter::Item(const PythonNumber* value,
                                                      std::u32string_view key) {
  TRIALSHIM_ASSIGN_OR_RETURN(int64_t index, Index(key));
  if (value != nullptr) {
    return ValueError(std::string("'") + (value->is_int ? "int" : "float") +
                      "' object is not subscriptable");
  }
  if (index != -1)
    return Status::InvalidArgument("KeyError: " + std::to_string(index));
  auto it = mapping_.find(Utf8(key));
  if (it == mapping_.end())
    return Status::InvalidArgument("KeyError: " + PythonStringRepr(Utf8(key)));
  return &it->second;
}

}  // namespace

StatusOr<std::string> FormatPythonTemplate(std::string_view format_string,
                                           const PythonMapping& mapping) {
  return TemplateFormatter(mapping).Build(
      DecodeUtf8(format_string, Utf8Errors::kSurrogateEscape), 2);
}

}  // namespace trialshim
