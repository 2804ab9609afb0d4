// Hydra 1.3.2's own configs as data: what its pkg://hydra.conf source and the
// structured configs of its core plugins hand to the defaults list. Values,
// key order and packages are Hydra's (tests/data/hydra_app checks them
// against `--cfg hydra` and `--cfg all` of the real thing); comments and
// formatting are ours.
#include "hydra_conf.h"

#include <algorithm>

namespace trialshim::config::internal {
namespace {

// HydraConf (hydra/conf/__init__.py) with its defaults list; "???" is
// MISSING. Its content is merged last of Hydra's configs, so its keys follow
// those of the groups it selects.
constexpr std::string_view kHydraConfig = R"(defaults:
- output: default
- launcher: basic
- sweeper: basic
- help: default
- hydra_help: default
- hydra_logging: default
- job_logging: default
- callbacks: null
- env: default
mode: null
searchpath: []
run:
  dir: ???
sweep:
  dir: ???
  subdir: ???
hydra_logging: ???
job_logging: ???
sweeper: ???
launcher: ???
callbacks: {}
help:
  app_name: ???
  header: ???
  footer: ???
  template: ???
hydra_help:
  hydra_help: ???
  template: ???
output_subdir: .hydra
overrides:
  hydra: []
  task: []
job:
  name: ???
  chdir: null
  override_dirname: ???
  id: ???
  num: ???
  config_name: ???
  env_set: {}
  env_copy: []
  config:
    override_dirname:
      kv_sep: '='
      item_sep: ','
      exclude_keys: []
runtime:
  version: ???
  version_base: ???
  cwd: ???
  config_sources: ???
  output_dir: ???
  choices: {}
verbose: false
)";

constexpr std::string_view kOutputDefault = R"(# @package hydra
run:
  dir: outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}
sweep:
  dir: multirun/${now:%Y-%m-%d}/${now:%H-%M-%S}
  subdir: ${hydra.job.num}
)";

constexpr std::string_view kBasicLauncher =
    "_target_: hydra._internal.core_plugins.basic_launcher.BasicLauncher\n";

constexpr std::string_view kBasicSweeper =
    R"(_target_: hydra._internal.core_plugins.basic_sweeper.BasicSweeper
max_batch_size: null
params: null
)";

constexpr std::string_view kHelpDefault = R"(app_name: ${hydra.job.name}
header: |
  ${hydra.help.app_name} is powered by Hydra.
footer: |
  Powered by Hydra (https://hydra.cc)
  Use --hydra-help to view Hydra specific help
template: |
  ${hydra.help.header}
  == Configuration groups ==
  Compose your configuration from those groups (group=option)

  $APP_CONFIG_GROUPS

  == Config ==
  Override anything in the config (foo.bar=value)

  $CONFIG

  ${hydra.help.footer}
)";

constexpr std::string_view kHydraHelpDefault = R"(template: |
  Hydra (${hydra.runtime.version})
  See https://hydra.cc for more info.

  == Flags ==
  $FLAGS_HELP

  == Configuration groups ==
  Compose your configuration from those groups (For example, append hydra/job_logging=disabled to command line)

  $HYDRA_CONFIG_GROUPS

  Use '--cfg hydra' to Show the Hydra config.
)";

constexpr std::string_view kHydraLoggingDefault = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][HYDRA] %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: simple
    stream: ext://sys.stdout
root:
  level: INFO
  handlers: [console]
loggers:
  logging_example:
    level: DEBUG
disable_existing_loggers: false
)";

constexpr std::string_view kHydraLoggingDebug = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][%(name)s][%(levelname)s] - %(message)s'
handlers:
  file:
    class: logging.FileHandler
    mode: w
    formatter: simple
    filename: hydra-${hydra.job.name}.log
    delay: true
root:
  level: ERROR
  handlers: [file]
loggers:
  hydra:
    level: DEBUG
disable_existing_loggers: false
)";

constexpr std::string_view kLoggingDisabled = R"(version: 1
root:
  level: ERROR
disable_existing_loggers: true
)";

constexpr std::string_view kLoggingNone = R"(version: 1
root: null
disable_existing_loggers: false
)";

constexpr std::string_view kJobLoggingDefault = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][%(name)s][%(levelname)s] - %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: simple
    stream: ext://sys.stdout
  file:
    class: logging.FileHandler
    formatter: simple
    filename: ${hydra.runtime.output_dir}/${hydra.job.name}.log
root:
  level: INFO
  handlers: [console, file]
disable_existing_loggers: false
)";

constexpr std::string_view kJobLoggingStdout = R"(version: 1
formatters:
  simple:
    format: '%(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: simple
    stream: ext://sys.stdout
root:
  level: INFO
  handlers: [console]
disable_existing_loggers: false
)";

// hydra-optuna-sweeper 1.2.0 (hydra_plugins/hydra_optuna_sweeper/config.py):
// OptunaSweeperConf with its defaults list, and the sampler configs of
// hydra/sweeper/sampler. The plugin is not Hydra's, but the sweep of
// lightning-hydra-template's hparams_search/ needs it, and `trialshim job`
// and `trialshim sweep` read what it composes (config/sweepers.h). The fields'
// types are in hydra_conf.cc.
constexpr std::string_view kOptunaSweeper = R"(defaults:
- sampler: tpe
_target_: hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper
sampler: ???
direction: minimize
storage: null
study_name: null
n_trials: 20
n_jobs: 2
search_space: null
params: null
custom_search_space: null
)";

constexpr std::string_view kTpeSampler = R"(_target_: optuna.samplers.TPESampler
seed: null
consider_prior: true
prior_weight: 1.0
consider_magic_clip: true
consider_endpoints: false
n_startup_trials: 10
n_ei_candidates: 24
multivariate: false
warn_independent_sampling: true
)";

constexpr std::string_view kRandomSampler =
    "_target_: optuna.samplers.RandomSampler\nseed: null\n";

constexpr std::string_view kCmaEsSampler =
    R"(_target_: optuna.samplers.CmaEsSampler
seed: null
x0: null
sigma0: null
independent_sampler: null
warn_independent_sampling: true
consider_pruned_trials: false
restart_strategy: null
inc_popsize: 2
use_separable_cma: false
source_trials: null
)";

constexpr std::string_view kNsgaIISampler =
    R"(_target_: optuna.samplers.NSGAIISampler
seed: null
population_size: 50
mutation_prob: null
crossover_prob: 0.9
swapping_prob: 0.5
constraints_func: null
)";

constexpr std::string_view kMoTpeSampler =
    R"(_target_: optuna.samplers.MOTPESampler
seed: null
consider_prior: true
prior_weight: 1.0
consider_magic_clip: true
consider_endpoints: false
n_startup_trials: 10
n_ehvi_candidates: 24
)";

constexpr std::string_view kGridSampler =
    "_target_: optuna.samplers.GridSampler\n_partial_: true\n";

const BuiltinConfig kBuiltins[] = {
    {"hydra/config", kHydraConfig, true},
    {"hydra/env/default", ""},
    {"hydra/help/default", kHelpDefault},
    {"hydra/hydra_help/default", kHydraHelpDefault},
    {"hydra/hydra_logging/default", kHydraLoggingDefault},
    {"hydra/hydra_logging/disabled", kLoggingDisabled},
    {"hydra/hydra_logging/hydra_debug", kHydraLoggingDebug},
    {"hydra/hydra_logging/none", kLoggingNone},
    {"hydra/job_logging/default", kJobLoggingDefault},
    {"hydra/job_logging/disabled", kLoggingDisabled},
    {"hydra/job_logging/none", kLoggingNone},
    {"hydra/job_logging/stdout", kJobLoggingStdout},
    {"hydra/launcher/basic", kBasicLauncher, true},
    {"hydra/output/default", kOutputDefault},
    {"hydra/sweeper/basic", kBasicSweeper, true},
    {"hydra/sweeper/optuna", kOptunaSweeper, true},
    {"hydra/sweeper/sampler/cmaes", kCmaEsSampler, true},
    {"hydra/sweeper/sampler/grid", kGridSampler, true},
    {"hydra/sweeper/sampler/motpe", kMoTpeSampler, true},
    {"hydra/sweeper/sampler/nsgaii", kNsgaIISampler, true},
    {"hydra/sweeper/sampler/random", kRandomSampler, true},
    {"hydra/sweeper/sampler/tpe", kTpeSampler, true},
};

// Options of Hydra's groups that only a plugin provides (the plugins in
// Hydra's repository, 1.3 branch), with the package to install; the Optuna
// sweeper's 1.2.0 configs are above.
const PluginOption kPluginOptions[] = {
    {"hydra/hydra_logging", "colorlog", "hydra-colorlog"},
    {"hydra/job_logging", "colorlog", "hydra-colorlog"},
    {"hydra/launcher", "joblib", "hydra-joblib-launcher"},
    {"hydra/launcher", "ray", "hydra-ray-launcher"},
    {"hydra/launcher", "ray_aws", "hydra-ray-launcher"},
    {"hydra/launcher", "rq", "hydra-rq-launcher"},
    {"hydra/launcher", "submitit_local", "hydra-submitit-launcher"},
    {"hydra/launcher", "submitit_slurm", "hydra-submitit-launcher"},
    {"hydra/sweeper", "ax", "hydra-ax-sweeper"},
    {"hydra/sweeper", "nevergrad", "hydra-nevergrad-sweeper"},
    // Samplers of hydra-optuna-sweeper after 1.2.0 (its repository's main
    // branch, unreleased): 1.2.0 refuses them.
    {"hydra/sweeper/sampler", "gp",
     "hydra-optuna-sweeper (a development version: 1.2.0 has no gp)"},
    {"hydra/sweeper/sampler", "qmc",
     "hydra-optuna-sweeper (a development version: 1.2.0 has no qmc)"},
};

}  // namespace

const BuiltinConfig* FindBuiltinConfig(std::string_view path) {
  for (const BuiltinConfig& c : kBuiltins) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

std::vector<std::string> BuiltinGroupOptions(std::string_view group) {
  std::vector<std::string> options;
  for (const BuiltinConfig& c : kBuiltins) {
    size_t slash = c.path.rfind('/');
    if (c.path.substr(0, slash) == group) {
      options.emplace_back(c.path.substr(slash + 1));
    }
  }
  return options;
}

const std::vector<std::string>& BuiltinGroups() {
  // Asked for every argument a trial translates: made once.
  static const std::vector<std::string>* const groups = [] {
    auto* out = new std::vector<std::string>{"hydra"};
    for (const BuiltinConfig& c : kBuiltins) {
      std::string group(c.path.substr(0, c.path.rfind('/')));
      if (std::find(out->begin(), out->end(), group) == out->end()) {
        out->push_back(group);
      }
    }
    out->push_back("hydra/callbacks");  // a group with no options
    return out;
  }();
  return *groups;
}

const PluginOption* FindPluginOption(std::string_view group,
                                     std::string_view option) {
  for (const PluginOption& p : kPluginOptions) {
    if (p.group == group && p.option == option) return &p;
  }
  return nullptr;
}

std::vector<std::string_view> PluginOptions(std::string_view group) {
  std::vector<std::string_view> out;
  for (const PluginOption& p : kPluginOptions) {
    if (p.group == group) out.push_back(p.option);
  }
  return out;
}

}  // namespace trialshim::config::internal
