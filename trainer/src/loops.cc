#include "loops.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "sigterm.h"
#include "trialshim/hypertune/hypertune.h"
#include "trialshim/trainer/distributed.h"
#include "trialshim/trainer/precision.h"
#include "trialshim/trainer/runtime.h"
#include "trialshim/trainer/step_log.h"

namespace trialshim::trainer {
namespace {

// Gives rank `rank` of `world` every world-th batch of a loader that can not
// shard its rows, wrapping around so every rank gets as many batches.
class StridedShard : public Loader {
 public:
  StridedShard(std::shared_ptr<Loader> inner, int rank, int world)
      : inner_(std::move(inner)), rank_(rank), world_(world) {}
  int64_t num_batches() const override {
    return (inner_->num_batches() + world_ - 1) / world_;
  }
  void set_epoch(int64_t epoch, uint64_t seed) override {
    inner_->set_epoch(epoch, seed);
  }
  Batch batch(int64_t index) const override {
    return inner_->batch((index * world_ + rank_) % inner_->num_batches());
  }

 private:
  std::shared_ptr<Loader> inner_;
  int rank_;
  int world_;
};

// Sum of every parameter and buffer, in double: equal on all ranks when
// their weights are (logged at the end of a ddp fit).
double ParameterChecksum(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (const auto& p : module.parameters())
    sum += p.to(torch::kDouble).sum().item<double>();
  return sum;
}

// The library, device, threads and BLAS this fit runs on.
void LogRuntime(spdlog::logger& log, const torch::Device& device, int threads) {
  BlasInfo blas = DetectBlas();
  log.info("LibTorch {} on {}, {} thread(s), BLAS: {}{}", TORCH_VERSION,
           device.is_cuda() ? "CUDA" : "CPU", threads, blas.name,
           blas.library.empty() ? "" : " (" + blas.library + ")");
  if (blas.is_reference) {
    log.warn(
        "LibTorch runs on the reference BLAS, 7-18x slower than OpenBLAS: "
        "install libopenblas0-pthread (apt-get install libopenblas0-pthread)");
  }
}

// After SIGTERM (or SIGINT, SIGHUP): last.ckpt (when checkpointing) and
// Cancelled, which the program turns into exit code 128 + StopSignal(). `when` says where the fit stopped.
Status CancelForSigterm(Trainer& trainer, bool checkpointing,
                        const std::string& when, const std::string& unsaved) {
  if (!checkpointing) return Status::Cancelled(when + unsaved);
  const std::string path = trainer.checkpoint_dir() + "/last.ckpt";
  TRIALSHIM_RETURN_IF_ERROR(trainer.save_checkpoint(path));
  return Status::Cancelled(when + "; checkpoint saved to " + path);
}

}  // namespace

StatusOr<Metrics> Trainer::EvaluationLoop::run(Module& module, Loader& loader,
                                               int64_t limit) {
  Trainer& t = trainer_;
  // Lightning's inference_mode: torch.inference_mode, else no_grad.
  std::optional<c10::InferenceMode> inference;
  std::optional<torch::NoGradGuard> no_grad;
  if (t.options_.inference_mode()) {
    inference.emplace();
  } else {
    no_grad.emplace();
  }
  module.eval();
  t.step_log_->store().ResetEpoch(stage_);
  loader.set_epoch(0, static_cast<uint64_t>(t.seed_));
  for (int64_t b = 0; b < limit; ++b) {
    Batch batch = t.Prepare(loader.batch(b));
    t.step_log_->BeginStep(stage_, batch.size());
    AutocastGuard autocast(t.device_, t.autocast_);
    if (stage_ == Stage::kTest) {
      module.test_step(batch, b);
    } else {
      module.validation_step(batch, b);
    }
  }
  Metrics out = t.step_log_->store().EpochValues(stage_);
  t.step_log_->store().ResetEpoch(stage_);
  module.train();
  return out;
}

Status Trainer::TrainingEpochLoop::run(Module& module) {
  Trainer& t = trainer_;
  TRIALSHIM_RETURN_IF_ERROR(OnRunStart(module));
  validated_last_batch_ = false;
  for (int64_t b = t.resume_batch_; b < plan_.train_batches; ++b) {
    bool stepped = false;
    TRIALSHIM_RETURN_IF_ERROR(Advance(module, b, &stepped));
    // Validation before the epoch's end (val_check_interval); the last
    // batch's is the epoch's own (OnRunEnd). A stop it asks for ends the
    // epoch, once min_epochs and min_steps allow.
    validated_last_batch_ = b + 1 < plan_.train_batches && ValDue(b);
    if (validated_last_batch_) {
      TRIALSHIM_RETURN_IF_ERROR(Validate(module, /*mid_epoch=*/true));
      if (t.should_stop_ && t.CanStopEarly()) break;
    }
    if (!stepped) continue;
    if (t.StopRequested()) {
      return CancelForSigterm(t, plan_.checkpointing,
                              std::string("stopped by ") +
                                  internal::SigtermGuard::name() +
                                  " at epoch " +
                                  std::to_string(t.epoch_) + ", step " +
                                  std::to_string(t.global_step_),
                              " (checkpointing is off: nothing saved)");
    }
    if (t.MaxStepsReached()) break;
    // Lightning's Timer: a stop after the step, once min_steps and
    // min_epochs allow it; the epoch's validation still runs.
    if (t.MaxTimeReached() && t.CanStopEarly()) {
      t.should_stop_ = true;
      break;
    }
  }
  return OnRunEnd(module);
}

Status Trainer::TrainingEpochLoop::OnRunStart(Module& module) {
  Trainer& t = trainer_;
  started_ = std::chrono::steady_clock::now();
  train_samples_ = 0;
  module.train();
  plan_.train->set_epoch(t.epoch_, static_cast<uint64_t>(t.seed_));
  // A resumed epoch continues: its means and hooks were started before.
  if (t.resume_batch_ != 0) return Status::Ok();
  t.step_log_->store().ResetEpoch(Stage::kTrain);
  for (const auto& c : plan_.callbacks)
    TRIALSHIM_RETURN_IF_ERROR(c->on_train_epoch_start(t, module));
  return Status::Ok();
}

Status Trainer::TrainingEpochLoop::Advance(Module& module, int64_t b,
                                          bool* stepped) {
  Trainer& t = trainer_;
  Batch batch = t.Prepare(plan_.train->batch(b));
  train_samples_ += static_cast<double>(batch.size());
  TRIALSHIM_RETURN_IF_ERROR(
      t.TrainStep(module, batch, b, b + 1 == plan_.train_batches, stepped));
  if (!*stepped) return Status::Ok();
  t.resume_epoch_ = t.epoch_;
  t.resume_batch_ = b + 1;
  if (plan_.step_scheduler) t.optim_.scheduler.scheduler->Step();
  if (t.global_step_ % t.options_.log_every_n_steps() == 0 &&
      !t.step_values_.empty()) {
    t.log_metrics(t.step_values_);
  } else {
    for (const auto& [k, v] : t.step_values_) t.callback_metrics_[k] = v;
  }
  for (const auto& c : plan_.callbacks)
    TRIALSHIM_RETURN_IF_ERROR(c->on_train_batch_end(t, module, b));
  return Status::Ok();
}

// The epoch's training means, then validation when it is due (every
// check_val_every_n_epoch epochs, and at max_steps).
Status Trainer::TrainingEpochLoop::OnRunEnd(Module& module) {
  Trainer& t = trainer_;
  train_seconds_ = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started_)
                       .count();
  t.resume_epoch_ = t.epoch_ + 1;
  t.resume_batch_ = 0;
  train_metrics_ = t.step_log_->store().EpochValues(Stage::kTrain);
  TRIALSHIM_RETURN_IF_ERROR(
      t.SyncMetrics(&train_metrics_, &t.metrics_.sync_dist()));
  if (!train_metrics_.empty()) t.log_metrics(train_metrics_);
  validated_ = false;
  // Also at max_steps, and at a stop (as Lightning's _should_check_val_fx),
  // unless the batch the epoch ended at was just validated.
  if (!plan_.val || plan_.val_batches <= 0 || validated_last_batch_ ||
      !(ValDue(plan_.train_batches - 1) || t.MaxStepsReached() ||
        (t.should_stop_ && t.CanStopEarly()))) {
    return Status::Ok();
  }
  TRIALSHIM_RETURN_IF_ERROR(Validate(module, /*mid_epoch=*/false));
  validated_ = true;
  return Status::Ok();
}

bool Trainer::TrainingEpochLoop::ValDue(int64_t b) const {
  const Trainer& t = trainer_;
  if (!plan_.val || plan_.val_batches <= 0) return false;
  const std::optional<int64_t>& every = t.options_.check_val_every_n_epoch();
  if (every && (t.epoch_ + 1) % *every != 0) return false;
  // Unset check_val_every_n_epoch: batches counted across epochs.
  const int64_t iteration = every ? b : t.epoch_ * plan_.train_batches + b;
  return (iteration + 1) % plan_.val_check_batch == 0;
}

Status Trainer::TrainingEpochLoop::Validate(Module& module, bool mid_epoch) {
  Trainer& t = trainer_;
  TRIALSHIM_ASSIGN_OR_RETURN(
      Metrics vm, EvaluationLoop(t, Stage::kValidate)
                      .run(module, *plan_.val, plan_.val_batches));
  // Averaged over ranks, so every rank's callbacks decide alike.
  TRIALSHIM_RETURN_IF_ERROR(t.SyncMetrics(&vm, nullptr));
  t.log_metrics(vm);
  t.validated_once_ = true;
  t.validating_mid_epoch_ = mid_epoch;
  Status st;
  for (const auto& c : plan_.callbacks) {
    st = c->on_validation_end(t, module);
    if (!st.ok()) break;
  }
  t.validating_mid_epoch_ = false;
  TRIALSHIM_RETURN_IF_ERROR(st);
  // The epoch's own validation is reported at the epoch's end.
  if (mid_epoch) TRIALSHIM_RETURN_IF_ERROR(t.ReportHypertune());
  return Status::Ok();
}

Status Trainer::FitLoop::run(Module& module, DataModule& data) {
  trainer_.time_elapsed_ = 0;  // a resumed checkpoint's count replaces it
  trainer_.fit_started_ = std::chrono::steady_clock::now();
  TRIALSHIM_RETURN_IF_ERROR(SetupData(module, data));
  TRIALSHIM_RETURN_IF_ERROR(SetLimits());
  TRIALSHIM_RETURN_IF_ERROR(OnRunStart(module));
  internal::SigtermGuard sigterm(trainer_.options_.handle_sigterm());
  TRIALSHIM_RETURN_IF_ERROR(OnFitStart(module));
  TrainingEpochLoop epoch_loop(trainer_, plan_);
  while (!Done()) {
    TRIALSHIM_RETURN_IF_ERROR(epoch_loop.run(module));
    TRIALSHIM_RETURN_IF_ERROR(OnAdvanceEnd(module, epoch_loop));
  }
  return OnRunEnd(module);
}

// The device, the ranks, and the loaders (each rank's shard).
Status Trainer::FitLoop::SetupData(Module& module, DataModule& data) {
  Trainer& t = trainer_;
  TRIALSHIM_RETURN_IF_ERROR(t.Setup(module, /*launch=*/true));
  t.module_ = &module;
  module.trainer_ = &t;
  module.metrics_ = t.step_log_.get();
  TRIALSHIM_RETURN_IF_ERROR(t.SetupStrategy());
  TRIALSHIM_RETURN_IF_ERROR(data.setup(Stage::kTrain));
  plan_.train = data.train_dataloader();
  plan_.val = data.val_dataloader();
  if (!plan_.train)
    return Status::InvalidArgument("the DataModule has no train_dataloader");
  // Each rank trains on its own shard (one rank too: DistributedSampler's
  // order, so one rank and N with the same global batch see the same
  // samples per step). Validation is not sharded: every
  // rank evaluates the whole set, so its metrics are exactly one process's
  // (DistributedSampler's padding would count some samples twice).
  auto& dist = t.dist_;
  if (dist && !plan_.train->set_shard(dist->rank(), dist->world_size()) &&
      t.distributed_group()) {
    t.console().warn(
        "the train loader can not shard its rows (Loader::set_shard): each "
        "rank takes every {}-th batch",
        dist->world_size());
    plan_.train = std::make_shared<StridedShard>(plan_.train, dist->rank(),
                                                 dist->world_size());
  }
  return Status::Ok();
}

// Batches per epoch, epochs, and the optimizer steps of the whole fit.
Status Trainer::FitLoop::SetLimits() {
  Trainer& t = trainer_;
  const TrainerOptions& o = t.options_;
  plan_.dev_run = o.fast_dev_run() > 0;
  plan_.train_batches = o.limit_train_batches().Apply(plan_.train->num_batches());
  plan_.val_batches =
      plan_.val ? o.limit_val_batches().Apply(plan_.val->num_batches()) : 0;
  // Lightning's _parse_loop_limits (loops/utilities.py): unset is 1000
  // epochs unless max_steps or max_time bounds the run; -1 is no limit.
  if (!o.max_epochs()) {
    t.max_epochs_ = o.max_steps() < 0 && o.max_time() < 0 ? 1000 : -1;
    if (t.max_epochs_ == 1000) {
      t.console().warn(
          "trainer.max_epochs was not set; setting it to 1000 epochs. To "
          "train without an epoch limit, set trainer.max_epochs=-1");
    }
  } else {
    t.max_epochs_ = *o.max_epochs();
  }
  if (t.max_epochs_ < 0) t.max_epochs_ = INT64_MAX;
  if (plan_.dev_run) {
    plan_.train_batches = std::min(plan_.train_batches, o.fast_dev_run());
    plan_.val_batches = std::min(plan_.val_batches, o.fast_dev_run());
    t.max_epochs_ = 1;
  }
  if (plan_.train_batches <= 0) {
    return Status::InvalidArgument(
        "no training batches (check the data and trainer.limit_train_batches)");
  }
  t.num_training_batches_ = plan_.train_batches;
  // Lightning's _DataConnector val_check_batch.
  const BatchLimit& interval = o.val_check_interval();
  if (interval.is_fraction) {
    plan_.val_check_batch = std::max<int64_t>(
        1, static_cast<int64_t>(plan_.train_batches * interval.fraction));
  } else {
    plan_.val_check_batch = interval.count;
    if (interval.count > plan_.train_batches &&
        o.check_val_every_n_epoch()) {
      return Status::InvalidArgument(
          "trainer.val_check_interval (" + std::to_string(interval.count) +
          ") must be less than or equal to the number of the training "
          "batches (" + std::to_string(plan_.train_batches) +
          "). To validate across epochs, set "
          "trainer.check_val_every_n_epoch=null");
    }
  }
  const int64_t accumulate = o.accumulate_grad_batches();
  const int64_t steps_per_epoch =
      (plan_.train_batches + accumulate - 1) / accumulate;
  t.stepping_batches_ = t.max_epochs_ == INT64_MAX
                            ? o.max_steps()
                            : t.max_epochs_ * steps_per_epoch;
  if (o.max_steps() >= 0 &&
      (t.stepping_batches_ < 0 || o.max_steps() < t.stepping_batches_)) {
    t.stepping_batches_ = o.max_steps();
  }
  return Status::Ok();
}

// Threads, the optimizer, the callbacks, then the resumed state or a seed,
// the ranks' agreement on both, and the tuning reporter.
Status Trainer::FitLoop::OnRunStart(Module& module) {
  Trainer& t = trainer_;
  const int threads = ChooseNumThreads(t.options_.num_threads());
  SetNumThreads(threads);
  LogRuntime(t.console(), t.device_, threads);
  TRIALSHIM_ASSIGN_OR_RETURN(t.optim_, module.configure_optimizers());
  if (!t.optim_.optimizer) {
    return Status::InvalidArgument(
        "configure_optimizers returned no optimizer");
  }
  plan_.step_scheduler =
      t.optim_.scheduler.scheduler &&
      t.optim_.scheduler.interval == SchedulerInterval::kStep;
  TRIALSHIM_RETURN_IF_ERROR(ConfigureCallbacks());
  if (plan_.checkpointing && t.primary_) {
    TRIALSHIM_RETURN_IF_ERROR(t.LockCheckpointDir());
  }
  if (plan_.checkpointing && t.options_.ckpt_path() != "none") {
    TRIALSHIM_RETURN_IF_ERROR(t.Resume(module));
  }
  if (t.resumed_from_.empty()) {
    t.seed_ = t.options_.seed();
    if (t.seed_ < 0)
      t.seed_ = static_cast<int64_t>(std::random_device{}() & 0x7fffffff);
  }
  TRIALSHIM_RETURN_IF_ERROR(t.SetupDistributed(module));
  if (t.resumed_from_.empty()) {
    torch::manual_seed(static_cast<uint64_t>(t.seed_));
    t.console().info("Seed: {}", t.seed_);
  }
  TRIALSHIM_RETURN_IF_ERROR(t.LogHyperparams(module));
  if (!t.options_.hypertune_monitor().empty() && !plan_.dev_run &&
      t.primary_) {
    const char* rank = std::getenv("RANK");
    if (t.dist_ || rank == nullptr || std::string(rank) == "0") {
      t.hypertune_ = std::make_unique<hypertune::HypertuneReporter>(
          hypertune::HypertuneReporter::FromEnvironment());
    }
  }
  return Status::Ok();
}

// As Lightning: a ModelCheckpoint unless one was given or checkpointing is
// off, and a ProgressBar when enable_progress_bar.
Status Trainer::FitLoop::ConfigureCallbacks() {
  Trainer& t = trainer_;
  plan_.checkpointing = t.options_.enable_checkpointing() && !plan_.dev_run;
  bool has_checkpoint = false;
  bool has_bar = false;
  for (const auto& c : t.callbacks_) {
    has_checkpoint |= c->is_checkpoint_callback();
    has_bar |= dynamic_cast<ProgressBar*>(c.get()) != nullptr;
  }
  if (plan_.checkpointing && !has_checkpoint)
    t.add_callback(std::make_shared<ModelCheckpoint>());
  if (!plan_.checkpointing) {
    std::vector<std::shared_ptr<Callback>> kept;
    for (auto& c : t.callbacks_)
      if (!c->is_checkpoint_callback()) kept.push_back(c);
    t.callbacks_ = kept;
  }
  if (has_bar && !t.options_.enable_progress_bar()) {
    return Status::InvalidArgument(
        "trainer.enable_progress_bar=false, but a ProgressBar callback was "
        "added");
  }
  if (!has_bar && t.options_.enable_progress_bar())
    t.add_callback(std::make_shared<ProgressBar>());
  // As Lightning's _configure_model_summary_callback: a ModelSummary when
  // enable_model_summary and none was given.
  bool has_summary = false;
  for (const auto& c : t.callbacks_)
    has_summary |= dynamic_cast<ModelSummary*>(c.get()) != nullptr;
  if (!has_summary && t.options_.enable_model_summary())
    t.add_callback(std::make_shared<ModelSummary>());
  plan_.callbacks.clear();
  for (auto& c : t.OrderedCallbacks()) {
    if (t.primary_ || !c->is_checkpoint_callback())
      plan_.callbacks.push_back(c);
  }
  return Status::Ok();
}

// on_fit_start, then a sanity validation: it catches a broken
// validation_step before an epoch of training is spent; its metrics are
// discarded.
Status Trainer::FitLoop::OnFitStart(Module& module) {
  Trainer& t = trainer_;
  for (const auto& c : plan_.callbacks)
    TRIALSHIM_RETURN_IF_ERROR(c->on_fit_start(t, module));
  const int64_t sanity_steps = t.options_.num_sanity_val_steps();
  if (plan_.val && t.resumed_from_.empty() && sanity_steps != 0 &&
      !plan_.dev_run) {
    // -1: every validation batch, as Lightning.
    const int64_t steps = sanity_steps < 0
                              ? plan_.val_batches
                              : std::min(plan_.val_batches, sanity_steps);
    auto ignored =
        EvaluationLoop(t, Stage::kSanity).run(module, *plan_.val, steps);
    if (!ignored.ok()) return ignored.status().WithPrefix("sanity validation");
  }
  if (t.epoch_ >= t.max_epochs_ || t.MaxStepsReached()) {
    t.console().info("Training already complete (epoch {}, step {})", t.epoch_,
                     t.global_step_);
    if (t.validated_once_) TRIALSHIM_RETURN_IF_ERROR(t.ReportHypertune());
  }
  return Status::Ok();
}

bool Trainer::FitLoop::Done() const {
  const Trainer& t = trainer_;
  return t.epoch_ >= t.max_epochs_ || t.MaxStepsReached() || t.should_stop_;
}

// After an epoch's batches and validation: the epoch scheduler, the epoch
// hooks, the ranks' agreement to stop, the tuning report, and a stop on
// SIGTERM between epochs.
Status Trainer::FitLoop::OnAdvanceEnd(Module& module,
                                      const TrainingEpochLoop& epoch) {
  Trainer& t = trainer_;
  auto& sched = t.optim_.scheduler;
  if (sched.scheduler && !plan_.step_scheduler) {
    double metric = std::nan("");
    if (sched.scheduler->needs_metric()) {
      auto it = t.callback_metrics_.find(sched.monitor);
      if (it != t.callback_metrics_.end() && epoch.validated())
        metric = it->second;
    }
    sched.scheduler->Step(metric);
  }
  if (t.MaxTimeReached()) t.should_stop_ = true;
  if (t.should_stop_ && !t.CanStopEarly()) t.should_stop_ = false;
  for (const auto& c : plan_.callbacks)
    TRIALSHIM_RETURN_IF_ERROR(c->on_train_epoch_end(t, module));
  if (t.distributed_group()) {
    // A stop decided on any rank (a callback watching its own metrics,
    // SIGTERM during validation) stops them all at this epoch.
    std::vector<double> flags = {
        t.should_stop_ ? 1.0 : 0.0,
        internal::SigtermGuard::requested() ? 1.0 : 0.0};
    Metrics none;
    TRIALSHIM_RETURN_IF_ERROR(t.SyncMetrics(&none, nullptr, &flags));
    t.should_stop_ = flags[0] > 0;
    t.stop_agreed_ = t.stop_agreed_ || flags[1] > 0;
  }
  if (epoch.validated()) TRIALSHIM_RETURN_IF_ERROR(t.ReportHypertune());
  TRIALSHIM_RETURN_IF_ERROR(t.SaveLoggers());
  LogEpoch(epoch);
  ++t.epoch_;
  if (t.StopRequested() && t.epoch_ < t.max_epochs_ && !t.should_stop_ &&
      !t.MaxStepsReached()) {
    return CancelForSigterm(
        t, plan_.checkpointing,
        std::string("stopped by ") + internal::SigtermGuard::name() +
            " after epoch " + std::to_string(t.epoch_ - 1),
        "");
  }
  return Status::Ok();
}

// One line per epoch: its training means, its validation, the throughput.
void Trainer::FitLoop::LogEpoch(const TrainingEpochLoop& epoch) const {
  const Trainer& t = trainer_;
  double secs = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - epoch.started())
                    .count();
  Metrics shown = epoch.train_metrics();
  for (const auto& [k, v] : t.callback_metrics_) {
    if (k.rfind("val_", 0) == 0 && epoch.validated()) shown[k] = v;
  }
  t.console().info(
      "Epoch {}: step {} {} ({:.3f}s, train {:.0f} samples/s)", t.epoch_,
      t.global_step_, JoinMetrics(shown), secs,
      epoch.train_samples() / std::max(epoch.train_seconds(), 1e-9));
  for (const auto& c : t.callbacks_) {
    if (auto* es = dynamic_cast<EarlyStopping*>(c.get());
        es && t.should_stop_ && !es->reason().empty()) {
      t.console().info("Early stopping: {}", es->reason());
    }
  }
}

Status Trainer::FitLoop::OnRunEnd(Module& module) {
  Trainer& t = trainer_;
  if (t.skipped_steps_ > 0)
    t.console().warn("{} step(s) skipped for non-finite values",
                     t.skipped_steps_);
  for (const auto& c : plan_.callbacks)
    TRIALSHIM_RETURN_IF_ERROR(c->on_fit_end(t, module));
  if (t.dist_) {
    t.console().info("ddp: rank {} parameter checksum {:.17g}", t.dist_->rank(),
                     ParameterChecksum(module));
  }
  if (!plan_.dev_run && t.primary_)
    TRIALSHIM_RETURN_IF_ERROR(t.SaveFinalModel(module));
  return Status::Ok();
}

}  // namespace trialshim::trainer
