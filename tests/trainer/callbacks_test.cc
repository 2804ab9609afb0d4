// The built-in callbacks as the Trainer runs them, on a four-row
// regression whose validation metric follows a script:
// LearningRateMonitor's rows in metrics.csv, ModelCheckpoint's file sets,
// EarlyStopping's patience, min_delta, min_epochs and check_finite,
// ProgressBar's line on a terminal. The Anchors* tests run the same cases
// with real Lightning 2.2.5 (tests/anchors/lightning_scripted.py and
// lightning_names.py): the files it keeps, where it stops, how it names.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/testutil/anchors.h"
#include "tests/testutil/python_format.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/scripted_module.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/trainer/targets.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using config::Node;
using scripted::CapturedLog;
using scripted::FilesIn;
using scripted::Quiet;
using scripted::ReadCsv;
using scripted::ScriptedModule;
using scripted::ScriptedOptions;
using scripted::Show;
using scripted::TinyData;
using trialshim::testing::ReadFile;
using trialshim::testing::TempDir;

struct LrRow {
  std::string column;
  int64_t step;
  double lr;
};

struct LrMonitorCase {
  std::string name;
  LearningRateMonitorOptions options;
  int64_t log_every_n_steps;
  int64_t epochs;
  double lr2;  // a second param group's rate; 0: one group
  Node::Map scheduler;
  std::vector<LrRow> want;  // every lr-* cell, in file order
  std::string optimizer = "SGD";
};

const std::vector<LrMonitorCase>& LrMonitorCases() {
  static const Node::Map exp_per_epoch = {{"name", Node::String("exponential")},
                                          {"gamma", Node::Double(0.5)}};
  static const Node::Map exp_per_step = {{"name", Node::String("exponential")},
                                         {"interval", Node::String("step")},
                                         {"gamma", Node::Double(0.5)}};
  using O = LearningRateMonitorOptions;
  const O per_step = O().logging_interval("step");
  // A step's row holds the rate that step ran with (as Lightning logs it
  // before the optimizer step), not the one the scheduler set after it; an
  // epoch's row is at the steps before it. Rows have no epoch.
  static const std::vector<LrMonitorCase> cases = {
      {"epoch interval, rate halves per epoch",
       O(),
       50,
       3,
       0,
       exp_per_epoch,
       {{"lr-SGD", 0, 0.1}, {"lr-SGD", 4, 0.05}, {"lr-SGD", 8, 0.025}}},
      {"step interval, every step, rate halves per step",
       per_step,
       1,
       1,
       0,
       exp_per_step,
       {{"lr-SGD", 0, 0.1},
        {"lr-SGD", 1, 0.05},
        {"lr-SGD", 2, 0.025},
        {"lr-SGD", 3, 0.0125}}},
      {"step interval, every 2nd step",
       per_step,
       2,
       2,
       0,
       exp_per_step,
       {{"lr-SGD", 1, 0.05},
        {"lr-SGD", 3, 0.0125},
        {"lr-SGD", 5, 0.003125},
        {"lr-SGD", 7, 0.00078125}}},
      {"step interval, scheduler stepped per epoch",
       per_step,
       1,
       2,
       0,
       exp_per_epoch,
       {{"lr-SGD", 0, 0.1},
        {"lr-SGD", 1, 0.1},
        {"lr-SGD", 2, 0.1},
        {"lr-SGD", 3, 0.1},
        {"lr-SGD", 4, 0.05},
        {"lr-SGD", 5, 0.05},
        {"lr-SGD", 6, 0.05},
        {"lr-SGD", 7, 0.05}}},
      {"two param groups, no scheduler",
       O(),
       50,
       2,
       0.3,
       {},
       {{"lr-SGD/pg1", 0, 0.1},
        {"lr-SGD/pg2", 0, 0.3},
        {"lr-SGD/pg1", 4, 0.1},
        {"lr-SGD/pg2", 4, 0.3}}},
      {"Adam's momentum (beta1) and weight decay",
       O().log_momentum(true).log_weight_decay(true),
       50,
       1,
       0,
       {},
       {{"lr-Adam", 0, 0.1},
        {"lr-Adam-momentum", 0, 0.9},
        {"lr-Adam-weight_decay", 0, 0}},
       "Adam"},
      {"SGD's momentum, two groups, per step",
       O().logging_interval("step").log_momentum(true),
       2,
       1,
       0.3,
       exp_per_step,
       {{"lr-SGD/pg1", 1, 0.05},
        {"lr-SGD/pg1-momentum", 1, 0},
        {"lr-SGD/pg2", 1, 0.15},
        {"lr-SGD/pg2-momentum", 1, 0},
        {"lr-SGD/pg1", 3, 0.0125},
        {"lr-SGD/pg1-momentum", 3, 0},
        {"lr-SGD/pg2", 3, 0.0375},
        {"lr-SGD/pg2-momentum", 3, 0}}},
  };
  return cases;
}

ScriptedOptions LrMonitorModel(const LrMonitorCase& c) {
  ScriptedOptions o;
  o.optimizer = c.optimizer;
  o.lr = 0.1;
  o.lr2 = c.lr2;
  o.scheduler = c.scheduler.empty() ? Node::Null() : Node::MakeMap(c.scheduler);
  return o;
}

// Every non-empty lr-* cell of a metrics.csv in file order: column, epoch
// cell, step cell, the cell.
std::vector<std::array<std::string, 4>> LrCells(const std::string& csv) {
  std::vector<std::array<std::string, 4>> out;
  for (const auto& row : ReadCsv(csv)) {
    for (const auto& [column, cell] : row) {
      if (column.rfind("lr-", 0) != 0 || cell.empty()) continue;
      auto at = [&](const char* k) {
        auto it = row.find(k);
        return it == row.end() ? std::string() : it->second;
      };
      out.push_back({column, at("epoch"), at("step"), cell});
    }
  }
  return out;
}

// A fit of the case's model with its LearningRateMonitor: the cells.
std::vector<std::array<std::string, 4>> FitLrCells(const LrMonitorCase& c) {
  TempDir dir;
  CapturedLog log;
  TinyData data;
  auto model = std::make_shared<ScriptedModule>(LrMonitorModel(c));
  Trainer trainer(Quiet(dir.path(), log)
                      .max_epochs(c.epochs)
                      .log_every_n_steps(c.log_every_n_steps)
                      .enable_checkpointing(false));
  trainer.add_callback(std::make_shared<LearningRateMonitor>(c.options));
  EXPECT_OK(trainer.fit(*model, data)) << "case " << c.name;
  return LrCells(dir.Join("metrics.csv"));
}

TEST(LearningRateMonitorTest, LogsEachGroupsRateIntoMetricsCsv) {
  for (const auto& c : LrMonitorCases()) {
    const auto got = FitLrCells(c);
    ASSERT_EQ(got.size(), c.want.size())
        << "case " << c.name << ": " << nlohmann::json(got).dump();
    for (size_t i = 0; i < got.size(); ++i) {
      const LrRow& w = c.want[i];
      EXPECT_EQ(got[i][0], w.column) << "case " << c.name << " row " << i;
      EXPECT_EQ(got[i][1], "") << "case " << c.name << " row " << i;
      EXPECT_EQ(got[i][2], std::to_string(w.step))
          << "case " << c.name << " row " << i;
      EXPECT_NEAR(std::stod(got[i][3]), w.lr, 1e-15)
          << "case " << c.name << " row " << i;
    }
  }
}

struct CheckpointCase {
  std::string name;
  ModelCheckpointOptions options;
  std::vector<double> script;  // val_loss of each validation
  int64_t epochs;
  int64_t check_val_every_n_epoch;
  std::set<std::string> want;
  std::string want_best;  // "" : not checked
};

const std::vector<CheckpointCase>& CheckpointCases() {
  // Four optimizer steps per epoch: epoch e ends at step 4 (e + 1).
  static const std::vector<double> script = {5, 3, 4, 1, 2};
  using O = ModelCheckpointOptions;
  static const std::vector<CheckpointCase> cases = {
      {"min, top 2",
       O().monitor("val_loss").save_top_k(2),
       script,
       5,
       1,
       {"epoch=3-step=16.ckpt", "epoch=4-step=20.ckpt", "last.ckpt"},
       "epoch=3-step=16.ckpt"},
      {"max, top 2",
       O().monitor("val_loss").mode(Mode::kMax).save_top_k(2),
       script,
       5,
       1,
       {"epoch=0-step=4.ckpt", "epoch=2-step=12.ckpt", "last.ckpt"},
       "epoch=0-step=4.ckpt"},
      {"min, top 1, no last",
       O().monitor("val_loss").save_last(false),
       script,
       5,
       1,
       {"epoch=3-step=16.ckpt"},
       "epoch=3-step=16.ckpt"},
      {"all (top -1)",
       O().monitor("val_loss").save_top_k(-1),
       script,
       5,
       1,
       {"epoch=0-step=4.ckpt", "epoch=1-step=8.ckpt", "epoch=2-step=12.ckpt",
        "epoch=3-step=16.ckpt", "epoch=4-step=20.ckpt", "last.ckpt"},
       "epoch=3-step=16.ckpt"},
      {"top 0: last only",
       O().monitor("val_loss").save_top_k(0),
       script,
       5,
       1,
       {"last.ckpt"},
       ""},
      {"top 0, no last: nothing",
       O().save_top_k(0).save_last(false),
       script,
       5,
       1,
       {},
       ""},
      {"no monitor: the newest",
       O(),
       script,
       5,
       1,
       {"epoch=4-step=20.ckpt", "last.ckpt"},
       "epoch=4-step=20.ckpt"},
      {"every 2nd epoch, no monitor, all",
       O().every_n_epochs(2).save_top_k(-1),
       script,
       5,
       1,
       {"epoch=1-step=8.ckpt", "epoch=3-step=16.ckpt", "last.ckpt"},
       ""},
      // Ranked at epochs 1 (3) and 3 (1) only.
      {"every 2nd epoch, min, top 1",
       O().monitor("val_loss").every_n_epochs(2),
       script,
       5,
       1,
       {"epoch=3-step=16.ckpt", "last.ckpt"},
       "epoch=3-step=16.ckpt"},
      // Validation after epochs 1 (5) and 3 (3): epochs without one are not
      // ranked (no error for a metric not logged yet, no stale score).
      {"validation every 2nd epoch, min, top 2",
       O().monitor("val_loss").save_top_k(2),
       script,
       4,
       2,
       {"epoch=1-step=8.ckpt", "epoch=3-step=16.ckpt", "last.ckpt"},
       "epoch=3-step=16.ckpt"},
  };
  return cases;
}

TEST(ModelCheckpointTest, KeepsTheFilesItsOptionsAskFor) {
  // A pid no process has, for the temporaries of a killed run.
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  for (const auto& c : CheckpointCases()) {
    TempDir dir;
    // What a killed run left half-written: gone once fit starts.
    dir.Write("checkpoints/.last.ckpt.tmp." + std::to_string(dead) + ".0", "");
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.script = c.script;
    auto model = std::make_shared<ScriptedModule>(o);
    auto ckpt = std::make_shared<ModelCheckpoint>(c.options);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(c.epochs)
                        .check_val_every_n_epoch(c.check_val_every_n_epoch));
    trainer.add_callback(ckpt);
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    const std::string ckpt_dir = dir.Join("checkpoints");
    EXPECT_EQ(Show(FilesIn(ckpt_dir)), Show(c.want)) << "case " << c.name;
    if (!c.want_best.empty()) {
      EXPECT_EQ(ckpt->best_model_path(), ckpt_dir + "/" + c.want_best)
          << "case " << c.name;
    }
  }
}

struct PatienceCase {
  std::string name;
  std::vector<double> script;
  int64_t patience;
  double min_delta;
  int64_t min_epochs;
  int64_t want_epochs;
};

const std::vector<PatienceCase>& PatienceCases() {
  static const std::vector<PatienceCase> cases = {
      {"flat", {1, 1, 1, 1, 1, 1, 1, 1}, 2, 0, 0, 3},
      {"improving then flat", {5, 4, 3, 3, 3, 3, 3, 3}, 2, 0, 0, 5},
      {"improvements under min_delta",
       {5, 4.95, 4.9, 4.85, 4.8, 4.7},
       2,
       0.1,
       0,
       3},
      {"min_epochs holds it", {1, 1, 1, 1, 1, 1, 1, 1}, 1, 0, 5, 5},
      {"nan stops at once", {1, std::nan(""), 0.5}, 5, 0, 0, 2},
  };
  return cases;
}

TEST(EarlyStoppingTest, StopsAfterPatience) {
  for (const auto& c : PatienceCases()) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.script = c.script;
    auto model = std::make_shared<ScriptedModule>(o);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(8)
                        .min_epochs(c.min_epochs)
                        .enable_checkpointing(false));
    trainer.add_callback(std::make_shared<EarlyStopping>(
        EarlyStoppingOptions().patience(c.patience).min_delta(c.min_delta)));
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    EXPECT_EQ(trainer.current_epoch(), c.want_epochs)
        << "case " << c.name << "\n"
        << log.out.str();
  }
}

struct FiniteCase {
  std::string name;
  std::vector<double> script;
  bool check_finite;
  Mode mode;
  int64_t want_epochs;
  std::string want_reason;
};

const std::vector<FiniteCase>& FiniteCases() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  static const std::vector<FiniteCase> cases = {
      {"nan, checked",
       {1, nan, 0.5},
       true,
       Mode::kMin,
       2,
       "monitored metric val_loss = nan is not finite"},
      {"inf, checked",
       {1, 0.5, inf},
       true,
       Mode::kMin,
       3,
       "monitored metric val_loss = inf is not finite"},
      {"-inf in max mode, checked",
       {1, -inf},
       true,
       Mode::kMax,
       2,
       "monitored metric val_loss = -inf is not finite"},
      // Unchecked, nan never improves: patience 2 runs out after epoch 2.
      {"nan, unchecked",
       {1, nan},
       false,
       Mode::kMin,
       3,
       "monitored metric val_loss did not improve in the last 2 validations; "
       "best score: 1.0"},
      // Unchecked, inf is the best a max metric can be.
      {"inf in max mode, unchecked",
       {1, inf, 2, 3},
       false,
       Mode::kMax,
       4,
       "monitored metric val_loss did not improve in the last 2 validations; "
       "best score: inf"},
  };
  return cases;
}

TEST(EarlyStoppingTest, CheckFiniteStopsOnNanOrInfinity) {
  for (const auto& c : FiniteCases()) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.script = c.script;
    auto model = std::make_shared<ScriptedModule>(o);
    auto stopper = std::make_shared<EarlyStopping>(
        EarlyStoppingOptions().mode(c.mode).patience(2).check_finite(
            c.check_finite));
    Trainer trainer(
        Quiet(dir.path(), log).max_epochs(8).enable_checkpointing(false));
    trainer.add_callback(stopper);
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    EXPECT_EQ(trainer.current_epoch(), c.want_epochs)
        << "case " << c.name << "\n"
        << log.out.str();
    EXPECT_EQ(stopper->reason(), c.want_reason) << "case " << c.name;
    EXPECT_NE(log.out.str().find("Early stopping: " + c.want_reason),
              std::string::npos)
        << "case " << c.name << "\n"
        << log.out.str();
  }
}

// stderr is a pseudo-terminal during each fit; what reached it is read back.
TEST(ProgressBarTest, DrawsOnATerminalAndClearsTheLine) {
  struct Case {
    std::string name;
    bool enable;
    bool add_bar;
    StatusCode want_code;
    std::vector<std::string> want;  // pieces of the terminal's text
  };
  const std::string clear = "\r\033[K";
  const std::vector<Case> cases = {
      {"enabled",
       true,
       false,
       StatusCode::kOk,
       {"\rEpoch 0: [######                  ] 1/4 \033[K",
        "\rEpoch 1: [########################] 4/4 \033[K" + clear}},
      {"enabled and given", true, true, StatusCode::kOk, {"] 4/4 \033[K"}},
      {"disabled", false, false, StatusCode::kOk, {}},
      {"disabled but given", false, true, StatusCode::kInvalidArgument, {}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<ScriptedModule>();
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(2)
                        .enable_checkpointing(false)
                        .enable_progress_bar(c.enable));
    if (c.add_bar) trainer.add_callback(std::make_shared<ProgressBar>());
    int master = -1, slave = -1;
    ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0)
        << "case " << c.name;
    const int saved = dup(2);
    dup2(slave, 2);
    Status st = trainer.fit(*model, data);
    dup2(saved, 2);
    close(saved);
    close(slave);
    std::string text;
    fcntl(master, F_SETFL, O_NONBLOCK);
    char buf[4096];
    for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) text.append(buf, n);
    close(master);
    EXPECT_EQ(st.code(), c.want_code) << "case " << c.name << ": " << st.ToString();
    if (c.want_code != StatusCode::kOk) {
      EXPECT_THAT(st, StatusIs(_, HasSubstr("enable_progress_bar=false")))
          << "case " << c.name;
    }
    for (const auto& piece : c.want) {
      EXPECT_NE(text.find(piece), std::string::npos)
          << "case " << c.name << ": " << ::testing::PrintToString(text);
    }
    if (c.want.empty()) {
      EXPECT_EQ(text, "") << "case " << c.name;
    } else {
      // One full bar per epoch: one ProgressBar, never two.
      size_t full = 0;
      for (size_t at = 0; (at = text.find("] 4/4 ", at)) != std::string::npos;
           ++at) {
        ++full;
      }
      EXPECT_EQ(full, 2u) << "case " << c.name;
      EXPECT_EQ(text.substr(text.size() - clear.size()), clear)

          << "case " << c.name << ": the line is left cleared";
    }
  }
}

// Issue 13.8: a kill just after last.ckpt was renamed, before its ranked
// copy was written and the checkpoint it displaced deleted, left the
// ranking naming a missing file and the displaced one never deleted
// (save_top_k=1 ended with two "best" files). Resume restores the ranking
// from the files present. Made by hand: fit A ranks epoch 1, fit B ranks
// epoch 2 in its place; then epoch 2's copy is removed and epoch 1's file
// put back (with its old time, so last.ckpt stays the newest).
TEST(ModelCheckpointTest, ResumeRanksTheFilesPresent) {
  TempDir dir;
  const std::string ckpt_dir = dir.Join("checkpoints");
  auto fit = [&](int64_t epochs, std::vector<double> script) {
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.script = std::move(script);
    auto model = std::make_shared<ScriptedModule>(o);
    auto ckpt = std::make_shared<ModelCheckpoint>(
        ModelCheckpointOptions().monitor("val_loss"));
    Trainer trainer(Quiet(dir.path(), log).max_epochs(epochs));
    trainer.add_callback(ckpt);
    Status s = trainer.fit(*model, data);
    return std::make_pair(s, ckpt->best_model_path());
  };
  ASSERT_OK(fit(2, {5, 3}).first);  // epoch1-step8 is the best
  const std::string e1 = ckpt_dir + "/epoch=1-step=8.ckpt";
  const std::string e2 = ckpt_dir + "/epoch=2-step=12.ckpt";
  std::filesystem::rename(e1, dir.Join("aside"));
  ASSERT_OK(fit(3, {1}).first);  // epoch2-step12 displaces it
  ASSERT_TRUE(std::filesystem::exists(e2));
  std::filesystem::remove(e2);                  // its copy never written
  std::filesystem::rename(dir.Join("aside"), e1);  // never deleted

  auto [status, best] = fit(4, {0.5});  // epoch3-step16, the new best
  ASSERT_OK(status);
  EXPECT_EQ(Show(FilesIn(ckpt_dir)),
            Show({"epoch=3-step=16.ckpt", "last.ckpt"}));
  EXPECT_EQ(best, ckpt_dir + "/epoch=3-step=16.ckpt");
}

// Expected names are Lightning 2.6.2's: the doctests of
// ModelCheckpoint.format_checkpoint_name and the cases of
// tests_pytorch/checkpointing/test_model_checkpoint.py
// ::test_model_checkpoint_format_checkpoint_name (with plain Python
// numbers, as those pass them), then cases worked through its
// _format_checkpoint_name by hand.
struct NameCase {
  std::string name;
  std::string filename;
  Metrics metrics;
  int64_t epoch, step;
  bool auto_insert;
  int64_t version;
  std::string want;
};

const std::vector<NameCase>& NameCases() {
  static const std::vector<NameCase> cases = {
      {"doctest {epoch}", "{epoch}", {}, 0, 0, true, 0, "epoch=0.ckpt"},
      {"doctest {epoch:03d}", "{epoch:03d}", {}, 5, 0, true, 0,
       "epoch=005.ckpt"},
      {"doctest {epoch}-{val_loss:.2f}", "{epoch}-{val_loss:.2f}",
       {{"val_loss", 0.123456}}, 2, 0, true, 0, "epoch=2-val_loss=0.12.ckpt"},
      {"doctest {epoch:d}", "{epoch:d}", {{"val_loss", 0.12}}, 2, 0, true, 0,
       "epoch=2.ckpt"},
      {"doctest no auto insert", "epoch={epoch}-validation_loss={val_loss:.2f}",
       {{"val_loss", 0.123456}}, 2, 0, false, 0,
       "epoch=2-validation_loss=0.12.ckpt"},
      {"doctest missing is 0", "{missing:d}", {}, 0, 0, true, 0,
       "missing=0.ckpt"},
      {"doctest {step}", "{step}", {}, 0, 0, true, 0, "step=0.ckpt"},
      {"empty is {epoch}-{step}", "", {}, 3, 2, true, 0, "epoch=3-step=2.ckpt"},
      {"no groups", "ckpt", {}, 0, 0, true, 0, "ckpt.ckpt"},
      {"no spec float", "{epoch:03d}-{acc}", {{"acc", 0.03}}, 3, 0, true, 0,
       "epoch=003-acc=0.03.ckpt"},
      // Lightning's case passes epoch_test as an int; logged metrics are
      // floats (here and in a real Lightning run), so ".0f" for its "03d".
      {"substring names", "{epoch:03d}-{epoch_test:.0f}",
       {{"epoch_test", 3}}, 3, 0, true, 0, "epoch=003-epoch_test=3.ckpt"},
      {"comma join", "{epoch},{acc:.5f}", {{"acc", 0.03}}, 3, 0, true, 0,
       "epoch=3,acc=0.03000.ckpt"},
      {"version", "name", {}, 0, 0, true, 3, "name-v3.ckpt"},
      {"slash makes a directory", "{epoch}_{val/loss:.5f}",
       {{"val/loss", 0.03}}, 4, 0, true, 0, "epoch=4_val/loss=0.03000.ckpt"},
      {"slash, no auto insert", "epoch={epoch:03d}-val_acc={val/acc}",
       {{"val/acc", 0.03}}, 3, 0, false, 0, "epoch=003-val_acc=0.03.ckpt"},
      {"dots in the name", "mAP@0.50={val/mAP@0.50:.4f}",
       {{"val/mAP@0.50", 0.2}}, 0, 0, false, 0, "mAP@0.50=0.2000.ckpt"},
      // The template.
      {"epoch_{epoch:03d}", "epoch_{epoch:03d}", {}, 7, 0, false, 0,
       "epoch_007.ckpt"},
      {"default with version", "", {}, 3, 100, true, 1,
       "epoch=3-step=100-v1.ckpt"},
      // By hand from Python's format(): float32 digits without a spec, the
      // other spec forms, a missing name with a float spec, braces.
      {"float32 digits", "{val_loss}",
       {{"val_loss", static_cast<double>(0.1f)}}, 0, 0, true, 0,
       "val_loss=0.10000000149011612.ckpt"},
      {"exponent", "{lr:.1e}", {{"lr", 0.00025}}, 0, 0, true, 0,
       "lr=2.5e-04.ckpt"},
      {"percent", "{acc:.1%}", {{"acc", 0.987}}, 0, 0, true, 0,
       "acc=98.7%.ckpt"},
      {"g", "{loss:g}", {{"loss", 1.5}}, 0, 0, true, 0, "loss=1.5.ckpt"},
      {"no type with precision", "{loss:.3}", {{"loss", 2.0}}, 0, 0, true, 0,
       "loss=2.0.ckpt"},
      {"width and sign", "{step:+06d}", {}, 0, 42, true, 0,
       "step=+00042.ckpt"},
      {"align and fill", "{epoch:*^5}", {}, 3, 0, true, 0, "epoch=**3**.ckpt"},
      {"thousands", "{step:,}", {}, 0, 1234567, true, 0,
       "step=1,234,567.ckpt"},
      {"missing with float spec", "{val_loss:.2f}", {}, 0, 0, true, 0,
       "val_loss=0.00.ckpt"},
      {"int with float spec", "{epoch:.1f}", {}, 2, 0, true, 0,
       "epoch=2.0.ckpt"},
  };
  return cases;
}

TEST(FormatCheckpointNameTest, NamesAsLightningFormatsThem) {
  for (const auto& c : NameCases()) {
    auto got = FormatCheckpointName(c.filename, c.metrics, c.epoch, c.step,
                                    c.auto_insert, c.version);
    ASSERT_OK(got) << c.name;
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

// Python's messages (Lightning raises them at the first save); and where
// Python would build a name no file system takes, or crash trialshim did
// (an uncaught std::out_of_range, std::bad_alloc, an int overflow), a clear
// error. Lightning refuses each of them too (AnchorsFormatCheckpointName),
// but for the NUL, which only open() refuses.
struct RefusedNameCase {
  std::string name;
  std::string filename;
  Metrics metrics;
  std::string want;  // the whole message after "checkpoint filename '...': "
  bool lightning_refuses = true;
};

const std::vector<RefusedNameCase>& RefusedNameCases() {
  static const std::vector<RefusedNameCase> cases = {
      {"d for a float",
       "{val_loss:d}",
       {{"val_loss", 0.5}},
       "Unknown format code 'd' for object of type 'float'"},
      {"unknown code",
       "{epoch:q}",
       {},
       "Unknown format code 'q' for object of type 'int'"},
      {"int with precision",
       "{epoch:.2}",
       {},
       "Precision not allowed in integer format specifier"},
      {"lone brace", "{epoch}}", {}, "Single '}' encountered in format string"},
      // Lightning's group regex takes "{{x" as a name, which leaves
      // str.format a field it refuses (an error in Python too).
      {"doubled braces", "{{x}}-{epoch}", {}, "unexpected '{' in field name"},
      {"a bracket in a name", "{{0[}", {}, "KeyError: '={0[{0['"},
      {"width past memory",
       "{epoch:99999999999999}",
       {},
       "width 99999999999999 is too large (at most 4096 here)"},
      {"precision past an int",
       "{epoch:.9999999999f}",
       {},
       "precision too big"},
      {"precision past int64",
       "{val_loss:.99999999999999999999f}",
       {{"val_loss", 0.5}},
       "Too many decimal digits in format string"},
      {"a field in the spec",
       "{epoch:{step}}",
       {},
       "Invalid format specifier 'step=1' for object of type 'int'"},
      {"a NUL fill",
       std::string("{epoch:\0<3}", 11),
       {},
       "the name holds a NUL character (embedded null byte)",
       /*lightning_refuses=*/false},
  };
  return cases;
}

TEST(FormatCheckpointNameTest, RefusesWhatPythonRefuses) {
  for (const auto& c : RefusedNameCases()) {
    auto got = FormatCheckpointName(c.filename, c.metrics, 1, 1, true);
    ASSERT_FALSE(got.ok()) << c.name;
    EXPECT_EQ(got.status().message(),
              "checkpoint filename '" + c.filename + "': " + c.want)
        << c.name;
  }
}

// Any template, against Lightning's own _format_checkpoint_name run by
// /usr/bin/python3 with torch (tests/data/python_format/python_format.py):
// the same name, or the same error.
TEST(FormatCheckpointNameTest, NamesAsLightningDoesForAnyTemplate) {
  std::vector<std::string> templates = {"{epoch}-{val_loss:.3f}",
                                        "{val/acc:.1%}_{epoch:02d}",
                                        "{epoch_test}",
                                        "{{0[}",
                                        "{a{b}",
                                        "{0[x]}",
                                        "{{",
                                        "}}",
                                        "{epoch}{",
                                        "{val_loss:.2}",
                                        "{x:.2}",
                                        "{epoch:{step}}",
                                        "{epoch!r}",
                                        "{epoch[0]}",
                                        "{a.b}",
                                        "{a\nb}",
                                        "{a\n{b}",
                                        "{",
                                        "{}",
                                        "{:}",
                                        "{epoch}{epoch}",
                                        "{epoch:c}",
                                        "{a]!}",
                                        "{a]!r:}",
                                        "{5}",
                                        "{0}",
                                        "{{epoch}}",
                                        "{epoch:%}"};
  for (std::string& t :
       testing::RandomFormatStrings("{}[]0:!.d5 a_/\nepoch", 3000, 12, 4242)) {
    templates.push_back(std::move(t));
  }
  // Float32 values, as ModelCheckpoint passes them.
  const Metrics metrics = {{"val_loss", 0.25}, {"val/acc", 0.875}, {"a", 3}};
  nlohmann::json input = nlohmann::json::array();
  for (bool auto_insert : {true, false}) {
    for (const std::string& t : templates) {
      nlohmann::json m = nlohmann::json::object();
      for (const auto& [k, v] : metrics)
        m[k] = testing::PythonNumberJson(PythonNumber::Float(v));
      input.push_back({{"filename", t},
                       {"metrics", m},
                       {"epoch", 3},
                       {"step", 42},
                       {"auto_insert_metric_name", auto_insert}});
    }
  }
  const std::vector<std::string> python = testing::RunPythonFormat(input);
  ASSERT_EQ(python.size(), input.size());
  int failures = 0;
  for (size_t i = 0; i < input.size() && failures < 20; ++i) {
    const std::string t = input[i]["filename"];
    const bool auto_insert = input[i]["auto_insert_metric_name"];
    StatusOr<std::string> got =
        FormatCheckpointName(t, metrics, 3, 42, auto_insert);
    // Ours says which filename; Python's error does not.
    std::string want = python[i];
    if (want.rfind("ok: ", 0) == 0) {
      want += ".ckpt";
    } else {
      want.insert(7, "checkpoint filename '" + t + "': ");
    }
    const std::string mine =
        got.ok() ? "ok: " + *got : "error: " + got.status().message();
    // Refused by name where Python shows a tensor's repr or attribute.
    if (mine.find("not supported") != std::string::npos) continue;
    if (mine != want) ++failures;
    EXPECT_EQ(mine, want) << "case " << nlohmann::json(t).dump()
                          << " auto_insert=" << auto_insert;
  }
}

// A filename no checkpoint can be named by is refused when the callback is
// built from the config, and by the C++ callback when fit starts: before
// any training, not at the first save.
TEST(ModelCheckpointTest, RefusesABadFilenameBeforeTraining) {
  struct Case {
    std::string name;
    std::string filename;
    std::string want;  // "" : accepted
  };
  const std::vector<Case> cases = {
      {"a bracket in a name", "{{0[}",
       "checkpoint filename '{{0[}': KeyError: '={0[{0['"},
      {"width past memory", "{epoch:99999999999999}",
       "width 99999999999999 is too large"},
      {"precision past an int", "{val_loss:.9999999999f}", "precision too big"},
      {"unknown code", "{val_loss:.2q}",
       "Unknown format code 'q' for object of type 'float'"},
      {"epoch is an int", "{epoch:.2}",
       "Precision not allowed in integer format specifier"},
      // A name is a float once logged, the int 0 until then.
      {"d for a name", "{val_loss:d}", ""},
      {"a float's spec for one name, an int's for another", "{a:d}-{b:.2}", ""},
      {"Lightning's default", "", ""},
  };
  for (const Case& c : cases) {
    auto made = CallbacksFromConfig(Node::MakeMap(
        {{"model_checkpoint",
          Node::MakeMap({{"filename", Node::String(c.filename)}})}}));
    if (c.want.empty()) {
      EXPECT_OK(made) << "case " << c.name;
      continue;
    }
    ASSERT_FALSE(made.ok()) << "case " << c.name;
    EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    EXPECT_EQ(made.status().message().rfind(
                  "callbacks.model_checkpoint.filename: checkpoint filename '" +
                      c.filename + "': ",
                  0),
              0u)
        << "case " << c.name << ": " << made.status().message();
    EXPECT_THAT(made, StatusIs(_, HasSubstr(c.want))) << "case " << c.name;

    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<ScriptedModule>();
    Trainer trainer(Quiet(dir.path(), log).max_epochs(1));
    trainer.add_callback(std::make_shared<ModelCheckpoint>(
        ModelCheckpointOptions().filename(c.filename)));
    Status fit = trainer.fit(*model, data);
    EXPECT_THAT(fit, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
    EXPECT_TRUE(model->seen_lrs().empty()) << "case " << c.name << " trained";
  }
}

// Lightning's keywords in a fit: templates (a "/" makes a directory),
// step-count saves, the version counter, save_last="link",
// save_weights_only.
struct KeywordCase {
  std::string name;
  Node options;  // the callbacks.model_checkpoint node
  int64_t epochs;
  std::set<std::string> want;  // files under checkpoints/, recursively
  bool last_is_link;
  int64_t val_check_interval = 0;  // batches; 0: at epoch ends
};

Node MapOf(Node::Map m) { return Node::MakeMap(std::move(m)); }

const std::vector<KeywordCase>& KeywordCases() {
  auto map = MapOf;
  static const std::vector<KeywordCase> cases = {
      {"issue's template",
       map({{"filename", Node::String("epoch_{epoch:03d}")},
            {"auto_insert_metric_name", Node::Bool(false)},
            {"save_top_k", Node::Int(-1)},
            {"save_last", Node::Bool(false)}}),
       2,
       {"epoch_000.ckpt", "epoch_001.ckpt"},
       false},
      {"metric with a slash",
       map({{"filename", Node::String("{epoch}-{val/loss:.2f}")},
            {"save_top_k", Node::Int(-1)},
            {"save_last", Node::Bool(false)}}),
       1,
       {"epoch=0-val/loss=0.00.ckpt"},
       false},
      {"every_n_train_steps",
       map({{"every_n_train_steps", Node::Int(3)},
            {"save_top_k", Node::Int(-1)}}),
       2,
       {"epoch=0-step=3.ckpt", "epoch=1-step=6.ckpt", "last.ckpt"},
       false},
      {"same name twice gets -v1",
       map({{"filename", Node::String("fixed")},
            {"save_top_k", Node::Int(-1)},
            {"save_last", Node::Bool(false)}}),
       3,
       {"fixed.ckpt", "fixed-v1.ckpt", "fixed-v2.ckpt"},
       false},
      {"save_last link",
       map({{"save_last", Node::String("link")}, {"save_top_k", Node::Int(1)}}),
       2,
       {"epoch=1-step=8.ckpt", "last.ckpt"},
       true},
      {"weights only",
       map({{"save_weights_only", Node::Bool(true)},
            {"save_last", Node::Bool(false)}}),
       2,
       {"epoch=1-step=8.ckpt"},
       false},
      // A validation before the epoch's end saves there, as Lightning's
      // on_validation_end does with val_check_interval.
      {"after every validation",
       map({{"monitor", Node::String("val_loss")},
            {"save_top_k", Node::Int(-1)},
            {"save_last", Node::Bool(false)}}),
       2,
       {"epoch=0-step=2.ckpt", "epoch=0-step=4.ckpt", "epoch=1-step=6.ckpt",
        "epoch=1-step=8.ckpt"},
       false,
       2},
  };
  return cases;
}

// The files under `dir`, recursively, but for dot files (the lock, a
// temporary).
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> got;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_directory() || e.path().filename().string()[0] == '.') continue;
    got.insert(e.path().lexically_relative(dir).string());
  }
  return got;
}

TEST(ModelCheckpointTest, LightningKeywordsInAFit) {
  for (const auto& c : KeywordCases()) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<ScriptedModule>(ScriptedOptions());
    auto made = CallbacksFromConfig(MapOf({{"model_checkpoint", c.options}}));
    ASSERT_OK(made) << c.name;
    TrainerOptions options = Quiet(dir.path(), log).max_epochs(c.epochs);
    if (c.val_check_interval > 0)
      options.val_check_interval(BatchLimit::Count(c.val_check_interval));
    Trainer trainer(options);
    trainer.add_callback(made->at(0));
    ASSERT_OK(trainer.fit(*model, data)) << c.name << "\n" << log.out.str();
    const std::string ckpt_dir = dir.Join("checkpoints");
    EXPECT_EQ(Show(FilesUnder(ckpt_dir)), Show(c.want)) << c.name;
    EXPECT_EQ(std::filesystem::is_symlink(ckpt_dir + "/last.ckpt"),
              c.last_is_link)
        << c.name;
    if (c.name == "weights only") {
      // Such a file can not resume: a second fit starts fresh, saying why.
      CapturedLog log2;
      Trainer again(Quiet(dir.path(), log2).max_epochs(c.epochs));
      auto model2 = std::make_shared<ScriptedModule>(ScriptedOptions());
      ASSERT_OK(again.fit(*model2, data));
      EXPECT_EQ(again.resumed_from(), "");
      EXPECT_NE(log2.out.str().find("holds weights only"), std::string::npos)
          << log2.out.str();
    }
  }
}

TEST(ModelCheckpointTest, TriggersExcludeEachOtherAsInLightning) {
  auto made = CallbacksFromConfig(Node::MakeMap(
      {{"model_checkpoint",
        Node::MakeMap({{"every_n_train_steps", Node::Int(5)},
                       {"train_time_interval",
                        Node::MakeMap({{"minutes", Node::Int(10)}})}})}}));
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made, StatusIs(_, HasSubstr("should be mutually exclusive")));
}

struct ThresholdCase {
  std::string name;
  std::vector<double> script;
  EarlyStoppingOptions options;
  int64_t want_epochs;
  std::string want_reason;
};

const std::vector<ThresholdCase>& ThresholdCases() {
  static const std::vector<ThresholdCase> cases = {
      {"stopping threshold",
       {1.0, 0.5, 0.2, 0.1},
       EarlyStoppingOptions().stopping_threshold(0.3),
       3,
       "stopping threshold reached: val_loss = 0.2 < 0.3"},
      {"divergence threshold",
       {0.5, 0.9, 0.1},
       EarlyStoppingOptions().divergence_threshold(0.8),
       2,
       "divergence threshold reached: val_loss = 0.9 > 0.8"},
      {"max mode threshold",
       {0.1, 0.95, 0.2},
       EarlyStoppingOptions().mode(Mode::kMax).stopping_threshold(0.9),
       2,
       "stopping threshold reached: val_loss = 0.95 > 0.9"},
      {"not strict: a missing monitor is skipped",
       {1, 1, 1, 1},
       EarlyStoppingOptions().monitor("nope").strict(false).patience(1),
       4,
       ""},
      {"checked at every epoch's end",
       {1, 1, 1, 1},
       EarlyStoppingOptions().patience(2).check_on_train_epoch_end(true),
       3,
       "monitored metric val_loss did not improve in the last 2 validations; "
       "best score: 1.0"},
  };
  return cases;
}

TEST(EarlyStoppingTest, ThresholdsAndStrictAsLightning) {
  for (const auto& c : ThresholdCases()) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.script = c.script;
    auto model = std::make_shared<ScriptedModule>(o);
    auto stopper = std::make_shared<EarlyStopping>(c.options);
    Trainer trainer(
        Quiet(dir.path(), log).max_epochs(4).enable_checkpointing(false));
    trainer.add_callback(stopper);
    ASSERT_OK(trainer.fit(*model, data)) << c.name;
    EXPECT_EQ(trainer.current_epoch(), c.want_epochs) << c.name;
    EXPECT_EQ(stopper->reason(), c.want_reason) << c.name;
  }
  // Strict (the default): a monitor never logged is an error.
  TempDir dir;
  CapturedLog log;
  TinyData data;
  auto model = std::make_shared<ScriptedModule>(ScriptedOptions());
  Trainer trainer(Quiet(dir.path(), log).max_epochs(2).enable_checkpointing(false));
  trainer.add_callback(std::make_shared<EarlyStopping>(
      EarlyStoppingOptions().monitor("nope")));
  Status st = trainer.fit(*model, data);
  EXPECT_THAT(st, StatusIs(_, HasSubstr("EarlyStopping monitors 'nope'")));
}

// Lightning's model_summary.py layout (its docstring's table without the
// FLOPs column), worked through _format_summary_table by hand.
TEST(ModelSummaryTest, PrintsLightningsTable) {
  struct Net : torch::nn::Module {
    Net() {
      net = register_module(
          "net", torch::nn::Sequential(torch::nn::Linear(64, 128),
                                       torch::nn::ReLU(),
                                       torch::nn::Linear(128, 10)));
    }
    torch::nn::Sequential net{nullptr};
  };
  Net model;
  struct Case {
    std::string name;
    int64_t depth;
    int bits;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"depth 1",
       1,
       32,
       "  | Name | Type       | Params | Mode \n"
       "--------------------------------------------\n"
       "0 | net  | Sequential | 9.6 K  | train\n"
       "--------------------------------------------\n"
       "9.6 K     Trainable params\n"
       "0         Non-trainable params\n"
       "9.6 K     Total params\n"
       "0.038     Total estimated model params size (MB)\n"
       "4         Modules in train mode\n"
       "0         Modules in eval mode"},
      {"all, in double",
       -1,
       64,
       "  | Name  | Type       | Params | Mode \n"
       "---------------------------------------------\n"
       "0 | net   | Sequential | 9.6 K  | train\n"
       "1 | net.0 | Linear     | 8.3 K  | train\n"
       "2 | net.1 | ReLU       | 0      | train\n"
       "3 | net.2 | Linear     | 1.3 K  | train\n"
       "---------------------------------------------\n"
       "9.6 K     Trainable params\n"
       "0         Non-trainable params\n"
       "9.6 K     Total params\n"
       "0.077     Total estimated model params size (MB)\n"
       "4         Modules in train mode\n"
       "0         Modules in eval mode"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(SummarizeModel(model, c.depth, c.bits), c.want) << c.name;
  }
  // Parameters outside every listed layer are a row of their own, even
  // with no layer at all (Lightning's _add_leftover_params_to_summary).
  struct Flat : torch::nn::Module {
    Flat() {
      register_parameter("a", torch::zeros({1}));
      register_parameter("b", torch::zeros({1}));
    }
  };
  EXPECT_EQ(SummarizeModel(Flat(), -1, 32),
            "  | Name         | Type | Params | Mode\n"
            "---------------------------------------------\n"
            "  | other params | n/a  | 2      | n/a \n"
            "---------------------------------------------\n"
            "2         Trainable params\n"
            "0         Non-trainable params\n"
            "2         Total params\n"
            "0.000     Total estimated model params size (MB)\n"
            "0         Modules in train mode\n"
            "0         Modules in eval mode");
}

// --- The same cases with real Lightning 2.2.5 (the anchors). Where our
// defaults differ on purpose they are passed to Lightning explicitly:
// save_last unset means true here (docs/lightning-differences.md).

std::string Hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

nlohmann::json HexList(const std::vector<double>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (double v : values) out.push_back(Hex(v));
  return out;
}

const char* ModeName(Mode m) { return m == Mode::kMax ? "max" : "min"; }

// Runs tests/anchors/lightning_scripted.py (its header gives both forms):
// one result per run, in order.
nlohmann::json LightningFits(const nlohmann::json& runs) {
  TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/lightning_scripted.py",
                                {dir.Write("runs.json", runs.dump())});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json out = nlohmann::json::parse(f.out, nullptr, false);
  EXPECT_EQ(out.size(), runs.size()) << f.out << f.err;
  return out.is_array() ? out : nlohmann::json::array();
}

std::set<std::string> SetOf(const nlohmann::json& names) {
  return names.get<std::set<std::string>>();
}

TEST(AnchorsModelCheckpoint, KeepsWhatLightningKeeps) {
  SKIP_WITHOUT_ANCHORS();
  TempDir root;
  nlohmann::json runs = nlohmann::json::array();
  for (size_t i = 0; i < CheckpointCases().size(); ++i) {
    const CheckpointCase& c = CheckpointCases()[i];
    nlohmann::json kwargs = {{"save_top_k", c.options.save_top_k()},
                             {"mode", ModeName(c.options.mode())},
                             {"save_last", c.options.save_last()},
                             {"every_n_epochs", c.options.every_n_epochs()}};
    if (!c.options.monitor().empty()) kwargs["monitor"] = c.options.monitor();
    runs.push_back({{"dir", root.Join(std::to_string(i))},
                    {"trainer",
                     {{"max_epochs", c.epochs},
                      {"check_val_every_n_epoch", c.check_val_every_n_epoch}}},
                    {"checkpoint", kwargs},
                    {"script", HexList(c.script)}});
  }
  nlohmann::json got = LightningFits(runs);
  for (size_t i = 0; i < got.size(); ++i) {
    const CheckpointCase& c = CheckpointCases()[i];
    EXPECT_EQ(Show(SetOf(got[i]["files"])), Show(c.want)) << "case " << c.name;
    if (!c.want_best.empty()) {
      EXPECT_EQ(got[i]["best"], c.want_best) << "case " << c.name;
    }
  }
}

TEST(AnchorsModelCheckpoint, KeywordsInAFitAsLightningTakesThem) {
  SKIP_WITHOUT_ANCHORS();
  TempDir root;
  nlohmann::json runs = nlohmann::json::array();
  for (size_t i = 0; i < KeywordCases().size(); ++i) {
    const KeywordCase& c = KeywordCases()[i];
    nlohmann::json kwargs = nlohmann::json::parse(config::ToJson(c.options));
    if (!kwargs.contains("save_last")) kwargs["save_last"] = true;
    nlohmann::json trainer = {{"max_epochs", c.epochs}};
    if (c.val_check_interval > 0) {
      trainer["val_check_interval"] = c.val_check_interval;
    }
    runs.push_back({{"dir", root.Join(std::to_string(i))},
                    {"trainer", trainer},
                    {"checkpoint", kwargs}});
  }
  // Lightning 2.2.5 lets a name without a monitor reuse the previous best
  // checkpoint's even with save_top_k -1, so "fixed" is overwritten; 2.6,
  // which we follow, versions it (docs/lightning-differences.md).
  const std::map<std::string, std::set<std::string>> in_2_2_5 = {
      {"same name twice gets -v1", {"fixed.ckpt"}}};
  nlohmann::json got = LightningFits(runs);
  for (size_t i = 0; i < got.size(); ++i) {
    const KeywordCase& c = KeywordCases()[i];
    auto differs = in_2_2_5.find(c.name);
    EXPECT_EQ(Show(SetOf(got[i]["files"])),
              Show(differs == in_2_2_5.end() ? c.want : differs->second))
        << "case " << c.name;
    EXPECT_EQ(got[i]["last_is_link"], c.last_is_link) << "case " << c.name;
  }
}

// Where Lightning stops on the scripted sequences of the three EarlyStopping
// tests above (its reason is worded its own way: ours names validations).
TEST(AnchorsEarlyStopping, StopsWhereLightningStops) {
  SKIP_WITHOUT_ANCHORS();
  TempDir root;
  nlohmann::json runs = nlohmann::json::array();
  struct Want {
    std::string name;
    int64_t epochs;
  };
  std::vector<Want> want;
  auto add = [&](const std::string& name, const std::vector<double>& script,
                 nlohmann::json trainer, nlohmann::json kwargs,
                 int64_t epochs) {
    trainer["enable_checkpointing"] = false;
    runs.push_back({{"dir", root.Join(std::to_string(runs.size()))},
                    {"trainer", trainer},
                    {"early_stopping", kwargs},
                    {"script", HexList(script)}});
    want.push_back({name, epochs});
  };
  for (const PatienceCase& c : PatienceCases()) {
    add(c.name, c.script, {{"max_epochs", 8}, {"min_epochs", c.min_epochs}},
        {{"monitor", "val_loss"},
         {"patience", c.patience},
         {"min_delta", c.min_delta}},
        c.want_epochs);
  }
  for (const FiniteCase& c : FiniteCases()) {
    add(c.name, c.script, {{"max_epochs", 8}},
        {{"monitor", "val_loss"},
         {"mode", ModeName(c.mode)},
         {"patience", 2},
         {"check_finite", c.check_finite}},
        c.want_epochs);
  }
  for (const ThresholdCase& c : ThresholdCases()) {
    const EarlyStoppingOptions& o = c.options;
    nlohmann::json kwargs = {
        {"monitor", o.monitor()},           {"mode", ModeName(o.mode())},
        {"patience", o.patience()},         {"min_delta", o.min_delta()},
        {"check_finite", o.check_finite()}, {"strict", o.strict()}};
    if (o.stopping_threshold()) {
      kwargs["stopping_threshold"] = *o.stopping_threshold();
    }
    if (o.divergence_threshold()) {
      kwargs["divergence_threshold"] = *o.divergence_threshold();
    }
    if (o.check_on_train_epoch_end()) {
      kwargs["check_on_train_epoch_end"] = *o.check_on_train_epoch_end();
    }
    add(c.name, c.script, {{"max_epochs", 4}}, kwargs, c.want_epochs);
  }
  nlohmann::json got = LightningFits(runs);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["epoch"], want[i].epochs)
        << "case " << want[i].name << "; Lightning: " << got[i]["reason"];
  }
}

// LearningRateMonitor's cells in metrics.csv (column, epoch, step, value)
// beside a real fit with Lightning's on the same optimizer, groups and
// ExponentialLR, logged through its CSVLogger.
TEST(AnchorsLearningRateMonitor, LogsWhatLightningLogs) {
  SKIP_WITHOUT_ANCHORS();
  TempDir root;
  nlohmann::json runs = nlohmann::json::array();
  std::vector<std::vector<std::array<std::string, 4>>> ours;
  for (size_t i = 0; i < LrMonitorCases().size(); ++i) {
    const LrMonitorCase& c = LrMonitorCases()[i];
    ours.push_back(FitLrCells(c));
    nlohmann::json run = {
        {"dir", root.Join(std::to_string(i))},
        {"trainer",
         {{"max_epochs", c.epochs},
          {"log_every_n_steps", c.log_every_n_steps},
          {"enable_checkpointing", false}}},
        {"lr_monitor",
         {{"logging_interval", c.options.logging_interval()},
          {"log_momentum", c.options.log_momentum()},
          {"log_weight_decay", c.options.log_weight_decay()}}},
        {"csv", true},
        {"optimizer", c.optimizer},
        {"lr", 0.1},
        {"lr2", c.lr2}};
    if (!c.scheduler.empty()) {
      const Node s = Node::MakeMap(c.scheduler);
      run["scheduler"] = {
          {"gamma", s.Get("gamma")->AsDouble()},
          {"interval",
           s.Get("interval") ? s.Get("interval")->AsString() : "epoch"}};
    }
    runs.push_back(run);
  }
  // The cells are compared as numbers: a momentum or weight decay left at
  // torch's default is the int 0 in Python ("0"), a double here ("0.0").
  nlohmann::json got = LightningFits(runs);
  for (size_t i = 0; i < got.size(); ++i) {
    const LrMonitorCase& c = LrMonitorCases()[i];
    const nlohmann::json& theirs = got[i]["lr_rows"];
    ASSERT_EQ(ours[i].size(), theirs.size())
        << "case " << c.name << ": " << theirs.dump();
    for (size_t r = 0; r < ours[i].size(); ++r) {
      const auto& cell = ours[i][r];
      EXPECT_EQ(nlohmann::json({cell[0], cell[1], cell[2]}),
                nlohmann::json({theirs[r][0], theirs[r][1], theirs[r][2]}))
          << "case " << c.name << " row " << r;
      EXPECT_EQ(std::stod(cell[3]), std::stod(theirs[r][3].get<std::string>()))
          << "case " << c.name << " row " << r;
    }
  }
}

// The models of tests/anchors/lightning_summary.py, by name: "docstring"
// (Lightning's docstring's), "mixed" (a parameter of its own, a frozen
// layer), "flat" (parameters, no submodules). A step's loss is the sum of
// the squares of the trainable parameters.
class SummarizedModule : public Module {
 public:
  explicit SummarizedModule(const std::string& model) {
    namespace nn = torch::nn;
    if (model == "docstring") {
      register_module("net", nn::Sequential(nn::Linear(64, 128), nn::ReLU(),
                                            nn::Linear(128, 10)));
    } else if (model == "mixed") {
      register_parameter("scale", torch::ones({3}));
      register_module("encoder", nn::Sequential(nn::Linear(2, 4), nn::Tanh()));
      nn::Linear head = register_module("head", nn::Linear(4, 1));
      for (torch::Tensor& p : head->parameters()) p.set_requires_grad(false);
    } else {
      register_parameter("a", torch::zeros({1}));
      register_parameter("b", torch::zeros({1}));
    }
  }
  std::vector<torch::Tensor> trainable() const {
    std::vector<torch::Tensor> out;
    for (const torch::Tensor& p : parameters()) {
      if (p.requires_grad()) out.push_back(p);
    }
    return out;
  }
  torch::Tensor training_step(const Batch&, int64_t) override {
    torch::Tensor loss = torch::zeros({}, parameters()[0].options());
    for (const torch::Tensor& p : trainable()) loss = loss + p.pow(2).sum();
    return loss;
  }
  StatusOr<OptimizerConfig> configure_optimizers() override {
    OptimizerConfig out;
    out.optimizer = std::make_shared<torch::optim::SGD>(
        trainable(), torch::optim::SGDOptions(0.01));
    return out;
  }
};

// Our table as Lightning 2.2.5 draws it: without the Mode column (the last)
// and the lines of modules in train and eval mode, which 2.3 added.
std::string WithoutModes(const std::string& table) {
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.size() < 4) return table;
  const size_t mode_width = lines[0].size() - lines[0].rfind(" | ");
  std::string out;
  int dashes = 0;
  for (size_t i = 0; i + 2 < lines.size(); ++i) {
    std::string line = lines[i];
    if (line.rfind("---", 0) == 0) {
      ++dashes;
      line.resize(line.size() - mode_width);
    } else if (dashes < 2) {
      line.resize(line.rfind(" | "));
    }
    out += (i ? "\n" : "") + line;
  }
  return out;
}

// The table a fit logged ("" for none): from its header to its last line.
std::string LoggedTable(const std::string& log) {
  size_t start = log.find("  | Name");
  if (start == std::string::npos) return "";
  const std::string last = "Modules in eval mode";
  return log.substr(start, log.find(last, start) + last.size() - start);
}

// ModelSummary and RichModelSummary in real fits of the same models, ours
// and Lightning 2.2.5's (tests/anchors/lightning_summary.py): the same table
// but for what 2.3 added (WithoutModes) and the size of a 64-bit model, which
// 2.2.5 estimates at 32 bits (it does not know the name "64-true").
TEST(AnchorsModelSummary, SummarizesWhatLightningSummarizes) {
  SKIP_WITHOUT_ANCHORS();
  struct Case {
    const char* name;
    const char* model;
    int64_t max_depth;
    bool rich;
    const char* precision;
  };
  const Case cases[] = {
      {"the docstring's model", "docstring", 1, false, "32-true"},
      {"every layer", "docstring", -1, false, "32-true"},
      {"two levels, RichModelSummary", "docstring", 2, true, "32-true"},
      {"own parameters and a frozen layer", "mixed", 1, false, "32-true"},
      {"the same, every layer", "mixed", -1, true, "32-true"},
      {"no submodules", "flat", 1, false, "32-true"},
      {"no submodules, every layer", "flat", -1, false, "32-true"},
      {"max_depth 0: no table", "docstring", 0, false, "32-true"},
      {"in double", "docstring", 1, false, "64-true"},
  };
  TempDir root;
  nlohmann::json input = nlohmann::json::array();
  std::vector<std::string> ours;
  for (const Case& c : cases) {
    TempDir dir;
    CapturedLog log;
    log.logger->set_pattern("%v");
    TinyData data;
    SummarizedModule model(c.model);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(1)
                        .precision(c.precision)
                        .enable_checkpointing(false));
    trainer.add_callback(std::make_shared<ModelSummary>(c.max_depth));
    ASSERT_OK(trainer.fit(model, data)) << c.name;
    const std::string logged = LoggedTable(log.out.str());
    const int bits = std::string(c.precision) == "64-true" ? 64 : 32;
    EXPECT_EQ(logged,
              c.max_depth == 0 ? "" : SummarizeModel(model, c.max_depth, bits))
        << c.name;
    ours.push_back(c.max_depth == 0
                       ? ""
                       : WithoutModes(SummarizeModel(model, c.max_depth, 32)));
    input.push_back({{"dir", root.Join(std::to_string(input.size()))},
                     {"model", c.model},
                     {"max_depth", c.max_depth},
                     {"rich", c.rich},
                     {"precision", c.precision}});
  }
  TempDir scratch;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/lightning_summary.py",
                                {scratch.Write("cases.json", input.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json got = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(got.size(), std::size(cases)) << f.out;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(ours[i], got[i].get<std::string>()) << cases[i].name;
  }
}

TEST(AnchorsFormatCheckpointName, LightningNamesTheCasesSo) {
  SKIP_WITHOUT_ANCHORS();
  nlohmann::json cases = nlohmann::json::array();
  auto add = [&](const std::string& filename, const Metrics& metrics,
                 int64_t epoch, int64_t step, bool auto_insert,
                 int64_t version) {
    nlohmann::json m = nlohmann::json::object();
    for (const auto& [k, v] : metrics) m[k] = Hex(v);
    cases.push_back({{"filename", filename},
                     {"metrics", m},
                     {"epoch", epoch},
                     {"step", step},
                     {"auto_insert_metric_name", auto_insert},
                     {"version", version}});
  };
  for (const NameCase& c : NameCases()) {
    add(c.filename, c.metrics, c.epoch, c.step, c.auto_insert, c.version);
  }
  for (const RefusedNameCase& c : RefusedNameCases()) {
    add(c.filename, c.metrics, 1, 1, true, 0);
  }
  TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/lightning_names.py",
                                {dir.Write("cases.json", cases.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json got = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(got.size(), cases.size()) << f.out;
  size_t i = 0;
  for (const NameCase& c : NameCases()) {
    EXPECT_EQ(got[i++].value("name", "<refused>"), c.want) << "case " << c.name;
  }
  for (const RefusedNameCase& c : RefusedNameCases()) {
    EXPECT_EQ(got[i++].contains("error"), c.lightning_refuses)
        << "case " << c.name << ": Lightning says " << got[i - 1];
  }
}

}  // namespace
}  // namespace trialshim::trainer

namespace trialshim::trainer {
namespace {

// Lightning's DeviceStatsMonitor from its _target_: on the CPU, psutil's
// three figures every log_every_n_steps steps, under Lightning's prefix.
using testing::TempDir;

TEST(DeviceStatsMonitorTest, LogsTheCpusFiguresEveryLogStep) {
  config::Registry registry;
  ASSERT_OK(RegisterTrainerTargets(&registry));
  auto cfg = config::LoadYamlString(
      "m: {_target_: lightning.pytorch.callbacks.DeviceStatsMonitor}\n"
      "bad: {_target_: lightning.pytorch.callbacks.DeviceStatsMonitor, "
      "cpu_stat: true}\n",
      "callbacks.yaml");
  ASSERT_OK(cfg);
  auto monitor = registry.InstantiateAs<Callback>(*cfg, "m");
  ASSERT_OK(monitor);
  EXPECT_THAT(registry.InstantiateAs<Callback>(*cfg, "bad"),
              StatusIs(_, HasSubstr("cpu_stats")));
  TempDir dir;
  CapturedLog log;
  ScriptedModule module;
  TinyData data;
  Trainer trainer(Quiet(dir.path(), log)
                      .max_epochs(2)
                      .log_every_n_steps(2)
                      .enable_checkpointing(false));
  trainer.add_callback(*monitor);
  ASSERT_OK(trainer.fit(module, data)) << log.out.str();
  const std::string prefix = "DeviceStatsMonitor.on_train_batch_end/";
  int rows = 0;
  for (const auto& row : ReadCsv(dir.Join("metrics.csv"))) {
    auto vm = row.find(prefix + "cpu_vm_percent");
    if (vm == row.end() || vm->second.empty()) continue;
    ++rows;
    EXPECT_GT(std::stod(vm->second), 0);
    EXPECT_LE(std::stod(vm->second), 100);
    EXPECT_FALSE(row.at(prefix + "cpu_swap_percent").empty());
    EXPECT_EQ(std::stoll(row.at("step")) % 2, 1) << "step after a log step";
  }
  EXPECT_EQ(rows, static_cast<int>(trainer.global_step() / 2));
}

}  // namespace
}  // namespace trialshim::trainer
