// Launch with real ranks (sh scripts): environment, output, exit codes,
// stopping the others when one fails, and `trialshim launch` as a process
// receiving real signals.
#include "trialshim/shim/launch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

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

// An environment without CLUSTER_SPEC or TF_CONFIG, whatever the test's is.
std::optional<std::string> NoCluster(const std::string&) { return std::nullopt; }

EnvLookup Lookup(std::map<std::string, std::string> env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

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
  options.env = NoCluster;
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
  // Rank 1 fails only once rank 0 has set its trap: rank 0 says so through
  // a FIFO that rank 1 reads. Rank 0 then keeps running (the sleeps: a trap
  // runs between commands) until it is stopped, which is under test.
  testing::TempDir dir;
  const std::string ready = dir.Join("ready");
  ASSERT_EQ(mkfifo(ready.c_str(), 0600), 0) << strerror(errno);
  const std::string wait_ready = "read _ < " + ready + "; ";
  const std::vector<Case> cases = {
      {"all succeed", "exit 0", 3, 5, 0, -1, {0, 0, 0}, {}},
      {"one rank fails, the other is stopped by SIGTERM",
       "if [ $RANK = 1 ]; then " + wait_ready +
           "exit 3; fi; trap 'echo stopped; exit 9' TERM; echo > " + ready +
           "; while :; do sleep 0.05; done",
       2,
       30,
       3,
       1,
       {9, 3},
       {{0, 1, "stopped"}}},
      {"a rank ignoring SIGTERM gets SIGKILL after the grace period",
       "if [ $RANK = 1 ]; then " + wait_ready +
           "exit 4; fi; trap '' TERM; echo > " + ready +
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
       "trialshim launch: cannot run '/nonexistent/trainer': No such file"},
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
    options.env = NoCluster;
    auto got = Launch(c.argv, options);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

TEST(LaunchTest, PickFreePortCanBeBound) {
  auto port = PickFreePort("127.0.0.1");
  ASSERT_OK(port);
  EXPECT_GT(*port, 0);
}

// Vertex's shape: a primary and two workers, this replica workerpool1[1].
const char kThreeReplicas[] =
    R"({"cluster":{"workerpool0":["10.0.0.1:2222"],)"
    R"("workerpool1":["10.0.0.2:2222","10.0.0.3:2222"]},)"
    R"("task":{"type":"workerpool1","index":1,"trial":"4"}})";

LaunchOptions TopologyOptions(int nproc, std::map<std::string, std::string> env,
                              std::optional<int> nnodes,
                              std::optional<int> node_rank,
                              std::optional<int> port,
                              std::optional<std::string> addr) {
  LaunchOptions options;
  options.nproc = nproc;
  options.env = Lookup(std::move(env));
  options.nnodes = nnodes;
  options.node_rank = node_rank;
  options.master_port = port;
  options.master_addr = std::move(addr);
  return options;
}

TEST(ResolveTopologyTest, FlagsThenClusterSpecThenDefaults) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> env;
    std::optional<int> nnodes, node_rank, port;
    std::optional<std::string> addr;
    LaunchTopology want;
  };
  const std::string spec = std::string("CLUSTER_SPEC (cluster.workerpool0[0])");
  const std::vector<Case> cases = {
      {"one node on loopback", {}, {}, {}, {}, {}, {1, 0, "127.0.0.1", 0,
                                                    "default", "default",
                                                    "default"}},
      {"replicas are nodes",
       {{"CLUSTER_SPEC", kThreeReplicas}},
       {}, {}, {}, {},
       {3, 2, "10.0.0.1", 2222, spec, spec, spec}},
      {"a flag wins over CLUSTER_SPEC",
       {{"CLUSTER_SPEC", kThreeReplicas}},
       {}, {}, 29400, {},
       {3, 2, "10.0.0.1", 29400, spec, spec, spec}},
      {"TF_CONFIG when there is no CLUSTER_SPEC",
       {{"TF_CONFIG",
         R"({"cluster":{"chief":["c:2222"],"worker":["w:2222"]},"task":{"type":"chief","index":0}})"}},
       {}, {}, {}, {},
       {2, 0, "c", 2222, "TF_CONFIG (cluster.chief[0])",
        "TF_CONFIG (cluster.chief[0])", "TF_CONFIG (cluster.chief[0])"}},
      {"several nodes default to torchrun's port",
       {}, 2, 1, {}, std::string("10.1.1.1"),
       {2, 1, "10.1.1.1", 29500, "--nnodes", "--node-rank", "--master-addr"}},
  };
  for (const Case& c : cases) {
    auto got = ResolveTopology(
        TopologyOptions(1, c.env, c.nnodes, c.node_rank, c.port, c.addr));
    ASSERT_OK(got) << "case " << c.name;
    EXPECT_EQ(got->nnodes, c.want.nnodes) << "case " << c.name;
    EXPECT_EQ(got->node_rank, c.want.node_rank) << "case " << c.name;
    EXPECT_EQ(got->master_addr, c.want.master_addr) << "case " << c.name;
    EXPECT_EQ(got->master_port, c.want.master_port) << "case " << c.name;
    EXPECT_EQ(got->nnodes_from, c.want.nnodes_from) << "case " << c.name;
    EXPECT_EQ(got->node_rank_from, c.want.node_rank_from) << "case " << c.name;
    EXPECT_EQ(got->master_from, c.want.master_from) << "case " << c.name;
  }
}

TEST(ResolveTopologyTest, RefusesWhatCannotRendezvous) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> env;
    int nproc;
    std::optional<int> nnodes, node_rank, port;
    std::optional<std::string> addr;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no workers", {}, 0, {}, {}, {}, {},
       "--nproc-per-node: expected 1..4096, got 0"},
      {"node rank past the nodes", {}, 1, 2, 2, {}, std::string("h"),
       "--node-rank: expected 0..1 (--nnodes 2 from --nnodes), got 2 (from "
       "--node-rank)"},
      {"node rank past CLUSTER_SPEC's replicas",
       {{"CLUSTER_SPEC", kThreeReplicas}}, 1, {}, 5, {}, {},
       "--node-rank: expected 0..2 (--nnodes 3 from CLUSTER_SPEC "
       "(cluster.workerpool0[0])), got 5"},
      {"several nodes need the master's host", {}, 1, 2, 0, {}, {},
       "--nnodes 2 needs --master-addr: the host of node 0"},
      {"several nodes cannot pick a free port", {}, 1, 2, 0, 0,
       std::string("h"),
       "--master-port: expected 1..65535 (every node must use the same "
       "port), got 0"},
      {"an evaluator takes no part",
       {{"CLUSTER_SPEC",
         R"({"cluster":{"workerpool0":["p:1"]},"task":{"type":"workerpool3","index":0}})"}},
       1, {}, {}, {}, {},
       "CLUSTER_SPEC: task workerpool3[0] (role evaluator) takes no part in "
       "the collective"},
      {"malformed CLUSTER_SPEC", {{"CLUSTER_SPEC", "{"}}, 1, {}, {}, {}, {},
       "CLUSTER_SPEC: not valid JSON"},
  };
  for (const Case& c : cases) {
    auto got = ResolveTopology(
        TopologyOptions(c.nproc, c.env, c.nnodes, c.node_rank, c.port, c.addr));
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

// The argv of bin/trialshim launch ARGS.
std::vector<std::string> LaunchCommand(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TRIALSHIM_BIN_DIR "/trialshim", "launch"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
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
        "on this node were stopped"}},
      {"arguments pass untouched, as with torchrun",
       {"--nproc-per-node", "1", "--", TRIALSHIM_BIN_DIR "/trialshim_argv_dump",
        "--lr=0.1", "--out", "d"},
       0,
       {R"([rank 0] ["--lr=0.1","--out","d"])"},
       {}},
      {"--hydra translates as `trialshim --` does",
       {"--nproc-per-node", "1", "--hydra", "--",
        TRIALSHIM_BIN_DIR "/trialshim_argv_dump", "--lr=0.1",
        "--act=relu,gelu", "--fast"},
       0,
       {R"([rank 0] ["lr=0.1","act='relu,gelu'","fast=true"])"},
       {}},
      {"torchrun spelling, node rank from the flag",
       {"--nproc_per_node", "2", "--nnodes", "2", "--node_rank", "1",
        "--master_addr", "127.0.0.1", "--", "sh", "-c", "echo $RANK/$WORLD_SIZE"},
       0,
       {"[rank 2] 2/4\n", "[rank 3] 3/4\n"},
       {}},
      {"--nproc 0 is a usage error", {"--nproc", "0", "--", "true"}, 2, {}, {}},
      {"no command is a usage error", {"--nproc", "2"}, 2, {}, {}},
  };
  for (const Case& c : cases) {
    testing::Finished f = testing::RunToEnd(LaunchCommand(c.args));
    EXPECT_EQ(f.exit_code, c.want_code) << "case " << c.name;
    const std::string& out = f.out;
    const std::string& err = f.err;
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
    testing::Child p(
        LaunchCommand({"--nproc", "2", "--", "sh", "-c",
                       "trap 'echo got $RANK; exit 5' " + std::to_string(sig) +
                           "; echo ready; while :; do sleep 0.05; done"}));
    // Wait until both ranks have installed their trap.
    EXPECT_TRUE(p.WaitForOutput("[rank 0] ready") &&
                p.WaitForOutput("[rank 1] ready"))
        << "case " << name << "\n"
        << p.out();
    p.Signal(sig);
    testing::Finished f = p.Wait();
    EXPECT_EQ(f.exit_code, 5) << "case " << name;
    const std::string& out = f.out;
    EXPECT_NE(out.find("[rank 0] got 0\n"), std::string::npos)
        << "case " << name << "\n"
        << out;
    EXPECT_NE(out.find("[rank 1] got 1\n"), std::string::npos)
        << "case " << name << "\n"
        << out;
  }
}

// `trialshim launch` holds its ranks' whole trees, as the shim and the
// sweep hold theirs: killed with -9 or SIGTERM, nothing a rank started
// survives it, not a background child in the rank's group, not a daemon in
// a session of its own (setsid), not one that ignores SIGTERM.
TEST(LaunchCommandTest, NothingARankStartedOutlivesTheLauncher) {
  struct Case {
    std::string name;
    int signal;
    bool stubborn;  // the daemon ignores SIGTERM
  } cases[] = {{"SIGKILL", SIGKILL, false},
               {"SIGTERM", SIGTERM, false},
               {"SIGTERM, a daemon that ignores it", SIGTERM, true}};
  for (const Case& c : cases) {
    testing::TempDir dir;
    // Each rank: a setsid'd daemon (its pid in daemon-$RANK), a child in
    // its own group (child-$RANK), then "ready" and wait.
    std::string daemon =
        "/usr/bin/python3 -c 'import os, signal, sys, time; pid = os.fork(); "
        "(open(sys.argv[1], \"w\").write(str(pid)) if pid else (os.setsid(), " +
        std::string(c.stubborn
                        ? "signal.signal(signal.SIGTERM, signal.SIG_IGN), "
                        : "") +
        "time.sleep(300)))' " + dir.path() + "/daemon-$RANK";
    testing::Child p(LaunchCommand(
        {"--nproc", "2", "--", "sh", "-c",
         daemon + "; sleep 300 & echo $! > " + dir.path() +
             "/child-$RANK; echo ready; wait"}));
    ASSERT_TRUE(p.WaitForOutput("[rank 0] ready") &&
                p.WaitForOutput("[rank 1] ready"))
        << "case " << c.name << "\n"
        << p.out();
    std::vector<pid_t> pids;
    for (const char* kind : {"daemon-", "child-"}) {
      for (int rank : {0, 1}) {
        std::string text =
            testing::ReadFile(dir.path() + "/" + kind + std::to_string(rank));
        ASSERT_FALSE(text.empty()) << "case " << c.name << ": " << kind << rank;
        pids.push_back(std::stoi(text));
      }
    }
    p.Signal(c.signal);
    p.Wait();
    for (pid_t pid : pids) {
      EXPECT_TRUE(testing::EndsWithin(pid, std::chrono::seconds(30)))
          << "case " << c.name << ": pid " << pid << " outlived the launcher";
    }
  }
}

// Debian's python3-torch, for the tests that run torch.distributed itself.
bool DebianTorch() {
  return testing::RunToEnd({"/usr/bin/python3", "-c", "import torch"})
             .exit_code == 0;
}

const std::string kData =
    std::string(TRIALSHIM_SOURCE_DIR) + "/tests/shim/data";

// "[rank R] {json}" lines of `trialshim launch -- python3 env_json.py`, by R.
std::map<int, nlohmann::json> WorkerReports(const std::string& out) {
  std::map<int, nlohmann::json> by_rank;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    int rank = -1;
    size_t brace = line.find('{');
    if (std::sscanf(line.c_str(), "[rank %d]", &rank) == 1 &&
        brace != std::string::npos) {
      by_rank[rank] = nlohmann::json::parse(line.substr(brace));
    }
  }
  return by_rank;
}

TEST(LaunchCommandTest, WorkerEnvironmentIsTorchruns) {
  if (!DebianTorch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  struct Case {
    std::string name;
    int nproc, nnodes, node_rank;
    std::vector<std::string> env;
  };
  const std::vector<Case> cases = {
      {"one node, two workers", 2, 1, 0, {}},
      {"one worker: OMP_NUM_THREADS untouched", 1, 1, 0, {}},
      {"OMP_NUM_THREADS given is kept", 2, 1, 0, {"OMP_NUM_THREADS=3"}},
      {"node 1 of 2", 2, 2, 1, {}},
  };
  for (const Case& c : cases) {
    auto port = PickFreePort("127.0.0.1");
    ASSERT_OK(port);
    auto torchrun = [&](int node_rank) {
      return std::vector<std::string>{
          "timeout", "60", "/usr/bin/python3", kData + "/torchrun_env.py",
          "--nproc_per_node", std::to_string(c.nproc), "--nnodes",
          std::to_string(c.nnodes), "--node_rank", std::to_string(node_rank),
          "--master_addr", "127.0.0.1", "--master_port",
          std::to_string(*port), kData + "/env_json.py"};
    };
    // torchrun's agent on node 0 hosts the rendezvous store the others
    // need: it holds it until its stdin (a pipe of ours) closes, when node0
    // goes at the end of the case.
    std::vector<std::string> hold = c.env;
    hold.push_back("ORACLE_HOLD=1");
    SubprocessOptions node0_options = testing::Child::Options(hold);
    node0_options.in = Stdio::Pipe();
    std::optional<testing::Child> node0;
    if (c.node_rank != 0) node0.emplace(torchrun(0), node0_options);
    testing::Finished oracle = testing::RunToEnd(torchrun(c.node_rank), c.env);
    ASSERT_EQ(oracle.exit_code, 0) << "case " << c.name << ": " << oracle.err;
    nlohmann::json want = nlohmann::json::parse(oracle.out);

    testing::Finished ours = testing::RunToEnd(
        {TRIALSHIM_BIN_DIR "/trialshim", "launch", "--nproc-per-node",
         std::to_string(c.nproc), "--nnodes", std::to_string(c.nnodes),
         "--node-rank", std::to_string(c.node_rank), "--master-addr",
         "127.0.0.1", "--master-port", std::to_string(*port), "--",
         "/usr/bin/python3", kData + "/env_json.py"},
        c.env);
    ASSERT_EQ(ours.exit_code, 0) << "case " << c.name << ": " << ours.err;
    std::map<int, nlohmann::json> got = WorkerReports(ours.out);
    ASSERT_EQ(got.size(), static_cast<size_t>(c.nproc)) << "case " << c.name;
    for (int local = 0; local < c.nproc; ++local) {
      const nlohmann::json& theirs = want[std::to_string(local)];
      const nlohmann::json& mine = got[c.node_rank * c.nproc + local]["env"];
      for (auto& [name, value] : theirs.items()) {
        // Ours differs on purpose: no agent hosts a store (launch.h).
        std::string expect = name == "TORCHELASTIC_USE_AGENT_STORE"
                                 ? "False"
                                 : value.get<std::string>();
        EXPECT_EQ(mine.value(name, "<unset>"), expect)
            << "case " << c.name << ", local rank " << local << ", " << name;
      }
      EXPECT_EQ(mine.contains("OMP_NUM_THREADS"),
                theirs.contains("OMP_NUM_THREADS"))
          << "case " << c.name;
    }
  }
}

TEST(LaunchCommandTest, TwoReplicasAllReduceOverGloo) {
  if (!DebianTorch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  auto port = PickFreePort("127.0.0.1");
  ASSERT_OK(port);
  // Vertex's CLUSTER_SPEC for a primary and one worker, both on loopback.
  auto spec = [&](const char* type) {
    return std::string("CLUSTER_SPEC=") +
           R"({"cluster":{"workerpool0":["127.0.0.1:)" + std::to_string(*port) +
           R"("],"workerpool1":["127.0.0.1:1"]},"environment":"cloud",)" +
           R"("task":{"type":")" + type + R"(","index":0,"trial":"1"}})";
  };
  std::vector<std::string> argv = {
      "timeout", "120", TRIALSHIM_BIN_DIR "/trialshim", "launch",
      "--nproc-per-node", "2", "--", "/usr/bin/python3",
      kData + "/allreduce.py"};
  testing::Child primary(argv, {spec("workerpool0")});
  testing::Child worker(argv, {spec("workerpool1")});
  testing::Finished p = primary.Wait();
  testing::Finished w = worker.Wait();
  EXPECT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_EQ(w.exit_code, 0) << w.out << w.err;
  // 1 + 2 + 3 + 4: every one of the 4 ranks took part.
  for (const char* line : {"[rank 0] rank 0 of 4: sum 10\n",
                           "[rank 1] rank 1 of 4: sum 10\n"}) {
    EXPECT_NE(p.out.find(line), std::string::npos) << p.out << p.err;
  }
  for (const char* line : {"[rank 2] rank 2 of 4: sum 10\n",
                           "[rank 3] rank 3 of 4: sum 10\n"}) {
    EXPECT_NE(w.out.find(line), std::string::npos) << w.out << w.err;
  }
}

TEST(LaunchCommandTest, PythonScriptRunsUnbuffered) {
  testing::Finished f = testing::RunToEnd(
      {TRIALSHIM_BIN_DIR "/trialshim", "launch", "--", kData + "/env_json.py"},
      {"PYTHON_EXEC=/usr/bin/python3"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  std::map<int, nlohmann::json> got = WorkerReports(f.out);
  ASSERT_EQ(got.count(0), 1u) << f.out;
  EXPECT_EQ(got[0]["orig_argv"],
            nlohmann::json({"/usr/bin/python3", "-u", kData + "/env_json.py"}));
}

}  // namespace
}  // namespace trialshim::shim
