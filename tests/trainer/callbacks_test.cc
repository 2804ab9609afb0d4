// The built-in callbacks as the Trainer runs them, on a four-row
// regression whose validation metric follows a script:
// LearningRateMonitor's rows in metrics.csv, ModelCheckpoint's file sets,
// EarlyStopping's patience, min_delta, min_epochs and check_finite,
// ProgressBar's line on a terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <set>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/scripted_module.h"

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

TEST(LearningRateMonitorTest, LogsEachGroupsRateIntoMetricsCsv) {
  struct Row {
    std::string column;
    int64_t epoch;  // -1: not checked
    int64_t step;   // -1: not checked
    double lr;
  };
  struct Case {
    std::string name;
    std::string interval;
    int64_t log_every_n_steps;
    int64_t epochs;
    double lr2;  // a second param group's rate; 0: one group
    Node::Map scheduler;
    std::vector<Row> want;  // every lr-* cell, in file order
  };
  const Node::Map exp_per_epoch = {{"name", Node::String("exponential")},
                                   {"gamma", Node::Double(0.5)}};
  const Node::Map exp_per_step = {{"name", Node::String("exponential")},
                                  {"interval", Node::String("step")},
                                  {"gamma", Node::Double(0.5)}};
  // A step's row holds the rate that step ran with (as Lightning logs it
  // before the optimizer step), not the one the scheduler set after it.
  const std::vector<Case> cases = {
      {"epoch interval, rate halves per epoch",
       "epoch",
       50,
       3,
       0,
       exp_per_epoch,
       {{"lr-SGD", 0, -1, 0.1},
        {"lr-SGD", 1, -1, 0.05},
        {"lr-SGD", 2, -1, 0.025}}},
      {"step interval, every step, rate halves per step",
       "step",
       1,
       1,
       0,
       exp_per_step,
       {{"lr-SGD", 0, 0, 0.1},
        {"lr-SGD", 0, 1, 0.05},
        {"lr-SGD", 0, 2, 0.025},
        {"lr-SGD", 0, 3, 0.0125}}},
      {"step interval, every 2nd step",
       "step",
       2,
       2,
       0,
       exp_per_step,
       {{"lr-SGD", 0, 1, 0.05},
        {"lr-SGD", 0, 3, 0.0125},
        {"lr-SGD", 1, 5, 0.003125},
        {"lr-SGD", 1, 7, 0.00078125}}},
      {"step interval, scheduler stepped per epoch",
       "step",
       1,
       2,
       0,
       exp_per_epoch,
       {{"lr-SGD", 0, 0, 0.1},
        {"lr-SGD", 0, 1, 0.1},
        {"lr-SGD", 0, 2, 0.1},
        {"lr-SGD", 0, 3, 0.1},
        {"lr-SGD", 1, 4, 0.05},
        {"lr-SGD", 1, 5, 0.05},
        {"lr-SGD", 1, 6, 0.05},
        {"lr-SGD", 1, 7, 0.05}}},
      {"two param groups, no scheduler",
       "epoch",
       50,
       2,
       0.3,
       {},
       {{"lr-SGD", 0, -1, 0.1},
        {"lr-SGD/pg1", 0, -1, 0.3},
        {"lr-SGD", 1, -1, 0.1},
        {"lr-SGD/pg1", 1, -1, 0.3}}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    ScriptedOptions o;
    o.lr = 0.1;
    o.lr2 = c.lr2;
    o.scheduler =
        c.scheduler.empty() ? Node::Null() : Node::MakeMap(c.scheduler);
    auto model = std::make_shared<ScriptedModule>(o);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(c.epochs)
                        .log_every_n_steps(c.log_every_n_steps)
                        .enable_checkpointing(false));
    trainer.add_callback(std::make_shared<LearningRateMonitor>(c.interval));
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    std::vector<Row> got;
    for (const auto& row : ReadCsv(dir.Join("metrics.csv"))) {
      for (const auto& [column, cell] : row) {
        if (column.rfind("lr-", 0) != 0 || cell.empty()) continue;
        got.push_back({column, std::stoll(row.at("epoch")),
                       std::stoll(row.at("step")), std::stod(cell)});
      }
    }
    ASSERT_EQ(got.size(), c.want.size()) << "case " << c.name << "\n"
                                         << ReadFile(dir.Join("metrics.csv"));
    for (size_t i = 0; i < got.size(); ++i) {
      const Row& w = c.want[i];
      EXPECT_EQ(got[i].column, w.column) << "case " << c.name << " row " << i;
      if (w.epoch >= 0) {
        EXPECT_EQ(got[i].epoch, w.epoch) << "case " << c.name << " row " << i;
      }
      if (w.step >= 0) {
        EXPECT_EQ(got[i].step, w.step) << "case " << c.name << " row " << i;
      }
      EXPECT_NEAR(got[i].lr, w.lr, 1e-15) << "case " << c.name << " row " << i;
    }
  }
}

TEST(ModelCheckpointTest, KeepsTheFilesItsOptionsAskFor) {
  struct Case {
    std::string name;
    ModelCheckpointOptions options;
    std::vector<double> script;  // val_loss of each validation
    int64_t epochs;
    int64_t check_val_every_n_epoch;
    std::set<std::string> want;
    std::string want_best;  // "" : not checked
  };
  // Four optimizer steps per epoch: epoch e ends at step 4 (e + 1).
  const std::vector<double> script = {5, 3, 4, 1, 2};
  using O = ModelCheckpointOptions;
  const std::vector<Case> cases = {
      {"min, top 2",
       O().monitor("val_loss").save_top_k(2),
       script,
       5,
       1,
       {"epoch3-step16.ckpt", "epoch4-step20.ckpt", "last.ckpt"},
       "epoch3-step16.ckpt"},
      {"max, top 2",
       O().monitor("val_loss").mode(Mode::kMax).save_top_k(2),
       script,
       5,
       1,
       {"epoch0-step4.ckpt", "epoch2-step12.ckpt", "last.ckpt"},
       "epoch0-step4.ckpt"},
      {"min, top 1, no last",
       O().monitor("val_loss").save_last(false),
       script,
       5,
       1,
       {"epoch3-step16.ckpt"},
       "epoch3-step16.ckpt"},
      {"all (top -1)",
       O().monitor("val_loss").save_top_k(-1),
       script,
       5,
       1,
       {"epoch0-step4.ckpt", "epoch1-step8.ckpt", "epoch2-step12.ckpt",
        "epoch3-step16.ckpt", "epoch4-step20.ckpt", "last.ckpt"},
       "epoch3-step16.ckpt"},
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
       {"epoch4-step20.ckpt", "last.ckpt"},
       "epoch4-step20.ckpt"},
      {"every 2nd epoch, no monitor, all",
       O().every_n_epochs(2).save_top_k(-1),
       script,
       5,
       1,
       {"epoch1-step8.ckpt", "epoch3-step16.ckpt", "last.ckpt"},
       ""},
      // Ranked at epochs 1 (3) and 3 (1) only.
      {"every 2nd epoch, min, top 1",
       O().monitor("val_loss").every_n_epochs(2),
       script,
       5,
       1,
       {"epoch3-step16.ckpt", "last.ckpt"},
       "epoch3-step16.ckpt"},
      // Validation after epochs 1 (5) and 3 (3): epochs without one are not
      // ranked (no error for a metric not logged yet, no stale score).
      {"validation every 2nd epoch, min, top 2",
       O().monitor("val_loss").save_top_k(2),
       script,
       4,
       2,
       {"epoch1-step8.ckpt", "epoch3-step16.ckpt", "last.ckpt"},
       "epoch3-step16.ckpt"},
  };
  // A pid no process has, for the temporaries of a killed run.
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  for (const auto& c : cases) {
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

TEST(EarlyStoppingTest, StopsAfterPatience) {
  struct Case {
    std::string name;
    std::vector<double> script;
    int64_t patience;
    double min_delta;
    int64_t min_epochs;
    int64_t want_epochs;
  };
  const std::vector<Case> cases = {
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
  for (const auto& c : cases) {
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

TEST(EarlyStoppingTest, CheckFiniteStopsOnNanOrInfinity) {
  struct Case {
    std::string name;
    std::vector<double> script;
    bool check_finite;
    Mode mode;
    int64_t want_epochs;
    std::string want_reason;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  const std::vector<Case> cases = {
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
  for (const auto& c : cases) {
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
      EXPECT_NE(st.message().find("enable_progress_bar=false"),
                std::string::npos)
          << "case " << c.name << ": " << st.ToString();
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
  const std::string e1 = ckpt_dir + "/epoch1-step8.ckpt";
  const std::string e2 = ckpt_dir + "/epoch2-step12.ckpt";
  std::filesystem::rename(e1, dir.Join("aside"));
  ASSERT_OK(fit(3, {1}).first);  // epoch2-step12 displaces it
  ASSERT_TRUE(std::filesystem::exists(e2));
  std::filesystem::remove(e2);                  // its copy never written
  std::filesystem::rename(dir.Join("aside"), e1);  // never deleted

  auto [status, best] = fit(4, {0.5});  // epoch3-step16, the new best
  ASSERT_OK(status);
  EXPECT_EQ(Show(FilesIn(ckpt_dir)),
            Show({"epoch3-step16.ckpt", "last.ckpt"}));
  EXPECT_EQ(best, ckpt_dir + "/epoch3-step16.ckpt");
}

}  // namespace
}  // namespace trialshim::trainer
