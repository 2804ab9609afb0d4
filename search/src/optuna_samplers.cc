// Optuna's samplers as Vertex's algorithms; see optuna_samplers.h.
#include "trialshim/search/optuna_samplers.h"

namespace trialshim::tuning {
namespace {

const OptunaSampler kSamplers[] = {
    {"optuna.samplers.TPESampler", "tpe", Algorithm::kUnspecified,
     "Vertex has no TPE; ALGORITHM_UNSPECIFIED is Vertex's Bayesian "
     "optimization (a Gaussian process)"},
    {"optuna.samplers.GPSampler", "gp", Algorithm::kUnspecified, nullptr},
    {"optuna.samplers.RandomSampler", "random", Algorithm::kRandomSearch,
     nullptr},
    {"optuna.samplers.GridSampler", "grid", Algorithm::kGridSearch, nullptr},
    {"optuna.samplers.QMCSampler", "qmc", Algorithm::kRandomSearch,
     "Vertex has no quasi-Monte Carlo sampling; RANDOM_SEARCH is the "
     "nearest (points chosen without regard to results)"},
    {"optuna.samplers.CmaEsSampler", "cmaes", Algorithm::kUnspecified,
     "Vertex has no CMA-ES; ALGORITHM_UNSPECIFIED is Vertex's Bayesian "
     "optimization"},
    {"optuna.samplers.NSGAIISampler", "nsgaii", Algorithm::kUnspecified,
     "Vertex has no NSGA-II; ALGORITHM_UNSPECIFIED is Vertex's Bayesian "
     "optimization (several metrics are a multi-objective study)"},
    {"optuna.samplers.MOTPESampler", "motpe", Algorithm::kUnspecified,
     "Vertex has no MOTPE; ALGORITHM_UNSPECIFIED is Vertex's Bayesian "
     "optimization (several metrics are a multi-objective study)"},
};

}  // namespace

const OptunaSampler* FindOptunaSampler(std::string_view target,
                                       std::string_view option) {
  for (const OptunaSampler& k : kSamplers) {
    if (target.empty() ? option == k.option : target == k.target) return &k;
  }
  return nullptr;
}

}  // namespace trialshim::tuning
