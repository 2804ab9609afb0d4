// examples/vertex/train.py run through the trialshim binary as Vertex runs
// it, with Debian's python3-torch: a trial's metric file and accuracy, its
// refusals, SIGTERM -> checkpoint -> exact resume, DDP under `trialshim
// launch`, and the README's command run twice in one directory. The
// Anchors* tests run it as a real @hydra.main app with real
// cloudml-hypertune (the anchors environment).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
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
const std::string kDebianPython = "/usr/bin/python3";

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

// `trialshim [shim_args] -- PYTHON train.py [args]`.
std::vector<std::string> Trial(std::vector<std::string> shim_args,
                               const std::vector<std::string>& args,
                               const std::string& python = kDebianPython) {
  shim_args.insert(shim_args.begin(), kShim);
  shim_args.insert(shim_args.end(), {"--", python, kVertex + "/train.py"});
  shim_args.insert(shim_args.end(), args.begin(), args.end());
  return shim_args;
}

// Runs a Trial() to its end, or for 120 s at most (SIGKILL 10 s after the
// SIGTERM: a rank stuck in a collective never runs its handler), in `cwd`
// unless empty.
Finished RunTrial(std::vector<std::string> argv, const TempDir& dir,
                  const std::string& cwd = "") {
  argv.insert(argv.begin(), {"timeout", "-k", "10", "120"});
  SubprocessOptions o = Child::Options(TrialEnv(dir));
  if (!cwd.empty()) o.cwd = cwd;
  return ::trialshim::testing::RunToEndWith(argv, o);
}

// The val_acc values of a metric file whose every line is exactly what
// cloudml-hypertune writes for `trial`, in order of global_step first_step,
// first_step + 1, ...
std::vector<double> MetricValues(const std::string& path,
                                 const std::string& trial = "7",
                                 size_t first_step = 1) {
  const std::regex line_re(
      R"re(\{"checkpoint_path": "", "global_step": "(\d+)", )re"
      R"re("timestamp": \d+\.\d+, "trial": ")re" +
      trial + R"re(", "val_acc": "(0\.\d+|1\.0)"\})re");
  std::vector<double> values;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, line_re)) << path << ": " << line;
    if (m.empty()) continue;
    EXPECT_EQ(std::stoul(m[1]), first_step + values.size()) << line;
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

// examples/vertex/README.md's "Try it locally" command: the words of its
// trialshim line as a shell splits them, from `trialshim` on.
std::vector<std::string> ReadmeCommand() {
  std::string readme = ReadFile(kVertex + "/README.md");
  size_t block = readme.find("```", readme.find("Try it locally"));
  size_t end = readme.find("```", block + 3);
  std::string text = readme.substr(block, end - block);
  text = std::regex_replace(text, std::regex("\\\\\n"), " ");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> argv;
    for (std::string w; words >> w;) {
      if (!argv.empty() || w == "trialshim") argv.push_back(w);
    }
    if (!argv.empty()) return argv;
  }
  return {};
}

// A copy of examples/vertex (train.py, conf/) in `dir`, with the digits data
// where train.py looks for it; returns the copy's examples/vertex.
std::string CopyOfTheExample(const TempDir& dir) {
  namespace fs = std::filesystem;
  const std::string copy = dir.Join("examples/vertex");
  fs::create_directories(copy);
  fs::copy(kVertex + "/train.py", copy + "/train.py");
  fs::copy(kVertex + "/conf", copy + "/conf", fs::copy_options::recursive);
  fs::create_directories(dir.Join("examples/digits"));
  fs::create_directory_symlink(
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/data",
      dir.Join("examples/digits/data"));
  return copy;
}

// Issue 23.5: the README's command run again in the same directory, with the
// same values (training had finished: the final metric again, nothing
// trained) and with other values (the first run's checkpoint is moved aside,
// never resumed).
void RunTheReadmeTwice(const std::string& python) {
  std::vector<std::string> command = ReadmeCommand();
  ASSERT_GE(command.size(), 8u) << "no trialshim command in the README";
  for (std::string& w : command) {
    if (w == "trialshim") w = kShim;
    if (w == kDebianPython) w = python;
  }
  std::vector<std::string> others = command;
  auto lr = std::find(others.begin(), others.end(), "--optimizer.lr=0.05");
  ASSERT_NE(lr, others.end()) << "the README's values changed";
  *lr = "--optimizer.lr=0.02";

  TempDir dir;
  const std::string cwd = CopyOfTheExample(dir);
  const std::string metrics = dir.Join("hpt/output.metrics");
  auto run = [&](const std::vector<std::string>& argv) {
    SubprocessOptions o =
        Child::Options({"CLOUD_ML_HP_METRIC_FILE=" + metrics});
    o.cwd = cwd;
    Finished f = ::trialshim::testing::RunToEndWith(argv, o);
    EXPECT_EQ(f.err.find("Traceback"), std::string::npos) << f.err;
    return f;
  };
  Finished first = run(command);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::vector<double> trained = MetricValues(metrics, "0");
  ASSERT_EQ(trained.size(), 5u) << first.out;

  Finished again = run(command);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("training finished at epoch 5 "
                           "(trainer.max_epochs=5); reporting epoch 4 again"),
            std::string::npos)
      << again.out;
  EXPECT_EQ(again.out.find("epoch 0 "), std::string::npos) << "trained again";
  EXPECT_EQ(MetricValues(metrics, "0", 5), std::vector<double>{trained.back()})
      << "the final measurement, reported again";

  Finished other = run(others);
  ASSERT_EQ(other.exit_code, 0) << other.out << other.err;
  std::smatch moved;
  ASSERT_TRUE(std::regex_search(
      other.err, moved,
      std::regex("train.py: checkpoints/last.pt is another run's "
                 "\\(optimizer.lr: 0.05 there, 0.02 here\\): moved it to "
                 "(checkpoints/last\\.[0-9-]+\\.pt) and training from the "
                 "start")))
      << other.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(cwd + "/" + moved[1].str()))
      << "the first run's checkpoint, kept";
  EXPECT_EQ(other.out.find("resumed from"), std::string::npos) << other.out;
  EXPECT_EQ(MetricValues(metrics, "0").size(), 5u) << other.out;
}

TEST(VertexTrainTest, ReadmeCommandAgainInTheSameDirectory) {
  SKIP_WITHOUT_PYTHON_TORCH();
  RunTheReadmeTwice(kDebianPython);
}

// --- The anchors: train.py as a real @hydra.main app (Hydra 1.3.2) with
// real cloudml-hypertune, through trialshim as on Vertex.

// The one run directory Hydra made under `cwd`/outputs/DATE/TIME.
std::string HydraRunDir(const std::string& cwd) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (fs::is_directory(cwd + "/outputs")) {
    for (const auto& day : fs::directory_iterator(cwd + "/outputs")) {
      for (const auto& run : fs::directory_iterator(day.path())) {
        dirs.push_back(run.path().string());
      }
    }
  }
  EXPECT_EQ(dirs.size(), 1u) << "Hydra's run directories under " << cwd;
  return dirs.empty() ? "" : dirs[0];
}

TEST(AnchorsVertexTrain, TrialRunsUnderRealHydraAndHypertune) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  Finished f = RunTrial(
      Trial({"--config-path", kVertex + "/conf", "--config-name", "config"},
            {"trainer.max_epochs=4", "--optimizer=sgd", "--optimizer.lr=0.1",
             "--data.batch_size=32.0", "--model.width=128.0"},
            testing::AnchorsPython()),
      dir, dir.path());
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  std::vector<double> acc = MetricValues(dir.Join("hpt/output.metrics"));
  ASSERT_EQ(acc.size(), 4u) << f.out;
  EXPECT_GT(acc.back(), 0.9) << f.out;
  // Hydra composed the run from the overrides trialshim translated.
  const std::string run = HydraRunDir(dir.path());
  EXPECT_EQ(ReadFile(run + "/.hydra/overrides.yaml"),
            "- trainer.max_epochs=4\n- optimizer=sgd\n- optimizer.lr=0.1\n"
            "- data.batch_size=32\n- model.width=128\n");
  EXPECT_NE(ReadFile(run + "/.hydra/config.yaml").find("  name: sgd\n"),
            std::string::npos);
}

TEST(AnchorsVertexTrain, ConfigPathChecksBeforeHydraStarts) {
  SKIP_WITHOUT_ANCHORS();
  const std::vector<std::string> checked = {"--config-path", kVertex + "/conf",
                                            "--config-name", "config"};
  struct Case {
    std::string name;
    std::vector<std::string> shim_args, args;
    int exit_code;
    std::string error;
  };
  const std::vector<Case> cases = {
      // trialshim refuses before Python starts: exit 2, did-you-mean.
      {"misspelt key, checked",
       checked,
       {"--optimizer.lrr=0.1"},
       2,
       "did you mean 'optimizer.lr'?"},
      {"no such option, checked",
       checked,
       {"--optimizer=adamw"},
       2,
       "optimizer=adamw"},
      // Unchecked, Hydra refuses them itself (exit 1, its own words).
      {"misspelt key, Hydra",
       {},
       {"--optimizer.lrr=0.1"},
       1,
       "Could not override 'optimizer.lrr'"},
      {"no such option, Hydra",
       {},
       {"--optimizer=adamw"},
       1,
       "Could not find 'optimizer/adamw'"},
      {"a sweep, Hydra",
       {},
       {"seed=1,2"},
       1,
       "Ambiguous value for argument 'seed=1,2'"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    Finished f = RunTrial(Trial(c.shim_args, c.args, testing::AnchorsPython()),
                          dir, dir.path());
    EXPECT_EQ(f.exit_code, c.exit_code) << "case " << c.name << "\n" << f.err;
    EXPECT_NE(f.err.find(c.error), std::string::npos)
        << "case " << c.name << "\n"
        << f.err;
    EXPECT_FALSE(std::filesystem::exists(dir.Join("hpt/output.metrics")))
        << "case " << c.name;
  }
}

TEST(AnchorsVertexTrain, SigtermCheckpointsAndResumesUnderHydra) {
  SKIP_WITHOUT_ANCHORS();
  const std::vector<std::string> args = {"trainer.max_epochs=30",
                                         "--optimizer.lr=0.05"};
  TempDir whole;
  Finished uninterrupted =
      RunTrial(Trial({}, args, testing::AnchorsPython()), whole, whole.path());
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;

  TempDir dir;
  Finished stopped;
  {
    SubprocessOptions o = Child::Options(TrialEnv(dir));
    o.cwd = dir.path();
    Child trial(Trial({}, args, testing::AnchorsPython()), o);
    ASSERT_TRUE(trial.WaitForOutput("epoch 1 ", std::chrono::seconds(120)));
    trial.Signal(SIGTERM);
    stopped = trial.Wait();
  }
  EXPECT_EQ(stopped.term_signal, SIGTERM) << stopped.out << stopped.err;
  std::smatch at;
  ASSERT_TRUE(std::regex_search(
      stopped.out, at,
      std::regex("SIGTERM: checkpointed epoch (\\d+) batch (\\d+)")))
      << stopped.out;
  Finished resumed =
      RunTrial(Trial({}, args, testing::AnchorsPython()), dir, dir.path());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("resumed from epoch " + at[1].str() + " batch " +
                             at[2].str()),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(Checksum(uninterrupted.out, 0), "");
  EXPECT_EQ(Checksum(resumed.out, 0), Checksum(uninterrupted.out, 0));
}

// The stand-in train.py uses without cloudml-hypertune writes what the real
// HyperTune writes for the same reports at the same moments.
TEST(AnchorsVertexTrain, StandInWritesWhatHypertuneWrites) {
  SKIP_WITHOUT_ANCHORS();
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  Finished f = RunTrial(Trial({}, {"trainer.max_epochs=3"}), dir);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const std::string written = ReadFile(dir.Join("hpt/output.metrics"));
  nlohmann::json reports = nlohmann::json::array();
  std::istringstream lines(written);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    char hex[64];
    std::snprintf(hex, sizeof hex, "%a",
                  std::stod(j["val_acc"].get<std::string>()));
    reports.push_back(
        {{"tag", "val_acc"},
         {"value", hex},
         {"step", std::stoll(j["global_step"].get<std::string>())},
         {"checkpoint_path", j["checkpoint_path"]},
         {"timestamp", j["timestamp"]}});
  }
  ASSERT_EQ(reports.size(), 3u) << written;
  nlohmann::json job = {{"trial", "7"}, {"reports", reports}};
  Finished replay = testing::RunAnchorsScript(
      "tests/anchors/hypertune_replay.py",
      {"hypertune", dir.Write("reports.json", job.dump()),
       dir.Join("replayed.metrics")});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(ReadFile(dir.Join("replayed.metrics")), written);
}

TEST(AnchorsVertexTrain, ReadmeCommandAgainUnderRealHydra) {
  SKIP_WITHOUT_ANCHORS();
  RunTheReadmeTwice(testing::AnchorsPython());
}

}  // namespace
}  // namespace trialshim::examples
