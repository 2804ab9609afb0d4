// Grid enumeration, seeded random search, scales and Vertex's value text.
#include "trialshim/search/search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

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

// INTEGER as an int, DOUBLE and DISCRETE as Python's repr(float): the
// evidence is in docs/vertex-values.md.
TEST(SearchTest, VertexValueText) {
  struct Case {
    const char* name;
    ParameterValue value;
    const char* want;
  } cases[] = {
      {"integer", {"bs", ParameterType::kInteger, 64, ""}, "--bs=64"},
      {"negative integer", {"k", ParameterType::kInteger, -3, ""}, "--k=-3"},
      {"double", {"lr", ParameterType::kDouble, 0.001, ""}, "--lr=0.001"},
      {"double 1e-4 stays fixed",
       {"lr", ParameterType::kDouble, 1e-4, ""},
       "--lr=0.0001"},
      {"double tiny", {"lr", ParameterType::kDouble, 1e-05, ""}, "--lr=1e-05"},
      {"double huge", {"n", ParameterType::kDouble, 1e16, ""}, "--n=1e+16"},
      {"double shortest",
       {"lr", ParameterType::kDouble, 0.1 + 0.2, ""},
       "--lr=0.30000000000000004"},
      {"double integral", {"w", ParameterType::kDouble, 3, ""}, "--w=3.0"},
      {"discrete integral",
       {"u", ParameterType::kDiscrete, 128, ""},
       "--u=128.0"},
      {"discrete fraction",
       {"u", ParameterType::kDiscrete, 0.25, ""},
       "--u=0.25"},
      {"categorical verbatim",
       {"o", ParameterType::kCategorical, 0, "a,b c"},
       "--o=a,b c"},
      {"dotted id",
       {"model.width", ParameterType::kInteger, 8, ""},
       "--model.width=8"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.value.Arg(), c.want) << "case " << c.name;
  }
}

TEST(SearchTest, GridEnumeratesInOdometerOrder) {
  std::vector<ParameterSpec> params = {Categorical("opt", {"adam", "sgd"}),
                                       Integer("bs", 1, 3),
                                       Discrete("w", {0.5, 64})};
  StatusOr<uint64_t> size = GridSize(params);
  ASSERT_OK(size);
  EXPECT_EQ(*size, 12u);
  std::vector<std::string> want = {
      "--opt=adam --bs=1 --w=0.5", "--opt=adam --bs=1 --w=64.0",
      "--opt=adam --bs=2 --w=0.5", "--opt=adam --bs=2 --w=64.0",
      "--opt=adam --bs=3 --w=0.5", "--opt=adam --bs=3 --w=64.0",
      "--opt=sgd --bs=1 --w=0.5",  "--opt=sgd --bs=1 --w=64.0",
      "--opt=sgd --bs=2 --w=0.5",  "--opt=sgd --bs=2 --w=64.0",
      "--opt=sgd --bs=3 --w=0.5",  "--opt=sgd --bs=3 --w=64.0"};
  std::set<std::string> distinct;
  for (uint64_t i = 0; i < want.size(); ++i) {
    StatusOr<Assignment> point = GridPoint(params, i);
    ASSERT_OK(point);
    EXPECT_EQ(Args(*point), want[i]) << "case point " << i;
    distinct.insert(Args(*point));
  }
  EXPECT_EQ(distinct.size(), 12u);
  EXPECT_FALSE(GridPoint(params, 12).ok()) << "past the end";
}

TEST(SearchTest, GridRefusals) {
  struct Case {
    const char* name;
    std::vector<ParameterSpec> params;
    const char* phrase;
  } cases[] = {
      {"double", {Integer("a", 1, 2), Double("lr", 0, 1)}, "'lr' is DOUBLE"},
      {"conditional double",
       {WithChild(Categorical("opt", {"sgd"}), {"sgd"}, Double("m", 0, 1))},
       "'m' is DOUBLE"},
  };
  for (const Case& c : cases) {
    StatusOr<uint64_t> size = GridSize(c.params);
    ASSERT_FALSE(size.ok()) << "case " << c.name;
    EXPECT_THAT(size, StatusIs(_, HasSubstr(c.phrase))) << "case " << c.name;
  }
}

// A parent's values each followed by the grid of the children they
// activate (search.h), as one digit of the odometer.
TEST(SearchTest, GridWithConditionalParameters) {
  ParameterSpec opt =
      WithChild(WithChild(Categorical("opt", {"adam", "sgd", "rms"}), {"sgd"},
                          Discrete("m", {0.5, 0.9})),
                {"sgd", "rms"}, Integer("k", 1, 2));
  // An INTEGER parent: "deep" only when n is 2.
  ParameterSpec nested = Integer("n", 1, 2);
  nested.conditionals.push_back(
      {{}, {2}, {}, {}, Categorical("deep", {"x", "y"})});
  struct Case {
    const char* name;
    std::vector<ParameterSpec> params;
    std::vector<std::string> want;
  } cases[] = {
      {"children of one parent",
       {opt},
       {"--opt=adam", "--opt=sgd --m=0.5 --k=1", "--opt=sgd --m=0.5 --k=2",
        "--opt=sgd --m=0.9 --k=1", "--opt=sgd --m=0.9 --k=2", "--opt=rms --k=1",
        "--opt=rms --k=2"}},
      {"beside a plain parameter",
       {Integer("bs", 1, 2), nested},
       {"--bs=1 --n=1", "--bs=1 --n=2 --deep=x", "--bs=1 --n=2 --deep=y",
        "--bs=2 --n=1", "--bs=2 --n=2 --deep=x", "--bs=2 --n=2 --deep=y"}},
  };
  for (const Case& c : cases) {
    StatusOr<uint64_t> size = GridSize(c.params);
    ASSERT_OK(size);
    ASSERT_EQ(*size, c.want.size()) << "case " << c.name;
    for (uint64_t i = 0; i < c.want.size(); ++i) {
      StatusOr<Assignment> point = GridPoint(c.params, i);
      ASSERT_OK(point);
      EXPECT_EQ(Args(*point), c.want[i]) << "case " << c.name << " point " << i;
    }
    EXPECT_FALSE(GridPoint(c.params, c.want.size()).ok())
        << "case " << c.name << ": past the end";
  }
}

TEST(SearchTest, GridSizeSaturates) {
  std::vector<ParameterSpec> params(4, Integer("big", 0, 1000000000));
  StatusOr<uint64_t> size = GridSize(params);
  ASSERT_OK(size);
  EXPECT_EQ(*size, UINT64_MAX);
}

// Every range is sampled inside its bounds, counted exactly, or refused
// with its reason; nothing is undefined (the sanitizer build checks the
// casts). Specs built in code may hold what a job file can not.
TEST(SearchTest, ExtremeRangesAreSampledInsideCountedExactlyOrRefused) {
  const double k53 = 9007199254740992.0;  // 2^53
  struct Case {
    std::string name;
    ParameterSpec spec;
    std::string grid;  // the grid's size, or the refusal's text
  } cases[] = {
      {"int64's whole range",
       Integer("seed", std::numeric_limits<int64_t>::min(),
               std::numeric_limits<int64_t>::max()),
       "parameter 'seed' has a bound beyond +-2^53 (9007199254740992)"},
      {"0 to int64's largest",
       Integer("seed", 0, std::numeric_limits<int64_t>::max()),
       "parameter 'seed' has a bound beyond +-2^53"},
      {"+-2^53", Integer("seed", -kMaxIntegerBound, kMaxIntegerBound),
       "18014398509481985"},
      {"doubles' whole width", Double("x", -1e308, 1e308),
       "GRID_SEARCH needs INTEGER"},
      {"doubles' whole width, reverse log",
       Double("x", 1e-300, 1.7e308, ScaleType::kReverseLog),
       "GRID_SEARCH needs INTEGER"},
      {"log over 600 decades", Double("x", 1e-300, 1e300, ScaleType::kLog),
       "GRID_SEARCH needs INTEGER"},
  };
  for (const Case& c : cases) {
    StatusOr<uint64_t> size = GridSize({c.spec});
    if (size.ok()) {
      EXPECT_EQ(std::to_string(*size), c.grid) << "case " << c.name;
    } else {
      EXPECT_THAT(size, StatusIs(StatusCode::kInvalidArgument,
                                 HasSubstr(c.grid)))
          << "case " << c.name;
    }
    std::set<double> seen;
    bool below_zero = false;
    for (int64_t trial = 1; trial <= 200; ++trial) {
      Assignment a = RandomPoint({c.spec}, 7, trial);
      ASSERT_EQ(a.size(), 1u) << "case " << c.name;
      double v = a[0].number;
      EXPECT_TRUE(std::isfinite(v)) << "case " << c.name << ": " << v;
      EXPECT_GE(v, c.spec.min_value) << "case " << c.name;
      EXPECT_LE(v, c.spec.max_value) << "case " << c.name;
      if (c.spec.type == ParameterType::kInteger) {
        EXPECT_EQ(v, std::floor(v)) << "case " << c.name;
        EXPECT_LE(std::fabs(v), k53) << "case " << c.name;
      }
      below_zero = below_zero || v < 0;
      seen.insert(v);
    }
    // A reverse log scale puts nearly every draw at max (its small steps
    // are there), so only the others must spread.
    if (c.spec.scale != ScaleType::kReverseLog) {
      EXPECT_GT(seen.size(), 150u) << "case " << c.name
                                   << ": the draws spread over the range";
    }
    if (c.spec.min_value < 0 && c.spec.max_value > 0) {
      EXPECT_TRUE(below_zero) << "case " << c.name
                              << ": both sides of 0 are drawn";
    }
  }
}

TEST(SearchTest, RandomIsReproducibleAndInRange) {
  std::vector<ParameterSpec> params = {
      Double("lr", 1e-5, 1e-1, ScaleType::kLog), Integer("bs", 16, 256),
      Discrete("w", {64, 128, 256}), Categorical("opt", {"adam", "sgd"})};
  std::set<std::string> seen;
  for (int64_t trial = 1; trial <= 200; ++trial) {
    Assignment a = RandomPoint(params, 42, trial);
    EXPECT_EQ(Args(a), Args(RandomPoint(params, 42, trial)))
        << "case trial " << trial;
    ASSERT_EQ(a.size(), 4u);
    EXPECT_GE(a[0].number, 1e-5) << "case trial " << trial;
    EXPECT_LE(a[0].number, 1e-1) << "case trial " << trial;
    EXPECT_GE(a[1].number, 16) << "case trial " << trial;
    EXPECT_LE(a[1].number, 256) << "case trial " << trial;
    EXPECT_EQ(a[1].number, std::floor(a[1].number)) << "case trial " << trial;
    seen.insert(Args(a));
  }
  EXPECT_EQ(seen.size(), 200u) << "trials get different values";
  EXPECT_NE(Args(RandomPoint(params, 42, 1)), Args(RandomPoint(params, 43, 1)))
      << "the seed matters";
  // Pinned values: the same seed gives the same sweep on every machine.
  EXPECT_EQ(Args(RandomPoint(params, 0, 1)),
            "--lr=0.00011926726997079594 --bs=173 --w=128.0 --opt=sgd");
}

// Fraction of draws below the geometric / arithmetic midpoint shows the
// scale: about half below the log midpoint for a log scale.
TEST(SearchTest, Scales) {
  struct Case {
    const char* name;
    ScaleType scale;
    double below_arith_mid;  // expected share of values < (min+max)/2
  } cases[] = {
      {"linear", ScaleType::kLinear, 0.5},
      {"unspecified is linear", ScaleType::kUnspecified, 0.5},
      // log10 uniform over [1e-4, 1]: P(x < 0.5) = (log10(0.5)+4)/4.
      {"log", ScaleType::kLog, (std::log10(0.5) + 4) / 4},
      // Mirrored: dense near the top.
      {"reverse log", ScaleType::kReverseLog, 1 - (std::log10(0.5) + 4) / 4},
  };
  for (const Case& c : cases) {
    std::vector<ParameterSpec> params = {Double("x", 1e-4, 1, c.scale)};
    int below = 0;
    const int n = 20000;
    for (int64_t t = 1; t <= n; ++t) {
      double x = RandomPoint(params, 1, t)[0].number;
      ASSERT_GE(x, 1e-4) << "case " << c.name;
      ASSERT_LE(x, 1) << "case " << c.name;
      below += x < 0.5;
    }
    EXPECT_NEAR(static_cast<double>(below) / n, c.below_arith_mid, 0.015)
        << "case " << c.name;
  }
}

TEST(SearchTest, IntegerScalesCoverEveryValueFairly) {
  struct Case {
    const char* name;
    ScaleType scale;
  } cases[] = {{"linear", ScaleType::kLinear}, {"log", ScaleType::kLog}};
  for (const Case& c : cases) {
    std::map<int64_t, int> count;
    for (int i = 0; i < 8000; ++i) {
      ++count[ScaleInteger(1, 4, c.scale, (i + 0.5) / 8000)];
    }
    ASSERT_EQ(count.size(), 4u) << "case " << c.name;
    if (c.scale == ScaleType::kLinear) {
      for (const auto& [k, n] : count) {
        EXPECT_NEAR(n, 2000, 2) << "case " << c.name << " value " << k;
      }
    } else {
      // log over [0.5, 4.5]: 1 gets log(1.5/0.5)/log(9) of the draws.
      EXPECT_NEAR(count[1], 8000 * std::log(3.0) / std::log(9.0), 2)
          << "case " << c.name;
      EXPECT_GT(count[1], count[4]) << "case " << c.name;
    }
  }
}

TEST(SearchTest, ConditionalChildrenOnlyWhenActive) {
  ParameterSpec opt = Categorical("optimizer", {"adam", "sgd"});
  opt.conditionals.push_back(
      {{}, {}, {}, {"sgd"}, Double("optimizer.momentum", 0.5, 0.99)});
  std::vector<ParameterSpec> params = {opt};
  int with = 0, without = 0;
  for (int64_t t = 1; t <= 100; ++t) {
    Assignment a = RandomPoint(params, 3, t);
    if (a[0].text == "sgd") {
      ASSERT_EQ(a.size(), 2u) << "case trial " << t;
      EXPECT_EQ(a[1].id, "optimizer.momentum") << "case trial " << t;
      ++with;
    } else {
      EXPECT_EQ(a.size(), 1u) << "case trial " << t;
      ++without;
    }
  }
  EXPECT_GT(with, 20);
  EXPECT_GT(without, 20);
}

// DiscreteValueCondition (study.proto): "The Epsilon of the value matching
// is 1e-10"; INTEGER and CATEGORICAL conditions match exactly.
TEST(SearchTest, ConditionsMatchAsStudyProtoSays) {
  const ParameterSpec child = Integer("depth", 1, 4);
  const ParameterValue half{"width", ParameterType::kDiscrete, 0.5, ""};
  const ParameterValue two{"layers", ParameterType::kInteger, 2, ""};
  const ParameterValue relu{"act", ParameterType::kCategorical, 0, "relu"};
  struct Case {
    const char* name;
    ConditionalParameterSpec condition;
    ParameterValue parent;
    bool want;
  } cases[] = {
      {"discrete, same value", {{}, {}, {0.5}, {}, child}, half, true},
      {"discrete, 1e-12 off", {{}, {}, {0.5 + 1e-12}, {}, child}, half, true},
      {"discrete, 1e-9 off", {{}, {}, {0.5 + 1e-9}, {}, child}, half, false},
      {"discrete, one of two", {{}, {}, {0.1, 0.5}, {}, child}, half, true},
      {"integer, same value", {{}, {2}, {}, {}, child}, two, true},
      {"integer, another value", {{}, {3}, {}, {}, child}, two, false},
      {"categorical, same value", {{}, {}, {}, {"relu"}, child}, relu, true},
      {"categorical, case differs", {{}, {}, {}, {"ReLU"}, child}, relu, false},
      {"condition of another type", {{}, {}, {0.5}, {}, child}, two, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Activates(c.condition, c.parent), c.want) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::tuning
