// The importance statistics against scipy 1.15's spearmanr and a direct
// computation of epsilon squared (numbers recorded from the anchors
// environment, see the comment of each table).
#include "trialshim/tuning/importance.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trialshim::tuning {
namespace {

struct Case {
  std::string name;
  std::vector<double> xs, ys;
  double rank_correlation;  // abs(scipy.stats.spearmanr(xs, ys).correlation)
  double epsilon_squared;   // numpy, groups as importance.h says
};

TEST(ImportanceTest, AgreesWithScipy) {
  const std::vector<Case> cases = {
      {"monotone: every value its own group", {1, 2, 3, 4, 5},
       {2, 4, 5, 8, 9}, 1, 0},
      {"reversed", {1, 2, 3, 4, 5}, {9, 8, 5, 4, 2}, 1, 0},
      {"ties share their mean rank", {1, 1, 2, 2, 3, 3}, {1, 2, 2, 3, 5, 4},
       0.9095085938862487, 0.7692307692307692},
      {"an optimum inside the range: no correlation, binned groups",
       {1, 2, 3, 4, 5, 6, 7}, {9, 4, 1, 0, 1, 4, 9}, 0, 0.5357142857142857},
      {"six values in five bins", {0.1, 0.5, 0.2, 0.9, 0.7, 0.3},
       {3, 1, 4, 1, 5, 9}, 0.2608969660436018, 0.9442379182156142},
      {"under three pairs", {1, 2}, {1, 2}, 0, 0},
      {"the metric constant", {1, 2, 3, 4}, {5, 5, 5, 5}, 0, 0},
  };
  for (const Case& c : cases) {
    EXPECT_NEAR(AbsRankCorrelation(c.xs, c.ys), c.rank_correlation, 1e-12)
        << c.name;
    EXPECT_NEAR(EpsilonSquared(c.xs, c.ys, false), c.epsilon_squared, 1e-12)
        << c.name;
  }
}

TEST(ImportanceTest, CategoriesAreGroupsWhateverTheirNumber) {
  // Seven categories, two trials each: by category the groups explain the
  // metric exactly; binned by rank they would not.
  std::vector<double> xs, ys;
  for (int c = 0; c < 7; ++c) {
    for (int k = 0; k < 2; ++k) {
      xs.push_back(c);
      ys.push_back(c % 2 ? 10 : 0);
    }
  }
  EXPECT_DOUBLE_EQ(EpsilonSquared(xs, ys, /*categorical=*/true), 1);
  EXPECT_LT(EpsilonSquared(xs, ys, /*categorical=*/false), 0.5);
}

TEST(ImportanceTest, RanksTiesShareTheirMean) {
  EXPECT_EQ(Ranks({3, 1, 3, 2}), (std::vector<double>{2.5, 0, 2.5, 1}));
}

}  // namespace
}  // namespace trialshim::tuning
