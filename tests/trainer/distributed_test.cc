// DistributedContext and ShardIndices: sharding against Python's
// DistributedSampler, in-process checks on a one-rank group, and real 2-rank
// training runs on 127.0.0.1 started by `trialshim launch` (ddp_worker).
#include "trialshim/trainer/distributed.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

TEST(ShardIndicesTest, MatchesDistributedSampler) {
  // Expected values printed by torch 1.13's
  // DistributedSampler(range(n), num_replicas, rank, shuffle, seed,
  // drop_last) after set_epoch(epoch).
  struct Case {
    std::string name;
    int64_t n, epoch;
    int world;
    uint64_t seed;
    bool shuffle, drop_last;
    std::vector<std::vector<int64_t>> want;  // by rank
  };
  const std::vector<Case> cases = {
      {"shuffled, padded",
       10,
       2,
       3,
       5,
       true,
       false,
       {{5, 4, 9, 2}, {0, 1, 6, 5}, {3, 7, 8, 0}}},
      {"shuffled, drop_last",
       10,
       2,
       3,
       5,
       true,
       true,
       {{5, 4, 9}, {0, 1, 6}, {3, 7, 8}}},
      {"in order, padded", 5, 0, 2, 0, false, false, {{0, 2, 4}, {1, 3, 0}}},
      {"in order, drop_last", 5, 0, 2, 0, false, true, {{0, 2}, {1, 3}}},
      {"one rank is everything in order",
       4,
       0,
       1,
       0,
       false,
       false,
       {{0, 1, 2, 3}}},
      {"fewer samples than ranks", 1, 0, 3, 0, false, false, {{0}, {0}, {0}}},
  };
  for (const Case& c : cases) {
    for (int r = 0; r < c.world; ++r) {
      EXPECT_EQ(ShardIndices(c.n, c.epoch, r, c.world, c.seed, c.shuffle,
                             c.drop_last),
                c.want[r])
          << "case " << c.name << ", rank " << r;
    }
  }
}

TEST(ShardIndicesTest, EpochsReshuffleAndRanksPartition) {
  const int64_t n = 1000;
  std::set<int64_t> seen;
  for (int r = 0; r < 4; ++r) {
    auto shard = ShardIndices(n, 3, r, 4, 9);
    EXPECT_EQ(shard.size(), 250u) << "case rank " << r;
    seen.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(seen.size(), 1000u) << "case partition";
  EXPECT_NE(ShardIndices(n, 3, 0, 4, 9), ShardIndices(n, 4, 0, 4, 9))
      << "case new epoch";
  EXPECT_EQ(ShardIndices(n, 3, 0, 4, 9), ShardIndices(n, 3, 0, 4, 9))
      << "case repeatable";
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

DistributedOptions OneRank() {
  return DistributedOptions()
      .rank(0)
      .world_size(1)
      .master_addr("127.0.0.1")
      .master_port(FreePort())
      .timeout(std::chrono::seconds(20));
}

TEST(DistributedContextTest, BadEnvironmentNamesTheVariable) {
  struct Case {
    std::string name;
    std::vector<std::pair<const char*, const char*>> env;  // nullptr: unset
    DistributedOptions options;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no WORLD_SIZE", {{"WORLD_SIZE", nullptr}}, {}, "WORLD_SIZE is not set"},
      {"bad RANK",
       {{"WORLD_SIZE", "2"}, {"RANK", "one"}},
       {},
       "RANK: expected an integer 0..1, got \"one\""},
      {"RANK too big",
       {{"WORLD_SIZE", "2"}, {"RANK", "2"}},
       {},
       "RANK: expected an integer 0..1"},
      {"no MASTER_ADDR",
       {{"WORLD_SIZE", "1"},
        {"RANK", "0"},
        {"MASTER_PORT", "29500"},
        {"MASTER_ADDR", nullptr}},
       {},
       "MASTER_ADDR is not set"},
      {"bad MASTER_PORT",
       {{"WORLD_SIZE", "1"}, {"RANK", "0"}, {"MASTER_PORT", "99999"}},
       {},
       "MASTER_PORT: expected an integer 1..65535"},
      {"bad timeout",
       {{"TRIALSHIM_DIST_TIMEOUT", "soon"}},
       DistributedOptions().rank(0).world_size(1).master_addr("x").master_port(
           1),
       "TRIALSHIM_DIST_TIMEOUT: expected seconds > 0"},
      {"unknown backend", {}, OneRank().backend("mpi"), "backend: expected"},
      // Without NCCL in the build (Debian's LibTorch), or without a device
      // to run it on (the CUDA build here; skipped where there is one).
      {"nccl without NCCL or a device", {}, OneRank().backend("nccl"),
       "backend: nccl, but"},
  };
  for (const Case& c : cases) {
    if (c.name.rfind("nccl", 0) == 0 && torch::cuda::is_available()) continue;
    for (auto& [k, v] : c.env) {
      if (v == nullptr) {
        unsetenv(k);
      } else {
        setenv(k, v, 1);
      }
    }
    auto got = DistributedContext::FromEnvironment(c.options);
    for (auto& [k, v] : c.env) unsetenv(k);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

// A module with one parameter backward never reaches.
struct TwoHeads : torch::nn::Module {
  TwoHeads() {
    used = register_module("used", torch::nn::Linear(3, 2));
    unused = register_module("unused", torch::nn::Linear(3, 2));
  }
  torch::nn::Linear used{nullptr}, unused{nullptr};
};

TEST(DistributedContextTest, OneRankKeepsGradientsAndAccumulation) {
  for (bool overlap : {true, false}) {
    std::string name = overlap ? "overlap" : "after backward";
    auto ctx = DistributedContext::FromEnvironment(
        OneRank().overlap_backward(overlap).bucket_cap_mb(1e-5));
    ASSERT_OK(ctx) << "case " << name;
    TwoHeads m;
    ASSERT_OK((*ctx)->PrepareModule(m)) << "case " << name;
    torch::Tensor x = torch::ones({4, 3});
    m.used->forward(x).sum().backward();
    // d(sum(W x + b))/dW over 4 rows of ones: 4 everywhere. (With overlap,
    // .grad is only valid after AllReduceGradients.)
    const torch::Tensor first = torch::full({2, 3}, 4.0);
    ASSERT_OK((*ctx)->AllReduceGradients()) << "case " << name;
    EXPECT_TRUE(torch::equal(m.used->weight.grad(), first)) << "case " << name;
    EXPECT_FALSE(m.unused->weight.grad().defined())
        << "case " << name << ": no gradient anywhere stays none";
    // A second backward without zero_grad accumulates, as without ddp.
    m.used->forward(x).sum().backward();
    ASSERT_OK((*ctx)->AllReduceGradients()) << "case " << name;
    EXPECT_TRUE(torch::allclose(m.used->weight.grad(), 2 * first))
        << "case " << name;
    auto mean = (*ctx)->AllReduceMean(std::vector<double>{1.5, -2});
    ASSERT_OK(mean) << "case " << name;
    EXPECT_EQ(*mean, (std::vector<double>{1.5, -2})) << "case " << name;
    EXPECT_OK((*ctx)->Barrier()) << "case " << name;
  }
}

TEST(DistributedContextTest, OverlapRefusesTwoBackwardsWithoutReduce) {
  auto ctx = DistributedContext::FromEnvironment(OneRank());
  ASSERT_OK(ctx);
  torch::nn::Linear m(3, 2);
  ASSERT_OK((*ctx)->PrepareModule(*m));
  m->forward(torch::ones({1, 3})).sum().backward();
  m->forward(torch::ones({1, 3})).sum().backward();
  Status st = (*ctx)->AllReduceGradients();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st, StatusIs(_, HasSubstr("call it after every backward()")));
}

struct LaunchRun {
  int code = -1;
  std::string out, err;
  std::vector<nlohmann::json> ranks;
};

// `trialshim launch --nproc N -- ddp_worker --out DIR ARGS...`.
LaunchRun Launch(int nproc, const std::vector<std::string>& worker_args,
                 const std::string& timeout_s = "60") {
  testing::TempDir dir;
  std::vector<std::string> argv = {TRIALSHIM_BIN_DIR "/trialshim",
                                   "launch",
                                   "--nproc",
                                   std::to_string(nproc),
                                   "--grace",
                                   "2",
                                   "--",
                                   TRIALSHIM_BIN_DIR "/ddp_worker",
                                   "--out",
                                   dir.path()};
  argv.insert(argv.end(), worker_args.begin(), worker_args.end());
  testing::Finished f =
      testing::RunToEnd(argv, {"TRIALSHIM_DIST_TIMEOUT=" + timeout_s});
  LaunchRun run;
  run.code = f.code();
  run.out = f.out;
  run.err = f.err;
  for (int r = 0; r < nproc; ++r) {
    std::string text =
        testing::ReadFile(dir.Join("rank" + std::to_string(r) + ".json"));
    run.ranks.push_back(text.empty() ? nlohmann::json()
                                     : nlohmann::json::parse(text));
  }
  return run;
}

TEST(DdpTest, TwoRanksMatchOneRank) {
  const std::vector<std::string> common = {"--steps", "24", "--global-batch",
                                           "32"};
  LaunchRun one = Launch(1, common);
  ASSERT_EQ(one.code, 0) << one.err;
  std::vector<double> want = one.ranks[0]["losses"];
  ASSERT_EQ(want.size(), 24u);
  EXPECT_LT(want.back(), want.front()) << "case one rank learns";

  struct Case {
    std::string name;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"overlap, one bucket", {"--overlap", "1"}},
      {"overlap, many buckets", {"--overlap", "1", "--bucket-mb", "0.01"}},
      {"after backward, many buckets",
       {"--overlap", "0", "--bucket-mb", "0.01"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = common;
    args.insert(args.end(), c.args.begin(), c.args.end());
    LaunchRun two = Launch(2, args);
    ASSERT_EQ(two.code, 0) << "case " << c.name << "\n" << two.err;
    EXPECT_NE(two.out.find("[rank 1] done, final loss"), std::string::npos)
        << "case " << c.name << "\n"
        << two.out;
    // Bit for bit: the same broadcast start, the same averaged gradients.
    EXPECT_EQ(two.ranks[0]["params"], two.ranks[1]["params"])
        << "case " << c.name;
    std::vector<double> got = two.ranks[0]["losses"];
    ASSERT_EQ(got.size(), want.size()) << "case " << c.name;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-4 * std::max(1.0, std::abs(want[i])))
          << "case " << c.name << ", step " << i;
    }
    std::vector<double> p1 = one.ranks[0]["params"],
                        p2 = two.ranks[0]["params"];
    ASSERT_EQ(p1.size(), p2.size()) << "case " << c.name;
    double max_diff = 0;
    for (size_t i = 0; i < p1.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(p1[i] - p2[i]));
    }
    EXPECT_LT(max_diff, 1e-4) << "case " << c.name;
  }
}

TEST(DdpTest, ALostRankEndsTheJob) {
  // Killed: the launcher sees rank 1 die (137) and stops rank 0, which may
  // or may not have noticed the closed connection first. Hung: only rank 0's
  // own collective timeout can end it, with a message saying so.
  struct Case {
    std::string name;
    std::string how;
    std::string timeout_s;
    int want_code;
    std::string want_err;
  };
  const std::vector<Case> cases = {
      {"killed", "kill", "60", 128 + SIGKILL,
       "trialshim launch: rank 1 failed with exit code 137"},
      {"hung", "hang", "2", 1,
       "[rank 0] ddp_worker: rank 0 of 2: all-reduce of gradients failed "
       "(another rank died, or did not answer within 2 s)"},
  };
  for (const Case& c : cases) {
    LaunchRun run = Launch(2,
                           {"--steps", "50", "--die-rank", "1", "--die-step",
                            "5", "--die-how", c.how},
                           c.timeout_s);
    EXPECT_EQ(run.code, c.want_code) << "case " << c.name << "\n" << run.err;
    EXPECT_NE(run.err.find(c.want_err), std::string::npos)
        << "case " << c.name << "\n"
        << run.err;
    EXPECT_NE(run.err.find("trialshim launch: rank "), std::string::npos)
        << "case " << c.name << "\n"
        << run.err;
  }
}

}  // namespace
}  // namespace trialshim::trainer
