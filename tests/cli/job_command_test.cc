// `trialshim job` as a user runs it: the spec of conf-lightning's
// hparams_search (lightning-hydra-template's shape), which `trialshim check
// --werror` accepts; usage errors exit 2 saying what is missing; a sweep
// Vertex can not express is refused naming the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::cli {
namespace {

using testing::Finished;
using testing::RunToEnd;
using testing::RunToEndWith;
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
        "      - hparams_search=digits_optuna\n",
        "      - hydra.mode=RUN\n", "    outputUriPrefix: gs://b/digits\n"}) {
    EXPECT_NE(f.out.find(says), std::string::npos) << says << "\n" << f.out;
  }
  // --replica-count 2: the primary in pool 0 (Vertex takes exactly one
  // there) and one worker in pool 1.
  size_t pool0 = f.out.find("  workerPoolSpecs:\n  - machineSpec:");
  size_t pool1 = f.out.find("\n  - machineSpec:", pool0 + 20);
  ASSERT_NE(pool1, std::string::npos) << f.out;
  EXPECT_NE(f.out.substr(pool0, pool1 - pool0).find("    replicaCount: 1\n"),
            std::string::npos)
      << f.out;
  EXPECT_NE(f.out.substr(pool1).find("    replicaCount: 1\n"),
            std::string::npos)
      << f.out;
  std::string spec = dir.Write("job.yaml", f.out);
  Finished check =
      RunToEnd({TrialshimBinary(), "check", "--werror", "--quiet", spec});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out, "") << "no error or warning";
}

// The trials' GPUs: what an accelerator-optimized machine type comes with
// is written for it; an N1 machine gets the GPU asked for; check passes
// each spec without a warning.
TEST(JobCommandTest, WritesTheTrialsGpus) {
  struct Case {
    const char* name;
    std::vector<std::string> flags;
    const char* machine_spec;  // "" when no accelerator is written
  } cases[] = {
      {"cpu", {}, "      machineType: n1-standard-4\n    replicaCount"},
      {"a2_comes_with_its_a100s",
       {"--machine-type", "a2-highgpu-2g"},
       "      machineType: a2-highgpu-2g\n      acceleratorType: "
       "NVIDIA_TESLA_A100\n      acceleratorCount: 2\n"},
      {"g2_count_from_the_table",
       {"--machine-type", "g2-standard-48"},
       "      acceleratorType: NVIDIA_L4\n      acceleratorCount: 4\n"},
      {"n1_with_one_t4",
       {"--accelerator-type", "NVIDIA_TESLA_T4"},
       "      machineType: n1-standard-4\n      acceleratorType: "
       "NVIDIA_TESLA_T4\n      acceleratorCount: 1\n"},
      {"a3_with_fewer_than_all",
       {"--machine-type", "a3-highgpu-8g", "--accelerator-type",
        "NVIDIA_H100_80GB", "--accelerator-count", "4"},
       "      acceleratorType: NVIDIA_H100_80GB\n      acceleratorCount: 4\n"},
  };
  testing::TempDir dir;
  for (const Case& c : cases) {
    std::vector<std::string> argv = {
        "--config-path", kLightning, "--config-name", "config",
        "--image",       "i",        "--output-dir",  "gs://b/p"};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    argv.insert(argv.end(), {"hparams_search=digits_optuna", "--", kApp});
    Finished f = RunToEnd(Job(argv));
    ASSERT_EQ(f.exit_code, 0) << c.name << ": " << f.err;
    EXPECT_NE(f.out.find(c.machine_spec), std::string::npos) << c.name << "\n"
                                                             << f.out;
    std::string spec = dir.Write(std::string(c.name) + ".yaml", f.out);
    Finished check =
        RunToEnd({TrialshimBinary(), "check", "--werror", "--quiet", spec});
    EXPECT_EQ(check.exit_code, 0) << c.name << ": " << check.out << check.err;
  }
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
      {"a machine type Vertex does not have",
       job(full, {"--machine-type", "n1-standrad-4",
                  "hparams_search=digits_optuna", "--", kApp}),
       "--machine-type: unknown machine type 'n1-standrad-4' (did you mean "
       "'n1-standard-4'"},
      {"an output dir that is not on Cloud Storage",
       job(config, {"--image", "i", "--output-dir", "/tmp/x",
                    "hparams_search=digits_optuna", "--", kApp}),
       "--output-dir '/tmp/x' is not a Cloud Storage URI: Vertex takes "
       "gs://BUCKET/PATH"},
      {"no replica", job(full, {"--replica-count", "0", "--", kApp}),
       "--replica-count"},
      {"a GPU the machine type does not take",
       job(full, {"--accelerator-type", "NVIDIA_TESLA_A100",
                  "hparams_search=digits_optuna", "--", kApp}),
       "--accelerator-type NVIDIA_TESLA_A100 --accelerator-count 1: "
       "n1-standard-4 takes no NVIDIA_TESLA_A100"},
      {"a GPU count N1 does not attach",
       job(full,
           {"--accelerator-type", "NVIDIA_TESLA_T4", "--accelerator-count", "3",
            "hparams_search=digits_optuna", "--", kApp}),
       "n1-standard-4 takes 1, 2, 4 NVIDIA_TESLA_T4, not 3"},
      {"a count without a GPU",
       job(full, {"--accelerator-count", "2", "hparams_search=digits_optuna",
                  "--", kApp}),
       "--accelerator-count without --accelerator-type"},
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

// What the user ran (issue 33): `trialshim job ... -- digits-train`, the
// image's name for the trainer, from the repository's layout (relative
// paths: the image's working directory). The spec is byte for byte the same
// whether digits-train is on this machine's PATH or not; `check --werror`
// passes it; `sweep` runs it as the image would (digits-train on PATH), each
// trial one job of conf-lightning's config. The two specs the old `job`
// wrote are caught by check, with the fix each names: without the
// trainer's --config-path (it composed its built-in config: "Key
// 'hparams_search' not in 'TrainConfig'", which the sweep shows) and
// without hydra.mode=RUN (each trial a 20-job search).
class JobAsTheImageRunsIt : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.Join("project");
    std::filesystem::create_directories(root_ + "/examples/digits");
    std::filesystem::create_directories(root_ + "/image-bin");
    std::filesystem::create_symlink(kLightning,
                                    root_ + "/examples/digits/conf-lightning");
    // The image's trainer: the real one when built (TRIALSHIM_WITH_TORCH),
    // else a trialshim app under its name (enough for job and check).
    has_trainer_ = access(kDigitsTrain.c_str(), X_OK) == 0;
    std::filesystem::create_symlink(has_trainer_ ? kDigitsTrain : kApp,
                                    root_ + "/image-bin/digits-train");
  }

  // `argv` run in the project with PATH as given (the image's bin first or
  // not at all).
  Finished Run(const std::vector<std::string>& argv, bool trainer_on_path) {
    const char* path = std::getenv("PATH");
    std::string value = path ? path : "/usr/bin:/bin";
    if (trainer_on_path) value = root_ + "/image-bin:" + value;
    SubprocessOptions spawn = testing::Child::Options({"PATH=" + value});
    spawn.cwd = root_;
    return RunToEndWith(argv, spawn);
  }

  Finished WriteJob(bool trainer_on_path) {
    return Run(Job({"--config-path", "examples/digits/conf-lightning",
                    "--config-name", "config", "--image",
                    "us-docker.pkg.dev/p/r/digits:1", "--output-dir",
                    "gs://b/digits", "hparams_search=digits_optuna",
                    "hydra.sweeper.n_trials=2", "trainer.max_epochs=1", "--",
                    "digits-train"}),
               trainer_on_path);
  }

  std::string Write(const std::string& name, const std::string& text) {
    std::string file = root_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

  static std::string Without(std::string text, const std::string& cut) {
    size_t at = text.find(cut);
    EXPECT_NE(at, std::string::npos) << cut << "\n" << text;
    if (at != std::string::npos) text.erase(at, cut.size());
    return text;
  }

  const std::string kDigitsTrain =
      std::string(TRIALSHIM_BIN_DIR) + "/digits-train";
  TempDir dir_;
  std::string root_;
  bool has_trainer_ = false;
};

TEST_F(JobAsTheImageRunsIt, SameSpecWhereverWrittenAndCheckedAndSwept) {
  Finished here = WriteJob(/*trainer_on_path=*/true);
  Finished elsewhere = WriteJob(/*trainer_on_path=*/false);
  ASSERT_EQ(here.exit_code, 0) << here.err;
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  EXPECT_EQ(here.out, elsewhere.out) << "the spec depends on the PATH";
  const std::string trainer_config =
      "      - digits-train\n"
      "      - --config-path\n"
      "      - examples/digits/conf-lightning\n"
      "      - --config-name\n"
      "      - config\n";
  EXPECT_NE(here.out.find(trainer_config), std::string::npos) << here.out;
  std::string spec = Write("job.yaml", here.out);

  Finished check = Run({TrialshimBinary(), "check", "--werror", "job.yaml"},
                       /*trainer_on_path=*/true);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  // The old specs: check refuses each, naming the fix.
  struct Old {
    const char* name;
    std::string cut;
    const char* says;
  } olds[] = {
      {"no trainer config",
       "      - --config-path\n      - examples/digits/conf-lightning\n"
       "      - --config-name\n      - config\n",
       "Add --config-path examples/digits/conf-lightning --config-name config "
       "after digits-train"},
      {"no hydra.mode=RUN", "      - hydra.mode=RUN\n",
       "Add hydra.mode=RUN to the container args"},
  };
  for (const Old& o : olds) {
    // The trainer's flags come twice (trialshim's, then digits-train's):
    // cut the second.
    std::string text = here.out;
    size_t from = std::string(o.name) == "no trainer config"
                      ? text.find("      - digits-train\n")
                      : 0;
    std::string head = text.substr(0, from);
    Write("old.yaml", head + Without(text.substr(from), o.cut));
    Finished old = Run({TrialshimBinary(), "check", "--werror", "old.yaml"},
                       /*trainer_on_path=*/true);
    EXPECT_EQ(old.exit_code, 2) << o.name << ": " << old.out << old.err;
    EXPECT_NE(old.out.find(o.says), std::string::npos)
        << o.name << ": " << old.out;
  }
  if (!has_trainer_) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON): "
                    "the sweeps are left out";
  }
  // As the image runs it: each trial one job of conf-lightning's config.
  Finished sweep = Run({TrialshimBinary(), "sweep", "job.yaml", "--out",
                        "runs", "--max-trials", "2", "--parallel", "1"},
                       /*trainer_on_path=*/true);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  nlohmann::json record;
  std::ifstream(root_ + "/runs/trials.json") >> record;
  ASSERT_EQ(record["trials"].size(), 2u) << record.dump();
  for (const nlohmann::json& t : record["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
  }
  // What the old spec's trials did: digits-train composed its built-in
  // config and refused the search's override.
  std::string text = here.out;
  size_t from = text.find("      - digits-train\n");
  Write("old.yaml", text.substr(0, from) +
                        Without(text.substr(from),
                                "      - --config-path\n      - "
                                "examples/digits/conf-lightning\n      - "
                                "--config-name\n      - config\n"));
  Finished old = Run({TrialshimBinary(), "sweep", "old.yaml", "--out", "old",
                      "--max-trials", "1"},
                     /*trainer_on_path=*/true);
  std::string all = old.out + old.err;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           root_ + "/old")) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path());
    std::stringstream text_of;
    text_of << in.rdbuf();
    all += text_of.str();
  }
  EXPECT_NE(all.find("hparams_search"), std::string::npos) << all;
  EXPECT_NE(all.find("TrainConfig"), std::string::npos) << all;
}

}  // namespace
}  // namespace trialshim::cli
