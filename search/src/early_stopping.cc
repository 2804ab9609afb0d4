// The median and decay-curve stopping rules. See early_stopping.h.
#include "trialshim/search/early_stopping.h"

#include <algorithm>
#include <cmath>
#include <cstdio>


namespace trialshim::tuning {
namespace {

// A measurement's position on the x axis the rules compare trials at.
double Position(const Measurement& m, bool use_elapsed) {
  return use_elapsed ? m.elapsed_seconds : static_cast<double>(m.step);
}

bool Better(double a, double b, Goal goal) {
  return goal == Goal::kMinimize ? a < b : a > b;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The finite (x, y) points of a curve at positions <= until.
void Points(const std::vector<Measurement>& curve, bool use_elapsed,
            double until, std::vector<double>* x, std::vector<double>* y) {
  for (const Measurement& m : curve) {
    double p = Position(m, use_elapsed);
    if (p <= until && std::isfinite(m.value)) {
      x->push_back(p);
      y->push_back(m.value);
    }
  }
}

// Six significant digits: a reason, not a record.
std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string Where(double at, bool use_elapsed) {
  return use_elapsed ? "after " + Short(at) + "s"
                     : "at step " + Short(at);
}

StoppingDecision Median(bool use_elapsed, Goal goal,
                        const std::vector<CompletedCurve>& completed,
                        const std::vector<double>& x,
                        const std::vector<double>& y) {
  double at = *std::max_element(x.begin(), x.end());
  std::vector<double> means;
  for (const CompletedCurve& c : completed) {
    std::vector<double> cx, cy;
    Points(c.measurements, use_elapsed, at, &cx, &cy);
    if (cy.empty()) continue;
    double sum = 0;
    for (double v : cy) sum += v;
    means.push_back(sum / cy.size());
  }
  if (means.size() < kMinCompletedTrials) return {};
  double best = y[0];
  for (double v : y) {
    if (Better(v, best, goal)) best = v;
  }
  double median = Median(means);
  if (!Better(median, best, goal)) return {};
  return {true, "median rule " + Where(at, use_elapsed) + ": best value " +
                    Short(best) + " is worse than the median " +
                    Short(median) + " of " +
                    std::to_string(means.size()) +
                    " completed trials' running averages"};
}

StoppingDecision DecayCurve(bool use_elapsed, Goal goal,
                            const std::vector<CompletedCurve>& completed,
                            const std::vector<double>& x,
                            const std::vector<double>& y) {
  if (x.size() < kMinDecayPoints) return {};
  double at = *std::max_element(x.begin(), x.end());
  std::vector<double> ends, errors;
  double best = 0;
  size_t counted = 0;
  for (const CompletedCurve& c : completed) {
    if (c.measurements.empty() || !std::isfinite(c.final_value)) continue;
    if (counted++ == 0 || Better(c.final_value, best, goal)) {
      best = c.final_value;
    }
    double end = 0;
    for (const Measurement& m : c.measurements) {
      end = std::max(end, Position(m, use_elapsed));
    }
    ends.push_back(end);
    std::vector<double> cx, cy;
    Points(c.measurements, use_elapsed, at, &cx, &cy);
    if (cx.size() < kMinDecayPoints || end <= at) continue;
    DecayFit fit = FitDecayCurve(cx, cy);
    if (fit.ok) errors.push_back(c.final_value - fit.At(end));
  }
  if (counted < kMinCompletedTrials) return {};
  double horizon = Median(ends);
  if (at >= horizon) return {};
  DecayFit fit = FitDecayCurve(x, y);
  if (!fit.ok) return {};
  double sigma = fit.rms;
  if (!errors.empty()) {
    double sq = 0;
    for (double e : errors) sq += e * e;
    sigma = std::max(sigma, std::sqrt(sq / errors.size()));
  }
  double predicted = fit.At(horizon);
  double optimistic =
      goal == Goal::kMinimize ? predicted - 2 * sigma : predicted + 2 * sigma;
  if (!std::isfinite(optimistic) || !Better(best, optimistic, goal)) return {};
  return {true, "decay curve " + Where(at, use_elapsed) + ": predicted " +
                    Short(predicted) + " +/- " + Short(sigma) +
                    " " + Where(horizon, use_elapsed) +
                    ", unlikely to reach the best " + Short(best)};
}

}  // namespace

double DecayFit::At(double x) const { return a + b * std::pow(x + 1, -c); }

DecayFit FitDecayCurve(const std::vector<double>& x,
                       const std::vector<double>& y) {
  DecayFit best;
  double best_sse = INFINITY;
  for (double c : {0.25, 0.5, 1.0, 2.0}) {
    // Ordinary least squares of y on u = (x + 1)^-c.
    size_t n = x.size();
    double su = 0, sy = 0;
    for (size_t i = 0; i < n; ++i) {
      su += std::pow(x[i] + 1, -c);
      sy += y[i];
    }
    double mu = su / n, my = sy / n, suu = 0, suy = 0;
    for (size_t i = 0; i < n; ++i) {
      double du = std::pow(x[i] + 1, -c) - mu;
      suu += du * du;
      suy += du * (y[i] - my);
    }
    if (!(suu > 1e-300)) continue;  // fewer than 2 distinct x
    DecayFit f;
    f.ok = true;
    f.c = c;
    f.b = suy / suu;
    f.a = my - f.b * mu;
    double sse = 0;
    for (size_t i = 0; i < n; ++i) {
      double r = y[i] - f.At(x[i]);
      sse += r * r;
    }
    f.rms = std::sqrt(sse / n);
    if (sse < best_sse) {
      best_sse = sse;
      best = f;
    }
  }
  return best;
}

StoppingDecision ShouldStop(StoppingRule rule, bool use_elapsed, Goal goal,
                            const std::vector<CompletedCurve>& completed,
                            const std::vector<Measurement>& current) {
  if (rule == StoppingRule::kNone) return {};
  std::vector<double> x, y;
  Points(current, use_elapsed, INFINITY, &x, &y);
  if (x.empty()) return {};
  return rule == StoppingRule::kMedian
             ? Median(use_elapsed, goal, completed, x, y)
             : DecayCurve(use_elapsed, goal, completed, x, y);
}

}  // namespace trialshim::tuning
