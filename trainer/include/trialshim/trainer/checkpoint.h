// Checkpoint files: a model's parameters and buffers, the optimizer's state,
// the CPU RNG state and a JSON document with everything else the Trainer
// needs to resume (epoch, batch, step, scheduler, callbacks, metrics).
//
// A checkpoint is a safetensors file (https://huggingface.co/docs/safetensors):
// an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the tensors' bytes. Python's
// `safetensors.torch.load_file()` reads one as it is. Tensors are named
// "model/<dotted name>", "optimizer/<i>/<field>" (the state of the i-th
// parameter of the optimizer's groups, e.g. "optimizer/0/exp_avg") and
// "rng/cpu"; the header's "__metadata__" holds "format": "trialshim",
// "version", "crc32" (of the data), "optimizer" (its type, steps and
// learning rates, as JSON) and "state" (the Trainer's JSON).
//
// Not LibTorch's own archives: loading one of those runs LibTorch's pickle
// reader and compiles the TorchScript source stored in the file, and
// tests/fuzz/checkpoint_fuzz crashed both within a minute. This format is
// read by the code below alone, every size and offset checked against the
// file, so a bad file is a DataLoss status, never a crash.
//
// Files are written to "<path>.tmp.<pid>" and renamed, so a reader sees
// either the old or the new checkpoint, never half of one. Reading is in two
// phases so that a bad file changes nothing: OpenCheckpoint parses and
// checks the whole file (DataLoss for a truncated or corrupt one, naming
// it), then RestoreCheckpoint checks every tensor's name, shape and dtype
// against the model and the optimizer (InvalidArgument on a mismatch, which
// no other checkpoint of the same run would fix) before copying anything.
#ifndef TRIALSHIM_TRAINER_CHECKPOINT_H_
#define TRIALSHIM_TRAINER_CHECKPOINT_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::trainer {

// The format version written into every checkpoint.
inline constexpr int64_t kCheckpointVersion = 2;

// The optimizer must be one the Trainer makes (sgd, adam, adamw, rmsprop,
// adagrad) or null.
Status WriteCheckpoint(const std::string& path, torch::nn::Module& model,
                       torch::optim::Optimizer* optimizer,
                       const nlohmann::json& state);

struct CheckpointReadOptions {
  // Compare the data with the CRC-32 in the header, which catches flipped
  // bits a size check cannot. Costs one pass over the data in memory.
  // Default: true.
  bool verify_checksum = true;
  // Read through any symbolic link at the path (to a regular file). Off,
  // only a relative link that stays in its directory or below is followed
  // (ModelCheckpoint's save_last="link" makes last.ckpt one); any other is
  // refused as a FIFO is (a link to /dev/zero, to another directory's
  // file). Default: false.
  bool follow_symlinks = false;
};

struct OpenedCheckpoint {
  std::string path;
  nlohmann::json state;      // the Trainer's state, as written
  nlohmann::json optimizer;  // {"type", "groups": [{"lr", "params"}], "steps"}
  std::map<std::string, torch::Tensor> tensors;  // by the names above
};

// A file that reads but fails a check is DataLoss ("truncated or corrupt");
// one that can not be opened or read (EACCES, EIO) is IOError: the trainer
// skips the first kind when it looks for a checkpoint to resume from and
// stops on the second, which may be a good checkpoint it can not see. Only a
// regular file is read: the open never blocks (O_NONBLOCK, so a FIFO
// without a writer does not hang the trial), a symbolic link is followed
// only as CheckpointReadOptions says, and the kind is checked on the open
// descriptor, so a FIFO, a device such as /dev/zero, a socket, a directory
// or a link is DataLoss "checkpoint <path> is a FIFO, not a regular file"
// without a byte read.
StatusOr<OpenedCheckpoint> OpenCheckpoint(
    const std::string& path, const CheckpointReadOptions& options = {});

// Copies the model, optimizer (when given) and RNG state.
Status RestoreCheckpoint(const OpenedCheckpoint& checkpoint,
                         torch::nn::Module& model,
                         torch::optim::Optimizer* optimizer);

// "*.ckpt" regular files directly in `dir` (and links that stay in it,
// to regular files), newest first (modification time, then name); empty
// when `dir` does not exist.
std::vector<std::string> ListCheckpoints(const std::string& dir);

// A "*.ckpt" entry that is not a regular file, and what it is ("a FIFO",
// "a directory", "a symbolic link to /dev/zero").
struct NotACheckpoint {
  std::string path;
  std::string kind;
};

// The "*.ckpt" entries directly in `dir` that are not regular files: a
// FIFO, a symbolic link (but a relative one to a regular file in `dir` or
// below, as save_last="link" makes), a directory, a device or a socket, by
// name. None is a checkpoint the trainer wrote;
// reading one could block or never end, and one in the way of a save (a
// directory named last.ckpt) fails that save after the work is done, so
// the trainer keeps them aside before it trains. Empty when `dir` does not
// exist; IOError naming `dir` and the reason when it can not be read.
StatusOr<std::vector<NotACheckpoint>> FindNonRegularCheckpoints(
    const std::string& dir);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_CHECKPOINT_H_
