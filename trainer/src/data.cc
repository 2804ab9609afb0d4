#include "trialshim/trainer/data.h"

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

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
  // Page-locked once, so every batch (a slice) copies to the GPU
  // asynchronously; LibTorch can pin only where it has CUDA.
  if (options_.pin_memory() && torch::cuda::is_available()) {
    inputs_ = inputs_.pin_memory();
    targets_ = targets_.pin_memory();
  }
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
  Batch out{inputs_.index_select(0, picked), targets_.index_select(0, picked)};
  if (inputs_.is_pinned()) out = Batch{out.input.pin_memory(), out.target.pin_memory()};
  return out;
}

namespace {

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

}  // namespace

StatusOr<torch::Tensor> ReadCsvTensor(const std::string& path) {
  std::string text;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    TRIALSHIM_ASSIGN_OR_RETURN(text, ReadGzip(path));
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::NotFound("can not open data file " + path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<float> values;
  size_t width = 0, rows = 0;
  std::istringstream lines(text);
  int line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    size_t n = 0;
    for (const char* p = line.c_str(); *p != '\0' && *p != '\r';) {
      char* next = nullptr;
      float v = std::strtof(p, &next);
      if (next == p) {
        return Status::InvalidArgument(path + ":" + std::to_string(line_no) +
                                       ": expected numbers separated by ','");
      }
      values.push_back(v);
      ++n;
      p = *next == ',' ? next + 1 : next;
    }
    if (rows > 0 && n != width) {
      return Status::InvalidArgument(
          path + ":" + std::to_string(line_no) + ": " + std::to_string(n) +
          " values where the rows before have " + std::to_string(width));
    }
    width = n;
    ++rows;
  }
  if (rows == 0) return Status::InvalidArgument(path + ": no rows");
  return torch::from_blob(values.data(),
                          {static_cast<int64_t>(rows), static_cast<int64_t>(width)})
      .clone();
}

SplitDataModule::SplitDataModule(torch::Tensor inputs, torch::Tensor targets,
                                 double val_fraction, uint64_t split_seed,
                                 int64_t batch_size, int64_t val_batch_size) {
  const int64_t n = inputs.size(0);
  const int64_t n_val = static_cast<int64_t>(std::llround(n * val_fraction));
  auto gen = at::detail::createCPUGenerator(split_seed);
  torch::Tensor order = torch::randperm(n, gen, torch::kLong);
  torch::Tensor val_rows = order.slice(0, 0, n_val);
  torch::Tensor train_rows = order.slice(0, n_val, n);
  train_ = std::make_shared<TensorLoader>(
      inputs.index_select(0, train_rows), targets.index_select(0, train_rows),
      TensorLoaderOptions().batch_size(batch_size).shuffle(true));
  val_ = std::make_shared<TensorLoader>(
      inputs.index_select(0, val_rows), targets.index_select(0, val_rows),
      TensorLoaderOptions().batch_size(val_batch_size));
}

}  // namespace trialshim::trainer
