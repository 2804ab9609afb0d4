// Tests for search/src/early_stopping.cc: the median and decay-curve rules
// on synthetic learning curves, stopped or not, and at which step.
#include "trialshim/search/early_stopping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace trialshim::tuning {
namespace {

using Curve = std::function<double(int)>;

// q (1 - 1/(step + 1)): rises towards q, as an accuracy does.
Curve Rising(double q) {
  return [q](int s) { return q * (1 - 1.0 / (s + 1)); };
}
// q + 1/step: falls towards q, as a loss does.
Curve Falling(double q) {
  return [q](int s) { return q + 1.0 / s; };
}

// Steps 1..n of a curve, one second apart.
std::vector<Measurement> Steps(const Curve& f, int n) {
  std::vector<Measurement> out;
  for (int s = 1; s <= n; ++s) out.push_back({s, s * 1.0, f(s)});
  return out;
}

// Completed trials that ran `steps` steps; their final value is the last.
std::vector<CompletedCurve> Completed(const std::vector<Curve>& curves,
                                      int steps) {
  std::vector<CompletedCurve> out;
  for (const Curve& f : curves) {
    CompletedCurve c{Steps(f, steps), 0};
    c.final_value = c.measurements.back().value;
    out.push_back(c);
  }
  return out;
}

// The first step at which the rule stops a trial that reports `current`
// one step at a time; nullopt if it runs to the end.
std::optional<int> StopsAt(StoppingRule rule, Goal goal,
                           const std::vector<CompletedCurve>& completed,
                           const Curve& current, int steps) {
  std::vector<Measurement> seen;
  for (const Measurement& m : Steps(current, steps)) {
    seen.push_back(m);
    if (ShouldStop(rule, /*use_elapsed=*/false, goal, completed, seen).stop) {
      return static_cast<int>(m.step);
    }
  }
  return std::nullopt;
}

TEST(EarlyStoppingTest, RulesOnSyntheticCurves) {
  const std::vector<Curve> up = {Rising(1.0), Rising(0.9), Rising(0.95)};
  const std::vector<Curve> down = {Falling(0.3), Falling(0.35), Falling(0.4)};
  struct Case {
    const char* name;
    StoppingRule rule;
    Goal goal;
    std::vector<Curve> completed;
    Curve current;
    std::optional<int> want;  // the step it stops at, or none
  } cases[] = {
      // Median: the best so far against the median of running averages.
      {"median bad rising", StoppingRule::kMedian, Goal::kMaximize, up,
       Rising(0.2), 1},
      {"median best rising", StoppingRule::kMedian, Goal::kMaximize, up,
       Rising(1.1), std::nullopt},
      // Its best beats the running averages (they lag the curve) although
      // it ends below the best trial.
      {"median slightly worse", StoppingRule::kMedian, Goal::kMaximize, up,
       Rising(0.96), std::nullopt},
      // At step 1 a running average is the value itself.
      {"median worse than the median trial", StoppingRule::kMedian,
       Goal::kMaximize, up, Rising(0.94), 1},
      {"median bad falling", StoppingRule::kMedian, Goal::kMinimize, down,
       Falling(2.0), 1},
      // Good early, then a plateau at 0.6: the median running average,
      // 0.35 + H(s)/s, falls below it at step 13.
      {"median plateau", StoppingRule::kMedian, Goal::kMinimize, down,
       [](int s) { return std::max(0.6, 0.3 + 1.0 / s); }, 13},
      {"median good falling", StoppingRule::kMedian, Goal::kMinimize, down,
       Falling(0.1), std::nullopt},
      {"median two completed",
       StoppingRule::kMedian,
       Goal::kMaximize,
       {Rising(1.0), Rising(0.9)},
       Rising(0.2),
       std::nullopt},
      // Decay curve: the predicted end against the best end.
      {"decay bad rising", StoppingRule::kDecayCurve, Goal::kMaximize, up,
       Rising(0.2), 4},
      {"decay best rising", StoppingRule::kDecayCurve, Goal::kMaximize, up,
       Rising(1.1), std::nullopt},
      {"decay just below best", StoppingRule::kDecayCurve, Goal::kMaximize, up,
       Rising(0.99), 4},
      {"decay bad falling", StoppingRule::kDecayCurve, Goal::kMinimize, down,
       Falling(1.0), 4},
      {"decay good falling", StoppingRule::kDecayCurve, Goal::kMinimize, down,
       Falling(0.2), std::nullopt},
      {"decay two completed",
       StoppingRule::kDecayCurve,
       Goal::kMaximize,
       {Rising(1.0), Rising(0.9)},
       Rising(0.2),
       std::nullopt},
      {"none", StoppingRule::kNone, Goal::kMaximize, up, Rising(0.0),
       std::nullopt},
  };
  for (const Case& c : cases) {
    std::optional<int> got =
        StopsAt(c.rule, c.goal, Completed(c.completed, 20), c.current, 20);
    EXPECT_EQ(got, c.want) << "case " << c.name;
  }
}

// Completed curves noisy on the way (their final values are not) widen
// the decay rule's error: a trial a little below the best is no longer
// stopped, one far below still is.
TEST(EarlyStoppingTest, DecayCurveCalibratesOnCompletedTrials) {
  auto noisy = [](double q, double amplitude) -> Curve {
    return [=](int s) {
      double noise = s < 20 ? amplitude * std::sin(s * 2.3 + q * 37) : 0;
      return q * (1 - 1.0 / (s + 1)) + noise;
    };
  };
  struct Case {
    const char* name;
    double amplitude;
    double current;
    bool want_stop;
  } cases[] = {
      {"smooth, slightly below", 0, 0.97, true},
      {"noisy, slightly below", 0.05, 0.97, false},
      {"noisy, far below", 0.05, 0.3, true},
  };
  for (const Case& c : cases) {
    std::vector<CompletedCurve> completed;
    for (double q : {1.0, 0.9, 0.95, 0.92}) {
      CompletedCurve cc{Steps(noisy(q, c.amplitude), 20), 0};
      cc.final_value = cc.measurements.back().value;
      completed.push_back(cc);
    }
    bool stopped = StopsAt(StoppingRule::kDecayCurve, Goal::kMaximize,
                           completed, Rising(c.current), 10)
                       .has_value();
    EXPECT_EQ(stopped, c.want_stop) << "case " << c.name;
  }
}

// With useElapsedDuration trials are compared at the same elapsed time:
// the completed trials here report every 10 s, so at 5 s none has a
// measurement yet and nothing is stopped.
TEST(EarlyStoppingTest, ElapsedDuration) {
  std::vector<CompletedCurve> completed;
  for (double q : {1.0, 0.9, 0.95}) {
    CompletedCurve c;
    for (int s = 1; s <= 10; ++s) {
      c.measurements.push_back({s, s * 10.0, Rising(q)(s)});
    }
    c.final_value = c.measurements.back().value;
    completed.push_back(c);
  }
  struct Case {
    const char* name;
    double elapsed;
    bool want_stop;
  } cases[] = {{"before any", 5, false}, {"after the first", 12, true}};
  for (const Case& c : cases) {
    std::vector<Measurement> current = {{1, c.elapsed, 0.01}};
    EXPECT_EQ(ShouldStop(StoppingRule::kMedian, /*use_elapsed=*/true,
                         Goal::kMaximize, completed, current)
                  .stop,
              c.want_stop)
        << "case " << c.name;
    // By step, step 1 exists in every completed trial.
    EXPECT_TRUE(ShouldStop(StoppingRule::kMedian, /*use_elapsed=*/false,
                           Goal::kMaximize, completed, current)
                    .stop)
        << "case " << c.name;
  }
}

TEST(EarlyStoppingTest, FitDecayCurveRecoversTheModel) {
  struct Case {
    const char* name;
    double a, b, c;
  } cases[] = {{"c=0.5", 2, -1, 0.5}, {"c=1", 0.3, 4, 1}, {"c=2", -1, 3, 2}};
  for (const Case& k : cases) {
    std::vector<double> x, y;
    for (int s = 0; s < 12; ++s) {
      x.push_back(s * 3);
      y.push_back(k.a + k.b * std::pow(s * 3 + 1, -k.c));
    }
    DecayFit fit = FitDecayCurve(x, y);
    ASSERT_TRUE(fit.ok) << "case " << k.name;
    EXPECT_EQ(fit.c, k.c) << "case " << k.name;
    EXPECT_NEAR(fit.a, k.a, 1e-9) << "case " << k.name;
    EXPECT_NEAR(fit.b, k.b, 1e-9) << "case " << k.name;
    EXPECT_NEAR(fit.rms, 0, 1e-9) << "case " << k.name;
  }
  EXPECT_FALSE(FitDecayCurve({3, 3}, {1, 2}).ok) << "case one distinct x";
}

}  // namespace
}  // namespace trialshim::tuning
