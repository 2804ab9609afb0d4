// BayesianSearch: the values of the next trial from the trials so far, as
// Vertex's default algorithm (ALGORITHM_UNSPECIFIED, Bayesian optimisation)
// chooses them. Backs `trialshim sweep` when the job names no algorithm.
//
// The space. Every parameter of the tree (conditional children included)
// owns GP inputs in [0,1] on its scale (search.h's ScaleDouble: linear, log,
// reverse log): DOUBLE continuous; INTEGER at the centre of its slice of the
// scaled range and rounded back (search.h's ScaleInteger); DISCRETE at its
// value's position on the scale, snapped to the nearest value; CATEGORICAL
// one-hot, one input per category. A child whose parent's value does not
// activate it (or whose parent is itself inactive) has its inputs at a
// fixed value outside the unit range: -0.5 for ordinal inputs, all zeros
// for one-hot. So every inactive point looks alike on those inputs, never
// like an active value, at a bounded kernel distance.
//
// The design. Trials 1..InitialTrials() take the points of a maximin Latin
// hypercube (the best of 32 seeded ones by smallest pairwise distance) on
// those unit coordinates: 10 points (5 for a single parameter). Fewer (the
// d + 1 this search used to take) left the model to start from the first
// good basin it saw, and on rugged problems it stayed there; 10 is also the
// startup of Optuna's TPE. Later trials with fewer than two usable
// observations (say, every trial failed) draw a random point (search.h's
// RandomPoint) until the model has data.
//
// The model. A Gaussian process (gaussian_process.h) on the succeeded
// trials, with INFEASIBLE trials imputed at the worst succeeded value (how
// Vertex models them is not documented; the worst value steers the search
// away without inventing a scale) and FAILED trials left out (a crash says
// nothing about the metric) but never suggested again. Before the fit the
// outputs are warped as Vizier's GP bandit (the open-source form of Vertex's
// default) warps them, half-rank: values worse than the median are replaced
// by the normal quantiles of their ranks, scaled by the spread of the better
// half, which keeps its values. A few very bad trials (the walls of Levy or
// Styblinski-Tang) then no longer flatten the model of the good region,
// while its differences, which decide where to go, are kept exactly; a full
// rank transform lost them (Branin after 20 trials, with EI: regret 1.6
// instead of 0.05).
//
// The acquisition. The next point minimises the lower confidence bound
// mean - 1.8 sd (`exploration`, Vizier's coefficient) inside a trust region:
// within L-inf distance 0.25 of a finished trial on the unit inputs
// (categories and inactive inputs are free, so every branch stays
// reachable). Expected improvement, used before, settled in the first basin
// it liked on rugged problems: once the model sees ripples as noise, EI's
// hope of beating a lucky best value lies only where the variance is
// largest, at the corners of the space, which on a bowl are the worst
// places; the bound ranks points by what the model expects, and the trust
// region keeps the far corners out of reach until trials lead there. Points
// already run or pending are not suggested, until every candidate has run
// (a small discrete space): then the best one repeats. The bound is
// maximised over 1024 random points, 1024 more in the trust region's boxes
// around the trials and perturbations of the best trials, then a
// stochastic local search (steps on one or all inputs, the step size halved
// after failures) from the best few; INTEGER and DISCRETE moves always
// change the value, CATEGORICAL ones pick another category. Measured
// against Optuna's TPE and random search in bench/README.md ("search").
//
// Batches. Trials started but not finished (`pending`) enter the model as a
// kriging believer: at the posterior mean of the fitted model, which makes
// the variance there vanish and pushes the next suggestion elsewhere.
//
// Determinism. Suggest is a pure function of (parameters, goal, seed,
// trial_id, observations, pending); the sweep persists each suggestion
// before the trial starts, so a resumed sweep reruns a trial with the very
// values it had. The goal is respected: MAXIMIZE searches for the largest
// value. Thread-compatible.
#ifndef TRIALSHIM_SEARCH_BAYESIAN_H_
#define TRIALSHIM_SEARCH_BAYESIAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/search/gaussian_process.h"
#include "trialshim/search/search.h"
#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

// A finished trial as the search sees it.
struct Observation {
  enum class Kind { kSucceeded, kInfeasible, kFailed };
  Assignment parameters;
  Kind kind = Kind::kSucceeded;
  double value = 0;  // the metric, for kSucceeded (finite)
};

struct BayesianOptions {
  // Trials from the initial design; 0 takes 10 (5 for a single parameter).
  // Default: 0.
  int initial_trials = 0;
  // The weight of the posterior standard deviation in the acquisition,
  // mean - exploration * sd (Vizier's GP bandit uses 1.8). Default: 1.8.
  double exploration = 1.8;
  // The trust region: suggestions stay within this L-inf distance (on unit
  // inputs) of a finished trial; 0 (or 1 and more) turns it off.
  // Default: 0.25.
  double trust_radius = 0.25;
  // Half-rank warping of the outputs before the fit (see above). Default:
  // true.
  bool warp_outputs = true;
  // Random points the acquisition is evaluated at (and as many in the trust
  // region). Default: 1024.
  int random_candidates = 1024;
  // Starts of the local search (the best distinct candidates). Default: 5.
  int local_starts = 5;
  // Steps of each local search. Default: 80.
  int local_steps = 80;
  // Trials the hyperparameters are fitted on: beyond it, the best half and
  // an even spread of the rest (the model then conditions on all trials).
  // Keeps a suggestion near 0.1-0.2 s however long the sweep. Default: 120.
  int max_fit_points = 120;
  // The Gaussian process fit (its seed is replaced per trial). Default: {}.
  GpFitOptions gp;
};

class BayesianSearch {
 public:
  // `params` as in the job spec; `goal` kUnspecified means MAXIMIZE.
  BayesianSearch(std::vector<ParameterSpec> params, Goal goal, uint64_t seed,
                 BayesianOptions options = {});

  // The values of trial `trial_id` (1-based). InvalidArgument when an
  // observation names a parameter value the space does not have (a
  // category that is not listed, a missing active parameter).
  StatusOr<Assignment> Suggest(int64_t trial_id,
                               const std::vector<Observation>& observed,
                               const std::vector<Assignment>& pending) const;

  // The number of design trials (see above).
  int InitialTrials() const;

  // One parameter of the flattened tree, parents before their children.
  struct Dim {
    ParameterSpec spec;                // its conditionals are in later Dims
    int parent = -1;                   // index of the parent Dim, -1 at the top
    std::vector<int64_t> parent_ints;  // the parent values that activate it
    std::vector<double> parent_discrete;
    std::vector<std::string> parent_categories;
    std::vector<double> units;  // DISCRETE: each value's unit position
    int column = 0;             // its first GP input
    int width = 1;              // its GP inputs: 1, or one per category
  };

 private:
  std::vector<ParameterSpec> params_;
  bool minimize_;
  uint64_t seed_;
  BayesianOptions options_;
  std::vector<Dim> dims_;
  int columns_ = 0;
};

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_BAYESIAN_H_
