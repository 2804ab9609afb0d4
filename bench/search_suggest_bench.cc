// In-process companion of bench/search_bench.py: the time of one Bayesian
// suggestion at a given number of observations, and an ask-and-tell loop
// that lets the script run a search without a process per trial.
//
//   search_suggest_bench time [observations=100] [repeats=5]
//   search_suggest_bench ask SPEC.yaml SEED TRIALS [random]
//
// `time` prints the median wall time of BayesianSearch::Suggest over
// `repeats` calls with that many observations of Hartmann-6 at random
// points. `ask` runs the job spec's search (the Bayesian default, or
// RANDOM_SEARCH) for TRIALS trials as `trialshim sweep --seed SEED` would
// one at a time; see AskTell.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "trialshim/search/bayesian.h"
#include "trialshim/search/search.h"
#include "trialshim/tuning/job_spec.h"

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

// Ask-and-tell: the search of a job spec run against a driver on stdin and
// stdout, so bench/search_bench.py can compute each trial in-process (its
// Python functions) without a process per trial. Writes each suggestion as
// one line of trial arguments, as `trialshim sweep` passes them, and reads
// back a line with the value ("infeasible" or "failed" for those outcomes).
int AskTell(const std::string& spec_path, uint64_t seed, int trials,
            bool random) {
  std::vector<trialshim::tuning::Diagnostic> diags;
  auto job = trialshim::tuning::LoadJobSpecFile(spec_path, &diags);
  if (!job.ok() || trialshim::tuning::HasErrors(diags)) {
    std::fprintf(stderr, "%s: not a valid job spec\n", spec_path.c_str());
    return 2;
  }
  const auto& params = job->parameters;
  BayesianSearch search(params, job->metrics.at(0).goal, seed);
  std::vector<Observation> observed;
  for (int t = 1; t <= trials; ++t) {
    auto a =
        random ? RandomPoint(params, seed, t) : search.Suggest(t, observed, {});
    if (!a.ok()) {
      std::fprintf(stderr, "%s\n", a.status().ToString().c_str());
      return 1;
    }
    std::string line;
    for (const auto& v : *a) line += (line.empty() ? "" : " ") + v.Arg();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    char reply[256];
    if (!std::fgets(reply, sizeof reply, stdin)) return 1;
    Observation o{*a, Observation::Kind::kSucceeded, 0};
    if (std::strncmp(reply, "infeasible", 10) == 0) {
      o.kind = Observation::Kind::kInfeasible;
    } else if (std::strncmp(reply, "failed", 6) == 0) {
      o.kind = Observation::Kind::kFailed;
    } else {
      o.value = std::strtod(reply, nullptr);
    }
    observed.push_back(std::move(o));
  }
  return 0;
}

int Time(int n, int repeats) {
  std::vector<ParameterSpec> params;
  for (int j = 1; j <= 6; ++j) {
    params.push_back(Double("x" + std::to_string(j), 0, 1));
  }
  BayesianSearch search(params, Goal::kMinimize, 1);
  std::vector<Observation> observed;
  for (int t = 1; t <= n; ++t) {
    Assignment a = RandomPoint(params, 7, t);
    observed.push_back({a, Observation::Kind::kSucceeded, Hartmann6(a)});
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
  if (mode == "ask" && (argc == 5 || argc == 6)) {
    return AskTell(argv[2], std::strtoull(argv[3], nullptr, 10),
                   std::atoi(argv[4]),
                   argc == 6 && std::string(argv[5]) == "random");
  }
  std::fprintf(
      stderr,
      "usage: search_suggest_bench time [observations] [repeats]\n"
      "       search_suggest_bench ask SPEC.yaml SEED TRIALS [random]\n");
  return 2;
}
