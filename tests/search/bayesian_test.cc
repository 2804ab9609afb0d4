// The Bayesian search: it finds optima in few trials and beats random
// search, handles every parameter kind and conditional parameters, batches,
// failed and infeasible trials, and is deterministic.
#include "trialshim/search/bayesian.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/testutil/parameters.h"
#include "tests/testutil/status_matchers.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::tuning {
namespace {

using testing::Args;
using testing::Categorical;
using testing::Discrete;
using testing::Double;
using testing::Integer;
using testing::WithChild;

double Num(const Assignment& a, const std::string& id) {
  for (const ParameterValue& v : a) {
    if (v.id == id) return v.number;
  }
  ADD_FAILURE() << "no value for " << id << " in " << Args(a);
  return NAN;
}

std::string Text(const Assignment& a, const std::string& id) {
  for (const ParameterValue& v : a) {
    if (v.id == id) return v.text;
  }
  return "";
}

// A trial's outcome: a value, or nullopt for INFEASIBLE.
using Objective = std::function<std::optional<double>(const Assignment&)>;

// Runs `trials` sequential trials; returns every observation.
std::vector<Observation> RunTrials(const BayesianSearch& search,
                                   const Objective& f, int trials) {
  std::vector<Observation> observed;
  for (int t = 1; t <= trials; ++t) {
    StatusOr<Assignment> a = search.Suggest(t, observed, {});
    EXPECT_OK(a);
    if (!a.ok()) break;
    std::optional<double> v = f(*a);
    observed.push_back(
        {*a, v ? Observation::Kind::kSucceeded : Observation::Kind::kInfeasible,
         v.value_or(0)});
  }
  return observed;
}

double Best(const std::vector<Observation>& observed, Goal goal, int first) {
  double best = goal == Goal::kMinimize ? HUGE_VAL : -HUGE_VAL;
  for (int i = 0; i < first && i < static_cast<int>(observed.size()); ++i) {
    const Observation& o = observed[static_cast<size_t>(i)];
    if (o.kind != Observation::Kind::kSucceeded) continue;
    best = goal == Goal::kMinimize ? std::min(best, o.value)
                                   : std::max(best, o.value);
  }
  return best;
}

// 20 trials on a 2-d quadratic land within 1e-2 of its optimum, whichever
// way the goal points and whatever the scale.
TEST(BayesianTest, FindsQuadraticOptimumInFewTrials) {
  struct Case {
    const char* name;
    std::vector<ParameterSpec> params;
    Goal goal;
    Objective f;
    double optimum;
  } cases[] = {
      {"minimize",
       {Double("x", -2, 3), Double("y", 0, 10)},
       Goal::kMinimize,
       [](const Assignment& a) {
         return std::pow(Num(a, "x") - 0.7, 2) +
                0.1 * std::pow(Num(a, "y") - 6.5, 2) + 1;
       },
       1},
      {"maximize",
       {Double("x", 0, 1), Double("y", 0, 1)},
       Goal::kMaximize,
       [](const Assignment& a) {
         return 5 - 4 * std::pow(Num(a, "x") - 0.3, 2) -
                4 * std::pow(Num(a, "y") - 0.8, 2);
       },
       5},
      {"log scale",
       {Double("lr", 1e-5, 1, ScaleType::kLog), Double("y", 0, 1)},
       Goal::kMinimize,
       [](const Assignment& a) {
         return std::pow(std::log10(Num(a, "lr")) + 3, 2) +
                std::pow(Num(a, "y") - 0.4, 2);
       },
       0},
      {"reverse log scale",
       // 1 - m log-uniform on [0.001, 0.999], as a momentum wants it.
       {Double("m", 0.001, 0.999, ScaleType::kReverseLog), Double("y", 0, 1)},
       Goal::kMinimize,
       [](const Assignment& a) {
         return std::pow(std::log10(1 - Num(a, "m")) + 2, 2) +
                std::pow(Num(a, "y") - 0.4, 2);
       },
       0},
  };
  for (const Case& c : cases) {
    for (uint64_t seed : {1, 2, 3}) {
      BayesianSearch search(c.params, c.goal, seed);
      std::vector<Observation> o = RunTrials(search, c.f, 20);
      EXPECT_NEAR(Best(o, c.goal, 20), c.optimum, 1e-2)
          << "case " << c.name << " seed " << seed;
    }
  }
}

// The median over seeds 1..7 of the best value after `trials` trials, of
// the Bayesian search and of random search.
std::pair<double, double> MedianBest(const std::vector<ParameterSpec>& params,
                                     const Objective& f, int trials) {
  std::vector<double> bayes, random;
  for (uint64_t seed = 1; seed <= 7; ++seed) {
    bayes.push_back(Best(
        RunTrials(BayesianSearch(params, Goal::kMinimize, seed), f, trials),
        Goal::kMinimize, trials));
    double best = HUGE_VAL;
    for (int t = 1; t <= trials; ++t) {
      best = std::min(best, *f(RandomPoint(params, seed, t)));
    }
    random.push_back(best);
  }
  std::sort(bayes.begin(), bayes.end());
  std::sort(random.begin(), random.end());
  return {bayes[3], random[3]};
}

// Branin-like difficulty is not needed to tell the two apart: on a
// 2-d quadratic the median regret after 15 trials over 7 seeds.
TEST(BayesianTest, BeatsRandomSearch) {
  std::vector<ParameterSpec> params = {Double("x", 0, 1), Double("y", 0, 1)};
  auto f = [](const Assignment& a) -> std::optional<double> {
    return std::pow(Num(a, "x") - 0.2, 2) + std::pow(Num(a, "y") - 0.9, 2);
  };
  auto [bayes, random] = MedianBest(params, f, 15);
  EXPECT_LT(bayes * 10, random)
      << "median regret: bayes " << bayes << ", random " << random;
}

// On a rugged function, 4-D Levy (bench/search/problems.py: many local
// minima on a bowl, minimum 0 at x = 1), the median regret after 20 trials
// over 7 seeds is well below random search's. Expected improvement without
// output warping or a trust region settled in the first basin and only tied
// random search here (6.78 against 6.79); this search reaches 1.92.
TEST(BayesianTest, BeatsRandomSearchOnARuggedFunction) {
  std::vector<ParameterSpec> params;
  for (const char* id : {"x1", "x2", "x3", "x4"}) {
    params.push_back(Double(id, -10, 10));
  }
  auto levy = [](const Assignment& a) -> std::optional<double> {
    std::vector<double> w;
    for (const ParameterValue& v : a) w.push_back(1 + (v.number - 1) / 4);
    double s = std::pow(std::sin(M_PI * w[0]), 2);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      s += std::pow(w[i] - 1, 2) *
           (1 + 10 * std::pow(std::sin(M_PI * w[i] + 1), 2));
    }
    return s + std::pow(w.back() - 1, 2) *
                   (1 + std::pow(std::sin(2 * M_PI * w.back()), 2));
  };
  auto [bayes, random] = MedianBest(params, levy, 20);
  EXPECT_LT(bayes * 2, random)
      << "median regret: bayes " << bayes << ", random " << random;
}

// Every suggested value is one the parameter can take, on a space with
// every kind, and the search finds the mixed optimum (0, at sgd) in most
// runs: the median regret of 7 seeds after 40 trials. (In some runs it
// spends its trials on the corners of the five-dimensional space and
// settles on adam, 1 worse.)
TEST(BayesianTest, MixedSpace) {
  std::vector<ParameterSpec> params = {
      Double("lr", 1e-5, 1e-1, ScaleType::kLog), Integer("layers", 1, 12),
      Integer("width", 8, 512, ScaleType::kLog),
      Discrete("dropout", {0.0, 0.1, 0.25, 0.5}),
      Categorical("opt", {"adam", "sgd", "rmsprop"})};
  auto f = [](const Assignment& a) -> std::optional<double> {
    return std::pow(std::log10(Num(a, "lr")) + 3, 2) +
           0.1 * std::pow(Num(a, "layers") - 7, 2) +
           std::pow(std::log2(Num(a, "width")) - 6, 2) / 4 +
           4 * std::fabs(Num(a, "dropout") - 0.25) +
           (Text(a, "opt") == "sgd" ? 0 : 1);
  };
  const std::vector<double> dropouts = {0.0, 0.1, 0.25, 0.5};
  std::vector<double> regret;
  for (uint64_t seed = 1; seed <= 7; ++seed) {
    std::vector<Observation> o =
        RunTrials(BayesianSearch(params, Goal::kMinimize, seed), f, 40);
    for (const Observation& ob : o) {
      const Assignment& a = ob.parameters;
      std::string args = Args(a);
      ASSERT_EQ(a.size(), 5u) << "case " << args;
      EXPECT_TRUE(Num(a, "lr") >= 1e-5 && Num(a, "lr") <= 1e-1)
          << "case " << args;
      for (const char* id : {"layers", "width"}) {
        EXPECT_EQ(Num(a, id), std::round(Num(a, id))) << "case " << args;
      }
      EXPECT_TRUE(Num(a, "layers") >= 1 && Num(a, "layers") <= 12)
          << "case " << args;
      EXPECT_TRUE(Num(a, "width") >= 8 && Num(a, "width") <= 512)
          << "case " << args;
      EXPECT_NE(std::find(dropouts.begin(), dropouts.end(), Num(a, "dropout")),
                dropouts.end())
          << "case " << args;
    }
    regret.push_back(Best(o, Goal::kMinimize, 40));
  }
  std::sort(regret.begin(), regret.end());
  EXPECT_LT(regret[3], 0.1) << "median regret over 7 seeds";
}

// A child has a value exactly when its parent activates it, and the search
// finds an optimum that needs the child.
TEST(BayesianTest, ConditionalParameters) {
  std::vector<ParameterSpec> params = {
      WithChild(WithChild(Categorical("opt", {"adam", "sgd"}), {"sgd"},
                          Double("momentum", 0, 1)),
                {"adam"}, Double("beta", 0, 1)),
      Double("x", 0, 1)};
  auto f = [](const Assignment& a) -> std::optional<double> {
    double base = std::pow(Num(a, "x") - 0.5, 2);
    if (Text(a, "opt") == "sgd") {
      return base + std::pow(Num(a, "momentum") - 0.9, 2);
    }
    return base + 0.2 + std::pow(Num(a, "beta") - 0.5, 2);
  };
  BayesianSearch search(params, Goal::kMinimize, 9);
  std::vector<Observation> o = RunTrials(search, f, 30);
  std::set<std::string> seen;
  for (const Observation& ob : o) {
    std::string opt = Text(ob.parameters, "opt");
    seen.insert(opt);
    std::vector<std::string> ids;
    for (const ParameterValue& v : ob.parameters) ids.push_back(v.id);
    std::vector<std::string> want =
        opt == "sgd" ? std::vector<std::string>{"opt", "momentum", "x"}
                     : std::vector<std::string>{"opt", "beta", "x"};
    EXPECT_EQ(ids, want) << "case " << Args(ob.parameters);
  }
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_LT(Best(o, Goal::kMinimize, 30), 1e-2);
}

// Past max_fit_points the hyperparameters come from a subset, and the
// model still uses every trial: with 300 random trials of a quadratic the
// next point lands next to the optimum.
TEST(BayesianTest, LongSweepsFitASubset) {
  std::vector<ParameterSpec> params = {Double("x", 0, 1), Double("y", 0, 1)};
  auto f = [](const Assignment& a) {
    return std::pow(Num(a, "x") - 0.4, 2) + std::pow(Num(a, "y") - 0.6, 2);
  };
  std::vector<Observation> observed;
  for (int64_t t = 1; t <= 300; ++t) {
    Assignment a = RandomPoint(params, 11, t);
    observed.push_back({a, Observation::Kind::kSucceeded, f(a)});
  }
  double best = Best(observed, Goal::kMinimize, 300);
  for (int max_fit : {0, 50}) {  // 0: the default (120)
    BayesianOptions options;
    if (max_fit > 0) options.max_fit_points = max_fit;
    BayesianSearch search(params, Goal::kMinimize, 1, options);
    StatusOr<Assignment> a = search.Suggest(301, observed, {});
    ASSERT_OK(a);
    EXPECT_LT(f(*a), best) << "case max_fit_points " << max_fit << ": "
                           << Args(*a);
  }
}

// The design's points spread one per stratum of every coordinate.
TEST(BayesianTest, InitialDesignIsALatinHypercube) {
  std::vector<ParameterSpec> params = {Double("x", 0, 1), Double("y", 0, 1),
                                       Double("z", 0, 1)};
  BayesianSearch search(params, Goal::kMinimize, 4);
  int n = search.InitialTrials();
  ASSERT_EQ(n, 10);
  for (const char* id : {"x", "y", "z"}) {
    std::set<int> strata;
    for (int t = 1; t <= n; ++t) {
      StatusOr<Assignment> a = search.Suggest(t, {}, {});
      ASSERT_OK(a);
      strata.insert(static_cast<int>(Num(*a, id) * n));
    }
    EXPECT_EQ(strata.size(), static_cast<size_t>(n)) << "case " << id;
  }
}

// Pending trials (running, not finished) push the next suggestion away:
// a batch is distinct.
TEST(BayesianTest, BatchSuggestionsAreDistinct) {
  std::vector<ParameterSpec> params = {Double("x", 0, 1), Double("y", 0, 1)};
  auto f = [](const Assignment& a) -> std::optional<double> {
    return std::pow(Num(a, "x") - 0.3, 2) + std::pow(Num(a, "y") - 0.3, 2);
  };
  BayesianSearch search(params, Goal::kMinimize, 2);
  std::vector<Observation> o = RunTrials(search, f, 12);
  std::vector<Assignment> pending;
  std::set<std::string> batch;
  for (int t = 13; t <= 16; ++t) {
    StatusOr<Assignment> a = search.Suggest(t, o, pending);
    ASSERT_OK(a);
    for (const Assignment& p : pending) {
      double dist =
          std::hypot(Num(*a, "x") - Num(p, "x"), Num(*a, "y") - Num(p, "y"));
      EXPECT_GT(dist, 1e-3)
          << "case trial " << t << ": " << Args(*a) << " vs " << Args(p);
    }
    pending.push_back(*a);
    batch.insert(Args(*a));
  }
  EXPECT_EQ(batch.size(), 4u);
}

// The same seed and history give the same values; another seed others.
TEST(BayesianTest, DeterministicWithSeed) {
  std::vector<ParameterSpec> params = {Double("x", 0, 1), Integer("k", 1, 5),
                                       Categorical("c", {"a", "b"})};
  auto f = [](const Assignment& a) -> std::optional<double> {
    return std::pow(Num(a, "x") - 0.6, 2) + Num(a, "k") + (Text(a, "c") == "a");
  };
  auto run = [&](uint64_t seed) {
    std::string all;
    for (const Observation& o :
         RunTrials(BayesianSearch(params, Goal::kMinimize, seed), f, 12)) {
      all += Args(o.parameters) + "\n";
    }
    return all;
  };
  std::string a = run(7);
  EXPECT_EQ(a, run(7));
  EXPECT_NE(a, run(8));
}

// FAILED trials are left out of the model and never suggested again, even
// when every other point of a small space has been run; INFEASIBLE trials
// count as the worst value, so the search stays out of their region.
TEST(BayesianTest, FailedTrialsAreNotRepeated) {
  std::vector<ParameterSpec> params = {Categorical("c", {"a", "b", "c"}),
                                       Integer("k", 1, 2)};
  BayesianSearch search(params, Goal::kMinimize, 1);
  auto point = [](const char* c, double k) {
    return Assignment{{"c", ParameterType::kCategorical, 0, c},
                      {"k", ParameterType::kInteger, k, ""}};
  };
  using K = Observation::Kind;
  struct Case {
    const char* name;
    std::vector<Observation> observed;
    std::string want;  // "" when any point but the failed ones will do
  } cases[] = {
      {"the one point left",
       {{point("a", 1), K::kSucceeded, 3},
        {point("a", 2), K::kFailed, 0},
        {point("b", 1), K::kSucceeded, 2},
        {point("b", 2), K::kInfeasible, 0},
        {point("c", 1), K::kSucceeded, 1}},
       "--c=c --k=2"},
      {"all run: a repeat, not the failed one",
       {{point("a", 1), K::kSucceeded, 3},
        {point("a", 2), K::kFailed, 0},
        {point("b", 1), K::kSucceeded, 2},
        {point("b", 2), K::kSucceeded, 4},
        {point("c", 1), K::kSucceeded, 1},
        {point("c", 2), K::kSucceeded, 5}},
       ""},
  };
  for (const Case& c : cases) {
    StatusOr<Assignment> a = search.Suggest(20, c.observed, {});
    ASSERT_OK(a);
    if (!c.want.empty()) {
      EXPECT_EQ(Args(*a), c.want) << "case " << c.name;
    }
    EXPECT_NE(Args(*a), "--c=a --k=2") << "case " << c.name;
  }
}

TEST(BayesianTest, AvoidsInfeasibleRegion) {
  // Minimise x, but below 0.3 the trainer reports no metric.
  std::vector<ParameterSpec> params = {Double("x", 0, 1)};
  auto f = [](const Assignment& a) -> std::optional<double> {
    double x = Num(a, "x");
    if (x < 0.3) return std::nullopt;
    return x;
  };
  BayesianSearch search(params, Goal::kMinimize, 3);
  std::vector<Observation> o = RunTrials(search, f, 20);
  int infeasible = 0;
  for (size_t i = static_cast<size_t>(search.InitialTrials()); i < o.size();
       ++i) {
    infeasible += o[i].kind == Observation::Kind::kInfeasible;
  }
  EXPECT_LE(infeasible, 4) << "of " << o.size() - 5 << " model trials";
  EXPECT_LT(Best(o, Goal::kMinimize, 20), 0.35);
}

TEST(BayesianTest, RefusesUnknownValues) {
  std::vector<ParameterSpec> params = {Categorical("c", {"a", "b"}),
                                       Double("x", 0, 1)};
  BayesianSearch search(params, Goal::kMinimize, 1);
  struct Case {
    const char* name;
    Assignment values;
    const char* phrase;
  } cases[] = {
      {"unknown category",
       {{"c", ParameterType::kCategorical, 0, "z"},
        {"x", ParameterType::kDouble, 0.5, ""}},
       "no category 'z'"},
      {"missing parameter",
       {{"c", ParameterType::kCategorical, 0, "a"}},
       "no value for parameter 'x'"},
  };
  for (const Case& c : cases) {
    std::vector<Observation> observed(
        4, {c.values, Observation::Kind::kSucceeded, 1});
    StatusOr<Assignment> a =
        search.Suggest(search.InitialTrials() + 1, observed, {});
    ASSERT_FALSE(a.ok()) << "case " << c.name;
    EXPECT_THAT(a, StatusIs(_, HasSubstr(c.phrase))) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::tuning
