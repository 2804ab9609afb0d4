// Mixed precision and the device paths, on the CPU where they can run and
// on CUDA where there is a device (tests/gpu/run.sh runs the Gpu* tests on
// a GPU machine; here they skip):
// - GradScaler against torch's own kernels (_amp_update_scale_,
//   _amp_foreach_non_finite_check_and_unscale_) wherever this LibTorch has
//   them (2.x on the CPU; CUDA), else against the rule of their source.
// - StepLog: a deferred log replays into exactly the MetricStore an
//   immediate one builds.
// - The precisions learning digits, on the CPU and on CUDA.
// - What the CPU refuses (16-mixed, accelerator=gpu), the out-of-memory
//   message and its hint followed, and checkpoints moved between devices.
#include "trialshim/trainer/precision.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/digits_fixture.h"
#include "tests/trainer/scripted_module.h"
#include "trialshim/trainer/accelerator.h"
#include "trialshim/trainer/step_log.h"
#include "trialshim/trainer/trainer.h"

using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using digits_fixture::DigitsData;
using digits_fixture::DigitsModel;
using scripted::CapturedLog;
using scripted::Quiet;
using testing::TempDir;

bool HasCuda() { return !DescribeBuild().devices.empty(); }

// torch's _amp_update_scale_ on `device`, or nullopt where this LibTorch
// has no kernel for it (1.13 on the CPU).
std::optional<std::pair<double, int64_t>> TorchUpdate(
    const torch::Device& device, double scale, int64_t tracker, bool found_inf,
    const GradScalerOptions& o) {
  auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  torch::Tensor s = torch::full({1}, scale, f32);
  torch::Tensor g = torch::full(
      {1}, tracker, torch::TensorOptions().dtype(torch::kInt).device(device));
  torch::Tensor inf = torch::full({1}, found_inf ? 1.0 : 0.0, f32);
  try {
    at::_amp_update_scale_(s, g, inf, o.growth_factor, o.backoff_factor,
                           o.growth_interval);
  } catch (const c10::Error&) {
    return std::nullopt;
  }
  return std::make_pair(s.item<double>(), g.item<int64_t>());
}

TEST(GradScalerTest, UpdatesAsTorchsAmpUpdateScale) {
  struct Case {
    std::string name;
    GradScalerOptions options;
    std::vector<bool> found_inf;
    double want_scale;  // by the rule of AmpKernels.cu's _amp_update_scale_
    int64_t want_tracker;
  };
  GradScalerOptions short_interval;
  short_interval.growth_interval = 3;
  GradScalerOptions near_max = short_interval;
  near_max.init_scale = 3e38;
  const std::vector<Case> cases = {
      {"no steps", {}, {}, 65536, 0},
      {"inf backs off", {}, {true}, 32768, 0},
      {"two infs", {}, {true, true}, 16384, 0},
      {"clean steps count", short_interval, {false, false}, 65536, 2},
      {"growth after the interval", short_interval, {false, false, false},
       131072, 0},
      {"inf resets the count", short_interval, {false, false, true, false},
       32768, 1},
      {"growth past float's max is not taken", near_max,
       {false, false, false}, static_cast<float>(3e38), 0},
  };
  std::vector<torch::Device> devices = {torch::kCPU};
  if (HasCuda()) devices.push_back(torch::Device(torch::kCUDA, 0));
  for (const auto& c : cases) {
    GradScaler scaler(c.options);
    double torch_scale = c.options.init_scale;
    int64_t torch_tracker = 0;
    bool torch_ran = true;
    for (bool inf : c.found_inf) {
      scaler.Update(inf);
      for (const auto& d : devices) {
        auto t = TorchUpdate(d, torch_scale, torch_tracker, inf, c.options);
        if (!t) {
          torch_ran = false;
          continue;
        }
        EXPECT_EQ(scaler.scale(), t->first) << c.name << " on " << d;
        EXPECT_EQ(scaler.growth_tracker(), t->second) << c.name << " on " << d;
        if (d == devices.back()) std::tie(torch_scale, torch_tracker) = *t;
      }
    }
    EXPECT_EQ(scaler.scale(), c.want_scale) << c.name;
    EXPECT_EQ(scaler.growth_tracker(), c.want_tracker) << c.name;
    if (!torch_ran) std::cout << "(" << c.name << ": no CPU kernel of torch's)\n";
  }
}

TEST(GradScalerTest, UnscaleDividesAndFindsInfAndNan) {
  struct Case {
    std::string name;
    std::vector<float> values;
    bool found;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<Case> cases = {
      {"finite", {65536, -131072, 0}, false},
      {"inf", {65536, inf, 0}, true},
      {"nan", {std::nanf(""), 1, 2}, true},
  };
  std::vector<torch::Device> devices = {torch::kCPU};
  if (HasCuda()) devices.push_back(torch::Device(torch::kCUDA, 0));
  for (const auto& d : devices) {
    for (const auto& c : cases) {
      GradScaler scaler;  // 65536
      std::vector<torch::Tensor> grads = {
          torch::tensor(c.values).to(d), torch::Tensor(),
          torch::tensor({131072.0f}).to(d)};
      EXPECT_EQ(scaler.UnscaleAndCheck(grads), c.found) << c.name << " " << d;
      EXPECT_FLOAT_EQ(grads[2].item<float>(), 2.0f) << c.name << " " << d;
      if (!c.found) {
        EXPECT_FLOAT_EQ(grads[0][1].item<float>(), -2.0f) << c.name;
      }
    }
  }
}

TEST(GradScalerTest, StateRoundTripsAndRefusesDamage) {
  GradScalerOptions o;
  o.growth_interval = 2;
  GradScaler a(o);
  a.Update(true);
  a.Update(false);
  GradScaler b(o);
  ASSERT_OK(b.LoadState(a.State()));
  EXPECT_EQ(b.scale(), 32768);
  EXPECT_EQ(b.growth_tracker(), 1);
  EXPECT_EQ(a.State()["scale"], 32768.0);
  EXPECT_THAT(b.LoadState(nlohmann::json{{"scale", -1}}),
              StatusIs(StatusCode::kDataLoss, HasSubstr("scale > 0")));
}

// The calls of a training step, fed once at once and once deferred.
TEST(StepLogTest, DeferredReplayBuildsTheSameStore) {
  MetricStore now, later;
  StepLog immediate(&now), deferred(&later);
  deferred.set_deferred(true);
  for (StepLog* log : {&immediate, &deferred}) {
    for (int step = 0; step < 5; ++step) {
      log->BeginStep(Stage::kTrain, 10 + step);
      log->Log("loss", torch::tensor(1.5 * step), LogOptions().OnEpoch(true));
      log->Log("lr", 0.1 / (step + 1), LogOptions());
      log->Log("acc", torch::tensor({0.25f * step}),
               LogOptions().OnStep(false).OnEpoch(true).ProgBar(true));
    }
  }
  EXPECT_TRUE(deferred.pending());
  EXPECT_TRUE(later.step_values().empty()) << "nothing reached the store yet";
  EXPECT_EQ(deferred.store().step_values(), immediate.store().step_values());
  EXPECT_FALSE(deferred.pending());
  EXPECT_EQ(later.EpochValues(Stage::kTrain), now.EpochValues(Stage::kTrain));
  EXPECT_EQ(later.prog_bar(), now.prog_bar());
}

TEST(PrecisionTest, WhatTheCpuRefusesSaysWhy) {
  if (HasCuda()) GTEST_SKIP() << "a CUDA device is visible";
  const bool cuda_build = !DescribeBuild().cuda_version.empty();
  struct Case {
    std::string name;
    TrainerOptions options;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"16-mixed", TrainerOptions().precision("16-mixed"),
       "trainer.precision=16-mixed needs a CUDA device (float16 is not "
       "supported on the CPU, as in Lightning); use "
       "trainer.precision=bf16-mixed"},
      {"16-true", TrainerOptions().precision("16-true"), "needs a CUDA device"},
      {"gpu", TrainerOptions().accelerator("cuda"),
       cuda_build ? "trainer.accelerator=gpu, but this machine has no CUDA "
                    "device LibTorch can see"
                  : "trainer.accelerator=gpu, but this trainer was built "
                    "against LibTorch " + DescribeBuild().torch_version +
                        " (CPU only: no CUDA in this build): build it against "
                        "a CUDA LibTorch (`make gpu`"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    TrainerOptions o = c.options;
    o.default_root_dir(dir.path()).console(Quiet(dir.path(), log).console());
    o.max_epochs(1).enable_checkpointing(false).enable_progress_bar(false);
    auto model = DigitsModel(1);
    auto dm = DigitsData();
    Trainer trainer(o);
    EXPECT_THAT(trainer.fit(*model, dm),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << c.name;
  }
}

struct PrecisionCase {
  std::string precision;
  torch::Dtype want_params;
  double min_val_acc;
};

// digits trained `epochs` epochs on `accelerator` in each precision: the
// fit succeeds, the parameters are where and what the precision says, and
// the model learned.
void ExpectPrecisionsLearnDigits(const std::string& accelerator,
                                 int64_t epochs,
                                 const std::vector<PrecisionCase>& cases) {
  for (const auto& c : cases) {
    TempDir dir;
    CapturedLog log;
    auto model = DigitsModel(1);
    auto dm = DigitsData();
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(epochs)
                        .seed(1)
                        .accelerator(accelerator)
                        .precision(c.precision)
                        .enable_checkpointing(false));
    ASSERT_OK(trainer.fit(*model, dm)) << c.precision << "\n" << log.out.str();
    for (const auto& p : model->parameters()) {
      EXPECT_EQ(p.is_cuda(), accelerator == "cuda") << c.precision;
      EXPECT_EQ(p.scalar_type(), c.want_params) << c.precision;
    }
    EXPECT_GT(trainer.callback_metrics().at("val_acc"), c.min_val_acc)
        << c.precision << "\n" << log.out.str();
  }
}

// Lightning's precisions on the CPU: 64-true and bf16-true cast the module
// and the floating batches; bf16-mixed runs the steps under CPU autocast
// and keeps the parameters in float32.
TEST(TrainerTest, PrecisionsThisBuildRuns) {
  ExpectPrecisionsLearnDigits("cpu", 2,
                              {{"32-true", torch::kFloat, 0.85},
                               {"64-true", torch::kDouble, 0.85},
                               {"bf16-mixed", torch::kFloat, 0.8},
                               {"bf16-true", torch::kBFloat16, 0.5}});
}

// A CUDA out-of-memory error names the batch size and the fix; following
// the hint (half the batch) trains.
TEST(PrecisionTest, OutOfMemoryNamesTheBatchAndTheFixWorks) {
  class Hungry : public digits::DigitsModule {
   public:
    using digits::DigitsModule::DigitsModule;
    torch::Tensor training_step(const Batch& b, int64_t i) override {
      if (b.size() > 32) {
        throw c10::OutOfMemoryError(
            {__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
            "CUDA out of memory. Tried to allocate 20.00 GiB");
      }
      return digits::DigitsModule::training_step(b, i);
    }
  };
  for (int64_t batch : {64, 32}) {
    TempDir dir;
    CapturedLog log;
    auto model = std::make_shared<Hungry>(std::vector<int64_t>{64}, 0.1);
    model->optimizers.optimizer = digits_fixture::AdamPartial(0.01);
    auto dm = DigitsData(batch);
    Trainer trainer(Quiet(dir.path(), log).max_epochs(1).enable_checkpointing(false));
    Status st = trainer.fit(*model, dm);
    if (batch == 64) {
      EXPECT_THAT(st, StatusIs(StatusCode::kInternal,
                               HasSubstr("out of memory on cpu at epoch 0, "
                                         "global step 0, with batches of 64 "
                                         "rows (CUDA out of memory. Tried to "
                                         "allocate 20.00 GiB). Lower the "
                                         "batch size (data.batch_size=32)")));
    } else {
      EXPECT_OK(st) << "the hint's batch size";
    }
  }
}

// --- On a CUDA device (tests/gpu/run.sh); skipped without one ------------

#define SKIP_WITHOUT_CUDA() \
  if (!HasCuda()) GTEST_SKIP() << "no CUDA device (tests/gpu/run.sh runs this)"

TEST(GpuTest, PrecisionsLearnDigits) {
  SKIP_WITHOUT_CUDA();
  // (16-true with Adam goes to NaN: its eps of 1e-8 is 0 in float16.)
  ExpectPrecisionsLearnDigits("cuda", 4,
                              {{"32-true", torch::kFloat, 0.9},
                               {"bf16-mixed", torch::kFloat, 0.9},
                               {"16-mixed", torch::kFloat, 0.9},
                               {"bf16-true", torch::kBFloat16, 0.5}});
}

// A checkpoint written on the GPU resumes on the CPU and back (16-mixed's
// loss scale with it), and model.pt loads on the CPU.
TEST(GpuTest, CheckpointsMoveBetweenDevices) {
  SKIP_WITHOUT_CUDA();
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> legs = {
      {"cuda", "16-mixed"}, {"cpu", "32-true"}, {"cuda", "16-mixed"}};
  int64_t epochs = 0;
  for (const auto& [accelerator, precision] : legs) {
    CapturedLog log;
    auto model = DigitsModel(1);
    auto dm = DigitsData();
    Trainer trainer(Quiet(dir.path(), log)
                        .max_epochs(++epochs)
                        .seed(1)
                        .accelerator(accelerator)
                        .precision(precision));
    ASSERT_OK(trainer.fit(*model, dm)) << accelerator << "\n" << log.out.str();
    EXPECT_EQ(trainer.current_epoch(), epochs) << accelerator;
    if (epochs > 1) {
      EXPECT_NE(log.out.str().find("Resumed from"), std::string::npos)
          << accelerator << "\n" << log.out.str();
    }
    EXPECT_GT(trainer.callback_metrics().at("val_acc"), 0.7) << accelerator;
  }
  auto cpu_model = DigitsModel(2);
  std::shared_ptr<torch::nn::Module> loaded = cpu_model;
  torch::load(loaded, dir.Join("model.pt"));
  for (const auto& p : cpu_model->parameters()) EXPECT_TRUE(p.is_cpu());
}

// On CUDA the loss is checked without a sync per step, and still caught.
TEST(GpuTest, NonFiniteLossIsCaughtWithoutASyncPerStep) {
  SKIP_WITHOUT_CUDA();
  class Diverging : public digits::DigitsModule {
   public:
    using digits::DigitsModule::DigitsModule;
    torch::Tensor training_step(const Batch& b, int64_t i) override {
      torch::Tensor loss = digits::DigitsModule::training_step(b, i);
      return i == 3 ? loss * std::numeric_limits<float>::infinity() : loss;
    }
  };
  TempDir dir;
  CapturedLog log;
  auto model = std::make_shared<Diverging>(std::vector<int64_t>{64}, 0.1);
  model->optimizers.optimizer = digits_fixture::AdamPartial(0.01);
  auto dm = DigitsData();
  Trainer trainer(Quiet(dir.path(), log)
                      .max_epochs(1)
                      .accelerator("cuda")
                      .log_every_n_steps(10)
                      .enable_checkpointing(false));
  EXPECT_THAT(trainer.fit(*model, dm),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("a non-finite loss in the last 10 batch(es)")));
}

}  // namespace
}  // namespace trialshim::trainer
