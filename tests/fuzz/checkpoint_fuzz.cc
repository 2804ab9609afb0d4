// Fuzzes checkpoint loading as Trainer::Resume does it with whatever *.ckpt
// file it finds: OpenCheckpoint, then RestoreCheckpoint into a small model
// and its optimizer, then one training step. Every outcome must be a Status
// naming the file, and a checkpoint that restores must train.
//
// The first byte picks the fixture (bit 1: SGD with momentum, else Adam) and
// whether the CRC-32 is checked (bit 0 set: not checked, so that mutated
// data reaches the checks behind it); the rest is the file.
//
// TRIALSHIM_CHECKPOINT_SEEDS=<dir> writes seeds (real checkpoints of both
// fixtures, with and without the checksum check) into <dir> and exits.
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "fuzz_util.h"
#include "trialshim/trainer/checkpoint.h"

namespace {

using namespace trialshim;

struct Fixture {
  torch::nn::Linear model{torch::nn::LinearOptions(3, 2)};
  std::unique_ptr<torch::optim::Optimizer> optimizer;

  explicit Fixture(bool sgd) {
    if (sgd) {
      optimizer = std::make_unique<torch::optim::SGD>(
          model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    } else {
      optimizer = std::make_unique<torch::optim::Adam>(
          model->parameters(), torch::optim::AdamOptions(0.01));
    }
    Step();  // so that the optimizer has state to save and load
  }
  void Step() {
    optimizer->zero_grad();
    model(torch::ones({4, 3})).sum().backward();
    optimizer->step();
  }
};

void WriteSeeds(const std::string& dir) {
  for (uint8_t mode = 0; mode < 4; ++mode) {
    Fixture f(mode & 2);
    const std::string path = dir + "/checkpoint.ckpt";
    Status s = trainer::WriteCheckpoint(path, *f.model, f.optimizer.get(),
                                        {{"epoch", 1}, {"global_step", 4}});
    if (!s.ok()) std::abort();
    std::ifstream in(path, std::ios::binary);
    std::ostringstream file;
    file << in.rdbuf();
    std::ofstream(dir + "/seed_" + std::to_string(mode), std::ios::binary)
        << static_cast<char>(mode) << file.str();
    std::remove(path.c_str());
  }
}

bool NamesFile(const Status& s, const std::string& path) {
  return s.ok() || s.message().find(path) != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TRIALSHIM_CHECKPOINT_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const fuzz::ScratchDir scratch;
  static Fixture* fixtures[] = {new Fixture(false), new Fixture(true)};
  // TRIALSHIM_FUZZ_VERBOSE=1 prints what became of an input.
  static const bool verbose = std::getenv("TRIALSHIM_FUZZ_VERBOSE") != nullptr;
  const uint8_t mode = data[0];
  Fixture& fixture = *fixtures[(mode >> 1) & 1];
  const std::string path =
      scratch.Write("fuzz.ckpt", fuzz::AsView(data + 1, size - 1));

  trainer::CheckpointReadOptions options;
  options.verify_checksum = !(mode & 1);
  auto opened = trainer::OpenCheckpoint(path, options);
  if (verbose)
    std::fprintf(stderr, "open: %s\n", opened.status().message().c_str());
  if (!NamesFile(opened.status(), path)) __builtin_trap();
  if (!opened.ok()) return 0;
  Status restored = trainer::RestoreCheckpoint(*opened, *fixture.model,
                                               fixture.optimizer.get());
  if (verbose)
    std::fprintf(stderr, "restore: %s\n", restored.message().c_str());
  if (!NamesFile(restored, path)) __builtin_trap();
  if (restored.ok()) fixture.Step();  // a c10::Error here escapes: a finding
  return 0;
}
