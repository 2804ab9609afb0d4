// The casts int(), float(), str() and bool() of Hydra's override grammar.
#include <cmath>
#include <cstdint>
#include <string>

#include "override_functions_internal.h"
#include "trialshim/base/number_format.h"

namespace trialshim::config::override_internal {
namespace {

// int(), float(), str() and bool() of one primitive as
// hydra/_internal/grammar/grammar_functions.py's cast_* end: Python's own
// conversions, except that str() of a bool is "true"/"false" (Hydra
// lowercases it) and bool() of a string accepts only true/false in any
// case. int() of a float truncates toward zero as Python does; ours refuses
// what does not fit 64 bits where Python would grow a big int.
StatusOr<PVal> CastPrimitive(Cast c, const PVal& v) {
  if (c == Cast::kBool) {
    if (v.k == K::kStr) {
      std::string lower;
      for (char ch : v.s)
        lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
      if (lower == "false") return PVal::Bool(false);
      if (lower == "true") return PVal::Bool(true);
      return Err("ValueError", "Cannot cast '" + v.s + "' to bool");
    }
    switch (v.k) {
      case K::kNull:
        return PVal::Bool(false);
      case K::kBool:
        return PVal::Bool(v.b);
      case K::kInt:
        return PVal::Bool(v.i != 0);
      case K::kFloat:
        return PVal::Bool(v.f != 0);  // nan is true
      default:
        return PVal::Bool(true);  // any other object is truthy
    }
  }
  // cast_int, cast_float and cast_str `assert isinstance(value, (int,
  // float, bool, str))`: null is an AssertionError there, while cast_bool
  // has no assert and gives bool(None), False (above).
  if (!(v.is_number() || v.k == K::kStr)) return AssertionError();
  switch (c) {
    case Cast::kInt:
      if (v.k == K::kStr) {
        // Python's int(str): int(' 12 ') and int('1_000') are ints,
        // int('1.5') is a ValueError (float text is not truncated).
        TRIALSHIM_ASSIGN_OR_RETURN(int64_t i, PyParseInt(v.s));
        return PVal::Int(i);
      }
      if (v.k == K::kFloat) {
        if (std::isnan(v.f))
          return Err("ValueError", "cannot convert float NaN to integer");
        if (std::isinf(v.f)) {
          return Err("OverflowError",
                     "cannot convert float infinity to integer");
        }
        double t = std::trunc(v.f);
        if (t < -9223372036854775808.0 || t >= 9223372036854775808.0) {
          return Err("OverflowError", "int(" + FormatPythonFloat(v.f) +
                                          ") does not fit in a 64-bit integer");
        }
        return PVal::Int(static_cast<int64_t>(t));
      }
      // int(True) is 1: bool is an int subclass.
      return PVal::Int(v.k == K::kBool ? v.b : v.i);
    case Cast::kFloat:
      if (v.k == K::kStr) {
        // Python's float(str): "1e3", " inf ", "1_0.5" are floats, "1,5"
        // is a ValueError.
        TRIALSHIM_ASSIGN_OR_RETURN(double f, PyParseFloat(v.s));
        return PVal::Float(f);
      }
      return PVal::Float(v.AsDouble());
    case Cast::kStr:
      switch (v.k) {
        case K::kBool:
          return PVal::Str(v.b ? "true" : "false");
        case K::kInt:
          return PVal::Str(std::to_string(v.i));
        case K::kFloat:
          // str() of a float is its repr, the shortest text that reads
          // back as the same double: str(0.1) is "0.1", str(1e16) "1e+16".
          return PVal::Str(FormatPythonFloat(v.f));
        default:
          return PVal::Str(v.s);
      }
    case Cast::kBool:
      break;
  }
  return AssertionError();
}

// The cast_* functions map over containers and sweeps: dict values, list
// items, choice options (cast_choice; each result must still be an
// ElementType), range bounds (cast_range: int and float only) and
// interval bounds (cast_interval; str and bool refuse intervals).
StatusOr<PVal> CastValue(Cast c, const PVal& v) {
  switch (v.k) {
    case K::kQuoted:
      // cast_*(value.text): a quoted "5" casts as the str 5 (int('5')).
      return CastValue(c, PVal::Str(v.s));
    case K::kDict: {
      PVal out = v;
      for (auto& [key, val] : out.entries) {
        TRIALSHIM_ASSIGN_OR_RETURN(val, CastValue(c, val));
      }
      return out;
    }
    case K::kList: {
      PVal out = v;
      for (PVal& item : out.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(item, CastValue(c, item));
      }
      return out;
    }
    case K::kChoice: {
      PVal out;
      out.k = K::kChoice;
      // cast_choice builds ChoiceSweep(simple_form, list) anew, so tags and
      // shuffle are dropped, as in Hydra.
      out.simple_form = v.simple_form;
      for (const PVal& item : v.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(PVal cast, CastValue(c, item));
        if ((kElement & Bit(cast.k)) == 0) return AssertionError();
        out.items.push_back(std::move(cast));
      }
      return out;
    }
    case K::kRange: {
      if (c != Cast::kInt && c != Cast::kFloat) {
        return Err("ValueError", "Range can only be cast to int or float");
      }
      PVal out;
      // RangeSweep(start, stop, step) anew: tags and shuffle dropped too.
      out.k = K::kRange;
      for (const PVal& item : v.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(PVal cast, CastValue(c, item));
        out.items.push_back(std::move(cast));
      }
      return out;
    }
    case K::kInterval: {
      // cast_interval keeps the tags (copy(value.tags)); cast_str and
      // cast_bool refuse an interval before calling it.
      if (c == Cast::kStr)
        return Err("ValueError", "Intervals cannot be cast to str");
      if (c == Cast::kBool)
        return Err("ValueError", "Intervals cannot be cast to bool");
      PVal out = v;
      for (PVal& item : out.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(item, CastValue(c, item));
      }
      return out;
    }
    default:
      return CastPrimitive(c, v);
  }
}

}  // namespace

// _normalize_cast_value: int(1,2) casts the simple choice `1,2`, while
// int(value=x) casts x; both at once is refused.
StatusOr<PVal> CallCast(Cast c, Bound b) {
  PVal value = b.Opt("value");
  bool has_value = value.k != K::kNull;
  if (!b.var.empty() && has_value) {
    return Err("TypeError", "cannot use both position and named arguments");
  }
  if (!has_value) {
    if (b.var.empty())
      return Err("TypeError", "No positional args or value specified");
    if (b.var.size() == 1) {
      value = std::move(b.var[0]);
    } else {
      TRIALSHIM_ASSIGN_OR_RETURN(value, ListToSimpleChoice(std::move(b.var)));
    }
  }
  return CastValue(c, value);
}

}  // namespace trialshim::config::override_internal
