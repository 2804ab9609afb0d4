// `trialshim job` as a user runs it: the spec of conf-lightning's
// hparams_search (lightning-hydra-template's shape), which `trialshim check
// --werror` accepts; usage errors exit 2 saying what is missing; a sweep
// Vertex can not express is refused naming the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::cli {
namespace {

using testing::Finished;
using testing::RunToEnd;
using testing::TempDir;
using testing::TrialshimBinary;

const std::string kLightning =
    std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning";
// A trialshim app standing in for digits-train (built without LibTorch too).
const std::string kApp = std::string(TRIALSHIM_BIN_DIR) + "/app_task";

std::vector<std::string> Job(std::vector<std::string> args) {
  args.insert(args.begin(), {TrialshimBinary(), "job"});
  return args;
}

TEST(JobCommandTest, WritesASpecCheckAccepts) {
  TempDir dir;
  Finished f =
      RunToEnd(Job({"--config-path", kLightning, "--config-name", "config",
                    "--image", "us-docker.pkg.dev/p/r/t:1", "--output-dir",
                    "gs://b/digits", "--machine-type", "n1-highmem-8",
                    "--replica-count", "2", "hparams_search=digits_optuna",
                    "hydra.sweeper.n_trials=12", "--", kApp}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.err, "") << "no warning for the template's search";
  for (const char* says :
       {"# Written by: trialshim job --config-path", "maxTrialCount: 12\n",
        "  - parameterId: data.batch_size\n    discreteValueSpec:\n",
        "    goal: MAXIMIZE\n", "      machineType: n1-highmem-8\n",
        "    replicaCount: 2\n", "      - hparams_search=digits_optuna\n",
        "      - hydra.mode=RUN\n", "    outputUriPrefix: gs://b/digits\n"}) {
    EXPECT_NE(f.out.find(says), std::string::npos) << says << "\n" << f.out;
  }
  std::string spec = dir.Write("job.yaml", f.out);
  Finished check =
      RunToEnd({TrialshimBinary(), "check", "--werror", "--quiet", spec});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out, "") << "no error or warning";
}

TEST(JobCommandTest, UsageAndSweepErrorsExitTwo) {
  const std::vector<std::string> config = {"--config-path", kLightning,
                                           "--config-name", "config"};
  const std::vector<std::string> where = {"--image", "i", "--output-dir",
                                          "gs://b/p"};
  auto job = [&](std::vector<std::string> flags,
                 const std::vector<std::string>& rest) {
    flags.insert(flags.end(), rest.begin(), rest.end());
    return Job(flags);
  };
  struct Case {
    std::string name;
    std::vector<std::string> argv;
    std::string says;
  };
  std::vector<std::string> full = config;
  full.insert(full.end(), where.begin(), where.end());
  const std::vector<Case> cases = {
      {"no command", job(full, {"hparams_search=digits_optuna"}),
       "no COMMAND after '--'"},
      {"no image", job(config, {"--output-dir", "gs://b/p", "--", kApp}),
       "--image is required"},
      {"no output dir", job(config, {"--image", "i", "--", kApp}),
       "--output-dir is required"},
      {"no config", job(where, {"--", kApp}), "--config-path is required"},
      {"a misspelt direction",
       job(full, {"--direction", "maximise", "hparams_search=digits_optuna",
                  "--", kApp}),
       "maximise"},
      {"a sweep over list values",
       job(full, {"hydra/sweeper=optuna", "model.hidden=choice([64],[128])",
                  "--", kApp}),
       "'model.hidden': a sweep over a list value"},
      {"a config that does not compose",
       job(full, {"hparams_search=nope", "--", kApp}), "hparams_search"},
  };
  for (const Case& c : cases) {
    Finished f = RunToEnd(c.argv);
    EXPECT_EQ(f.exit_code, 2) << c.name << ": " << f.err;
    EXPECT_EQ(f.out, "") << c.name;
    EXPECT_NE(f.err.find(c.says), std::string::npos) << c.name << ": " << f.err;
  }
}

TEST(JobCommandTest, WarningsGoToStderr) {
  Finished f = RunToEnd(Job({"--config-path", kLightning, "--config-name",
                             "config", "--image", "i", "--output-dir",
                             "gs://b/p", "data.batch_size=32,64", "--", kApp}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.err.find("trialshim job: warning: the basic sweeper has no "
                       "direction"),
            std::string::npos)
      << f.err;
  EXPECT_NE(f.out.find("algorithm: GRID_SEARCH"), std::string::npos) << f.out;
}

// Issue 33.4: hydra-optuna-sweeper's own example sweeps
// range(-5.5, 5.5, step=0.5) over `x: 1`, and Hydra passes the floats
// (optuna_multirun.json's grid_floats_over_an_int_key): the job is written,
// with a warning before any paid trial that the int key gets floats.
TEST(JobCommandTest, FloatsOverAnIntKeyAsInThePluginsExampleWarn) {
  const std::string tree =
      std::string(TRIALSHIM_SOURCE_DIR) + "/tests/data/hydra_app/trees/optuna_grid";
  Finished f = RunToEnd(Job({"--config-path", tree, "--config-name", "config",
                             "--image", "i", "--output-dir", "gs://b/p",
                             "x=range(-5.5, 5.5, step=0.5)", "--metric",
                             "objective", "--", kApp}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.err.find("trialshim job: warning: parameter 'x' sets x, which "
                       "is an int in the config, and the trials get value "
                       "-5.5, a float, which Hydra passes to an untyped key"),
            std::string::npos)
      << f.err;
  EXPECT_NE(f.out.find("  - parameterId: x\n    discreteValueSpec:\n"),
            std::string::npos)
      << f.out;
}

}  // namespace
}  // namespace trialshim::cli
