// hydra.sweeper of hydra-optuna-sweeper read once: the node resolved whole
// (as Hydra's instantiate resolves it), typed fields, and errors that name
// the key and where it was written. (optuna_study_test.cc checks what the
// study makes of the fields; job_writer_test.cc and multirun_test.cc the
// two readers.)
#include "trialshim/search/optuna_sweeper.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::tuning {
namespace {

// A config tree whose config.yaml is `hydra/sweeper: optuna` and
// `sweeper` (lines under hydra.sweeper:, from the file's line 7), with
// the task key name: digits.
StatusOr<OptunaSweeperConfig> Read(const testing::TempDir& dir,
                                   const std::string& sweeper,
                                   const std::vector<std::string>& overrides = {},
                                   std::string_view runner = "a trialshim app") {
  dir.Write("config.yaml",
            "defaults:\n"
            "  - override hydra/sweeper: optuna\n"
            "  - _self_\n"
            "name: digits\n"
            "hydra:\n"
            "  sweeper:\n" +
                sweeper);
  config::ComposeRequest r;
  r.config_path = dir.path();
  r.config_name = "config";
  r.mode = config::ComposeMode::kMultirun;
  r.overrides = overrides;
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult master, config::Compose(r));
  return ReadOptunaSweeperConfig(master, runner);
}

TEST(OptunaSweeperConfigTest, ReadsEverySettingFromTheResolvedNode) {
  testing::TempDir dir;
  StatusOr<OptunaSweeperConfig> c =
      Read(dir,
           "    n_trials: 7\n"
           "    n_jobs: 3\n"
           "    direction: [maximize, minimize]\n"
           "    study_name: ${name}-study\n"
           "    storage: sqlite:///${name}.db\n"
           "    sampler:\n"
           "      seed: 5\n"
           "    params:\n"
           "      lr: interval(0.1, 1)\n",
           {"hydra/sweeper/sampler=random"});
  ASSERT_OK(c);
  EXPECT_EQ(c->n_trials, 7);
  EXPECT_EQ(c->n_jobs, 3);
  EXPECT_EQ(c->directions, (std::vector<std::string>{"maximize", "minimize"}));
  EXPECT_EQ(c->study_name, "digits-study");  // resolved against the task
  EXPECT_EQ(c->storage, config::Node::String("sqlite:///digits.db"));
  EXPECT_EQ(c->sampler_target, "optuna.samplers.RandomSampler");
  EXPECT_EQ(c->sampler_option, "random");
  ASSERT_NE(c->known_sampler, nullptr);
  EXPECT_EQ(c->known_sampler->algorithm, Algorithm::kRandomSearch);
  EXPECT_EQ(c->seed, 5);
  ASSERT_TRUE(c->params.is_map());
  EXPECT_EQ(*c->params.Get("lr"), config::Node::String("interval(0.1, 1)"));

  // The plugin's defaults (config.py's OptunaSweeperConf).
  testing::TempDir plain;
  StatusOr<OptunaSweeperConfig> d = Read(plain, "    params: null\n");
  ASSERT_OK(d);
  EXPECT_EQ(d->n_trials, 20);
  EXPECT_EQ(d->n_jobs, 2);
  EXPECT_EQ(d->directions, std::vector<std::string>{"minimize"});
  EXPECT_FALSE(d->study_name.has_value());
  EXPECT_TRUE(d->storage.is_null());
  EXPECT_EQ(d->sampler_option, "tpe");
  EXPECT_FALSE(d->seed.has_value());
}

// Each refusal names the key; one written in the file says where
// (file:line:col), one given on the command line has no place to name.
TEST(OptunaSweeperConfigTest, RefusesNamingTheKeyAndWhereItWasWritten) {
  struct Case {
    std::string name;
    std::string sweeper;
    std::vector<std::string> overrides;
    std::string runner;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"n_jobs 0 in the file", "    n_jobs: 0\n", {}, "a trialshim app",
       "config.yaml:7:13: hydra.sweeper.n_jobs must be an int >= 1, got 0"},
      {"n_trials 0 on the command line", "    n_trials: 3\n",
       {"hydra.sweeper.n_trials=0"}, "a trialshim app",
       "hydra.sweeper.n_trials must be an int >= 1, got 0"},
      {"a misspelt direction in the file", "    direction: maximise\n", {},
       "a trialshim app",
       "config.yaml:7:16: hydra.sweeper.direction: 'maximise' is not a "
       "direction: expected minimize or maximize (did you mean "
       "'maximize'?)"},
      {"no direction (the plugin's _get_directions fails on None)",
       "    direction: null\n", {}, "a trialshim app",
       "hydra.sweeper.direction must be minimize, maximize or a list of "
       "them, got None"},
      {"Python code, for a Vertex job", "    custom_search_space: m.ext\n", {},
       "a Vertex job",
       "config.yaml:7:26: hydra.sweeper.custom_search_space: the search "
       "space is extended by Python code, which a Vertex job can not run"},
      {"an interpolation anywhere in the node (Hydra resolves it whole)",
       "    sampler:\n      seed: ${nope}\n", {}, "a trialshim app",
       "nope"},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    StatusOr<OptunaSweeperConfig> r = Read(dir, c.sweeper, c.overrides, c.runner);
    ASSERT_FALSE(r.ok()) << "case " << c.name;
    EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::tuning
