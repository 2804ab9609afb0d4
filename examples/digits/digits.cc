#include "digits.h"

#include "trialshim/config/schema.h"
#include "trialshim/trainer/targets.h"

namespace trialshim::digits {

constexpr int kPixels = 64;
constexpr int kClasses = 10;

StatusOr<DigitsData> LoadDigits(const std::string& path) {
  TRIALSHIM_ASSIGN_OR_RETURN(torch::Tensor rows, trainer::ReadCsvTensor(path));
  if (rows.size(1) != kPixels + 1 || rows.min().item<float>() < 0 ||
      rows.slice(1, 0, kPixels).max().item<float>() > 16 ||
      rows.select(1, kPixels).max().item<float>() >= kClasses) {
    return Status::InvalidArgument(
        path + ": expected rows of 64 pixels 0-16 and a label 0-9");
  }
  return DigitsData{rows.slice(1, 0, kPixels) / 16.0f,
                    rows.select(1, kPixels).to(torch::kLong)};
}

DigitsModule::DigitsModule(const std::vector<int64_t>& hidden,
                           double dropout) {
  torch::nn::Sequential net;
  int64_t in = kPixels;
  for (int64_t width : hidden) {
    net->push_back(torch::nn::Linear(in, width));
    net->push_back(torch::nn::ReLU());
    if (dropout > 0) net->push_back(torch::nn::Dropout(dropout));
    in = width;
  }
  net->push_back(torch::nn::Linear(in, kClasses));
  net_ = register_module("net", net);
}

torch::Tensor DigitsModule::training_step(const trainer::Batch& batch,
                                          int64_t) {
  torch::Tensor loss =
      torch::nn::functional::cross_entropy(forward(batch.input), batch.target);
  log("train_loss", loss, trainer::LogOptions().ProgBar(true));
  return loss;
}

void DigitsModule::validation_step(const trainer::Batch& batch, int64_t) {
  torch::Tensor logits = forward(batch.input);
  log("val_loss", torch::nn::functional::cross_entropy(logits, batch.target));
  log("val_acc", logits.argmax(1).eq(batch.target).to(torch::kDouble).mean(),
      trainer::LogOptions().ProgBar(true));
}

namespace {

struct DataArgs {
  std::optional<std::string> path;  // null: the shipped data
  int64_t batch_size = 64;
  double val_fraction = 0.2;
  int64_t split_seed = 0;
};

struct MlpArgs {
  std::vector<int64_t> hidden = {128, 64};
  double dropout = 0.1;
};

}  // namespace

Status RegisterDigitsTargets(config::Registry* registry,
                             const std::string& default_data) {
  config::Schema<DataArgs> data("DigitsDataModule");
  data.Field("path", &DataArgs::path, "gzipped CSV; null: the shipped one");
  data.Field("batch_size", &DataArgs::batch_size, "per step").Range(1, 65536);
  data.Field("val_fraction", &DataArgs::val_fraction, "held out").Range(0.01, 0.99);
  data.Field("split_seed", &DataArgs::split_seed, "seeds the split");
  TRIALSHIM_RETURN_IF_ERROR((registry->Register<trainer::DataModule, DataArgs>(
      "digits.DigitsDataModule", data,
      [default_data](const DataArgs& a)
          -> StatusOr<std::shared_ptr<trainer::DataModule>> {
        TRIALSHIM_ASSIGN_OR_RETURN(
            DigitsData d, LoadDigits(trainer::MapGcsUri(a.path.value_or(default_data))));
        return std::shared_ptr<trainer::DataModule>(
            std::make_shared<trainer::SplitDataModule>(
                d.images, d.labels, a.val_fraction, a.split_seed, a.batch_size));
      })));
  config::Schema<MlpArgs> mlp("MLP");
  mlp.Field("hidden", &MlpArgs::hidden, "hidden layer widths");
  mlp.Field("dropout", &MlpArgs::dropout, "after each hidden layer").Range(0.0, 0.99);
  return registry->Register<DigitsModule, MlpArgs>(
      "digits.MLP", mlp,
      [](const MlpArgs& a) -> StatusOr<std::shared_ptr<DigitsModule>> {
        return std::make_shared<DigitsModule>(a.hidden, a.dropout);
      });
}

namespace {

Status Fit(const app::Job& job) {
  TRIALSHIM_ASSIGN_OR_RETURN(auto c, trainer::TrainConfigSchema().Bind(job.cfg()));
  config::Registry registry;
  TRIALSHIM_RETURN_IF_ERROR(trainer::RegisterTrainerTargets(&registry));
  TRIALSHIM_RETURN_IF_ERROR(RegisterDigitsTargets(
      &registry, job.config_dir() + "/../data/digits.csv.gz"));
  TRIALSHIM_ASSIGN_OR_RETURN(auto trainer, trainer::MakeTrainer(job, registry));
  const config::Node& cfg = job.cfg();
  TRIALSHIM_ASSIGN_OR_RETURN(
      auto dm, registry.InstantiateAs<trainer::DataModule>(cfg, "data"));
  if (c.seed) torch::manual_seed(static_cast<uint64_t>(*c.seed));  // init
  TRIALSHIM_ASSIGN_OR_RETURN(auto model,
                             registry.InstantiateAs<DigitsModule>(cfg, "model"));
  TRIALSHIM_ASSIGN_OR_RETURN(model->optimizers,
                             trainer::OptimizerPartials::FromConfig(cfg, registry));
  job.log().Info("Run directory: " + job.output_dir());
  TRIALSHIM_RETURN_IF_ERROR(trainer->fit(*model, *dm));
  // The template's train.py returns its optimized_metric, which an Optuna
  // multirun (-m hparams_search=digits_optuna) optimizes.
  return trainer::ReturnOptimizedMetric(job, *trainer);
}

}  // namespace

int Train(const app::Job& job) {
  return trainer::ExitCodeOf(job, [&job] { return Fit(job); });
}

}  // namespace trialshim::digits
