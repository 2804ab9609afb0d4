// Parameter importance statistics. See importance.h.
#include "trialshim/tuning/importance.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace trialshim::tuning {

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return rank;
}

double AbsRankCorrelation(const std::vector<double>& xs,
                          const std::vector<double>& ys) {
  if (xs.size() < 3) return 0;
  std::vector<double> a = Ranks(xs), b = Ranks(ys);
  double mean = (a.size() - 1) / 2.0;  // ties keep the mean rank
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - mean) * (b[i] - mean);
    aa += (a[i] - mean) * (a[i] - mean);
    bb += (b[i] - mean) * (b[i] - mean);
  }
  if (aa == 0 || bb == 0) return 0;
  return std::fabs(ab / std::sqrt(aa * bb));
}

double EpsilonSquared(const std::vector<double>& xs,
                      const std::vector<double>& ys, bool categorical) {
  constexpr size_t kBins = 5;
  size_t n = xs.size();
  if (n < 3) return 0;
  std::vector<double> distinct = xs;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<size_t> group(n);
  bool by_value = categorical || distinct.size() <= kBins;
  std::vector<double> rank = by_value ? std::vector<double>() : Ranks(xs);
  for (size_t i = 0; i < n; ++i) {
    group[i] =
        by_value
            ? std::lower_bound(distinct.begin(), distinct.end(), xs[i]) -
                  distinct.begin()
            : std::min(kBins - 1, static_cast<size_t>(rank[i] * kBins / n));
  }
  size_t k = by_value ? distinct.size() : kBins;
  std::vector<double> sum(k, 0), count(k, 0);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) {
    sum[group[i]] += ys[i];
    count[group[i]] += 1;
    mean += ys[i] / n;
  }
  double total = 0, between = 0;
  size_t groups = 0;
  for (size_t i = 0; i < n; ++i) total += (ys[i] - mean) * (ys[i] - mean);
  for (size_t g = 0; g < k; ++g) {
    if (count[g] == 0) continue;
    ++groups;
    double d = sum[g] / count[g] - mean;
    between += count[g] * d * d;
  }
  if (groups < 2 || n <= groups || !(total > 0)) return 0;
  double within = (total - between) / (n - groups);
  return std::clamp((between - (groups - 1) * within) / total, 0.0, 1.0);
}

}  // namespace trialshim::tuning
