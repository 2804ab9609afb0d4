// Test doubles for the trainer's callback and scheduler tests: a two-weight
// linear regression on four rows (an epoch is four optimizer steps and
// takes microseconds) whose validation metric can follow a script, so
// plateaus, improvements and NaNs happen exactly when a test wants them.
#ifndef TRIALSHIM_TESTS_TRAINER_SCRIPTED_MODULE_H_
#define TRIALSHIM_TESTS_TRAINER_SCRIPTED_MODULE_H_

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "trialshim/base/lock.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer::scripted {

// A logger that writes into a string, so tests can read what was logged.
struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
};

inline TrainerOptions Quiet(const std::string& root, CapturedLog& log) {
  return TrainerOptions()
      .default_root_dir(root)
      .enable_progress_bar(false)
      .num_sanity_val_steps(0)
      .console(log.logger);
}

struct ScriptedOptions {
  // "SGD" or "Adam" (default betas, no weight decay).
  std::string optimizer = "SGD";
  double lr = 0.05;
  // Learning rate of a second param group (the second weight); <= 0: one
  // group holds both weights.
  double lr2 = 0;
  // A scheduler config for MakeScheduler (null: none).
  config::Node scheduler = config::Node::Null();
  // The value `metric` takes at the i-th validation (the last one repeats);
  // empty: log the real validation MSE.
  std::vector<double> script;
  std::string metric = "val_loss";
};

// y = a x0 + b x1, MSE loss, SGD; a and b start at 0.
class ScriptedModule : public Module {
 public:
  explicit ScriptedModule(ScriptedOptions options = {})
      : options_(std::move(options)) {
    a_ = register_parameter("a", torch::zeros({1}, torch::kDouble));
    b_ = register_parameter("b", torch::zeros({1}, torch::kDouble));
  }
  torch::Tensor predict(const torch::Tensor& x) const {
    return x.select(1, 0) * a_ + x.select(1, 1) * b_;
  }
  torch::Tensor training_step(const Batch& batch, int64_t) override {
    // The rate this step runs with: step schedulers move it after the step.
    seen_lrs_.push_back(
        trainer()->optimizer()->param_groups()[0].options().get_lr());
    torch::Tensor loss = (predict(batch.input) - batch.target).pow(2).mean();
    log("train_loss", loss);
    return loss;
  }
  void validation_step(const Batch& batch, int64_t batch_idx) override {
    if (options_.script.empty()) {
      log(options_.metric, (predict(batch.input) - batch.target).pow(2).mean());
      return;
    }
    if (batch_idx == 0) ++validations_;
    const size_t i = std::min(validations_, options_.script.size()) - 1;
    log(options_.metric, options_.script[i]);
  }
  void test_step(const Batch& batch, int64_t) override {
    torch::Tensor err = predict(batch.input) - batch.target;
    log("test_loss", err.pow(2).mean());
    log("test_mae", err.abs().mean());
  }
  StatusOr<OptimizerConfig> configure_optimizers() override {
    OptimizerConfig out;
    std::vector<torch::optim::OptimizerParamGroup> groups;
    if (options_.lr2 > 0) {
      groups.emplace_back(std::vector<torch::Tensor>{a_});
      groups.emplace_back(std::vector<torch::Tensor>{b_},
                          Options(options_.lr2));
    } else {
      groups.emplace_back(parameters());
    }
    if (options_.optimizer == "Adam") {
      out.optimizer = std::make_shared<torch::optim::Adam>(
          groups, torch::optim::AdamOptions(options_.lr));
    } else {
      out.optimizer = std::make_shared<torch::optim::SGD>(
          groups, torch::optim::SGDOptions(options_.lr));
    }
    TRIALSHIM_ASSIGN_OR_RETURN(
        out.scheduler, MakeScheduler(options_.scheduler, *out.optimizer,
                                     trainer()->options().max_epochs().value_or(-1),
                                     trainer()->estimated_stepping_batches()));
    return out;
  }
  // A param group's own options, for the optimizer named in options_.
  std::unique_ptr<torch::optim::OptimizerOptions> Options(double lr) const {
    if (options_.optimizer == "Adam") {
      return std::make_unique<torch::optim::AdamOptions>(lr);
    }
    return std::make_unique<torch::optim::SGDOptions>(lr);
  }
  double a() const { return a_.item<double>(); }
  double b() const { return b_.item<double>(); }
  // Group 0's learning rate at every training step, in order.
  const std::vector<double>& seen_lrs() const { return seen_lrs_; }

 private:
  ScriptedOptions options_;
  torch::Tensor a_, b_;
  size_t validations_ = 0;
  std::vector<double> seen_lrs_;
};

// Four rows (x0, x1, y), one per batch, for training and validation; four
// other rows for testing.
struct TinyData : public DataModule {
  using Rows = std::vector<std::array<double, 3>>;
  Rows train_rows = {{1, 2, 3}, {-1, 0.5, 1}, {2, -1, -2}, {0.5, 0.5, 4}};
  Rows test_rows = {{1, 1, 1}, {2, 0, 3}, {0, -1, 2}, {-2, 1, 0}};
  bool with_test = true;

  static std::shared_ptr<Loader> Make(const Rows& rows) {
    const int64_t n = static_cast<int64_t>(rows.size());
    auto x = torch::zeros({n, 2}, torch::kDouble);
    auto y = torch::zeros({n}, torch::kDouble);
    for (int64_t i = 0; i < n; ++i) {
      x[i][0] = rows[i][0];
      x[i][1] = rows[i][1];
      y[i] = rows[i][2];
    }
    return std::make_shared<TensorLoader>(x, y,
                                          TensorLoaderOptions().batch_size(1));
  }
  std::shared_ptr<Loader> train_dataloader() override {
    return Make(train_rows);
  }
  std::shared_ptr<Loader> val_dataloader() override { return Make(train_rows); }
  std::shared_ptr<Loader> test_dataloader() override {
    return with_test ? Make(test_rows) : nullptr;
  }
};

// metrics.csv as a list of rows, each a map from column to cell text.
inline std::vector<std::map<std::string, std::string>> ReadCsv(
    const std::string& path) {
  // Rows end in "\r\n", as Python's csv module writes them; a file with
  // other line ends reads as one row.
  const std::string text = trialshim::testing::ReadFile(path);
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = text.find("\r\n", at)) != std::string::npos;
       at = end + 2) {
    lines.push_back(text.substr(at, end - at));
  }
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream s(line);
    while (std::getline(s, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
  };
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  const std::vector<std::string> header = split(lines[0]);
  for (size_t l = 1; l < lines.size(); ++l) {
    std::vector<std::string> cells = split(lines[l]);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
      row[header[i]] = cells[i];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The names of the files in `dir` (none when it does not exist), but for
// the lock file a fit keeps there (base/lock.h).
inline std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = f.path().filename().string();
    if (name != kLockFileName) out.insert(name);
  }
  return out;
}

// "{a b c}", for failure messages.
inline std::string Show(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return "{" + out + "}";
}

}  // namespace trialshim::trainer::scripted

#endif  // TRIALSHIM_TESTS_TRAINER_SCRIPTED_MODULE_H_
