#include "trialshim/trainer/callbacks.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

#include "node_read.h"
#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/trainer/checkpoint.h"
#include "trialshim/trainer/optim.h"
#include "trialshim/trainer/scheduler.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {
namespace {

bool Better(Mode mode, double a, double b, double margin = 0) {
  return mode == Mode::kMin ? a < b - margin : a > b + margin;
}

double Worst(Mode mode) {
  return mode == Mode::kMin ? std::numeric_limits<double>::infinity()
                            : -std::numeric_limits<double>::infinity();
}

nlohmann::json Number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

Status MissingMetric(const Trainer& trainer, const std::string& who,
                     const std::string& monitor) {
  std::string logged;
  for (const auto& [name, value] : trainer.callback_metrics()) {
    logged += (logged.empty() ? "" : ", ") + name;
  }
  return Status::InvalidArgument(who + " monitors '" + monitor +
                                 "', which was not logged; logged metrics: " +
                                 (logged.empty() ? "none" : logged));
}

}  // namespace

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options)
    : options_(std::move(options)) {}

Status ModelCheckpoint::on_validation_end(Trainer&, Module&) {
  validated_now_ = validated_ever_ = true;
  return Status::Ok();
}

// The trainer clears its own checkpoint directory (LockCheckpointDir); a
// dirpath of our own is ours to clear.
Status ModelCheckpoint::on_fit_start(Trainer&, Module&) {
  if (options_.dirpath().empty()) return Status::Ok();
  return RemoveStaleTemporaries(options_.dirpath()).status();
}

Status ModelCheckpoint::on_train_epoch_end(Trainer& trainer, Module&) {
  const bool validated = validated_now_;
  validated_now_ = false;
  const int64_t epoch = trainer.current_epoch();
  if ((epoch + 1) % std::max<int64_t>(1, options_.every_n_epochs()) != 0) {
    return Status::Ok();
  }
  const std::string dir = options_.dirpath().empty() ? trainer.checkpoint_dir()
                                                     : options_.dirpath();
  const std::string name = "epoch" + std::to_string(epoch) + "-step" +
                           std::to_string(trainer.global_step()) + ".ckpt";
  const std::string path = dir + "/" + name;
  bool keep = false;
  std::vector<std::string> evicted;
  if (options_.save_top_k() != 0) {
    double score = 0;
    keep = true;
    if (!options_.monitor().empty()) {
      auto it = trainer.callback_metrics().find(options_.monitor());
      if (!validated && validated_ever_) {
        keep = false;  // a stale validation value
      } else if (it == trainer.callback_metrics().end()) {
        // Before the first validation (check_val_every_n_epoch > 1) the
        // metric may not exist yet; after one it should.
        if (validated)
          return MissingMetric(trainer, "ModelCheckpoint", options_.monitor());
        if (!warned_missing_) {
          trainer.console().warn(
              "ModelCheckpoint monitors '{}', which was not logged yet; not "
              "ranking checkpoints until it is",
              options_.monitor());
          warned_missing_ = true;
        }
        keep = false;
      } else {
        score = it->second;
      }
      if (keep && std::isnan(score)) keep = false;
      if (keep && options_.save_top_k() > 0 &&
          static_cast<int64_t>(kept_.size()) >= options_.save_top_k()) {
        keep = Better(options_.mode(), score, kept_.back().first);
      }
    } else {
      score = static_cast<double>(trainer.global_step());  // newest wins
      if (options_.mode() == Mode::kMin) score = -score;
    }
    // The ranking is updated before writing, so the checkpoint holds it.
    if (keep) {
      kept_.emplace_back(score, path);
      evicted = Rank();
    }
  }
  if (options_.save_last()) {
    last_path_ = dir + "/last.ckpt";
    TRIALSHIM_RETURN_IF_ERROR(trainer.save_checkpoint(last_path_));
    // The same state twice: a copy of what was just written durably.
    if (keep) TRIALSHIM_RETURN_IF_ERROR(CopyFileDurably(last_path_, path));
  } else if (keep) {
    TRIALSHIM_RETURN_IF_ERROR(trainer.save_checkpoint(path));
  }
  for (const auto& old : evicted) {
    if (old != path) std::remove(old.c_str());
  }
  return Status::Ok();
}

namespace {

// The score `path` gave itself in the ranking it holds, if it opens and
// names itself there.
std::optional<double> OwnScore(const std::string& path) {
  CheckpointReadOptions fast;
  fast.verify_checksum = false;  // only the JSON state is read here
  StatusOr<OpenedCheckpoint> opened = OpenCheckpoint(path, fast);
  if (!opened.ok()) return std::nullopt;
  try {
    const nlohmann::json& kept =
        opened->state.at("callbacks").at("ModelCheckpoint").at("kept");
    for (const auto& item : kept) {
      if (item.at(1).get<std::string>() == path && item.at(0).is_number()) {
        return item.at(0).get<double>();
      }
    }
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

bool IsRankedName(const std::string& name) {
  static const std::regex kRanked(R"(epoch[0-9]+-step[0-9]+\.ckpt)");
  return std::regex_match(name, kRanked);
}

}  // namespace

void ModelCheckpoint::ReconcileWithFiles() {
  std::string dir = !kept_.empty() ? kept_.front().second : last_path_;
  if (dir.empty()) return;
  dir = std::filesystem::path(dir).parent_path().string();
  std::set<std::string> named;
  std::vector<std::pair<double, std::string>> present;
  for (const auto& entry : kept_) {
    named.insert(entry.second);
    if (std::filesystem::exists(entry.second)) present.push_back(entry);
  }
  std::error_code ec;
  // With save_top_k 0 nothing was ever ranked here: leave such files alone.
  for (std::filesystem::directory_iterator it(dir, ec), end;
       options_.save_top_k() != 0 && !ec && it != end; it.increment(ec)) {
    const std::string path = it->path().string();
    if (named.count(path) || !IsRankedName(it->path().filename().string())) {
      continue;
    }
    if (std::optional<double> score = OwnScore(path)) {
      present.emplace_back(*score, path);
    }
  }
  kept_ = std::move(present);
  for (const std::string& old : Rank()) std::remove(old.c_str());
}

std::vector<std::string> ModelCheckpoint::Rank() {
  std::stable_sort(kept_.begin(), kept_.end(), [&](auto& a, auto& b) {
    return Better(options_.mode(), a.first, b.first);
  });
  std::vector<std::string> evicted;
  while (options_.save_top_k() >= 0 &&
         static_cast<int64_t>(kept_.size()) > options_.save_top_k()) {
    evicted.push_back(kept_.back().second);
    kept_.pop_back();
  }
  best_path_ = kept_.empty() ? "" : kept_.front().second;
  return evicted;
}

nlohmann::json ModelCheckpoint::state_dict() const {
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& [score, path] : kept_) kept.push_back({Number(score), path});
  return {{"kept", kept},
          {"best", best_path_},
          {"last", last_path_},
          {"validated", validated_ever_}};
}

Status ModelCheckpoint::load_state_dict(const nlohmann::json& state) {
  try {
    kept_.clear();
    for (const auto& item : state.at("kept")) {
      double score =
          item.at(0).is_null() ? std::nan("") : item.at(0).get<double>();
      kept_.emplace_back(score, item.at(1).get<std::string>());
    }
    best_path_ = state.at("best").get<std::string>();
    last_path_ = state.at("last").get<std::string>();
    // Absent from checkpoints written before it was kept.
    validated_ever_ = state.value("validated", false);
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss(std::string("bad ModelCheckpoint state: ") +
                            e.what());
  }
  ReconcileWithFiles();
  return Status::Ok();
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)), best_(Worst(options_.mode())) {}

Status EarlyStopping::on_validation_end(Trainer& trainer, Module&) {
  auto it = trainer.callback_metrics().find(options_.monitor());
  if (it == trainer.callback_metrics().end()) {
    return MissingMetric(trainer, "EarlyStopping", options_.monitor());
  }
  const double value = it->second;
  const std::string shown = FormatPythonFloat(value);
  if (options_.check_finite() && !std::isfinite(value)) {
    reason_ = "monitored metric " + options_.monitor() + " = " + shown +
              " is not finite";
    trainer.set_should_stop(true);
    return Status::Ok();
  }
  if (Better(options_.mode(), value, best_, options_.min_delta())) {
    best_ = value;
    wait_ = 0;
    return Status::Ok();
  }
  ++wait_;
  if (wait_ >= options_.patience()) {
    reason_ = "monitored metric " + options_.monitor() +
              " did not improve in the last " + std::to_string(wait_) +
              " validations; best score: " + FormatPythonFloat(best_);
    trainer.set_should_stop(true);
  }
  return Status::Ok();
}

nlohmann::json EarlyStopping::state_dict() const {
  return {{"best", Number(best_)}, {"wait", wait_}};
}

Status EarlyStopping::load_state_dict(const nlohmann::json& state) {
  try {
    best_ = state.at("best").is_null() ? Worst(options_.mode())
                                       : state.at("best").get<double>();
    wait_ = state.at("wait").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss(std::string("bad EarlyStopping state: ") +
                            e.what());
  }
  return Status::Ok();
}

void LearningRateMonitor::Record(Trainer& trainer,
                                 const std::vector<double>& lrs) {
  const std::string base = "lr-" + OptimizerName(*trainer.optimizer());
  Metrics named;
  for (size_t i = 0; i < lrs.size(); ++i) {
    named[i == 0 ? base : base + "/pg" + std::to_string(i)] = lrs[i];
  }
  trainer.log_metrics(named);
}

// The hooks after a step see the rates a per-step scheduler already moved,
// so the rates a step runs with are read before it: at the start of the fit
// (after a resume), of every epoch (after the epoch's scheduler step) and
// after every step.
Status LearningRateMonitor::on_fit_start(Trainer& trainer, Module&) {
  if (trainer.optimizer() != nullptr)
    next_lrs_ = GetLearningRates(*trainer.optimizer());
  return Status::Ok();
}

Status LearningRateMonitor::on_train_epoch_start(Trainer& trainer, Module&) {
  if (trainer.optimizer() == nullptr) return Status::Ok();
  next_lrs_ = GetLearningRates(*trainer.optimizer());
  if (interval_ == "epoch") Record(trainer, next_lrs_);
  return Status::Ok();
}

Status LearningRateMonitor::on_train_batch_end(Trainer& trainer, Module&,
                                               int64_t) {
  if (trainer.optimizer() == nullptr) return Status::Ok();
  if (interval_ == "step" &&
      trainer.global_step() % trainer.options().log_every_n_steps() == 0) {
    Record(trainer, next_lrs_);
  }
  next_lrs_ = GetLearningRates(*trainer.optimizer());
  return Status::Ok();
}

Status ProgressBar::on_fit_start(Trainer&, Module&) {
  enabled_ = isatty(2);
  last_drawn_ = {};
  return Status::Ok();
}

Status ProgressBar::on_train_batch_end(Trainer& trainer, Module&,
                                       int64_t batch_idx) {
  if (!enabled_) return Status::Ok();
  const int64_t done = batch_idx + 1;
  const int64_t total = trainer.num_training_batches();
  auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_drawn_ < std::chrono::milliseconds(100))
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

StatusOr<std::vector<std::shared_ptr<Callback>>> CallbacksFromConfig(
    const config::Node& node) {
  std::vector<std::shared_ptr<Callback>> out;
  internal::MapReader top(node, "callbacks");
  TRIALSHIM_RETURN_IF_ERROR(
      top.CheckKeys({"model_checkpoint", "early_stopping", "lr_monitor"}));
  if (node.is_null()) return out;
  auto mode_of = [](const std::string& prefix,
                    const std::string& m) -> StatusOr<Mode> {
    if (m == "min") return Mode::kMin;
    if (m == "max") return Mode::kMax;
    return Status::InvalidArgument(prefix + ".mode: expected min|max, got '" +
                                   m + "'");
  };
  for (const auto& [name, value] : node.AsMap()) {
    if (value.is_null()) continue;
    const std::string prefix = "callbacks." + name;
    internal::MapReader r(value, prefix);
    if (name == "model_checkpoint") {
      TRIALSHIM_RETURN_IF_ERROR(
          r.CheckKeys({"dirpath", "monitor", "mode", "save_top_k", "save_last",
                       "every_n_epochs"}));
      std::string dirpath, monitor, mode = "min";
      int64_t top_k = 1, every = 1;
      bool last = true;
      TRIALSHIM_RETURN_IF_ERROR(r.String("dirpath", &dirpath));
      TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &monitor));
      TRIALSHIM_RETURN_IF_ERROR(r.String("mode", &mode));
      TRIALSHIM_RETURN_IF_ERROR(r.Int("save_top_k", &top_k));
      TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_last", &last));
      TRIALSHIM_RETURN_IF_ERROR(r.Int("every_n_epochs", &every));
      TRIALSHIM_ASSIGN_OR_RETURN(Mode m, mode_of(prefix, mode));
      out.push_back(
          std::make_shared<ModelCheckpoint>(ModelCheckpointOptions()
                                                .dirpath(MapGcsUri(dirpath))
                                                .monitor(monitor)
                                                .mode(m)
                                                .save_top_k(top_k)
                                                .save_last(last)
                                                .every_n_epochs(every)));
    } else if (name == "early_stopping") {
      TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
          {"monitor", "mode", "patience", "min_delta", "check_finite"}));
      std::string monitor = "val_loss", mode = "min";
      int64_t patience = 3;
      double min_delta = 0;
      bool check_finite = true;
      TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &monitor));
      TRIALSHIM_RETURN_IF_ERROR(r.String("mode", &mode));
      TRIALSHIM_RETURN_IF_ERROR(r.Int("patience", &patience));
      TRIALSHIM_RETURN_IF_ERROR(r.Double("min_delta", &min_delta));
      TRIALSHIM_RETURN_IF_ERROR(r.Bool("check_finite", &check_finite));
      TRIALSHIM_ASSIGN_OR_RETURN(Mode m, mode_of(prefix, mode));
      out.push_back(
          std::make_shared<EarlyStopping>(EarlyStoppingOptions()
                                              .monitor(monitor)
                                              .mode(m)
                                              .patience(patience)
                                              .min_delta(min_delta)
                                              .check_finite(check_finite)));
    } else {
      TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"logging_interval"}));
      std::string interval = "epoch";
      TRIALSHIM_RETURN_IF_ERROR(r.String("logging_interval", &interval));
      if (interval != "epoch" && interval != "step") {
        return Status::InvalidArgument(
            prefix + ".logging_interval: expected epoch|step, got '" +
            interval + "'");
      }
      out.push_back(std::make_shared<LearningRateMonitor>(interval));
    }
  }
  return out;
}

}  // namespace trialshim::trainer
