// trainer_bare_loop: the digits training of digits-train's default config
// written as a bare LibTorch loop (no Trainer, no callbacks, no logging),
// to measure the Trainer's overhead. Same data split, model, batch size,
// optimizer (Adam 0.003), cosine schedule with 20 warmup steps, epochs and
// per-epoch validation. Prints one JSON line: steady-state training
// samples/s (epochs after the first) and the final val_acc.
//
//   trainer_bare_loop [threads] [epochs] [batch_size]
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "digits.h"
#include "trialshim/trainer/runtime.h"

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int64_t epochs = argc > 2 ? std::atoll(argv[2]) : 30;
  const int64_t batch = argc > 3 ? std::atoll(argv[3]) : 64;
  trialshim::trainer::SetNumThreads(threads);
  auto data = trialshim::digits::LoadDigits(std::string(TRIALSHIM_DIGITS_DATA));
  if (!data.ok()) {
    std::fprintf(stderr, "%s\n", data.status().message().c_str());
    return 1;
  }
  // The same split as trainer::SplitDataModule (seed 42, 20% validation).
  const int64_t n = data->images.size(0);
  const int64_t n_val = std::llround(n * 0.2);
  auto gen = at::detail::createCPUGenerator(42);
  auto order = torch::randperm(n, gen, torch::kLong);
  auto xv = data->images.index_select(0, order.slice(0, 0, n_val));
  auto yv = data->labels.index_select(0, order.slice(0, 0, n_val));
  auto xt = data->images.index_select(0, order.slice(0, n_val, n));
  auto yt = data->labels.index_select(0, order.slice(0, n_val, n));
  torch::manual_seed(42);
  torch::nn::Sequential net(torch::nn::Linear(64, 128), torch::nn::ReLU(),
                            torch::nn::Dropout(0.1), torch::nn::Linear(128, 64),
                            torch::nn::ReLU(), torch::nn::Dropout(0.1),
                            torch::nn::Linear(64, 10));
  const double lr = 0.003;
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(lr));
  const int64_t per_epoch = (xt.size(0) + batch - 1) / batch;
  const int64_t total = epochs * per_epoch, warmup = 20;
  auto lr_at = [&](int64_t t) {
    if (t < warmup) return lr * (0.01 + 0.99 * t / warmup);
    double p =
        static_cast<double>(std::min(t, total) - warmup) / (total - warmup);
    return lr * 0.5 * (1 + std::cos(M_PI * p));
  };
  int64_t step = 0;
  double samples = 0, seconds = 0, acc = 0;
  for (int64_t e = 0; e < epochs; ++e) {
    auto t0 = std::chrono::steady_clock::now();
    net->train();
    auto g =
        at::detail::createCPUGenerator(42 * 6364136223846793005ULL + e + 1);
    auto perm = torch::randperm(xt.size(0), g, torch::kLong);
    for (int64_t b = 0; b < per_epoch; ++b) {
      auto rows =
          perm.slice(0, b * batch, std::min((b + 1) * batch, xt.size(0)));
      auto x = xt.index_select(0, rows), y = yt.index_select(0, rows);
      for (auto& group : opt.param_groups())
        group.options().set_lr(lr_at(step));
      opt.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
      loss.item<double>();  // a real loop looks at its loss
      loss.backward();
      opt.step();
      ++step;
    }
    double dt =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (e > 0) {
      samples += xt.size(0);
      seconds += dt;
    }
    torch::NoGradGuard no_grad;
    net->eval();
    acc = net->forward(xv)
              .argmax(1)
              .eq(yv)
              .to(torch::kDouble)
              .mean()
              .item<double>();
  }
  std::printf(
      "{\"impl\": \"bare-libtorch\", \"threads\": %d, \"batch\": %lld, "
      "\"samples_per_s\": %.0f, \"val_acc\": %.4f}\n",
      threads, static_cast<long long>(batch), samples / seconds, acc);
  return 0;
}
