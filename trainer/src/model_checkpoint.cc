#include "trialshim/trainer/callbacks.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "monitor.h"
#include "trialshim/base/file.h"
#include "trialshim/trainer/checkpoint.h"
#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {

using internal::Better;
using internal::Number;
using internal::MissingMetric;

namespace {

// last.ckpt as a relative symbolic link to `target` (same directory or
// below), replacing what was there durably.
Status LinkLast(const std::string& target, const std::string& last) {
  const std::filesystem::path dir = std::filesystem::path(last).parent_path();
  return SymlinkDurably(
      std::filesystem::path(target).lexically_relative(dir).string(), last);
}

}  // namespace

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options)
    : options_(std::move(options)) {}

// A validation before the epoch's end saves here, as Lightning's
// on_validation_end does when save_on_train_epoch_end resolves to false.
Status ModelCheckpoint::on_validation_end(Trainer& trainer, Module&) {
  validated_now_ = validated_ever_ = true;
  const int64_t every = options_.every_n_epochs();
  if (!trainer.validating_mid_epoch() || every <= 0 ||
      (trainer.current_epoch() + 1) % every != 0) {
    return Status::Ok();
  }
  validated_now_ = false;  // the epoch's end has no new value then
  return Save(trainer, /*fresh=*/true);
}

// The trainer clears its own checkpoint directory (LockCheckpointDir); a
// dirpath of our own is ours to clear: stale temporaries, and (rank 0) any
// *.ckpt that is not a regular file, kept aside before a save meets it.
Status ModelCheckpoint::on_fit_start(Trainer& trainer, Module&) {
  TRIALSHIM_RETURN_IF_ERROR(CheckCheckpointFilename(
      options_.filename(), options_.auto_insert_metric_name()));
  last_time_saved_ = std::chrono::steady_clock::now();
  last_step_saved_ = -1;
  if (options_.dirpath().empty()) return Status::Ok();
  const std::string dir = MapGcsUri(options_.dirpath());
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(dir).status());
  if (!trainer.is_global_zero()) return Status::Ok();
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<NotACheckpoint> odd,
                             FindNonRegularCheckpoints(dir));
  for (const NotACheckpoint& f : odd) {
    TRIALSHIM_ASSIGN_OR_RETURN(std::string aside,
                               RenameAsideDurably(f.path, "unreadable"));
    trainer.console().warn(
        "Unreadable checkpoint {} kept aside as {}: checkpoint {} is {}, not "
        "a regular file",
        f.path, aside, f.path, f.kind);
  }
  return Status::Ok();
}

// As Lightning's on_train_batch_end: a save when the step count or the
// time since the last such save says so.
Status ModelCheckpoint::on_train_batch_end(Trainer& trainer, Module&,
                                           int64_t) {
  const int64_t every = options_.every_n_train_steps();
  const bool by_steps = every > 0 && trainer.global_step() % every == 0;
  const auto now = std::chrono::steady_clock::now();
  const bool by_time =
      options_.train_time_interval() > 0 &&
      std::chrono::duration<double>(now - last_time_saved_).count() >=
          options_.train_time_interval();
  if (!by_steps && !by_time) return Status::Ok();
  if (by_time) last_time_saved_ = now;
  // As Lightning, the latest values rank, validation's included.
  return Save(trainer, /*fresh=*/true);
}

Status ModelCheckpoint::on_train_epoch_end(Trainer& trainer, Module&) {
  const bool validated = validated_now_;
  validated_now_ = false;
  const int64_t every = options_.every_n_epochs();
  if (every <= 0 || (trainer.current_epoch() + 1) % every != 0) {
    return Status::Ok();
  }
  return Save(trainer, validated || !validated_ever_);
}

StatusOr<bool> ModelCheckpoint::Ranks(Trainer& trainer, bool fresh,
                                      double* score) {
  if (options_.save_top_k() == 0) return false;
  if (options_.monitor().empty()) {
    *score = static_cast<double>(trainer.global_step());  // newest wins
    if (options_.mode() == Mode::kMin) *score = -*score;
    return true;
  }
  if (!fresh) return false;  // a stale validation value
  auto it = trainer.callback_metrics().find(options_.monitor());
  if (it == trainer.callback_metrics().end()) {
    // Before the first validation (check_val_every_n_epoch > 1) the
    // metric may not exist yet; after one it should.
    if (validated_ever_)
      return MissingMetric(trainer, "ModelCheckpoint", options_.monitor());
    if (!warned_missing_) {
      trainer.console().warn(
          "ModelCheckpoint monitors '{}', which was not logged yet; not "
          "ranking checkpoints until it is",
          options_.monitor());
      warned_missing_ = true;
    }
    return false;
  }
  *score = it->second;
  if (std::isnan(*score)) return false;
  if (options_.save_top_k() > 0 &&
      static_cast<int64_t>(kept_.size()) >= options_.save_top_k() &&
      !Better(options_.mode(), *score, kept_.back().first)) {
    if (options_.verbose()) {
      trainer.console().info("Epoch {}, global step {}: '{}' was not in top {}",
                            trainer.current_epoch(), trainer.global_step(),
                            options_.monitor(), options_.save_top_k());
    }
    return false;
  }
  return true;
}

Status ModelCheckpoint::Save(Trainer& trainer, bool fresh) {
  if (trainer.global_step() == last_step_saved_) return Status::Ok();
  last_step_saved_ = trainer.global_step();
  const std::string dir = options_.dirpath().empty()
                              ? trainer.checkpoint_dir()
                              : MapGcsUri(options_.dirpath());
  double score = 0;
  TRIALSHIM_ASSIGN_OR_RETURN(bool keep, Ranks(trainer, fresh, &score));
  std::string path;
  std::vector<std::string> evicted;
  if (keep) {
    // The file the ranking drops may be overwritten; any other existing
    // one gets a version suffix (Lightning's
    // _get_metric_interpolated_filepath_name).
    const std::string displaced =
        options_.save_top_k() > 0 &&
                static_cast<int64_t>(kept_.size()) >= options_.save_top_k()
            ? kept_.back().second
            : "";
    // Lightning's logged values are float32 tensors: "{val_loss}" shows
    // the float32's digits there, so here too.
    Metrics candidates;
    for (const auto& [key, value] : trainer.callback_metrics())
      candidates[key] = static_cast<double>(static_cast<float>(value));
    for (int64_t version = 0;; ++version) {
      TRIALSHIM_ASSIGN_OR_RETURN(
          std::string name,
          FormatCheckpointName(options_.filename(), candidates,
                               trainer.current_epoch(), trainer.global_step(),
                               options_.auto_insert_metric_name(), version));
      path = dir + "/" + name;
      if (!options_.enable_version_counter() || path == displaced ||
          path == last_path_ || !std::filesystem::exists(path)) {
        break;
      }
    }
    // The ranking is updated before writing, so the checkpoint holds it.
    kept_.emplace_back(score, path);
    evicted = Rank();
    if (options_.verbose()) {
      if (options_.monitor().empty()) {
        trainer.console().info("Epoch {}, global step {}: saving model to '{}'",
                              trainer.current_epoch(), trainer.global_step(),
                              path);
      } else {
        trainer.console().info(
            "Epoch {}, global step {}: '{}' reached {:.5f} (best {:.5f}), "
            "saving model to '{}' as top {}",
            trainer.current_epoch(), trainer.global_step(), options_.monitor(),
            score, kept_.front().first, path, options_.save_top_k());
      }
    }
    TRIALSHIM_RETURN_IF_ERROR(
        MakeDirectories(std::filesystem::path(path).parent_path().string()));
  }
  const bool weights_only = options_.save_weights_only();
  if (options_.save_last()) {
    last_path_ = dir + "/last.ckpt";
    if (keep && options_.save_last_link()) {
      TRIALSHIM_RETURN_IF_ERROR(trainer.save_checkpoint(path, weights_only));
      TRIALSHIM_RETURN_IF_ERROR(LinkLast(path, last_path_));
    } else {
      TRIALSHIM_RETURN_IF_ERROR(
          trainer.save_checkpoint(last_path_, weights_only));
      // The same state twice: a copy of what was just written durably.
      if (keep) TRIALSHIM_RETURN_IF_ERROR(CopyFileDurably(last_path_, path));
    }
  } else if (keep) {
    TRIALSHIM_RETURN_IF_ERROR(trainer.save_checkpoint(path, weights_only));
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

// Any checkpoint but last.ckpt (and its -vN) can be a ranked one; OwnScore
// tells whether it is.
bool IsRankedName(const std::string& name) {
  const std::string ext = ".ckpt";
  return name.size() > ext.size() &&
         name.compare(name.size() - ext.size(), ext.size(), ext) == 0 &&
         name != "last.ckpt" && name.rfind("last-v", 0) != 0;
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

}  // namespace trialshim::trainer
