// Launch with real ranks (sh scripts): environment, output, exit codes,
// stopping the others when one fails, and `trialshim launch` as a process
// receiving real signals.
#include "trialshim/shim/launch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>
#include <tuple>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::shim {
namespace {

struct Line {
  int rank;
  int stream;
  std::string text;
  bool operator<(const Line& o) const {
    return std::tie(rank, stream, text) < std::tie(o.rank, o.stream, o.text);
  }
  bool operator==(const Line& o) const {
    return std::tie(rank, stream, text) == std::tie(o.rank, o.stream, o.text);
  }
};

struct Ran {
  LaunchResult result;
  std::set<Line> lines;
};

Ran RunSh(const std::string& script, int nproc, double grace_s = 5,
          int port = 0) {
  Ran ran;
  LaunchOptions options;
  options.nproc = nproc;
  options.master_port = port;
  options.grace = std::chrono::milliseconds(static_cast<int>(grace_s * 1000));
  options.on_line = [&ran](int rank, int stream, std::string_view line) {
    ran.lines.insert({rank, stream, std::string(line)});
  };
  auto got = Launch({"/bin/sh", "-c", script}, options);
  EXPECT_OK(got);
  if (got.ok()) ran.result = *got;
  return ran;
}

TEST(LaunchTest, RanksGetTheirEnvironmentAndOutputIsSplitByRank) {
  Ran ran = RunSh(
      "echo out $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR "
      "$MASTER_PORT; echo err $RANK >&2; printf 'no newline'",
      2, 5, 23456);
  EXPECT_EQ(ran.result.exit_code, 0);
  EXPECT_EQ(ran.result.failed_rank, -1);
  EXPECT_EQ(ran.result.master_port, 23456);
  std::set<Line> want = {
      {0, 1, "out 0 0 2 2 127.0.0.1 23456"},
      {1, 1, "out 1 1 2 2 127.0.0.1 23456"},
      {0, 2, "err 0"},
      {1, 2, "err 1"},
      {0, 1, "no newline"},
      {1, 1, "no newline"},
  };
  EXPECT_EQ(ran.lines, want);
}

TEST(LaunchTest, ExitCodesAndStoppingTheOthers) {
  struct Case {
    std::string name;
    std::string script;
    int nproc;
    double grace_s;
    int want_code;
    int want_failed;
    std::vector<int> want_rank_codes;
    std::vector<Line> want_lines;
  };
  // Rank 1 fails only once rank 0 has set its trap (the file appears).
  testing::TempDir dir;
  const std::string ready = dir.Join("ready");
  const std::string wait_ready =
      "while [ ! -e " + ready + " ]; do sleep 0.02; done; ";
  const std::vector<Case> cases = {
      {"all succeed", "exit 0", 3, 5, 0, -1, {0, 0, 0}, {}},
      {"one rank fails, the other is stopped by SIGTERM",
       "if [ $RANK = 1 ]; then " + wait_ready +
           "exit 3; fi; trap 'echo stopped; exit 9' TERM; touch " + ready +
           "; while :; do sleep 0.05; done",
       2,
       30,
       3,
       1,
       {9, 3},
       {{0, 1, "stopped"}}},
      {"a rank ignoring SIGTERM gets SIGKILL after the grace period",
       "if [ $RANK = 1 ]; then " + wait_ready +
           "exit 4; fi; trap '' TERM; touch " + ready +
           "; while :; do sleep 0.05; done",
       2,
       0.3,
       4,
       1,
       {128 + SIGKILL, 4},
       {}},
      {"a rank killed by a signal",
       "[ $RANK = 1 ] && kill -SEGV $$; sleep 30",
       2,
       5,
       128 + SIGSEGV,
       1,
       {128 + SIGTERM, 128 + SIGSEGV},
       {}},
  };
  for (const Case& c : cases) {
    std::filesystem::remove(ready);
    Ran ran = RunSh(c.script, c.nproc, c.grace_s);
    EXPECT_EQ(ran.result.exit_code, c.want_code) << "case " << c.name;
    EXPECT_EQ(ran.result.failed_rank, c.want_failed) << "case " << c.name;
    EXPECT_EQ(ran.result.rank_codes, c.want_rank_codes) << "case " << c.name;
    for (const Line& l : c.want_lines) {
      EXPECT_EQ(ran.lines.count(l), 1u) << "case " << c.name << ": " << l.text;
    }
  }
}

TEST(LaunchTest, CommandThatCannotRun) {
  testing::TempDir dir;
  std::string not_exec = dir.Write("script.sh", "echo hi\n");
  struct Case {
    std::string name;
    std::string command;
    int want_code;
    std::string want_err;
  };
  const std::vector<Case> cases = {
      {"not found", "/nonexistent/trainer", 127,
       "trialshim launch: cannot run /nonexistent/trainer: No such file"},
      {"not executable", not_exec, 126, "Permission denied"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> errs;
    LaunchOptions options;
    options.nproc = 2;
    options.on_line = [&](int, int stream, std::string_view line) {
      if (stream == 2) errs.emplace_back(line);
    };
    auto got = Launch({c.command}, options);
    ASSERT_OK(got) << "case " << c.name;
    EXPECT_EQ(got->exit_code, c.want_code) << "case " << c.name;
    ASSERT_FALSE(errs.empty()) << "case " << c.name;
    EXPECT_NE(errs[0].find(c.want_err), std::string::npos)
        << "case " << c.name << ": " << errs[0];
  }
}

TEST(LaunchTest, BadOptions) {
  struct Case {
    std::string name;
    std::vector<std::string> argv;
    int nproc;
    int port;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"empty command", {}, 1, 0, "no command"},
      {"zero ranks", {"true"}, 0, 0, "--nproc"},
      {"port out of range", {"true"}, 1, 70000, "--master-port"},
  };
  for (const Case& c : cases) {
    LaunchOptions options;
    options.nproc = c.nproc;
    options.master_port = c.port;
    auto got = Launch(c.argv, options);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    EXPECT_NE(got.status().message().find(c.want), std::string::npos)
        << "case " << c.name;
  }
}

TEST(LaunchTest, PickFreePortCanBeBound) {
  auto port = PickFreePort("127.0.0.1");
  ASSERT_OK(port);
  EXPECT_GT(*port, 0);
}

// bin/trialshim launch as a real process, stdout/stderr to files.
struct Process {
  pid_t pid = -1;
  std::string out_path, err_path;
};

Process Start(const testing::TempDir& dir,
              const std::vector<std::string>& args) {
  Process p;
  p.out_path = dir.Join("out");
  p.err_path = dir.Join("err");
  std::vector<std::string> argv = {TRIALSHIM_BIN_DIR "/trialshim", "launch"};
  argv.insert(argv.end(), args.begin(), args.end());
  p.pid = fork();
  if (p.pid == 0) {
    if (!freopen(p.out_path.c_str(), "w", stdout) ||
        !freopen(p.err_path.c_str(), "w", stderr)) {
      _exit(99);
    }
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  return p;
}

int Wait(const Process& p) {
  int status = 0;
  waitpid(p.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(LaunchCommandTest, PrefixesOutputAndReportsTheFailingRank) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    int want_code;
    std::vector<std::string> want_out, want_err;
  };
  const std::vector<Case> cases = {
      {"prefixed",
       {"--nproc", "2", "--", "sh", "-c",
        "echo hello $RANK of $WORLD_SIZE; echo oops >&2"},
       0,
       {"[rank 0] hello 0 of 2\n", "[rank 1] hello 1 of 2\n"},
       {"[rank 0] oops\n", "[rank 1] oops\n"}},
      {"failing rank's code",
       {"--nproc", "2", "--grace", "1", "--", "sh", "-c",
        "[ $RANK = 1 ] && exit 7; sleep 30"},
       7,
       {},
       {"trialshim launch: rank 1 failed with exit code 7; the other ranks "
        "were stopped"}},
      {"--nproc 0 is a usage error", {"--nproc", "0", "--", "true"}, 2, {}, {}},
      {"no command is a usage error", {"--nproc", "2"}, 2, {}, {}},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    Process p = Start(dir, c.args);
    EXPECT_EQ(Wait(p), c.want_code) << "case " << c.name;
    std::string out = testing::ReadFile(p.out_path);
    std::string err = testing::ReadFile(p.err_path);
    for (const std::string& w : c.want_out) {
      EXPECT_NE(out.find(w), std::string::npos)
          << "case " << c.name << ": " << w << " in\n"
          << out;
    }
    for (const std::string& w : c.want_err) {
      EXPECT_NE(err.find(w), std::string::npos)
          << "case " << c.name << ": " << w << " in\n"
          << err;
    }
  }
}

TEST(LaunchCommandTest, ForwardsSignalsToEveryRank) {
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) {
    std::string name = strsignal(sig);
    testing::TempDir dir;
    Process p =
        Start(dir, {"--nproc", "2", "--", "sh", "-c",
                    "trap 'echo got $RANK; exit 5' " + std::to_string(sig) +
                        "; echo ready; while :; do sleep 0.05; done"});
    // Wait until both ranks have installed their trap.
    std::string out;
    for (int i = 0; i < 200; ++i) {
      out = testing::ReadFile(p.out_path);
      if (out.find("[rank 0] ready") != std::string::npos &&
          out.find("[rank 1] ready") != std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(p.pid, sig);
    EXPECT_EQ(Wait(p), 5) << "case " << name;
    out = testing::ReadFile(p.out_path);
    EXPECT_NE(out.find("[rank 0] got 0\n"), std::string::npos)
        << "case " << name << "\n"
        << out;
    EXPECT_NE(out.find("[rank 1] got 1\n"), std::string::npos)
        << "case " << name << "\n"
        << out;
  }
}

}  // namespace
}  // namespace trialshim::shim
