// The Trainer in process: real training on the shipped digits, gradient
// accumulation and clipping against hand-computed values, non-finite
// losses, early stopping, schedules, checkpoint round trips and corrupt
// checkpoints.
#include "trialshim/trainer/trainer.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "digits.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/trainer/checkpoint.h"
#include "trialshim/trainer/optim.h"
#include "trialshim/trainer/scheduler.h"

namespace trialshim::trainer {
namespace {

using testing::ReadFile;
using testing::TempDir;

const std::string kDigits =
    std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/data/digits.csv.gz";

// A logger that writes into a string, so tests can read what was logged.
struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
};

TrainerOptions Quiet(const std::string& root, CapturedLog& log) {
  return TrainerOptions()
      .default_root_dir(root)
      .enable_progress_bar(false)
      .num_sanity_val_steps(0)
      .logger(log.logger);
}

config::Node AdamConfig(double lr) {
  return config::Node::MakeMap({{"name", config::Node::String("adam")},
                                {"lr", config::Node::Double(lr)}});
}

std::shared_ptr<digits::DigitsModule> DigitsModel(uint64_t seed) {
  torch::manual_seed(seed);
  return std::make_shared<digits::DigitsModule>(
      std::vector<int64_t>{64}, 0.1, AdamConfig(0.01), config::Node::Null());
}

digits::DigitsDataModule DigitsData(int64_t batch_size = 64) {
  auto data = digits::LoadDigits(kDigits);
  EXPECT_OK(data);
  return digits::DigitsDataModule(std::move(data).value(), batch_size, 0.2, 1);
}

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
      EXPECT_NE(st.message().find(part), std::string::npos)
          << "case error: missing '" << part << "' in " << st.message();
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

// val_loss follows a fixed script, one value per validation.
class ScriptedModule : public LinearModule {
 public:
  explicit ScriptedModule(std::vector<double> script)
      : LinearModule(0.0), script_(std::move(script)) {}
  void validation_step(const Batch&, int64_t) override {
    log("val_loss", script_[std::min<size_t>(calls_, script_.size() - 1)]);
  }
  void next() { ++calls_; }

 private:
  std::vector<double> script_;
  size_t calls_ = 0;
};

struct AdvanceScript : public Callback {
  ScriptedModule* module;
  std::string state_key() const override { return "AdvanceScript"; }
  Status on_validation_end(Trainer&, Module&) override {
    module->next();
    return Status::Ok();
  }
};

TEST(TrainerTest, EarlyStoppingStopsAfterPatience) {
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
    auto model = std::make_shared<ScriptedModule>(c.script);
    auto advance = std::make_shared<AdvanceScript>();
    advance->module = model.get();
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(8)
                        .min_epochs(c.min_epochs)
                        .enable_checkpointing(false));
    trainer.add_callback(std::make_shared<EarlyStopping>(
        EarlyStoppingOptions().patience(c.patience).min_delta(c.min_delta)));
    trainer.add_callback(advance);
    ASSERT_OK(trainer.fit(*model, data)) << "case " << c.name;
    EXPECT_EQ(trainer.current_epoch(), c.want_epochs)
        << "case " << c.name << "\n"
        << log.out.str();
  }
}

TEST(SchedulerTest, LearningRatesFollowTheirFormulas) {
  struct Case {
    std::string name;
    std::string yaml_name;
    config::Node::Map extra;
    std::vector<double> want;  // lr before any step, then after each step
  };
  using config::Node;
  const double pi = M_PI;
  const std::vector<Case> cases = {
      {"step",
       "step",
       {{"step_size", Node::Int(2)}, {"gamma", Node::Double(0.5)}},
       {1, 1, 0.5, 0.5, 0.25}},
      {"exponential",
       "exponential",
       {{"gamma", Node::Double(0.5)}},
       {1, 0.5, 0.25, 0.125, 0.0625}},
      {"cosine with warmup",
       "cosine",
       {{"warmup", Node::Int(2)},
        {"total", Node::Int(4)},
        {"warmup_start_factor", Node::Double(0.0)}},
       {0, 0.5, 1, 0.5 * (1 + std::cos(pi * 0.5)), 0}},
  };
  for (const auto& c : cases) {
    auto w = torch::zeros({1}, torch::requires_grad());
    torch::optim::SGD opt({w}, torch::optim::SGDOptions(1.0));
    Node::Map map = {{"name", Node::String(c.yaml_name)}};
    for (const auto& e : c.extra) map.push_back(e);
    auto sched = MakeScheduler(Node::MakeMap(map), opt, 10, 100);
    ASSERT_OK(sched) << "case " << c.name;
    for (size_t i = 0; i < c.want.size(); ++i) {
      if (i > 0) sched->scheduler->Step();
      EXPECT_NEAR(GetLearningRates(opt)[0], c.want[i], 1e-12)
          << "case " << c.name << " count " << i;
    }
  }
  // Plateau: halves after patience 1 + 1 bad validations.
  auto w = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD opt({w}, torch::optim::SGDOptions(1.0));
  ReduceLrOnPlateau plateau(opt, false, 0.5, 1, 1e-4, 0, 0.0);
  std::vector<std::pair<double, double>> steps = {
      {1.0, 1.0}, {1.0, 1.0}, {1.0, 0.5}, {0.4, 0.5}, {0.4, 0.5}, {0.4, 0.25}};
  for (size_t i = 0; i < steps.size(); ++i) {
    plateau.Step(steps[i].first);
    EXPECT_DOUBLE_EQ(GetLearningRates(opt)[0], steps[i].second)
        << "case plateau step " << i;
  }
  auto bad = MakeScheduler(Node::MakeMap({{"name", Node::String("cosin")}}),
                           opt, 10, 100);
  EXPECT_NE(bad.status().message().find("did you mean 'cosine'"),
            std::string::npos)
      << "case unknown name: " << bad.status().message();
}

TEST(CheckpointTest, RoundTripRestoresModelOptimizerAndRng) {
  TempDir dir;
  CapturedLog log;
  auto dm = DigitsData();
  auto model = DigitsModel(3);
  Trainer trainer(Quiet(dir.path(), log).max_epochs(1).seed(5));
  ASSERT_OK(trainer.fit(*model, dm));
  const std::string path = dir.Join("checkpoints/last.ckpt");
  ASSERT_TRUE(std::filesystem::exists(path)) << log.out.str();

  // Write our own checkpoint of the trained state, then draw from the RNG.
  auto opt = MakeOptimizer(AdamConfig(0.003), model->parameters());
  ASSERT_OK(opt);
  auto batch = dm.train_dataloader()->batch(0);
  auto step = [&](digits::DigitsModule& m, torch::optim::Optimizer& o) {
    o.zero_grad();
    torch::nn::functional::cross_entropy(m.forward(batch.input), batch.target)
        .backward();
    o.step();
  };
  model->eval();        // no dropout: the steps below are comparable
  step(*model, **opt);  // gives Adam some state
  const std::string mine = dir.Join("mine.ckpt");
  ASSERT_OK(WriteCheckpoint(mine, *model, opt->get(), {{"epoch", 1}}));
  torch::Tensor draw = torch::rand({8});
  step(*model, **opt);
  std::vector<torch::Tensor> want;
  for (const auto& p : model->parameters()) want.push_back(p.detach().clone());

  auto other = DigitsModel(99);
  other->eval();
  auto other_opt = MakeOptimizer(AdamConfig(0.003), other->parameters());
  ASSERT_OK(other_opt);
  auto opened = OpenCheckpoint(mine);
  ASSERT_OK(opened);
  EXPECT_EQ(opened->state["epoch"], 1);
  ASSERT_OK(RestoreCheckpoint(*opened, *other, other_opt->get()));
  EXPECT_TRUE(torch::equal(torch::rand({8}), draw)) << "case rng";
  step(*other, **other_opt);
  auto got = other->parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::equal(got[i], want[i]))
        << "case model+optimizer, tensor " << i;
  }

  // A different architecture is refused before anything is copied.
  torch::manual_seed(1);
  auto wide = std::make_shared<digits::DigitsModule>(
      std::vector<int64_t>{32}, 0.0, AdamConfig(0.01), config::Node::Null());
  auto before = wide->parameters()[0].clone();
  auto reopened = OpenCheckpoint(mine);
  ASSERT_OK(reopened);
  Status st = RestoreCheckpoint(*reopened, *wide, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << "case mismatch";
  EXPECT_NE(
      st.message().find("[64, 64] F32 there and [32, 64] F32 in the model"),
      std::string::npos)
      << "case mismatch: " << st.message();
  EXPECT_TRUE(torch::equal(before, wide->parameters()[0]))
      << "case mismatch untouched";
}

TEST(CheckpointTest, CorruptCheckpointsAreNamedAndSkipped) {
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
    if (f.path() != good) fs::remove(f.path());
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
  for (const auto& bad : {truncated, garbage}) {
    EXPECT_NE(log2.out.str().find("Skipping checkpoint " + bad +
                                  " is truncated or corrupt"),
              std::string::npos)
        << "case " << bad << "\n"
        << log2.out.str();
  }
  EXPECT_EQ(trainer.current_epoch(), 2);

  // Named explicitly, a corrupt checkpoint is an error.
  CapturedLog log3;
  auto model3 = DigitsModel(4);
  Trainer named(Quiet(dir.path(), log3).max_epochs(3).ckpt_path(truncated));
  Status st = named.fit(*model3, dm);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.message();
}

}  // namespace
}  // namespace trialshim::trainer
