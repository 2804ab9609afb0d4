// Checkpoint files: one LibTorch archive holding a model's parameters and
// buffers (by dotted name), the optimizer, the CPU RNG state and a JSON
// document with everything else the Trainer needs to resume (epoch, batch,
// step, scheduler, callbacks, metrics).
//
// Files are written to "<path>.tmp.<pid>" and renamed, so a reader sees
// either the old or the new checkpoint, never half of one. Reading is in two
// phases so that a bad file changes nothing: OpenCheckpoint parses and
// checks the whole file (DataLoss for a truncated or corrupt one, naming
// it), then RestoreCheckpoint checks every tensor's name and shape against
// the model (InvalidArgument on a mismatch, which no other checkpoint of
// the same run would fix) before copying anything.
#ifndef TRIALSHIM_TRAINER_CHECKPOINT_H_
#define TRIALSHIM_TRAINER_CHECKPOINT_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trialshim/config/status.h"

namespace trialshim::trainer {

// The format version written into every checkpoint.
inline constexpr int64_t kCheckpointVersion = 1;

Status WriteCheckpoint(const std::string& path, torch::nn::Module& model,
                       torch::optim::Optimizer* optimizer,
                       const nlohmann::json& state);

struct OpenedCheckpoint {
  std::string path;
  nlohmann::json state;
  std::shared_ptr<torch::serialize::InputArchive> archive;
};

StatusOr<OpenedCheckpoint> OpenCheckpoint(const std::string& path);

// Copies the model, optimizer (when given) and RNG state.
Status RestoreCheckpoint(OpenedCheckpoint& checkpoint, torch::nn::Module& model,
                         torch::optim::Optimizer* optimizer);

// "*.ckpt" files directly in `dir`, newest first (modification time, then
// name); empty when `dir` does not exist.
std::vector<std::string> ListCheckpoints(const std::string& dir);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_CHECKPOINT_H_
