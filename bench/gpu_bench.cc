// gpu_bench: training steps per second of one model on one device, through
// the Trainer or through a bare LibTorch loop; bench/gpu_lightning.py is
// the same model in Python Lightning. tests/gpu/run.sh runs all three
// side by side (bench/README.md has the figures).
//
//   gpu_bench trainer|bare small|large PRECISION [steps] [warmup]
//
// small: the digits MLP (64-64-10, batch 64): Python's per-step cost
// dominates. large: 1024-4096-4096-4096-10, batch 1024: the GPU's
// arithmetic dominates. Random inputs and labels from seed 0, kept in
// pinned host memory and copied per batch (DataLoader(pin_memory=True));
// Adam at 1e-3; cross entropy. The timer runs from the end of step
// `warmup` to the end of step warmup + steps, both after a device
// synchronize. Prints one JSON line.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trialshim/trainer/precision.h"
#include "trialshim/trainer/trainer.h"

namespace {

namespace tt = trialshim::trainer;
using trialshim::Status;
using trialshim::StatusOr;
using Clock = std::chrono::steady_clock;

struct Shape {
  int64_t in, hidden, layers, batch;
};

Shape ShapeOf(const std::string& model) {
  return model == "large" ? Shape{1024, 4096, 3, 1024} : Shape{64, 64, 1, 64};
}

torch::nn::Sequential MakeNet(const Shape& s) {
  torch::nn::Sequential net;
  int64_t width = s.in;
  for (int64_t i = 0; i < s.layers; ++i) {
    net->push_back(torch::nn::Linear(width, s.hidden));
    net->push_back(torch::nn::ReLU());
    width = s.hidden;
  }
  net->push_back(torch::nn::Linear(width, 10));
  return net;
}

class Net : public tt::Module {
 public:
  explicit Net(const Shape& s) { net_ = register_module("net", MakeNet(s)); }
  torch::Tensor training_step(const tt::Batch& b, int64_t) override {
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(net_->forward(b.input), b.target);
    log("train_loss", loss);
    return loss;
  }
  StatusOr<tt::OptimizerConfig> configure_optimizers() override {
    tt::OptimizerConfig c;
    c.optimizer = std::make_shared<torch::optim::Adam>(
        parameters(), torch::optim::AdamOptions(1e-3));
    return c;
  }

 private:
  torch::nn::Sequential net_{nullptr};
};

class Data : public tt::DataModule {
 public:
  Data(torch::Tensor x, torch::Tensor y, int64_t batch)
      : loader_(std::make_shared<tt::TensorLoader>(
            x, y, tt::TensorLoaderOptions().batch_size(batch).pin_memory(true))) {}
  std::shared_ptr<tt::Loader> train_dataloader() override { return loader_; }

 private:
  std::shared_ptr<tt::TensorLoader> loader_;
};

void Sync() {
  if (torch::cuda::is_available()) torch::cuda::synchronize();
}

// Times steps warmup+1 .. warmup+steps from on_train_batch_end.
class Timer : public tt::Callback {
 public:
  Timer(int64_t warmup, int64_t steps) : warmup_(warmup), steps_(steps) {}
  std::string state_key() const override { return "Timer"; }
  Status on_train_batch_end(tt::Trainer& t, tt::Module&, int64_t) override {
    if (t.global_step() == warmup_) {
      Sync();
      start_ = Clock::now();
    } else if (t.global_step() == warmup_ + steps_) {
      Sync();
      seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    }
    return Status::Ok();
  }
  double seconds = 0;

 private:
  int64_t warmup_, steps_;
  Clock::time_point start_;
};

double RunTrainer(const Shape& s, const std::string& precision,
                  torch::Tensor x, torch::Tensor y, int64_t steps,
                  int64_t warmup) {
  torch::manual_seed(0);
  Net net(s);
  Data data(x, y, s.batch);
  auto timer = std::make_shared<Timer>(warmup, steps);
  tt::Trainer trainer(tt::TrainerOptions()
                          .max_steps(warmup + steps)
                          .precision(precision)
                          .enable_checkpointing(false)
                          .enable_progress_bar(false)
                          .enable_model_summary(false)
                          .logger(tt::LoggerOption(false))
                          .default_root_dir("/tmp/gpu_bench")
                          .model_dir("/tmp/gpu_bench"));
  trainer.add_callback(timer);
  Status st = trainer.fit(net, data);
  if (!st.ok()) {
    std::fprintf(stderr, "gpu_bench: %s\n", st.message().c_str());
    std::exit(1);
  }
  return timer->seconds;
}

// What a LibTorch user writes: no logging, no checks, no syncs.
double RunBare(const Shape& s, const std::string& precision, torch::Tensor x,
               torch::Tensor y, int64_t steps, int64_t warmup) {
  const torch::Device device =
      torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::manual_seed(0);
  auto net = MakeNet(s);
  net->to(device);
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  std::optional<at::ScalarType> autocast;
  if (precision == "bf16-mixed") autocast = at::kBFloat16;
  if (precision == "16-mixed") autocast = at::kHalf;
  tt::GradScaler scaler;
  x = x.pin_memory();
  y = y.pin_memory();
  const int64_t batches = x.size(0) / s.batch;
  Clock::time_point start;
  for (int64_t step = 0; step < warmup + steps; ++step) {
    if (step == warmup) {
      Sync();
      start = Clock::now();
    }
    const int64_t b = step % batches;
    auto xb = x.slice(0, b * s.batch, (b + 1) * s.batch).to(device, true);
    auto yb = y.slice(0, b * s.batch, (b + 1) * s.batch).to(device, true);
    torch::Tensor loss;
    {
      tt::AutocastGuard guard(device, autocast);
      loss = torch::nn::functional::cross_entropy(net->forward(xb), yb);
    }
    opt.zero_grad();
    if (precision == "16-mixed") {
      scaler.Scale(loss).backward();
      std::vector<torch::Tensor> grads;
      for (auto& p : net->parameters()) grads.push_back(p.grad());
      const bool inf = scaler.UnscaleAndCheck(grads);
      if (!inf) opt.step();
      scaler.Update(inf);
    } else {
      loss.backward();
      opt.step();
    }
  }
  Sync();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: gpu_bench trainer|bare small|large PRECISION "
                 "[steps] [warmup]\n");
    return 2;
  }
  const std::string mode = argv[1], model = argv[2], precision = argv[3];
  const int64_t steps = argc > 4 ? std::atoll(argv[4]) : 500;
  const int64_t warmup = argc > 5 ? std::atoll(argv[5]) : 50;
  const Shape s = ShapeOf(model);
  torch::manual_seed(0);
  const int64_t rows = s.batch * 16;
  torch::Tensor x = torch::randn({rows, s.in});
  torch::Tensor y = torch::randint(0, 10, {rows}, torch::kLong);
  const double seconds =
      mode == "bare" ? RunBare(s, precision, x, y, steps, warmup)
                     : RunTrainer(s, precision, x, y, steps, warmup);
  std::printf(
      "{\"runner\": \"%s\", \"model\": \"%s\", \"precision\": \"%s\", "
      "\"steps\": %lld, \"seconds\": %.6f, \"steps_per_s\": %.2f}\n",
      mode == "bare" ? "libtorch-loop" : "trialshim", model.c_str(),
      precision.c_str(), static_cast<long long>(steps), seconds,
      steps / seconds);
  return 0;
}
