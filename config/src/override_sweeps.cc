// The sweep functions choice, range, interval, tag, sort, shuffle and glob
// of Hydra's override grammar, and the values a sweep enumerates to.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "override_functions.h"
#include "override_functions_internal.h"
#include "python_decimal.h"
#include "trialshim/base/number_format.h"

namespace trialshim::config::override_internal {
namespace {

// Python arithmetic on ints, bools and floats (the result is a float when
// either side is), for _sort_sweep's moving of a range's bounds. Python's
// ints never overflow; what leaves 64 bits is refused here instead.
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

// _sort_sweep (hydra/_internal/grammar/grammar_functions.py): a choice is
// sorted with Python's ordering (PySort refuses mixed types as sorted()
// does); a range running the other way is re-pointed with Hydra's own
// arithmetic: bounds moved by one step, step negated. That holds the same
// values only when the step divides the span (Hydra too sorts
// range(1,10,4) with reverse=true to 6, 2, -2), so it is copied as is.
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

}  // namespace

// sort(): list= and sweep= win over positional arguments; one positional
// sweep or list is sorted, one element is itself, several elements are a
// simple choice sorted (Hydra's sort).
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

// shuffle(): a list is shuffled now; a sweep is only marked, and
// EnumerateSweep shuffles its values each time it is enumerated, as
// Override.sweep_iterator does. One element shuffles to a list of it.
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

// tag(): the last argument (or sweep=) is the sweep and the others its
// tags, kept as a set, so duplicates collapse and their order is sorted
// (Hydra's set prints unordered; sorted keeps our output stable).
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

// choice(): one simple-form choice argument (what int(1,2) or sort(3,1)
// return) is made explicit; an explicit choice nested in another is
// refused.
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

// range(): Python's convention, range(stop) starts at 0. The bounds keep
// their types: a range of ints enumerates as Python's range(), any float
// among them makes it Hydra's FloatRange (EnumerateSweep).
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

// interval(): the bounds become floats, as IntervalSweep holds them.
StatusOr<PVal> CallInterval(Bound b) {
  PVal r;
  r.k = K::kInterval;
  r.items = {PVal::Float(b.Opt("start").AsDouble()),
             PVal::Float(b.Opt("end").AsDouble())};
  return r;
}

// glob(): one string or a list of them for either side; Glob.filter
// (hydra/core/override_parser/types.py) matches them against a group's
// options with fnmatch.
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

// Override.sweep_iterator (hydra/core/override_parser/types.py), as the
// basic sweeper (hydra/_internal/core_plugins/basic_sweeper.py) expands a
// choice or range into its jobs: RangeSweep.range() is Python's range()
// when start, stop and step are all ints, else FloatRange, which steps a
// Decimal so that 0.1 steps do not drift. A shuffled sweep is shuffled
// anew each time, as Hydra copies and shuffles its list.
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
