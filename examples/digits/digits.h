// digits: an MLP classifier of the UCI optical handwritten digits (1797 8x8
// images, pixel values 0-16, 10 classes), trained by a Hydra-style app.
#ifndef TRIALSHIM_EXAMPLES_DIGITS_DIGITS_H_
#define TRIALSHIM_EXAMPLES_DIGITS_DIGITS_H_

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "trialshim/app/app.h"
#include "trialshim/config/instantiate.h"
#include "trialshim/trainer/app.h"
#include "trialshim/trainer/data.h"
#include "trialshim/trainer/module.h"

namespace trialshim::digits {

struct DigitsData {
  torch::Tensor images;  // [n, 64] float, scaled to [0, 1]
  torch::Tensor labels;  // [n] int64
};

// The gzipped CSV: 64 pixel values then the label per line.
StatusOr<DigitsData> LoadDigits(const std::string& path);

// Linear -> ReLU -> Dropout per hidden layer, then Linear to 10 classes;
// cross-entropy; logs train_loss, val_loss and val_acc. The optimizer and
// scheduler are the config's partials (`optimizer:`, `scheduler:`).
class DigitsModule : public trainer::Module {
 public:
  DigitsModule(const std::vector<int64_t>& hidden, double dropout);
  torch::Tensor forward(const torch::Tensor& x) { return net_->forward(x); }
  torch::Tensor training_step(const trainer::Batch& batch, int64_t) override;
  void validation_step(const trainer::Batch& batch, int64_t) override;
  StatusOr<trainer::OptimizerConfig> configure_optimizers() override {
    return optimizers.Configure(*this);
  }
  trainer::OptimizerPartials optimizers;  // the config's partials

 private:
  torch::nn::Sequential net_{nullptr};
};

// digits.DigitsDataModule (path: null is `default_data`, batch_size,
// val_fraction, split_seed) and digits.MLP (hidden, dropout).
Status RegisterDigitsTargets(config::Registry* registry,
                             const std::string& default_data);

// The app's task (for app::Run).
int Train(const app::Job& job);

}  // namespace trialshim::digits

#endif  // TRIALSHIM_EXAMPLES_DIGITS_DIGITS_H_
