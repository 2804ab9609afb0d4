#include "digits.h"

#include <ATen/CPUGeneratorImpl.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "train.h"
#include "trialshim/base/spell.h"
#include "trialshim/trainer/callbacks.h"
#include "trialshim/trainer/optim.h"
#include "trialshim/trainer/options.h"
#include "trialshim/trainer/scheduler.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::digits {
namespace {

constexpr int kPixels = 64;
constexpr int kClasses = 10;

StatusOr<std::string> ReadGzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status::NotFound("can not open data file " + path);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  int err = 0;
  const char* msg = gzerror(f, &err);
  std::string message = msg ? msg : "";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    return Status::DataLoss("can not decompress " + path + ": " + message);
  }
  return out;
}

std::string Where(const config::Node& n) {
  std::string at = n.mark().ToString();
  return at.empty() ? "" : at + ": ";
}

}  // namespace

StatusOr<DigitsData> LoadDigits(const std::string& path) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::string text, ReadGzip(path));
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    std::vector<long> values;
    const char* p = line.data();
    const char* stop = line.data() + line.size();
    while (p < stop) {
      char* next = nullptr;
      long v = std::strtol(p, &next, 10);
      if (next == p || v < 0 || v > 16) {
        return Status::InvalidArgument(path + ":" + std::to_string(line_no) +
                                       ": expected integers 0-16");
      }
      values.push_back(v);
      p = next;
      if (p < stop && *p == ',') ++p;
    }
    if (values.size() != kPixels + 1 || values.back() >= kClasses) {
      return Status::InvalidArgument(path + ":" + std::to_string(line_no) +
                                     ": expected " + std::to_string(kPixels) +
                                     " pixels and a label 0-9, got " +
                                     std::to_string(values.size()) + " values");
    }
    for (int i = 0; i < kPixels; ++i) pixels.push_back(values[i] / 16.0f);
    labels.push_back(values.back());
  }
  if (labels.empty()) return Status::InvalidArgument(path + ": no rows");
  const int64_t n = static_cast<int64_t>(labels.size());
  DigitsData data;
  data.images = torch::from_blob(pixels.data(), {n, kPixels}).clone();
  data.labels = torch::from_blob(labels.data(), {n}, torch::kLong).clone();
  return data;
}

DigitsDataModule::DigitsDataModule(DigitsData data, int64_t batch_size,
                                   double val_fraction, uint64_t split_seed) {
  const int64_t n = data.images.size(0);
  const int64_t n_val = static_cast<int64_t>(std::llround(n * val_fraction));
  auto gen = at::detail::createCPUGenerator(split_seed);
  torch::Tensor order = torch::randperm(n, gen, torch::kLong);
  torch::Tensor val_rows = order.slice(0, 0, n_val);
  torch::Tensor train_rows = order.slice(0, n_val, n);
  train_ = std::make_shared<trainer::TensorLoader>(
      data.images.index_select(0, train_rows),
      data.labels.index_select(0, train_rows),
      trainer::TensorLoaderOptions().batch_size(batch_size).shuffle(true));
  val_ = std::make_shared<trainer::TensorLoader>(
      data.images.index_select(0, val_rows),
      data.labels.index_select(0, val_rows),
      trainer::TensorLoaderOptions().batch_size(256));
}

DigitsModule::DigitsModule(const std::vector<int64_t>& hidden, double dropout,
                           config::Node optimizer, config::Node scheduler)
    : optimizer_(std::move(optimizer)), scheduler_(std::move(scheduler)) {
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

torch::Tensor DigitsModule::forward(const torch::Tensor& x) {
  return net_->forward(x);
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

StatusOr<trainer::OptimizerConfig> DigitsModule::configure_optimizers() {
  trainer::OptimizerConfig out;
  TRIALSHIM_ASSIGN_OR_RETURN(out.optimizer,
                             trainer::MakeOptimizer(optimizer_, parameters()));
  const int64_t epochs = trainer()->options().max_epochs();
  TRIALSHIM_ASSIGN_OR_RETURN(
      out.scheduler,
      trainer::MakeScheduler(scheduler_, *out.optimizer, epochs,
                             trainer()->estimated_stepping_batches()));
  return out;
}

Status Train(const config::Node& config, const RunContext& context) {
  static const std::vector<std::string> kTop = {
      "seed",      "data",    "model",     "optimizer",
      "scheduler", "trainer", "callbacks", "hypertune"};
  for (const auto& key : config.Keys()) {
    if (std::find(kTop.begin(), kTop.end(), key) == kTop.end()) {
      return Status::InvalidArgument("unknown top-level key '" + key + "'" +
                                     DidYouMean(key, kTop));
    }
  }
  const config::Node empty = config::Node::MakeMap();
  auto get = [&](const char* key) -> const config::Node& {
    const config::Node* n = config.Get(key);
    return n ? *n : empty;
  };
  // data
  const config::Node& data = get("data");
  std::string path = context.config_dir + "/../data/digits.csv.gz";
  int64_t batch_size = 64;
  double val_fraction = 0.2;
  int64_t seed = 0;
  if (const auto* s = config.Get("seed"); s && s->is_int()) seed = s->AsInt();
  for (const auto& [key, value] : data.AsMap()) {
    if (key == "path") {
      if (value.is_string()) {
        path = trainer::MapGcsUri(value.AsString());
      } else if (!value.is_null()) {
        return Status::InvalidArgument(Where(value) +
                                       "data.path: expected a string or null");
      }
    } else if (key == "batch_size") {
      if (!value.is_int() || value.AsInt() < 1) {
        return Status::InvalidArgument(Where(value) +
                                       "data.batch_size: expected an int >= 1");
      }
      batch_size = value.AsInt();
    } else if (key == "val_fraction") {
      if (!value.is_number() || value.AsDouble() <= 0 ||
          value.AsDouble() >= 1) {
        return Status::InvalidArgument(
            Where(value) + "data.val_fraction: expected a number in (0, 1)");
      }
      val_fraction = value.AsDouble();
    } else {
      return Status::InvalidArgument(
          Where(value) + "unknown option 'data." + key + "'" +
          DidYouMean(key, {"path", "batch_size", "val_fraction"}));
    }
  }
  // model
  std::vector<int64_t> hidden = {128, 64};
  double dropout = 0.1;
  for (const auto& [key, value] : get("model").AsMap()) {
    if (key == "hidden") {
      hidden.clear();
      if (!value.is_list())
        return Status::InvalidArgument(
            Where(value) + "model.hidden: expected a list of widths");
      for (const auto& w : value.AsList()) {
        if (!w.is_int() || w.AsInt() < 1) {
          return Status::InvalidArgument(
              Where(value) + "model.hidden: expected a list of ints >= 1");
        }
        hidden.push_back(w.AsInt());
      }
    } else if (key == "dropout") {
      if (!value.is_number() || value.AsDouble() < 0 || value.AsDouble() >= 1) {
        return Status::InvalidArgument(
            Where(value) + "model.dropout: expected a number in [0, 1)");
      }
      dropout = value.AsDouble();
    } else {
      return Status::InvalidArgument(
          Where(value) + "unknown option 'model." + key + "'" +
          DidYouMean(key, {"hidden", "dropout"}));
    }
  }
  TRIALSHIM_ASSIGN_OR_RETURN(trainer::TrainerOptions options,
                             trainer::TrainerOptions::FromConfig(
                                 get("trainer"), config.Get("hypertune")));
  if (options.default_root_dir().empty())
    options.default_root_dir(context.run_dir);
  if (context.logger) options.logger(context.logger);
  TRIALSHIM_ASSIGN_OR_RETURN(auto callbacks,
                             trainer::CallbacksFromConfig(get("callbacks")));
  const config::Node* optimizer = config.Get("optimizer");
  if (optimizer == nullptr) {
    return Status::InvalidArgument(
        "no optimizer: choose one with optimizer=adam|adamw|sgd");
  }
  const config::Node* scheduler = config.Get("scheduler");

  try {
    TRIALSHIM_ASSIGN_OR_RETURN(DigitsData digits, LoadDigits(path));
    DigitsDataModule dm(std::move(digits), batch_size, val_fraction,
                        static_cast<uint64_t>(seed));
    // Parameters are initialised from torch's global generator.
    torch::manual_seed(static_cast<uint64_t>(seed));
    auto model = std::make_shared<DigitsModule>(
        hidden, dropout, *optimizer,
        scheduler ? *scheduler : config::Node::Null());
    trainer::Trainer trainer(options);
    for (auto& c : callbacks) trainer.add_callback(c);
    return trainer.fit(*model, dm);
  } catch (const c10::Error& e) {
    return Status::Internal(e.what_without_backtrace());
  }
}

}  // namespace trialshim::digits
