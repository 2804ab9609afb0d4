#include "yaml_scalar.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "trialshim/base/python_number.h"

namespace trialshim::config::yaml_internal {
namespace {

// The regexes below are PyYAML's (the Resolver.add_implicit_resolver calls
// in yaml/resolver.py, YAML 1.1), matched by hand: a resolver runs once per
// scalar of every file we load, and these are all small, deterministic
// (no backtracking needed) languages.

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Cursor {
  std::string_view s;
  size_t p = 0;

  bool done() const { return p == s.size(); }
  char peek() const { return p < s.size() ? s[p] : '\0'; }
  bool Eat(char c) {
    if (peek() != c || done()) return false;
    ++p;
    return true;
  }
  void OptSign() {
    if (peek() == '+' || peek() == '-') ++p;
  }
  // [0-9][0-9_]*
  bool DigitRun() {
    if (done() || !IsDigit(s[p])) return false;
    ++p;
    while (!done() && (IsDigit(s[p]) || s[p] == '_')) ++p;
    return true;
  }
  // [0-9]+(_[0-9]+)*: digits, an underscore only between two of them.
  bool DigitGroups() {
    if (done() || !IsDigit(s[p])) return false;
    while (true) {
      while (!done() && IsDigit(s[p])) ++p;
      if (peek() != '_' || p + 1 >= s.size() || !IsDigit(s[p + 1])) {
        return true;
      }
      ++p;
    }
  }
  // [0-9_]*
  void DigitUnderscoreStar() {
    while (!done() && (IsDigit(s[p]) || s[p] == '_')) ++p;
  }
  // [eE] sign digits+ (sign optional when !need_sign)
  bool Exponent(bool need_sign) {
    size_t save = p;
    if (peek() != 'e' && peek() != 'E') return false;
    ++p;
    if (peek() == '+' || peek() == '-') {
      ++p;
    } else if (need_sign) {
      p = save;
      return false;
    }
    if (done() || !IsDigit(s[p])) {
      p = save;
      return false;
    }
    while (!done() && IsDigit(s[p])) ++p;
    return true;
  }
  // (:[0-5]?[0-9])+
  bool SexagesimalGroups() {
    int groups = 0;
    while (peek() == ':' && !done()) {
      size_t save = p;
      ++p;
      size_t start = p;
      while (!done() && IsDigit(s[p])) ++p;
      size_t n = p - start;
      if (n == 1 || (n == 2 && s[start] <= '5')) {
        ++groups;
        continue;
      }
      p = save;
      break;
    }
    return groups > 0;
  }
};

bool OneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

bool IsYamlNull(std::string_view s) {
  return OneOf(s, {"", "~", "null", "Null", "NULL"});
}

// YAML 1.1's booleans as PyYAML resolves them: no "y"/"n", which
// OmegaConf's YAML_BOOL_TYPES has (so the dumper quotes "y", which the
// loader would read back as a string anyway).
bool IsYamlBool(std::string_view s) {
  return OneOf(
      s, {"yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE",
          "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"});
}

bool IsInfOrNan(Cursor c, bool allow_sign_on_inf) {
  // [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
  std::string_view rest = c.s.substr(c.p);
  if (allow_sign_on_inf && (c.peek() == '+' || c.peek() == '-')) {
    rest.remove_prefix(1);
    return OneOf(rest, {".inf", ".Inf", ".INF"});
  }
  return OneOf(rest, {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"});
}

// [-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) |
// [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+
// A leading 0 means octal (YAML 1.1), so "09" is no int: it stays a string.
bool IsYamlInt(std::string_view s) {
  Cursor c{s};
  c.OptSign();
  std::string_view r = s.substr(c.p);
  if (r.empty()) return false;
  auto all_of = [](std::string_view t, auto pred) {
    if (t.empty()) return false;
    for (char ch : t) {
      if (!pred(ch)) return false;
    }
    return true;
  };
  if (r.size() > 2 && r[0] == '0' && r[1] == 'b' &&
      all_of(r.substr(2),
             [](char ch) { return ch == '0' || ch == '1' || ch == '_'; })) {
    return true;
  }
  if (r.size() > 2 && r[0] == '0' && r[1] == 'x' &&
      all_of(r.substr(2), [](char ch) {
        return IsDigit(ch) || (ch >= 'a' && ch <= 'f') ||
               (ch >= 'A' && ch <= 'F') || ch == '_';
      })) {
    return true;
  }
  if (r[0] == '0') {
    return r.size() == 1 || all_of(r.substr(1), [](char ch) {
             return (ch >= '0' && ch <= '7') || ch == '_';
           });
  }
  if (r[0] < '1' || r[0] > '9') return false;
  Cursor d{s, c.p};
  d.DigitRun();
  if (d.done()) return true;
  return d.SexagesimalGroups() && d.done();
}

// PyYAML's float regex. It needs a '.' (or .inf/.nan): "1e3" is no float
// here, and the exponent needs its sign ("1.0e+3", not "1.0e3").
bool IsYamlFloat(std::string_view s) {
  if (s.empty()) return false;
  Cursor c{s};
  if (IsInfOrNan(c, true)) return true;
  if (c.peek() == '.') {  // \.[0-9][0-9_]*([eE][-+][0-9]+)?
    ++c.p;
    if (!c.DigitRun()) return false;
    c.Exponent(true);
    return c.done();
  }
  c.OptSign();
  if (!c.DigitRun()) return false;
  if (c.Eat('.')) {  // [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
    c.DigitUnderscoreStar();
    c.Exponent(true);
    return c.done();
  }
  // [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
  if (!c.SexagesimalGroups() || !c.Eat('.')) return false;
  c.DigitUnderscoreStar();
  return c.done();
}

// The regex omegaconf 2.3's loader adds (omegaconf/_utils.py). 2.2's took
// underscores anywhere after the first digit ("1_e3", "._5" were floats);
// 2.3 takes them only between digits, as Python's float() does.
bool IsOmegaConfFloat(std::string_view s) {
  if (s.empty()) return false;
  Cursor c{s};
  if (IsInfOrNan(c, true)) return true;
  if (c.peek() == '.') {  // \.[0-9]+(_[0-9]+)*([eE][-+][0-9]+)?
    ++c.p;
    if (!c.DigitGroups()) return false;
    c.Exponent(true);
    return c.done();
  }
  c.OptSign();
  if (!c.DigitGroups()) return false;  // [-+]?[0-9]+(_[0-9]+)*
  if (c.Eat('.')) {                    // ...\.[0-9_]*([eE][-+]?[0-9]+)?
    c.DigitUnderscoreStar();
    c.Exponent(false);
    return c.done();
  }
  if (c.peek() == 'e' || c.peek() == 'E') {  // ...[eE][-+]?[0-9]+
    return c.Exponent(false) && c.done();
  }
  // ...(:[0-5]?[0-9])+\.[0-9_]*
  if (!c.SexagesimalGroups() || !c.Eat('.')) return false;
  c.DigitUnderscoreStar();
  return c.done();
}

bool Digits(Cursor* c, int min, int max) {
  int n = 0;
  while (n < max && !c->done() && IsDigit(c->peek())) {
    ++c->p;
    ++n;
  }
  return n >= min;
}

// PyYAML's timestamp regex. OmegaConf's loader drops this resolver (a date
// stays a string), but yaml.Dumper still has it, so the emitter quotes
// "2001-12-14" to keep it a string for PyYAML's readers.
bool IsYamlTimestamp(std::string_view s) {
  Cursor c{s};
  if (!Digits(&c, 4, 4) || !c.Eat('-')) return false;
  size_t after_year = c.p;
  // [0-9]{4}-[0-9]{2}-[0-9]{2}
  if (Digits(&c, 2, 2) && c.Eat('-') && Digits(&c, 2, 2) && c.done()) {
    return true;
  }
  c.p = after_year;
  if (!Digits(&c, 1, 2) || !c.Eat('-') || !Digits(&c, 1, 2)) return false;
  if (c.peek() == 'T' || c.peek() == 't') {
    ++c.p;
  } else {
    size_t start = c.p;
    while (!c.done() && (c.peek() == ' ' || c.peek() == '\t')) ++c.p;
    if (c.p == start) return false;
  }
  if (!Digits(&c, 1, 2) || !c.Eat(':') || !Digits(&c, 2, 2) || !c.Eat(':') ||
      !Digits(&c, 2, 2)) {
    return false;
  }
  if (c.Eat('.')) Digits(&c, 0, 1 << 30);
  if (c.done()) return true;
  while (!c.done() && (c.peek() == ' ' || c.peek() == '\t')) ++c.p;
  if (c.Eat('Z')) return c.done();
  if (c.peek() != '+' && c.peek() != '-') return false;
  ++c.p;
  if (!Digits(&c, 1, 2)) return false;
  if (c.Eat(':') && !Digits(&c, 2, 2)) return false;
  return c.done();
}

std::string StripUnderscores(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (ch != '_') out += ch;
  }
  return out;
}

// Parses digits of `base` into *out with overflow checks.
bool ParseUnsigned(std::string_view digits, int base, uint64_t* out) {
  if (digits.empty()) return false;
  uint64_t v = 0;
  for (char ch : digits) {
    int d;
    if (IsDigit(ch)) {
      d = ch - '0';
    } else if (ch >= 'a' && ch <= 'f') {
      d = ch - 'a' + 10;
    } else if (ch >= 'A' && ch <= 'F') {
      d = ch - 'A' + 10;
    } else {
      return false;
    }
    if (d >= base) return false;
    if (v > (std::numeric_limits<uint64_t>::max() - d) / base) return false;
    v = v * base + d;
  }
  *out = v;
  return true;
}

}  // namespace

// Resolver.resolve: the first implicit resolver whose regex matches, in the
// order resolver.py registers them. OmegaConf's loader (get_yaml_loader)
// appends its float after PyYAML's own resolvers, so it only claims what
// none of them took ("1e3", "1_0e3"; "1_000" is still an int), and removes
// the timestamp resolver.
PlainKind ResolvePlain(std::string_view s, bool omegaconf_loader) {
  if (IsYamlBool(s)) return PlainKind::kBool;
  if (IsYamlFloat(s)) return PlainKind::kFloat;
  if (IsYamlInt(s)) return PlainKind::kInt;
  if (s == "<<") return PlainKind::kMerge;
  if (IsYamlNull(s)) return PlainKind::kNull;
  if (!omegaconf_loader && IsYamlTimestamp(s)) return PlainKind::kTimestamp;
  if (s == "=") return PlainKind::kValue;
  if (omegaconf_loader && IsOmegaConfFloat(s)) return PlainKind::kFloat;
  return PlainKind::kStr;
}

bool ConstructYamlBool(std::string_view s, bool* out, std::string* error) {
  std::string lower(s);
  for (char& ch : lower) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  if (OneOf(lower, {"yes", "true", "on"})) {
    *out = true;
    return true;
  }
  if (OneOf(lower, {"no", "false", "off"})) {
    *out = false;
    return true;
  }
  *error = "'" + std::string(s) +
           "' is not a YAML bool (expected yes/no, true/false or on/off)";
  return false;
}

// SafeConstructor.construct_yaml_int (yaml/constructor.py): underscores
// dropped, then 0b, 0x, a leading 0 (octal) or a:b:c (base 60). Python's int
// has no bound; ours is int64_t, so a bigger one is an error here
// (docs/hydra-differences.md).
bool ConstructYamlInt(std::string_view s, int64_t* out, std::string* error) {
  std::string v = StripUnderscores(s);
  auto fail = [&](const char* why) {
    *error = "'" + std::string(s) + "' " + why;
    return false;
  };
  if (v.empty()) return fail("is not an integer");
  bool negative = v[0] == '-';
  if (v[0] == '+' || v[0] == '-') v.erase(0, 1);
  uint64_t magnitude = 0;
  bool ok;
  if (v == "0") {
    ok = true;
  } else if (v.rfind("0b", 0) == 0) {
    ok = ParseUnsigned(std::string_view(v).substr(2), 2, &magnitude);
  } else if (v.rfind("0x", 0) == 0) {
    ok = ParseUnsigned(std::string_view(v).substr(2), 16, &magnitude);
  } else if (!v.empty() && v[0] == '0') {
    ok = ParseUnsigned(v, 8, &magnitude);
  } else if (v.find(':') != std::string::npos) {
    // Sexagesimal: 1:30 is 90 (YAML 1.1).
    ok = true;
    size_t start = 0;
    while (ok) {
      size_t colon = v.find(':', start);
      uint64_t part = 0;
      ok = ParseUnsigned(std::string_view(v).substr(start, colon - start), 10,
                         &part);
      if (!ok) break;
      if (magnitude > (std::numeric_limits<uint64_t>::max() - part) / 60) {
        ok = false;
        break;
      }
      magnitude = magnitude * 60 + part;
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  } else {
    ok = ParseUnsigned(v, 10, &magnitude);
  }
  if (!ok) {
    // Tell a too-big number apart from a malformed one.
    bool all_digits = !v.empty();
    for (char ch : v) all_digits = all_digits && (IsDigit(ch) || ch == ':');
    return fail(all_digits ? "does not fit in a 64-bit integer"
                           : "is not an integer");
  }
  uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) return fail("does not fit in a 64-bit integer");
  *out = negative ? static_cast<int64_t>(0 - magnitude)
                  : static_cast<int64_t>(magnitude);
  return true;
}

// SafeConstructor.construct_yaml_float: underscores dropped, lower-cased,
// .inf/.nan by name (a nan has no sign), a:b:c in base 60, else Python's
// float(), which ParsePythonFloat follows.
bool ConstructYamlFloat(std::string_view s, double* out, std::string* error) {
  std::string v = StripUnderscores(s);
  for (char& ch : v) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  auto fail = [&]() {
    *error = "'" + std::string(s) + "' is not a float";
    return false;
  };
  if (v.empty()) return fail();
  double sign = 1;
  if (v[0] == '-') sign = -1;
  if (v[0] == '+' || v[0] == '-') v.erase(0, 1);
  if (v == ".inf") {
    *out = sign * std::numeric_limits<double>::infinity();
    return true;
  }
  if (v == ".nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (v.find(':') != std::string::npos) {
    double total = 0;
    size_t start = 0;
    while (true) {
      size_t colon = v.find(':', start);
      StatusOr<double> part = ParsePythonFloat(v.substr(start, colon - start));
      if (!part.ok()) return fail();
      total = total * 60 + *part;
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    *out = sign * total;
    return true;
  }
  StatusOr<double> value = ParsePythonFloat(v);  // float(value)
  if (!value.ok()) return fail();
  *out = sign * *value;
  return true;
}

}  // namespace trialshim::config::yaml_internal
