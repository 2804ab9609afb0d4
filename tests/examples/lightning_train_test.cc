// examples/lightning/train.py, a real Lightning 2.2.5 + Hydra trainer on the
// digits under examples/digits/conf-lightning, run behind trialshim as a
// Vertex trial runs (the anchors environment): a trial reporting through
// cloudml-hypertune; two-process DDP that Lightning starts itself under
// trialshim's cluster environment, across two replicas, and under
// `trialshim launch`, as docs/distributed.md says; and the C++ digits-train
// side by side with it on the same config.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/shim/launch.h"

namespace trialshim::examples {
namespace {

using ::trialshim::testing::AnchorsPython;
using ::trialshim::testing::Child;
using ::trialshim::testing::Finished;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::TempDir;
namespace fs = std::filesystem;

const std::string kSource = TRIALSHIM_SOURCE_DIR;
const std::string kConf = kSource + "/examples/digits/conf-lightning";
const std::string kTrain = kSource + "/examples/lightning/train.py";
const std::string kBin = TRIALSHIM_BIN_DIR;

// `trialshim [--config-path conf-lightning] -- PROGRAM args`, PROGRAM being
// train.py under the anchors' Python or digits-train.
std::vector<std::string> Trial(const std::vector<std::string>& args,
                               bool lightning = true) {
  std::vector<std::string> argv = {kBin + "/trialshim", "--config-path", kConf,
                                   "--config-name",     "config",        "--"};
  if (lightning) {
    argv.insert(argv.end(), {AnchorsPython(), kTrain});
  } else {
    argv.insert(argv.end(), {kBin + "/digits-train", "--config-path", kConf,
                             "--config-name", "config"});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Runs argv to its end with stderr on stdout, for 300 s at most.
Finished RunMerged(std::vector<std::string> argv,
                   const std::vector<std::string>& env,
                   const std::string& cwd) {
  argv.insert(argv.begin(), {"timeout", "-k", "10", "300"});
  SubprocessOptions o = Child::Options(env);
  o.cwd = cwd;
  o.err = Stdio::SameAsStdout();
  return ::trialshim::testing::RunToEndWith(argv, o);
}

// CLUSTER_SPEC for task `index` of a job with `replicas` single-address
// pools (a primary, then workers), the primary on 127.0.0.1:port.
std::string ClusterSpec(int port, int replicas, int index) {
  nlohmann::json cluster = {
      {"workerpool0", {"127.0.0.1:" + std::to_string(port)}}};
  for (int i = 1; i < replicas; ++i) {
    cluster["workerpool1"].push_back("127.0.0.1:" + std::to_string(port + i));
  }
  nlohmann::json task = {{"type", index == 0 ? "workerpool0" : "workerpool1"},
                         {"index", index == 0 ? 0 : index - 1}};
  return "CLUSTER_SPEC=" + nlohmann::json{{"cluster", cluster},
                                          {"task", task},
                                          {"environment", "cloud"}}
                               .dump();
}

int FreePort() {
  StatusOr<int> port = shim::PickFreePort("127.0.0.1");
  EXPECT_TRUE(port.ok()) << port.status().message();
  return port.ok() ? *port : 29500;
}

// The reports of a metric file, each line parsed.
std::vector<nlohmann::json> Reports(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    out.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return out;
}

// "process R of W: ..." lines, as train.py's ShowProcess prints them.
// (Where several processes share one stdout, see ProcessFiles.)
std::set<std::string> ProcessLines(const std::string& out) {
  std::set<std::string> lines;
  std::regex re("process \\d+ of \\d+: [^\\n]*");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re);
       it != std::sregex_iterator(); ++it) {
    lines.insert(it->str());
  }
  return lines;
}

// The lines ShowProcess wrote to process-R.txt under `run_dir`, one file
// each: processes that share a pipe can interleave theirs there.
std::set<std::string> ProcessFiles(const std::string& run_dir) {
  std::set<std::string> lines;
  for (const auto& e : fs::directory_iterator(run_dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("process-", 0) != 0) continue;
    std::string text = ReadFile(e.path().string());
    if (!text.empty() && text.back() == '\n') text.pop_back();
    lines.insert(text);
  }
  return lines;
}

TEST(AnchorsLightningTrain, TrialReportsThroughCloudmlHypertune) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  Finished f =
      RunMerged(Trial({"trainer.max_epochs=3", "hydra.run.dir=run",
                       "--optimizer.lr=0.01", "--data.batch_size=32.0"}),
                {"CLOUD_ML_TRIAL_ID=7",
                 "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("output.metrics")},
                dir.path());
  ASSERT_EQ(f.exit_code, 0) << f.out;
  // The Vertex arguments as trialshim translated them (hydra.* overrides
  // are Hydra's own, kept out of the task's list).
  EXPECT_EQ(ReadFile(dir.Join("run/.hydra/overrides.yaml")),
            "- trainer.max_epochs=3\n- optimizer.lr=0.01\n"
            "- data.batch_size=32\n");
  std::vector<nlohmann::json> reports = Reports(dir.Join("output.metrics"));
  ASSERT_EQ(reports.size(), 3u) << f.out;
  for (size_t i = 0; i < reports.size(); ++i) {
    // 1438 training rows in batches of 32: 45 steps an epoch.
    EXPECT_EQ(reports[i]["global_step"], std::to_string(45 * (i + 1)));
    EXPECT_EQ(reports[i]["trial"], "7");
    EXPECT_EQ(reports[i]["checkpoint_path"],
              dir.Join("run/checkpoints/last.ckpt"));
  }
  EXPECT_GT(std::stod(reports.back()["val_acc"].get<std::string>()), 0.8)
      << f.out;
  EXPECT_EQ(ProcessLines(f.out),
            std::set<std::string>{"process 0 of 1: local rank 0, node 0, no "
                                  "cluster environment"});
}

// docs/distributed.md: with CLUSTER_SPEC trialshim exports MASTER_ADDR,
// MASTER_PORT, WORLD_SIZE, RANK and NODE_RANK but no LOCAL_RANK, so
// Lightning's own environment starts the second process itself.
TEST(AnchorsLightningTrain, DdpLightningStartsItsProcessesUnderClusterSpec) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  const int port = FreePort();
  Finished f =
      RunMerged(Trial({"trainer.max_epochs=2", "+trainer.strategy=ddp",
                       "trainer.devices=2", "hydra.run.dir=run"}),
                {ClusterSpec(port, 1, 0),
                 "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("output.metrics")},
                dir.path());
  ASSERT_EQ(f.exit_code, 0) << f.out;
  const std::string master = "master 127.0.0.1:" + std::to_string(port);
  // Both processes print to trialshim's pipe: each line is read from the
  // file its process wrote.
  EXPECT_EQ(ProcessFiles(dir.Join("run")),
            (std::set<std::string>{
                "process 0 of 2: local rank 0, node 0, LightningEnvironment, " +
                    master,
                "process 1 of 2: local rank 1, node 0, LightningEnvironment, " +
                    master}))
      << f.out;
  // Rank zero alone reports, once an epoch.
  EXPECT_EQ(Reports(dir.Join("output.metrics")).size(), 2u) << f.out;
}

// docs/distributed.md's advice, checked: under CLUSTER_SPEC with devices: 2
// the process Lightning starts itself inherits the replica's RANK, so a
// trainer that wrote the metric where RANK is 0 would write it twice;
// trainer.global_rank tells the two apart.
TEST(AnchorsLightningTrain, StartedProcessInheritsTheReplicasRank) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  dir.Write("ranks.py", R"(import os
import lightning.pytorch as pl
import torch

class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
    def training_step(self, batch, _):
        return self.layer(batch).sum()
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        pass  # as train.py: Debian's torch 1.13 under Python 3.11
    def on_train_epoch_end(self):
        name = f"global-rank-{self.trainer.global_rank}.txt"
        with open(name, "w") as f:
            f.write("RANK=" + os.environ.get("RANK", "unset"))

data = torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=2)
pl.Trainer(max_epochs=1, accelerator="cpu", devices=2, strategy="ddp",
           logger=False, enable_checkpointing=False,
           enable_progress_bar=False).fit(Tiny(), data)
)");
  Finished f = RunMerged(
      {kBin + "/trialshim", "--", AnchorsPython(), dir.Join("ranks.py")},
      {ClusterSpec(FreePort(), 1, 0)}, dir.path());
  ASSERT_EQ(f.exit_code, 0) << f.out;
  EXPECT_EQ(ReadFile(dir.Join("global-rank-0.txt")), "RANK=0") << f.out;
  EXPECT_EQ(ReadFile(dir.Join("global-rank-1.txt")), "RANK=0") << f.out;
}

// Two replicas of one process each: the node rank is the replica's rank.
TEST(AnchorsLightningTrain, DdpAcrossTwoReplicasTakesTheNodeRank) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  const int port = FreePort();
  std::vector<std::unique_ptr<Child>> replicas;
  for (int r = 0; r < 2; ++r) {
    SubprocessOptions o =
        Child::Options({ClusterSpec(port, 2, r),
                        "CLOUD_ML_HP_METRIC_FILE=" +
                            dir.Join(std::to_string(r) + ".metrics")});
    o.cwd = dir.path();
    o.err = Stdio::SameAsStdout();
    std::vector<std::string> argv = Trial(
        {"trainer.max_epochs=2", "+trainer.strategy=ddp", "trainer.devices=1",
         "+trainer.num_nodes=2", "hydra.run.dir=run" + std::to_string(r)});
    argv.insert(argv.begin(), {"timeout", "-k", "10", "300"});
    replicas.push_back(std::make_unique<Child>(argv, o));
  }
  const std::string master = "master 127.0.0.1:" + std::to_string(port);
  for (int r = 0; r < 2; ++r) {
    Finished f = replicas[r]->Wait();
    ASSERT_EQ(f.exit_code, 0) << "replica " << r << "\n" << f.out;
    EXPECT_EQ(
        ProcessLines(f.out),
        std::set<std::string>{"process " + std::to_string(r) +
                              " of 2: local rank 0, node " + std::to_string(r) +
                              ", LightningEnvironment, " + master})
        << f.out;
  }
  EXPECT_EQ(Reports(dir.Join("0.metrics")).size(), 2u);
  EXPECT_FALSE(fs::exists(dir.Join("1.metrics"))) << "only rank zero reports";
}

// Under `trialshim launch` (torchrun's variables) Lightning sees torchelastic
// and starts no process of its own: two in all.
TEST(AnchorsLightningTrain, UnderLaunchLightningStartsNone) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  Finished f = RunMerged(
      {kBin + "/trialshim", "launch", "--nproc-per-node", "2", "--config-path",
       kConf, "--config-name", "config", "--", kTrain, "trainer.max_epochs=2",
       "+trainer.strategy=ddp", "trainer.devices=2", "hydra.run.dir=run"},
      {"PYTHON_EXEC=" + AnchorsPython(),
       "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("output.metrics")},
      dir.path());
  ASSERT_EQ(f.exit_code, 0) << f.out;
  std::set<std::string> lines = ProcessFiles(dir.Join("run"));  // one stdout
  ASSERT_EQ(lines.size(), 2u) << f.out;
  for (const std::string& line : lines) {
    EXPECT_NE(line.find("TorchElasticEnvironment"), std::string::npos) << line;
  }
  EXPECT_EQ(Reports(dir.Join("output.metrics")).size(), 2u) << f.out;
}

// What trialshim avoids: with LOCAL_RANK in the environment, Lightning takes
// the processes as started elsewhere, starts none, and rank 0 waits for a
// rank 1 that never comes (stopped here after a while).
TEST(AnchorsLightningTrain, WithLocalRankSetLightningStartsNone) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  SubprocessOptions o =
      Child::Options({ClusterSpec(FreePort(), 1, 0), "LOCAL_RANK=0"});
  o.cwd = dir.path();
  o.err = Stdio::SameAsStdout();
  Child trial(Trial({"trainer.max_epochs=2", "+trainer.strategy=ddp",
                     "trainer.devices=2", "hydra.run.dir=run"}),
              o);
  ASSERT_TRUE(trial.WaitForOutput("GLOBAL_RANK: 0, MEMBER: 1/2",
                                  std::chrono::seconds(120)))
      << trial.out();
  // A process Lightning started would have come this far within seconds.
  EXPECT_FALSE(trial.WaitForOutput("MEMBER: 2/2", std::chrono::seconds(15)))
      << trial.out();
  trial.Signal(SIGTERM);
  Finished f = trial.Wait(std::chrono::seconds(30));
  EXPECT_TRUE(ProcessLines(f.out).empty()) << "no fit started\n" << f.out;
}

// The files under `dir`, relative, but for `skip`.
std::set<std::string> Files(const std::string& dir,
                            const std::set<std::string>& skip = {}) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_regular_file() && !skip.count(rel)) out.insert(rel);
  }
  return out;
}

// metrics.csv's rows with every value blanked to "v" (the numbers differ:
// docs/lightning-differences.md), header, epoch and step kept.
std::string CsvShape(const std::string& path) {
  std::string text = ReadFile(path), out;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  out = line + "\n";
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::string cell;
    for (int i = 0; std::getline(cells, cell, ','); ++i) {
      // epoch and step are the first two columns of this config's file.
      out += (i ? "," : "") +
             (i < 2 || cell.empty() || cell == "\r" ? cell : std::string("v"));
    }
    out += "\n";
  }
  return out;
}

// digits-train and Lightning on the same config and arguments: the same run
// directory, composed config, hparams.yaml, metrics.csv rows, checkpoint
// names and hypertune reports; what differs on purpose is listed in
// docs/lightning-differences.md.
// What is left of an optimization_results.yaml or an overrides.yaml once
// every number is '#': its lines, each once.
std::set<std::string> Shape(const std::string& yaml) {
  std::set<std::string> lines;
  std::istringstream in(std::regex_replace(
      yaml, std::regex("-?[0-9][0-9.]*(e[-+]?[0-9]+)?"), "#"));
  for (std::string line; std::getline(in, line);) lines.insert(line);
  return lines;
}

// The documented Pareto search (docs/hydra-sweep-to-vertex.md) under real
// Hydra, hydra-optuna-sweeper and Lightning (train.py returns its
// callback metrics per optimized_metric name, as the template would per
// name) and as digits-train runs it: both end 0, print the plugin's front
// ("Number of Pareto solutions", one "Values: [acc, loss]" line each),
// write optimization_results.yaml of one shape, give each job the same
// overrides, and report both metrics each epoch through cloudml-hypertune
// (train.py) and trialshim's reporter.
TEST(AnchorsLightningTrain, ParetoMultirunAsRealHydraAndThePlugin) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  const std::vector<std::string> args = {
      "-m", "hparams_search=digits_optuna", "optimized_metric=[val_acc,val_loss]",
      "hydra.sweeper.direction=[maximize,minimize]", "hydra.sweeper.n_trials=2",
      "trainer.max_epochs=1"};
  std::map<std::string, std::string> out;
  for (bool lightning : {true, false}) {
    const std::string which = lightning ? "lightning" : "native";
    std::vector<std::string> argv;
    if (lightning) {
      argv = {AnchorsPython(), kTrain};
    } else {
      argv = {kBin + "/digits-train", "--config-path", kConf};
    }
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("hydra.sweep.dir=" + dir.Join(which));
    Finished f = RunMerged(
        argv, {"CLOUD_ML_HP_METRIC_FILE=" + dir.Join(which + ".metrics")},
        dir.path());
    ASSERT_EQ(f.exit_code, 0) << which << "\n" << f.out;
    out[which] = f.out;
  }
  for (const auto& [which, text] : out) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        text, m, std::regex("\\[HYDRA\\] Number of Pareto solutions: (\\d)\n")))
        << which << "\n" << text;
    const int n = std::stoi(m[1]);
    EXPECT_TRUE(n == 1 || n == 2) << which;
    std::regex values(
        "\\[HYDRA\\]     Values: \\[[0-9.e-]+, [0-9.e-]+\\], Params: "
        "\\{'optimizer.lr': [0-9.e-]+, 'data.batch_size': \\d+, "
        "'model.dropout': [0-9.e-]+\\}\n");
    EXPECT_EQ(std::distance(
                  std::sregex_iterator(text.begin(), text.end(), values),
                  std::sregex_iterator()),
              n)
        << which << "\n" << text;
    EXPECT_NE(text.find("[HYDRA] Directions: ['maximize', 'minimize']\n"),
              std::string::npos)
        << which;
  }
  const std::string native = dir.Join("native"), light = dir.Join("lightning");
  EXPECT_EQ(Shape(ReadFile(native + "/optimization_results.yaml")),
            Shape(ReadFile(light + "/optimization_results.yaml")));
  for (const char* job : {"/0", "/1"}) {
    EXPECT_EQ(Shape(ReadFile(native + job + "/.hydra/overrides.yaml")),
              Shape(ReadFile(light + job + "/.hydra/overrides.yaml")))
        << job;
  }
  // The last job's reports: val_acc then val_loss, at one step.
  for (const char* which : {"native", "lightning"}) {
    std::vector<nlohmann::json> reports =
        Reports(dir.Join(std::string(which) + ".metrics"));
    ASSERT_EQ(reports.size(), 2u) << which;
    EXPECT_TRUE(reports[0].contains("val_acc")) << reports[0];
    EXPECT_TRUE(reports[1].contains("val_loss")) << reports[1];
    EXPECT_EQ(reports[0]["global_step"], reports[1]["global_step"]);
  }
}

TEST(AnchorsLightningTrain, SideBySideWithDigitsTrain) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  for (bool lightning : {false, true}) {
    const std::string which = lightning ? "lightning" : "native";
    Finished f =
        RunMerged(Trial({"trainer.max_epochs=3", "hydra.run.dir=" + which,
                         "--optimizer.lr=0.01"},
                        lightning),
                  {"CLOUD_ML_TRIAL_ID=7",
                   "CLOUD_ML_HP_METRIC_FILE=" + dir.Join(which + ".metrics")},
                  dir.path());
    ASSERT_EQ(f.exit_code, 0) << which << "\n" << f.out;
  }
  const std::string native = dir.Join("native"), light = dir.Join("lightning");
  // Ours also keeps the final model and a lock beside the checkpoints;
  // train.py writes who each process is (ShowProcess: process-0.txt).
  EXPECT_EQ(Files(native, {"model.pt", "checkpoints/.trialshim.lock"}),
            Files(light, {"process-0.txt"}));
  for (const char* file : {".hydra/config.yaml", ".hydra/overrides.yaml",
                           "csv/version_0/hparams.yaml"}) {
    EXPECT_EQ(ReadFile(native + "/" + file), ReadFile(light + "/" + file))
        << file;
  }
  EXPECT_EQ(CsvShape(native + "/csv/version_0/metrics.csv"),
            CsvShape(light + "/csv/version_0/metrics.csv"));
  std::vector<nlohmann::json> ours = Reports(dir.Join("native.metrics"));
  std::vector<nlohmann::json> theirs = Reports(dir.Join("lightning.metrics"));
  ASSERT_EQ(ours.size(), 3u);
  ASSERT_EQ(theirs.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i]["global_step"], theirs[i]["global_step"]) << i;
    EXPECT_EQ(ours[i]["checkpoint_path"], native + "/checkpoints/last.ckpt");
    EXPECT_EQ(theirs[i]["checkpoint_path"], light + "/checkpoints/last.ckpt");
    for (const auto* r : {&ours[i], &theirs[i]}) {
      EXPECT_EQ((*r)["trial"], "7");
      EXPECT_TRUE(r->contains("val_acc")) << *r;
    }
  }
  for (const auto* r : {&ours.back(), &theirs.back()}) {
    EXPECT_GT(std::stod((*r)["val_acc"].get<std::string>()), 0.8) << *r;
  }
}

}  // namespace
}  // namespace trialshim::examples
