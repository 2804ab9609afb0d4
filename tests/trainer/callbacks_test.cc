// The built-in callbacks and Trainer::test as the Trainer runs them, on a
// four-row regression whose validation metric follows a script:
// LearningRateMonitor's rows in metrics.csv, ModelCheckpoint's file sets,
// EarlyStopping's check_finite, and a test pass that leaves checkpoints
// alone (Trainer::test returns its metrics; see the disabled test below).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/scripted_module.h"

namespace trialshim::trainer {
namespace {

namespace fs = std::filesystem;
using config::Node;
using scripted::CapturedLog;
using scripted::Quiet;
using scripted::ReadCsv;
using scripted::ScriptedModule;
using scripted::ScriptedOptions;
using scripted::TinyData;
using trialshim::testing::ReadFile;
using trialshim::testing::TempDir;

std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    out.insert(f.path().filename().string());
  }
  return out;
}

std::string Show(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return "{" + out + "}";
}

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

TEST(TrainerTestLoopTest, RunsTestStepAndLeavesCheckpointsAlone) {
  struct Case {
    std::string name;
    bool fit_first;
    bool with_test_loader;
    StatusCode want_code;
  };
  const std::vector<Case> cases = {
      {"after fit", true, true, StatusCode::kOk},
      {"fresh trainer", false, true, StatusCode::kOk},
      {"no test loader", false, false, StatusCode::kInvalidArgument},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    data.with_test = c.with_test_loader;
    auto model = std::make_shared<ScriptedModule>();
    Trainer trainer(Quiet(dir.path(), log).max_epochs(2).seed(1));
    const std::string ckpt_dir = dir.Join("checkpoints");
    std::map<std::string, std::string> before;
    if (c.fit_first) {
      ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
      for (const auto& name : FilesIn(ckpt_dir)) {
        before[name] = ReadFile(ckpt_dir + "/" + name);
      }
      ASSERT_EQ(before.size(), 2u)
          << "case " << c.name << ": " << Show(FilesIn(ckpt_dir));
    }
    const double a = model->a(), b = model->b();
    auto got = trainer.test(*model, data);
    EXPECT_EQ(got.status().code(), c.want_code)
        << "case " << c.name << ": " << got.status().message();
    if (!got.ok()) {
      EXPECT_NE(got.status().message().find("test_dataloader"),
                std::string::npos)
          << "case " << c.name << ": " << got.status().message();
      continue;
    }
    // By hand from the weights fit left (0 for a fresh model).
    double mse = 0, mae = 0;
    for (const auto& r : data.test_rows) {
      const double err = a * r[0] + b * r[1] - r[2];
      mse += err * err / 4;
      mae += std::abs(err) / 4;
    }
    EXPECT_EQ(got->size(), 2u) << "case " << c.name;
    EXPECT_NEAR(got->at("test_loss"), mse, 1e-12) << "case " << c.name;
    EXPECT_NEAR(got->at("test_mae"), mae, 1e-12) << "case " << c.name;
    EXPECT_EQ(model->a(), a) << "case " << c.name << ": test changed weights";
    EXPECT_EQ(model->b(), b) << "case " << c.name << ": test changed weights";

    // Checkpoints: the same files with the same bytes, or none at all.
    std::map<std::string, std::string> after;
    for (const auto& name : FilesIn(ckpt_dir)) {
      after[name] = ReadFile(ckpt_dir + "/" + name);
    }
    EXPECT_TRUE(after == before)
        << "case " << c.name << ": " << Show(FilesIn(ckpt_dir));
  }
}

// Lightning's trainer.test writes its metrics through the logger.
TEST(TrainerTestLoopTest, TestMetricsReachMetricsCsv) {
  struct Case {
    std::string name;
    bool fit_first;
  };
  for (const Case& c :
       std::vector<Case>{{"after fit", true}, {"fresh trainer", false}}) {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<ScriptedModule>();
    Trainer trainer(Quiet(dir.path(), log).max_epochs(2).seed(1));
    if (c.fit_first) {
      ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    }
    auto got = trainer.test(*model, data);
    ASSERT_OK(got) << "case " << c.name;
    bool logged = false;
    for (const auto& row : ReadCsv(dir.Join("metrics.csv"))) {
      auto it = row.find("test_loss");
      if (it != row.end() && !it->second.empty()) {
        logged = true;
        EXPECT_EQ(std::stod(it->second), got->at("test_loss"))
            << "case " << c.name;
      }
    }
    EXPECT_TRUE(logged) << "case " << c.name << ": no test_loss in\n"
                        << ReadFile(dir.Join("metrics.csv"));
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

}  // namespace
}  // namespace trialshim::trainer
