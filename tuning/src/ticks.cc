// Nice axis ticks for the report. See ticks.h.
#include "trialshim/tuning/ticks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>

namespace trialshim::tuning {
namespace {

// The 1-2-5 value nearest to x > 0 in log terms.
double Nice(double x) {
  double mag = std::pow(10, std::floor(std::log10(x)));
  double m = x / mag;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * mag;
}

// The ticks m * 10^k (m in `mantissas`) within [lo, hi], and the range
// widened to the nearest such values around it.
Ticks Mantissas(double lo, double hi, const std::vector<int>& mantissas) {
  Ticks t;
  t.lo = lo;
  t.hi = hi;
  int a = static_cast<int>(std::floor(std::log10(lo))) - 1;
  int b = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  std::vector<double> all;
  for (int k = a; k <= b; ++k) {
    for (int m : mantissas) all.push_back(m * std::pow(10, k));
  }
  // Relative slack: lo may be 0.1 computed as 0.1000000001.
  const double eps = 1e-9;
  for (double v : all) {
    if (v <= lo * (1 + eps)) t.lo = v;
  }
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (*it >= hi * (1 - eps)) t.hi = *it;
  }
  for (double v : all) {
    if (v >= t.lo * (1 - eps) && v <= t.hi * (1 + eps)) t.at.push_back(v);
  }
  return t;
}

}  // namespace

Ticks LinearTicks(double lo, double hi, int target, bool integers) {
  if (lo == hi) {
    double pad = integers ? 1 : (lo != 0 ? std::fabs(lo) * 0.1 : 1);
    // Beyond 2^53 a pad of 1 is lost to rounding (every trial at
    // -9223372036854775808), and an empty range has no step.
    if (lo - pad == lo) pad = std::fabs(lo) * 0.1;
    const double most = std::numeric_limits<double>::max();
    lo = std::max(lo - pad, -most);
    hi = std::min(hi + pad, most);
  }
  const int parts = std::max(1, target);
  // hi - lo overflows for a range wider than DBL_MAX: then its halves.
  double step = std::isfinite(hi - lo) ? Nice((hi - lo) / parts)
                                       : 2 * Nice((hi / 2 - lo / 2) / parts);
  if (integers) step = std::max(step, 1.0);
  double first = std::floor(lo / step + 1e-9);
  double last = std::ceil(hi / step - 1e-9);
  // The loop below counts in whole steps, never by adding 1 to a double
  // that 1 no longer changes (which ran for ever, growing without bound);
  // what the steps can not tick (an infinite step, a bound at DBL_MAX) gets
  // its two ends.
  constexpr double kMostTicks = 1000;
  if (!std::isfinite(step) || !(step > 0) || !std::isfinite(first * step) ||
      !std::isfinite(last * step) || !(last - first <= kMostTicks)) {
    Ticks t;
    t.lo = lo;
    t.hi = hi;
    t.at = {lo, hi};
    return t;
  }
  Ticks t;
  t.lo = first * step;
  t.hi = last * step;
  const int n = static_cast<int>(last - first);
  for (int i = 0; i <= n; ++i) {
    double v = (first + i) * step;
    t.at.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  }
  return t;
}

Ticks LogTicks(double lo, double hi, int target) {
  double a = std::floor(std::log10(lo) + 1e-9);
  double b = std::ceil(std::log10(hi) - 1e-9);
  if (b <= a) b = a + 1;
  double decades = b - a;
  if (decades + 1 >= target) {
    // Decades, every `every`-th (1, 2, 5, 10, ...) so that they stay few.
    double every = 1, first = a, last = b;
    while (last - first + 1 > target + 4) {
      every = Nice(every * 2.5);
      first = std::floor(a / every);
      last = std::ceil(b / every);
    }
    Ticks t;
    t.lo = std::pow(10, first * every);
    t.hi = std::pow(10, last * every);
    for (double k = first; k <= last; ++k) {
      t.at.push_back(std::pow(10, k * every));
    }
    return t;
  }
  Ticks t = Mantissas(lo, hi, {1, 2, 5});
  if (t.at.size() >= 3) return t;
  return Mantissas(lo, hi, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

std::string TickLabel(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.12g", v);
  if (std::fabs(v) >= 1e6 || std::string(buf).size() > 8) {
    std::snprintf(buf, sizeof(buf), "%.6g", v);
  }
  return buf;
}

}  // namespace trialshim::tuning
