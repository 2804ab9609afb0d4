// examples/vertex/train.py run through the trialshim binary as Vertex runs
// it, with Debian's python3-torch: a trial's metric file and accuracy, its
// refusals, SIGTERM -> checkpoint -> exact resume, and DDP under
// `trialshim launch`.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::examples {
namespace {

using ::trialshim::testing::Child;
using ::trialshim::testing::Finished;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::RunToEnd;
using ::trialshim::testing::TempDir;

const std::string kVertex =
    std::string(TRIALSHIM_SOURCE_DIR) + "/examples/vertex";
const std::string kShim = std::string(TRIALSHIM_BIN_DIR) + "/trialshim";

// What train.py needs and /usr/bin/python3 lacks ("" if nothing; CI installs
// both: Makefile DEPS). Asked once: importing torch takes seconds.
const std::string& MissingPython() {
  static const std::string missing = [] {
    for (std::string module : {"torch", "omegaconf"}) {
      if (RunToEnd({"/usr/bin/python3", "-c", "import " + module}).exit_code) {
        return "/usr/bin/python3 cannot import " + module +
               " (apt-get install python3-" + module + ")";
      }
    }
    return std::string();
  }();
  return missing;
}

#define SKIP_WITHOUT_PYTHON_TORCH() \
  if (!MissingPython().empty()) GTEST_SKIP() << MissingPython()

// A trial's environment, everything under `dir`.
std::vector<std::string> TrialEnv(const TempDir& dir) {
  return {"CLOUD_ML_TRIAL_ID=7",
          "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("hpt/output.metrics"),
          "AIP_CHECKPOINT_DIR=" + dir.Join("checkpoints"),
          "AIP_MODEL_DIR=" + dir.Join("model")};
}

// `trialshim [shim_args] -- /usr/bin/python3 train.py [args]`.
std::vector<std::string> Trial(std::vector<std::string> shim_args,
                               const std::vector<std::string>& args) {
  shim_args.insert(shim_args.begin(), kShim);
  shim_args.insert(shim_args.end(),
                   {"--", "/usr/bin/python3", kVertex + "/train.py"});
  shim_args.insert(shim_args.end(), args.begin(), args.end());
  return shim_args;
}

// Runs a Trial() to its end, or for 120 s at most (SIGKILL 10 s after the
// SIGTERM: a rank stuck in a collective never runs its handler).
Finished RunTrial(std::vector<std::string> argv, const TempDir& dir) {
  argv.insert(argv.begin(), {"timeout", "-k", "10", "120"});
  return RunToEnd(argv, TrialEnv(dir));
}

// The val_acc values of a metric file whose every line is exactly what
// cloudml-hypertune writes for trial 7, in order of global_step 1, 2, ...
std::vector<double> MetricValues(const std::string& path) {
  static const std::regex kLine(
      R"re(\{"checkpoint_path": "", "global_step": "(\d+)", )re"
      R"re("timestamp": \d+\.\d+, "trial": "7", "val_acc": "(0\.\d+|1\.0)"\})re");
  std::vector<double> values;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, kLine)) << path << ": " << line;
    if (m.empty()) continue;
    EXPECT_EQ(std::stoul(m[1]), values.size() + 1) << line;
    values.push_back(std::stod(m[2]));
  }
  return values;
}

// "rank R: done, parameter checksum X": X, or "" when absent.
std::string Checksum(const std::string& out, int rank) {
  std::smatch m;
  std::regex re("rank " + std::to_string(rank) +
                ": done, parameter checksum (\\S+)");
  return std::regex_search(out, m, re) ? m[1].str() : "";
}

TEST(VertexTrainTest, TrialReportsValAccuracyLikeHypertune) {
  SKIP_WITHOUT_PYTHON_TORCH();
  struct Case {
    std::string name;
    std::vector<std::string> shim_args, args;
  };
  // Vertex sends DISCRETE values as 64.0: train.py takes them as they are,
  // and trialshim with the config turns them into ints first.
  const std::vector<Case> cases = {
      {"vertex values, no config",
       {},
       {"--optimizer.lr=0.05", "--data.batch_size=64.0"}},
      {"vertex values through --config-path",
       {"--config-path", kVertex + "/conf", "--config-name", "config"},
       {"trainer.max_epochs=4", "--optimizer=sgd", "--optimizer.lr=0.1",
        "--data.batch_size=32.0", "--model.width=128.0"}},
  };
  for (const Case& c : cases) {
    TempDir dir;
    Finished f = RunTrial(Trial(c.shim_args, c.args), dir);
    ASSERT_EQ(f.exit_code, 0) << "case " << c.name << "\n" << f.out << f.err;
    std::vector<double> acc = MetricValues(dir.Join("hpt/output.metrics"));
    ASSERT_EQ(acc.size(), c.name == "vertex values, no config" ? 5u : 4u)
        << "case " << c.name << "\n"
        << f.out;
    EXPECT_GT(acc.back(), 0.9) << "case " << c.name << "\n" << f.out;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.Join("model/model.pt")))
        << "case " << c.name;
    EXPECT_TRUE(
        std::filesystem::is_regular_file(dir.Join("checkpoints/last.pt")))
        << "case " << c.name;
  }
}

TEST(VertexTrainTest, RefusesWhatItCanNotApply) {
  SKIP_WITHOUT_PYTHON_TORCH();
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"misspelt key",
       {"--optimizer.lrr=0.1"},
       "cannot override 'optimizer.lrr'"},
      {"a sweep needs Hydra",
       {"seed=1,2"},
       "cannot apply 'seed=1,2' without Hydra"},
      {"no such option", {"--optimizer=adamw"}, "options: adam, sgd"},
      {"a fraction is no batch size",
       {"--data.batch_size=64.5"},
       "data.batch_size=64.5: expected an integer"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    Finished f = RunTrial(Trial({}, c.args), dir);
    EXPECT_EQ(f.exit_code, 2) << "case " << c.name << "\n" << f.err;
    EXPECT_NE(f.err.find(c.error), std::string::npos)
        << "case " << c.name << "\n"
        << f.err;
  }
}

TEST(VertexTrainTest, SigtermCheckpointsAndRestartResumesExactly) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const std::vector<std::string> args = {"trainer.max_epochs=30",
                                         "--optimizer.lr=0.05"};
  TempDir whole;
  Finished uninterrupted = RunTrial(Trial({}, args), whole);
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;

  TempDir dir;
  Finished stopped;
  {
    Child trial(Trial({}, args), TrialEnv(dir));
    ASSERT_TRUE(trial.WaitForOutput("epoch 1 ", std::chrono::seconds(120)));
    trial.Signal(SIGTERM);
    stopped = trial.Wait();
  }
  // Not PID 1, trialshim exec'd python3, which died of the signal after
  // checkpointing: a shell (or trialshim as PID 1) reports 143.
  EXPECT_EQ(stopped.term_signal, SIGTERM) << stopped.out << stopped.err;
  std::smatch at;
  std::regex saved("SIGTERM: checkpointed epoch (\\d+) batch (\\d+) to " +
                   dir.Join("checkpoints/last.pt"));
  ASSERT_TRUE(std::regex_search(stopped.out, at, saved)) << stopped.out;
  EXPECT_EQ(Checksum(stopped.out, 0), "") << "it stopped before the end";

  Finished resumed = RunTrial(Trial({}, args), dir);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("resumed from epoch " + at[1].str() + " batch " +
                             at[2].str()),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.out.find("epoch 29 "), std::string::npos) << resumed.out;
  // The same data order and state: the very weights of the uninterrupted run.
  EXPECT_NE(Checksum(uninterrupted.out, 0), "");
  EXPECT_EQ(Checksum(resumed.out, 0), Checksum(uninterrupted.out, 0));
}

TEST(VertexTrainTest, LaunchRunsDdpAndOnlyRankZeroWrites) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir single, ddp;
  Finished one = RunTrial(
      Trial({}, {"trainer.max_epochs=3", "data.batch_size=64"}), single);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  Finished two =
      RunTrial(Trial({"launch", "--nproc-per-node", "2", "--config-path",
                      kVertex + "/conf", "--config-name", "config"},
                     {"trainer.max_epochs=3", "--data.batch_size=32.0"}),
               ddp);
  ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
  for (const char* line :
       {"[rank 0] rank 0 of 2: 719 training samples\n",
        "[rank 1] rank 1 of 2: 719 training samples\n", "[rank 0] epoch 2 "}) {
    EXPECT_NE(two.out.find(line), std::string::npos) << line << "\n" << two.out;
  }
  EXPECT_EQ(two.out.find("[rank 1] epoch"), std::string::npos) << two.out;
  EXPECT_NE(Checksum(two.out, 0), "") << two.out;
  EXPECT_EQ(Checksum(two.out, 0), Checksum(two.out, 1)) << "ranks in sync";
  // Two ranks at 32 see the 64 samples one rank sees per step: the same
  // training up to rounding in the gradient average.
  std::vector<double> want = MetricValues(single.Join("hpt/output.metrics"));
  std::vector<double> got = MetricValues(ddp.Join("hpt/output.metrics"));
  ASSERT_EQ(got.size(), 3u);
  ASSERT_EQ(want.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.01);
}

}  // namespace
}  // namespace trialshim::examples
