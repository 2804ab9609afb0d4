// Values as Hydra's override visitor sees them, before they become Nodes.
//
// Hydra evaluates override functions on Python objects: quoted strings are a
// separate type until unquoted, dict keys are typed, sweeps are objects, and
// ints compare equal to floats and bools. PVal models exactly that much of
// Python so that casts, sort() and their error messages match Hydra 1.3.2.
// Private to the config library.
#ifndef TRIALSHIM_CONFIG_SRC_OVERRIDE_VALUE_H_
#define TRIALSHIM_CONFIG_SRC_OVERRIDE_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::config::override_internal {

struct PVal {
  enum class K {
    kNull,
    kBool,
    kInt,
    kFloat,
    kStr,
    kQuoted,  // QuotedString: a str that was written in quotes
    kList,
    kDict,
    kChoice,
    kRange,
    kInterval,
    kGlob,
  };
  K k = K::kNull;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;  // kStr, kQuoted
  char quote = '\'';
  // kList items; kChoice choices; kRange start, stop, step; kInterval start,
  // end.
  std::vector<PVal> items;
  std::vector<std::pair<PVal, PVal>> entries;  // kDict
  // Sweeps.
  bool simple_form = false;
  bool shuffle = false;
  std::vector<std::string> tags;
  // kGlob.
  std::vector<PVal> include, exclude;

  static PVal Null() { return PVal(); }
  static PVal Bool(bool v);
  static PVal Int(int64_t v);
  static PVal Float(double v);
  static PVal Str(std::string v);
  static PVal List(std::vector<PVal> v);

  bool is_number() const {
    return k == K::kBool || k == K::kInt || k == K::kFloat;
  }
  bool is_sweep() const {
    return k == K::kChoice || k == K::kRange || k == K::kInterval;
  }
  double AsDouble() const;
};

// Python's type name: "NoneType", "int", "QuotedString", "ChoiceSweep".
const char* PyTypeName(const PVal& v);
// Python's repr() of the value as Hydra holds it.
std::string PyRepr(const PVal& v);
// Hydra's Override._get_value_element_as_str (Transformer.str): the value
// as override text, strings with Hydra's special characters escaped
// ("a\\,b"), quoted strings re-quoted, lists and dicts in Hydra's syntax
// without spaces, numbers as Python's str(). Elements only (not sweeps).
std::string HydraStr(const PVal& v);
// Hydra's escape_special_characters: a backslash before each of
// \ ( ) [ ] { } : = , space and tab.
std::string EscapeSpecialCharacters(const std::string& s);

// Python ==.
bool PyEq(const PVal& a, const PVal& b);
// Python <; TypeError for unorderable types.
StatusOr<bool> PyLess(const PVal& a, const PVal& b);
// sorted(items, reverse=reverse), with CPython's order of comparisons for
// the lists an override can hold, so that the TypeError names the same pair.
Status PySort(std::vector<PVal>* items, bool reverse);

// Python's int(str) / float(str) (base/python_number.h): errors are
// "ValueError: ..." and, for an int beyond 64 bits, "OverflowError: ...".
StatusOr<int64_t> PyParseInt(const std::string& s);
StatusOr<double> PyParseFloat(const std::string& s);

// Converts a parsed element (not a sweep) to a Node. Dict keys become the
// text json.dumps writes for them ("1", "1.5", "true", "Infinity");
// colliding keys (1, 1.0, true) merge as in a Python dict.
StatusOr<Node> ToNode(const PVal& v);

// ParseOverrideValue without the quoting advice in its errors (which calls
// the renderer): for the renderer's own checks.
StatusOr<Node> ParseValueQuietly(std::string_view text);

}  // namespace trialshim::config::override_internal

#endif  // TRIALSHIM_CONFIG_SRC_OVERRIDE_VALUE_H_
