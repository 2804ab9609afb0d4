// A trainer on trialshim in one file: a linear regression on synthetic data.
// Replace the module and the data; keep main().
#include <torch/torch.h>

#include "trialshim/app/app.h"
#include "trialshim/config/instantiate.h"
#include "trialshim/trainer/app.h"
#include "trialshim/trainer/targets.h"
#include "trialshim/trainer/trainer.h"

namespace ts = trialshim;

struct Regression : ts::trainer::Module {
  explicit Regression(int64_t inputs)
      : linear(register_module("linear", torch::nn::Linear(inputs, 1))) {}
  torch::Tensor training_step(const ts::trainer::Batch& b, int64_t) override {
    torch::Tensor loss = torch::mse_loss(linear(b.input), b.target);
    log("train_loss", loss);
    return loss;
  }
  void validation_step(const ts::trainer::Batch& b, int64_t) override {
    log("val_loss", torch::mse_loss(linear(b.input), b.target));
  }
  ts::StatusOr<ts::trainer::OptimizerConfig> configure_optimizers() override {
    return optimizers.Configure(*this);
  }
  torch::nn::Linear linear;
  ts::trainer::OptimizerPartials optimizers;
};

struct Data : ts::trainer::DataModule {
  Data(int64_t rows, int64_t inputs, int64_t batch_size) {
    torch::Tensor x = torch::randn({rows, inputs});
    torch::Tensor y = x.sum(1, true) + 0.1 * torch::randn({rows, 1});
    auto opts = ts::trainer::TensorLoaderOptions().batch_size(batch_size);
    train = std::make_shared<ts::trainer::TensorLoader>(x, y, opts.shuffle(true));
    val = std::make_shared<ts::trainer::TensorLoader>(x, y, opts);
  }
  std::shared_ptr<ts::trainer::Loader> train_dataloader() override { return train; }
  std::shared_ptr<ts::trainer::Loader> val_dataloader() override { return val; }
  std::shared_ptr<ts::trainer::TensorLoader> train, val;
};

ts::Status Fit(const ts::app::Job& job) {
  ts::config::Registry registry;
  TRIALSHIM_RETURN_IF_ERROR(ts::trainer::RegisterTrainerTargets(&registry));
  TRIALSHIM_RETURN_IF_ERROR(registry.Register<Regression>(
      "my.Regression", [](const ts::config::Arguments& a)
                           -> ts::StatusOr<std::shared_ptr<Regression>> {
        int64_t inputs = 1;
        TRIALSHIM_RETURN_IF_ERROR(a.Int("inputs", &inputs));
        return std::make_shared<Regression>(inputs);
      },
      {"a linear regression", {"inputs"}, {}}));
  const ts::config::Node& cfg = job.cfg();
  TRIALSHIM_ASSIGN_OR_RETURN(auto model, registry.InstantiateAs<Regression>(cfg, "model"));
  TRIALSHIM_ASSIGN_OR_RETURN(model->optimizers,
                             ts::trainer::OptimizerPartials::FromConfig(cfg, registry));
  Data data(cfg.Find("data.rows")->AsInt(), cfg.Find("model.inputs")->AsInt(),
            cfg.Find("data.batch_size")->AsInt());
  TRIALSHIM_ASSIGN_OR_RETURN(auto trainer, ts::trainer::MakeTrainer(job, registry));
  return trainer->fit(*model, data);
}

// 0, 2 for a config error, 1 for a failure, 128+N after SIGTERM (checkpointed).
int Train(const ts::app::Job& job) {
  return ts::trainer::ExitCodeOf(job, [&job] { return Fit(job); });
}

int main(int argc, char** argv) {
  return ts::app::Run(argc, argv, {"conf", "config"}, Train);
}
