// Bayesian optimisation over a study's mixed, conditional parameter space:
// the encoding, the initial design, the output warping, the lower confidence
// bound in its trust region and their optimisation. See bayesian.h.
#include "trialshim/search/bayesian.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "splitmix.h"

namespace trialshim::tuning {

namespace {

using internal::SplitMix;
using internal::Uniform;

using Dim = BayesianSearch::Dim;
// Per Dim: DOUBLE the unit position u, INTEGER the integer, DISCRETE and
// CATEGORICAL the index of the value. Inactive Dims keep a value too, so a
// local search that re-activates a child has one to start from.
using Raw = std::vector<double>;

// GP input of an inactive ordinal parameter (bayesian.h says why).
constexpr double kInactive = -0.5;

// u is kept off 0, where Box-Muller's log(u) would be -inf.
double Normal(uint64_t* state) {  // Box-Muller
  double u = std::max(Uniform(state), 1e-300);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * Uniform(state));
}
// A stream that depends on the seed, the trial and a purpose tag.
uint64_t Stream(uint64_t seed, int64_t trial_id, uint64_t tag) {
  uint64_t s = seed ^ tag;
  s = SplitMix(&s) ^ static_cast<uint64_t>(trial_id);
  SplitMix(&s);
  return s;
}

bool IsLog(ScaleType s) {
  return s == ScaleType::kLog || s == ScaleType::kReverseLog;
}

// Inverse of search.h's ScaleDouble; log scales need min > 0 and are linear
// otherwise (check_parameters.cc reports such a range).
double ToUnit(double min, double max, ScaleType scale, double v) {
  if (!(max > min)) return 0.5;
  double u;
  if (IsLog(scale) && min > 0) {
    double lmin = std::log(min), span = std::log(max) - lmin;
    u = scale == ScaleType::kLog ? (std::log(v) - lmin) / span
                                 : (std::log(max + min - v) - lmin) / span;
  } else if (std::isfinite(max - min)) {
    u = (v - min) / (max - min);
  } else {  // wider than DBL_MAX: the halves do not overflow
    u = (v / 2 - min / 2) / (max / 2 - min / 2);
  }
  return std::isfinite(u) ? std::clamp(u, 0.0, 1.0) : 0.5;
}

double FromUnitDouble(const ParameterSpec& p, double u) {
  ScaleType scale =
      IsLog(p.scale) && p.min_value <= 0 ? ScaleType::kLinear : p.scale;
  return ScaleDouble(p.min_value, p.max_value, scale, u);
}

// The unit position of INTEGER k: the centre of its slice (ScaleInteger).
double IntegerUnit(const ParameterSpec& p, double k) {
  double lo = p.min_value - 0.5, hi = p.max_value + 0.5;
  ScaleType scale = IsLog(p.scale) && lo <= 0 ? ScaleType::kLinear : p.scale;
  if (!IsLog(scale)) return ToUnit(lo, hi, scale, k);
  // The centre in scaled space, not k itself: on a log scale k's slice
  // [k - 0.5, k + 0.5) is lopsided.
  return 0.5 *
         (ToUnit(lo, hi, scale, k - 0.5) + ToUnit(lo, hi, scale, k + 0.5));
}

size_t Choices(const ParameterSpec& p) {
  return p.type == ParameterType::kDiscrete ? p.discrete_values.size()
                                            : p.categorical_values.size();
}

// The GP input of an active ordinal Dim.
double Unit(const Dim& d, double raw) {
  switch (d.spec.type) {
    case ParameterType::kDouble:
      return raw;
    case ParameterType::kInteger:
      return IntegerUnit(d.spec, raw);
    case ParameterType::kDiscrete:
      return d.units[static_cast<size_t>(raw)];
    case ParameterType::kCategorical:
      break;
  }
  return 0;
}

// The raw value at unit position u.
double FromUnit(const Dim& d, double u) {
  const ParameterSpec& p = d.spec;
  switch (p.type) {
    case ParameterType::kDouble:
      return std::clamp(u, 0.0, 1.0);
    case ParameterType::kInteger:
      return static_cast<double>(ScaleInteger(
          IntegerBound(p.min_value), IntegerBound(p.max_value), p.scale,
          std::clamp(u, 0.0, 1.0 - 1e-12)));
    case ParameterType::kDiscrete: {
      size_t best = 0;
      for (size_t j = 1; j < d.units.size(); ++j) {
        if (std::fabs(d.units[j] - u) < std::fabs(d.units[best] - u)) best = j;
      }
      return static_cast<double>(best);
    }
    case ParameterType::kCategorical:
      return static_cast<double>(
          std::min(Choices(p) - 1, static_cast<size_t>(u * Choices(p))));
  }
  return 0;
}

bool Activates(const Dim& child, const Dim& parent, double raw) {
  const ParameterSpec& p = parent.spec;
  switch (p.type) {
    case ParameterType::kInteger:
      return std::find(child.parent_ints.begin(), child.parent_ints.end(),
                       static_cast<int64_t>(raw)) != child.parent_ints.end();
    case ParameterType::kDiscrete:
      return std::find(child.parent_discrete.begin(),
                       child.parent_discrete.end(),
                       p.discrete_values[static_cast<size_t>(raw)]) !=
             child.parent_discrete.end();
    case ParameterType::kCategorical:
      return std::find(child.parent_categories.begin(),
                       child.parent_categories.end(),
                       p.categorical_values[static_cast<size_t>(raw)]) !=
             child.parent_categories.end();
    case ParameterType::kDouble:
      break;
  }
  return false;
}

std::vector<bool> Active(const std::vector<Dim>& dims, const Raw& raw) {
  std::vector<bool> active(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int p = dims[i].parent;
    active[i] = p < 0 || (active[static_cast<size_t>(p)] &&
                          Activates(dims[i], dims[static_cast<size_t>(p)],
                                    raw[static_cast<size_t>(p)]));
  }
  return active;
}

std::vector<double> Features(const std::vector<Dim>& dims, int columns,
                             const Raw& raw) {
  std::vector<double> f(static_cast<size_t>(columns), 0.0);
  std::vector<bool> active = Active(dims, raw);
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    auto col = static_cast<size_t>(d.column);
    if (d.spec.type == ParameterType::kCategorical) {
      if (active[i]) f[col + static_cast<size_t>(raw[i])] = 1;
    } else {
      f[col] = active[i] ? Unit(d, raw[i]) : kInactive;
    }
  }
  return f;
}

Assignment ToAssignment(const std::vector<Dim>& dims, const Raw& raw) {
  std::vector<bool> active = Active(dims, raw);
  Assignment out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!active[i]) continue;
    const ParameterSpec& p = dims[i].spec;
    ParameterValue v{p.id, p.type, 0, ""};
    switch (p.type) {
      case ParameterType::kDouble:
        v.number = FromUnitDouble(p, raw[i]);
        break;
      case ParameterType::kInteger:
        v.number = raw[i];
        break;
      case ParameterType::kDiscrete:
        v.number = p.discrete_values[static_cast<size_t>(raw[i])];
        break;
      case ParameterType::kCategorical:
        v.text = p.categorical_values[static_cast<size_t>(raw[i])];
        break;
    }
    out.push_back(std::move(v));
  }
  return out;
}

StatusOr<Raw> FromAssignment(const std::vector<Dim>& dims,
                             const Assignment& a) {
  Raw raw(dims.size());
  std::vector<bool> given(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const ParameterSpec& p = dims[i].spec;
    auto it = std::find_if(a.begin(), a.end(), [&](const ParameterValue& v) {
      return v.id == p.id;
    });
    raw[i] = FromUnit(dims[i], 0.5);
    if (it == a.end()) continue;
    given[i] = true;
    switch (p.type) {
      case ParameterType::kDouble:
        raw[i] = ToUnit(p.min_value, p.max_value, p.scale, it->number);
        break;
      case ParameterType::kInteger:
        raw[i] = std::clamp(std::round(it->number), p.min_value, p.max_value);
        break;
      case ParameterType::kDiscrete: {
        size_t best = 0;
        for (size_t j = 1; j < p.discrete_values.size(); ++j) {
          if (std::fabs(p.discrete_values[j] - it->number) <
              std::fabs(p.discrete_values[best] - it->number)) {
            best = j;
          }
        }
        raw[i] = static_cast<double>(best);
        break;
      }
      case ParameterType::kCategorical: {
        const auto& values = p.categorical_values;
        auto c = std::find(values.begin(), values.end(), it->text);
        if (c == values.end()) {
          return Status::InvalidArgument(
              "parameter '" + p.id + "' has no category '" + it->text + "'");
        }
        raw[i] = static_cast<double>(c - values.begin());
        break;
      }
    }
  }
  std::vector<bool> active = Active(dims, raw);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (active[i] && !given[i]) {
      return Status::InvalidArgument("a trial has no value for parameter '" +
                                     dims[i].spec.id + "'");
    }
  }
  return raw;
}

Raw RandomRaw(const std::vector<Dim>& dims, uint64_t* state) {
  Raw raw(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    raw[i] = FromUnit(dims[i], Uniform(state));
  }
  return raw;
}

double SquaredDistance(const std::vector<double>& a,
                       const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error below 1.2e-9), for p in (0, 1): the central region
// |p - 0.5| <= 0.47575 and the tails, by symmetry. It stands in for
// scipy's stats.norm.ppf, which Vizier's warping calls; the warped values
// need no more digits than that.
double NormalQuantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  if (p < 0.02425) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
            c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425) return -NormalQuantile(1 - p);
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
         q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// Half-rank output warping (bayesian.h): values worse than the median, of
// minimised outputs, move to the normal quantiles of their ranks, scaled by
// the spread of the better half; the better half keeps its values.
// Vizier's HalfRankComponent.warp (vizier/_src/algorithms/designers/gp/
// output_warpers.py), mirrored for minimising: dense ranks over the unique
// values, quantile 0.5 (rank - 0.5) / (values beyond the median, + 0.5 when
// the median is one), spread the RMS distance of the better half to the
// median. One difference: where that spread is 0 Vizier falls back to the
// spread of all values; we leave the outputs as they are.
void WarpWorseHalf(std::vector<double>* y) {
  std::vector<double> unique(*y);
  std::sort(unique.begin(), unique.end());
  size_t n = unique.size();
  double median =
      n % 2 ? unique[n / 2] : 0.5 * (unique[n / 2 - 1] + unique[n / 2]);
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  double spread = 0;
  int better = 0;
  for (double v : unique) {
    if (v > median) break;
    spread += (v - median) * (v - median);
    ++better;
  }
  spread = std::sqrt(spread / std::max(1, better));
  if (!(spread > 0)) return;  // the better half is one value: no scale
  auto worse_begin = std::upper_bound(unique.begin(), unique.end(), median);
  double worse = static_cast<double>(unique.end() - worse_begin);
  // Half a rank more when the median itself is a value.
  bool median_is_value = unique[static_cast<size_t>(better) - 1] == median;
  double count = worse + (median_is_value ? 0.5 : 0);
  for (double& v : *y) {
    if (v <= median) continue;
    // 1 for the worst value, `worse` for the one just above the median.
    double rank = static_cast<double>(
        unique.end() - std::lower_bound(worse_begin, unique.end(), v));
    v = median - NormalQuantile(0.5 * (rank - 0.5) / count) * spread;
  }
}

// Everything one Suggest call needs to score and move points.
class Acquisition {
 public:
  // `trusted`: the GP inputs of the trials the trust region surrounds.
  Acquisition(const std::vector<Dim>& dims, int columns,
              const GaussianProcess& gp, const BayesianOptions& options,
              std::vector<std::vector<double>> trusted,
              std::vector<std::vector<double>> taken,
              std::vector<std::vector<double>> failed)
      : dims_(dims),
        columns_(columns),
        gp_(gp),
        beta_(options.exploration),
        radius_(options.trust_radius > 0 && options.trust_radius < 1
                    ? options.trust_radius
                    : 0),
        trusted_(std::move(trusted)),
        taken_(std::move(taken)),
        failed_(std::move(failed)) {}

  // Once every candidate has been run: points that did not fail may repeat.
  void AllowRepeats() { taken_.clear(); }

  // The trust region's radius; 0 when there is none.
  double radius() const { return radius_; }

  // -(mean - beta sd) of minimising (higher is better); -inf for a point
  // already run or pending (unless AllowRepeats) or failed. Outside the
  // trust region, below every point inside it, the lower the further.
  // That is the UCB of Vizier's GP bandit (UCB, coefficient 1.8) and its
  // _apply_trust_region, which scores an outside point -1e4 - distance
  // (vizier/_src/algorithms/designers/gp/acquisitions.py). Vizier's radius
  // starts at 0.2 and grows with the trials (TrustRegion.trust_radius,
  // off beyond 0.5); ours stays at BayesianOptions::trust_radius.
  double Score(const Raw& raw) const {
    std::vector<double> f = Features(dims_, columns_, raw);
    for (const auto* set : {&taken_, &failed_}) {
      for (const std::vector<double>& t : *set) {
        if (SquaredDistance(f, t) < 1e-18) return -HUGE_VAL;
      }
    }
    if (radius_ > 0) {
      double far = DistanceToTrusted(f);
      if (far > radius_) return -1e150 * (1 + far);
    }
    double mean, var;
    gp_.Predict(f.data(), &mean, &var);
    return beta_ * std::sqrt(var) - mean;
  }

  // One random step from `raw`: all continuous inputs at once or a single
  // parameter; ordinal steps are N(0, sigma) on the unit scale, and always
  // change an INTEGER or DISCRETE value.
  Raw Step(const Raw& raw, double sigma, uint64_t* state) const {
    std::vector<bool> active = Active(dims_, raw);
    std::vector<size_t> movable;
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (active[i]) movable.push_back(i);
    }
    Raw out = raw;
    if (movable.empty()) return out;
    bool all = Uniform(state) < 0.5;
    size_t one = movable[std::min(
        movable.size() - 1,
        static_cast<size_t>(Uniform(state) *
                            static_cast<double>(movable.size())))];
    for (size_t i : movable) {
      const Dim& d = dims_[i];
      bool continuous = d.spec.type == ParameterType::kDouble;
      if (all ? !continuous : i != one) continue;
      if (d.spec.type == ParameterType::kCategorical) {
        size_t n = Choices(d.spec);
        if (n < 2) continue;
        // Uniform over the other n - 1 categories.
        auto k = std::min(
            n - 2,
            static_cast<size_t>(Uniform(state) * static_cast<double>(n - 1)));
        out[i] =
            static_cast<double>(k >= static_cast<size_t>(raw[i]) ? k + 1 : k);
        continue;
      }
      double u = Unit(d, raw[i]) + sigma * Normal(state);
      out[i] = FromUnit(d, u);
      if (continuous || out[i] != raw[i]) continue;
      // A step too small to change the value: the neighbour on its side.
      double away = u >= Unit(d, raw[i]) ? 1 : -1;
      if (d.spec.type == ParameterType::kInteger) {
        out[i] = std::clamp(raw[i] + away, d.spec.min_value, d.spec.max_value);
      } else {
        out[i] = FromUnit(d, Unit(d, raw[i]) + away * 1e-9);
        for (double eps = 1e-3; out[i] == raw[i] && eps <= 1; eps *= 2) {
          out[i] = FromUnit(d, Unit(d, raw[i]) + away * eps);
        }
      }
    }
    return out;
  }

 private:
  // L-inf distance to the nearest trusted point on the ordinal inputs that
  // are active in both: one-hot and inactive inputs never leave the region,
  // so every category and branch stays reachable. Vizier's
  // TrustRegion.min_linf_distance caps one-hot distances at the radius for
  // the same reason.
  double DistanceToTrusted(const std::vector<double>& f) const {
    double nearest = HUGE_VAL;
    for (const std::vector<double>& t : trusted_) {
      double far = 0;
      for (const Dim& d : dims_) {
        auto c = static_cast<size_t>(d.column);
        if (d.spec.type == ParameterType::kCategorical || f[c] == kInactive ||
            t[c] == kInactive) {
          continue;
        }
        far = std::max(far, std::fabs(f[c] - t[c]));
      }
      nearest = std::min(nearest, far);
    }
    return nearest;
  }

  const std::vector<Dim>& dims_;
  int columns_;
  const GaussianProcess& gp_;
  double beta_, radius_;
  std::vector<std::vector<double>> trusted_, taken_, failed_;
};

void Flatten(const ParameterSpec& p, int parent,
             const ConditionalParameterSpec* cond, std::vector<Dim>* dims,
             int* columns) {
  Dim d;
  d.spec = p;
  d.spec.conditionals.clear();
  d.parent = parent;
  if (cond) {
    d.parent_ints = cond->parent_int_values;
    d.parent_discrete = cond->parent_discrete_values;
    d.parent_categories = cond->parent_categorical_values;
  }
  if (p.type == ParameterType::kDiscrete && !p.discrete_values.empty()) {
    auto [lo, hi] =
        std::minmax_element(p.discrete_values.begin(), p.discrete_values.end());
    for (double v : p.discrete_values) {
      d.units.push_back(ToUnit(*lo, *hi, p.scale, v));
    }
  }
  d.column = *columns;
  d.width =
      p.type == ParameterType::kCategorical
          ? std::max<int>(1, static_cast<int>(p.categorical_values.size()))
          : 1;
  *columns += d.width;
  dims->push_back(std::move(d));
  int self = static_cast<int>(dims->size()) - 1;
  for (const ConditionalParameterSpec& c : p.conditionals) {
    Flatten(c.parameter, self, &c, dims, columns);
  }
}

}  // namespace

BayesianSearch::BayesianSearch(std::vector<ParameterSpec> params, Goal goal,
                               uint64_t seed, BayesianOptions options)
    : params_(std::move(params)),
      minimize_(goal == Goal::kMinimize),
      seed_(seed),
      options_(std::move(options)) {
  for (const ParameterSpec& p : params_) {
    Flatten(p, -1, nullptr, &dims_, &columns_);
  }
}

int BayesianSearch::InitialTrials() const {
  if (options_.initial_trials > 0) return options_.initial_trials;
  return dims_.size() > 1 ? 10 : 5;
}

namespace {

// The best of 32 seeded Latin hypercubes of n points by smallest pairwise
// distance of their GP inputs (maximin): one stratum of every unit
// coordinate per point, spread as evenly as a cheap search finds. Latin
// hypercubes are McKay, Beckman and Conover's (1979), the maximin choice
// among them Morris and Mitchell's (1995); this picks the best of a few
// random ones, not their annealing.
std::vector<Raw> Design(const std::vector<Dim>& dims, int columns, int n,
                        uint64_t seed) {
  uint64_t state = Stream(seed, 0, 0x4c4853);
  std::vector<Raw> best;
  double best_spread = -1;
  for (int rep = 0; rep < 32; ++rep) {
    std::vector<Raw> points(static_cast<size_t>(n), Raw(dims.size()));
    for (size_t i = 0; i < dims.size(); ++i) {
      std::vector<int> strata(static_cast<size_t>(n));
      std::iota(strata.begin(), strata.end(), 0);
      for (size_t k = strata.size(); k > 1; --k) {  // Fisher-Yates
        auto j = static_cast<size_t>(Uniform(&state) * static_cast<double>(k));
        std::swap(strata[k - 1], strata[std::min(j, k - 1)]);
      }
      for (size_t k = 0; k < points.size(); ++k) {
        double u = (strata[k] + Uniform(&state)) / n;
        points[k][i] = FromUnit(dims[i], u);
      }
    }
    double spread = HUGE_VAL;
    for (size_t a = 0; a < points.size(); ++a) {
      std::vector<double> fa = Features(dims, columns, points[a]);
      for (size_t b = 0; b < a; ++b) {
        spread = std::min(
            spread, SquaredDistance(fa, Features(dims, columns, points[b])));
      }
    }
    if (spread > best_spread) {
      best_spread = spread;
      best = std::move(points);
    }
  }
  return best;
}

// Stochastic hill climbing on the acquisition from `x`; the step size
// halves after 6 failures in a row.
Raw LocalSearch(const Acquisition& acq, Raw x, double* score, int steps,
                uint64_t* state) {
  double sigma = 0.1;
  int fails = 0;
  for (int s = 0; s < steps; ++s) {
    Raw y = acq.Step(x, sigma, state);
    double fy = acq.Score(y);
    if (fy > *score) {
      x = std::move(y);
      *score = fy;
      fails = 0;
    } else if (++fails >= 6) {
      sigma *= 0.5;
      fails = 0;
      if (sigma < 1e-4) break;
    }
  }
  return x;
}

// The acquisition's best point: random candidates and steps around the
// best trials, then a local search from the best few. Empty when every
// candidate scored -inf (all already run).
Raw Maximise(const std::vector<Dim>& dims, const BayesianOptions& options,
             const Acquisition& acq,
             const std::vector<std::pair<double, Raw>>& best, uint64_t* state) {
  std::vector<std::pair<double, Raw>> candidates;
  for (int i = 0; i < options.random_candidates; ++i) {
    Raw r = RandomRaw(dims, state);
    candidates.emplace_back(acq.Score(r), std::move(r));
  }
  // In the trust region: uniform in the box around each trial in turn.
  if (acq.radius() > 0) {
    for (int i = 0; i < options.random_candidates; ++i) {
      const Raw& base = best[static_cast<size_t>(i) % best.size()].second;
      Raw r = RandomRaw(dims, state);
      for (size_t j = 0; j < dims.size(); ++j) {
        if (dims[j].spec.type == ParameterType::kCategorical) continue;
        double u =
            Unit(dims[j], base[j]) + (2 * Uniform(state) - 1) * acq.radius();
        r[j] = FromUnit(dims[j], u);
      }
      candidates.emplace_back(acq.Score(r), std::move(r));
    }
  }
  // Near the best trials, where the improvement usually is.
  for (size_t k = 0; k < std::min<size_t>(3, best.size()); ++k) {
    for (int i = 0; i < 64; ++i) {
      Raw r = acq.Step(best[k].second, 0.05, state);
      candidates.emplace_back(acq.Score(r), std::move(r));
    }
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  double best_score = -HUGE_VAL;
  Raw chosen;
  int starts = 0;
  for (size_t i = 0; i < candidates.size() && starts < options.local_starts;
       ++i) {
    if (i > 0 && candidates[i].second == candidates[i - 1].second) continue;
    if (!(candidates[i].first > -HUGE_VAL)) break;
    ++starts;
    double score = candidates[i].first;
    Raw r = LocalSearch(acq, candidates[i].second, &score, options.local_steps,
                        state);
    if (score > best_score) {
      best_score = score;
      chosen = std::move(r);
    }
  }
  return chosen;
}

// The model of (x, y): hyperparameters fitted on at most `max_points` of
// them, the best half and an even spread of the rest (each step of the fit
// costs O(n^3)), then the posterior of all of them.
StatusOr<GaussianProcess> FitModel(const std::vector<double>& x,
                                   const std::vector<double>& y, int max_points,
                                   GpFitOptions options) {
  size_t n = y.size(), d = x.size() / n;
  auto limit = static_cast<size_t>(std::max(2, max_points));
  if (n <= limit) return GaussianProcess::FitHyperparameters(x, y, options);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return y[a] < y[b]; });
  std::vector<size_t> chosen(order.begin(), order.begin() + limit / 2);
  size_t rest = n - limit / 2, want = limit - limit / 2;
  for (size_t k = 0; k < want; ++k) {
    chosen.push_back(order[limit / 2 + k * rest / want]);
  }
  std::vector<double> xs, ys;
  for (size_t i : chosen) {
    xs.insert(xs.end(), x.begin() + static_cast<std::ptrdiff_t>(i * d),
              x.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
    ys.push_back(y[i]);
  }
  TRIALSHIM_ASSIGN_OR_RETURN(
      GaussianProcess subset,
      GaussianProcess::FitHyperparameters(xs, ys, options));
  return GaussianProcess::Fit(x, y, subset.hyperparameters());
}

}  // namespace

StatusOr<Assignment> BayesianSearch::Suggest(
    int64_t trial_id, const std::vector<Observation>& observed,
    const std::vector<Assignment>& pending) const {
  for (const Dim& d : dims_) {
    if (d.spec.type != ParameterType::kDouble &&
        d.spec.type != ParameterType::kInteger && Choices(d.spec) == 0) {
      return Status::InvalidArgument("parameter '" + d.spec.id +
                                     "' has no values to choose from");
    }
  }
  int initial = InitialTrials();
  if (trial_id >= 1 && trial_id <= initial) {
    return ToAssignment(dims_,
                        Design(dims_, columns_, initial,
                               seed_)[static_cast<size_t>(trial_id - 1)]);
  }
  // The model's data: minimised values, infeasible points at the worst.
  std::vector<double> x, y;
  std::vector<std::vector<double>> taken, failed, infeasible;
  std::vector<std::pair<double, Raw>> succeeded;
  for (const Observation& o : observed) {
    TRIALSHIM_ASSIGN_OR_RETURN(Raw raw, FromAssignment(dims_, o.parameters));
    std::vector<double> f = Features(dims_, columns_, raw);
    if (o.kind == Observation::Kind::kFailed) {
      failed.push_back(std::move(f));
      continue;
    }
    taken.push_back(f);
    if (o.kind == Observation::Kind::kSucceeded && std::isfinite(o.value)) {
      x.insert(x.end(), f.begin(), f.end());
      y.push_back(minimize_ ? o.value : -o.value);
      succeeded.emplace_back(y.back(), std::move(raw));
    } else if (o.kind == Observation::Kind::kInfeasible) {
      infeasible.push_back(std::move(f));
    }
  }
  if (succeeded.empty() || succeeded.size() + infeasible.size() < 2) {
    return RandomPoint(params_, seed_, trial_id);
  }
  double worst = *std::max_element(y.begin(), y.end());
  for (const std::vector<double>& f : infeasible) {
    x.insert(x.end(), f.begin(), f.end());
    y.push_back(worst);
  }
  if (options_.warp_outputs) WarpWorseHalf(&y);
  GpFitOptions gp_options = options_.gp;
  gp_options.seed = Stream(seed_, trial_id, 1);
  TRIALSHIM_ASSIGN_OR_RETURN(
      GaussianProcess gp, FitModel(x, y, options_.max_fit_points, gp_options));

  // Kriging believer: pending trials at the fitted model's mean
  // (Ginsbourger, Le Riche and Carraro, "Kriging is well-suited to
  // parallelize optimization", 2010). The hyperparameters stay those fitted
  // on the finished trials; only the posterior takes the believed points.
  std::vector<double> px, py;
  for (const Assignment& a : pending) {
    TRIALSHIM_ASSIGN_OR_RETURN(Raw raw, FromAssignment(dims_, a));
    std::vector<double> f = Features(dims_, columns_, raw);
    double m, v;
    gp.Predict(f.data(), &m, &v);
    px.insert(px.end(), f.begin(), f.end());
    py.push_back(m);
    taken.push_back(std::move(f));
  }
  if (!py.empty()) {
    StatusOr<GaussianProcess> believer = gp.Condition(px, py);
    if (believer.ok()) gp = *believer;
  }

  std::vector<std::vector<double>> trusted;
  for (auto row = x.begin(); row != x.end(); row += columns_) {
    trusted.emplace_back(row, row + columns_);
  }
  Acquisition acq(dims_, columns_, gp, options_, std::move(trusted),
                  std::move(taken), std::move(failed));
  uint64_t state = Stream(seed_, trial_id, 2);
  std::sort(succeeded.begin(), succeeded.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Raw chosen = Maximise(dims_, options_, acq, succeeded, &state);
  if (chosen.empty()) {
    // Every candidate has run (a small discrete space): the best one again,
    // as Vertex repeats points then, but never one that failed.
    acq.AllowRepeats();
    chosen = Maximise(dims_, options_, acq, succeeded, &state);
  }
  if (chosen.empty()) return RandomPoint(params_, seed_, trial_id);
  return ToAssignment(dims_, chosen);
}

}  // namespace trialshim::tuning
