#include "override_value.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/base/number_format.h"
#include "trialshim/base/python_number.h"
#include "trialshim/base/python_text.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/python_text.h"

namespace trialshim::config::override_internal {

PVal PVal::Bool(bool v) {
  PVal p;
  p.k = K::kBool;
  p.b = v;
  return p;
}
PVal PVal::Int(int64_t v) {
  PVal p;
  p.k = K::kInt;
  p.i = v;
  return p;
}
PVal PVal::Float(double v) {
  PVal p;
  p.k = K::kFloat;
  p.f = v;
  return p;
}
PVal PVal::Str(std::string v) {
  PVal p;
  p.k = K::kStr;
  p.s = std::move(v);
  return p;
}
PVal PVal::List(std::vector<PVal> v) {
  PVal p;
  p.k = K::kList;
  p.items = std::move(v);
  return p;
}

double PVal::AsDouble() const {
  switch (k) {
    case K::kBool:
      return b ? 1.0 : 0.0;
    case K::kInt:
      return static_cast<double>(i);
    default:
      return f;
  }
}

// type(x).__name__, as Python's TypeError and Hydra's messages print it;
// the sweep and QuotedString names are the classes of
// hydra/core/override_parser/types.py.
const char* PyTypeName(const PVal& v) {
  switch (v.k) {
    case PVal::K::kNull:
      return "NoneType";
    case PVal::K::kBool:
      return "bool";
    case PVal::K::kInt:
      return "int";
    case PVal::K::kFloat:
      return "float";
    case PVal::K::kStr:
      return "str";
    case PVal::K::kQuoted:
      return "QuotedString";
    case PVal::K::kList:
      return "list";
    case PVal::K::kDict:
      return "dict";
    case PVal::K::kChoice:
      return "ChoiceSweep";
    case PVal::K::kRange:
      return "RangeSweep";
    case PVal::K::kInterval:
      return "IntervalSweep";
    case PVal::K::kGlob:
      return "Glob";
  }
  return "object";
}

namespace {

std::string JoinRepr(const std::vector<PVal>& items) {
  std::string out;
  for (size_t n = 0; n < items.size(); ++n) {
    if (n) out += ", ";
    out += PyRepr(items[n]);
  }
  return out;
}

// Sweep.tags is a Python set: "set()" when empty. A set prints in hash
// order and ours in the order given; that differs only from two tags on.
std::string TagsRepr(const std::vector<std::string>& tags) {
  if (tags.empty()) return "set()";
  std::string out = "{";
  for (size_t n = 0; n < tags.size(); ++n) {
    if (n) out += ", ";
    out += PythonStringRepr(tags[n]);
  }
  return out + "}";
}

const char* PyBool(bool b) { return b ? "True" : "False"; }

}  // namespace

// The reprs are the dataclasses' of types.py: fields in declaration order,
// Sweep's `tags` first, and Quote's Enum repr inside a QuotedString.
std::string PyRepr(const PVal& v) {
  switch (v.k) {
    case PVal::K::kNull:
      return "None";
    case PVal::K::kBool:
      return PyBool(v.b);
    case PVal::K::kInt:
      return std::to_string(v.i);
    case PVal::K::kFloat:
      return FormatPythonFloat(v.f);
    case PVal::K::kStr:
      return PythonStringRepr(v.s);
    case PVal::K::kQuoted:
      return "QuotedString(text=" + PythonStringRepr(v.s) + ", quote=" +
             (v.quote == '\'' ? "<Quote.single: 0>" : "<Quote.double: 1>") +
             ")";
    case PVal::K::kList:
      return "[" + JoinRepr(v.items) + "]";
    case PVal::K::kDict: {
      std::string out = "{";
      for (size_t n = 0; n < v.entries.size(); ++n) {
        if (n) out += ", ";
        out += PyRepr(v.entries[n].first) + ": " + PyRepr(v.entries[n].second);
      }
      return out + "}";
    }
    case PVal::K::kChoice:
      return "ChoiceSweep(tags=" + TagsRepr(v.tags) + ", list=[" +
             JoinRepr(v.items) + "], simple_form=" + PyBool(v.simple_form) +
             ", shuffle=" + PyBool(v.shuffle) + ")";
    case PVal::K::kRange:
      return "RangeSweep(tags=" + TagsRepr(v.tags) +
             ", start=" + PyRepr(v.items[0]) + ", stop=" + PyRepr(v.items[1]) +
             ", step=" + PyRepr(v.items[2]) + ", shuffle=" + PyBool(v.shuffle) +
             ")";
    case PVal::K::kInterval:
      return "IntervalSweep(tags=" + TagsRepr(v.tags) +
             ", start=" + PyRepr(v.items[0]) + ", end=" + PyRepr(v.items[1]) +
             ")";
    case PVal::K::kGlob:
      return "Glob(include=[" + JoinRepr(v.include) + "], exclude=[" +
             JoinRepr(v.exclude) + "])";
  }
  return "?";
}

// hydra/_internal/grammar/utils.py's escape_special_characters replaces the
// backslash first and then each other character of _ESC; one pass that
// escapes each character as it goes writes the same text.
std::string EscapeSpecialCharacters(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\()[]{}:=, \t").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

namespace {

// QuotedString.with_quotes(): the quote character escaped, and the
// backslashes before a quote (the closing one included) doubled, so that
// the text reads back as it was.
std::string WithQuotes(const std::string& text, char q) {
  std::string out(1, q);
  size_t run = 0;  // backslashes just copied
  for (char c : text) {
    if (c == q) {
      out.append(run, '\\');  // double the run before the escaped quote
      out += '\\';
    }
    out += c;
    run = c == '\\' ? run + 1 : 0;
  }
  out.append(run, '\\');  // the run before the closing quote
  return out + q;
}

}  // namespace

// Override._get_value_element_as_str (types.py) without space_after_sep.
// Bools go through str(): [true] comes back as [True], which the BOOL
// token reads as the same bool.
std::string HydraStr(const PVal& v) {
  switch (v.k) {
    case PVal::K::kNull:
      return "null";
    case PVal::K::kQuoted:
      return WithQuotes(v.s, v.quote);
    case PVal::K::kStr:
      return EscapeSpecialCharacters(v.s);
    case PVal::K::kList: {
      std::string out = "[";
      for (size_t n = 0; n < v.items.size(); ++n) {
        out += (n ? "," : "") + HydraStr(v.items[n]);
      }
      return out + "]";
    }
    case PVal::K::kDict: {
      std::string out = "{";
      for (size_t n = 0; n < v.entries.size(); ++n) {
        out += (n ? "," : "") + HydraStr(v.entries[n].first) + ":" +
               HydraStr(v.entries[n].second);
      }
      return out + "}";
    }
    default:  // numbers and bools: str() is repr()
      return PyRepr(v);
  }
}

namespace {

// Exact comparison of Python numbers: long double holds every int64 and
// every double exactly on the platforms we build for.
long double NumValue(const PVal& v) {
  switch (v.k) {
    case PVal::K::kBool:
      return v.b ? 1 : 0;
    case PVal::K::kInt:
      return static_cast<long double>(v.i);
    default:
      return v.f;
  }
}

}  // namespace

// Python's ==: numbers by value across bool, int and float (True == 1 ==
// 1.0), QuotedString as a frozen dataclass (text and quote), dicts
// whatever their order; sweeps compare field by field, which their repr
// shows (IntervalSweep's __eq__ also wants the bounds' types, and 1 and
// 1.0 have different reprs).
bool PyEq(const PVal& a, const PVal& b) {
  if (a.is_number() && b.is_number()) return NumValue(a) == NumValue(b);
  if (a.k != b.k) return false;
  switch (a.k) {
    case PVal::K::kNull:
      return true;
    case PVal::K::kStr:
      return a.s == b.s;
    case PVal::K::kQuoted:
      return a.s == b.s && a.quote == b.quote;
    case PVal::K::kList:
      if (a.items.size() != b.items.size()) return false;
      for (size_t n = 0; n < a.items.size(); ++n) {
        if (!PyEq(a.items[n], b.items[n])) return false;
      }
      return true;
    case PVal::K::kDict:
      if (a.entries.size() != b.entries.size()) return false;
      for (const auto& entry : a.entries) {
        auto it = std::find_if(
            b.entries.begin(), b.entries.end(),
            [&](const auto& e) { return PyEq(e.first, entry.first); });
        if (it == b.entries.end() || !PyEq(it->second, entry.second)) {
          return false;
        }
      }
      return true;
    default:
      return PyRepr(a) == PyRepr(b);  // dataclass equality, field by field
  }
}

// Python's <, all that sorted() needs: numbers across types, str by code
// point (std::string compares bytes as unsigned char, and UTF-8 byte order
// is code point order), lists by their first unequal item, then length.
// Anything else raises Python's TypeError, types in operand order.
StatusOr<bool> PyLess(const PVal& a, const PVal& b) {
  if (a.is_number() && b.is_number()) return NumValue(a) < NumValue(b);
  if (a.k == PVal::K::kStr && b.k == PVal::K::kStr) return a.s < b.s;
  if (a.k == PVal::K::kList && b.k == PVal::K::kList) {
    size_t n = 0;
    while (n < a.items.size() && n < b.items.size() &&
           PyEq(a.items[n], b.items[n]))
      ++n;
    if (n < a.items.size() && n < b.items.size())
      return PyLess(a.items[n], b.items[n]);
    return a.items.size() < b.items.size();
  }
  return Status::InvalidArgument(
      std::string("TypeError: '<' not supported between instances of '") +
      PyTypeName(a) + "' and '" + PyTypeName(b) + "'");
}

// CPython's list.sort (Objects/listobject.c), for Hydra's sort(): under 64
// items (merge_compute_minrun returns n) timsort is count_run plus binary
// insertion, so doing just that gives the same order, and a mixed list
// raises the same TypeError. A longer list gets the same order (a stable
// sort's result is unique); only which comparison raises may differ.
// reverse=True reverses before and after, as CPython does, to stay stable.
Status PySort(std::vector<PVal>* items, bool reverse) {
  std::vector<PVal>& v = *items;
  if (reverse) std::reverse(v.begin(), v.end());
  size_t n = v.size();
  if (n >= 2) {
    // count_run: the leading run, reversed when strictly descending.
    size_t run = 2;
    TRIALSHIM_ASSIGN_OR_RETURN(bool descending, PyLess(v[1], v[0]));
    for (; run < n; ++run) {
      TRIALSHIM_ASSIGN_OR_RETURN(bool lt, PyLess(v[run], v[run - 1]));
      if (lt != descending) break;
    }
    if (descending) std::reverse(v.begin(), v.begin() + run);
    // binarysort: insert the rest one by one (stable).
    for (size_t start = run; start < n; ++start) {
      size_t l = 0, r = start;
      while (l < r) {
        size_t mid = l + ((r - l) >> 1);
        TRIALSHIM_ASSIGN_OR_RETURN(bool lt, PyLess(v[start], v[mid]));
        if (lt) {
          r = mid;
        } else {
          l = mid + 1;
        }
      }
      std::rotate(v.begin() + l, v.begin() + start, v.begin() + start + 1);
    }
  }
  if (reverse) std::reverse(v.begin(), v.end());
  return Status::Ok();
}

// Hydra's casts call Python's int() and float() (base/python_number.h);
// what they raise is named as Python names it.
StatusOr<int64_t> PyParseInt(const std::string& s) {
  StatusOr<std::optional<int64_t>> i = ParsePythonInt(s);
  if (!i.ok()) {
    return Status::InvalidArgument("ValueError: " + i.status().message());
  }
  if (!i->has_value()) {
    // Python's int() has no limit; a 64-bit Node does.
    return Status::InvalidArgument("OverflowError: int(" +
                                   PythonStringRepr(s) +
                                   ") does not fit in a 64-bit integer");
  }
  return **i;
}

StatusOr<double> PyParseFloat(const std::string& s) {
  StatusOr<double> f = ParsePythonFloat(s);
  if (!f.ok()) return Status::InvalidArgument("ValueError: " + f.status().message());
  return *f;
}

namespace {

// The text json.dumps writes for a dict key of this type.
StatusOr<std::string> KeyText(const PVal& k) {
  switch (k.k) {
    case PVal::K::kStr:
    case PVal::K::kQuoted:
      return k.s;
    case PVal::K::kInt:
      return std::to_string(k.i);
    case PVal::K::kBool:
      return std::string(k.b ? "true" : "false");
    case PVal::K::kFloat:
      if (std::isnan(k.f)) return std::string("NaN");
      if (std::isinf(k.f))
        return std::string(k.f > 0 ? "Infinity" : "-Infinity");
      return FormatPythonFloat(k.f);
    case PVal::K::kNull:
      return Status::InvalidArgument(
          "a dict key can not be null: OmegaConf accepts only str, int, float "
          "and bool "
          "keys (Hydra fails later with \"Incompatible key type 'NoneType'\")");
    default:
      return Status::InvalidArgument(std::string("a dict key can not be a ") +
                                     PyTypeName(k));
  }
}

}  // namespace

StatusOr<Node> ToNode(const PVal& v) {
  switch (v.k) {
    case PVal::K::kNull:
      return Node::Null();
    case PVal::K::kBool:
      return Node::Bool(v.b);
    case PVal::K::kInt:
      return Node::Int(v.i);
    case PVal::K::kFloat:
      return Node::Double(v.f);
    case PVal::K::kStr:
    case PVal::K::kQuoted:
      return Node::String(v.s);
    case PVal::K::kList: {
      Node::List items;
      items.reserve(v.items.size());
      for (const PVal& item : v.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(Node n, ToNode(item));
        items.push_back(std::move(n));
      }
      return Node::MakeList(std::move(items));
    }
    case PVal::K::kDict: {
      // A Python dict keeps the first of equal keys (1 == 1.0 == True) and
      // the last value given for it.
      std::vector<const PVal*> keys;
      Node::Map entries;
      for (const auto& [k, val] : v.entries) {
        TRIALSHIM_ASSIGN_OR_RETURN(Node n, ToNode(val));
        size_t at = 0;
        while (at < keys.size() && !PyEq(*keys[at], k)) ++at;
        if (at < keys.size()) {
          entries[at].second = std::move(n);
          continue;
        }
        TRIALSHIM_ASSIGN_OR_RETURN(std::string text, KeyText(k));
        keys.push_back(&k);
        entries.emplace_back(std::move(text), std::move(n));
      }
      return Node::MakeMap(std::move(entries));
    }
    default:
      // Hydra accepts a sweep inside a sweep (choice(1,choice(2)), a,choice(b))
      // and fails only when it runs it.
      return Status::InvalidArgument(
          std::string("nesting sweeps is not supported: a ") + PyTypeName(v) +
          " can not be one of the values");
  }
}

}  // namespace trialshim::config::override_internal
