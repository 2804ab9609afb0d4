// Importance: how much a parameter matters to the metric, from the trials
// alone (no model), as report.html ranks and charts the parameters.
//
// Two statistics over (x, y) pairs, a parameter's values (categories by
// their index) and the metric of the trials that set it, both in [0, 1]:
// |Spearman's rank correlation| sees effects that go one way, and ranks the
// parameters; epsilon squared, the share of the metric's variance explained
// by the mean per group of x, also sees an optimum inside the range. Both
// are 0 where they are undefined (under 3 pairs, one side constant). Pure
// functions.
#ifndef TRIALSHIM_TUNING_IMPORTANCE_H_
#define TRIALSHIM_TUNING_IMPORTANCE_H_

#include <vector>

namespace trialshim::tuning {

// Ranks from 0, ties sharing their mean rank (Spearman's convention).
std::vector<double> Ranks(const std::vector<double>& v);

// |Spearman's rho| of the pairs (xs[i], ys[i]).
double AbsRankCorrelation(const std::vector<double>& xs,
                          const std::vector<double>& ys);

// Epsilon squared, (SS_between - (k - 1) MS_within) / SS_total clamped to
// [0, 1]: what the groups explain, less what as many groups explain by
// chance. Groups: the categories (`categorical`), the values when there are
// at most 5, else 5 bins of equal count by rank.
double EpsilonSquared(const std::vector<double>& xs,
                      const std::vector<double>& ys, bool categorical);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_IMPORTANCE_H_
