#include "trialshim/trainer/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>

#include "device_launcher.h"
#include "loops.h"
#include "run_identity.h"
#include "sigterm.h"
#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/hypertune/hypertune.h"
#include "trialshim/trainer/checkpoint.h"
#include "trialshim/trainer/distributed.h"
#include "trialshim/trainer/precision.h"
#include "trialshim/trainer/step_log.h"

namespace trialshim::trainer {
namespace {

namespace fs = std::filesystem;

std::string Fmt(double v) { return FormatPythonFloat(v); }

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v) ? std::string(v) : fallback;
}

// Module::save with every tensor copied to the CPU, so that model.pt
// loads on any machine (torch::load restores a tensor on the device it was
// saved from).
void SaveOnCpu(const torch::nn::Module& module,
               torch::serialize::OutputArchive& archive) {
  for (const auto& p : module.named_parameters(/*recurse=*/false)) {
    archive.write(p.key(), p.value().detach().cpu().requires_grad_(
                               p.value().requires_grad()));
  }
  for (const auto& b : module.named_buffers(/*recurse=*/false)) {
    archive.write(b.key(), b.value().detach().cpu(), /*is_buffer=*/true);
  }
  for (const auto& c : module.named_children()) {
    torch::serialize::OutputArchive child(archive.compilation_unit());
    SaveOnCpu(*c.value(), child);
    archive.write(c.key(), child);
  }
}

nlohmann::json MetricsJson(const Metrics& m) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : m) {
    if (std::isfinite(value)) out[name] = value;  // JSON has no NaN
  }
  return out;
}

// An integer environment variable; `fallback` when unset.
StatusOr<int64_t> EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 0) {
    return Status::InvalidArgument(std::string(name) +
                                   ": expected an int >= 0, got \"" + v + "\"");
  }
  return static_cast<int64_t>(n);
}

// trainer.strategy and trainer.devices against the environment: whether
// this fit is data-parallel.
StatusOr<bool> UseDdp(const TrainerOptions& o) {
  TRIALSHIM_ASSIGN_OR_RETURN(int64_t world, EnvInt("WORLD_SIZE", 0));
  TRIALSHIM_ASSIGN_OR_RETURN(int64_t local, EnvInt("LOCAL_WORLD_SIZE", 1));
  const std::string launch =
      "start the ranks with `trialshim launch --nproc N -- PROGRAM ...`, "
      "or as the command of a Vertex worker pool";
  // Without a launcher the trainer has started devices processes itself
  // (accelerator.cc), so a mismatch is a launcher's.
  if (o.devices() > 0 && o.devices() != local) {
    return Status::InvalidArgument(
        "trainer.devices=" + std::to_string(o.devices()) +
        ", but the launcher started " + std::to_string(local) +
        " process(es) on this machine (LOCAL_WORLD_SIZE): start " +
        std::to_string(o.devices()) + " (`trialshim launch --nproc " +
        std::to_string(o.devices()) +
        "`), or leave LOCAL_RANK unset and the trainer starts them");
  }
  // Lightning checks WORLD_SIZE == num_nodes * devices; the launcher here
  // sets both, so the check is the same without spawning.
  if (o.num_nodes() > 1 && world != o.num_nodes() * local) {
    return Status::InvalidArgument(
        "trainer.num_nodes=" + std::to_string(o.num_nodes()) +
        ", but WORLD_SIZE=" + std::to_string(world) + " is not num_nodes x " +
        std::to_string(local) +
        " process(es) per machine (LOCAL_WORLD_SIZE): " + launch);
  }
  if (o.strategy() == "ddp") {
    if (world < 1) {
      return Status::InvalidArgument(
          "trainer.strategy=ddp, but WORLD_SIZE is not set: " + launch);
    }
    return true;
  }
  if (o.strategy() == "single_device" && world > 1) {
    return Status::InvalidArgument(
        "trainer.strategy=single_device, but WORLD_SIZE=" +
        std::to_string(world) +
        ": every rank would train alone and write the same files; use "
        "trainer.strategy=ddp (or auto), or start one process");
  }
  return o.strategy() == "auto" && world > 1;
}

}  // namespace

int Trainer::global_rank() const { return dist_ ? dist_->rank() : 0; }
int Trainer::world_size() const { return dist_ ? dist_->world_size() : 1; }
bool Trainer::distributed_group() const {
  return dist_ && dist_->world_size() > 1;
}

bool Trainer::StopRequested() {
  return distributed_group() ? stop_agreed_
                             : internal::SigtermGuard::requested();
}

Status Trainer::SyncMetrics(Metrics* metrics, const std::set<std::string>* only,
                            std::vector<double>* flags) {
  if (!distributed_group()) return Status::Ok();
  std::vector<std::string> names;
  std::string joined;
  for (const auto& [name, value] : *metrics) {
    if (only != nullptr && !only->count(name)) continue;
    names.push_back(name);
    joined += name + "\n";
  }
  // The names travel as a count and a hash, so a rank that logged other
  // metrics is an error instead of a silently wrong mean.
  std::vector<double> v = {
      static_cast<double>(names.size()),
      static_cast<double>(std::hash<std::string>{}(joined) % (1u << 30))};
  const size_t nflags = flags ? flags->size() : 0;
  if (flags) v.insert(v.end(), flags->begin(), flags->end());
  for (const auto& n : names) v.push_back(metrics->at(n));
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<double> mean, dist_->AllReduceMean(v));
  if (mean[0] != v[0] || mean[1] != v[1]) {
    return Status::Internal(
        "rank " + std::to_string(dist_->rank()) +
        ": the ranks logged different metrics (this one: " + joined +
        "); every rank must log the same names in the same steps");
  }
  for (size_t i = 0; i < nflags; ++i) (*flags)[i] = mean[2 + i];
  for (size_t i = 0; i < names.size(); ++i)
    (*metrics)[names[i]] = mean[2 + nflags + i];
  return Status::Ok();
}

Status Trainer::SetupStrategy() {
  TRIALSHIM_ASSIGN_OR_RETURN(bool ddp, UseDdp(options_));
  if (!ddp) return Status::Ok();
  // As Lightning's ddp: NCCL for CUDA tensors, gloo for the CPU's.
  TRIALSHIM_ASSIGN_OR_RETURN(
      dist_, DistributedContext::FromEnvironment(DistributedOptions().backend(
                 device_.is_cuda() ? "nccl" : "gloo")));
  dist_->set_device(device_);
  primary_ = dist_->is_primary();
  console().info("ddp: rank {} of {} ({}), only rank 0 writes files",
                 dist_->rank(), dist_->world_size(), dist_->backend());
  return Status::Ok();
}

Status Trainer::SetupDistributed(Module& module) {
  if (!dist_) return Status::Ok();
  if (distributed_group()) {
    // Rank 0's seed (a random one differs per rank), and a check that every
    // rank resumed from the same place.
    std::vector<double> v = {
        primary_ ? static_cast<double>(seed_) : 0.0,
        static_cast<double>(epoch_), static_cast<double>(resume_batch_),
        static_cast<double>(global_step_), resumed_from_.empty() ? 0.0 : 1.0};
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<double> mean,
                               dist_->AllReduceMean(v));
    seed_ = std::llround(mean[0] * dist_->world_size());
    for (size_t i = 1; i < v.size(); ++i) {
      if (mean[i] != v[i]) {
        return Status::InvalidArgument(
            "rank " + std::to_string(dist_->rank()) + " resumed from " +
            (resumed_from_.empty() ? std::string("no checkpoint")
                                   : resumed_from_) +
            " (epoch " + std::to_string(epoch_) + ", global step " +
            std::to_string(global_step_) +
            "), but other ranks did not: every rank must see the same "
            "checkpoint directory (" +
            checkpoint_dir_ +
            "; on Vertex AIP_CHECKPOINT_DIR), or set trainer.ckpt_path");
      }
    }
  }
  // Parameters (loaded or fresh) from rank 0, and the gradient buckets.
  return dist_->PrepareModule(module);
}

Trainer::Trainer(TrainerOptions options) : options_(std::move(options)) {
  if (!options_.console()) options_.console(spdlog::default_logger());
  root_dir_ = options_.default_root_dir().empty()
                  ? "."
                  : MapGcsUri(options_.default_root_dir());
  const LoggerOption& logger = options_.logger();
  if (logger.enabled) {
    loggers_ = logger.loggers.empty() && logger.config.is_null()
                   ? DefaultLoggers()
                   : logger.loggers;
  }
  step_log_ = std::make_unique<StepLog>(&metrics_);
  // Now, so that a logger's log_dir is known before fit, as in Lightning.
  for (const auto& l : loggers_) l->set_default_save_dir(root_dir_);
}

Trainer::~Trainer() = default;

Trainer& Trainer::add_callback(std::shared_ptr<Callback> callback) {
  callbacks_.push_back(std::move(callback));
  return *this;
}

std::vector<std::shared_ptr<Callback>> Trainer::OrderedCallbacks() const {
  std::vector<std::shared_ptr<Callback>> out;
  for (const auto& c : callbacks_) {
    if (!c->is_checkpoint_callback()) out.push_back(c);
  }
  for (const auto& c : callbacks_) {
    if (c->is_checkpoint_callback()) out.push_back(c);
  }
  return out;
}

Metrics Trainer::progress_bar_metrics() const {
  Metrics out;
  for (const auto& [name, value] : step_values_) {
    if (metrics_.prog_bar().count(name)) out[name] = value;
  }
  return out;
}

void Trainer::log_metrics(const Metrics& metrics) {
  log_metrics(metrics, std::max<int64_t>(0, global_step_ - 1), epoch_);
}

void Trainer::log_metrics(const Metrics& metrics, int64_t step,
                          std::optional<int64_t> epoch) {
  for (const auto& [name, value] : metrics) callback_metrics_[name] = value;
  if (!primary_) return;
  for (const auto& logger : loggers_) {
    Status s = logger->log_metrics(metrics, step, epoch);
    if (logger_error_.ok()) logger_error_ = s;
  }
}

Status Trainer::SaveLoggers(const char* finalize_status) {
  Status out = logger_error_;
  logger_error_ = Status::Ok();
  if (!primary_) return out;
  for (const auto& logger : loggers_) {
    Status s =
        finalize_status ? logger->finalize(finalize_status) : logger->save();
    if (out.ok()) out = s;
  }
  return out;
}

Status Trainer::LogHyperparams(const Module& module) {
  if (!primary_) return Status::Ok();
  const config::Node params =
      module.hparams().is_null() ? config::Node::MakeMap() : module.hparams();
  for (const auto& logger : loggers_) {
    TRIALSHIM_RETURN_IF_ERROR(logger->log_hyperparams(params));
    TRIALSHIM_RETURN_IF_ERROR(logger->save());
  }
  return Status::Ok();
}

Status Trainer::Setup(Module& module, bool launch) {
  checkpoint_dir_ = MapGcsUri(options_.checkpoint_dir());
  if (checkpoint_dir_.empty()) {
    checkpoint_dir_ = MapGcsUri(EnvOr("AIP_CHECKPOINT_DIR", ""));
  }
  if (checkpoint_dir_.empty()) checkpoint_dir_ = root_dir_ + "/checkpoints";
  while (checkpoint_dir_.size() > 1 && checkpoint_dir_.back() == '/') {
    checkpoint_dir_.pop_back();
  }
  if (!options_.logger().config.is_null() &&
      options_.logger().loggers.empty()) {
    return Status::InvalidArgument(
        "trainer.logger holds logger nodes (_target_) that were not "
        "instantiated: make the Trainer with MakeTrainer (trainer/app.h), "
        "or set TrainerOptions::logger to Logger objects");
  }

  TRIALSHIM_RETURN_IF_ERROR(SetupDevice(launch));
  TRIALSHIM_RETURN_IF_ERROR(SetupPrecision(module));
  if (options_.deterministic()) {
    // cuBLAS is deterministic only with a fixed workspace, which must be
    // set before its first use; Lightning sets the same.
    if (device_.is_cuda()) setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
    at::globalContext().setDeterministicAlgorithms(
        true, /*warn_only=*/options_.deterministic_warn_only());
  }
  // cuDNN's autotuner; LibTorch on CPU has nothing to tune.
  at::globalContext().setBenchmarkCuDNN(options_.benchmark());
  torch::autograd::AnomalyMode::set_enabled(options_.detect_anomaly());
  return Status::Ok();
}

Status Trainer::fit(Module& module, DataModule& data) {
  Status status;
  try {
    status = FitLoop(*this).run(module, data);
  } catch (const c10::OutOfMemoryError& e) {
    status = OutOfMemory(e);
  } catch (const c10::Error& e) {
    status = Status::Internal(std::string("LibTorch error at epoch ") +
                              std::to_string(epoch_) + ", step " +
                              std::to_string(global_step_) + ": " +
                              e.what_without_backtrace());
  } catch (const std::exception& e) {
    status = Status::Internal(std::string("error at epoch ") +
                              std::to_string(epoch_) + ", step " +
                              std::to_string(global_step_) + ": " + e.what());
  }
  if (!status.ok()) {
    for (const auto& c : callbacks_) c->on_exception(*this, module, status);
  }
  module.trainer_ = nullptr;
  module.metrics_ = nullptr;
  module_ = nullptr;
  // Lightning's statuses: success, interrupted (a signal), failed.
  Status saved =
      SaveLoggers(status.ok()                               ? "success"
                  : status.code() == StatusCode::kCancelled ? "interrupted"
                                                            : "failed");
  if (status.ok()) status = saved;
  // The group ends with the fit (a second fit joins again), and so does
  // the hold on the checkpoint directory; the ranks this process started
  // end with their fits.
  dist_.reset();
  if (launcher_) {
    Status ranks = status.ok() ? launcher_->Wait() : Status::Ok();
    if (status.ok()) status = ranks;
    launcher_.reset();
  }
  checkpoint_lock_.reset();
  time_elapsed_ = TimeElapsed();
  fit_started_ = {};
  primary_ = true;
  stop_agreed_ = false;
  return status;
}

Status Trainer::NonFinite(const std::string& what, double value,
                          int64_t batch_idx) {
  double lr = optim_.optimizer->param_groups().empty()
                  ? 0
                  : optim_.optimizer->param_groups()[0].options().get_lr();
  std::string where =
      what + " (" + Fmt(value) + ") at epoch " + std::to_string(epoch_) +
      ", batch " + std::to_string(batch_idx) + ", global step " +
      std::to_string(global_step_) + ", learning rate " + Fmt(lr);
  if (options_.on_nonfinite() == "skip") {
    if (skipped_steps_ < 10) console().warn("{}: skipping this step", where);
    group_nonfinite_ = true;
    return Status::Ok();
  }
  return Status::InvalidArgument(
      where +
      ". Try a lower learning rate, a warmup (scheduler.name=cosine "
      "scheduler.warmup=N), gradient clipping (trainer.gradient_clip_val=1.0), "
      "or trainer.detect_anomaly=true to find the operation; "
      "trainer.on_nonfinite=skip drops such steps instead");
}

Status Trainer::TrainStep(Module& module, const Batch& batch, int64_t batch_idx,
                          bool last_in_epoch, bool* stepped) {
  auto& opt = *optim_.optimizer;
  const int64_t accumulate = options_.accumulate_grad_batches();
  last_batch_size_ = batch.size();
  step_log_->BeginStep(Stage::kTrain, batch.size());
  torch::Tensor loss;
  {
    AutocastGuard autocast(device_, autocast_);
    loss = module.training_step(batch, batch_idx);
  }
  if (!loss.defined() || loss.numel() != 1) {
    return Status::InvalidArgument("training_step must return a scalar loss");
  }
  TRIALSHIM_RETURN_IF_ERROR(CheckLoss(loss, batch_idx));
  if (!group_nonfinite_) {
    torch::Tensor l =
        accumulate > 1 ? loss / static_cast<double>(accumulate) : loss;
    (scaler_ ? scaler_->Scale(l) : l).backward();
  }
  // Every rank all-reduces after every batch, backward or not, so the
  // collectives stay in step; the average is added to what .grad holds,
  // so accumulation and (below) clipping see the global gradient.
  if (dist_) TRIALSHIM_RETURN_IF_ERROR(dist_->AllReduceGradients());
  ++accumulated_;
  if (accumulated_ < accumulate && !last_in_epoch) return Status::Ok();
  accumulated_ = 0;
  // On CUDA the logged values reach the host only when something reads
  // them (step_log.h): the loggers every log_every_n_steps steps, the
  // epoch's end, ddp's per-step agreement.
  if (!step_log_->deferred() || distributed_group() || last_in_epoch ||
      (global_step_ + 1) % options_.log_every_n_steps() == 0) {
    TRIALSHIM_RETURN_IF_ERROR(CheckDeferredLosses(batch_idx));
    step_values_ = step_log_->store().step_values();
  }
  if (distributed_group()) {
    // One collective per optimizer step agrees on SIGTERM and on skipping a
    // non-finite step (each seen by some ranks only), and averages the
    // sync_dist step metrics.
    std::vector<double> flags = {
        internal::SigtermGuard::requested() ? 1.0 : 0.0,
        group_nonfinite_ ? 1.0 : 0.0};
    TRIALSHIM_RETURN_IF_ERROR(
        SyncMetrics(&step_values_, &metrics_.sync_dist(), &flags));
    stop_agreed_ = stop_agreed_ || flags[0] > 0;
    group_nonfinite_ = flags[1] > 0;
  }
  // 16-mixed: the gradients unscaled before clipping, as Lightning's
  // MixedPrecision plugin does; inf/NaN there is the scaler's to handle
  // (skip the step, back off), not an error.
  const bool scaled_step_ok = group_nonfinite_ || UnscaleGradients();
  std::vector<torch::Tensor> params;
  if (scaled_step_ok &&
      (options_.gradient_clip_val() > 0 ||
       (options_.on_nonfinite() == "skip" && !scaler_))) {
    for (const auto& group : opt.param_groups()) {
      for (const auto& p : group.params()) {
        if (p.grad().defined()) params.push_back(p);
      }
    }
  }
  if (!group_nonfinite_ && !params.empty()) {
    double norm = std::nan("");
    if (options_.gradient_clip_val() > 0 &&
        options_.gradient_clip_algorithm() == "norm") {
      norm = torch::nn::utils::clip_grad_norm_(params,
                                               options_.gradient_clip_val());
    } else {
      torch::Tensor total = torch::zeros(
          {}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
      for (const auto& p : params) total += p.grad().sum().to(torch::kDouble);
      norm = total.item<double>();
    }
    if (!std::isfinite(norm) && !scaler_) {
      TRIALSHIM_RETURN_IF_ERROR(
          NonFinite("non-finite gradient", norm, batch_idx));
    } else if (options_.gradient_clip_val() > 0 &&
               options_.gradient_clip_algorithm() == "value") {
      torch::nn::utils::clip_grad_value_(params, options_.gradient_clip_val());
    }
  }
  if (group_nonfinite_) {
    opt.zero_grad();
    group_nonfinite_ = false;
    ++skipped_steps_;
    return Status::Ok();
  }
  // A step the scaler skips still counts, as in Lightning (its progress
  // counts optimizer_step calls; GradScaler.step skips inside).
  if (scaled_step_ok) opt.step();
  if (scaler_) scaler_->Update(!scaled_step_ok);
  opt.zero_grad();
  ++global_step_;
  *stepped = true;
  return Status::Ok();
}

Status Trainer::CheckLoss(const torch::Tensor& loss, int64_t batch_idx) {
  if (step_log_->deferred() && options_.on_nonfinite() == "error") {
    // One kernel a step and no sync: adding 0 * loss keeps the sum at 0
    // unless a loss was inf or NaN (0 * inf is NaN), and NaN stays.
    if (!loss_check_.defined()) {
      loss_check_ = torch::zeros({}, torch::TensorOptions()
                                         .dtype(torch::kFloat)
                                         .device(loss.device()));
    }
    loss_check_.add_(loss.detach().reshape({}), /*alpha=*/0);
    ++unchecked_losses_;
    return Status::Ok();
  }
  const double loss_value = loss.item<double>();
  if (std::isfinite(loss_value)) return Status::Ok();
  return NonFinite("non-finite loss", loss_value, batch_idx);
}

Status Trainer::CheckDeferredLosses(int64_t batch_idx) {
  if (!loss_check_.defined() || unchecked_losses_ == 0) return Status::Ok();
  const int64_t steps = unchecked_losses_;
  unchecked_losses_ = 0;
  if (loss_check_.item<float>() == 0) return Status::Ok();
  loss_check_.zero_();
  return NonFinite("a non-finite loss in the last " + std::to_string(steps) +
                       " batch(es) (on CUDA the loss is checked every "
                       "log_every_n_steps steps)",
                   std::nan(""), batch_idx);
}

bool Trainer::UnscaleGradients() {
  if (!scaler_) return true;
  std::vector<torch::Tensor> grads;
  for (const auto& group : optim_.optimizer->param_groups()) {
    for (const auto& p : group.params()) grads.push_back(p.grad());
  }
  if (!scaler_->UnscaleAndCheck(grads)) return true;
  if (skipped_steps_ < 10) {
    console().warn(
        "16-mixed: inf or NaN gradients at global step {}: optimizer step "
        "skipped, loss scale {} -> {}",
        global_step_, Fmt(scaler_->scale()),
        Fmt(scaler_->scale() * GradScalerOptions().backoff_factor));
  }
  ++skipped_steps_;
  return false;
}

Status Trainer::OutOfMemory(const c10::Error& e) const {
  std::string what = e.what_without_backtrace();
  what = what.substr(0, what.find('\n'));
  const int64_t b = last_batch_size_;
  return Status::Internal(
      "out of memory on " + device_.str() + " at epoch " +
      std::to_string(epoch_) + ", global step " +
      std::to_string(global_step_) + ", with batches of " + std::to_string(b) +
      " rows (" + what + "). Lower the batch size (data.batch_size=" +
      std::to_string(std::max<int64_t>(1, b / 2)) +
      "), train in trainer.precision=bf16-mixed or 16-mixed, or keep the "
      "effective batch with trainer.accumulate_grad_batches=2 and half the "
      "batch size");
}

StatusOr<Metrics> Trainer::validate(Module& module, DataModule& data) {
  return Evaluate(module, data, Stage::kValidate);
}

StatusOr<Metrics> Trainer::test(Module& module, DataModule& data) {
  return Evaluate(module, data, Stage::kTest);
}

StatusOr<Metrics> Trainer::Evaluate(Module& module, DataModule& data,
                                    Stage stage) {
  const bool testing = stage == Stage::kTest;
  StatusOr<Metrics> out = Status::Internal("not evaluated");
  try {
    TRIALSHIM_RETURN_IF_ERROR(Setup(module));
    TRIALSHIM_RETURN_IF_ERROR(data.setup(stage));
    auto loader = testing ? data.test_dataloader() : data.val_dataloader();
    if (!loader) {
      return Status::InvalidArgument(
          std::string("the DataModule has no ") +
          (testing ? "test_dataloader" : "val_dataloader"));
    }
    module.trainer_ = this;
    module.metrics_ = step_log_.get();
    const int64_t batches =
        (testing ? options_.limit_test_batches() : options_.limit_val_batches())
            .Apply(loader->num_batches());
    out = EvaluationLoop(*this, stage).run(module, *loader, batches);
    if (out.ok() && testing) {
      // As Lightning's trainer.test: the metrics go to the logger too.
      log_metrics(*out);
      Status saved = SaveLoggers();
      if (!saved.ok()) out = saved;
    }
  } catch (const c10::Error& e) {
    out = Status::Internal(std::string(testing ? "test: " : "validation: ") +
                           e.what_without_backtrace());
  }
  module.trainer_ = nullptr;
  module.metrics_ = nullptr;
  return out;
}

Status Trainer::ReportHypertune() {
  if (!hypertune_) return Status::Ok();
  // Every monitor, each its own report (cloudml-hypertune writes one line
  // per report_hyperparameter_tuning_metric call), all or none: a study
  // with several metricSpecs needs each one at the same step.
  const std::vector<std::string>& monitors = options_.hypertune_monitor();
  std::vector<double> values;
  for (const std::string& monitor : monitors) {
    auto it = callback_metrics_.find(monitor);
    if (it == callback_metrics_.end()) {
      std::vector<std::string> logged;
      for (const auto& [k, v] : callback_metrics_) logged.push_back(k);
      return Status::InvalidArgument(
          "hypertune.monitor '" + monitor +
          "' was never logged; logged metrics: " + JoinStrings(logged, ", ") +
          DidYouMean(monitor, logged));
    }
    values.push_back(it->second);
  }
  const std::vector<std::string>& tags = options_.hypertune_tag();
  for (size_t i = 0; i < monitors.size(); ++i) {
    const std::string& tag = tags.empty() ? monitors[i] : tags[i];
    TRIALSHIM_RETURN_IF_ERROR(
        hypertune_->Report(tag, values[i], global_step_, last_checkpoint_));
  }
  return Status::Ok();
}

Status Trainer::save_checkpoint(const std::string& path, bool weights_only) {
  if (!optim_.optimizer) return Status::Internal("save_checkpoint outside fit");
  if (!primary_) {
    // ddp: rank 0 writes the (identical) state.
    last_checkpoint_ = path;
    return Status::Ok();
  }
  nlohmann::json callbacks = nlohmann::json::object();
  for (const auto& c : callbacks_) callbacks[c->state_key()] = c->state_dict();
  nlohmann::json state = {
      {"epoch", resume_epoch_},
      {"batch", resume_batch_},
      {"global_step", global_step_},
      {"seed", seed_},
      {"should_stop", should_stop_},
      {"validated", validated_once_},
      {"skipped_steps", skipped_steps_},
      {"time_elapsed", TimeElapsed()},
      {"restarts", restarts_},
      {"weights_only", weights_only},
      // What makes a later run's resume of this file its own (Resume).
      {"run", module_
                  ? internal::RunIdentityOf(options_, *module_, world_size())
                  : nlohmann::json(nullptr)},
      {"callbacks", callbacks},
      {"callback_metrics", MetricsJson(callback_metrics_)},
      {"epoch_metrics", step_log_->store().State()},
      {"grad_scaler", scaler_ ? scaler_->State() : nlohmann::json(nullptr)},
      {"scheduler", optim_.scheduler.scheduler
                        ? optim_.scheduler.scheduler->State()
                        : nlohmann::json(nullptr)},
  };
  if (module_ == nullptr)
    return Status::Internal("save_checkpoint outside fit");
  TRIALSHIM_RETURN_IF_ERROR(WriteCheckpoint(
      path, *module_, weights_only ? nullptr : optim_.optimizer.get(), state));
  last_checkpoint_ = path;
  return Status::Ok();
}

Status Trainer::LockCheckpointDir() {
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(checkpoint_dir_));
  TRIALSHIM_ASSIGN_OR_RETURN(DirectoryLock lock,
                             DirectoryLock::Acquire(checkpoint_dir_));
  checkpoint_lock_.emplace(std::move(lock));
  // What a killed run was writing; ours now that we hold the directory.
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(checkpoint_dir_).status());
  // A FIFO, a link or a directory named *.ckpt is no checkpoint of ours:
  // out of the way now rather than found by the first save, after the work.
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<NotACheckpoint> odd,
                             FindNonRegularCheckpoints(checkpoint_dir_));
  for (const NotACheckpoint& f : odd) {
    TRIALSHIM_RETURN_IF_ERROR(KeepAside(f.path, "checkpoint " + f.path +
                                                    " is " + f.kind +
                                                    ", not a regular file")
                                  .status());
  }
  return Status::Ok();
}

// The model, the optimizer and the trainer's own state from a checkpoint
// that passed Resume's checks: the loop continues where it stopped.
Status Trainer::RestoreState(const OpenedCheckpoint& opened,
                             const std::string& path, Module& module) {
  TRIALSHIM_RETURN_IF_ERROR(
      RestoreCheckpoint(opened, module, optim_.optimizer.get()));
  const auto& s = opened.state;
  try {
    epoch_ = resume_epoch_ = s.at("epoch").get<int64_t>();
    resume_batch_ = s.at("batch").get<int64_t>();
    global_step_ = s.at("global_step").get<int64_t>();
    seed_ = s.at("seed").get<int64_t>();
    should_stop_ = s.at("should_stop").get<bool>();
    validated_once_ = s.at("validated").get<bool>();
    skipped_steps_ = s.at("skipped_steps").get<int64_t>();
    // Absent from checkpoints written before max_time.
    time_elapsed_ = s.value("time_elapsed", 0.0);
    for (const auto& [k, v] : s.at("callback_metrics").items())
      callback_metrics_[k] = v.get<double>();
    TRIALSHIM_RETURN_IF_ERROR(metrics_.LoadState(s.at("epoch_metrics")));
    // 16-mixed's loss scale; a run in another precision starts afresh.
    if (scaler_ && s.contains("grad_scaler") && !s["grad_scaler"].is_null()) {
      TRIALSHIM_RETURN_IF_ERROR(scaler_->LoadState(s["grad_scaler"])
                                    .WithPrefix("checkpoint " + path));
    }
    const auto& sched = s.at("scheduler");
    if (optim_.scheduler.scheduler) {
      if (sched.is_null())
        return Status::InvalidArgument(
            "checkpoint " + path +
            " has no scheduler state, but a scheduler is configured");
      TRIALSHIM_RETURN_IF_ERROR(
          optim_.scheduler.scheduler->LoadState(sched).WithPrefix(
              "checkpoint " + path));
    }
    const auto& cbs = s.at("callbacks");
    for (const auto& c : callbacks_) {
      if (cbs.contains(c->state_key())) {
        TRIALSHIM_RETURN_IF_ERROR(c->load_state_dict(cbs.at(c->state_key()))
                                      .WithPrefix("checkpoint " + path));
      }
    }
    // Absent from checkpoints written before restarts were recorded.
    if (s.contains("restarts") && s.at("restarts").is_array()) {
      restarts_ = s.at("restarts");
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss("checkpoint " + path +
                            " has a bad trainer state: " + e.what());
  }
  return Status::Ok();
}

Status Trainer::Resume(Module& module) {
  std::vector<std::string> candidates;
  std::string wanted = options_.ckpt_path();
  // A path the user names is resumed even when it is another run's (said
  // at WARNING), through a link too; what the directory holds must be this
  // run's, and only the trainer's own links are followed there.
  const bool named = !wanted.empty() && wanted != "last" && wanted != "best";
  const nlohmann::json run =
      internal::RunIdentityOf(options_, module, world_size());
  if (wanted == "last" || wanted == "best") {
    TRIALSHIM_ASSIGN_OR_RETURN(wanted, SpecialCheckpoint(wanted));
    if (wanted.empty()) return Status::Ok();  // no last.ckpt: start fresh
  }
  if (!wanted.empty()) {
    std::string path = MapGcsUri(wanted);
    if (!fs::exists(path))
      return Status::NotFound("trainer.ckpt_path: no such file: " + path);
    candidates.push_back(path);
  } else {
    candidates = ListCheckpoints(checkpoint_dir_);
  }
  nlohmann::json unreadable = nlohmann::json::array();  // kept aside
  for (const auto& path : candidates) {
    CheckpointReadOptions read;
    read.follow_symlinks = named;
    auto opened = OpenCheckpoint(path, read);
    // Only a file that reads but fails its checks is skipped. One that can
    // not be read (EACCES, EIO) may be good: training from an older one
    // would overwrite it, so stop and say why.
    if (!opened.ok()) {
      if (!wanted.empty() ||
          opened.status().code() != StatusCode::kDataLoss) {
        // ddp: rank 0 moved a bad one aside after we listed it.
        if (!primary_ && wanted.empty() && !fs::exists(path)) continue;
        return opened.status();
      }
      TRIALSHIM_ASSIGN_OR_RETURN(
          nlohmann::json kept, KeepAside(path, opened.status().message()));
      unreadable.push_back(std::move(kept));
      continue;
    }
    if (std::string differs = internal::RunDifferences(opened->state, run);
        !differs.empty()) {
      const std::string why = path + " is another run's checkpoint: " + differs;
      if (named) {
        console().warn("{}; resuming it because trainer.ckpt_path names it",
                       why);
      } else if (options_.ckpt_path() != "best") {  // found, or "last"
        TRIALSHIM_RETURN_IF_ERROR(KeepAside(path, why, "other-run").status());
        continue;
      } else {
        return Status::InvalidArgument(
            "trainer.ckpt_path=best: " + why +
            "; pass its path as trainer.ckpt_path to resume it anyway");
      }
    }
    if (opened->state.value("weights_only", false)) {
      // ModelCheckpoint(save_weights_only=True): no optimizer state.
      const std::string why =
          path + " holds weights only (save_weights_only), which can not "
                 "resume a fit";
      if (!wanted.empty()) return Status::InvalidArgument(why);
      console().warn("Skipping {}", why);
      continue;
    }
    TRIALSHIM_RETURN_IF_ERROR(RestoreState(*opened, path, module));
    RecordRestart(unreadable, path);
    resumed_from_ = path;
    last_checkpoint_ = path;
    for (const auto& logger : loggers_) {
      if (!primary_) break;
      Status kept = logger->resume(global_step_);
      if (!kept.ok()) console().warn("{}; starting it anew", kept.message());
    }
    console().info("Resumed from {} (epoch {}, batch {}, global step {})", path,
                   epoch_, resume_batch_, global_step_);
    return Status::Ok();
  }
  RecordRestart(unreadable, "");
  return Status::Ok();
}

// A checkpoint that fails its checks (or is not a regular file, or is
// another run's: `tag` "other-run") would be overwritten by the next save
// of its name: rank 0 renames it to "<name>.<tag>-N" (durably) and says so
// at WARNING. The other ranks only skip it.
StatusOr<nlohmann::json> Trainer::KeepAside(const std::string& path,
                                            const std::string& why,
                                            const char* tag) {
  if (!primary_) {
    console().warn("Skipping {}", why);
    return nlohmann::json{{"file", path}, {"why", why}};
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::string aside, RenameAsideDurably(path, tag));
  if (std::string(tag) == "unreadable") {
    console().warn("Unreadable checkpoint {} kept aside as {}: {}", path, aside,
                   why);
  } else {
    console().warn("Checkpoint {} kept aside as {}, never resumed: {}", path,
                   aside, why);
  }
  return nlohmann::json{{"file", path}, {"kept_as", aside}, {"why", why}};
}

// After checkpoints were found unreadable the run goes on from an older one
// (`from`) or, with none left, from epoch 0: said at WARNING and recorded in
// the trainer state every later checkpoint holds ("restarts").
void Trainer::RecordRestart(const nlohmann::json& unreadable,
                            const std::string& from) {
  if (unreadable.empty()) return;
  if (from.empty()) {
    console().warn(
        "Every checkpoint in {} was unreadable ({} kept aside): training "
        "starts again from epoch 0",
        checkpoint_dir_, unreadable.size());
  } else {
    console().warn("{} unreadable newer checkpoint(s) kept aside: resuming "
                   "from the older {}",
                   unreadable.size(), from);
  }
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  restarts_.push_back({{"time", now},
                       {"resumed_from", from.empty() ? nlohmann::json(nullptr)
                                                     : nlohmann::json(from)},
                       {"unreadable", unreadable}});
}

// As Lightning's _parse_ckpt_path: "last" is the checkpoint callback's
// last.ckpt (none: a warning and a fresh start), "best" the best ranked
// checkpoint its state names (none: an error).
StatusOr<std::string> Trainer::SpecialCheckpoint(
    const std::string& which) const {
  std::string dir = checkpoint_dir_;
  for (const auto& c : callbacks_) {
    if (auto* mc = dynamic_cast<ModelCheckpoint*>(c.get())) {
      if (!mc->dirpath().empty()) dir = MapGcsUri(mc->dirpath());
      break;
    }
  }
  const std::string last = dir + "/last.ckpt";
  const bool has_last = fs::exists(last);
  if (which == "last") {
    if (!has_last) {
      console().warn(
          "trainer.ckpt_path=last, but there is no {}; no checkpoint will be "
          "loaded",
          last);
      return std::string();
    }
    return last;
  }
  std::string best;
  if (has_last) {
    TRIALSHIM_ASSIGN_OR_RETURN(OpenedCheckpoint opened, OpenCheckpoint(last));
    try {
      best = opened.state.at("callbacks")
                 .at("ModelCheckpoint")
                 .at("best")
                 .get<std::string>();
    } catch (const nlohmann::json::exception&) {
      // No ModelCheckpoint state: no best one.
    }
  }
  if (best.empty()) {
    return Status::InvalidArgument(
        "trainer.ckpt_path=best, but " +
        (has_last ? last + " names no best checkpoint (ModelCheckpoint "
                           "needs save_top_k != 0)"
                  : "there is no " + last + " to read the best one from") +
        "; pass a checkpoint's path instead");
  }
  return best;
}

double Trainer::TimeElapsed() const {
  if (fit_started_ == std::chrono::steady_clock::time_point{}) {
    return time_elapsed_;
  }
  return time_elapsed_ + std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - fit_started_)
                             .count();
}

Batch Trainer::Prepare(const Batch& batch) const {
  Batch out = batch;
  if (!device_.is_cpu()) out = out.to(device_, /*non_blocking=*/true);
  if (dtype_) {
    if (out.input.defined() && out.input.is_floating_point())
      out.input = out.input.to(*dtype_);
    if (out.target.defined() && out.target.is_floating_point())
      out.target = out.target.to(*dtype_);
  }
  return out;
}

Status Trainer::SaveFinalModel(Module& module) {
  std::string dir = MapGcsUri(options_.model_dir());
  if (dir.empty()) dir = MapGcsUri(EnvOr("AIP_MODEL_DIR", ""));
  if (dir.empty()) dir = root_dir_;
  const std::string path = dir + "/model.pt";
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));
  // What a killed run left half-written.
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(dir).status());
  TRIALSHIM_ASSIGN_OR_RETURN(DurableWriter out, DurableWriter::Open(path));
  Status written;
  try {
    torch::serialize::OutputArchive archive;
    SaveOnCpu(module, archive);
    // The archive writes through `out`. After a failed write the rest is
    // dropped but reported as written: LibTorch 1.13's stream writer
    // throws from its destructor on a short count, which aborts.
    archive.save_to([&](const void* data, size_t n) -> size_t {
      if (written.ok()) {
        written =
            out.Append(std::string_view(static_cast<const char*>(data), n));
      }
      return n;
    });
  } catch (const c10::Error& e) {
    if (written.ok()) {
      written = Status::IOError("cannot write " + path + ": " +
                                e.what_without_backtrace());
    }
  }
  TRIALSHIM_RETURN_IF_ERROR(written);
  TRIALSHIM_RETURN_IF_ERROR(out.Commit());
  console().info("Model saved to {}", path);
  return Status::Ok();
}

}  // namespace trialshim::trainer
