// The digits model and data: an MLP classifier of the UCI optical
// handwritten digits (1797 8x8 images, pixel values 0-16, 10 classes).
#ifndef TRIALSHIM_EXAMPLES_DIGITS_DIGITS_H_
#define TRIALSHIM_EXAMPLES_DIGITS_DIGITS_H_

#include <torch/nn/modules/container/sequential.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/config/instantiate.h"
#include "trialshim/config/node.h"
#include "trialshim/base/status.h"
#include "trialshim/trainer/data.h"
#include "trialshim/trainer/module.h"

namespace trialshim::digits {

struct DigitsData {
  torch::Tensor images;  // [n, 64] float, scaled to [0, 1]
  torch::Tensor labels;  // [n] int64
};

// Reads the gzipped CSV (64 pixel values then the label per line, no
// header). InvalidArgument names the line of a malformed row.
StatusOr<DigitsData> LoadDigits(const std::string& path);

// Linear -> ReLU -> Dropout per hidden layer, then Linear to 10 classes;
// cross-entropy loss; logs train_loss, val_loss and val_acc.
class DigitsModule : public trainer::Module {
 public:
  DigitsModule(const std::vector<int64_t>& hidden, double dropout);
  // The optimizer and (optional) scheduler partials the config names
  // (`optimizer:` and `scheduler:`), called in configure_optimizers.
  void set_optimizers(config::Partial optimizer,
                      std::optional<config::Partial> scheduler) {
    optimizer_ = std::move(optimizer);
    scheduler_ = std::move(scheduler);
  }

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor training_step(const trainer::Batch& batch,
                              int64_t batch_idx) override;
  void validation_step(const trainer::Batch& batch, int64_t batch_idx) override;
  StatusOr<trainer::OptimizerConfig> configure_optimizers() override;

 private:
  torch::nn::Sequential net_{nullptr};
  config::Partial optimizer_;
  std::optional<config::Partial> scheduler_;
};

// Registers digits.DigitsDataModule (path, batch_size, val_fraction,
// split_seed; a null path is `default_data`) and digits.MLP (hidden,
// dropout).
Status RegisterDigitsTargets(config::Registry* registry,
                             const std::string& default_data);

}  // namespace trialshim::digits

#endif  // TRIALSHIM_EXAMPLES_DIGITS_DIGITS_H_
