#include "trialshim/trainer/callbacks.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "trialshim/trainer/metrics.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {

Status ProgressBar::on_fit_start(Trainer&, Module&) {
  enabled_ = refresh_rate_ > 0 && isatty(2);
  last_drawn_ = {};
  return Status::Ok();
}

Status ProgressBar::on_train_batch_end(Trainer& trainer, Module&,
                                       int64_t batch_idx) {
  if (!enabled_) return Status::Ok();
  const int64_t done = batch_idx + 1;
  const int64_t total = trainer.num_training_batches();
  auto now = std::chrono::steady_clock::now();
  if (done != total && (done % refresh_rate_ != 0 ||
                        now - last_drawn_ < std::chrono::milliseconds(100)))
    return Status::Ok();
  last_drawn_ = now;
  const int width = 24;
  int filled = total > 0 ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\rEpoch %lld: [%s%s] %lld/%lld %s\033[K",
               static_cast<long long>(trainer.current_epoch()),
               std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(),
               static_cast<long long>(done), static_cast<long long>(total),
               JoinMetrics(trainer.progress_bar_metrics()).c_str());
  std::fflush(stderr);
  return Status::Ok();
}

Status ProgressBar::on_train_epoch_end(Trainer&, Module&) {
  Clear();
  return Status::Ok();
}

void ProgressBar::on_exception(Trainer&, Module&, const Status&) { Clear(); }

void ProgressBar::Clear() {
  if (enabled_) std::fputs("\r\033[K", stderr);
}

}  // namespace trialshim::trainer
