// The Trainer in process: real training on the shipped digits, gradient
// accumulation and clipping against hand-computed values, non-finite
// losses, resuming past corrupt checkpoints, and Trainer::test (its
// metrics, metrics.csv, checkpoints left alone).
#include "trialshim/trainer/trainer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/tfevents.h"
#include "tests/trainer/digits_fixture.h"
#include "tests/trainer/scripted_module.h"
#include "trialshim/config/yaml_loader.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using digits_fixture::DigitsData;
using digits_fixture::DigitsModel;
using scripted::CapturedLog;
using scripted::FilesIn;
using scripted::Quiet;
using scripted::ReadCsv;
using scripted::ScriptedModule;
using scripted::Show;
using testing::ReadFile;
using testing::TempDir;

TEST(TrainerTest, LearnsDigitsInFewEpochs) {
  TempDir dir;
  CapturedLog log;
  auto model = DigitsModel(1);
  auto dm = DigitsData();
  Trainer trainer(
      Quiet(dir.path(), log).max_epochs(5).seed(1).enable_checkpointing(false));
  ASSERT_OK(trainer.fit(*model, dm));
  EXPECT_EQ(trainer.current_epoch(), 5);
  EXPECT_EQ(trainer.global_step(), 5 * 23);  // 1438 rows / 64 per batch
  ASSERT_TRUE(trainer.callback_metrics().count("val_acc"));
  EXPECT_GT(trainer.callback_metrics().at("val_acc"), 0.93) << log.out.str();
  EXPECT_TRUE(std::filesystem::exists(dir.Join("model.pt")));
  EXPECT_FALSE(std::filesystem::exists(dir.Join("checkpoints")));
  auto val = trainer.validate(*model, dm);
  ASSERT_OK(val);
  EXPECT_DOUBLE_EQ(val->at("val_acc"),
                   trainer.callback_metrics().at("val_acc"));
}

// y = w . x with w starting at 0, one row per batch, MSE loss, SGD.
class LinearModule : public Module {
 public:
  explicit LinearModule(double lr, double nan_at = -1)
      : lr_(lr), nan_at_(nan_at) {
    w_ = register_parameter("w", torch::zeros({2}, torch::kDouble));
  }
  torch::Tensor training_step(const Batch& b, int64_t batch_idx) override {
    torch::Tensor loss = (b.input.matmul(w_) - b.target).pow(2).mean();
    if (batch_idx == nan_at_) loss = loss * std::nan("");
    log("train_loss", loss);
    return loss;
  }
  void validation_step(const Batch& b, int64_t) override {
    log("val_loss", (b.input.matmul(w_) - b.target).pow(2).mean());
  }
  StatusOr<OptimizerConfig> configure_optimizers() override {
    OptimizerConfig c;
    c.optimizer = std::make_shared<torch::optim::SGD>(
        parameters(), torch::optim::SGDOptions(lr_));
    return c;
  }
  std::vector<double> w() const {
    return {w_[0].item<double>(), w_[1].item<double>()};
  }

 private:
  double lr_;
  double nan_at_;
  torch::Tensor w_;
};

struct TinyData : public DataModule {
  std::vector<std::array<double, 3>> rows = {
      {1, 2, 3}, {-1, 0.5, 1}, {2, -1, -2}, {0.5, 0.5, 4}};
  std::shared_ptr<Loader> loader() {
    auto x = torch::zeros({4, 2}, torch::kDouble);
    auto y = torch::zeros({4}, torch::kDouble);
    for (int i = 0; i < 4; ++i) {
      x[i][0] = rows[i][0];
      x[i][1] = rows[i][1];
      y[i] = rows[i][2];
    }
    return std::make_shared<TensorLoader>(x, y,
                                          TensorLoaderOptions().batch_size(1));
  }
  std::shared_ptr<Loader> train_dataloader() override { return loader(); }
  std::shared_ptr<Loader> val_dataloader() override { return loader(); }
};

TEST(TrainerTest, AccumulationMatchesHandComputedSgd) {
  struct Case {
    std::string name;
    int64_t accumulate;
    int64_t epochs;
    int64_t want_steps;
  };
  const std::vector<Case> cases = {
      {"no accumulation", 1, 1, 4},
      {"pairs", 2, 1, 2},
      {"three, last group short", 3, 2, 4},
      {"whole epoch", 4, 1, 1},
  };
  const double lr = 0.05;
  for (const auto& c : cases) {
    // By hand: the loss of each batch is divided by `accumulate`, so a step
    // applies the sum of g_i / accumulate, g_i = 2 (w.x_i - y_i) x_i; a short
    // last group still divides by `accumulate`, as Lightning does.
    TinyData data;
    double w0 = 0, w1 = 0;
    for (int64_t e = 0; e < c.epochs; ++e) {
      double g0 = 0, g1 = 0;
      for (int i = 0; i < 4; ++i) {
        const auto& r = data.rows[i];
        double err = w0 * r[0] + w1 * r[1] - r[2];
        g0 += 2 * err * r[0] / c.accumulate;
        g1 += 2 * err * r[1] / c.accumulate;
        if ((i + 1) % c.accumulate == 0 || i == 3) {
          w0 -= lr * g0;
          w1 -= lr * g1;
          g0 = g1 = 0;
        }
      }
    }
    TempDir dir;
    CapturedLog log;
    auto model = std::make_shared<LinearModule>(lr);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(c.epochs)
                        .accumulate_grad_batches(c.accumulate)
                        .enable_checkpointing(false));
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    EXPECT_EQ(trainer.global_step(), c.want_steps) << "case " << c.name;
    EXPECT_NEAR(model->w()[0], w0, 1e-12) << "case " << c.name;
    EXPECT_NEAR(model->w()[1], w1, 1e-12) << "case " << c.name;
  }
}

TEST(TrainerTest, ClippingMatchesHandComputedValues) {
  struct Case {
    std::string name;
    std::string algorithm;
    double clip;
  };
  const std::vector<Case> cases = {
      {"norm, clipped", "norm", 1.0},
      {"norm, under the limit", "norm", 100.0},
      {"value, clipped", "value", 2.5},
  };
  const double lr = 0.1;
  for (const auto& c : cases) {
    // One step on the first row (1, 2) -> 3 from w = 0: g = -2 * 3 * (1, 2).
    double g0 = -6, g1 = -12;
    if (c.algorithm == "norm") {
      double norm = std::sqrt(g0 * g0 + g1 * g1);
      double scale = c.clip / (norm + 1e-6);  // torch's clip_grad_norm_
      if (scale < 1) {
        g0 *= scale;
        g1 *= scale;
      }
    } else {
      g0 = std::clamp(g0, -c.clip, c.clip);
      g1 = std::clamp(g1, -c.clip, c.clip);
    }
    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<LinearModule>(lr);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_steps(1)
                        .gradient_clip_val(c.clip)
                        .gradient_clip_algorithm(c.algorithm)
                        .enable_checkpointing(false));
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    EXPECT_NEAR(model->w()[0], -lr * g0, 1e-9) << "case " << c.name;
    EXPECT_NEAR(model->w()[1], -lr * g1, 1e-9) << "case " << c.name;
  }
}

TEST(TrainerTest, NonFiniteLossErrorsOrSkips) {
  {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<LinearModule>(0.05, /*nan_at=*/2);
    Trainer trainer(
        Quiet(dir.path(), log).max_epochs(1).enable_checkpointing(false));
    Status st = trainer.fit(*model, data);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << "case error";
    for (const char* part :
         {"non-finite loss (nan) at epoch 0, batch 2, global step 2",
          "learning rate 0.05", "trainer.gradient_clip_val", "warmup",
          "trainer.on_nonfinite=skip"}) {
      EXPECT_THAT(st, StatusIs(_, HasSubstr(part)))
          << "case error";
    }
  }
  {
    TempDir dir;
    CapturedLog log;
    TinyData data;
    auto model = std::make_shared<LinearModule>(0.05, /*nan_at=*/2);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(1)
                        .on_nonfinite("skip")
                        .enable_checkpointing(false));
    ASSERT_OK(trainer.fit(*model, data)) << "case skip";
    EXPECT_EQ(trainer.global_step(), 3) << "case skip";
    EXPECT_TRUE(std::isfinite(model->w()[0]) && std::isfinite(model->w()[1]))
        << "case skip";
    EXPECT_NE(log.out.str().find("skipping this step"), std::string::npos)
        << "case skip: " << log.out.str();
  }
}

TEST(TrainerTest, CorruptCheckpointsAreKeptAsideAndSkipped) {
  TempDir dir;
  CapturedLog log;
  auto dm = DigitsData();
  {
    auto model = DigitsModel(3);
    Trainer trainer(Quiet(dir.path(), log).max_epochs(1).seed(5));
    ASSERT_OK(trainer.fit(*model, dm));
  }
  namespace fs = std::filesystem;
  const std::string good = dir.Join("checkpoints/last.ckpt");
  for (const auto& f : fs::directory_iterator(dir.Join("checkpoints"))) {
    if (f.path() != good && f.path().filename() != kLockFileName) {
      fs::remove(f.path());
    }
  }
  const std::string good_text = ReadFile(good);
  ASSERT_GT(good_text.size(), 1000u);
  // Newer than the good one: a truncated copy and garbage.
  const std::string truncated = dir.Join("checkpoints/truncated.ckpt");
  const std::string garbage = dir.Join("checkpoints/garbage.ckpt");
  std::ofstream(truncated, std::ios::binary)
      << good_text.substr(0, good_text.size() / 2);
  std::ofstream(garbage, std::ios::binary) << "not a checkpoint";
  auto now = fs::file_time_type::clock::now();
  fs::last_write_time(good, now - std::chrono::hours(1));
  fs::last_write_time(garbage, now - std::chrono::minutes(1));

  CapturedLog log2;
  auto model = DigitsModel(4);
  Trainer trainer(Quiet(dir.path(), log2).max_epochs(2).seed(5));
  ASSERT_OK(trainer.fit(*model, dm)) << log2.out.str();
  EXPECT_EQ(trainer.resumed_from(), good) << log2.out.str();
  // Each is kept aside rather than left to be overwritten.
  for (const auto& bad : {truncated, garbage}) {
    EXPECT_NE(log2.out.str().find("Unreadable checkpoint " + bad +
                                  " kept aside as " + bad +
                                  ".unreadable-1: checkpoint " + bad +
                                  " is truncated or corrupt"),
              std::string::npos)
        << "case " << bad << "\n"
        << log2.out.str();
    EXPECT_FALSE(fs::exists(bad)) << "case " << bad;
  }
  EXPECT_NE(log2.out.str().find("2 unreadable newer checkpoint(s) kept "
                                "aside: resuming from the older " + good),
            std::string::npos)
      << log2.out.str();
  EXPECT_EQ(trainer.current_epoch(), 2);

  // Named explicitly, a corrupt checkpoint is an error.
  CapturedLog log3;
  auto model3 = DigitsModel(4);
  Trainer named(Quiet(dir.path(), log3).max_epochs(3).ckpt_path(
      truncated + ".unreadable-1"));
  Status st = named.fit(*model3, dm);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.message();
}

TEST(TrainerTest, TestPassRunsTestStepAndLeavesCheckpointsAlone) {
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
    scripted::TinyData data;
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
      EXPECT_THAT(got, StatusIs(_, HasSubstr("test_dataloader")))
          << "case " << c.name;
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
TEST(TrainerTest, TestPassMetricsReachMetricsCsv) {
  struct Case {
    std::string name;
    bool fit_first;
  };
  for (const Case& c :
       std::vector<Case>{{"after fit", true}, {"fresh trainer", false}}) {
    TempDir dir;
    CapturedLog log;
    scripted::TinyData data;
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


// Lightning's loop limits: val_check_interval (count, fraction, across
// epochs), max_time with min_steps/min_epochs, max_epochs unset or -1.
// Four one-row batches per epoch, one optimizer step each; a validation
// is logged at step global_step - 1.
TEST(TrainerTest, LoopLimitsAsLightning) {
  struct Case {
    std::string name;
    std::function<TrainerOptions(TrainerOptions)> set;
    std::vector<int64_t> want_val_steps;
    int64_t want_global_step;
  };
  auto interval = [](BatchLimit v, std::optional<int64_t> every = 1) {
    return [v, every](TrainerOptions o) {
      return o.max_epochs(2).val_check_interval(v).check_val_every_n_epoch(
          every);
    };
  };
  const std::vector<Case> cases = {
      {"default: at each epoch's end",
       [](TrainerOptions o) { return o.max_epochs(2); }, {3, 7}, 8},
      {"every 2 batches", interval(BatchLimit::Count(2)), {1, 3, 5, 7}, 8},
      {"half an epoch", interval(BatchLimit::Fraction(0.5)), {1, 3, 5, 7}, 8},
      {"0.3 of 4 batches is every batch", interval(BatchLimit::Fraction(0.3)),
       {0, 1, 2, 3, 4, 5, 6, 7}, 8},
      {"every 3 within each epoch", interval(BatchLimit::Count(3)), {2, 6}, 8},
      {"every 3 across epochs",
       interval(BatchLimit::Count(3), std::nullopt), {2, 5}, 8},
      {"max_steps without max_epochs runs past 1000's default",
       [](TrainerOptions o) { return o.max_steps(6); }, {3, 5}, 6},
      {"max_epochs -1 with max_steps",
       [](TrainerOptions o) { return o.max_epochs(-1).max_steps(6); }, {3, 5},
       6},
      {"max_time stops after the step and validates",
       [](TrainerOptions o) { return o.max_epochs(5).max_time(0); }, {0}, 1},
      {"max_time waits for min_steps",
       [](TrainerOptions o) { return o.max_epochs(5).max_time(0).min_steps(3); },
       {2}, 3},
      {"max_time waits for min_epochs",
       [](TrainerOptions o) {
         return o.max_epochs(5).max_time(0).min_epochs(2);
       },
       {3, 4}, 5},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    scripted::TinyData data;
    auto model = std::make_shared<scripted::ScriptedModule>(
        scripted::ScriptedOptions());
    Trainer trainer(c.set(Quiet(dir.path(), log).enable_checkpointing(false)));
    ASSERT_OK(trainer.fit(*model, data)) << c.name << "\n" << log.out.str();
    std::vector<int64_t> val_steps;
    for (const auto& row : ReadCsv(dir.Join("metrics.csv"))) {
      auto it = row.find("val_loss");
      if (it != row.end() && !it->second.empty())
        val_steps.push_back(std::stoll(row.at("step")));
    }
    EXPECT_EQ(val_steps, c.want_val_steps) << c.name;
    EXPECT_EQ(trainer.global_step(), c.want_global_step) << c.name;
  }
  // EarlyStopping at a validation before the epoch's end ends the epoch
  // there, without validating that batch again.
  {
    TempDir dir;
    CapturedLog log;
    scripted::TinyData data;
    scripted::ScriptedOptions so;
    so.script = {1, 1, 1, 1};
    auto model = std::make_shared<scripted::ScriptedModule>(so);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(3)
                        .val_check_interval(BatchLimit::Count(1))
                        .enable_checkpointing(false));
    trainer.add_callback(
        std::make_shared<EarlyStopping>(EarlyStoppingOptions().patience(1)));
    ASSERT_OK(trainer.fit(*model, data)) << log.out.str();
    std::vector<int64_t> val_steps;
    for (const auto& row : ReadCsv(dir.Join("metrics.csv"))) {
      auto it = row.find("val_loss");
      if (it != row.end() && !it->second.empty())
        val_steps.push_back(std::stoll(row.at("step")));
    }
    EXPECT_EQ(val_steps, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(trainer.global_step(), 2);
    EXPECT_EQ(trainer.current_epoch(), 1);
  }
  // Lightning's check: a count past the epoch needs
  // check_val_every_n_epoch=null.
  TempDir dir;
  CapturedLog log;
  scripted::TinyData data;
  auto model =
      std::make_shared<scripted::ScriptedModule>(scripted::ScriptedOptions());
  Trainer trainer(Quiet(dir.path(), log).max_epochs(1).val_check_interval(
      BatchLimit::Count(5)));
  Status st = trainer.fit(*model, data);
  EXPECT_THAT(
      st, StatusIs(_, HasSubstr("trainer.val_check_interval (5) must be less "
                                "than or equal to the number of the training "
                                "batches (4)")));
}

// trainer.num_nodes against the environment the launcher set: WORLD_SIZE
// must be num_nodes x LOCAL_WORLD_SIZE, checked before any rank is joined.
TEST(TrainerTest, NumNodesMustMatchTheWorld) {
  struct Case {
    std::string name;
    const char* world;
    const char* local;
    int64_t num_nodes;
    std::string want;  // "": fit runs
  };
  const std::vector<Case> cases = {
      {"one node", nullptr, nullptr, 1, ""},
      {"two nodes, one process", "1", "1", 2,
       "trainer.num_nodes=2, but WORLD_SIZE=1 is not num_nodes x 1 "
       "process(es) per machine (LOCAL_WORLD_SIZE)"},
      {"two nodes of two, world 2", "2", "2", 2,
       "trainer.num_nodes=2, but WORLD_SIZE=2 is not num_nodes x 2"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    scripted::TinyData data;
    auto model =
        std::make_shared<scripted::ScriptedModule>(scripted::ScriptedOptions());
    if (c.world) setenv("WORLD_SIZE", c.world, 1);
    if (c.local) setenv("LOCAL_WORLD_SIZE", c.local, 1);
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(1)
                        .num_nodes(c.num_nodes)
                        .strategy("single_device")
                        .enable_checkpointing(false));
    Status st = trainer.fit(*model, data);
    unsetenv("WORLD_SIZE");
    unsetenv("LOCAL_WORLD_SIZE");
    if (c.want.empty()) {
      EXPECT_OK(st) << c.name;
    } else {
      EXPECT_THAT(st, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
          << c.name;
    }
  }
}

// Lightning's Trainer(logger=[CSVLogger, TensorBoardLogger]) on real
// training: both get every logged row (the TensorBoard scalars equal the
// CSV's values as float32), the module's hyperparameters reach
// hparams.yaml and the hparams plugin, and the default metrics.csv is not
// written; logger=false writes no log at all.
TEST(TrainerTest, LogsToEveryLogger) {
  TempDir dir;
  CapturedLog log;
  config::Registry registry;
  ASSERT_OK(RegisterTrainerTargets(&registry));
  auto cfg = config::LoadYamlString(
      "csv: {_target_: lightning.pytorch.loggers.CSVLogger, save_dir: " +
          dir.Join("logs") +
          "}\n"
          "tb: {_target_: lightning.pytorch.loggers.TensorBoardLogger, "
          "save_dir: " +
          dir.Join("logs") +
          ", name: tb}\n"
          "hparams: {hidden: [64], dropout: 0.1, lr: 0.01}\n",
      "loggers.yaml");
  ASSERT_OK(cfg);
  auto csv = registry.InstantiateAs<Logger>(*cfg, "csv");
  auto tb = registry.InstantiateAs<Logger>(*cfg, "tb");
  ASSERT_OK(csv);
  ASSERT_OK(tb);
  auto data = DigitsData();
  auto model = DigitsModel(5);
  model->save_hyperparameters(*cfg->Get("hparams"));
  Trainer trainer(Quiet(dir.path(), log)
                      .max_epochs(2)
                      .log_every_n_steps(5)
                      .enable_checkpointing(false)
                      .logger({*csv, *tb}));
  ASSERT_OK(trainer.fit(*model, data)) << log.out.str();
  EXPECT_EQ(trainer.logger(), csv->get());
  EXPECT_FALSE(std::filesystem::exists(dir.Join("metrics.csv")));

  const std::string csv_dir = dir.Join("logs/lightning_logs/version_0");
  const std::string tb_dir = dir.Join("logs/tb/version_0");
  const std::string yaml = "hidden:\n- 64\ndropout: 0.1\nlr: 0.01\n";
  EXPECT_EQ(ReadFile(csv_dir + "/hparams.yaml"), yaml);
  EXPECT_EQ(ReadFile(tb_dir + "/hparams.yaml"), yaml);

  // Every CSV cell is a TensorBoard scalar at the same step.
  std::map<std::string, std::string> scalars;  // "<step> <tag>" -> value
  const std::string events =
      dynamic_cast<TensorBoardLogger&>(**tb).event_file();
  for (const std::string& s : testing::Summaries(testing::ReadEvents(events))) {
    const size_t space = s.rfind(' ');
    scalars[s.substr(0, space)] = s.substr(space + 1);
  }
  EXPECT_EQ(scalars.count("0 _hparams_/session_start_info"), 1u);
  int cells = 0, validations = 0;
  for (const auto& row : ReadCsv(csv_dir + "/metrics.csv")) {
    for (const auto& [column, cell] : row) {
      if (column == "step" || cell.empty()) continue;
      const std::string key = row.at("step") + " " + column;
      ASSERT_EQ(scalars.count(key), 1u) << key;
      EXPECT_EQ(std::strtof(scalars[key].c_str(), nullptr),
                static_cast<float>(std::stod(cell)))
          << key;
      ++cells;
      validations += column == "val_acc";
    }
  }
  EXPECT_EQ(validations, 2);
  EXPECT_GT(cells, 10);

  TempDir quiet;
  auto again = DigitsModel(5);
  Trainer none(Quiet(quiet.path(), log)
                   .max_epochs(1)
                   .enable_checkpointing(false)
                   .logger(false));
  ASSERT_OK(none.fit(*again, data));
  EXPECT_EQ(none.logger(), nullptr);
  EXPECT_FALSE(std::filesystem::exists(quiet.Join("metrics.csv")));
}

// The settings a run records (TrainerOptions::run_config, as MakeTrainer
// sets the composed config): `lr` and `seed` define the run, max_epochs
// and the progress bar may differ on a resume.
config::Node RunConfig(double lr, int64_t seed, int64_t max_epochs,
                       bool progress_bar = false) {
  using config::Node;
  return Node::MakeMap(
      {{"seed", Node::Int(seed)},
       {"optimizer", Node::MakeMap({{"lr", Node::Double(lr)}})},
       {"trainer",
        Node::MakeMap({{"max_epochs", Node::Int(max_epochs)},
                       {"enable_progress_bar", Node::Bool(progress_bar)}})}});
}

// A directory holding another run's checkpoints (other settings: a second
// multirun into the same sweep directory, an old run directory) is never
// resumed from: each such file is kept aside as "<name>.other-run-N", named
// at WARNING with what differs, and the run trains from epoch 0. Settings
// that may differ (max_epochs, logging) resume; a path the user names is
// resumed with the warning; ckpt_path=best refuses.
TEST(TrainerTest, AnotherRunsCheckpointsAreKeptAsideNeverResumed) {
  struct Case {
    const char* name;
    config::Node second;     // the second run's settings
    std::string ckpt_path;   // "named": the first run's last.ckpt
    bool resumed;
    std::string says;        // in the second run's log ("" for nothing)
    StatusCode code = StatusCode::kOk;
  };
  const std::string other =
      "is another run's checkpoint: its settings differ: optimizer.lr: 0.1 "
      "there, 0.2 here";
  const std::vector<Case> cases = {
      {"same settings", RunConfig(0.1, 1, 2), "", true, ""},
      {"a longer run, other logging", RunConfig(0.1, 1, 4, true), "", true, ""},
      {"other lr", RunConfig(0.2, 1, 2), "", false, other},
      {"other seed", RunConfig(0.1, 7, 2), "", false,
       "its settings differ: seed: 1 there, 7 here"},
      {"ckpt_path=last", RunConfig(0.2, 1, 2), "last", false, other},
      {"a named path", RunConfig(0.2, 1, 2), "named", true,
       other + "; resuming it because trainer.ckpt_path names it"},
      {"ckpt_path=best", RunConfig(0.2, 1, 2), "best", false,
       "", StatusCode::kInvalidArgument},
  };
  namespace fs = std::filesystem;
  for (const Case& c : cases) {
    TempDir dir;
    const std::string last = dir.Join("checkpoints/last.ckpt");
    TinyData data;
    {
      CapturedLog log;
      LinearModule first(0.1);
      Trainer trainer(
          Quiet(dir.path(), log).max_epochs(1).run_config(RunConfig(0.1, 1, 1)));
      ASSERT_OK(trainer.fit(first, data)) << c.name;
    }
    // What the second run looks at: the directory, or last.ckpt alone.
    std::set<std::string> looked_at = FilesIn(dir.Join("checkpoints"));
    if (c.ckpt_path == "last") looked_at = {"last.ckpt"};
    CapturedLog log;
    LinearModule second(0.1);
    TrainerOptions o = Quiet(dir.path(), log).max_epochs(2).run_config(c.second);
    o.ckpt_path(c.ckpt_path == "named" ? last : c.ckpt_path);
    Trainer again(o);
    Status st = again.fit(second, data);
    ASSERT_EQ(st.code(), c.code) << c.name << ": " << st.message() << "\n"
                                 << log.out.str();
    if (c.code != StatusCode::kOk) {
      EXPECT_THAT(st, StatusIs(_, HasSubstr(other))) << c.name;
      EXPECT_EQ(again.global_step(), 0) << c.name;
      continue;
    }
    // (The newest of the run's files: last.ckpt or its ranked copy.)
    EXPECT_EQ(!again.resumed_from().empty(), c.resumed)
        << c.name << "\n" << log.out.str();
    if (c.ckpt_path == "named") {
      EXPECT_EQ(again.resumed_from(), last) << c.name;
    }
    if (!c.says.empty()) {
      EXPECT_NE(log.out.str().find(c.says), std::string::npos)
          << c.name << "\n" << log.out.str();
    }
    // Trained from epoch 0 (8 steps) or on from epoch 1 (4 more).
    EXPECT_EQ(again.global_step(), 8) << c.name;
    if (c.resumed) continue;
    // Each of the first run's files kept aside, said, and not overwritten.
    for (const std::string& name : looked_at) {
      const std::string path = dir.Join("checkpoints/" + name);
      EXPECT_TRUE(fs::exists(path + ".other-run-1")) << c.name << ": " << name;
      EXPECT_NE(log.out.str().find("Checkpoint " + path + " kept aside as " +
                                   path + ".other-run-1, never resumed: " +
                                   path + " is another run's checkpoint: "),
                std::string::npos)
          << c.name << "\n" << log.out.str();
    }
    EXPECT_EQ(log.out.str().find("Resumed from"), std::string::npos)
        << c.name << "\n" << log.out.str();
    // The new last.ckpt is the second run's: a third with its settings
    // resumes it.
    CapturedLog log3;
    LinearModule third(0.1);
    Trainer resumed(
        Quiet(dir.path(), log3).max_epochs(3).run_config(c.second));
    ASSERT_OK(resumed.fit(third, data)) << c.name;
    EXPECT_EQ(resumed.global_step(), 12) << c.name << "\n" << log3.out.str();
    EXPECT_NE(resumed.resumed_from(), "") << c.name;
  }
}

// A run without run_config is its module's hparams: a module of other
// hyperparameters does not resume the first one's checkpoint.
TEST(TrainerTest, WithoutRunConfigTheModulesHparamsAreTheRun) {
  TempDir dir;
  TinyData data;
  CapturedLog log;
  LinearModule first(0.1);
  first.save_hyperparameters(config::Node::MakeMap(
      {{"lr", config::Node::Double(0.1)}}));
  Trainer a(Quiet(dir.path(), log).max_epochs(1));
  ASSERT_OK(a.fit(first, data));
  CapturedLog log2;
  LinearModule second(0.3);
  second.save_hyperparameters(config::Node::MakeMap(
      {{"lr", config::Node::Double(0.3)}}));
  Trainer b(Quiet(dir.path(), log2).max_epochs(1));
  ASSERT_OK(b.fit(second, data));
  EXPECT_EQ(b.resumed_from(), "") << log2.out.str();
  EXPECT_NE(log2.out.str().find("its settings differ: lr: 0.1 there, 0.3 here"),
            std::string::npos)
      << log2.out.str();
}

// What the directory names *.ckpt but is not a regular file (a FIFO, a
// link to /dev/zero or out of the directory, a directory, a socket-free
// set of the rest) is kept aside before training, as an unreadable
// checkpoint: named at WARNING with what it is, renamed "<name>.unreadable-
// N" (a directory too, which would fail the first save after the work),
// and the run trains from epoch 0 and saves. Nothing blocks: a FIFO with
// no writer is never opened for reading in a way that waits.
TEST(TrainerTest, CheckpointsThatAreNotRegularFilesAreKeptAsideBeforeTraining) {
  namespace fs = std::filesystem;
  struct Case {
    const char* name;
    std::string file;  // in checkpoints/
    std::function<void(const std::string&)> make;
    std::string kind;       // PATH: the file's path
    std::string ckpt_path;  // "" or "none"
  };
  auto fifo = [](const std::string& p) {
    ASSERT_EQ(mkfifo(p.c_str(), 0600), 0) << p << ": " << std::strerror(errno);
  };
  auto to_zero = [](const std::string& p) {
    fs::create_symlink("/dev/zero", p);
  };
  auto directory = [](const std::string& p) {
    fs::create_directories(p + "/inside");
  };
  const std::vector<Case> cases = {
      {"a FIFO as last.ckpt", "last.ckpt", fifo, "a FIFO", ""},
      {"a FIFO of another name", "epoch=7-step=9.ckpt", fifo, "a FIFO", ""},
      {"a link to /dev/zero", "last.ckpt", to_zero,
       "a symbolic link to /dev/zero", ""},
      {"a directory as last.ckpt", "last.ckpt", directory, "a directory", ""},
      {"a directory, ckpt_path=none", "last.ckpt", directory, "a directory",
       "none"},
      {"a link out of the directory", "last.ckpt",
       [](const std::string& p) {
         std::ofstream(p + ".target") << "not ours";
         fs::create_symlink(p + ".target", p);
       },
       "a symbolic link to PATH.target", ""},
  };
  for (const Case& c : cases) {
    TempDir dir;
    fs::create_directories(dir.Join("checkpoints"));
    const std::string path = dir.Join("checkpoints/" + c.file);
    c.make(path);
    if (::testing::Test::HasFatalFailure()) return;
    std::string kind = c.kind;
    if (kind.find("PATH") != std::string::npos) {
      kind.replace(kind.find("PATH"), 4, path);
    }
    CapturedLog log;
    TinyData data;
    LinearModule model(0.1);
    Trainer trainer(
        Quiet(dir.path(), log).max_epochs(1).ckpt_path(c.ckpt_path));
    ASSERT_OK(trainer.fit(model, data)) << c.name << "\n" << log.out.str();
    EXPECT_EQ(trainer.resumed_from(), "") << c.name;
    EXPECT_EQ(trainer.global_step(), 4) << c.name;
    EXPECT_NE(log.out.str().find("Unreadable checkpoint " + path +
                                 " kept aside as " + path +
                                 ".unreadable-1: checkpoint " + path + " is " +
                                 kind + ", not a regular file"),
              std::string::npos)
        << c.name << "\n" << log.out.str();
    // Kept as it was (the link itself, not its target), out of the way.
    EXPECT_TRUE(fs::exists(fs::symlink_status(path + ".unreadable-1")))
        << c.name;
    EXPECT_EQ(fs::symlink_status(path + ".unreadable-1").type(),
              c.kind.rfind("a symbolic link", 0) == 0 ? fs::file_type::symlink
              : c.kind == "a FIFO"                    ? fs::file_type::fifo
                                                      : fs::file_type::directory)
        << c.name;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(
        dir.Join("checkpoints/last.ckpt"))))
        << c.name;
  }
}

// trainer.ckpt_path naming what is not a regular file: an error before
// training that names the file and what it is; a FIFO without a writer
// does not block. A link to a regular checkpoint that the user names is
// followed.
TEST(TrainerTest, NamedCheckpointThatIsNotARegularFileFailsBeforeTraining) {
  namespace fs = std::filesystem;
  TempDir dir;
  TinyData data;
  {
    CapturedLog log;
    LinearModule model(0.1);
    Trainer trainer(Quiet(dir.Join("first"), log).max_epochs(1));
    ASSERT_OK(trainer.fit(model, data));
  }
  const std::string fifo = dir.Join("named.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  fs::create_symlink("/dev/zero", dir.Join("zero.ckpt"));
  fs::create_directories(dir.Join("dir.ckpt"));
  fs::create_symlink(dir.Join("first/checkpoints/last.ckpt"),
                     dir.Join("link.ckpt"));
  struct Case {
    std::string path;
    std::string says;  // "" for a resume
  };
  const std::vector<Case> cases = {
      {fifo, "checkpoint " + fifo + " is a FIFO, not a regular file"},
      {dir.Join("zero.ckpt"), "checkpoint " + dir.Join("zero.ckpt") +
                                  " is a character device, not a regular file"},
      {dir.Join("dir.ckpt"), "checkpoint " + dir.Join("dir.ckpt") +
                                 " is a directory, not a regular file"},
      {dir.Join("link.ckpt"), ""},
  };
  for (const Case& c : cases) {
    CapturedLog log;
    LinearModule model(0.1);
    Trainer trainer(
        Quiet(dir.Join("second"), log).max_epochs(2).ckpt_path(c.path));
    Status st = trainer.fit(model, data);
    if (c.says.empty()) {
      EXPECT_OK(st) << c.path;
      EXPECT_EQ(trainer.resumed_from(), c.path);
      continue;
    }
    EXPECT_THAT(st, StatusIs(StatusCode::kDataLoss, HasSubstr(c.says)))
        << c.path;
    EXPECT_EQ(trainer.global_step(), 0) << c.path;
  }
}

}  // namespace
}  // namespace trialshim::trainer
