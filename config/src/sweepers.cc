// The sweepers' reading of sweep overrides; see sweepers.h. Messages that
// Optuna or Hydra raise keep their text, after the override they concern.
#include "trialshim/config/sweepers.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "hydra_conf.h"
#include "override_functions.h"
#include "override_value.h"
#include "trialshim/base/number_format.h"
#include "trialshim/base/python_text.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {
namespace {

using Kind = OptunaDistribution::Kind;

Status Refuse(const Override& o, const std::string& message) {
  return Status::InvalidArgument("'" + o.input + "': " + message);
}

// Inserts or replaces `value` under `name`, keeping the first position, as
// assigning to a Python dict does: create_params_from_overrides
// (hydra_plugins/hydra_optuna_sweeper/_impl.py) fills two dicts by key, so a
// later override of a key wins in the earlier one's place.
template <typename T>
void Upsert(std::vector<T>* items, T value) {
  for (T& item : *items) {
    if (item.name == value.name) {
      item = std::move(value);
      return;
    }
  }
  items->push_back(std::move(value));
}

// ---- Decimal arithmetic for Optuna's _adjust_discrete_uniform_high, which
// computes on Decimal(str(x)): exact for the short decimals people write.
// Doubles would not do: (1.0 - 0.1) % 0.3 is not 0 in binary, so a double
// remainder would lower highs that Optuna (optuna/distributions.py, 2.10.1)
// keeps.

struct Dec {
  __int128 mantissa = 0;
  int exponent = 0;
};

// Decimal(repr(x)); false when the digits do not fit.
bool ToDec(double x, Dec* out) {
  std::string text = FormatPythonFloat(x);
  size_t e = text.find_first_of("eE");
  int exponent = e == std::string::npos ? 0 : std::atoi(text.c_str() + e + 1);
  std::string digits;
  bool negative = false;
  for (size_t i = 0; i < std::min(e, text.size()); ++i) {
    char c = text[i];
    if (c == '-') {
      negative = true;
    } else if (c == '.') {
      exponent -= static_cast<int>(std::min(e, text.size()) - i - 1);
    } else if (c >= '0' && c <= '9') {
      digits += c;
    } else {
      return false;  // inf, nan
    }
  }
  if (digits.size() > 30) return false;
  __int128 m = 0;
  for (char c : digits) m = m * 10 + (c - '0');
  *out = {negative ? -m : m, exponent};
  return true;
}

// Scales `d` to exponent `target` (<= its own); false when that overflows.
bool Rescale(Dec* d, int target) {
  constexpr __int128 kLimit = (static_cast<__int128>(1) << 120) / 10;
  for (; d->exponent > target; --d->exponent) {
    if (d->mantissa > kLimit || d->mantissa < -kLimit) return false;
    d->mantissa *= 10;
  }
  return true;
}

double FromDec(const Dec& d) {
  __int128 m = d.mantissa < 0 ? -d.mantissa : d.mantissa;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + m % 10));
    m /= 10;
  } while (m > 0);
  std::string text =
      (d.mantissa < 0 ? "-" : "") + digits + "e" + std::to_string(d.exponent);
  return std::strtod(text.c_str(), nullptr);
}

// Optuna's _adjust_discrete_uniform_high: the last low + k*q <= high,
// (high - low) // q * q + low in Decimal, then float() of it.
double AdjustDiscreteHigh(double low, double high, double q) {
  Dec l, h, s;
  if (ToDec(low, &l) && ToDec(high, &h) && ToDec(q, &s)) {
    int e = std::min({l.exponent, h.exponent, s.exponent});
    if (Rescale(&l, e) && Rescale(&h, e) && Rescale(&s, e)) {
      __int128 r = h.mantissa - l.mantissa;
      if (r % s.mantissa == 0) return high;
      return FromDec({r / s.mantissa * s.mantissa + l.mantissa, e});
    }
  }
  return std::floor((high - low) / q) * q + low;  // beyond Decimal's digits
}

// Python's float floor division a // b (b > 0): _float_div_mod in CPython's
// Objects/floatobject.c divides a - fmod(a, b), which is close to but not
// always exactly a multiple of b, and snaps the quotient to the nearest
// whole number, where floor() alone could lose one. The plugin's
// _to_grid_sampler_choices counts a discrete grid with it.
double FloorDiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  double floored = std::floor(div);
  if (div - floored > 0.5) floored += 1.0;
  return floored;
}

std::string Py(double v, bool is_int) {
  return is_int ? std::to_string(static_cast<int64_t>(v))
                : FormatPythonFloat(v);
}

// A bound of a range or interval as a number: bools count as ints, as in
// Python.
double Num(const Node& n) {
  return n.is_bool() ? (n.AsBool() ? 1 : 0) : n.AsDouble();
}

// Integer bounds are held as doubles (OptunaDistribution, and a Vertex
// trial's values), which hold every integer only up to 2^53: beyond it a
// bound would be rounded, and 2^63 cast back to int64 is undefined.
constexpr int64_t kMaxExactInt = int64_t{1} << 53;

// An int (or bool) bound of a range, exactly (Num goes through double).
int64_t IntOf(const Node& n) {
  return n.is_bool() ? (n.AsBool() ? 1 : 0) : n.AsInt();
}

Status BeyondExactInts(const Override& o, const std::string& bound) {
  return Refuse(o, "the bound " + bound + " is beyond +-2^53 (" +
                       std::to_string(kMaxExactInt) +
                       "): integers are held as doubles, exact only up to "
                       "there; use a narrower range");
}

Status LowAboveHigh(const Override& o, const std::string& low,
                    const std::string& high, const std::string& more = "") {
  return Refuse(o,
                "ValueError: The `low` value must be smaller than or equal to "
                "the `high` value (low=" +
                    low + ", high=" + high + more + ").");
}

// IntUniformDistribution's checks and _adjust_int_uniform_high, in Optuna's
// words (a warning when the stop is lowered, as warnings.warn prints it).
StatusOr<OptunaDistribution> IntUniform(const Override& o, int64_t low,
                                        int64_t high, int64_t step,
                                        std::vector<std::string>* warnings) {
  if (low > high) {
    return LowAboveHigh(o, std::to_string(low), std::to_string(high));
  }
  if (step <= 0) {
    return Refuse(o,
                  "ValueError: The `step` value must be non-zero positive "
                  "value, but step=" +
                      std::to_string(step) + ".");
  }
  for (int64_t bound : {low, high, step}) {
    if (bound > kMaxExactInt || bound < -kMaxExactInt) {
      return BeyondExactInts(o, std::to_string(bound));
    }
  }
  int64_t adjusted = (high - low) / step * step + low;  // within 2^54
  if (adjusted != high && warnings) {
    warnings->push_back(
        o.KeyElement() + ": The distribution is specified by [" +
        std::to_string(low) + ", " + std::to_string(high) +
        "] and step=" + std::to_string(step) +
        ", but the range is not divisible by `step`. It will "
        "be replaced by [" +
        std::to_string(low) + ", " + std::to_string(adjusted) + "].");
  }
  OptunaDistribution d;
  d.kind = Kind::kIntUniform;
  d.low = static_cast<double>(low);
  d.high = static_cast<double>(adjusted);
  d.step = static_cast<double>(step);
  return d;
}

// create_optuna_distribution_from_override's range(): a float among
// start, stop and step makes it a DiscreteUniformDistribution, else an
// IntUniformDistribution. Its stop becomes Optuna's high, which is
// inclusive: range(1, 5) samples 1..5, where the basic sweeper's range()
// runs 1..4, as Python's does.
StatusOr<OptunaDistribution> Range(const Override& o,
                                   std::vector<std::string>* warnings) {
  const std::vector<Node>& b = o.sweep.bounds;
  if (!b[0].is_double() && !b[1].is_double() && !b[2].is_double()) {
    return IntUniform(o, IntOf(b[0]), IntOf(b[1]), IntOf(b[2]), warnings);
  }
  double low = Num(b[0]), high = Num(b[1]), q = Num(b[2]);
  auto text = [](const Node& n) { return PythonStr(n); };
  if (low > high) {
    return LowAboveHigh(o, text(b[0]), text(b[1]), ", q=" + text(b[2]));
  }
  // A zero step or an infinite bound fails in Optuna's Decimal arithmetic
  // (decimal.InvalidOperation). Optuna 2.10 takes a negative q, which
  // samples nothing sensible; we refuse it too (docs/hydra-differences.md).
  if (q < 0 && std::isfinite(low) && std::isfinite(high)) {
    return Refuse(
        o, "a discrete range needs a positive step, got step=" + text(b[2]) +
               " (Optuna 2.10 takes it, but samples nothing "
               "sensible: trialshim refuses it)");
  }
  if (!(q > 0) || !std::isfinite(low) || !std::isfinite(high)) {
    return Refuse(o,
                  "decimal.InvalidOperation: a discrete range needs "
                  "finite bounds and a positive step, got step=" +
                      text(b[2]));
  }
  double adjusted = AdjustDiscreteHigh(low, high, q);
  if (adjusted != high && warnings) {
    warnings->push_back(o.KeyElement() +
                        ": The distribution is specified by [" + text(b[0]) +
                        ", " + text(b[1]) + "] and q=" + text(b[2]) +
                        ", but the range is not divisible by `q`. It will be "
                        "replaced by [" +
                        text(b[0]) + ", " + FormatPythonFloat(adjusted) + "].");
  }
  OptunaDistribution d;
  d.kind = Kind::kDiscreteUniform;
  d.low = low;
  d.high = adjusted;
  d.step = q;
  return d;
}

// interval(a, b): Hydra's grammar makes both ends floats unless the sweep
// is cast with int(), so ints here mean int(interval(...)). tag(log, ...)
// picks the log distribution (IntLogUniform/LogUniform), whose low must be
// >= 1 for ints and > 0 for floats, in Optuna's words.
StatusOr<OptunaDistribution> Interval(const Override& o) {
  const Node& start = o.sweep.bounds[0];
  const Node& end = o.sweep.bounds[1];
  bool ints = start.is_int() && end.is_int();
  double low = Num(start), high = Num(end);
  bool log = false;
  for (const std::string& t : o.sweep.tags) log = log || t == "log";
  if (low > high) return LowAboveHigh(o, PythonStr(start), PythonStr(end));
  // Sampled inside its bounds or refused: nan, inf and what a double can not
  // hold exactly have no place in a distribution.
  for (const Node* b : {&start, &end}) {
    if (ints && (IntOf(*b) > kMaxExactInt || IntOf(*b) < -kMaxExactInt)) {
      return BeyondExactInts(o, PythonStr(*b));
    }
    if (!std::isfinite(Num(*b))) {
      return Refuse(o, "interval(...) needs finite bounds, got " +
                           PythonStr(*b));
    }
  }
  OptunaDistribution d;
  d.low = low;
  d.high = high;
  if (log && ((ints && low < 1) || (!ints && low <= 0))) {
    return Refuse(o,
                  std::string("ValueError: The `low` value must be ") +
                      (ints ? "equal to or greater than 1" : "larger than 0") +
                      " for a log distribution (low=" + PythonStr(start) +
                      ", high=" + PythonStr(end) + ").");
  }
  if (log) {
    d.kind = ints ? Kind::kIntLogUniform : Kind::kLogUniform;
  } else {
    d.kind = ints ? Kind::kIntUniform : Kind::kUniform;
  }
  d.step = ints ? 1 : 0;
  return d;
}

// A choice sweep (or shuffle(range)) is a CategoricalDistribution of the
// values sweep_iterator(Transformer.encode) gives (hydra/core/
// override_parser/types.py): a str, int, float or bool keeps its type,
// anything else becomes its override text ("null", "[1,2]", "{b:1}").
OptunaDistribution Categorical(const std::vector<SweepItem>& items) {
  OptunaDistribution d;
  for (const SweepItem& item : items) {
    d.choices.push_back(item.primitive ? item.value : Node::String(item.text));
  }
  return d;
}

StatusOr<OptunaDistribution> Distribution(const Override& o,
                                          std::vector<std::string>* warnings) {
  switch (o.value_kind) {
    case ValueKind::kSimpleChoiceSweep:
    case ValueKind::kChoiceSweep:
      return Categorical(o.sweep.items);
    case ValueKind::kRangeSweep:
      if (o.sweep.shuffle) return Categorical(o.sweep.items);
      return Range(o, warnings);
    case ValueKind::kIntervalSweep:
      return Interval(o);
    case ValueKind::kGlob:
      return Refuse(o,
                    "hydra-optuna-sweeper does not take glob() (its "
                    "create_optuna_distribution_from_override fails an "
                    "assertion); list the options with choice(...)");
    case ValueKind::kElement:
      break;
  }
  return Status::Internal("'" + o.input + "' is not a sweep");
}

// Numbers as json.dumps writes them in Optuna's distribution_to_json:
// ints without ".0", floats as repr(), NaN and Infinity unquoted.
void AppendJsonNumber(double v, bool is_int, std::string* out) {
  if (std::isnan(v)) {
    *out += "NaN";
  } else if (std::isinf(v)) {
    *out += v > 0 ? "Infinity" : "-Infinity";
  } else {
    *out += Py(v, is_int);
  }
}

void AppendJson(const Node& v, std::string* out) {
  if (v.is_bool()) {
    *out += v.AsBool() ? "true" : "false";
  } else if (v.is_int()) {
    *out += std::to_string(v.AsInt());
  } else if (v.is_double()) {
    AppendJsonNumber(v.AsDouble(), false, out);
  } else if (v.is_string()) {
    AppendPythonJsonString(v.AsString(), out);
  } else {
    *out += "null";
  }
}

}  // namespace

// hydra.sweeper.params as the sweepers read it: "{k}={v}" for each entry
// (BasicSweeper._parse_config in hydra/_internal/core_plugins/
// basic_sweeper.py, _parse_sweeper_params_config in the Optuna plugin),
// put before the command line's overrides, so that those win.
StatusOr<std::vector<std::string>> SweeperParamsOverrides(const Node& params) {
  std::vector<std::string> out;
  if (params.is_null()) return out;
  if (!params.is_map()) {
    return Status::InvalidArgument(
        std::string("hydra.sweeper.params must be a mapping of key: sweep, "
                    "got a ") +
        params.type_name());
  }
  for (const auto& [key, value] : params.AsMap()) {
    if (!value.is_scalar() || value.is_null()) {
      return Status::InvalidArgument(
          (value.mark().known() ? value.mark().ToString() + ": " : "") +
          "hydra.sweeper.params." + key + " is a " +
          std::string(value.type_name()) +
          "; the sweeper's params are Dict[str, str]: one override value "
          "per key, such as `" +
          key + ": choice(1, 2)` (a nested key is written dotted: " + key +
          ".x: ...)");
    }
    out.push_back(key + "=" + PythonStr(value));
  }
  return out;
}

// ---- The basic sweeper.

namespace {

// A glob's option as its job's override value: the name as it is where it
// reads back as itself, as Hydra hands it on; escaped where not.
std::string GlobOptionText(const std::string& name) {
  StatusOr<Override> o = ParseOverride("k=" + name);
  if (o.ok() && !o->is_sweep() && o->value && o->value->is_string() &&
      o->value->AsString() == name) {
    return name;
  }
  return override_internal::EscapeSpecialCharacters(name);
}

// The basic sweeper's INTERVAL_SWEEP refusal (Hydra's words), saying where
// to list values instead: on the command line, or where `params` (when it
// is hydra.sweeper.params) sets the key.
Status RefuseInterval(const Override& o, const Node* params) {
  std::string ends;
  for (const Node& b : o.sweep.bounds) {
    std::string e = PythonStr(b);  // integral ends as ints
    if (e.size() > 2 && e.compare(e.size() - 2, 2, ".0") == 0) e.resize(e.size() - 2);
    ends += (ends.empty() ? "" : ",") + e;
  }
  const Node* param = nullptr;  // a key of params may hold dots: no path
  if (params != nullptr && params->is_map()) {
    for (const auto& [key, value] : params->AsMap()) {
      if (key == o.KeyWithPackage()) param = &value;
    }
  }
  std::string where =
      param == nullptr
          ? o.KeyElement() + "=" + ends
          : ends + " where hydra.sweeper.params sets " + o.KeyWithPackage() +
                (param->mark().known() ? " (" + param->mark().ToString() + ")"
                                       : std::string());
  return Status::InvalidArgument(
      "BasicSweeper does not support sweep type : INTERVAL_SWEEP ('" +
      o.input +
      "': interval() is for sweepers that sample, such as Optuna's); the "
      "basic sweeper runs listed values, such as " +
      where + ", and hydra/sweeper=optuna samples the interval");
}

}  // namespace

StatusOr<std::vector<BasicSweepAxis>> ReadBasicSweep(
    const std::vector<std::string>& overrides,
    const ConfigRepository* repository, const Node* params) {
  std::vector<BasicSweepAxis> axes;
  // BasicSweeper.split_arguments: one axis per key element, in an
  // OrderedDict, so a later override of a key replaces the axis in place.
  for (const std::string& text : overrides) {
    TRIALSHIM_ASSIGN_OR_RETURN(Override o, ParseOverride(text));
    BasicSweepAxis axis{o.KeyElement(), {}, o};
    switch (o.value_kind) {
      case ValueKind::kElement:
        axis.texts.push_back(o.value_text);
        break;
      case ValueKind::kIntervalSweep:
        return RefuseInterval(o, params);
      // A glob sweeps the options of the config group it names that match
      // an include pattern and no exclude one (Glob.filter in Hydra's
      // override_parser/types.py; fnmatch has no escapes, hence
      // FNM_NOESCAPE). Hydra hands the names on as they are (sweep_iterator
      // returns them before any transformer), so do we, unless a name
      // would not read back as itself (a comma would make a sweep of it):
      // that one is escaped (docs/hydra-differences.md).
      case ValueKind::kGlob: {
        if (repository == nullptr) {
          return Refuse(o, "glob() needs the config's groups");
        }
        auto match = [](const std::string& s,
                        const std::vector<std::string>& globs) {
          for (const std::string& g : globs) {
            if (fnmatch(g.c_str(), s.c_str(), FNM_NOESCAPE) == 0) return true;
          }
          return false;
        };
        for (const std::string& option :
             repository->GroupOptions(o.key_or_group)) {
          if (match(option, o.sweep.include) &&
              !match(option, o.sweep.exclude)) {
            axis.texts.push_back(GlobOptionText(option));
          }
        }
        break;
      }
      default:
        for (const SweepItem& item : o.sweep.items) {
          axis.texts.push_back(item.text);
        }
    }
    bool replaced = false;
    for (BasicSweepAxis& a : axes) {
      if (a.key == axis.key) {
        a = axis;
        replaced = true;
      }
    }
    if (!replaced) axes.push_back(std::move(axis));
  }
  return axes;
}

// itertools.product over the axes: the last axis varies fastest, so the
// jobs come in Hydra's order (a=1,b=1; a=1,b=2; ...).
std::vector<std::vector<std::string>> BasicSweepJobs(
    const std::vector<BasicSweepAxis>& axes) {
  std::vector<std::vector<std::string>> jobs = {{}};
  for (const BasicSweepAxis& axis : axes) {
    std::vector<std::vector<std::string>> next;
    for (const std::vector<std::string>& job : jobs) {
      for (const std::string& text : axis.texts) {
        next.push_back(job);
        next.back().push_back(axis.key + "=" + text);
      }
    }
    jobs = std::move(next);
  }
  return jobs;
}

std::vector<std::vector<std::vector<std::string>>> SplitIntoBatches(
    std::vector<std::vector<std::string>> jobs,
    std::optional<int64_t> max_batch_size) {
  // Hydra asserts max_batch_size is None or > 0 (an AssertionError for 0 or
  // -1); we take those as no limit (docs/hydra-differences.md).
  if (!max_batch_size || *max_batch_size <= 0) return {std::move(jobs)};
  const size_t n = static_cast<size_t>(*max_batch_size);
  std::vector<std::vector<std::vector<std::string>>> batches;
  for (size_t i = 0; i < jobs.size(); i += n) {
    batches.emplace_back(jobs.begin() + i,
                         jobs.begin() + std::min(jobs.size(), i + n));
  }
  return batches;
}

// ---- hydra-optuna-sweeper 1.2.0.

StatusOr<OptunaDistribution> OptunaDistributionOf(const Override& o) {
  return Distribution(o, nullptr);
}

StatusOr<OptunaSearchSpace> ReadOptunaSearchSpace(
    const std::vector<std::string>& overrides) {
  OptunaSearchSpace space;
  for (const std::string& text : overrides) {
    TRIALSHIM_ASSIGN_OR_RETURN(Override o, ParseOverride(text));
    if (o.is_sweep()) {
      TRIALSHIM_ASSIGN_OR_RETURN(OptunaDistribution d,
                                 Distribution(o, &space.warnings));
      Upsert(&space.params, OptunaParam{o.KeyElement(), std::move(d), o});
    } else {
      Upsert(&space.fixed, FixedParam{o.KeyElement(), o.value_text});
    }
  }
  // OptunaSweeperImpl.sweep: "Remove fixed parameters from Optuna search
  // space": a key both swept and fixed is fixed in every trial.
  for (const FixedParam& f : space.fixed) {
    for (size_t i = 0; i < space.params.size(); ++i) {
      if (space.params[i].name == f.name) {
        space.params.erase(space.params.begin() + static_cast<long>(i));
        break;
      }
    }
  }
  return space;
}

namespace {

// A grid is enumerated, value by value: as a range() sweep, at most
// override_internal::kMaxSweepValues of them.
Status TooManyChoices(const std::string& n) {
  return Status::InvalidArgument(
      "GridSampler: the grid of this distribution has " + n +
      " values, more than the " + std::to_string(override_internal::kMaxSweepValues) +
      " a sweep enumerates; use a larger step, or a sampler that does not "
      "enumerate (TPE, random)");
}

}  // namespace

StatusOr<std::vector<Node>> OptunaGridChoices(const OptunaDistribution& d) {
  std::vector<Node> out;
  switch (d.kind) {
    case Kind::kCategorical:
      return d.choices;
    // The plugin's _to_grid_sampler_choices: n = (high - low) // step values
    // from low, so high itself is never tried (range(0, 10, 2) gives 0..8,
    // range(1, 5) gives 1..4). A quirk of the plugin we copy.
    case Kind::kIntUniform: {
      // Exact: Distribution keeps integer bounds within 2^53.
      if (!(std::fabs(d.low) <= kMaxExactInt &&
            std::fabs(d.high) <= kMaxExactInt && d.step >= 1 &&
            d.step <= kMaxExactInt)) {
        return Status::InvalidArgument(
            "GridSampler: integer bounds beyond +-2^53 can not be "
            "enumerated exactly");
      }
      int64_t low = static_cast<int64_t>(d.low);
      int64_t step = static_cast<int64_t>(d.step);
      int64_t n = (static_cast<int64_t>(d.high) - low) / step;
      if (n > static_cast<int64_t>(override_internal::kMaxSweepValues)) {
        return TooManyChoices(std::to_string(n));
      }
      for (int64_t i = 0; i < n; ++i) out.push_back(Node::Int(low + i * step));
      return out;
    }
    case Kind::kDiscreteUniform: {
      double n = FloorDiv(d.high - d.low, d.step);
      // Counted before a value is made: range(0.0, 1e12, 0.5) is 2e12.
      if (!(n <= static_cast<double>(override_internal::kMaxSweepValues))) {
        return TooManyChoices(std::isfinite(n) ? FormatPythonFloat(n)
                                               : std::string("too many"));
      }
      for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
        out.push_back(Node::Double(d.low + static_cast<double>(i) * d.step));
      }
      return out;
    }
    default:
      return Status::InvalidArgument(
          "ValueError: GridSampler only supports discrete distributions.");
  }
}

std::string OptunaValueText(const Node& value) { return PythonStr(value); }

Node OptunaSamplerDefaults(std::string_view target) {
  for (const std::string& option :
       internal::BuiltinGroupOptions("hydra/sweeper/sampler")) {
    const internal::BuiltinConfig* c =
        internal::FindBuiltinConfig("hydra/sweeper/sampler/" + option);
    StatusOr<Node> node =
        LoadYamlString(c->yaml, "hydra/sweeper/sampler/" + option);
    const Node* t = node.ok() ? node->Get("_target_") : nullptr;
    if (t && t->is_string() && t->AsString() == target) return *node;
  }
  return Node::Null();
}

// optuna.distributions.distribution_to_json: {"name": class name,
// "attributes": _asdict()}; an int distribution's bounds print as ints, a
// discrete one's step is "q".
std::string OptunaDistribution::ToJson() const {
  static const char* const kNames[] = {
      "CategoricalDistribution",   "IntUniformDistribution",
      "IntLogUniformDistribution", "UniformDistribution",
      "LogUniformDistribution",    "DiscreteUniformDistribution"};
  std::string out = "{\"name\": \"" +
                    std::string(kNames[static_cast<int>(kind)]) +
                    "\", \"attributes\": {";
  if (kind == Kind::kCategorical) {
    out += "\"choices\": [";
    for (size_t i = 0; i < choices.size(); ++i) {
      if (i) out += ", ";
      AppendJson(choices[i], &out);
    }
    return out + "]}}";
  }
  out += "\"low\": ";
  AppendJsonNumber(low, is_int(), &out);
  out += ", \"high\": ";
  AppendJsonNumber(high, is_int(), &out);
  if (is_int()) {
    out += ", \"step\": ";
    AppendJsonNumber(step, true, &out);
  } else if (kind == Kind::kDiscreteUniform) {
    out += ", \"q\": ";
    AppendJsonNumber(step, false, &out);
  }
  return out + "}}";
}

}  // namespace trialshim::config
