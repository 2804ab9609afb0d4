// Sweeps as Hydra's sweepers read them. A multirun's parameters are the
// entries of hydra.sweeper.params followed by the command line's task
// overrides; each sweeper turns that list into the overrides of its jobs:
//
//  - Hydra's basic sweeper (BasicSweeper.split_arguments): one axis per key,
//    a later override of a key replacing an earlier one in its place, every
//    choice or range value of a sweep (a glob's matching group options), or
//    the one value of a plain override; the jobs are the cartesian product.
//    Intervals are refused.
//  - hydra-optuna-sweeper 1.2.0 (create_params_from_overrides and
//    create_optuna_distribution_from_override): a sweep becomes an Optuna
//    distribution, a plain override a fixed parameter that every trial
//    gets, and a key both swept and fixed stays fixed. choice(...) and
//    comma lists are categorical; range(a, b, s) is an int (or, with a float
//    among its bounds, discrete-uniform) distribution whose stop b is
//    INCLUDED, as Optuna's high is; shuffle(range(...)) is categorical;
//    interval(a, b) is uniform over floats (interval() makes its bounds
//    floats), int(interval(...)) over ints, and tag(log, ...) log-uniform.
//    Optuna lowers a high that its step does not reach (range(0, 10, 3) is
//    0..9), and refuses low > high, log ranges from <= 0 (< 1 for ints) and
//    globs. Its GridSampler enumerates an int or discrete range without its
//    high (OptunaGridChoices), as the plugin's _to_grid_sampler_choices does.
//
// A job's override for a value is "<key element>=<text>": the basic sweeper
// writes Hydra's Transformer.str of the value (SweepItem::text), Optuna
// Python's str() of the value it picked (OptunaValueText), and both pass a
// plain override as get_value_element_as_str writes it
// (Override::value_text). The tests compare every reading here with the
// real sweepers (tests/config/sweepers_test.cc, the Anchors suite there).
#ifndef TRIALSHIM_CONFIG_SWEEPERS_H_
#define TRIALSHIM_CONFIG_SWEEPERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/node.h"
#include "trialshim/config/override.h"

namespace trialshim::config {

// hydra.sweeper.params (a map, or null for none) as both sweepers turn it
// into overrides: "key=value" per entry, in order. The values are the
// strings that the sweepers' Dict[str, str] holds: numbers and bools as
// OmegaConf converts them (32 -> "32", true -> "True"). InvalidArgument
// naming hydra.sweeper.params.KEY for a value that is a map, a list or
// null, which the sweeper's schema refuses.
StatusOr<std::vector<std::string>> SweeperParamsOverrides(const Node& params);

// ---- The basic sweeper.

struct BasicSweepAxis {
  // The key element, with its prefix and package: "db", "+x", "db@src".
  std::string key;
  // The values' text, in sweep order (one for a plain override).
  std::vector<std::string> texts;
  // The parsed override the axis comes from (the last one for its key).
  Override from;
};

// The axes of `overrides` (strings, parsed with Hydra's grammar). A glob
// expands over `repository`'s options of its group (sorted; Python's
// fnmatch, include minus exclude). InvalidArgument for an interval (Hydra's
// "BasicSweeper does not support sweep type : INTERVAL_SWEEP", then where
// to list values instead: the key's line in `params`, hydra.sweeper.params,
// when it set the key) or a parse error; a glob with a null repository is
// InvalidArgument too.
StatusOr<std::vector<BasicSweepAxis>> ReadBasicSweep(
    const std::vector<std::string>& overrides,
    const ConfigRepository* repository, const Node* params = nullptr);

// The jobs: itertools.product of the axes, each job its "key=text"
// overrides in axis order.
std::vector<std::vector<std::string>> BasicSweepJobs(
    const std::vector<BasicSweepAxis>& axes);

// The jobs in launch batches of at most `max_batch_size`
// (hydra.sweeper.max_batch_size; nullopt or -1: one batch, even of none).
std::vector<std::vector<std::vector<std::string>>> SplitIntoBatches(
    std::vector<std::vector<std::string>> jobs,
    std::optional<int64_t> max_batch_size);

// ---- hydra-optuna-sweeper 1.2.0.

struct OptunaDistribution {
  enum class Kind {
    kCategorical,      // CategoricalDistribution(choices)
    kIntUniform,       // IntUniformDistribution(low, high, step)
    kIntLogUniform,    // IntLogUniformDistribution(low, high)
    kUniform,          // UniformDistribution(low, high)
    kLogUniform,       // LogUniformDistribution(low, high)
    kDiscreteUniform,  // DiscreteUniformDistribution(low, high, q = step)
  };
  Kind kind = Kind::kCategorical;
  // kCategorical: what Transformer.encode makes of each choice: a str, int,
  // float or bool node as parsed; null, lists, dicts and quoted strings as
  // their Hydra text (a string node). Duplicates are kept, as Optuna keeps
  // them.
  std::vector<Node> choices;
  // The others: both ends included (high as Optuna lowers it), and the
  // step: the int step or q; 1 for kIntLogUniform; 0 for the continuous
  // kinds.
  double low = 0, high = 0, step = 0;

  bool is_int() const {
    return kind == Kind::kIntUniform || kind == Kind::kIntLogUniform;
  }
  bool is_log() const {
    return kind == Kind::kIntLogUniform || kind == Kind::kLogUniform;
  }
  // Optuna's distribution_to_json(distribution), byte for byte.
  std::string ToJson() const;
};

// One search-space parameter: the key element the trial's override names
// ("lr", "+x", "db@src") and its distribution.
struct OptunaParam {
  std::string name;
  OptunaDistribution distribution;
  Override from;  // the override it was read from
};

// A plain override: every trial gets "<name>=<text>".
struct FixedParam {
  std::string name;
  std::string text;  // Override::value_text
};

struct OptunaSearchSpace {
  std::vector<OptunaParam> params;  // in order of first appearance
  std::vector<FixedParam> fixed;    // likewise
  // What Optuna warns about: a range whose step does not reach its stop.
  std::vector<std::string> warnings;
};

// The search space of `overrides` (strings, parsed with Hydra's grammar), as
// the sweeper builds it: later overrides of a name replace earlier ones,
// and fixed names leave the search space. InvalidArgument with Optuna's
// message for what it refuses, naming the override.
StatusOr<OptunaSearchSpace> ReadOptunaSearchSpace(
    const std::vector<std::string>& overrides);

// create_optuna_distribution_from_override for one sweep override.
StatusOr<OptunaDistribution> OptunaDistributionOf(const Override& o);

// The values Optuna's GridSampler tries (the plugin's
// _to_grid_sampler_choices): the choices, or an int or discrete range's
// values from low by step, high excluded. InvalidArgument ("GridSampler
// only supports discrete distributions.") for the continuous kinds.
StatusOr<std::vector<Node>> OptunaGridChoices(const OptunaDistribution& d);

// The defaults of hydra-optuna-sweeper 1.2.0's sampler config whose
// _target_ is `target` ("optuna.samplers.TPESampler": seed null,
// n_startup_trials 10, ...), or null for a sampler it has no config for.
Node OptunaSamplerDefaults(std::string_view target);

// The text after "name=" in a trial's override for `value` (Optuna writes
// f"{name}={value}"): Python's str() ("0.001", "True", "64").
std::string OptunaValueText(const Node& value);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_SWEEPERS_H_
