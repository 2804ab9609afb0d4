// The trainer's _target_s: PyTorch's and Lightning's class paths build our
// optimizers, schedulers and callbacks, and a user's module registered by
// name trains from a config in the shape of lightning-hydra-template's
// model/mnist.yaml and callbacks/default.yaml. The Anchors* test compares
// the keywords each takes with the installed classes' own (PyTorch 1.13,
// Lightning 2.2.5).
#include "trialshim/trainer/targets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/scripted_module.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/trainer/optim.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

// What RegisterTrainerTargets registers, as an unknown target lists it.
const std::string kRegistered =
    "torch::optim::Adagrad, torch::optim::Adam, torch::optim::AdamW, "
    "torch::optim::RMSprop, torch::optim::SGD, "
    "trialshim::trainer::CosineWarmupLr, trialshim::trainer::CsvLogger, "
    "trialshim::trainer::DeviceStatsMonitor, "
    "trialshim::trainer::EarlyStopping, trialshim::trainer::ExponentialLr, "
    "trialshim::trainer::LearningRateMonitor, "
    "trialshim::trainer::ModelCheckpoint, trialshim::trainer::ModelSummary, "
    "trialshim::trainer::ProgressBar, trialshim::trainer::ReduceLrOnPlateau, "
    "trialshim::trainer::Scheduler, trialshim::trainer::StepLr, "
    "trialshim::trainer::TensorBoardLogger";

using config::Node;
using config::Partial;
using config::Registry;
using config::Value;

Registry TrainerRegistry() {
  Registry r;
  EXPECT_OK(RegisterTrainerTargets(&r));
  return r;
}

Node Yaml(const std::string& text) {
  StatusOr<Node> n = config::LoadYamlString(text, "t.yaml");
  EXPECT_OK(n);
  return n.ok() ? *n : Node();
}

std::vector<torch::Tensor> Params() {
  return {torch::ones({2}, torch::requires_grad()),
          torch::ones({1}, torch::requires_grad())};
}

TEST(TargetsTest, OptimizersFromTorchClassPaths) {
  struct Case {
    const char* name;
    const char* yaml;  // under `optimizer:`
    const char* cls;
    double lr;
  } cases[] = {
      {"adam_template",
       "{_target_: torch.optim.Adam, _partial_: true, lr: 0.01, "
       "weight_decay: 0.0}",
       "Adam", 0.01},
      {"adam_default_lr", "{_target_: torch.optim.adam.Adam, _partial_: true}",
       "Adam", 1e-3},
      {"adamw",
       "{_target_: torch.optim.AdamW, _partial_: true, lr: 0.002, "
       "betas: [0.8, 0.9]}",
       "AdamW", 0.002},
      {"sgd",
       "{_target_: torch.optim.SGD, _partial_: true, lr: 0.1, "
       "momentum: 0.9, nesterov: true}",
       "SGD", 0.1},
      {"rmsprop_default_lr", "{_target_: torch.optim.RMSprop, _partial_: true}",
       "RMSprop", 1e-2},
      {"adagrad_default_lr", "{_target_: torch.optim.Adagrad, _partial_: true}",
       "Adagrad", 1e-2},
      {"native_name",
       "{_target_: 'torch::optim::Adam', _partial_: true, lr: 0.5}", "Adam",
       0.5},
      {"python_defaults_accepted",
       "{_target_: torch.optim.Adam, _partial_: true, maximize: false, "
       "foreach: null, fused: null}",
       "Adam", 1e-3},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    const Node cfg = Yaml(std::string("optimizer: ") + c.yaml);
    StatusOr<std::shared_ptr<Partial>> p =
        registry.InstantiateAs<Partial>(cfg, "optimizer");
    ASSERT_OK(p) << c.name;
    StatusOr<std::shared_ptr<torch::optim::Optimizer>> opt =
        (*p)->CallAs<torch::optim::Optimizer>(
            {{"params", Value::Of(Params())}});
    ASSERT_OK(opt) << c.name;
    EXPECT_EQ(OptimizerName(**opt), c.cls) << c.name;
    EXPECT_EQ(GetLearningRates(**opt), std::vector<double>({c.lr})) << c.name;
    EXPECT_EQ((*opt)->param_groups()[0].params().size(), 2u) << c.name;
  }
}

TEST(TargetsTest, OptimizerParamsAsKeywordOrPositional) {
  struct Case {
    const char* name;
    config::Kwargs kwargs;
    std::vector<Value> args;
  } cases[] = {
      {"keyword", {{"params", Value::Of(Params())}}, {}},
      {"positional", {}, {Value::Of(Params())}},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<torch::optim::Optimizer>> opt =
        registry.InstantiateAs<torch::optim::Optimizer>(
            Yaml("{_target_: torch.optim.SGD, lr: 0.25}"), "", c.kwargs,
            c.args);
    ASSERT_OK(opt) << c.name;
    EXPECT_EQ(GetLearningRates(**opt), std::vector<double>({0.25})) << c.name;
  }
}

TEST(TargetsTest, OptimizerErrors) {
  struct Case {
    const char* name;
    const char* yaml;  // under `optimizer:`, called with params
    std::string want;
  } cases[] = {
      {"sgd_needs_lr", "{_target_: torch.optim.SGD}",
       "t.yaml:1:23: Error in call to target 'torch.optim.SGD':\n"
       "optimizer.lr: expected a number > 0 (missing)\nfull_key: optimizer"},
      {"unsupported_maximize", "{_target_: torch.optim.Adam, maximize: true}",
       "t.yaml:1:23: Error in call to target 'torch.optim.Adam':\n"
       "t.yaml:1:51: optimizer.maximize: torch.optim.Adam's 'maximize' is not "
       "supported by this trainer; only its default (False) or null is "
       "accepted\nfull_key: optimizer"},
      {"misspelt_keyword", "{_target_: torch.optim.Adam, lrr: 0.1}",
       "t.yaml:1:41: Error in call to target 'torch.optim.Adam':\n"
       "got an unexpected keyword argument 'lrr' (did you mean 'lr'?); "
       "torch.optim.Adam accepts: params, lr, betas, eps, weight_decay, "
       "amsgrad, foreach, maximize, differentiable, capturable, fused\n"
       "full_key: optimizer"},
      {"bad_value", "{_target_: torch.optim.SGD, lr: 0.1, momentum: fast}",
       "t.yaml:1:23: Error in call to target 'torch.optim.SGD':\n"
       "t.yaml:1:59: optimizer.momentum: expected a number, got str 'fast'\n"
       "full_key: optimizer"},
      {"unknown_class", "{_target_: torch.optim.Adamax, lr: 0.1}",
       "t.yaml:1:23: Error locating target 'torch.optim.Adamax': nothing is "
       "registered under that name (did you mean 'torch.optim.Adam' or "
       "'torch.optim.AdamW'?); registered targets: " +
           kRegistered + "\n"
       "full_key: optimizer"},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<torch::optim::Optimizer>> opt =
        registry.InstantiateAs<torch::optim::Optimizer>(
            Yaml(std::string("optimizer: ") + c.yaml), "optimizer",
            {{"params", Value::Of(Params())}});
    ASSERT_FALSE(opt.ok()) << c.name;
    EXPECT_EQ(opt.status().message(), c.want) << c.name;
  }
  // Without params (a plain call where the config forgot _partial_).
  StatusOr<config::Object> o =
      registry.Instantiate(Yaml("{_target_: torch.optim.Adam}"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message(),
            "t.yaml:1:12: Error in call to target 'torch.optim.Adam':\n"
            "missing required argument 'params' (a std::vector<at::Tensor, "
            "std::allocator<at::Tensor> >)");
}

TEST(TargetsTest, SchedulersFromTorchClassPaths) {
  struct Case {
    const char* name;
    const char* yaml;  // under `scheduler:`, partial, for SGD with lr 0.1
    std::vector<double> metrics;  // one Step() each
    const char* ours;
    double lr;  // after the steps
  } cases[] = {
      {"step",
       "{_target_: torch.optim.lr_scheduler.StepLR, step_size: 1, "
       "gamma: 0.5}",
       {0},
       "step",
       0.05},
      {"exponential",
       "{_target_: torch.optim.lr_scheduler.ExponentialLR, "
       "gamma: 0.9}",
       {0, 0},
       "exponential",
       0.1 * 0.9 * 0.9},
      // eta_min + (0.1 - eta_min) * (1 + cos(pi * 1 / 2)) / 2, as PyTorch.
      {"cosine",
       "{_target_: torch.optim.lr_scheduler.CosineAnnealingLR, "
       "T_max: 2, eta_min: 0.01}",
       {0},
       "cosine",
       0.01 + 0.09 * 0.5},
      {"cosine_end",
       "{_target_: torch.optim.lr_scheduler.CosineAnnealingLR, "
       "T_max: 2}",
       {0, 0},
       "cosine",
       0.0},
      // Lightning-hydra-template's mnist.yaml; patience 0: the second,
      // worse value halves the rate.
      {"plateau",
       "{_target_: torch.optim.lr_scheduler.ReduceLROnPlateau, "
       "mode: min, factor: 0.5, patience: 0, threshold_mode: rel}",
       {1.0, 2.0},
       "plateau",
       0.05},
      {"native_name",
       "{_target_: 'trialshim::trainer::StepLr', step_size: 2}",
       {0},
       "step",
       0.1},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    auto opt = registry.InstantiateAs<torch::optim::Optimizer>(
        Yaml("{_target_: torch.optim.SGD, lr: 0.1}"), "",
        {{"params", Value::Of(Params())}});
    ASSERT_OK(opt) << c.name;
    Node cfg = Yaml(std::string("scheduler: ") + c.yaml);
    cfg.GetMutable("scheduler")->Set("_partial_", Node::Bool(true));
    auto p = registry.InstantiateAs<Partial>(cfg, "scheduler");
    ASSERT_OK(p) << c.name;
    auto s = (*p)->CallAs<LrScheduler>({{"optimizer", *opt}});
    ASSERT_OK(s) << c.name;
    EXPECT_EQ((*s)->name(), c.ours) << c.name;
    for (double m : c.metrics) (*s)->Step(m);
    EXPECT_NEAR(GetLearningRates(**opt)[0], c.lr, 1e-12) << c.name;
  }
}

TEST(TargetsTest, SchedulerKeepsItsOptimizerAlive) {
  const Registry registry = TrainerRegistry();
  auto opt = registry.InstantiateAs<torch::optim::Optimizer>(
      Yaml("{_target_: torch.optim.SGD, lr: 0.1}"), "",
      {{"params", Value::Of(Params())}});
  ASSERT_OK(opt);
  std::weak_ptr<torch::optim::Optimizer> weak = *opt;
  auto s = registry.InstantiateAs<LrScheduler>(
      Yaml("{_target_: torch.optim.lr_scheduler.StepLR, step_size: 1}"), "",
      {{"optimizer", *opt}});
  ASSERT_OK(s);
  *opt = nullptr;
  EXPECT_FALSE(weak.expired());
  (*s)->Step();
  EXPECT_NEAR(GetLearningRates(*weak.lock())[0], 0.01, 1e-12);
  *s = nullptr;
  EXPECT_TRUE(weak.expired());
}

// trialshim.trainer.Scheduler: scheduler.h's own schedulers (warmup, the
// stepping interval), given the run's length when called.
TEST(TargetsTest, NativeSchedulerTakesTheRunsLength) {
  const Registry registry = TrainerRegistry();
  auto opt = registry.InstantiateAs<torch::optim::Optimizer>(
      Yaml("{_target_: torch.optim.SGD, lr: 1.0}"), "",
      {{"params", Value::Of(Params())}});
  ASSERT_OK(opt);
  auto partial = registry.InstantiateAs<config::Partial>(
      Yaml("{_target_: trialshim.trainer.Scheduler, _partial_: true, "
           "name: cosine, interval: step, warmup: 2}"),
      "");
  ASSERT_OK(partial);
  auto made = (*partial)->CallAs<SchedulerConfig>(
      {{"optimizer", *opt}, {"total_steps", Node::Int(10)}});
  ASSERT_OK(made);
  EXPECT_EQ((*made)->interval, SchedulerInterval::kStep);
  ASSERT_NE((*made)->scheduler, nullptr);
  // Warmup starts at warmup_start_factor (0.01) of the base lr.
  EXPECT_NEAR(GetLearningRates(**opt)[0], 0.01, 1e-12);
  auto bad = registry.InstantiateAs<config::Partial>(
      Yaml("{_target_: trialshim.trainer.Scheduler, _partial_: true, warmpu: "
           "2}"),
      "");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad, StatusIs(_, HasSubstr("(did you mean 'warmup'?)")));
}

TEST(TargetsTest, SchedulerErrors) {
  struct Case {
    const char* name;
    const char* yaml;
    bool with_optimizer;
    const char* want;
  } cases[] = {
      {"absolute_threshold",
       "{_target_: torch.optim.lr_scheduler.ReduceLROnPlateau, threshold_mode: "
       "abs}",
       true,
       "t.yaml:1:12: Error in call to target "
       "'torch.optim.lr_scheduler.ReduceLROnPlateau':\n"
       "t.yaml:1:72: threshold_mode: "
       "torch.optim.lr_scheduler.ReduceLROnPlateau's "
       "'threshold_mode' is not supported by this trainer; only its default "
       "('rel') or null is accepted"},
      {"cosine_needs_t_max",
       "{_target_: torch.optim.lr_scheduler.CosineAnnealingLR}", true,
       "t.yaml:1:12: Error in call to target "
       "'torch.optim.lr_scheduler.CosineAnnealingLR':\n"
       "missing required argument 'T_max'"},
      {"no_optimizer", "{_target_: torch.optim.lr_scheduler.StepLR}", false,
       "t.yaml:1:12: Error in call to target "
       "'torch.optim.lr_scheduler.StepLR':\nmissing required argument "
       "'optimizer' (a torch::optim::Optimizer)"},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    config::Kwargs kwargs;
    if (c.with_optimizer) {
      auto opt = registry.InstantiateAs<torch::optim::Optimizer>(
          Yaml("{_target_: torch.optim.SGD, lr: 0.1}"), "",
          {{"params", Value::Of(Params())}});
      ASSERT_OK(opt) << c.name;
      kwargs.emplace_back("optimizer", *opt);
    }
    auto s = registry.InstantiateAs<LrScheduler>(Yaml(c.yaml), "", kwargs);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.status().message(), c.want) << c.name;
  }
}

TEST(TargetsTest, CallbacksFromLightningClassPaths) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* state_key;
  } cases[] = {
      {"lightning",
       "{_target_: lightning.pytorch.callbacks.ModelCheckpoint, "
       "monitor: val_loss, mode: min, save_top_k: 2}",
       "ModelCheckpoint"},
      {"pytorch_lightning",
       "{_target_: pytorch_lightning.callbacks.ModelCheckpoint}",
       "ModelCheckpoint"},
      {"module_path",
       "{_target_: "
       "lightning.pytorch.callbacks.model_checkpoint.ModelCheckpoint}",
       "ModelCheckpoint"},
      // lightning-hydra-template's callbacks/model_checkpoint.yaml, every
      // key at Lightning's default.
      {"template_model_checkpoint",
       "{_target_: lightning.pytorch.callbacks.ModelCheckpoint, dirpath: null, "
       "filename: null, monitor: null, verbose: false, save_last: null, "
       "save_top_k: 1, mode: min, auto_insert_metric_name: true, "
       "save_weights_only: false, every_n_train_steps: null, "
       "train_time_interval: null, every_n_epochs: null, "
       "save_on_train_epoch_end: null}",
       "ModelCheckpoint"},
      // ... and callbacks/early_stopping.yaml.
      {"template_early_stopping",
       "{_target_: lightning.pytorch.callbacks.EarlyStopping, monitor: "
       "val/acc, "
       "min_delta: 0.0, patience: 3, verbose: false, mode: max, strict: true, "
       "check_finite: true, stopping_threshold: null, divergence_threshold: "
       "null, check_on_train_epoch_end: null}",
       "EarlyStopping"},
      {"lr_monitor",
       "{_target_: pytorch_lightning.callbacks.LearningRateMonitor, "
       "logging_interval: step}",
       "LearningRateMonitor"},
      {"tqdm",
       "{_target_: lightning.pytorch.callbacks.TQDMProgressBar, "
       "refresh_rate: 1}",
       "ProgressBar"},
      {"rich", "{_target_: lightning.pytorch.callbacks.RichProgressBar}",
       "ProgressBar"},
      // lightning-hydra-template's callbacks/default.yaml.
      {"template checkpoint",
       "{_target_: lightning.pytorch.callbacks.ModelCheckpoint, "
       "dirpath: /tmp/x, filename: 'epoch_{epoch:03d}', monitor: val/acc, "
       "mode: max, save_last: true, auto_insert_metric_name: false, "
       "every_n_epochs: null, train_time_interval: null, "
       "save_on_train_epoch_end: null}",
       "ModelCheckpoint"},
      {"preemptible checkpoint",
       "{_target_: lightning.pytorch.callbacks.ModelCheckpoint, "
       "train_time_interval: {minutes: 10}, save_last: link}",
       "ModelCheckpoint"},
      {"rich summary",
       "{_target_: lightning.pytorch.callbacks.RichModelSummary, max_depth: "
       "-1}",
       "ModelSummary"},
      {"summary module path",
       "{_target_: lightning.pytorch.callbacks.model_summary.ModelSummary}",
       "ModelSummary"},
      {"native", "{_target_: 'trialshim::trainer::EarlyStopping'}",
       "EarlyStopping"},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<Callback>> cb =
        registry.InstantiateAs<Callback>(Yaml(c.yaml));
    ASSERT_OK(cb) << c.name;
    EXPECT_EQ((*cb)->state_key(), c.state_key) << c.name;
  }
}

TEST(TargetsTest, CallbackErrors) {
  struct Case {
    const char* name;
    const char* yaml;  // under `cb:`
    std::string want;
  } cases[] = {
      // Keywords of Lightning's progress bars that ours has no use for.
      {"leave",
       "{_target_: lightning.pytorch.callbacks.TQDMProgressBar, leave: true}",
       "t.yaml:1:16: Error in call to target "
       "'lightning.pytorch.callbacks.TQDMProgressBar':\n"
       "t.yaml:1:68: cb.leave: Lightning's TQDMProgressBar's 'leave' is not "
       "supported by this trainer; only its default (False) or null is "
       "accepted\nfull_key: cb"},
      {"exclusive triggers",
       "{_target_: lightning.pytorch.callbacks.ModelCheckpoint, "
       "every_n_train_steps: 10, every_n_epochs: 1}",
       "t.yaml:1:16: Error in call to target "
       "'lightning.pytorch.callbacks.ModelCheckpoint':\n"
       "callbacks.model_checkpoint: every_n_train_steps=10, every_n_epochs=1 "
       "and train_time_interval should be mutually exclusive (as in "
       "Lightning)\nfull_key: cb"},
      {"misspelt",
       "{_target_: lightning.pytorch.callbacks.EarlyStopping, "
       "patiense: 3}",
       "t.yaml:1:59: Error in call to target "
       "'lightning.pytorch.callbacks.EarlyStopping':\n"
       "got an unexpected keyword argument 'patiense' (did you mean "
       "'patience'?); lightning.pytorch.callbacks.EarlyStopping accepts: "
       "monitor, min_delta, patience, verbose, mode, strict, check_finite, "
       "stopping_threshold, divergence_threshold, check_on_train_epoch_end, "
       "log_rank_zero_only\nfull_key: cb"},
      {"bad_mode",
       "{_target_: lightning.pytorch.callbacks.EarlyStopping, "
       "mode: maxx}",
       "t.yaml:1:16: Error in call to target "
       "'lightning.pytorch.callbacks.EarlyStopping':\n"
       "callbacks.early_stopping.mode: expected min|max, got 'maxx'\n"
       "full_key: cb"},
      {"service_logger",
       "{_target_: lightning.pytorch.loggers.wandb.WandbLogger, project: p}",
       "t.yaml:1:16: Error locating target "
       "'lightning.pytorch.loggers.wandb.WandbLogger': WandbLogger (Weights & "
       "Biases) is not supported by this trainer: it logs through a Python "
       "client; use CSVLogger or TensorBoardLogger (Vertex AI TensorBoard "
       "reads its event files)\nfull_key: cb"},
      {"not_provided",
       "{_target_: lightning.pytorch.callbacks.StochasticWeightAveraging}",
       "t.yaml:1:16: Error locating target "
       "'lightning.pytorch.callbacks.StochasticWeightAveraging': nothing is "
       "registered "
       "under that name; registered targets: " +
           kRegistered + "\n"
       "full_key: cb"},
  };
  const Registry registry = TrainerRegistry();
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<Callback>> cb = registry.InstantiateAs<Callback>(
        Yaml(std::string("cb: ") + c.yaml), "cb");
    ASSERT_FALSE(cb.ok()) << c.name;
    EXPECT_EQ(cb.status().message(), c.want) << c.name;
  }
}

// ---- a user's module, registered by its Python class path ---------------

// lightning-hydra-template's SimpleDenseNet, smaller.
struct SimpleDenseNetImpl : torch::nn::Module {
  SimpleDenseNetImpl(int64_t input, int64_t lin1, int64_t lin2, int64_t lin3,
                     int64_t output)
      : model(register_module(
            "model", torch::nn::Sequential(
                         torch::nn::Linear(input, lin1), torch::nn::ReLU(),
                         torch::nn::Linear(lin1, lin2), torch::nn::ReLU(),
                         torch::nn::Linear(lin2, lin3), torch::nn::ReLU(),
                         torch::nn::Linear(lin3, output)))) {}
  torch::Tensor forward(torch::Tensor x) { return model->forward(x); }
  torch::nn::Sequential model;
};

// MNISTLitModule's shape: the net, and the optimizer and scheduler as
// partials configure_optimizers calls, as the template's module does.
class LitModule : public Module {
 public:
  LitModule(std::shared_ptr<SimpleDenseNetImpl> net, Partial optimizer,
            Partial scheduler)
      : net_(register_module("net", std::move(net))),
        optimizer_(std::move(optimizer)),
        scheduler_(std::move(scheduler)) {
    to(torch::kDouble);
  }
  torch::Tensor training_step(const Batch& b, int64_t) override {
    torch::Tensor loss =
        torch::mse_loss(net_->forward(b.input).squeeze(1), b.target);
    log("train/loss", loss);
    return loss;
  }
  void validation_step(const Batch& b, int64_t) override {
    log("val/loss",
        torch::mse_loss(net_->forward(b.input).squeeze(1), b.target));
  }
  StatusOr<OptimizerConfig> configure_optimizers() override {
    OptimizerConfig out;
    TRIALSHIM_ASSIGN_OR_RETURN(out.optimizer,
                               optimizer_.CallAs<torch::optim::Optimizer>(
                                   {{"params", Value::Of(parameters())}}));
    TRIALSHIM_ASSIGN_OR_RETURN(
        out.scheduler.scheduler,
        scheduler_.CallAs<LrScheduler>({{"optimizer", out.optimizer}}));
    out.scheduler.monitor = "val/loss";
    return out;
  }

 private:
  std::shared_ptr<SimpleDenseNetImpl> net_;
  Partial optimizer_;
  Partial scheduler_;
};

Status RegisterUserTargets(Registry* r) {
  TRIALSHIM_RETURN_IF_ERROR(r->Register<SimpleDenseNetImpl>(
      "src.models.components.simple_dense_net.SimpleDenseNet",
      [](const config::Arguments& a)
          -> StatusOr<std::shared_ptr<SimpleDenseNetImpl>> {
        int64_t in = 784, l1 = 256, l2 = 256, l3 = 256, out = 10;
        TRIALSHIM_RETURN_IF_ERROR(a.Int("input_size", &in));
        TRIALSHIM_RETURN_IF_ERROR(a.Int("lin1_size", &l1));
        TRIALSHIM_RETURN_IF_ERROR(a.Int("lin2_size", &l2));
        TRIALSHIM_RETURN_IF_ERROR(a.Int("lin3_size", &l3));
        TRIALSHIM_RETURN_IF_ERROR(a.Int("output_size", &out));
        return std::make_shared<SimpleDenseNetImpl>(in, l1, l2, l3, out);
      },
      {"A simple fully-connected neural net.",
       {"input_size", "lin1_size", "lin2_size", "lin3_size", "output_size"},
       {}}));
  return r->Register<Module>(
      "src.models.mnist_module.MNISTLitModule",
      [](const config::Arguments& a) -> StatusOr<std::shared_ptr<Module>> {
        TRIALSHIM_ASSIGN_OR_RETURN(auto net, a.Get<SimpleDenseNetImpl>("net"));
        TRIALSHIM_ASSIGN_OR_RETURN(auto opt, a.Get<Partial>("optimizer"));
        TRIALSHIM_ASSIGN_OR_RETURN(auto sched, a.Get<Partial>("scheduler"));
        bool compile = false;
        TRIALSHIM_RETURN_IF_ERROR(a.Bool("compile", &compile));
        if (compile) {
          return Status::InvalidArgument(a.KeyOf("compile") +
                                         ": torch.compile has no C++ "
                                         "equivalent; set it to false");
        }
        return std::shared_ptr<Module>(
            std::make_shared<LitModule>(net, *opt, *sched));
      },
      {"MNIST's LightningModule",
       {"net", "optimizer", "scheduler", "compile"},
       {}});
}

// model/mnist.yaml and callbacks/default.yaml (with model_checkpoint.yaml
// and early_stopping.yaml merged in, as Hydra composes them) of
// lightning-hydra-template, sized for TinyData; the callbacks keep the
// keys this trainer supports.
constexpr char kTemplateConfig[] = R"(model:
  _target_: src.models.mnist_module.MNISTLitModule
  optimizer:
    _target_: torch.optim.Adam
    _partial_: true
    lr: 0.001
    weight_decay: 0.0
  scheduler:
    _target_: torch.optim.lr_scheduler.ReduceLROnPlateau
    _partial_: true
    mode: min
    factor: 0.1
    patience: 10
  net:
    _target_: src.models.components.simple_dense_net.SimpleDenseNet
    input_size: 2
    lin1_size: 8
    lin2_size: 8
    lin3_size: 8
    output_size: 1
  compile: false
callbacks:
  model_checkpoint:
    _target_: lightning.pytorch.callbacks.ModelCheckpoint
    dirpath: ${paths.output_dir}/checkpoints
    filename: null
    monitor: val/loss
    verbose: false
    save_last: true
    save_top_k: 1
    mode: min
    auto_insert_metric_name: true
    save_weights_only: false
    every_n_train_steps: null
    train_time_interval: null
    every_n_epochs: null
    save_on_train_epoch_end: null
  early_stopping:
    _target_: lightning.pytorch.callbacks.EarlyStopping
    monitor: val/loss
    min_delta: 0.0
    patience: 100
    verbose: false
    mode: min
    strict: true
    check_finite: true
    stopping_threshold: null
    divergence_threshold: null
    check_on_train_epoch_end: null
paths:
  output_dir: OUT
)";

TEST(TargetsTest, LightningHydraTemplateConfigTrains) {
  trialshim::testing::TempDir dir;
  std::string text = kTemplateConfig;
  text.replace(text.find("OUT"), 3, dir.path());
  const Node cfg = Yaml(text);
  Registry registry = TrainerRegistry();
  ASSERT_OK(RegisterUserTargets(&registry));

  StatusOr<std::shared_ptr<Module>> module =
      registry.InstantiateAs<Module>(cfg, "model");
  ASSERT_OK(module);
  // The template's train.py: each entry of `callbacks` with a _target_.
  StatusOr<Value> callbacks = registry.InstantiateTree(cfg, "callbacks");
  ASSERT_OK(callbacks);
  ASSERT_EQ(callbacks->kind(), Value::Kind::kMap);
  scripted::CapturedLog log;
  Trainer trainer(scripted::Quiet(dir.path() + "/root", log).max_epochs(2));
  std::vector<std::string> keys;
  for (const auto& [name, cb] : callbacks->map()) {
    ASSERT_TRUE(cb.object().Is<Callback>()) << name;
    keys.push_back(cb.object().As<Callback>()->state_key());
    trainer.add_callback(cb.object().As<Callback>());
  }
  EXPECT_EQ(keys,
            (std::vector<std::string>{"ModelCheckpoint", "EarlyStopping"}));

  scripted::TinyData data;
  ASSERT_OK(trainer.fit(**module, data));
  ASSERT_NE(trainer.optimizer(), nullptr);
  EXPECT_EQ(OptimizerName(*trainer.optimizer()), "Adam");
  EXPECT_EQ(GetLearningRates(*trainer.optimizer()), std::vector<double>{0.001});
  ASSERT_NE(trainer.scheduler(), nullptr);
  EXPECT_EQ(trainer.scheduler()->name(), "plateau");
  EXPECT_EQ(trainer.scheduler()->count(), 2);
  EXPECT_EQ(trainer.current_epoch(), 2);
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/checkpoints/last.ckpt"))
      << log.out.str();
}

TEST(TargetsTest, UserModuleErrors) {
  struct Case {
    const char* name;
    const char* edit_key;  // set to `value` in the template's config
    Node value;
    const char* want;
  } cases[] = {
      {"compile_true", "compile", Node::Bool(true),
       "t.yaml:2:13: Error in call to target "
       "'src.models.mnist_module.MNISTLitModule':\nmodel.compile: "
       "torch.compile has no C++ equivalent; set it to false\nfull_key: model"},
      {"net_not_a_target", "net", Node::Int(3),
       "t.yaml:2:13: Error in call to target "
       "'src.models.mnist_module.MNISTLitModule':\nmodel.net: expected an "
       "object trialshim::trainer::(anonymous namespace)::SimpleDenseNetImpl, "
       "got a config int\nfull_key: model"},
  };
  Registry registry = TrainerRegistry();
  ASSERT_OK(RegisterUserTargets(&registry));
  for (const Case& c : cases) {
    Node cfg = Yaml(kTemplateConfig);
    cfg.GetMutable("model")->Set(c.edit_key, c.value);
    auto module = registry.InstantiateAs<Module>(cfg, "model");
    ASSERT_FALSE(module.ok()) << c.name;
    EXPECT_EQ(module.status().message(), c.want) << c.name;
  }
}

// Every keyword a target takes under a PyTorch or Lightning name is a
// parameter of that class as installed in the anchors (torch 1.13, Lightning
// 2.2.5) or goes on through its **kwargs (TensorBoardLogger's, to torch's
// SummaryWriter), and those a position can set come in the class's order,
// as `_args_` binds them (tests/anchors/signatures.py).
TEST(AnchorsTargets, KeywordsAreTheInstalledClassesOwn) {
  SKIP_WITHOUT_ANCHORS();
  // Keywords a class lacks that we take at their defaults: torch 2's
  // optimizer keywords (torch 1.13's Adagrad and AdamW lack them), and the
  // other progress bar's (one target serves TQDMProgressBar and
  // RichProgressBar).
  const std::set<std::string> foreign = {
      "differentiable", "fused", "process_position",
      "leave",          "theme", "console_kwargs"};
  const Registry registry = TrainerRegistry();
  nlohmann::json paths = nlohmann::json::array();
  std::vector<std::pair<std::string, const config::TargetInfo*>> named;
  for (const std::string& target : registry.Targets()) {
    const config::TargetInfo* info = registry.Find(target);
    for (const std::string& alias : info->aliases) {
      if (alias.rfind("torch.", 0) == 0 ||
          alias.rfind("lightning.pytorch.", 0) == 0) {
        paths.push_back(alias);
        named.emplace_back(alias, info);
      }
    }
  }
  ASSERT_GE(named.size(), 20u);
  testing::TempDir dir;
  testing::Finished f = testing::RunAnchorsScript(
      "tests/anchors/signatures.py", {dir.Write("paths.json", paths.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json theirs = nlohmann::json::parse(f.out, nullptr, false);
  for (const auto& [path, info] : named) {
    const nlohmann::json& sig = theirs[path];
    ASSERT_TRUE(sig.contains("positional")) << path << ": " << sig;
    const std::vector<std::string> positional = sig["positional"];
    const std::vector<std::string> keyword_only = sig["keyword_only"];
    size_t next = 0;  // ours that a position sets come first, in order
    for (const std::string& p : info->params) {
      if (next < positional.size() && positional[next] == p) {
        ++next;
        continue;
      }
      const bool known =
          std::count(positional.begin(), positional.end(), p) +
              std::count(keyword_only.begin(), keyword_only.end(), p) >
          0;
      if (known) {
        EXPECT_EQ(std::count(positional.begin(), positional.end(), p), 0)
            << path << ": " << p << " is out of the order of " << sig;
      } else if (!sig["var_keyword"].get<bool>()) {
        EXPECT_EQ(foreign.count(p), 1u)
            << path << " has no keyword " << p << "; it has " << sig;
      }
    }
  }
}

}  // namespace
}  // namespace trialshim::trainer
