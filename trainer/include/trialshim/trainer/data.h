// Data for the Trainer: batches, loaders with random access, DataModule.
//
// A Loader hands out batch i of the current epoch. Random access (rather
// than an iterator) is what makes a mid-epoch resume exact and cheap: the
// Trainer skips straight to the next unseen batch. set_epoch fixes the
// epoch's order from the trainer's seed, as PyTorch's DistributedSampler
// does, so the order does not depend on how the run was interrupted.
//
// TensorLoader serves in-memory tensors (LibTorch's TensorDataset holds a
// single tensor and its DataLoader copies sample by sample; slicing whole
// batches is several times faster on small models). A DataModule bundles
// the loaders of a dataset, as Lightning's LightningDataModule does.
#ifndef TRIALSHIM_TRAINER_DATA_H_
#define TRIALSHIM_TRAINER_DATA_H_

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "trialshim/base/status.h"
#include "trialshim/trainer/metrics.h"
#include "trialshim/trainer/options.h"

namespace trialshim::trainer {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;

  int64_t size() const { return input.defined() ? input.size(0) : 0; }
  // non_blocking: an asynchronous copy from pinned host memory.
  Batch to(const torch::Device& device, bool non_blocking = false) const {
    return Batch{input.to(device, non_blocking), target.to(device, non_blocking)};
  }
};

class Loader {
 public:
  virtual ~Loader() = default;
  virtual int64_t num_batches() const = 0;
  // Called before each epoch with the trainer's seed.
  virtual void set_epoch(int64_t epoch, uint64_t seed) {
    (void)epoch;
    (void)seed;
  }
  // Batch `index` (0 <= index < num_batches()) of the current epoch.
  virtual Batch batch(int64_t index) const = 0;
  // Data parallelism (trainer.strategy=ddp): from now on serve only the
  // share of rank `rank` of `world_size`, as DistributedSampler does, with
  // every rank getting the same number of batches. false: this loader can
  // not, and the Trainer gives each rank every world_size-th batch instead.
  virtual bool set_shard(int rank, int world_size) {
    (void)rank;
    (void)world_size;
    return false;
  }
};

class TensorLoaderOptions {
 public:
  // Rows per batch. Default: 32.
  TRIALSHIM_ARG(int64_t, batch_size) = 32;
  // Reshuffle every epoch (from the seed and the epoch). Default: false.
  TRIALSHIM_ARG(bool, shuffle) = false;
  // Drop a last, smaller batch. Default: false.
  TRIALSHIM_ARG(bool, drop_last) = false;
  // Keep the rows in page-locked host memory (where LibTorch has CUDA), so
  // the Trainer copies each batch to the GPU asynchronously, as
  // DataLoader(pin_memory=True). Default: false.
  TRIALSHIM_ARG(bool, pin_memory) = false;
};

class TensorLoader : public Loader {
 public:
  // `inputs` and `targets` have the same first dimension.
  TensorLoader(torch::Tensor inputs, torch::Tensor targets,
               TensorLoaderOptions options = {});

  int64_t num_batches() const override;
  void set_epoch(int64_t epoch, uint64_t seed) override;
  Batch batch(int64_t index) const override;
  // Each epoch's rows are ShardIndices(rows, epoch, rank, world_size, seed,
  // shuffle): DistributedSampler's order, padded by repetition to a
  // multiple of world_size, so the global batch matches one rank's.
  bool set_shard(int rank, int world_size) override;
  // Rows per epoch (this rank's share when sharded).
  int64_t num_rows() const;

 private:
  torch::Tensor inputs_;
  torch::Tensor targets_;
  TensorLoaderOptions options_;
  torch::Tensor order_;  // undefined: identity
  int rank_ = 0;
  int world_size_ = 0;  // 0: not sharded
};

class DataModule {
 public:
  virtual ~DataModule() = default;
  // Loads or prepares data for `stage` before its loaders are asked for.
  virtual Status setup(Stage stage) {
    (void)stage;
    return Status::Ok();
  }
  virtual std::shared_ptr<Loader> train_dataloader() = 0;
  // Null: no validation.
  virtual std::shared_ptr<Loader> val_dataloader() { return nullptr; }
  // Null: Trainer::test is an error.
  virtual std::shared_ptr<Loader> test_dataloader() { return nullptr; }
};

// A CSV of numbers, one row per line, no header (gzip-compressed when the
// file name ends in ".gz"), as a float32 tensor [rows, columns]. NotFound
// for a missing file, DataLoss for a broken gzip stream, InvalidArgument
// naming file:line for a row that is not numbers or has another width.
StatusOr<torch::Tensor> ReadCsvTensor(const std::string& path);

// In-memory rows split at random into training and validation, as
// torch.utils.data.random_split then two DataLoaders: the first
// round(rows * val_fraction) rows of a permutation seeded by `split_seed`
// validate, the rest train (reshuffled every epoch).
class SplitDataModule : public DataModule {
 public:
  SplitDataModule(torch::Tensor inputs, torch::Tensor targets,
                  double val_fraction, uint64_t split_seed, int64_t batch_size,
                  int64_t val_batch_size = 256);
  std::shared_ptr<Loader> train_dataloader() override { return train_; }
  std::shared_ptr<Loader> val_dataloader() override { return val_; }
  std::shared_ptr<Loader> test_dataloader() override { return val_; }

 private:
  std::shared_ptr<TensorLoader> train_;
  std::shared_ptr<TensorLoader> val_;
};

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_DATA_H_
