// Pareto: trials judged on several objectives at once, as Vertex's several
// studySpec.metrics and the Optuna sweeper's list of directions.
//
// A trial dominates another when it is no worse on every objective and
// better on at least one; the Pareto front is the set of trials no other
// dominates, the answer of a multi-objective study (Optuna's best_trials,
// Vertex's optimal trials). Ranks peel fronts off in turn (non-dominated
// sorting): the front is rank 0, the front of the rest rank 1, and so on.
//
// The search needs one number per trial. ParEGO (Knowles 2006) turns the
// objectives into one with the augmented Chebyshev function
//   s = max_i(w_i f_i) + 0.05 sum_i(w_i f_i),
// each f_i normalised to [0, 1] over the observed values with the worst at
// 1, and draws a new weight vector w for every suggestion (uniform on the
// simplex), so that successive trials aim at different parts of the front;
// unlike a weighted sum it reaches concave parts of the front too. Every
// minimiser of s, for any w, is Pareto optimal. Pure functions.
#ifndef TRIALSHIM_SEARCH_PARETO_H_
#define TRIALSHIM_SEARCH_PARETO_H_

#include <cstdint>
#include <vector>

#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

// Whether `a` dominates `b` under `goals` (kUnspecified maximises). Every
// vector has goals.size() entries.
bool Dominates(const std::vector<double>& a, const std::vector<double>& b,
               const std::vector<Goal>& goals);

// The Pareto rank of each point (0: on the front).
std::vector<int> ParetoRanks(const std::vector<std::vector<double>>& points,
                             const std::vector<Goal>& goals);

// ParEGO's weights for trial `trial_id`: `n` non-negative numbers summing to
// 1, uniform on the simplex, a pure function of (seed, trial_id).
std::vector<double> ChebyshevWeights(size_t n, uint64_t seed, int64_t trial_id);

// The augmented Chebyshev value of each point under `weights` (lower is
// better), the objectives normalised over `points` as above; an objective
// equal at every point contributes nothing.
std::vector<double> Scalarize(const std::vector<std::vector<double>>& points,
                              const std::vector<Goal>& goals,
                              const std::vector<double>& weights);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_PARETO_H_
