// Tests for tuning/src/ticks.cc: 1-2-5 ticks on linear axes (integers for
// trial numbers), decades and 1-2-5 subdivisions on log axes, and labels.
#include "trialshim/tuning/ticks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace trialshim::tuning {
namespace {

// Ticks compared with a relative tolerance (they are computed as k * step).
void ExpectTicks(const Ticks& got, double lo, double hi,
                 const std::vector<double>& at, const std::string& name) {
  EXPECT_NEAR(got.lo, lo, std::fabs(lo) * 1e-12) << "case " << name;
  EXPECT_NEAR(got.hi, hi, std::fabs(hi) * 1e-12) << "case " << name;
  ASSERT_EQ(got.at.size(), at.size()) << "case " << name;
  for (size_t i = 0; i < at.size(); ++i) {
    EXPECT_NEAR(got.at[i], at[i], std::fabs(at[i]) * 1e-12)
        << "case " << name << " tick " << i;
  }
}

TEST(TicksTest, Linear) {
  struct Case {
    const char* name;
    double lo, hi;
    bool integers;
    double want_lo, want_hi;
    std::vector<double> want;
  } cases[] = {
      {"unit", 0, 0.87, false, 0, 1, {0, 0.2, 0.4, 0.6, 0.8, 1}},
      {"offset", 3.2, 9.1, false, 3, 10, {3, 4, 5, 6, 7, 8, 9, 10}},
      {"fives", 0, 23, false, 0, 25, {0, 5, 10, 15, 20, 25}},
      {"negative",
       -0.013,
       0.004,
       false,
       -0.014,
       0.004,
       {-0.014, -0.012, -0.01, -0.008, -0.006, -0.004, -0.002, 0, 0.002,
        0.004}},
      {"large",
       1200,
       98000,
       false,
       0,
       100000,
       {0, 20000, 40000, 60000, 80000, 100000}},
      {"trials 1-3", 1, 3, true, 1, 3, {1, 2, 3}},
      {"trials 1-30", 1, 30, true, 0, 30, {0, 5, 10, 15, 20, 25, 30}},
      {"trials 1-7", 1, 7, true, 1, 7, {1, 2, 3, 4, 5, 6, 7}},
      {"one trial", 1, 1, true, 0, 2, {0, 1, 2}},
      {"one value",
       0.5,
       0.5,
       false,
       0.44,
       0.56,
       {0.44, 0.46, 0.48, 0.5, 0.52, 0.54, 0.56}},
      {"zero", 0, 0, false, -1, 1, {-1, -0.5, 0, 0.5, 1}},
  };
  for (const Case& c : cases) {
    ExpectTicks(LinearTicks(c.lo, c.hi, 5, c.integers), c.want_lo, c.want_hi,
                c.want, c.name);
  }
}

TEST(TicksTest, IntegerTicksAreWhole) {
  for (int n = 1; n <= 200; ++n) {
    for (double v : LinearTicks(1, n, 5, true).at) {
      EXPECT_EQ(v, std::round(v)) << "case trials 1-" << n;
    }
  }
}

// Extreme data: every trial at int64's smallest (a pad of 1 is lost to
// rounding there), the doubles' whole width (hi - lo overflows), DBL_MAX
// itself. The axis still comes back, few ticks, ascending, finite: before,
// the first spun for ever adding 1 to -9.2e18, growing to gigabytes.
TEST(TicksTest, ExtremeRangesEndWithFewFiniteTicks) {
  const double kMax = std::numeric_limits<double>::max();
  struct Case {
    const char* name;
    double lo, hi;
    bool integers;
  } cases[] = {
      {"every trial at int64's smallest", -9223372036854775808.0,
       -9223372036854775808.0, true},
      {"every trial at 2^63", 9223372036854775808.0, 9223372036854775808.0,
       false},
      {"int64's whole range", -9223372036854775808.0, 9223372036854775808.0,
       true},
      {"the doubles' whole width", -1e308, 1e308, false},
      {"DBL_MAX to DBL_MAX", kMax, kMax, false},
      {"-DBL_MAX to DBL_MAX", -kMax, kMax, false},
      {"a hair of a huge number", 1e18, 1e18 + 4096, true},
  };
  for (const Case& c : cases) {
    Ticks t = LinearTicks(c.lo, c.hi, 5, c.integers);
    ASSERT_GE(t.at.size(), 2u) << "case " << c.name;
    EXPECT_LE(t.at.size(), 20u) << "case " << c.name;
    EXPECT_TRUE(std::isfinite(t.lo) && std::isfinite(t.hi)) << "case "
                                                            << c.name;
    EXPECT_LE(t.lo, c.lo) << "case " << c.name;
    EXPECT_GE(t.hi, c.hi) << "case " << c.name;
    for (size_t i = 0; i < t.at.size(); ++i) {
      EXPECT_TRUE(std::isfinite(t.at[i])) << "case " << c.name;
      if (i > 0) {
        EXPECT_LT(t.at[i - 1], t.at[i]) << "case " << c.name;
      }
    }
  }
}

TEST(TicksTest, Log) {
  struct Case {
    const char* name;
    double lo, hi;
    double want_lo, want_hi;
    std::vector<double> want;
  } cases[] = {
      {"five decades", 1e-5, 0.1, 1e-5, 0.1, {1e-5, 1e-4, 1e-3, 1e-2, 0.1}},
      {"inside decades", 3e-5, 0.07, 1e-5, 0.1, {1e-5, 1e-4, 1e-3, 1e-2, 0.1}},
      {"two decades: 1-2-5",
       0.003,
       0.2,
       0.002,
       0.2,
       {0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2}},
      {"one decade", 16, 256, 10, 500, {10, 20, 50, 100, 200, 500}},
      {"under a decade", 0.3, 0.45, 0.3, 0.5, {0.3, 0.4, 0.5}},
      {"many decades",
       1e-12,
       1e3,
       1e-12,
       1e4,
       {1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1, 1e2, 1e4}},
      {"one value", 0.01, 0.01, 0.01, 0.01, {0.01}},
  };
  for (const Case& c : cases) {
    ExpectTicks(LogTicks(c.lo, c.hi), c.want_lo, c.want_hi, c.want, c.name);
  }
}

TEST(TicksTest, Labels) {
  struct Case {
    double v;
    const char* want;
  } cases[] = {
      {0.1 + 0.2, "0.3"}, {1e-5, "1e-05"},      {250, "250"},
      {0, "0"},           {-0.014, "-0.014"},   {1500000, "1.5e+06"},
      {12345, "12345"},   {0.00012, "0.00012"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TickLabel(c.v), c.want) << "case " << c.v;
  }
}

}  // namespace
}  // namespace trialshim::tuning
