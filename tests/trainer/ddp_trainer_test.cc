// trainer.strategy=ddp end to end: real ranks of bin/digits-train started by
// `trialshim launch --nproc N` on 127.0.0.1, each a separate process talking
// through c10d/Gloo. Both ranks end with the same parameters (the checksum
// each logs, and rank 0's model.pt), one rank at batch B and two at B/2
// train alike, only rank 0 writes files, SIGTERM stops every rank and a
// restart resumes them all from the same checkpoint, and a killed or hung
// rank ends the job with a non-zero code instead of a hang.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace {

using trialshim::testing::Child;
using trialshim::testing::Finished;
using trialshim::Stdio;
using trialshim::SubprocessOptions;
using trialshim::testing::ReadFile;
using trialshim::testing::TempDir;

const std::string kLaunch = std::string(TRIALSHIM_BIN_DIR) + "/trialshim";
const std::string kDigits = std::string(TRIALSHIM_BIN_DIR) + "/digits-train";

// Starts `trialshim launch --nproc N --grace 2 -- digits-train ARGS` (or
// digits-train alone when nproc is 0) with extra environment `env`; stdout
// and stderr of launch and its ranks on one pipe.
Child Start(int nproc, const std::vector<std::string>& args,
            const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv;
  if (nproc > 0) {
    argv = {kLaunch,   "launch", "--nproc", std::to_string(nproc),
            "--grace", "2",      "--"};
  }
  argv.push_back(kDigits);
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions options = Child::Options();
  // The test's own environment must not make digits-train a rank.
  options.env = trialshim::testing::TestEnvironment(
      env, {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
            "MASTER_ADDR", "MASTER_PORT"});
  options.err = Stdio::SameAsStdout();
  return Child(argv, options);
}

// The job's code; -1 when it was still running after `limit` (and killed).
int CodeOf(const Finished& f) { return f.timed_out ? -1 : f.code(); }

int RunJob(int nproc, const std::vector<std::string>& args, std::string* out,
           const std::vector<std::string>& env = {}) {
  Finished f = Start(nproc, args, env).Wait(std::chrono::seconds(120));
  *out = f.out;
  return CodeOf(f);
}

// The pid of the rank whose command line holds `marker` (the test's own
// directory) and whose environment holds RANK=<rank>, or -1. (launch
// contains its ranks: their parent is its supervisor, not launch.)
pid_t RankPid(const std::string& marker, int rank) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  pid_t found = -1;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::string cmdline = ReadFile("/proc/" + std::string(e->d_name) + "/cmdline");
    if (cmdline.find(marker) == std::string::npos) continue;
    std::string env = ReadFile("/proc/" + std::string(e->d_name) + "/environ");
    if (env.find(std::string("RANK=") + std::to_string(rank) + '\0') == 0 ||
        env.find(std::string("\0RANK=", 6) + std::to_string(rank) + '\0') !=
            std::string::npos) {
      found = pid;
    }
  }
  closedir(proc);
  return found;
}

// The checksum each rank logs at the end of a ddp fit, by rank.
std::map<int, std::string> Checksums(const std::string& out) {
  std::map<int, std::string> sums;
  const std::regex re(R"re(ddp: rank (\d+) parameter checksum (\S+))re");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    sums[std::stoi((*it)[1])] = (*it)[2];
  }
  return sums;
}

// The same sum over a saved module (submodules are nested archives).
double ArchiveChecksum(torch::serialize::InputArchive& archive) {
  double sum = 0;
  for (const auto& key : archive.keys()) {
    torch::Tensor t;
    torch::serialize::InputArchive child;
    if (archive.try_read(key, t)) {
      sum += t.to(torch::kDouble).sum().item<double>();
    } else if (archive.try_read(key, child)) {
      sum += ArchiveChecksum(child);
    }
  }
  return sum;
}

double ModelChecksum(const std::string& path) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  return ArchiveChecksum(archive);
}

// metrics.csv's column `name`, its non-empty cells in order. Rows end in
// "\r\n" (Python's csv module; other line ends read as one row).
std::vector<double> Column(const std::string& csv, const std::string& name) {
  std::vector<std::string> rows;
  for (size_t at = 0, end; (end = csv.find("\r\n", at)) != std::string::npos;
       at = end + 2) {
    rows.push_back(csv.substr(at, end - at));
  }
  if (rows.empty()) return {};
  std::vector<std::string> header;
  std::stringstream hs(rows[0]);
  for (std::string h; std::getline(hs, h, ',');) header.push_back(h);
  std::vector<double> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    std::vector<std::string> cells;
    std::stringstream cs(rows[r]);
    for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
    cells.resize(header.size());
    for (size_t k = 0; k < header.size(); ++k) {
      if (header[k] == name && !cells[k].empty()) {
        out.push_back(std::stod(cells[k]));
      }
    }
  }
  return out;
}

size_t CountLines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// Deterministic, no dropout: the only difference between runs is how the
// global batch is split over ranks.
std::vector<std::string> Args(const std::string& run_dir, int batch,
                              int epochs) {
  return {"hydra.run.dir=" + run_dir,
          "trainer.strategy=ddp",
          "trainer.max_epochs=" + std::to_string(epochs),
          "trainer.deterministic=true",
          "trainer.enable_progress_bar=false",
          "model.dropout=0",
          "data.batch_size=" + std::to_string(batch)};
}

TEST(DdpTrainerTest, RanksEndIdenticalAndOnlyRankZeroWritesFiles) {
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunJob(2, Args(dir.Join("run"), 32, 2), &out,
                   {"CLOUD_ML_HP_METRIC_FILE=" + dir.Join("hp.metrics"),
                    "TRIALSHIM_DIST_TIMEOUT=60"}),
            0)
      << out;
  auto sums = Checksums(out);
  ASSERT_EQ(sums.size(), 2u) << out;
  EXPECT_EQ(sums[0], sums[1]) << "parameters differ between ranks\n" << out;
  EXPECT_NEAR(ModelChecksum(dir.Join("run/model.pt")), std::stod(sums[0]),
              1e-9 * std::fabs(std::stod(sums[0])))
      << "model.pt is not what the ranks trained";
  // Two validations, reported once each: rank 1 wrote nothing.
  EXPECT_EQ(CountLines(ReadFile(dir.Join("hp.metrics"))), 2u) << out;
  EXPECT_EQ(Column(ReadFile(dir.Join("run/metrics.csv")), "val_acc").size(),
            2u);
  EXPECT_TRUE(std::filesystem::exists(dir.Join("run/checkpoints/last.ckpt")));
  EXPECT_EQ(std::regex_search(out, std::regex(R"(\[rank 1\].*Model saved)")),
            false)
      << out;
}

// trainer.devices=2 without a launcher: the trainer starts its second rank
// itself, as Lightning's DDP launcher does, and trains exactly what two
// ranks under `trialshim launch` train. The second rank runs the job's
// overrides in the same run directory, logging to a file of its own.
TEST(DdpTrainerTest, DevicesStartTheirOwnRanksAsLightningDoes) {
  TempDir dir;
  std::string launched, own;
  ASSERT_EQ(RunJob(2, Args(dir.Join("launched"), 32, 1), &launched,
                   {"TRIALSHIM_DIST_TIMEOUT=60"}),
            0)
      << launched;
  std::vector<std::string> args = Args(dir.Join("own"), 32, 1);
  args.push_back("trainer.devices=2");
  ASSERT_EQ(RunJob(0, args, &own,
                   {"CLOUD_ML_HP_METRIC_FILE=" + dir.Join("hp.metrics"),
                    "TRIALSHIM_DIST_TIMEOUT=60"}),
            0)
      << own;
  EXPECT_NE(own.find("trainer.devices=2: started local ranks 1..1"),
            std::string::npos)
      << own;
  auto sums = Checksums(own);
  ASSERT_EQ(sums.size(), 2u) << own;
  EXPECT_EQ(sums[0], sums[1]) << own;
  EXPECT_EQ(sums, Checksums(launched)) << own << launched;
  // One validation, reported once: by rank 0.
  EXPECT_EQ(CountLines(ReadFile(dir.Join("hp.metrics"))), 1u) << own;
  EXPECT_TRUE(std::filesystem::exists(dir.Join("own/train_ddp_process_1.log")))
      << own;
}

TEST(DdpTrainerTest, OneRankAtBatchBMatchesTwoRanksAtHalfB) {
  TempDir dir;
  std::string one, two;
  ASSERT_EQ(RunJob(1, Args(dir.Join("one"), 64, 3), &one), 0) << one;
  ASSERT_EQ(RunJob(2, Args(dir.Join("two"), 32, 3), &two), 0) << two;
  const std::string csv1 = ReadFile(dir.Join("one/metrics.csv"));
  const std::string csv2 = ReadFile(dir.Join("two/metrics.csv"));
  for (const char* metric : {"val_loss", "val_acc"}) {
    auto a = Column(csv1, metric), b = Column(csv2, metric);
    ASSERT_EQ(a.size(), 3u) << "case " << metric << "\n" << one;
    ASSERT_EQ(b.size(), a.size()) << "case " << metric << "\n" << two;
    for (size_t i = 0; i < a.size(); ++i) {
      // Float32 sums in another order, compounded over 69 Adam steps.
      EXPECT_NEAR(a[i], b[i], 1e-4 * std::max(1.0, std::fabs(a[i])))
          << "case " << metric << " epoch " << i;
    }
  }
  auto s1 = Checksums(one), s2 = Checksums(two);
  ASSERT_EQ(s1.size(), 1u) << one;
  ASSERT_EQ(s2.size(), 2u) << two;
  EXPECT_NEAR(std::stod(s1[0]), std::stod(s2[0]),
              1e-5 * std::fabs(std::stod(s1[0])));
}

TEST(DdpTrainerTest, SigtermStopsEveryRankAndAllResumeFromOneCheckpoint) {
  TempDir dir;
  // Long enough that SIGTERM lands mid-run.
  const auto args = Args(dir.Join("run"), 32, 40);
  Child job = Start(2, args, {"TRIALSHIM_DIST_TIMEOUT=60"});
  ASSERT_TRUE(job.WaitForOutput("Epoch 1:", std::chrono::seconds(120)))
      << job.out();
  job.Signal(SIGTERM);  // launch forwards it to both ranks
  Finished stopped = job.Wait(std::chrono::seconds(120));
  EXPECT_EQ(CodeOf(stopped), 143) << stopped.out;
  for (int rank : {0, 1}) {
    EXPECT_TRUE(std::regex_search(stopped.out,
                                  std::regex("\\[rank " + std::to_string(rank) +
                                             "\\].*stopped by SIGTERM")))
        << "case rank " << rank << "\n"
        << stopped.out;
  }
  std::string out;
  ASSERT_EQ(RunJob(2, args, &out, {"TRIALSHIM_DIST_TIMEOUT=60"}), 0) << out;
  const std::string ckpt = dir.Join("run/checkpoints/last.ckpt");
  for (int rank : {0, 1}) {
    EXPECT_NE(out.find("[rank " + std::to_string(rank) + "] "),
              std::string::npos);
    EXPECT_TRUE(
        std::regex_search(out, std::regex("\\[rank " + std::to_string(rank) +
                                          "\\].*Resumed from " + ckpt)))
        << "case rank " << rank << "\n"
        << out;
  }
  auto sums = Checksums(out);
  ASSERT_EQ(sums.size(), 2u) << out;
  EXPECT_EQ(sums[0], sums[1]) << out;
}

TEST(DdpTrainerTest, DeadOrHungRankEndsTheJob) {
  struct Case {
    std::string name;
    int signal;
    std::string survivor_says;  // in rank 0's output
  };
  const std::vector<Case> cases = {
      {"killed", SIGKILL, ""},
      // A stopped rank holds its socket open: only the timeout can tell.
      {"hung", SIGSTOP, "did not answer within 3 s"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    Child job =
        Start(2, Args(dir.Join("run"), 32, 1000), {"TRIALSHIM_DIST_TIMEOUT=3"});
    ASSERT_TRUE(job.WaitForOutput("Epoch 0:", std::chrono::seconds(120)))
        << "case " << c.name << job.out();
    pid_t victim = RankPid(dir.path(), 1);
    ASSERT_GT(victim, 0) << "case " << c.name;
    kill(victim, c.signal);
    Finished f = job.Wait(std::chrono::seconds(60));
    int code = CodeOf(f);
    EXPECT_NE(code, 0) << "case " << c.name << "\n" << f.out;
    EXPECT_NE(code, -1) << "case " << c.name << ": the job hung\n" << f.out;
    if (!c.survivor_says.empty()) {
      EXPECT_NE(f.out.find(c.survivor_says), std::string::npos)
          << "case " << c.name << "\n"
          << f.out;
    }
  }
}

TEST(DdpTrainerTest, StrategyAndDevicesErrors) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"typo",
       {"trainer.strategy=dpp"},
       {},
       "expected one of auto|ddp|single_device, got 'dpp' (did you mean "
       "'ddp'?)"},
      {"ddp without ranks",
       {"trainer.strategy=ddp"},
       {},
       "trainer.strategy=ddp, but WORLD_SIZE is not set"},
      {"devices under a launcher of fewer",
       {"trainer.devices=2"},
       {"LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "WORLD_SIZE=1", "RANK=0"},
       "trainer.devices=2, but the launcher started 1 process(es) on this "
       "machine"},
      {"devices not a count",
       {"trainer.devices=two"},
       {},
       "trainer.devices: expected 'auto', -1, an int >= 1 or a list of "
       "device indices, got str 'two'"},
      {"devices of CUDA on the CPU",
       {"trainer.devices=[0,1]"},
       {},
       "trainer.devices lists CUDA devices, but the fit runs on the CPU"},
      {"replicas without num_nodes",
       {"trainer.devices=2"},
       {"WORLD_SIZE=3"},
       "set trainer.num_nodes=3"},
      {"single_device under ranks",
       {"trainer.strategy=single_device"},
       {"WORLD_SIZE=2"},
       "trainer.strategy=single_device, but WORLD_SIZE=2"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    std::vector<std::string> args = {"hydra.run.dir=" + dir.Join("run"),
                                     "trainer.max_epochs=1"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    std::string out;
    EXPECT_EQ(RunJob(0, args, &out, c.env), 2) << "case " << c.name << "\n"
                                               << out;
    EXPECT_NE(out.find(c.message), std::string::npos)
        << "case " << c.name << "\n"
        << out;
  }
}

}  // namespace
