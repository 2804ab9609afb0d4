// In-process companion of bench/search_bench.py: the time of one Bayesian
// suggestion at a given number of observations (the figure the issue asks
// for), and in-process regret runs for quick tuning of the search.
//
//   search_suggest_bench time [observations=100] [repeats=5]
//   search_suggest_bench regret <branin|hartmann6|mixed> <seed> <trials>
//
// `time` prints the median wall time of BayesianSearch::Suggest over
// `repeats` calls with that many observations of Hartmann-6 at random
// points. `regret` prints the best-so-far regret after each trial.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "trialshim/tuning/bayesian.h"
#include "trialshim/tuning/search.h"

namespace {

using trialshim::tuning::Assignment;
using trialshim::tuning::BayesianSearch;
using trialshim::tuning::Goal;
using trialshim::tuning::Observation;
using trialshim::tuning::ParameterSpec;
using trialshim::tuning::ParameterType;
using trialshim::tuning::RandomPoint;
using trialshim::tuning::ScaleType;

ParameterSpec Double(const std::string& id, double lo, double hi,
                     ScaleType scale = ScaleType::kLinear) {
  ParameterSpec p;
  p.id = id;
  p.type = ParameterType::kDouble;
  p.min_value = lo;
  p.max_value = hi;
  p.scale = scale;
  return p;
}

double Value(const Assignment& a, const std::string& id) {
  for (const auto& v : a) {
    if (v.id == id) return v.number;
  }
  return NAN;
}

std::string Text(const Assignment& a, const std::string& id) {
  for (const auto& v : a) {
    if (v.id == id) return v.text;
  }
  return "";
}

struct Problem {
  std::vector<ParameterSpec> params;
  double optimum;
  double (*f)(const Assignment&);
};

double Branin(const Assignment& a) {
  double x = Value(a, "x1"), y = Value(a, "x2");
  double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  return std::pow(y - b * x * x + c * x - 6, 2) + 10 * (1 - t) * std::cos(x) +
         10;
}

double Hartmann6(const Assignment& a) {
  static const double kA[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                  {0.05, 10, 17, 0.1, 8, 14},
                                  {3, 3.5, 1.7, 10, 17, 8},
                                  {17, 8, 0.05, 10, 0.1, 14}};
  static const double kP[4][6] = {
      {0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
      {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
      {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
      {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
  static const double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  double s = 0;
  for (int i = 0; i < 4; ++i) {
    double e = 0;
    for (int j = 0; j < 6; ++j) {
      double d = Value(a, "x" + std::to_string(j + 1)) - kP[i][j];
      e += kA[i][j] * d * d;
    }
    s += kAlpha[i] * std::exp(-e);
  }
  return -s;
}

// The mixed problem of bench/search_bench.py (bench/search/mixed.py).
double Mixed(const Assignment& a) {
  double lr = Value(a, "lr");
  double layers = Value(a, "layers");
  std::string opt = Text(a, "optimizer");
  double best_lr = opt == "adam" ? 1e-3 : opt == "sgd" ? 3e-2 : 1e-2;
  double offset = opt == "adam" ? 0 : opt == "sgd" ? 0.3 : 0.6;
  double l = std::log10(lr / best_lr);
  return l * l + 0.05 * (layers - 5) * (layers - 5) + offset;
}

Problem Get(const std::string& name) {
  if (name == "branin") {
    return {
        {Double("x1", -5, 10), Double("x2", 0, 15)}, 0.397887357729739, Branin};
  }
  if (name == "hartmann6") {
    std::vector<ParameterSpec> ps;
    for (int j = 1; j <= 6; ++j)
      ps.push_back(Double("x" + std::to_string(j), 0, 1));
    return {ps, -3.32236801141551, Hartmann6};
  }
  ParameterSpec layers;
  layers.id = "layers";
  layers.type = ParameterType::kInteger;
  layers.min_value = 1;
  layers.max_value = 12;
  ParameterSpec opt;
  opt.id = "optimizer";
  opt.type = ParameterType::kCategorical;
  opt.categorical_values = {"adam", "sgd", "rmsprop"};
  return {{Double("lr", 1e-5, 1, ScaleType::kLog), layers, opt}, 0, Mixed};
}

int Regret(const std::string& name, uint64_t seed, int trials) {
  Problem p = Get(name);
  BayesianSearch search(p.params, Goal::kMinimize, seed);
  std::vector<Observation> observed;
  double best = INFINITY;
  for (int t = 1; t <= trials; ++t) {
    auto a = search.Suggest(t, observed, {});
    if (!a.ok()) {
      std::fprintf(stderr, "%s\n", a.status().ToString().c_str());
      return 1;
    }
    double v = p.f(*a);
    best = std::min(best, v);
    observed.push_back({*a, Observation::Kind::kSucceeded, v});
    std::printf("%d %.6g\n", t, best - p.optimum);
  }
  return 0;
}

int Time(int n, int repeats) {
  Problem p = Get("hartmann6");
  BayesianSearch search(p.params, Goal::kMinimize, 1);
  std::vector<Observation> observed;
  for (int t = 1; t <= n; ++t) {
    Assignment a = RandomPoint(p.params, 7, t);
    observed.push_back({a, Observation::Kind::kSucceeded, p.f(a)});
  }
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto a = search.Suggest(n + 1 + r, observed, {});
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    if (!a.ok()) return 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "suggest at %d observations (Hartmann-6): median %.1f ms, "
      "min %.1f ms, max %.1f ms over %d calls\n",
      n, ms[ms.size() / 2], ms.front(), ms.back(), repeats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "time") {
    return Time(argc > 2 ? std::atoi(argv[2]) : 100,
                argc > 3 ? std::atoi(argv[3]) : 5);
  }
  if (mode == "regret" && argc == 5) {
    return Regret(argv[2], std::strtoull(argv[3], nullptr, 10),
                  std::atoi(argv[4]));
  }
  std::fprintf(stderr,
               "usage: search_suggest_bench time [observations] [repeats]\n"
               "       search_suggest_bench regret "
               "<branin|hartmann6|mixed> <seed> <trials>\n");
  return 2;
}
