// RunProgram with real child processes: launch failures, exit statuses,
// signal forwarding, the signal state the program starts with, and metric
// scraping. Each RunProgram call happens in a forked child of the test (its
// stdout/stderr redirected to files), so exec mode can replace it and
// signals can be sent to it.
#include "trialshim/shim/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::shim {
namespace {

using ::trialshim::hypertune::HypertuneReporter;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::TempDir;
using ::trialshim::testing::WaitForFile;

struct ChildRun {
  int exit_code = -1;  // of the forked supervisor (-1: killed by a signal)
  int term_signal = 0;
  std::string error;  // RunResult::error
  std::string warnings;
  int metrics = 0;
  std::string out;
  std::string err;
};

// Forks; the child redirects stdout/stderr into `dir`, runs `before` (to
// change its own signal state), calls RunProgram and exits with its code
// after writing the RunResult to a file. `during` runs in the parent while
// the child runs (to send signals).
ChildRun RunInChild(const TempDir& dir, const std::vector<std::string>& argv,
                    const RunOptions& options,
                    const std::function<void()>& before = nullptr,
                    const std::function<void(pid_t)>& during = nullptr) {
  std::string out_path = dir.Join("stdout");
  std::string err_path = dir.Join("stderr");
  std::string result_path = dir.Join("result");
  // A fork, not testing::Child: the child runs RunProgram itself (in exec
  // mode it becomes the program).
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    if (before) before();
    RunResult r = RunProgram(argv, options);
    std::ostringstream s;
    s << r.metrics_reported << "\n" << r.error << "\n";
    for (const std::string& w : r.warnings) s << w << "|";
    dir.Write("result", s.str());
    _exit(r.exit_code);
  }
  if (during) during(pid);
  int status = 0;
  waitpid(pid, &status, 0);
  ChildRun run;
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.term_signal = WTERMSIG(status);
  std::istringstream result(ReadFile(result_path));
  std::string metrics;
  std::getline(result, metrics);
  run.metrics = metrics.empty() ? 0 : std::atoi(metrics.c_str());
  std::getline(result, run.error);
  std::getline(result, run.warnings);
  run.out = ReadFile(out_path);
  run.err = ReadFile(err_path);
  return run;
}

TEST(RunProgram, LaunchFailuresInEveryMode) {
  TempDir tmp;
  std::string not_exec = tmp.Write("script.sh", "#!/bin/sh\necho hi\n");
  chmod(not_exec.c_str(), 0644);
  struct Case {
    const char* name;
    std::string program;
    int want_code;
    std::vector<std::string> want_in_message;
  };
  const std::vector<Case> cases = {
      {"missing_absolute",
       tmp.Join("nope/train"),
       127,
       {tmp.Join("nope/train"), "No such file or directory"}},
      {"missing_in_path",
       "trialshim-no-such-command",
       127,
       {"trialshim-no-such-command", "not found in PATH"}},
      {"not_executable", not_exec, 126, {not_exec, "Permission denied"}},
      {"directory", tmp.path(), 126, {tmp.path(), "Permission denied"}},
  };
  for (bool supervise : {false, true}) {
    for (const Case& c : cases) {
      RunOptions options;
      options.force_supervise = supervise;
      ChildRun run = RunInChild(tmp, {c.program, "--lr=1"}, options);
      std::string name =
          std::string(c.name) + (supervise ? "/supervised" : "/exec");
      EXPECT_EQ(run.exit_code, c.want_code) << "case " << name;
      for (const std::string& part : c.want_in_message) {
        EXPECT_NE(run.error.find(part), std::string::npos)
            << "case " << name << ": " << run.error;
      }
    }
  }
}

TEST(RunProgram, SupervisedExitStatus) {
  struct Case {
    const char* name;
    std::string script;
    int want;
  } cases[] = {
      {"zero", "exit 0", 0},
      {"three", "exit 3", 3},
      {"two_five_five", "exit 255", 255},
      {"sigterm", "kill -TERM $$", 128 + SIGTERM},
      {"sigkill", "kill -KILL $$", 128 + SIGKILL},
      {"sigsegv", "kill -SEGV $$", 128 + SIGSEGV},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    RunOptions options;
    options.force_supervise = true;
    ChildRun run = RunInChild(tmp, {"/bin/sh", "-c", c.script}, options);
    EXPECT_EQ(run.exit_code, c.want) << "case " << c.name << " " << run.error;
    EXPECT_EQ(run.error, "") << "case " << c.name;
  }
}

TEST(RunProgram, ExecModeReplacesTheProcess) {
  TempDir tmp;
  RunOptions options;
  pid_t seen = 0;
  // The program's $$ is the pid of the process that called RunProgram.
  ChildRun run = RunInChild(tmp, {"/bin/sh", "-c", "echo $$; exit 5"}, options,
                            nullptr, [&seen](pid_t pid) { seen = pid; });
  EXPECT_EQ(run.exit_code, 5);
  EXPECT_EQ(run.out, std::to_string(seen) + "\n");
}

TEST(RunProgram, SupervisedForwardsEachSignal) {
  const int signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (int sig : signals) {
    TempDir tmp;
    std::string ready = tmp.Join("ready");
    std::string name = std::to_string(sig);
    // The trap exits with 40 + N so the test sees which signal arrived;
    // short sleeps keep the shell alive for it (a trap runs between
    // commands).
    std::string script = "trap 'exit $((40 + " + name + "))' " + name +
                         "; : > " + ready + "; while :; do sleep 0.02; done";
    RunOptions options;
    options.force_supervise = true;
    ChildRun run = RunInChild(tmp, {"/bin/sh", "-c", script}, options, nullptr,
                              [&](pid_t pid) {
                                ASSERT_TRUE(WaitForFile(ready));
                                kill(pid, sig);
                              });
    EXPECT_EQ(run.exit_code, 40 + sig)
        << "case signal " << sig << " " << run.err;
  }
}

TEST(RunProgram, SignalsReachTheWholeGroupAndItIsWaitedFor) {
  // A trainer behind a shell: the shell dies of the forwarded signal at
  // once, the trainer (its child, in the same group) gets it too and is
  // waited for while it "saves"; so it writes its file before RunProgram
  // returns with the shell's status.
  struct Case {
    const char* name;
    int sig;
  };
  for (const Case& c : {Case{"sigterm", SIGTERM}, Case{"sighup", SIGHUP}}) {
    TempDir tmp;
    std::string ready = tmp.Join("ready"), saved = tmp.Join("saved");
    std::string trainer = "trap 'sleep 0.5; echo saved > " + saved +
                          "; exit 0' " + std::to_string(c.sig) + "; : > " +
                          ready + "; while :; do sleep 0.02; done";
    RunOptions options;
    options.force_supervise = true;
    ChildRun run = RunInChild(
        tmp, {"/bin/bash", "-c", "/bin/sh -c \"$0\"; echo done", trainer},
        options, nullptr, [&](pid_t pid) {
          ASSERT_TRUE(WaitForFile(ready));
          kill(pid, c.sig);
        });
    EXPECT_EQ(run.exit_code, 128 + c.sig) << "case " << c.name << run.err;
    EXPECT_EQ(ReadFile(saved), "saved\n") << "case " << c.name;
    EXPECT_EQ(run.out.find("done"), std::string::npos) << "case " << c.name;
  }
}

TEST(RunProgram, LeftoversOfANormalExitAreEnded) {
  // A background job the program left in its group gets SIGTERM when the
  // program exits, so no child outlives the trial unseen.
  // The job says it is ready (trap set, pid written) through a FIFO that
  // the program reads before it exits; its loop keeps it alive until then.
  TempDir tmp;
  std::string pid_file = tmp.Join("pid"), got = tmp.Join("got");
  std::string ready = tmp.Join("ready");
  ASSERT_EQ(mkfifo(ready.c_str(), 0600), 0) << strerror(errno);
  RunOptions options;
  options.force_supervise = true;
  ChildRun run = RunInChild(
      tmp,
      {"/bin/sh", "-c",
       "sh -c 'trap \"echo term > " + got + "; exit 0\" TERM; echo $$ > " +
           pid_file + "; echo > " + ready +
           "; while :; do sleep 0.02; done' & "
           "read _ < " +
           ready + "; exit 3"},
      options);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(ReadFile(got), "term\n");
  pid_t left = std::atoi(ReadFile(pid_file).c_str());
  ASSERT_GT(left, 0);
  EXPECT_NE(kill(left, 0), 0) << "pid " << left << " outlived the trial";
}

// Hex masks from /proc/<pid>/status, bit N-1 for signal N.
uint64_t MaskOf(const std::string& status, const std::string& field) {
  size_t at = status.find(field + ":");
  if (at == std::string::npos) return ~0ull;
  return std::strtoull(status.c_str() + at + field.size() + 1, nullptr, 16);
}

TEST(RunProgram, ProgramStartsWithCleanSignalState) {
  // Whatever trialshim inherited (ignored or blocked SIGTERM, as a careless
  // parent may leave it), the trainer must be killable by SIGTERM.
  auto messy = [] {
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, nullptr);
  };
  const uint64_t must_be_default =
      (1ull << (SIGTERM - 1)) | (1ull << (SIGINT - 1)) |
      (1ull << (SIGPIPE - 1)) | (1ull << (SIGHUP - 1)) |
      (1ull << (SIGUSR1 - 1)) | (1ull << (SIGUSR2 - 1));
  for (bool supervise : {false, true}) {
    for (bool scrape : {false, true}) {
      if (scrape && !supervise) continue;
      TempDir tmp;
      RunOptions options;
      options.force_supervise = supervise;
      if (scrape) options.metric_regex = "never-matches-(x)";
      ChildRun run =
          RunInChild(tmp, {"cat", "/proc/self/status"}, options, messy);
      std::string name = supervise ? (scrape ? "scrape" : "supervise") : "exec";
      ASSERT_EQ(run.exit_code, 0) << "case " << name << " " << run.error;
      EXPECT_EQ(MaskOf(run.out, "SigBlk"), 0u) << "case " << name;
      EXPECT_EQ(MaskOf(run.out, "SigIgn") & must_be_default, 0u)
          << "case " << name;
    }
  }
}

TEST(RunProgram, ScrapesMetricsFromStdoutAndStderr) {
  TempDir tmp;
  HypertuneReporter reporter(tmp.Join("hp/output.metrics"), "4");
  RunOptions options;
  options.metric_regex = R"(val_loss=([-+0-9.eE]+|nan)(?: step=(\d+))?)";
  options.metric_tag = "val_loss";
  options.reporter = &reporter;
  std::string script =
      "echo 'epoch 1 val_loss=0.5'; echo 'no metric here'; "
      "echo 'val_loss=2.5e-3 step=7' >&2; printf 'progress\\rval_loss=nan\\r'; "
      "printf 'val_loss=0.125'; exit 3";
  ChildRun run = RunInChild(tmp, {"/bin/sh", "-c", script}, options);
  EXPECT_EQ(run.exit_code, 3) << run.error;
  EXPECT_EQ(run.metrics, 4);
  // Output is passed through byte for byte.
  EXPECT_EQ(run.out,
            "epoch 1 val_loss=0.5\nno metric "
            "here\nprogress\rval_loss=nan\rval_loss=0.125");
  EXPECT_EQ(run.err, "val_loss=2.5e-3 step=7\n");
  std::string metrics = ReadFile(tmp.Join("hp/output.metrics"));
  std::vector<std::string> lines;
  std::istringstream in(metrics);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << metrics;
  // stdout and stderr are read concurrently, so only per-stream order holds.
  auto has = [&](const std::string& part) {
    for (const std::string& l : lines) {
      if (l.find(part) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(R"("global_step": "0", "timestamp": )")) << metrics;
  EXPECT_TRUE(has(R"("trial": "4", "val_loss": "0.5"})")) << metrics;
  EXPECT_TRUE(has(R"("global_step": "7")")) << metrics;
  EXPECT_TRUE(has(R"("val_loss": "0.0025"})")) << metrics;
  EXPECT_TRUE(has(R"("val_loss": "nan"})")) << metrics;
  // The last line had no newline: it is matched at end of output.
  EXPECT_TRUE(has(R"("val_loss": "0.125"})")) << metrics;
}

// Which group is the value and which the step, and the steps of matches
// without one: numbered 1, 2, ... so the sweep sees a curve.
TEST(RunProgram, ScrapedStepsFromAGroupOrNumbered) {
  struct Case {
    const char* name;
    const char* regex;
    const char* output;
    std::string want;  // "value@step ..." in the file's order
  };
  const Case cases[] = {
      {"numbered", R"(loss=([0-9.]+))", "loss=0.5\nloss=0.25\nloss=0.125\n",
       "0.5@1 0.25@2 0.125@3"},
      {"non_numbers_not_counted", R"(loss=(\S+))", "loss=abc\nloss=0.5\n",
       "0.5@1"},
      {"second_group", R"(loss=([0-9.]+) at (\d+))",
       "loss=0.5 at 10\nloss=0.25 at 20\n", "0.5@10 0.25@20"},
      {"named_groups_in_any_order",
       R"((?P<step>\d+): (?:loss|acc)=(?P<value>[0-9.]+))",
       "10: loss=0.5\n20: acc=0.25\n", "0.5@10 0.25@20"},
      {"named_value_only", R"((epoch) (?P<value>[0-9.]+))",
       "epoch 0.5\nepoch 0.25\n", "0.5@1 0.25@2"},
      // A captured step is written as cloudml-hypertune writes one given as
      // text, str(int(text)), of any size; one int() refuses is step 0.
      {"huge_step", R"(loss=([0-9.]+) at (\d+))",
       "loss=0.5 at 99999999999999999999\n", "0.5@99999999999999999999"},
      {"step_int_refuses", R"(loss=([0-9.]+) at ([0-9.]+))",
       "loss=0.5 at 1.5\n", "0.5@0"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    HypertuneReporter reporter(tmp.Join("m"), "1");
    RunOptions options;
    options.metric_regex = c.regex;
    options.metric_tag = "loss";
    options.reporter = &reporter;
    ChildRun run = RunInChild(
        tmp, {"/bin/sh", "-c", std::string("printf '") + c.output + "'"},
        options);
    EXPECT_EQ(run.exit_code, 0) << c.name << ": " << run.error;
    std::string got;
    std::istringstream in(ReadFile(tmp.Join("m")));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      got += (got.empty() ? "" : " ") + j["loss"].get<std::string>() + "@" +
             j["global_step"].get<std::string>();
    }
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(RunProgram, ScrapeWarnsOnNonNumbersAndSetsPythonUnbuffered) {
  TempDir tmp;
  HypertuneReporter reporter(tmp.Join("m"), "0");
  RunOptions options;
  options.metric_regex = R"(loss=(\S+))";
  options.reporter = &reporter;
  ChildRun run = RunInChild(
      tmp,
      {"/bin/sh", "-c", "echo loss=abc; echo \"unbuffered=$PYTHONUNBUFFERED\""},
      options);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.metrics, 0);
  EXPECT_NE(run.warnings.find("'abc'"), std::string::npos) << run.warnings;
  EXPECT_NE(run.out.find("unbuffered=1"), std::string::npos) << run.out;
}

TEST(RunProgram, ScrapePassesLinesThroughAsTheyCome) {
  TempDir tmp;
  std::string go = tmp.Join("go");
  HypertuneReporter reporter(tmp.Join("m"), "0");
  RunOptions options;
  options.metric_regex = R"(acc=([0-9.]+))";
  options.reporter = &reporter;
  // The program prints, then waits (a line on the FIFO `go`) for the test
  // to have seen the line; a shim that held output back until exit would
  // never let it finish. The test holds `go` open for writing from the
  // start, so neither side's open blocks.
  ASSERT_EQ(mkfifo(go.c_str(), 0600), 0) << strerror(errno);
  int go_fd = open(go.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(go_fd, 0) << strerror(errno);
  std::string script = "echo 'acc=0.75'; read line < " + go +
                       "; [ \"$line\" = go ] && exit 0; exit 9";
  bool seen_early = false;
  ChildRun run =
      RunInChild(tmp, {"/bin/sh", "-c", script}, options, nullptr, [&](pid_t) {
        seen_early =
            testing::WaitForFileText(tmp.Join("stdout"), {"acc=0.75\n"}) &&
            testing::WaitForFileText(tmp.Join("m"), {"0.75"});
        EXPECT_EQ(write(go_fd, "go\n", 3), 3);
      });
  close(go_fd);
  EXPECT_TRUE(seen_early);
  EXPECT_EQ(run.exit_code, 0);
}

TEST(RunProgram, BadRegexIsAUsageError) {
  struct Case {
    const char* name;
    const char* regex;
    const char* want;
  } cases[] = {{"unbalanced", "loss=(", "missing )"},
               {"no_group", "loss=[0-9]+", "capture group"}};
  for (const Case& c : cases) {
    RunOptions options;
    options.metric_regex = c.regex;
    RunResult r = RunProgram({"/bin/true"}, options);
    EXPECT_EQ(r.exit_code, 2) << "case " << c.name;
    EXPECT_NE(r.error.find(c.want), std::string::npos)
        << "case " << c.name << ": " << r.error;
  }
}

}  // namespace
}  // namespace trialshim::shim
