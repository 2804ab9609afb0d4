// Search: which parameter values trial N gets, as Vertex's GRID_SEARCH and
// RANDOM_SEARCH would choose them, and how Vertex writes them on the
// command line (docs/vertex-values.md has the evidence).
//
// Both searches are pure functions of the trial number (and the seed), so a
// resumed sweep gives a trial the very values it had before, whatever order
// trials finish in.
//
// Grid: every combination of INTEGER values (min..max), DISCRETE values and
// CATEGORICAL values, in odometer order (the first parameter changes
// slowest, as itertools.product does). A parameter with conditional
// children is one digit of that odometer whose positions are the union of
// its sub-grids: its values in order, each followed by the grid of the
// children that value activates (their own odometer, the first child
// slowest; nested children alike). So a parent with values {a, b}, where
// only a activates x in {1, 2}, has 3 positions: (a, x=1), (a, x=2), (b).
// DOUBLE parameters have no grid (Vertex refuses them).
//
// Random: each value independently uniform on the parameter's scale: linear,
// log (uniform in log(x)) or reverse log (mirrored log: dense near the top
// of the range). INTEGER draws are uniform over the integers on that scale;
// DISCRETE and CATEGORICAL values are picked uniformly. Conditional children
// get values only when their parent's value activates them. The generator is
// SplitMix64 (fully specified), so a seed gives the same values everywhere.
#ifndef TRIALSHIM_SEARCH_SEARCH_H_
#define TRIALSHIM_SEARCH_SEARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

// A parameter's value in one trial.
struct ParameterValue {
  std::string id;
  ParameterType type = ParameterType::kDouble;
  double number = 0;  // INTEGER, DOUBLE and DISCRETE
  std::string text;   // CATEGORICAL

  // The value as Vertex passes it: INTEGER as an int ("64"); DOUBLE and
  // DISCRETE as Python writes a float ("128.0", "0.001", "1e-05"), so a
  // trainer that breaks on "128.0" breaks here as it would on Vertex;
  // CATEGORICAL verbatim.
  std::string Format() const;
  // "--<id>=<Format()>", the argv token a trial receives.
  std::string Arg() const;
};
using Assignment = std::vector<ParameterValue>;

// Shortest text that reads back as `v`, with no ".0" on integral values
// ("3", "0.5", "1e-05"): for messages and reports. Not what Vertex sends
// (Format above).
std::string FormatNumber(double v);

// Number of grid points (saturating at UINT64_MAX). InvalidArgument naming
// the parameter when a DOUBLE parameter (conditional or not) makes a grid
// impossible.
StatusOr<uint64_t> GridSize(const std::vector<ParameterSpec>& params);

// The `index`-th grid point (0-based). InvalidArgument as GridSize, or when
// index >= GridSize.
StatusOr<Assignment> GridPoint(const std::vector<ParameterSpec>& params,
                               uint64_t index);

// Whether the parent's value `parent` makes `c.parameter` active.
bool Activates(const ConditionalParameterSpec& c, const ParameterValue& parent);

// The values of trial `trial_id` (1-based) of a random search with `seed`.
Assignment RandomPoint(const std::vector<ParameterSpec>& params, uint64_t seed,
                       int64_t trial_id);

// The largest integer bound a parameter may have, either sign: 2^53. A
// trial's values are doubles (as Vertex's Trial.Parameter.value is), which
// hold every integer only up to there; integerValueSpec bounds beyond it are
// refused when the spec is read (job_spec.h).
inline constexpr int64_t kMaxIntegerBound = int64_t{1} << 53;
// An INTEGER parameter's bound, held as a double, as an int64: clamped to
// +-kMaxIntegerBound (NaN is 0), so that no cast is undefined whatever a
// spec built in code holds.
int64_t IntegerBound(double v);

// Maps u in [0, 1) onto [min, max] on `scale` (kUnspecified is linear). Log
// scales need min > 0. Any finite bounds: a range wider than DBL_MAX
// ({-1e308, 1e308}) is sampled across its width, not at an end.
double ScaleDouble(double min, double max, ScaleType scale, double u);
// The same for integers: each integer in [min, max] owns the slice
// [k - 0.5, k + 0.5) of the (scaled) range, so the ends are not halved.
int64_t ScaleInteger(int64_t min, int64_t max, ScaleType scale, double u);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_SEARCH_H_
