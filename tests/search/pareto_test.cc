// Dominance, Pareto ranks and ParEGO's scalarization.
#include "trialshim/search/pareto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace trialshim::tuning {
namespace {

const std::vector<Goal> kMinMax = {Goal::kMinimize, Goal::kMaximize};

TEST(ParetoTest, Dominates) {
  struct Case {
    std::string name;
    std::vector<double> a, b;
    bool want;
  };
  const std::vector<Case> cases = {
      {"better on both", {1, 5}, {2, 4}, true},
      {"better on one, equal on the other", {1, 4}, {2, 4}, true},
      {"equal", {1, 4}, {1, 4}, false},
      {"a trade-off", {1, 3}, {2, 4}, false},
      {"worse", {2, 4}, {1, 5}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Dominates(c.a, c.b, kMinMax), c.want) << "case " << c.name;
  }
  // kUnspecified maximises, as the sweep's single goal does.
  EXPECT_TRUE(Dominates({2}, {1}, {Goal::kUnspecified}));
}

TEST(ParetoTest, RanksPeelFrontsOff) {
  // (loss to minimise, accuracy to maximise)
  std::vector<std::vector<double>> points = {
      {0.1, 0.90},  // front
      {0.2, 0.95},  // front
      {0.3, 0.99},  // front
      {0.2, 0.90},  // behind 0 -> rank 1
      {0.3, 0.94},  // behind 1 -> rank 1
      {0.4, 0.80},  // behind 3 -> rank 2
      {0.1, 0.90},  // a copy of 0: neither dominates the other
  };
  EXPECT_EQ(ParetoRanks(points, kMinMax),
            (std::vector<int>{0, 0, 0, 1, 1, 2, 0}));
  EXPECT_EQ(ParetoRanks({}, kMinMax), std::vector<int>{});
}

TEST(ParetoTest, WeightsAreOnTheSimplexAndDrawnPerTrial) {
  for (size_t n : {1u, 2u, 5u}) {
    for (int64_t id = 1; id <= 50; ++id) {
      std::vector<double> w = ChebyshevWeights(n, 7, id);
      ASSERT_EQ(w.size(), n);
      EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), 1.0, 1e-12)
          << "case n=" << n << " id=" << id;
      for (double x : w) EXPECT_GE(x, 0.0) << "case n=" << n << " id=" << id;
      EXPECT_EQ(w, ChebyshevWeights(n, 7, id)) << "case deterministic";
    }
  }
  EXPECT_NE(ChebyshevWeights(2, 7, 1), ChebyshevWeights(2, 7, 2));
  EXPECT_NE(ChebyshevWeights(2, 7, 1), ChebyshevWeights(2, 8, 1));
  // Over many trials both ends of the front get aimed at.
  double lo = 1, hi = 0;
  for (int64_t id = 1; id <= 200; ++id) {
    double w0 = ChebyshevWeights(2, 3, id)[0];
    lo = std::min(lo, w0);
    hi = std::max(hi, w0);
  }
  EXPECT_LT(lo, 0.05);
  EXPECT_GT(hi, 0.95);
}

// Whatever the weights, the best scalarized point is on the front, and a
// point in a concave part of the front, which no weighted sum makes best,
// is best for some weights.
TEST(ParetoTest, ChebyshevMinimisersAreParetoOptimal) {
  // A concave front (minimise both): (0,1), (0.6,0.6), (1,0), and points
  // behind it.
  std::vector<std::vector<double>> points = {
      {0, 1}, {0.6, 0.6}, {1, 0}, {0.7, 0.9}, {0.9, 0.7}, {1, 1}};
  std::vector<Goal> goals = {Goal::kMinimize, Goal::kMinimize};
  std::vector<int> rank = ParetoRanks(points, goals);
  bool middle_reached = false;
  for (int64_t id = 1; id <= 200; ++id) {
    std::vector<double> w = ChebyshevWeights(2, 1, id);
    std::vector<double> s = Scalarize(points, goals, w);
    size_t best = std::min_element(s.begin(), s.end()) - s.begin();
    EXPECT_EQ(rank[best], 0) << "case id " << id;
    middle_reached = middle_reached || best == 1;
    // A weighted sum with the same weights never picks the middle point.
    std::vector<double> sum;
    for (const auto& p : points) sum.push_back(w[0] * p[0] + w[1] * p[1]);
    EXPECT_NE(std::min_element(sum.begin(), sum.end()) - sum.begin(), 1)
        << "case id " << id;
  }
  EXPECT_TRUE(middle_reached) << "the concave point is never aimed at";
  // An objective equal everywhere adds nothing.
  std::vector<double> s = Scalarize({{1, 5}, {2, 5}}, goals, {0.5, 0.5});
  EXPECT_LT(s[0], s[1]);
  EXPECT_EQ(s[0], 0.0);
}

}  // namespace
}  // namespace trialshim::tuning
