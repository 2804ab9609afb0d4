// OptunaStudy: hydra-optuna-sweeper 1.2.0's study with trialshim's search
// engine choosing the values. Backs the multirun of a trialshim app whose
// config says `hydra/sweeper: optuna` (app/src/multirun.cc): the app asks
// for a batch of n_jobs trials, runs them as Hydra's basic launcher does,
// tells each one's return value, and writes what the plugin writes.
//
// As the plugin (OptunaSweeperImpl.sweep) has it:
//  - the search space: hydra.sweeper.params, then the command line's sweep
//    overrides, read by config/sweepers.h (ReadOptunaSearchSpace); fixed
//    overrides go to every trial, after the searched ones;
//  - a trial's overrides: f"{name}={value}" of the Python value picked
//    (config::OptunaValueText: "0.001", "64", "pg", "True");
//  - n_trials (the GridSampler's lowered to the grid's size, logged as
//    the plugin logs it), n_jobs trials per batch, direction (one, or a
//    list: a multi-objective study);
//  - a return value as Optuna reads it: float(value), or one float per
//    direction from a list; what Optuna refuses (None, "abc", nan, a list
//    of the wrong length) is the plugin's error, which ends the multirun;
//  - the results (optimization_results.yaml and the lines logged): one
//    direction: name, best_params (the searched parameters only, fixed
//    ones left out), best_value of study.best_trial (the first trial told
//    with the best value); several: name and `solutions`, the Pareto front
//    ({params, values} per trial, in trial order, equal points all kept) as
//    study.best_trials gives it. The plugin writes no `best_trials` key.
//  - the study's name: hydra.sweeper.study_name, else Optuna's
//    "no-name-<uuid4>".
//
// Different on purpose: which values a trial gets. TPESampler, GPSampler,
// CmaEsSampler, NSGAIISampler, MOTPESampler (and a sampler trialshim does
// not know) run as trialshim's Bayesian search (bayesian.h; several
// directions through ParEGO's scalarization, pareto.h), RandomSampler and
// QMCSampler as its random search, GridSampler as its grid search (every
// point of the plugin's grid, in odometer order instead of Optuna's random
// order); the sampler's seed seeds them (null: 0, so a multirun repeats).
// A search over a categorical parameter sees its choices as categories.
// Storage is not used: the study lives in memory.
//
// Library code: nothing is printed. Thread-compatible.
#ifndef TRIALSHIM_SEARCH_OPTUNA_STUDY_H_
#define TRIALSHIM_SEARCH_OPTUNA_STUDY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/config/sweepers.h"
#include "trialshim/search/bayesian.h"
#include "trialshim/search/optuna_sweeper.h"
#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

// What the Optuna sweeper's sweep() runs: its settings, the search space,
// and what trialshim runs for its sampler.
struct OptunaSweep {
  OptunaSweeperConfig settings;
  config::OptunaSearchSpace space;
  // The sampler's class name ("TPESampler"), as the plugin logs it.
  std::string sampler = "TPESampler";
  // What trialshim runs in its place, and the seed it runs with.
  Algorithm algorithm = Algorithm::kUnspecified;
  uint64_t seed = 0;
};

// The sweep of `settings` (ReadOptunaSweeperConfig's), its parameters from
// `overrides` (settings.params as config::SweeperParamsOverrides writes
// them, then the command line's task overrides). InvalidArgument naming
// the key for a search space Optuna refuses.
StatusOr<OptunaSweep> ReadOptunaSweep(OptunaSweeperConfig settings,
                                      const std::vector<std::string>& overrides);

class OptunaStudy {
 public:
  // InvalidArgument for a GridSampler over a continuous distribution (the
  // plugin's "GridSampler only supports discrete distributions.").
  static StatusOr<OptunaStudy> Create(OptunaSweep sweep);

  const std::string& name() const { return name_; }
  // n_trials, as lowered to the grid's size.
  int64_t n_trials() const { return sweep_.settings.n_trials; }
  int64_t n_jobs() const { return sweep_.settings.n_jobs; }
  // What the plugin logs before its first batch ("Study name: ...").
  std::vector<std::string> StartLines() const;

  // The overrides of the next `n` trials (Optuna's study.ask() and the
  // plugin's _configure_trials), numbered on from those asked before.
  StatusOr<std::vector<std::vector<std::string>>> Ask(int64_t n);

  // Trial `number` (0-based, as asked) returned `value` (Hydra's
  // JobReturn.return_value): complete. DataLoss (exit 1, as the plugin's
  // ValueError ends Hydra) with the plugin's or Optuna's message when the
  // value is not what the directions need; the trial is then failed.
  Status Tell(int64_t number, const config::Node& value);

  // optimization_results.yaml as OmegaConf.save writes the plugin's
  // results, and the lines it logs ("Best parameters: {...}", ...).
  // DataLoss ("No trials are completed yet.") when none completed.
  struct Results {
    std::string yaml;
    std::vector<std::string> lines;
  };
  StatusOr<Results> Finish() const;

 private:
  struct Trial {
    config::Node params;            // a map: name -> the value picked
    Assignment point;               // the engine's view of it
    std::vector<double> values;     // once complete
    bool complete = false;
    bool told = false;
  };
  OptunaStudy() = default;
  StatusOr<Assignment> Next(int64_t trial_id) const;
  StatusOr<config::Node> Params(const Assignment& point) const;

  OptunaSweep sweep_;
  std::string name_;
  std::vector<Goal> goals_;
  // Per searched parameter: its choices (the grid's, with the
  // GridSampler), the one value of a parameter that has one, else none.
  std::vector<std::vector<config::Node>> values_;
  // The engine's space: the searched parameters with more than one value
  // (one value is no search), in order: choices as CATEGORICAL (their
  // indices), a stepped range as INTEGER k (low + k * step), the others as
  // INTEGER or DOUBLE on their scale.
  std::vector<ParameterSpec> params_;
  std::vector<Trial> trials_;
};

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_OPTUNA_STUDY_H_
