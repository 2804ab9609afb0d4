// The shipped digits data set and the example's model, for the trainer
// tests that train something real (a few seconds per epoch).
#ifndef TRIALSHIM_TESTS_TRAINER_DIGITS_FIXTURE_H_
#define TRIALSHIM_TESTS_TRAINER_DIGITS_FIXTURE_H_

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "digits.h"
#include "tests/testutil/status_matchers.h"
#include "trialshim/trainer/targets.h"

namespace trialshim::trainer::digits_fixture {

inline const std::string kDigits =
    std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/data/digits.csv.gz";

inline config::Node AdamConfig(double lr) {
  return config::Node::MakeMap({{"name", config::Node::String("adam")},
                                {"lr", config::Node::Double(lr)}});
}

// torch.optim.Adam at `lr` as the config would name it (a partial).
inline config::Partial AdamPartial(double lr) {
  config::Registry registry;
  EXPECT_OK(RegisterTrainerTargets(&registry));
  config::Node cfg = config::Node::MakeMap(
      {{"optimizer",
        config::Node::MakeMap({{"_target_", config::Node::String("torch.optim.Adam")},
                               {"_partial_", config::Node::Bool(true)},
                               {"lr", config::Node::Double(lr)}})}});
  auto made = registry.InstantiateAs<config::Partial>(cfg, "optimizer");
  EXPECT_OK(made);
  return **made;
}

// One hidden layer of 64, dropout 0.1, Adam at 0.01, weights from `seed`.
inline std::shared_ptr<digits::DigitsModule> DigitsModel(uint64_t seed) {
  torch::manual_seed(seed);
  auto model =
      std::make_shared<digits::DigitsModule>(std::vector<int64_t>{64}, 0.1);
  model->optimizers.optimizer = AdamPartial(0.01);
  return model;
}

// A fifth of the rows held out for validation (split seed 1).
inline SplitDataModule DigitsData(int64_t batch_size = 64) {
  auto data = digits::LoadDigits(kDigits);
  EXPECT_OK(data);
  return SplitDataModule(data->images, data->labels, 0.2, 1, batch_size);
}

}  // namespace trialshim::trainer::digits_fixture

#endif  // TRIALSHIM_TESTS_TRAINER_DIGITS_FIXTURE_H_
