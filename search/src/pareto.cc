// Dominance, non-dominated sorting and ParEGO's scalarization; see pareto.h.
#include "trialshim/search/pareto.h"

#include <algorithm>
#include <cmath>

#include "splitmix.h"

namespace trialshim::tuning {
namespace {

// `v` as a value to minimise.
double Cost(double v, Goal goal) { return goal == Goal::kMinimize ? v : -v; }

}  // namespace

bool Dominates(const std::vector<double>& a, const std::vector<double>& b,
               const std::vector<Goal>& goals) {
  bool better = false;
  for (size_t i = 0; i < goals.size(); ++i) {
    double x = Cost(a[i], goals[i]), y = Cost(b[i], goals[i]);
    if (x > y) return false;
    better = better || x < y;
  }
  return better;
}

std::vector<int> ParetoRanks(const std::vector<std::vector<double>>& points,
                             const std::vector<Goal>& goals) {
  // O(n^2) per front: studies have hundreds of trials, not millions.
  std::vector<int> rank(points.size(), -1);
  size_t left = points.size();
  for (int r = 0; left > 0; ++r) {
    std::vector<size_t> front;
    for (size_t i = 0; i < points.size(); ++i) {
      if (rank[i] >= 0) continue;
      bool dominated = false;
      for (size_t j = 0; j < points.size() && !dominated; ++j) {
        dominated = rank[j] < 0 && j != i &&
                    Dominates(points[j], points[i], goals);
      }
      if (!dominated) front.push_back(i);
    }
    for (size_t i : front) rank[i] = r;
    left -= front.size();
  }
  return rank;
}

std::vector<double> ChebyshevWeights(size_t n, uint64_t seed,
                                     int64_t trial_id) {
  // Normalised exponentials are uniform on the simplex (Dirichlet(1,...,1)).
  uint64_t state = seed ^ (0x5851f42d4c957f2dULL * static_cast<uint64_t>(trial_id));
  std::vector<double> w(n);
  double sum = 0;
  for (double& x : w) {
    x = -std::log(1 - internal::Uniform(&state));
    sum += x;
  }
  for (double& x : w) x = sum > 0 ? x / sum : 1.0 / static_cast<double>(n);
  return w;
}

std::vector<double> Scalarize(const std::vector<std::vector<double>>& points,
                              const std::vector<Goal>& goals,
                              const std::vector<double>& weights) {
  std::vector<double> lo(goals.size(), INFINITY), hi(goals.size(), -INFINITY);
  for (const std::vector<double>& p : points) {
    for (size_t i = 0; i < goals.size(); ++i) {
      lo[i] = std::min(lo[i], Cost(p[i], goals[i]));
      hi[i] = std::max(hi[i], Cost(p[i], goals[i]));
    }
  }
  std::vector<double> out;
  out.reserve(points.size());
  for (const std::vector<double>& p : points) {
    double most = 0, sum = 0;
    for (size_t i = 0; i < goals.size(); ++i) {
      double span = hi[i] - lo[i];
      double f = span > 0 ? (Cost(p[i], goals[i]) - lo[i]) / span : 0;
      most = std::max(most, weights[i] * f);
      sum += weights[i] * f;
    }
    out.push_back(most + 0.05 * sum);
  }
  return out;
}

}  // namespace trialshim::tuning
