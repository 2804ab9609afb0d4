#include "override_functions.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/base/number_format.h"

namespace trialshim::config::override_internal {
namespace {

using K = PVal::K;

Status Err(const char* type, const std::string& msg) {
  return Status::InvalidArgument(std::string(type) + ": " + msg);
}
Status AssertionError() { return Err("AssertionError", ""); }

constexpr uint32_t Bit(K k) { return 1u << static_cast<int>(k); }
constexpr uint32_t kAny = 0xffffffffu;
constexpr uint32_t kNumber = Bit(K::kInt) | Bit(K::kBool) | Bit(K::kFloat);
constexpr uint32_t kElement =
    Bit(K::kStr) | kNumber | Bit(K::kList) | Bit(K::kDict);
constexpr uint32_t kSweep =
    Bit(K::kChoice) | Bit(K::kRange) | Bit(K::kInterval);

// One parameter of a registered function, as inspect.signature sees it.
struct Param {
  const char* name;
  enum Kind { kPositional, kVarPositional, kKeywordOnly } kind;
  bool has_default;
  uint32_t types;  // isinstance() of a Union; bool passes for int
  const char* type_str;
};

struct Signature {
  const char* name;
  std::vector<Param> params;
};

// Hydra's CastType: every parsed value except a glob.
constexpr uint32_t kCastable = kAny & ~Bit(K::kGlob);
const char* const kCastStr =
    "Optional[Union[str, int, float, bool, List[Any], Dict[str, Any], "
    "QuotedString, Sweep]]";
const Param kCastArgs{"args", Param::kVarPositional, false, kCastable,
                      kCastStr};
const Param kCastValue{"value", Param::kKeywordOnly, true, kCastable, kCastStr};
constexpr uint32_t kSortable = kElement | Bit(K::kChoice) | Bit(K::kRange);
const char* const kSortableStr =
    "Union[str, int, bool, float, list, dict, ChoiceSweep, RangeSweep]";

const std::vector<Signature>& Signatures() {
  static const auto* sigs = new std::vector<Signature>{
      {"bool", {kCastArgs, kCastValue}},
      {"choice",
       {{"args", Param::kVarPositional, false, kElement | Bit(K::kChoice),
         "Union[str, int, float, bool, Dict[Any, Any], List[Any], "
         "ChoiceSweep]"}}},
      {"float", {kCastArgs, kCastValue}},
      {"glob",
       {{"include", Param::kPositional, false, Bit(K::kList) | Bit(K::kStr),
         "Union[List[str], str]"},
        {"exclude", Param::kPositional, true,
         Bit(K::kNull) | Bit(K::kList) | Bit(K::kStr),
         "Optional[Union[str, List[str]]]"}}},
      {"int", {kCastArgs, kCastValue}},
      {"interval",
       {{"start", Param::kPositional, false, kNumber, "Union[int, float]"},
        {"end", Param::kPositional, false, kNumber, "Union[int, float]"}}},
      {"range",
       {{"start", Param::kPositional, false, kNumber, "Union[int, float]"},
        {"stop", Param::kPositional, true, kNumber | Bit(K::kNull),
         "Optional[Union[int, float]]"},
        {"step", Param::kPositional, true, kNumber, "Union[int, float]"}}},
      {"shuffle",
       {{"args", Param::kVarPositional, false, kSortable, kSortableStr},
        {"sweep", Param::kKeywordOnly, true,
         Bit(K::kNull) | Bit(K::kChoice) | Bit(K::kRange),
         "Optional[Union[ChoiceSweep, RangeSweep]]"},
        {"list", Param::kKeywordOnly, true, Bit(K::kNull) | Bit(K::kList),
         "Optional[List[Any]]"}}},
      {"sort",
       {{"args", Param::kVarPositional, false, kSortable, kSortableStr},
        {"sweep", Param::kKeywordOnly, true,
         Bit(K::kNull) | Bit(K::kChoice) | Bit(K::kRange),
         "Optional[Union[ChoiceSweep, RangeSweep]]"},
        {"list", Param::kKeywordOnly, true, Bit(K::kNull) | Bit(K::kList),
         "Optional[List[Any]]"},
        // A plain `bool` annotation: type(value) is bool, so 1 is refused.
        {"reverse", Param::kKeywordOnly, true, Bit(K::kBool), "bool"}}},
      {"str", {kCastArgs, kCastValue}},
      {"tag",
       {{"args", Param::kVarPositional, false, Bit(K::kStr) | kSweep,
         "Union[str, Sweep]"},
        {"sweep", Param::kKeywordOnly, true, Bit(K::kNull) | kSweep,
         "Optional[Sweep]"}}},
  };
  return *sigs;
}

// The arguments bound to a signature (inspect.Signature.bind).
struct Bound {
  std::vector<PVal> var;  // *args
  std::map<std::string, PVal> named;
  const PVal* Get(const std::string& name) const {
    auto it = named.find(name);
    return it == named.end() ? nullptr : &it->second;
  }
  // The value of an optional parameter; null when absent.
  PVal Opt(const std::string& name) const {
    const PVal* v = Get(name);
    return v ? *v : PVal::Null();
  }
};

StatusOr<Bound> Bind(const Signature& sig, std::vector<PVal> args,
                     std::vector<std::pair<std::string, PVal>> kwargs) {
  Bound bound;
  std::map<std::string, PVal> kw;
  for (auto& [k, v] : kwargs) kw[k] = std::move(v);  // the last one wins
  size_t next_arg = 0;
  size_t p = 0;
  for (; p < sig.params.size(); ++p) {
    const Param& param = sig.params[p];
    if (next_arg == args.size()) break;
    if (param.kind == Param::kKeywordOnly) break;
    if (param.kind == Param::kVarPositional) {
      while (next_arg < args.size())
        bound.var.push_back(std::move(args[next_arg++]));
      ++p;
      break;
    }
    if (kw.count(param.name)) {
      return Err("TypeError", std::string("multiple values for argument '") +
                                  param.name + "'");
    }
    bound.named[param.name] = std::move(args[next_arg++]);
  }
  if (next_arg < args.size())
    return Err("TypeError", "too many positional arguments");
  for (; p < sig.params.size(); ++p) {
    const Param& param = sig.params[p];
    if (param.kind == Param::kVarPositional) continue;
    auto it = kw.find(param.name);
    if (it == kw.end()) {
      if (!param.has_default) {
        return Err("TypeError", std::string("missing a required argument: '") +
                                    param.name + "'");
      }
      continue;
    }
    bound.named[param.name] = std::move(it->second);
    kw.erase(it);
  }
  if (!kw.empty()) {
    // Python names the first unexpected keyword in call order.
    for (const auto& [k, v] : kwargs) {
      if (kw.count(k)) {
        return Err("TypeError",
                   "got an unexpected keyword argument '" + k + "'");
      }
    }
  }
  // Hydra's type check, in parameter order.
  for (const Param& param : sig.params) {
    auto check = [&](const PVal& v, const std::string& label) -> Status {
      bool ok = (param.types & Bit(v.k)) != 0;
      if (ok) return Status::Ok();
      return Err("TypeError", "mismatch type argument " + label + ": " +
                                  PyTypeName(v) + " is incompatible with " +
                                  param.type_str);
    };
    if (param.kind == Param::kVarPositional) {
      for (size_t n = 0; n < bound.var.size(); ++n) {
        TRIALSHIM_RETURN_IF_ERROR(
            check(bound.var[n],
                  std::string(param.name) + "[" + std::to_string(n) + "]"));
      }
    } else if (const PVal* v = bound.Get(param.name)) {
      TRIALSHIM_RETURN_IF_ERROR(check(*v, param.name));
    }
  }
  return bound;
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

PVal SimpleChoice(std::vector<PVal> items) {
  PVal c;
  c.k = K::kChoice;
  c.simple_form = true;
  c.items = std::move(items);
  return c;
}

// _list_to_simple_choice: every item must be a ParsedElementType.
StatusOr<PVal> ListToSimpleChoice(std::vector<PVal> items) {
  for (const PVal& v : items) {
    if (v.is_sweep() || v.k == K::kGlob) return AssertionError();
  }
  return SimpleChoice(std::move(items));
}

// ---- casts ----

enum class Cast { kInt, kFloat, kStr, kBool };

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
  if (!(v.is_number() || v.k == K::kStr)) return AssertionError();
  switch (c) {
    case Cast::kInt:
      if (v.k == K::kStr) {
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
      return PVal::Int(v.k == K::kBool ? v.b : v.i);
    case Cast::kFloat:
      if (v.k == K::kStr) {
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
          return PVal::Str(FormatPythonFloat(v.f));
        default:
          return PVal::Str(v.s);
      }
    case Cast::kBool:
      break;
  }
  return AssertionError();
}

StatusOr<PVal> CastValue(Cast c, const PVal& v) {
  switch (v.k) {
    case K::kQuoted:
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
      out.k = K::kRange;
      for (const PVal& item : v.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(PVal cast, CastValue(c, item));
        out.items.push_back(std::move(cast));
      }
      return out;
    }
    case K::kInterval: {
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

// ---- sweeps ----

// Python arithmetic on ints, bools and floats (the result is a float when
// either side is).
StatusOr<PVal> NumAdd(const PVal& a, const PVal& b, int sign) {
  if (a.k == K::kFloat || b.k == K::kFloat) {
    return PVal::Float(a.AsDouble() + sign * b.AsDouble());
  }
  int64_t x = a.k == K::kBool ? a.b : a.i;
  int64_t y = b.k == K::kBool ? b.b : b.i;
  int64_t r;
  bool overflow = sign > 0 ? __builtin_add_overflow(x, y, &r)
                           : __builtin_sub_overflow(x, y, &r);
  if (overflow)
    return Err("OverflowError", "range bound does not fit in a 64-bit integer");
  return PVal::Int(r);
}
PVal NumAbs(const PVal& a) {
  if (a.k == K::kFloat) return PVal::Float(std::fabs(a.f));
  int64_t x = a.k == K::kBool ? a.b : a.i;
  return PVal::Int(x < 0 ? -x : x);
}
PVal NumNeg(const PVal& a) {
  if (a.k == K::kFloat) return PVal::Float(-a.f);
  return PVal::Int(-(a.k == K::kBool ? a.b : a.i));
}

StatusOr<PVal> SortSweep(PVal sweep, bool reverse) {
  if (sweep.k == K::kChoice) {
    TRIALSHIM_RETURN_IF_ERROR(PySort(&sweep.items, reverse));
    return sweep;
  }
  // A range is re-pointed, not enumerated: Hydra's exact arithmetic.
  PVal& start = sweep.items[0];
  PVal& stop = sweep.items[1];
  PVal& step = sweep.items[2];
  PVal abs_step = NumAbs(step);
  TRIALSHIM_ASSIGN_OR_RETURN(
      bool flip, reverse ? PyLess(start, stop) : PyLess(stop, start));
  if (flip) {
    int sign = reverse ? -1 : 1;
    TRIALSHIM_ASSIGN_OR_RETURN(PVal new_start, NumAdd(stop, abs_step, sign));
    TRIALSHIM_ASSIGN_OR_RETURN(PVal new_stop, NumAdd(start, abs_step, sign));
    start = std::move(new_start);
    stop = std::move(new_stop);
    step = NumNeg(step);
  }
  return sweep;
}

std::string ArgsTupleRepr(const std::vector<PVal>& args) {
  std::string out = "(";
  for (size_t n = 0; n < args.size(); ++n) {
    if (n) out += ", ";
    out += PyRepr(args[n]);
  }
  if (args.size() == 1) out += ",";
  return out + ")";
}

bool IsPrimitive(const PVal& v) { return v.is_number() || v.k == K::kStr; }

StatusOr<PVal> CallSort(Bound b) {
  PVal reverse_v = b.Opt("reverse");
  bool reverse = reverse_v.k == K::kBool && reverse_v.b;
  PVal list = b.Opt("list");
  if (list.k != K::kNull) {
    TRIALSHIM_RETURN_IF_ERROR(PySort(&list.items, reverse));
    return list;
  }
  PVal sweep = b.Opt("sweep");
  if (sweep.k != K::kNull) return SortSweep(std::move(sweep), reverse);
  std::vector<PVal>& args = b.var;
  if (args.size() == 1) {
    PVal arg = std::move(args[0]);
    if (arg.k == K::kChoice || arg.k == K::kRange)
      return SortSweep(std::move(arg), reverse);
    if (arg.k == K::kList) {
      TRIALSHIM_RETURN_IF_ERROR(PySort(&arg.items, reverse));
      return arg;
    }
    return arg;  // a single element sorts to itself
  }
  for (const PVal& arg : args) {
    if (!IsPrimitive(arg))
      return Err("TypeError", "Invalid arguments: " + ArgsTupleRepr(args));
  }
  if (args.empty()) return Err("ValueError", "empty sort input");
  PVal choice = SimpleChoice(std::move(args));
  return SortSweep(std::move(choice), reverse);
}

StatusOr<PVal> CallShuffle(Bound b) {
  PVal list = b.Opt("list");
  if (list.k != K::kNull) {
    std::shuffle(list.items.begin(), list.items.end(), Rng());
    return list;
  }
  PVal sweep = b.Opt("sweep");
  if (sweep.k != K::kNull) {
    sweep.shuffle = true;
    return sweep;
  }
  if (b.var.size() == 1) {
    PVal arg = std::move(b.var[0]);
    if (arg.k == K::kChoice || arg.k == K::kRange) {
      arg.shuffle = true;
      return arg;
    }
    if (arg.k == K::kList) {
      std::shuffle(arg.items.begin(), arg.items.end(), Rng());
      return arg;
    }
    return PVal::List({std::move(arg)});
  }
  TRIALSHIM_ASSIGN_OR_RETURN(PVal choice, ListToSimpleChoice(std::move(b.var)));
  choice.shuffle = true;
  return choice;
}

StatusOr<PVal> CallTag(Bound b) {
  std::vector<PVal> args = std::move(b.var);
  if (args.empty()) {
    return Err("ValueError",
               "Not enough arguments to tag, must take at least a sweep");
  }
  PVal sweep = b.Opt("sweep");
  if (sweep.k != K::kNull) args.push_back(std::move(sweep));
  PVal last = std::move(args.back());
  args.pop_back();
  if (!last.is_sweep()) {
    // Hydra names the type of its `sweep` variable here, always None.
    return Err("ValueError",
               "Last argument to tag() must be a choice(), range() or "
               "interval(), got NoneType");
  }
  std::set<std::string> tags;
  for (const PVal& t : args) {
    if (t.k != K::kStr) {
      return Err("ValueError",
                 std::string("tag arguments type must be string, got ") +
                     PyTypeName(t));
    }
    tags.insert(t.s);
  }
  last.tags.assign(tags.begin(), tags.end());
  return last;
}

StatusOr<PVal> CallChoice(Bound b) {
  std::vector<PVal>& args = b.var;
  if (args.empty()) return Err("ValueError", "empty choice is not legal");
  if (args.size() == 1 && args[0].k == K::kChoice) {
    if (!args[0].simple_form)
      return Err("ValueError", "nesting choices is not supported");
    PVal c = std::move(args[0]);
    c.simple_form = false;
    return c;
  }
  for (const PVal& a : args) {
    // Hydra accepts a sweep among several choices and fails when sweeping.
    if (a.k == K::kChoice)
      return Err("ValueError", "nesting choices is not supported");
  }
  PVal c;
  c.k = K::kChoice;
  c.items = std::move(args);
  return c;
}

StatusOr<PVal> CallRange(Bound b) {
  PVal start = b.Opt("start");
  PVal stop = b.Opt("stop");
  PVal step = b.Get("step") ? *b.Get("step") : PVal::Int(1);
  if (stop.k == K::kNull) {
    stop = start;
    start = PVal::Int(0);
  }
  PVal r;
  r.k = K::kRange;
  r.items = {start, stop, step};
  return r;
}

StatusOr<PVal> CallInterval(Bound b) {
  PVal r;
  r.k = K::kInterval;
  r.items = {PVal::Float(b.Opt("start").AsDouble()),
             PVal::Float(b.Opt("end").AsDouble())};
  return r;
}

StatusOr<PVal> CallGlob(Bound b) {
  auto as_list = [](const PVal& v) {
    if (v.k == K::kNull) return std::vector<PVal>{};
    if (v.k == K::kList) return v.items;
    return std::vector<PVal>{v};
  };
  PVal g;
  g.k = K::kGlob;
  g.include = as_list(b.Opt("include"));
  g.exclude = as_list(b.Opt("exclude"));
  return g;
}

// Just enough of Python's decimal.Decimal for Hydra's FloatRange: exact
// conversion from a double, addition rounded to the default context's 28
// significant digits (ROUND_HALF_EVEN), comparison, conversion back. The
// rounding matters: range(0,1,0.1) gives 0.3, not 0.30000000000000004.
class Decimal {
 public:
  explicit Decimal(double v) {
    char buf[1200];
    std::snprintf(buf, sizeof buf, "%.1100e", v);  // glibc prints exact digits
    std::string text(buf);
    negative_ = text[0] == '-';
    digits_.clear();
    size_t e = text.find('e');
    for (size_t i = negative_ ? 1 : 0; i < e; ++i) {
      if (text[i] != '.') digits_ += text[i];
    }
    exp_ = std::stoi(text.substr(e + 1)) - static_cast<int>(digits_.size() - 1);
    Normalize();
  }

  Decimal Plus(const Decimal& o) const {
    int e = std::min(exp_, o.exp_);
    std::string a = digits_ + std::string(exp_ - e, '0');
    std::string b = o.digits_ + std::string(o.exp_ - e, '0');
    Decimal r;
    r.exp_ = e;
    if (negative_ == o.negative_) {
      r.digits_ = AddMag(a, b);
      r.negative_ = negative_;
    } else if (CmpMag(a, b) >= 0) {
      r.digits_ = SubMag(a, b);
      r.negative_ = negative_;
    } else {
      r.digits_ = SubMag(b, a);
      r.negative_ = o.negative_;
    }
    r.Round(28);
    r.Normalize();
    return r;
  }

  bool Less(const Decimal& o) const {
    if (IsZero() && o.IsZero()) return false;
    if (negative_ != o.negative_) return negative_;
    int c = CmpValue(o);
    return negative_ ? c > 0 : c < 0;
  }

  double ToDouble() const {
    std::string text = digits_ + "e" + std::to_string(exp_);
    double v = 0;
    std::from_chars(text.data(), text.data() + text.size(), v);
    return negative_ ? -v : v;
  }

 private:
  Decimal() = default;
  bool IsZero() const { return digits_ == "0"; }

  void Normalize() {
    size_t nz = digits_.find_first_not_of('0');
    if (nz == std::string::npos) {
      digits_ = "0";
      exp_ = 0;
      negative_ = false;
      return;
    }
    digits_.erase(0, nz);
    while (digits_.size() > 1 && digits_.back() == '0') {
      digits_.pop_back();
      ++exp_;
    }
  }

  void Round(size_t precision) {
    size_t nz = digits_.find_first_not_of('0');
    if (nz == std::string::npos) return;
    digits_.erase(0, nz);
    if (digits_.size() <= precision) return;
    std::string rest = digits_.substr(precision);
    exp_ += static_cast<int>(digits_.size() - precision);
    digits_.resize(precision);
    std::string half = "5" + std::string(rest.size() - 1, '0');
    int c = CmpMag(rest, half);
    if (c > 0 || (c == 0 && (digits_.back() - '0') % 2 == 1)) {
      digits_ = AddMag(digits_, "1");
    }
  }

  // Magnitudes compared as values: more integer digits wins, then digits.
  int CmpValue(const Decimal& o) const {
    int ma = static_cast<int>(digits_.size()) + exp_;
    int mb = static_cast<int>(o.digits_.size()) + o.exp_;
    if (IsZero()) return o.IsZero() ? 0 : -1;
    if (o.IsZero()) return 1;
    if (ma != mb) return ma < mb ? -1 : 1;
    size_t n = std::max(digits_.size(), o.digits_.size());
    std::string a = digits_ + std::string(n - digits_.size(), '0');
    std::string b = o.digits_ + std::string(n - o.digits_.size(), '0');
    return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
  }
  static int CmpMag(const std::string& a, const std::string& b) {
    size_t n = std::max(a.size(), b.size());
    std::string x = std::string(n - a.size(), '0') + a;
    std::string y = std::string(n - b.size(), '0') + b;
    return x.compare(y) < 0 ? -1 : (x == y ? 0 : 1);
  }
  static std::string AddMag(const std::string& a, const std::string& b) {
    std::string r;
    int carry = 0;
    for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
      int d = carry;
      if (i < a.size()) d += a[a.size() - 1 - i] - '0';
      if (i < b.size()) d += b[b.size() - 1 - i] - '0';
      r += static_cast<char>('0' + d % 10);
      carry = d / 10;
    }
    std::reverse(r.begin(), r.end());
    return r;
  }
  static std::string SubMag(const std::string& a,
                            const std::string& b) {  // a >= b
    std::string r;
    int borrow = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      int d = a[a.size() - 1 - i] - '0' - borrow;
      if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
      borrow = d < 0;
      r += static_cast<char>('0' + (d + 10) % 10);
    }
    std::reverse(r.begin(), r.end());
    return r;
  }

  bool negative_ = false;
  std::string digits_ = "0";
  int exp_ = 0;
};

}  // namespace

const std::vector<std::string>& FunctionNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const Signature& s : Signatures()) v->push_back(s.name);
    return v;
  }();
  return *names;
}

StatusOr<PVal> CallFunction(const std::string& name, std::vector<PVal> args,
                            std::vector<std::pair<std::string, PVal>> kwargs) {
  const Signature* sig = nullptr;
  for (const Signature& s : Signatures()) {
    if (name == s.name) sig = &s;
  }
  if (sig == nullptr)
    return Err("HydraException", "Unknown function '" + name + "'");
  // Hydra unquotes quoted strings passed directly as arguments.
  for (PVal& a : args) {
    if (a.k == K::kQuoted) a.k = K::kStr;
  }
  for (auto& [k, v] : kwargs) {
    if (v.k == K::kQuoted) v.k = K::kStr;
  }
  TRIALSHIM_ASSIGN_OR_RETURN(Bound b,
                             Bind(*sig, std::move(args), std::move(kwargs)));
  if (name == "int") return CallCast(Cast::kInt, std::move(b));
  if (name == "float") return CallCast(Cast::kFloat, std::move(b));
  if (name == "str") return CallCast(Cast::kStr, std::move(b));
  if (name == "bool") return CallCast(Cast::kBool, std::move(b));
  if (name == "choice") return CallChoice(std::move(b));
  if (name == "range") return CallRange(std::move(b));
  if (name == "interval") return CallInterval(std::move(b));
  if (name == "tag") return CallTag(std::move(b));
  if (name == "sort") return CallSort(std::move(b));
  if (name == "shuffle") return CallShuffle(std::move(b));
  return CallGlob(std::move(b));
}

StatusOr<std::vector<PVal>> EnumerateSweep(const PVal& sweep) {
  std::vector<PVal> out;
  if (sweep.k == K::kChoice) {
    out = sweep.items;
  } else if (sweep.k == K::kRange) {
    const PVal& start = sweep.items[0];
    const PVal& stop = sweep.items[1];
    const PVal& step = sweep.items[2];
    std::string desc = "range(" + PyRepr(start) + ", " + PyRepr(stop) + ", " +
                       PyRepr(step) + ")";
    auto too_many = [&] {
      return Status::InvalidArgument(desc + " has more than " +
                                     std::to_string(kMaxSweepValues) +
                                     " values");
    };
    if (start.k != K::kFloat && stop.k != K::kFloat && step.k != K::kFloat) {
      // Python's range().
      __int128 a = start.k == K::kBool ? start.b : start.i;
      __int128 z = stop.k == K::kBool ? stop.b : stop.i;
      __int128 s = step.k == K::kBool ? step.b : step.i;
      if (s == 0) return Err("ValueError", "range() arg 3 must not be zero");
      for (__int128 x = a; s > 0 ? x < z : x > z; x += s) {
        if (out.size() == kMaxSweepValues) return too_many();
        out.push_back(PVal::Int(static_cast<int64_t>(x)));
      }
    } else {
      // Hydra's FloatRange: Decimal(start) += Decimal(step) while < stop.
      double a = start.AsDouble(), z = stop.AsDouble(), s = step.AsDouble();
      if (!std::isfinite(a) || !std::isfinite(z) || !std::isfinite(s)) {
        return Status::InvalidArgument(
            desc + " can not be enumerated: its bounds must be finite");
      }
      if (s == 0) {
        return Err("HydraException",
                   "Invalid range values (start:" + FormatPythonFloat(a) +
                       ", stop:" + FormatPythonFloat(z) +
                       ", step:" + FormatPythonFloat(s) + ")");
      }
      // Far more values than allowed is refused without stepping through
      // them: 100,000 decimal additions of a long step take seconds.
      if ((z - a) / s > static_cast<double>(kMaxSweepValues) + 2)
        return too_many();
      Decimal x(a);
      const Decimal dz(z), ds(s);
      while (s > 0 ? x.Less(dz) : dz.Less(x)) {
        if (out.size() == kMaxSweepValues) return too_many();
        out.push_back(PVal::Float(x.ToDouble()));
        x = x.Plus(ds);
      }
    }
  } else {
    return Status::Internal(std::string(PyTypeName(sweep)) +
                            " can not be enumerated");
  }
  if (sweep.shuffle) std::shuffle(out.begin(), out.end(), Rng());
  return out;
}

}  // namespace trialshim::config::override_internal
