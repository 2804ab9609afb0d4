// Data-parallel training on PyTorch's own distributed engine (c10d).
//
// LibTorch 1.13 has no C++ DistributedDataParallel, so this is the part of it
// a trainer needs, built on c10d's TCPStore and ProcessGroupGloo (CPU; NCCL
// when LibTorch was built with it): a DistributedContext joins the ranks
// described by the env:// variables (MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
// RANK, as `trialshim launch` or the shim's CLUSTER_SPEC translation set
// them), rank 0 hosting the store. It then
//   - broadcasts a module's parameters and buffers from rank 0, so every rank
//     starts from the same weights;
//   - averages gradients across ranks after backward, in buckets (several
//     gradients flattened into one buffer of about bucket_cap_mb, one
//     all-reduce per bucket). With overlap_backward, autograd hooks copy each
//     gradient into its bucket as backward produces it and start a bucket's
//     all-reduce as soon as it is full, so communication overlaps the rest
//     of backward (buckets are started strictly in order, so every rank
//     issues the same collectives in the same order);
//   - shards dataset indices per rank with torch.utils.data.DistributedSampler
//     semantics (shuffled with seed + epoch by torch's own randperm, padded
//     by repetition to equal length), so the global batch is the same as on
//     one rank;
//   - averages scalars (sync_dist) and offers a barrier.
// Every collective is bounded by `timeout`: a rank that dies makes the
// others fail at once ("connection closed"), one that hangs makes them fail
// when the timeout passes, each with a Status naming the operation, never a
// hang. c10::Error and std::exception are caught here and become Status
// (IOError); after one, the context is unusable and the process should
// exit non-zero. One context per process, used from one thread.
//
// Typical use (trainer.strategy=ddp):
//   TRIALSHIM_ASSIGN_OR_RETURN(auto ctx, DistributedContext::FromEnvironment(
//                                            DistributedOptions().seed(s)));
//   TRIALSHIM_RETURN_IF_ERROR(ctx->PrepareModule(*model));
//   for each epoch: indices = ctx->ShardIndices(dataset_size, epoch);
//     for each batch: loss.backward();
//                     TRIALSHIM_RETURN_IF_ERROR(ctx->AllReduceGradients());
//                     optimizer.step();
//     sync_dist: TRIALSHIM_ASSIGN_OR_RETURN(v, ctx->AllReduceMean(v));
//   if (ctx->is_primary()) { write checkpoints, metrics, the model }
#ifndef TRIALSHIM_TRAINER_DISTRIBUTED_H_
#define TRIALSHIM_TRAINER_DISTRIBUTED_H_

#include <torch/nn/module.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::trainer {

class DistributedOptions {
 public:
  // This rank, 0..world_size-1. -1: read RANK. Default: -1.
  DistributedOptions& rank(int v) {
    rank_ = v;
    return *this;
  }
  int rank() const { return rank_; }
  // Number of ranks. -1: read WORLD_SIZE. Default: -1.
  DistributedOptions& world_size(int v) {
    world_size_ = v;
    return *this;
  }
  int world_size() const { return world_size_; }
  // Rank 0's address. "": read MASTER_ADDR. Default: "".
  DistributedOptions& master_addr(std::string v) {
    master_addr_ = std::move(v);
    return *this;
  }
  const std::string& master_addr() const { return master_addr_; }
  // Rank 0's store port. 0: read MASTER_PORT. Default: 0.
  DistributedOptions& master_port(int v) {
    master_port_ = v;
    return *this;
  }
  int master_port() const { return master_port_; }
  // Bound on the rendezvous and on every collective. zero: read
  // TRIALSHIM_DIST_TIMEOUT (seconds), else 300 s. Default: zero.
  DistributedOptions& timeout(std::chrono::milliseconds v) {
    timeout_ = v;
    return *this;
  }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // "gloo", "nccl" or "auto" (nccl when LibTorch has it and CUDA is
  // available, else gloo). Default: "auto".
  DistributedOptions& backend(std::string v) {
    backend_ = std::move(v);
    return *this;
  }
  const std::string& backend() const { return backend_; }
  // Gradient bucket size in MiB, as DDP's bucket_cap_mb. Default: 25.
  DistributedOptions& bucket_cap_mb(double v) {
    bucket_cap_mb_ = v;
    return *this;
  }
  double bucket_cap_mb() const { return bucket_cap_mb_; }
  // Start bucket all-reduces from autograd hooks during backward
  // (PrepareModule installs them). false: all of it in
  // AllReduceGradients. Default: true.
  DistributedOptions& overlap_backward(bool v) {
    overlap_backward_ = v;
    return *this;
  }
  bool overlap_backward() const { return overlap_backward_; }
  // Seed of the per-epoch shuffle in ShardIndices (DistributedSampler's
  // seed). Default: 0.
  DistributedOptions& seed(uint64_t v) {
    seed_ = v;
    return *this;
  }
  uint64_t seed() const { return seed_; }
  // ShardIndices shuffles. Default: true.
  DistributedOptions& shuffle(bool v) {
    shuffle_ = v;
    return *this;
  }
  bool shuffle() const { return shuffle_; }
  // ShardIndices drops the tail instead of padding. Default: false.
  DistributedOptions& drop_last(bool v) {
    drop_last_ = v;
    return *this;
  }
  bool drop_last() const { return drop_last_; }

 private:
  int rank_ = -1;
  int world_size_ = -1;
  std::string master_addr_;
  int master_port_ = 0;
  std::chrono::milliseconds timeout_{0};
  std::string backend_ = "auto";
  double bucket_cap_mb_ = 25;
  bool overlap_backward_ = true;
  uint64_t seed_ = 0;
  bool shuffle_ = true;
  bool drop_last_ = false;
};

// The indices of a dataset of `n` samples that `rank` of `world_size` reads
// in `epoch`, exactly as torch.utils.data.DistributedSampler(shuffle, seed,
// drop_last) with set_epoch(epoch) yields them: a permutation by
// torch.randperm seeded with seed + epoch (or 0..n-1), padded by repeating
// its start to a multiple of world_size (or cut to one with drop_last), then
// every world_size-th index from `rank`. Every rank gets the same count.
std::vector<int64_t> ShardIndices(int64_t n, int64_t epoch, int rank,
                                  int world_size, uint64_t seed,
                                  bool shuffle = true, bool drop_last = false);

class DistributedContext {
 public:
  // Joins the group described by `options`, each unset field read from the
  // environment. InvalidArgument names a missing or malformed variable;
  // IOError when the ranks do not meet within the timeout.
  static StatusOr<std::unique_ptr<DistributedContext>> FromEnvironment(
      const DistributedOptions& options = DistributedOptions());
  ~DistributedContext();
  DistributedContext(const DistributedContext&) = delete;
  DistributedContext& operator=(const DistributedContext&) = delete;

  int rank() const;
  int world_size() const;
  // Rank 0: the one that writes checkpoints, metrics and the model.
  bool is_primary() const { return rank() == 0; }
  // "gloo" or "nccl".
  const std::string& backend() const;
  // Where AllReduceMean's values travel: NCCL reduces only CUDA tensors,
  // so the Trainer sets its device. Default: the CPU.
  void set_device(const torch::Device& device);
  const DistributedOptions& options() const;

  // BroadcastParameters, then the gradient buckets of `module` (and its
  // hooks when overlap_backward). Call once, before training; `module` must
  // outlive the context or the next PrepareModule.
  Status PrepareModule(torch::nn::Module& module);
  // Copies rank 0's parameters and buffers into every rank's `module`.
  Status BroadcastParameters(torch::nn::Module& module);
  // Averages the gradients of the prepared module across ranks: call after
  // every backward() and before optimizer.step(). A parameter with no
  // gradient on any rank keeps none; one with a gradient on some ranks gets
  // the average over all (missing counts as zero). Gradients accumulated in
  // .grad before this backward are kept (added to, not replaced).
  Status AllReduceGradients();
  // The mean of `value` over all ranks (sync_dist), identical on every rank.
  StatusOr<double> AllReduceMean(double value);
  // Element-wise mean of several scalars in one collective.
  StatusOr<std::vector<double>> AllReduceMean(const std::vector<double>& v);
  // Waits until every rank got here.
  Status Barrier();
  // This rank's shard of a dataset of `n` for `epoch` (ShardIndices with
  // this context's rank, world size, seed, shuffle and drop_last).
  std::vector<int64_t> ShardIndices(int64_t n, int64_t epoch) const;

 private:
  struct Impl;
  explicit DistributedContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_DISTRIBUTED_H_
