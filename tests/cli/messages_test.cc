// The messages of issue 33 item 6, each run as the user ran it through the
// real `trialshim` (and digits-train), and each hint followed: a bound
// says what it wants, the resume hint runs without trialshim on PATH, a
// resume refuses a sweep of other fixed arguments or a mistyped --out,
// `job -m` suggests no option of another command, the direction warning
// names the flag that fixes it, the live table fits 80 columns, long
// values are abbreviated, and the docs' `digits-train -m` example runs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/hints.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/base/strings.h"

namespace trialshim::cli {
namespace {

using testing::Finished;
using testing::HintCase;
using testing::ReadFile;
using testing::TempDir;
using testing::TrialshimBinary;

const std::string kRoot = TRIALSHIM_SOURCE_DIR;
const std::string kTrainer = kRoot + "/tests/tuning/data/trainer.py";

// A grid of two quick trials of trainer.py with `fixed` as its fixed
// argument and `command` in place of its command when given.
std::string Spec(const std::string& fixed, const std::string& command = "") {
  return "displayName: msgs\nmaxTrialCount: 2\nparallelTrialCount: 1\n"
         "studySpec:\n  metrics:\n  - {metricId: score, goal: MINIMIZE}\n"
         "  parameters:\n  - parameterId: x\n"
         "    discreteValueSpec: {values: [1, 2]}\n"
         "  algorithm: GRID_SEARCH\n"
         "trialJobSpec:\n  workerPoolSpecs:\n  - containerSpec:\n"
         "      imageUri: example/trainer:1\n"
         "      command: [" +
         (command.empty() ? "/usr/bin/python3, " + kTrainer : command) +
         "]\n      args: [" + fixed + "]\n";
}

// Runs `command` with sh in `cwd`, with `env` added.
Finished Sh(const std::string& cwd, const std::string& command,
            const std::vector<std::string>& env = {}) {
  SubprocessOptions o = testing::Child::Options(env);
  o.cwd = cwd;
  return testing::RunToEndWith({"/bin/sh", "-c", command}, o);
}

// A number option out of its range says the range in a line, not CLI11's
// "Value 0 not in range 0.000000 to 1797693...": and the value it asks for
// runs.
TEST(MessagesTest, BoundsSayWhatTheyWant) {
  TempDir dir;
  dir.Write("job.yaml", Spec("--fixed=1"));
  const std::string sweep = "$T sweep job.yaml --out o";
  const std::string job =
      "$T job --config-path " + kRoot +
      "/examples/digits/conf-lightning --config-name config --image i "
      "--output-dir gs://b/p optimizer.lr=0.01,0.1 --direction maximize -- "
      "digits-train";
  struct Case {
    std::string name, command, bad, good, want;
  };
  const std::vector<Case> cases = {
      {"parallel", sweep + "1 --parallel 0", "--parallel 0", "--parallel 1",
       "--parallel: must be at least 1, got '0'"},
      {"max_trials", sweep + "2 --max-trials -1", "--max-trials -1",
       "--max-trials 1", "--max-trials: must be at least 1, got '-1'"},
      {"timeout", sweep + "3 --timeout -1", "--timeout -1", "--timeout 60",
       "--timeout: must be at least 0, got '-1'"},
      {"replica_count", ReplaceAll(job, " -- ", " --replica-count 0 -- "),
       "--replica-count 0", "--replica-count 2",
       "--replica-count: must be at least 1, got '0'"},
      {"nproc", "$T launch --nproc 0 -- true", "--nproc 0", "--nproc 1",
       "--nproc-per-node: must be from 1 to 4096, got '0'"},
      {"kill_after", "$T --kill-after -1 -- true", "--kill-after -1",
       "--kill-after 1", "--kill-after: must be from 0 to 604800, got '-1'"},
  };
  const std::vector<std::string> env = {"T=" + TrialshimBinary()};
  for (const Case& c : cases) {
    Finished bad = Sh(dir.path(), c.command, env);
    EXPECT_EQ(bad.exit_code, 2) << c.name << "\n" << bad.err;
    EXPECT_NE(bad.err.find(c.want), std::string::npos) << c.name << "\n"
                                                       << bad.err;
    EXPECT_EQ(bad.err.find("0.000000"), std::string::npos) << c.name;
    EXPECT_LT(bad.err.size(), 200u) << c.name << "\n" << bad.err;
    Finished good = Sh(dir.path(), ReplaceAll(c.command, c.bad, c.good), env);
    EXPECT_EQ(good.exit_code, 0) << c.name << "\n" << good.out << good.err;
  }
}

// "stopped; continue with: ..." names the trialshim that ran, so it runs
// with trialshim nowhere on PATH; the continued sweep finishes.
TEST(MessagesTest, ResumeHintRunsWithoutTrialshimOnPath) {
  TempDir dir;
  // The first run of trial 1 hangs until the sweep is stopped; reruns pass.
  // The marker lives outside the working directory: each trial's writes
  // into it stay in the trial's own overlay.
  TempDir shared;
  const std::string ran = shared.Join("ran");
  std::string script = dir.Write(
      "trainer.sh", "if [ -e " + ran + " ]; then m=ok; else touch " + ran +
                        "; m=hang; fi\n"
                        "TRAINER_FORCE_MODE=$m exec /usr/bin/python3 " +
                        kTrainer + " \"$@\"\n");
  dir.Write("job.yaml", Spec("--fixed=1", "/bin/sh, " + script));
  const std::string out = dir.Join("out");
  SubprocessOptions spawn = testing::Child::Options({"PATH=/usr/bin:/bin"});
  spawn.cwd = dir.path();
  testing::Child sweep({TrialshimBinary(), "sweep", "job.yaml", "--out", out},
                       spawn);
  ASSERT_TRUE(testing::WaitForFiles({out + "/1/started"}));
  sweep.Signal(SIGTERM);
  Finished stopped = sweep.Wait();
  ASSERT_EQ(stopped.exit_code, 143) << stopped.out << stopped.err;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(stopped.out, m, std::regex("continue with: (.*)\n")))
      << stopped.out;
  EXPECT_EQ(m[1].str().rfind(TrialshimBinary() + " sweep", 0), 0u) << m[1];
  Finished resumed = Sh(dir.path(), m[1], {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(resumed.exit_code, 0) << m[1] << "\n" << resumed.out << resumed.err;
}

// --resume of a sweep whose trials ran other fixed arguments refuses,
// naming both, and both ways out work; --resume on a mistyped --out starts
// nothing and names the sweep meant.
TEST(MessagesTest, ResumeRefusesWhatWouldMixOrStartAfresh) {
  TempDir dir;
  dir.Write("old.yaml", Spec("--epochs=40"));
  dir.Write("new.yaml", Spec("--epochs=5"));
  const std::vector<std::string> env = {"T=" + TrialshimBinary()};
  Finished first = Sh(dir.path(),
                      "$T sweep old.yaml --out sweeps/digits "
                      "--max-trials 1",
                      env);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  const std::vector<HintCase> cases = {
      {"changed_fixed_argument",
       "$T sweep new.yaml --out sweeps/digits --resume",
       "Give '?([^ ']+)'? again", HintCase::kReplace, "new.yaml"},
      {"changed_fixed_argument_new_out",
       "$T sweep new.yaml --out sweeps/digits --resume", "or (a new --out)",
       HintCase::kReplace, "--out sweeps/digits --resume"},
      {"mistyped_out", "$T sweep old.yaml --out sweeps/digit --resume",
       "did you mean --out ([^ ?]+)\\?", HintCase::kReplace, "sweeps/digit"},
  };
  for (const HintCase& c : cases) {
    testing::Followed f;
    f.first = Sh(dir.path(), c.command, env);
    EXPECT_EQ(f.first.exit_code, 2) << c.name << "\n" << f.first.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(f.first.err, m, std::regex(c.pattern)))
        << c.name << "\n"
        << f.first.err;
    std::string next;
    if (c.name == "changed_fixed_argument") {
      EXPECT_NE(f.first.err.find("its trials ran with --epochs=40, this "
                                 "sweep gives --epochs=5"),
                std::string::npos)
          << f.first.err;
      // The spec with the value its trials ran: old.yaml.
      ASSERT_EQ(m[1].str(), "--epochs=40") << f.first.err;
      next = ReplaceAll(c.command, "new.yaml", "old.yaml");
    } else if (c.name == "changed_fixed_argument_new_out") {
      next = ReplaceAll(c.command, c.replaces, "--out sweeps/five");
    } else {
      EXPECT_FALSE(std::filesystem::exists(dir.Join("sweeps/digit")))
          << "a mistyped --out was created";
      next = ReplaceAll(c.command, c.replaces, m[1].str());
    }
    Finished second = Sh(dir.path(), next, env);
    EXPECT_EQ(second.exit_code, 0) << c.name << ": " << next << "\n"
                                   << second.out << second.err;
  }
}

// Within `trialshim job`, a misspelt or foreign flag gets only job's own
// options; -m (Hydra's multirun) is told to go, and without it job runs.
// Without a subcommand, another command's option is still named.
TEST(MessagesTest, JobSuggestsOnlyItsOwnOptions) {
  const std::string job =
      "$T job --config-path " + kRoot +
      "/examples/digits/conf-lightning --config-name config --image i "
      "--output-dir gs://b/p optimizer.lr=0.01,0.1 --direction maximize -- "
      "digits-train";
  TempDir dir;
  const std::vector<std::string> env = {"T=" + TrialshimBinary()};
  struct Case {
    std::string name, flag, want;
  };
  for (const Case& c : std::vector<Case>{
           {"multirun", "-m", "leave it out"},
           {"long_multirun", "--multirun", "leave it out"},
           {"foreign", "-q", "unknown option '-q' of `trialshim job`"},
       }) {
    std::string command = ReplaceAll(job, "$T job", "$T job " + c.flag);
    Finished bad = Sh(dir.path(), command, env);
    EXPECT_EQ(bad.exit_code, 2) << c.name << "\n" << bad.err;
    EXPECT_NE(bad.err.find(c.want), std::string::npos) << c.name << bad.err;
    EXPECT_EQ(bad.err.find("trialshim check"), std::string::npos)
        << c.name << ": " << bad.err;
    Finished good = Sh(dir.path(), job, env);
    EXPECT_EQ(good.exit_code, 0) << c.name << "\n" << good.err;
  }
}

// Optuna's default direction minimizes val_acc: the warning names the
// flag, and with it the goal is MAXIMIZE and the warning is gone.
TEST(MessagesTest, DirectionWarningNamesTheFix) {
  const std::string job =
      "$T job --config-path " + kRoot +
      "/examples/digits/conf-lightning --config-name config --image i "
      "--output-dir gs://b/p hydra/sweeper=optuna "
      "'optimizer.lr=interval(0.001,0.1)' -- digits-train";
  TempDir dir;
  const std::vector<std::string> env = {"T=" + TrialshimBinary()};
  Finished warned = Sh(dir.path(), job, env);
  ASSERT_EQ(warned.exit_code, 0) << warned.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      warned.err, m,
      std::regex("'val_acc' looks like a score .*give (--direction "
                 "maximize)")))
      << warned.err;
  Finished fixed =
      Sh(dir.path(), ReplaceAll(job, " -- ", " " + m[1].str() + " -- "), env);
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.err.find("looks like a score"), std::string::npos)
      << fixed.err;
  EXPECT_NE(fixed.out.find("goal: MAXIMIZE"), std::string::npos) << fixed.out;
}

// The live table and the leaderboard on an 80-column terminal: every line
// fits (a wrapped row would make the redraw overwrite the wrong lines), long
// rows cut with "..."; the whole values are in trials.csv.
TEST(MessagesTest, TablesFitEightyColumns) {
  TempDir dir;
  std::string spec = Spec("--fixed=1");
  spec = ReplaceAll(
      spec, "  - parameterId: x\n    discreteValueSpec: {values: [1, 2]}\n",
      "  - parameterId: x\n    discreteValueSpec: {values: [1, 2]}\n"
      "  - parameterId: a_rather_long_parameter_name\n"
      "    categoricalValueSpec: {values: [" +
          std::string(60, 'v') + "]}\n");
  dir.Write("job.yaml", spec);
  int master = -1, slave = -1;
  struct winsize ws = {};
  ws.ws_col = 80;
  ws.ws_row = 24;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, &ws), 0);
  std::string tty = ttyname(slave);
  std::string text;
  std::thread reader([&] {
    char buf[4096];
    for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) {
      text.append(buf, n);
    }
  });
  SubprocessOptions spawn = testing::Child::Options({"COLUMNS=200"});
  spawn.cwd = dir.path();
  spawn.out = Stdio::File(tty);
  Finished f = testing::RunToEndWith(
      {TrialshimBinary(), "sweep", "job.yaml", "--out", "o"}, spawn);
  close(slave);  // the reader sees EIO once the child's end is gone too
  reader.join();
  close(master);
  ASSERT_EQ(f.exit_code, 0) << f.err << text;
  std::string plain =
      std::regex_replace(text, std::regex("\x1b\\[[0-9]*A\x1b\\[J|\r"), "");
  size_t cut = 0;
  std::vector<std::string> lines;
  for (size_t at = 0, nl; at < plain.size(); at = nl + 1) {
    nl = plain.find('\n', at);
    if (nl == std::string::npos) nl = plain.size();
    lines.push_back(plain.substr(at, nl - at));
  }
  size_t leaderboard_rows = 0;
  bool in_leaderboard = false;
  for (const std::string& line : lines) {
    in_leaderboard |= line.find("leaderboard") != std::string::npos;
    leaderboard_rows +=
        in_leaderboard && line.find("SUCCEEDED") != std::string::npos;
    if (line.find("ACTIVE") == std::string::npos &&
        line.find("SUCCEEDED") == std::string::npos &&
        line.find("parameters") == std::string::npos) {
      continue;
    }
    cut += line.size() >= 3 && line.substr(line.size() - 3) == "...";
    EXPECT_LE(line.size(), 80u) << line;
  }
  EXPECT_GT(cut, 0u) << "no row was long enough to be cut:\n" << plain;
  EXPECT_EQ(leaderboard_rows, 2u) << plain;
  EXPECT_NE(ReadFile(dir.Join("o/trials.csv")).find(std::string(60, 'v')),
            std::string::npos);
}

// Long user values are abbreviated in errors: a 100 KB path and a
// 120 KB CLUSTER_SPEC each name themselves in a short message.
TEST(MessagesTest, LongValuesAreAbbreviated) {
  TempDir dir;
  std::string path;
  while (path.size() < 100000) path += "abcdefgh/";
  path += "job.yaml";
  std::string hosts(120000, 'h');
  const std::string bad_host =
      "{\"cluster\": {\"workerpool0\": [\"" + hosts +
      "\"]}, \"task\": {\"type\": \"workerpool0\", \"index\": 0}}";
  struct Case {
    std::string name;
    std::vector<std::string> argv, env;
  };
  const std::string t = TrialshimBinary();
  const std::vector<Case> cases = {
      {"check", {t, "check", path}, {}},
      {"sweep", {t, "sweep", path}, {}},
      {"compose",
       {t, "compose", "--config-path", path, "--config-name", "c"},
       {}},
      {"workdir", {t, "sweep", "x.yaml", "--workdir", path}, {}},
      {"run", {t, "--", path}, {}},
      {"resume",
       {t, "sweep", dir.Write("j.yaml", Spec("--a=1")), "--out", path,
        "--resume"},
       {}},
      {"cluster_spec_host", {t, "env"}, {"CLUSTER_SPEC=" + bad_host}},
      // nlohmann's message quotes what it last read: an unterminated string.
      {"cluster_spec_json",
       {t, "env"},
       {"CLUSTER_SPEC={\"cluster\": {\"workerpool0\": [\"" + hosts}},
      {"cluster_spec_type",
       {t, "env"},
       {"CLUSTER_SPEC={\"cluster\": {}, \"task\": {\"type\": \"" + hosts +
        "\"}}"}},
  };
  for (const Case& c : cases) {
    SubprocessOptions o = testing::Child::Options(c.env);
    o.cwd = dir.path();
    Finished f = testing::RunToEndWith(c.argv, o);
    EXPECT_NE(f.exit_code, 0) << c.name;
    EXPECT_LT(f.err.size(), 1000u) << c.name << ": " << f.err.substr(0, 300);
    EXPECT_NE(f.err.find(" bytes) ..."), std::string::npos)
        << c.name << ": " << f.err.substr(0, 300);
  }
}

// The docs' example of a trialshim app's -m (docs/hydra-sweep-to-vertex.md)
// runs as written from the repository root; the form the issue ran, in
// digits-train's own conf, says hparams_search is no group there and no
// longer promises a + that fails too.
TEST(MessagesTest, DigitsMultirunExampleRunsAsWritten) {
  const std::string digits = std::string(TRIALSHIM_BIN_DIR) + "/digits-train";
  if (access(digits.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  Finished wrong = Sh(dir.path(), digits + " -m hparams_search=digits_optuna");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_EQ(wrong.err.find("To append"), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("'hparams_search' is no config group of"),
            std::string::npos)
      << wrong.err;
  std::string doc = ReadFile(kRoot + "/docs/hydra-sweep-to-vertex.md");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      doc, m, std::regex("`(digits-train --config-path[^`]*)`")));
  std::string command = std::regex_replace(m[1].str(), std::regex("\\s+"), " ");
  EXPECT_EQ(command,
            "digits-train --config-path examples/digits/conf-lightning "
            "--config-name config -m hparams_search=digits_optuna");
  // Shortened (one trial of one epoch) and kept out of the source tree.
  Finished ran = Sh(kRoot, ReplaceAll(command, "digits-train", digits) +
                               " hydra.sweeper.n_trials=1 "
                               "trainer.max_epochs=1 hydra.sweep.dir=" +
                               dir.Join("sweep"));
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_NE((ran.out + ran.err).find("Best value:"), std::string::npos)
      << ran.out << ran.err;
}

}  // namespace
}  // namespace trialshim::cli
