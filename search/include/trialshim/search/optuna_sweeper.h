// OptunaSweeperConfig: hydra.sweeper of hydra-optuna-sweeper 1.2.0, read
// once from a composed config into typed fields. What reads the Optuna
// sweeper's settings reads them here: the job writer (tuning/job_writer.h,
// a Vertex job of the sweep) and an app's -m (optuna_study.h, the study
// itself), so both see one value and one error for each setting.
//
// The rules are the plugin's. Hydra instantiates the sweeper from the
// resolved hydra.sweeper node (hydra/utils.py instantiate: OmegaConf.resolve
// on the node, its root the whole config), so the node is resolved at once:
// an interpolation that fails anywhere in it fails the sweep, as there. The
// fields and their types are config.py's OptunaSweeperConf (checked when the
// config is composed, config/src/hydra_conf.cc); _impl.py's
// OptunaSweeperImpl reads them: _get_directions (a str or a list of them),
// n_trials and n_jobs (its `while n_trials_to_go > 0` loop of batches of
// n_jobs), study_name and storage as optuna.create_study takes them.
//
// A file of its own, apart from optuna_study.cc, so that the `trialshim`
// binary (the job writer) does not link the study.
#ifndef TRIALSHIM_SEARCH_OPTUNA_SWEEPER_H_
#define TRIALSHIM_SEARCH_OPTUNA_SWEEPER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/node.h"
#include "trialshim/search/optuna_samplers.h"

namespace trialshim::tuning {

struct OptunaSweeperConfig {
  // hydra.sweeper.params: null, or a map of override texts.
  config::Node params;
  // "minimize" or "maximize", one per objective (_get_directions).
  std::vector<std::string> directions;
  int64_t n_trials = 20;
  int64_t n_jobs = 2;
  // hydra.sweeper.sampler (a map; null when the config has none), its
  // _target_ ("" when it has none), the hydra/sweeper/sampler option that
  // chose it ("tpe"; "" when none) and what trialshim knows of it (nullptr
  // when nothing).
  config::Node sampler;
  std::string sampler_target;
  std::string sampler_option;
  const OptunaSampler* known_sampler = nullptr;
  // sampler.seed when it is an int.
  std::optional<int64_t> seed;
  std::optional<std::string> study_name;
  // hydra.sweeper.storage as written (null: the study lives in memory).
  config::Node storage;
};

// hydra.sweeper of `master` (composed with `hydra/sweeper: optuna`),
// resolved once. InvalidArgument, naming the key (and where it was written,
// file:line:col, when it came from a file), for what the plugin refuses or
// trialshim can not run there: custom_search_space (Python code, which
// `runner`, "a trialshim app" or "a Vertex job", can not run),
// search_space (the plugin's sweep() asserts it is null), a direction
// other than minimize and maximize, n_trials or n_jobs below 1 (the plugin
// runs no trial, or loops for ever); an interpolation that does not
// resolve, as config::ResolveHydra says it. `now`: ResolveHydra's (the
// times ${now:...} gives a multirun).
StatusOr<OptunaSweeperConfig> ReadOptunaSweeperConfig(
    const config::ComposeResult& master, std::string_view runner,
    std::map<std::string, config::Node>* now = nullptr);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_OPTUNA_SWEEPER_H_
