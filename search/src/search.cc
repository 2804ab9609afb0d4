// Grid enumeration and seeded random sampling of a study's parameters: the
// GRID_SEARCH and RANDOM_SEARCH of study.proto's StudySpec.Algorithm
// (googleapis/googleapis google/cloud/aiplatform/v1/study.proto). Vertex
// documents no order for its grid; ours is docs/search.md's odometer.
#include "trialshim/search/search.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "trialshim/base/number_format.h"
#include "splitmix.h"

namespace trialshim::tuning {

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "nan";
  return std::string(buf, end);
}

std::string ParameterValue::Format() const {
  switch (type) {
    case ParameterType::kCategorical:
      return text;
    case ParameterType::kInteger:
      return std::to_string(static_cast<int64_t>(number));
    default:
      return FormatPythonFloat(number);
  }
}

std::string ParameterValue::Arg() const { return "--" + id + "=" + Format(); }

// ConditionalParameterSpec (study.proto): a child is active when its
// parent's value matches the parent_value_condition; DiscreteValueCondition
// says "The Epsilon of the value matching is 1e-10", so a condition written
// with other digits than the parent's discreteValueSpec still matches.
bool Activates(const ConditionalParameterSpec& c,
               const ParameterValue& parent) {
  for (int64_t i : c.parent_int_values) {
    if (parent.type == ParameterType::kInteger &&
        static_cast<double>(i) == parent.number) {
      return true;
    }
  }
  for (double d : c.parent_discrete_values) {
    if (parent.type == ParameterType::kDiscrete &&
        std::fabs(d - parent.number) <= kDiscreteEpsilon) {
      return true;
    }
  }
  for (const std::string& s : c.parent_categorical_values) {
    if (parent.type == ParameterType::kCategorical && s == parent.text) {
      return true;
    }
  }
  return false;
}

namespace {

using internal::SplitMix;
using internal::Uniform;

// Count of grid values of one parameter, its children left aside. DOUBLE
// has none: study.proto's GRID_SEARCH needs "INTEGER, CATEGORICAL, or
// DISCRETE" parameters.
StatusOr<uint64_t> Choices(const ParameterSpec& p) {
  switch (p.type) {
    case ParameterType::kDouble:
      return Status::InvalidArgument(
          "GRID_SEARCH needs INTEGER, DISCRETE or CATEGORICAL parameters; '" +
          p.id + "' is DOUBLE");
    case ParameterType::kInteger:
      if (!(p.max_value >= p.min_value)) {
        return Status::InvalidArgument("parameter '" + p.id +
                                       "' has maxValue < minValue");
      }
      if (IntegerBound(p.min_value) != p.min_value ||
          IntegerBound(p.max_value) != p.max_value) {
        return Status::InvalidArgument(
            "parameter '" + p.id + "' has a bound beyond +-2^53 (" +
            std::to_string(kMaxIntegerBound) +
            "): a trial's values are doubles, exact only up to there");
      }
      // Exact: both bounds are integers within 2^53, the difference within
      // 2^54.
      return static_cast<uint64_t>(IntegerBound(p.max_value) -
                                   IntegerBound(p.min_value)) +
             1;
    case ParameterType::kDiscrete:
      return static_cast<uint64_t>(p.discrete_values.size());
    case ParameterType::kCategorical:
      return static_cast<uint64_t>(p.categorical_values.size());
  }
  return Status::Internal("unknown parameter type");
}

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) {
    return std::numeric_limits<uint64_t>::max();
  }
  return a * b;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

ParameterValue ValueAt(const ParameterSpec& p, uint64_t k) {
  ParameterValue v{p.id, p.type, 0, ""};
  switch (p.type) {
    case ParameterType::kInteger:
      v.number = p.min_value + static_cast<double>(k);
      break;
    case ParameterType::kDiscrete:
      v.number = p.discrete_values[k];
      break;
    case ParameterType::kCategorical:
      v.text = p.categorical_values[k];
      break;
    case ParameterType::kDouble:
      break;
  }
  return v;
}

// RANDOM_SEARCH, "simple random search within the feasible space"
// (study.proto): each value uniform on its scale, then the children its
// value activates, so an inactive child draws nothing.
void Sample(const ParameterSpec& p, uint64_t* state, Assignment* out) {
  ParameterValue v{p.id, p.type, 0, ""};
  double u = Uniform(state);
  switch (p.type) {
    case ParameterType::kDouble:
      v.number = ScaleDouble(p.min_value, p.max_value, p.scale, u);
      break;
    case ParameterType::kInteger:
      v.number = static_cast<double>(ScaleInteger(
          IntegerBound(p.min_value), IntegerBound(p.max_value), p.scale, u));
      break;
    case ParameterType::kDiscrete:
      if (!p.discrete_values.empty()) {
        v.number = p.discrete_values[std::min(
            p.discrete_values.size() - 1,
            static_cast<size_t>(u * p.discrete_values.size()))];
      }
      break;
    case ParameterType::kCategorical:
      if (!p.categorical_values.empty()) {
        v.text = p.categorical_values[std::min(
            p.categorical_values.size() - 1,
            static_cast<size_t>(u * p.categorical_values.size()))];
      }
      break;
  }
  out->push_back(v);
  for (const ConditionalParameterSpec& c : p.conditionals) {
    if (Activates(c, v)) Sample(c.parameter, state, out);
  }
}

}  // namespace

int64_t IntegerBound(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kMost = static_cast<double>(kMaxIntegerBound);
  return static_cast<int64_t>(std::clamp(v, -kMost, kMost));
}

// study.proto's ParameterSpec.ScaleType: UNIT_LOG_SCALE scales "the feasible
// space logarithmically", UNIT_REVERSE_LOG_SCALE so that "values close to
// the top of the feasible space are spread out more than points near the
// bottom", both over a strictly positive space (check_parameters.cc refuses
// others); unset or UNIT_LINEAR_SCALE is linear.
double ScaleDouble(double min, double max, ScaleType scale, double u) {
  double v;
  switch (scale) {
    case ScaleType::kLog:
      v = std::exp(std::log(min) + u * (std::log(max) - std::log(min)));
      break;
    case ScaleType::kReverseLog: {
      // The log scale mirrored onto the range: small steps near max.
      double e = std::exp(std::log(min) + u * (std::log(max) - std::log(min)));
      // max + min may overflow near DBL_MAX; e - min never does.
      v = std::isfinite(max + min) ? max + min - e : max - (e - min);
      break;
    }
    default:
      // max - min overflows for a range wider than DBL_MAX ({-1e308,
      // 1e308}); the weighted sum of the bounds never does.
      v = std::isfinite(max - min) ? min + u * (max - min)
                                   : min * (1 - u) + max * u;
      break;
  }
  return std::clamp(v, min, max);  // exp/log rounding may step outside
}

// An INTEGER on its scale: min - 0.5 .. max + 0.5 gives each integer a
// cell of the same width on a linear scale, so the bounds are as likely as
// the values between them.
int64_t ScaleInteger(int64_t min, int64_t max, ScaleType scale, double u) {
  double lo = static_cast<double>(min) - 0.5;
  double hi = static_cast<double>(max) + 0.5;
  if (scale != ScaleType::kLinear && scale != ScaleType::kUnspecified &&
      lo <= 0) {
    scale = ScaleType::kLinear;  // check_spec.cc reports it; stay defined
  }
  double x = ScaleDouble(lo, hi, scale, u);
  auto k = static_cast<int64_t>(std::llround(x));
  return std::clamp(k, min, max);
}

namespace {

StatusOr<uint64_t> SubtreeSize(const ParameterSpec& p);

// Points of the children `value` activates: the product of their subtrees.
StatusOr<uint64_t> ActiveChildrenSize(const ParameterSpec& p,
                                      const ParameterValue& value) {
  uint64_t n = 1;
  for (const ConditionalParameterSpec& c : p.conditionals) {
    if (!Activates(c, value)) continue;
    TRIALSHIM_ASSIGN_OR_RETURN(uint64_t m, SubtreeSize(c.parameter));
    n = SaturatingMul(n, m);
  }
  return n;
}

// Points of `p` and its descendants: the sum over p's values of the
// product of the subtrees that value activates.
StatusOr<uint64_t> SubtreeSize(const ParameterSpec& p) {
  TRIALSHIM_ASSIGN_OR_RETURN(uint64_t values, Choices(p));
  if (p.conditionals.empty()) return values;
  // Each value is visited (its children may differ), so keep that bounded.
  constexpr uint64_t kMaxParentValues = 1000000;
  if (values > kMaxParentValues) {
    return Status::InvalidArgument(
        "GRID_SEARCH: '" + p.id + "' has " + std::to_string(values) +
        " values and conditional parameters; at most " +
        std::to_string(kMaxParentValues) + " values can be enumerated");
  }
  uint64_t total = 0;
  for (uint64_t k = 0; k < values; ++k) {
    TRIALSHIM_ASSIGN_OR_RETURN(uint64_t n,
                               ActiveChildrenSize(p, ValueAt(p, k)));
    total = SaturatingAdd(total, n);
  }
  return total;
}

// Appends the `index`-th point of the parameters `ps` (index < the product
// of their subtree sizes), the last one the fastest digit.
void ProductPoint(const std::vector<const ParameterSpec*>& ps, uint64_t index,
                  Assignment* out);

// Appends the `index`-th point of p's subtree: p's values in order, each
// followed by the points of the children it activates.
void SubtreePoint(const ParameterSpec& p, uint64_t index, Assignment* out) {
  uint64_t values = *Choices(p);
  for (uint64_t k = 0; k < values; ++k) {
    ParameterValue v = ValueAt(p, k);
    uint64_t n = *ActiveChildrenSize(p, v);
    if (index >= n) {
      index -= n;
      continue;
    }
    out->push_back(v);
    std::vector<const ParameterSpec*> children;
    for (const ConditionalParameterSpec& c : p.conditionals) {
      if (Activates(c, v)) children.push_back(&c.parameter);
    }
    ProductPoint(children, index, out);
    return;
  }
}

void ProductPoint(const std::vector<const ParameterSpec*>& ps, uint64_t index,
                  Assignment* out) {
  std::vector<uint64_t> digits(ps.size());
  for (size_t i = ps.size(); i-- > 0;) {
    uint64_t n = *SubtreeSize(*ps[i]);
    digits[i] = index % n;
    index /= n;
  }
  for (size_t i = 0; i < ps.size(); ++i) SubtreePoint(*ps[i], digits[i], out);
}

}  // namespace

StatusOr<uint64_t> GridSize(const std::vector<ParameterSpec>& params) {
  uint64_t total = 1;
  for (const ParameterSpec& p : params) {
    TRIALSHIM_ASSIGN_OR_RETURN(uint64_t n, SubtreeSize(p));
    total = SaturatingMul(total, n);
  }
  return total;
}

StatusOr<Assignment> GridPoint(const std::vector<ParameterSpec>& params,
                               uint64_t index) {
  TRIALSHIM_ASSIGN_OR_RETURN(uint64_t size, GridSize(params));
  if (index >= size) {
    return Status::InvalidArgument("grid point " + std::to_string(index) +
                                   " is past the grid's " +
                                   std::to_string(size) + " points");
  }
  std::vector<const ParameterSpec*> ps;
  for (const ParameterSpec& p : params) ps.push_back(&p);
  Assignment out;
  ProductPoint(ps, index, &out);
  return out;
}

Assignment RandomPoint(const std::vector<ParameterSpec>& params, uint64_t seed,
                       int64_t trial_id) {
  // One independent stream per trial, so values do not depend on how many
  // trials ran before (resume) or on conditional parameters of others.
  uint64_t state = seed;
  state = SplitMix(&state) ^ static_cast<uint64_t>(trial_id);
  state = SplitMix(&state);
  Assignment out;
  for (const ParameterSpec& p : params) Sample(p, &state, &out);
  return out;
}

}  // namespace trialshim::tuning
