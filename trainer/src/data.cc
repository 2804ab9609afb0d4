#include "trialshim/trainer/data.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "trialshim/trainer/distributed.h"

namespace trialshim::trainer {

TensorLoader::TensorLoader(torch::Tensor inputs, torch::Tensor targets,
                           TensorLoaderOptions options)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      options_(options) {
  if (options_.batch_size() < 1) options_.batch_size(1);
}

int64_t TensorLoader::num_rows() const {
  const int64_t n = inputs_.size(0);
  // DistributedSampler pads every share to ceil(n / world_size).
  return world_size_ > 0 ? (n + world_size_ - 1) / world_size_ : n;
}

int64_t TensorLoader::num_batches() const {
  const int64_t n = num_rows(), bs = options_.batch_size();
  return options_.drop_last() ? n / bs : (n + bs - 1) / bs;
}

bool TensorLoader::set_shard(int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) return false;
  rank_ = rank;
  world_size_ = world_size;
  order_ = torch::Tensor();
  return true;
}

void TensorLoader::set_epoch(int64_t epoch, uint64_t seed) {
  if (world_size_ > 0) {
    std::vector<int64_t> rows =
        ShardIndices(inputs_.size(0), epoch, rank_, world_size_, seed,
                     options_.shuffle(), /*drop_last=*/false);
    order_ = torch::tensor(rows, torch::kLong);
    return;
  }
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
  const int64_t rows = order_.defined() ? order_.size(0) : inputs_.size(0);
  const int64_t end = std::min(begin + bs, rows);
  if (!order_.defined()) {
    return Batch{inputs_.slice(0, begin, end), targets_.slice(0, begin, end)};
  }
  torch::Tensor picked = order_.slice(0, begin, end);
  return Batch{inputs_.index_select(0, picked),
               targets_.index_select(0, picked)};
}

}  // namespace trialshim::trainer
