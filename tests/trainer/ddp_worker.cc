// ddp_worker: one rank of a tiny data-parallel training run, for
// distributed_test (started by `trialshim launch`) and bench/ddp_bench.sh.
// It trains a 64-128-64-10 MLP (the digits shape) on a fixed synthetic set
// with DistributedContext, each rank starting from different random weights
// (so the broadcast is what makes them equal), and writes to --out/rank<R>.json
// the global loss of every step and the final parameters. --die-rank and
// --die-step make one rank SIGKILL itself or hang there. --bench prints
// samples/s and the time spent in AllReduceGradients instead.
#include <signal.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "trialshim/trainer/distributed.h"

namespace {

struct Flags {
  int64_t steps = 20;
  int64_t global_batch = 32;
  int64_t samples = 256;
  bool overlap = true;
  double bucket_mb = 25;
  std::string out;
  int die_rank = -1;
  int64_t die_step = -1;
  std::string die_how = "kill";  // or "hang"
  bool bench = false;
};

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--steps")
      f.steps = std::stoll(v);
    else if (k == "--global-batch")
      f.global_batch = std::stoll(v);
    else if (k == "--samples")
      f.samples = std::stoll(v);
    else if (k == "--overlap")
      f.overlap = v == "1";
    else if (k == "--bucket-mb")
      f.bucket_mb = std::stod(v);
    else if (k == "--out")
      f.out = v;
    else if (k == "--die-rank")
      f.die_rank = std::stoi(v);
    else if (k == "--die-step")
      f.die_step = std::stoll(v);
    else if (k == "--die-how")
      f.die_how = v;
    else if (k == "--bench")
      f.bench = v == "1";
  }
  return f;
}

int Fail(const trialshim::Status& st) {
  std::cerr << "ddp_worker: " << st.message() << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags = Parse(argc, argv);
  torch::set_num_threads(1);
  auto ctx_or = trialshim::trainer::DistributedContext::FromEnvironment(
      trialshim::trainer::DistributedOptions()
          .seed(42)
          .overlap_backward(flags.overlap)
          .bucket_cap_mb(flags.bucket_mb));
  if (!ctx_or.ok()) return Fail(ctx_or.status());
  auto& ctx = *ctx_or;
  const int world = ctx->world_size();
  if (flags.global_batch % world != 0) {
    std::cerr << "ddp_worker: --global-batch must divide by WORLD_SIZE\n";
    return 2;
  }
  const int64_t batch = flags.global_batch / world;

  // The same data on every rank; a learnable labelling.
  torch::manual_seed(1234);
  torch::Tensor x = torch::randn({flags.samples, 64});
  torch::Tensor y = x.matmul(torch::randn({64, 10})).argmax(1);

  torch::manual_seed(7 + 1000 * ctx->rank());  // different on purpose
  torch::nn::Sequential model(torch::nn::Linear(64, 128), torch::nn::ReLU(),
                              torch::nn::Linear(128, 64), torch::nn::ReLU(),
                              torch::nn::Linear(64, 10));
  if (auto st = ctx->PrepareModule(*model); !st.ok()) return Fail(st);
  torch::optim::SGD opt(model->parameters(),
                        torch::optim::SGDOptions(0.05).momentum(0.9));

  std::vector<double> losses;
  double reduce_s = 0;
  auto start = std::chrono::steady_clock::now();
  int64_t step = 0;
  for (int64_t epoch = 0; step < flags.steps; ++epoch) {
    std::vector<int64_t> shard = ctx->ShardIndices(flags.samples, epoch);
    for (size_t b = 0; b + batch <= shard.size() && step < flags.steps;
         b += batch, ++step) {
      if (step == flags.die_step && ctx->rank() == flags.die_rank) {
        if (flags.die_how == "hang") {
          for (;;) pause();
        }
        raise(SIGKILL);
      }
      torch::Tensor idx = torch::tensor(
          std::vector<int64_t>(shard.begin() + b, shard.begin() + b + batch),
          torch::kLong);
      opt.zero_grad();
      torch::Tensor loss = torch::nn::functional::cross_entropy(
          model->forward(x.index({idx})), y.index({idx}));
      loss.backward();
      auto t0 = std::chrono::steady_clock::now();
      if (auto st = ctx->AllReduceGradients(); !st.ok()) return Fail(st);
      reduce_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      opt.step();
      if (!flags.bench) {
        auto mean = ctx->AllReduceMean(loss.item<double>());
        if (!mean.ok()) return Fail(mean.status());
        losses.push_back(*mean);
      }
    }
  }
  if (auto st = ctx->Barrier(); !st.ok()) return Fail(st);
  double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (flags.bench) {
    if (ctx->is_primary()) {
      std::cout << "world=" << world << " steps=" << step
                << " samples_per_s=" << step * flags.global_batch / total_s
                << " allreduce_ms_per_step=" << 1000 * reduce_s / step
                << std::endl;
    }
    return 0;
  }
  nlohmann::json out;
  out["rank"] = ctx->rank();
  out["losses"] = losses;
  std::vector<double> params;
  for (const torch::Tensor& p : model->parameters()) {
    torch::Tensor flat = p.detach().reshape({-1}).to(torch::kDouble);
    params.insert(params.end(), flat.data_ptr<double>(),
                  flat.data_ptr<double>() + flat.numel());
  }
  out["params"] = params;
  std::ofstream(flags.out + "/rank" + std::to_string(ctx->rank()) + ".json")
      << out.dump();
  std::cout << "done, final loss " << losses.back() << std::endl;
  return 0;
}
