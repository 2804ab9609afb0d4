#include "trialshim/trainer/data.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace trialshim::trainer {

TensorLoader::TensorLoader(torch::Tensor inputs, torch::Tensor targets,
                           TensorLoaderOptions options)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      options_(options) {
  if (options_.batch_size() < 1) options_.batch_size(1);
}

int64_t TensorLoader::num_batches() const {
  const int64_t n = inputs_.size(0), bs = options_.batch_size();
  return options_.drop_last() ? n / bs : (n + bs - 1) / bs;
}

void TensorLoader::set_epoch(int64_t epoch, uint64_t seed) {
  if (!options_.shuffle()) return;
  // A generator of its own, so the order depends on (seed, epoch) only and
  // not on how much randomness the model drew before.
  auto gen = at::detail::createCPUGenerator(seed * 6364136223846793005ULL +
                                            static_cast<uint64_t>(epoch) + 1);
  order_ = torch::randperm(inputs_.size(0), gen,
                           torch::TensorOptions().dtype(torch::kLong));
}

Batch TensorLoader::batch(int64_t index) const {
  const int64_t bs = options_.batch_size();
  const int64_t begin = index * bs;
  const int64_t end = std::min(begin + bs, inputs_.size(0));
  if (!order_.defined()) {
    return Batch{inputs_.slice(0, begin, end), targets_.slice(0, begin, end)};
  }
  torch::Tensor rows = order_.slice(0, begin, end);
  return Batch{inputs_.index_select(0, rows), targets_.index_select(0, rows)};
}

}  // namespace trialshim::trainer
