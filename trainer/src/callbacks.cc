#include "trialshim/trainer/callbacks.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "node_read.h"
#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/base/python_format.h"
#include "trialshim/base/strings.h"
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

// ---- checkpoint names ----------------------------------------------------

namespace {

// last.ckpt as a relative symbolic link to `target` (same directory or
// below), replacing what was there durably.
Status LinkLast(const std::string& target, const std::string& last) {
  const std::filesystem::path dir = std::filesystem::path(last).parent_path();
  return SymlinkDurably(
      std::filesystem::path(target).lexically_relative(dir).string(), last);
}

// re.findall(r"(\{.*?)[:\}]", filename): each "{" with the shortest run up
// to a ":" or "}" that holds no newline (the regex's "." takes none).
std::vector<std::string> TemplateGroups(const std::string& name) {
  std::vector<std::string> groups;
  for (size_t at = name.find('{'); at != std::string::npos;) {
    const size_t end = name.find_first_of(":}\n", at + 1);
    if (end == std::string::npos) break;
    if (name[end] == '\n') {
      at = name.find('{', at + 1);
      continue;
    }
    groups.push_back(name.substr(at, end - at));
    at = name.find('{', end + 1);
  }
  return groups;
}

}  // namespace

StatusOr<std::string> FormatCheckpointName(const std::string& filename,
                                           const Metrics& metrics,
                                           int64_t epoch, int64_t step,
                                           bool auto_insert_metric_name,
                                           int64_t version) {
  std::string name = filename.empty() ? "{epoch}-{step}" : filename;
  std::vector<std::string> groups = TemplateGroups(name);
  // Longest first, so "{epoch" does not replace inside "{epoch_test".
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  // Lightning's epoch and step are int tensors, its metrics float ones;
  // a tensor's format() is its item()'s.
  PythonMapping values;
  for (const auto& [key, value] : metrics) {
    values[key] = PythonNumber::Float(value);
  }
  values["epoch"] = PythonNumber::Int(epoch);
  values["step"] = PythonNumber::Int(step);
  for (const std::string& group : groups) {
    const std::string key = group.substr(1);
    if (auto_insert_metric_name) name = ReplaceAll(name, group, key + "={" + key);
    name = ReplaceAll(name, group, "{0[" + key + "]");
    values.emplace(key, PythonNumber::Int(0));  // torch.tensor(0)
  }
  StatusOr<std::string> out = FormatPythonTemplate(name, values);
  if (!out.ok())
    return out.status().WithPrefix("checkpoint filename '" + filename + "'");
  // A path is a C string: Python's open() refuses the name.
  if (out->find('\0') != std::string::npos) {
    return Status::InvalidArgument("checkpoint filename '" + filename +
                                   "': the name holds a NUL character "
                                   "(embedded null byte)");
  }
  if (version > 0) *out += "-v" + std::to_string(version);
  return *out + ".ckpt";
}

Status CheckCheckpointFilename(const std::string& filename,
                               bool auto_insert_metric_name) {
  // A name besides epoch and step is a logged metric (a float) or, until
  // one is logged, Lightning's torch.tensor(0) (an int): the template is
  // good when some such choice formats (all of them for up to 8 names).
  std::vector<std::string> names;
  for (const std::string& group : TemplateGroups(filename)) {
    const std::string key = group.substr(1);
    if (key != "epoch" && key != "step") names.push_back(key);
  }
  const size_t varied = std::min<size_t>(names.size(), 8);
  Status first;
  for (uint32_t ints = 0; ints < (1u << varied); ++ints) {
    Metrics metrics;
    for (size_t k = 0; k < names.size(); ++k) {
      if (k >= varied || (ints >> k & 1) == 0) metrics[names[k]] = 0.0;
    }
    StatusOr<std::string> name =
        FormatCheckpointName(filename, metrics, 0, 0, auto_insert_metric_name);
    if (name.ok()) return Status::Ok();
    if (ints == 0) first = name.status();
  }
  return first;
}

// ---- ModelCheckpoint -----------------------------------------------------

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
// dirpath of our own is ours to clear.
Status ModelCheckpoint::on_fit_start(Trainer&, Module&) {
  TRIALSHIM_RETURN_IF_ERROR(CheckCheckpointFilename(
      options_.filename(), options_.auto_insert_metric_name()));
  last_time_saved_ = std::chrono::steady_clock::now();
  last_step_saved_ = -1;
  if (options_.dirpath().empty()) return Status::Ok();
  return RemoveStaleTemporaries(MapGcsUri(options_.dirpath())).status();
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

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)), best_(Worst(options_.mode())) {}

Status EarlyStopping::on_validation_end(Trainer& trainer, Module&) {
  if (options_.check_on_train_epoch_end().value_or(false)) return Status::Ok();
  return Check(trainer);
}

Status EarlyStopping::on_train_epoch_end(Trainer& trainer, Module&) {
  if (!options_.check_on_train_epoch_end().value_or(false)) return Status::Ok();
  return Check(trainer);
}

// Lightning's _log_info: "[rank: N] " under several ranks.
void EarlyStopping::Log(Trainer& trainer, const std::string& message) const {
  if (trainer.world_size() <= 1) {
    trainer.console().info("{}", message);
  } else if (!options_.log_rank_zero_only() || trainer.is_global_zero()) {
    trainer.console().info("[rank: {}] {}", trainer.global_rank(), message);
  }
}

Status EarlyStopping::Check(Trainer& trainer) {
  const std::string& monitor = options_.monitor();
  auto it = trainer.callback_metrics().find(monitor);
  if (it == trainer.callback_metrics().end()) {
    Status missing = MissingMetric(trainer, "EarlyStopping", monitor);
    if (options_.strict()) return missing;
    if (options_.verbose()) trainer.console().warn("{}", missing.message());
    return Status::Ok();
  }
  const double value = it->second;
  const Mode mode = options_.mode();
  const char* op = mode == Mode::kMin ? "<" : ">";
  const std::string shown = FormatPythonFloat(value);
  std::string reason;
  if (options_.check_finite() && !std::isfinite(value)) {
    reason = "monitored metric " + monitor + " = " + shown + " is not finite";
  } else if (options_.stopping_threshold() &&
             Better(mode, value, *options_.stopping_threshold())) {
    reason = "stopping threshold reached: " + monitor + " = " + shown + " " +
             op + " " + FormatPythonFloat(*options_.stopping_threshold());
  } else if (options_.divergence_threshold() &&
             Better(mode, *options_.divergence_threshold(), value)) {
    reason = "divergence threshold reached: " + monitor + " = " + shown + " " +
             (mode == Mode::kMin ? ">" : "<") + " " +
             FormatPythonFloat(*options_.divergence_threshold());
  } else if (Better(mode, value, best_, options_.min_delta())) {
    if (options_.verbose()) {
      Log(trainer, std::isfinite(best_)
                       ? "Metric " + monitor + " improved by " +
                             FormatPythonFloat(std::fabs(best_ - value)) +
                             " >= min_delta = " +
                             FormatPythonFloat(std::fabs(options_.min_delta())) +
                             ". New best score: " + shown
                       : "Metric " + monitor + " improved. New best score: " +
                             shown);
    }
    best_ = value;
    wait_ = 0;
    return Status::Ok();
  } else if (++wait_ >= options_.patience()) {
    reason = "monitored metric " + monitor + " did not improve in the last " +
             std::to_string(wait_) + " validations; best score: " +
             FormatPythonFloat(best_);
  }
  if (!reason.empty()) {
    reason_ = reason;
    trainer.set_should_stop(true);
    if (options_.verbose()) Log(trainer, reason);
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

// ---- LearningRateMonitor -------------------------------------------------

namespace {

// Group `g`'s (momentum, weight decay), as Lightning's _extract_momentum
// (betas[0] when the optimizer has betas, else momentum or 0).
std::pair<double, double> MomentumAndDecay(const torch::optim::OptimizerOptions& o) {
  using namespace torch::optim;
  if (auto* a = dynamic_cast<const AdamOptions*>(&o))
    return {std::get<0>(a->betas()), a->weight_decay()};
  if (auto* a = dynamic_cast<const AdamWOptions*>(&o))
    return {std::get<0>(a->betas()), a->weight_decay()};
  if (auto* a = dynamic_cast<const SGDOptions*>(&o))
    return {a->momentum(), a->weight_decay()};
  if (auto* a = dynamic_cast<const RMSpropOptions*>(&o))
    return {a->momentum(), a->weight_decay()};
  if (auto* a = dynamic_cast<const AdagradOptions*>(&o))
    return {0.0, a->weight_decay()};
  return {0.0, 0.0};
}

}  // namespace

// Lightning's names (lr_monitor.py _add_suffix): "lr-Adam" for one param
// group, "lr-Adam/pg1", "lr-Adam/pg2", ... for several.
Metrics LearningRateMonitor::Read(Trainer& trainer) const {
  Metrics out;
  torch::optim::Optimizer* optimizer = trainer.optimizer();
  if (optimizer == nullptr) return out;
  const std::string base = "lr-" + OptimizerName(*optimizer);
  const auto& groups = optimizer->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string name =
        groups.size() > 1 ? base + "/pg" + std::to_string(i + 1) : base;
    out[name] = groups[i].options().get_lr();
    auto [momentum, decay] = MomentumAndDecay(groups[i].options());
    if (options_.log_momentum()) out[name + "-momentum"] = momentum;
    if (options_.log_weight_decay()) out[name + "-weight_decay"] = decay;
  }
  return out;
}

// The hooks after a step see the rates a per-step scheduler already moved,
// so the rates a step runs with are read before it: at the start of the fit
// (after a resume), of every epoch (after the epoch's scheduler step) and
// after every step. As Lightning's, a row has no epoch and its step is the
// number of optimizer steps before the rates were read.
Status LearningRateMonitor::on_fit_start(Trainer& trainer, Module&) {
  next_ = Read(trainer);
  return Status::Ok();
}

Status LearningRateMonitor::on_train_epoch_start(Trainer& trainer, Module&) {
  next_ = Read(trainer);
  if (options_.logging_interval() == "epoch" && !next_.empty())
    trainer.log_metrics(next_, trainer.global_step(), std::nullopt);
  return Status::Ok();
}

Status LearningRateMonitor::on_train_batch_end(Trainer& trainer, Module&,
                                               int64_t) {
  if (options_.logging_interval() == "step" && !next_.empty() &&
      trainer.global_step() % trainer.options().log_every_n_steps() == 0) {
    trainer.log_metrics(next_, trainer.global_step() - 1, std::nullopt);
  }
  next_ = Read(trainer);
  return Status::Ok();
}

// ---- ModelSummary ----------------------------------------------------------

namespace {

// Lightning's get_human_readable_count: "123  ", "1.2 K", "132 K", "2.0 M".
std::string HumanCount(int64_t number) {
  static const char* kUnits[] = {" ", "K", "M", "B", "T"};
  const int digits =
      number > 0 ? static_cast<int>(std::floor(std::log10(number))) + 1 : 1;
  const int groups = std::min(5, (digits + 2) / 3);
  const double scaled = number * std::pow(10.0, -3 * (groups - 1));
  char buf[64];
  if (groups - 1 < 1 || scaled >= 100) {
    std::snprintf(buf, sizeof(buf), "%lld %s",
                  static_cast<long long>(scaled), kUnits[groups - 1]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s", scaled, kUnits[groups - 1]);
  }
  std::string out = buf;
  // Python's "{:,d}" groups thousands (only past 999 T).
  size_t end = out.find_first_of(". ");
  for (size_t at = end; at > 3; at -= 3) out.insert(at - 3, 1, ',');
  return out;
}

// torch::nn::LinearImpl -> Linear, as Python's __class__.__name__.
std::string TypeName(const torch::nn::Module& m) {
  std::string name = m.name();
  size_t colon = name.rfind("::");
  if (colon != std::string::npos) name = name.substr(colon + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0)
    name.resize(name.size() - 4);
  return name;
}

int64_t CountParams(const torch::nn::Module& m, bool trainable_only) {
  int64_t n = 0;
  for (const auto& p : m.parameters(/*recurse=*/true)) {
    if (!trainable_only || p.requires_grad()) n += p.numel();
  }
  return n;
}

}  // namespace

// Lightning's _format_summary_table (utilities/model_summary/
// model_summary.py) without its FLOPs column and line.
std::string SummarizeModel(const torch::nn::Module& module, int64_t max_depth,
                           int bits_per_param) {
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> rows;
  if (max_depth == 1) {
    for (const auto& item : module.named_children())
      rows.emplace_back(item.key(), item.value());
  } else if (max_depth != 0) {
    for (const auto& item : module.named_modules("", /*include_self=*/false)) {
      const std::string& name = item.key();
      if (max_depth < 0 ||
          std::count(name.begin(), name.end(), '.') < max_depth)
        rows.emplace_back(name, item.value());
    }
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> cols = {
      {" ", {}}, {"Name", {}}, {"Type", {}}, {"Params", {}}, {"Mode", {}}};
  int64_t in_rows = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& m = *rows[i].second;
    const int64_t n = CountParams(m, false);
    cols[0].second.push_back(std::to_string(i));
    cols[1].second.push_back(rows[i].first);
    cols[2].second.push_back(TypeName(m));
    cols[3].second.push_back(HumanCount(n));
    cols[4].second.push_back(m.is_training() ? "train" : "eval");
    in_rows += n;
  }
  const int64_t total = CountParams(module, false);
  const int64_t trainable = CountParams(module, true);
  // Lightning's _add_leftover_params_to_summary: the parameters the rows do
  // not add up to (the module's own, outside every child), at any depth.
  if (max_depth != 0 && total > in_rows) {
    cols[0].second.push_back(" ");
    cols[1].second.push_back("other params");
    cols[2].second.push_back("n/a");
    cols[3].second.push_back(HumanCount(total - in_rows));
    cols[4].second.push_back("n/a");
  }
  std::string out;
  auto pad = [](const std::string& s, size_t w) {
    return s + std::string(w > s.size() ? w - s.size() : 0, ' ');
  };
  std::vector<size_t> widths;
  size_t total_width = 0;
  for (const auto& [header, values] : cols) {
    size_t w = header.size();
    for (const auto& v : values) w = std::max(w, v.size());
    widths.push_back(w);
    total_width += w + 3;
  }
  total_width += 3;  // Lightning's 3 * n_cols counts an index column twice
  const size_t n_rows = cols[0].second.size();
  for (size_t r = 0; r <= n_rows; ++r) {
    for (size_t c = 0; c < cols.size(); ++c) {
      out += (c ? " | " : "") +
             pad(r == 0 ? cols[c].first : cols[c].second[r - 1], widths[c]);
    }
    out += "\n";
    if (r == 0) out += std::string(total_width, '-') + "\n";
  }
  out += std::string(total_width, '-') + "\n";
  int64_t train_mode = 0, modules = 0;
  for (const auto& m : module.modules(/*include_self=*/false)) {
    ++modules;
    train_mode += m->is_training() ? 1 : 0;
  }
  char size[64];
  std::snprintf(size, sizeof(size), "%.3f", total * (bits_per_param / 8.0) * 1e-6);
  out += pad(HumanCount(trainable), 10) + "Trainable params\n";
  out += pad(HumanCount(total - trainable), 10) + "Non-trainable params\n";
  out += pad(HumanCount(total), 10) + "Total params\n";
  out += pad(size, 10) + "Total estimated model params size (MB)\n";
  out += pad(std::to_string(train_mode), 10) + "Modules in train mode\n";
  out += pad(std::to_string(modules - train_mode), 10) + "Modules in eval mode";
  return out;
}

Status ModelSummary::on_fit_start(Trainer& trainer, Module& module) {
  if (max_depth_ == 0 || !trainer.is_global_zero()) return Status::Ok();
  const std::string& p = trainer.options().precision();
  const int bits = p == "64-true" ? 64 : p == "bf16-true" ? 16 : 32;
  trainer.console().info("\n{}", SummarizeModel(module, max_depth_, bits));
  return Status::Ok();
}

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

namespace {

StatusOr<Mode> ModeOf(const internal::MapReader& r, const std::string& prefix) {
  std::string m = "min";
  TRIALSHIM_RETURN_IF_ERROR(r.String("mode", &m));
  if (m == "min") return Mode::kMin;
  if (m == "max") return Mode::kMax;
  return Status::InvalidArgument(prefix + ".mode: expected min|max, got '" +
                                 m + "'");
}

// A number or null (unset), for Lightning's Optional[float] keywords.
Status OptionalDouble(const internal::MapReader& r, const config::Node& node,
                      const std::string& key, std::optional<double>* out) {
  const config::Node* v = node.Get(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  double d = 0;
  TRIALSHIM_RETURN_IF_ERROR(r.Double(key, &d));
  *out = d;
  return Status::Ok();
}

StatusOr<std::shared_ptr<Callback>> MakeModelCheckpoint(
    const config::Node& node, const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
      {"dirpath", "filename", "monitor", "verbose", "save_last", "save_top_k",
       "save_weights_only", "mode", "auto_insert_metric_name",
       "every_n_train_steps", "train_time_interval", "every_n_epochs",
       "save_on_train_epoch_end", "enable_version_counter"}));
  ModelCheckpointOptions o;
  std::string dirpath, filename, monitor;
  int64_t top_k = 1, steps = 0, epochs = 0;
  bool weights_only = false, auto_insert = true, verbose = false,
       versions = true, on_epoch_end = true;
  TRIALSHIM_RETURN_IF_ERROR(r.String("dirpath", &dirpath));
  TRIALSHIM_RETURN_IF_ERROR(r.String("filename", &filename));
  TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &monitor));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("save_top_k", &top_k));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_weights_only", &weights_only));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("auto_insert_metric_name", &auto_insert));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("verbose", &verbose));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("enable_version_counter", &versions));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("every_n_train_steps", &steps));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("every_n_epochs", &epochs));
  // The epoch's validation ends before its on_train_epoch_end, so saving
  // after it (false) and at the epoch's end (true, null) is one point.
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_on_train_epoch_end", &on_epoch_end));
  TRIALSHIM_ASSIGN_OR_RETURN(Mode mode, ModeOf(r, prefix));
  TRIALSHIM_RETURN_IF_ERROR(CheckCheckpointFilename(filename, auto_insert)
                                .WithPrefix(prefix + ".filename"));
  if (top_k < -1) {
    return Status::InvalidArgument(prefix + ".save_top_k: expected -1, 0 or "
                                   "more, got " + std::to_string(top_k));
  }
  const config::Node* last = node.Get("save_last");
  if (last != nullptr && last->is_string() && last->AsString() == "link") {
    o.save_last(true).save_last_link(true);
  } else if (last != nullptr && !last->is_null()) {
    bool v = true;
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("save_last", &v));
    o.save_last(v);
  }
  double interval = 0;
  const config::Node* time = node.Get("train_time_interval");
  const bool by_time = time != nullptr && !time->is_null();
  if (by_time) {
    TRIALSHIM_RETURN_IF_ERROR(
        ParseDuration(*time, prefix + ".train_time_interval", &interval));
  }
  // Lightning's __init_triggers: every_n_epochs is 1 when no trigger is
  // set (null is unset); those that fire exclude each other.
  auto set = [&](const char* key) {
    const config::Node* v = node.Get(key);
    return v != nullptr && !v->is_null();
  };
  if (!set("every_n_train_steps") && !set("every_n_epochs") && !by_time) {
    epochs = 1;
  }
  if (steps < 0 || epochs < 0) {
    return Status::InvalidArgument(
        prefix + ": every_n_train_steps and every_n_epochs must be >= 0");
  }
  if ((steps >= 1) + (epochs >= 1) + (by_time ? 1 : 0) > 1) {
    return Status::InvalidArgument(
        prefix + ": every_n_train_steps=" + std::to_string(steps) +
        ", every_n_epochs=" + std::to_string(epochs) +
        " and train_time_interval should be mutually exclusive (as in "
        "Lightning)");
  }
  return std::shared_ptr<Callback>(std::make_shared<ModelCheckpoint>(
      o.dirpath(MapGcsUri(dirpath))
          .filename(filename)
          .auto_insert_metric_name(auto_insert)
          .monitor(monitor)
          .mode(mode)
          .save_top_k(top_k)
          .save_weights_only(weights_only)
          .every_n_epochs(epochs)
          .every_n_train_steps(steps)
          .train_time_interval(interval)
          .verbose(verbose)
          .enable_version_counter(versions)));
}

StatusOr<std::shared_ptr<Callback>> MakeEarlyStopping(
    const config::Node& node, const std::string& prefix) {
  internal::MapReader r(node, prefix);
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
      {"monitor", "min_delta", "patience", "verbose", "mode", "strict",
       "check_finite", "stopping_threshold", "divergence_threshold",
       "check_on_train_epoch_end", "log_rank_zero_only"}));
  EarlyStoppingOptions o;
  std::string monitor = "val_loss";
  int64_t patience = 3;
  double min_delta = 0;
  bool check_finite = true, strict = true, verbose = false, rank_zero = false;
  std::optional<double> stop_at, diverge_at;
  TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &monitor));
  TRIALSHIM_RETURN_IF_ERROR(r.Int("patience", &patience));
  TRIALSHIM_RETURN_IF_ERROR(r.Double("min_delta", &min_delta));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("check_finite", &check_finite));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("strict", &strict));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("verbose", &verbose));
  TRIALSHIM_RETURN_IF_ERROR(r.Bool("log_rank_zero_only", &rank_zero));
  TRIALSHIM_RETURN_IF_ERROR(
      OptionalDouble(r, node, "stopping_threshold", &stop_at));
  TRIALSHIM_RETURN_IF_ERROR(
      OptionalDouble(r, node, "divergence_threshold", &diverge_at));
  const config::Node* on_epoch = node.Get("check_on_train_epoch_end");
  if (on_epoch != nullptr && !on_epoch->is_null()) {
    bool v = false;
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("check_on_train_epoch_end", &v));
    o.check_on_train_epoch_end(v);
  }
  TRIALSHIM_ASSIGN_OR_RETURN(Mode mode, ModeOf(r, prefix));
  return std::shared_ptr<Callback>(std::make_shared<EarlyStopping>(
      o.monitor(monitor)
          .mode(mode)
          .patience(patience)
          .min_delta(min_delta)
          .check_finite(check_finite)
          .stopping_threshold(stop_at)
          .divergence_threshold(diverge_at)
          .strict(strict)
          .verbose(verbose)
          .log_rank_zero_only(rank_zero)));
}

StatusOr<std::shared_ptr<Callback>> MakeOther(const std::string& name,
                                              const config::Node& node,
                                              const std::string& prefix) {
  internal::MapReader r(node, prefix);
  if (name == "lr_monitor") {
    TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys(
        {"logging_interval", "log_momentum", "log_weight_decay"}));
    std::string interval = "epoch";
    bool momentum = false, decay = false;
    TRIALSHIM_RETURN_IF_ERROR(r.String("logging_interval", &interval));
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("log_momentum", &momentum));
    TRIALSHIM_RETURN_IF_ERROR(r.Bool("log_weight_decay", &decay));
    if (interval != "epoch" && interval != "step") {
      return Status::InvalidArgument(
          prefix + ".logging_interval: expected epoch|step, got '" + interval +
          "'");
    }
    return std::shared_ptr<Callback>(std::make_shared<LearningRateMonitor>(
        LearningRateMonitorOptions()
            .logging_interval(interval)
            .log_momentum(momentum)
            .log_weight_decay(decay)));
  }
  if (name == "model_summary") {
    TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"max_depth"}));
    int64_t depth = 1;
    TRIALSHIM_RETURN_IF_ERROR(r.Int("max_depth", &depth));
    if (depth < -1) {
      return Status::InvalidArgument(prefix +
                                     ".max_depth: expected -1, 0 or more, got " +
                                     std::to_string(depth));
    }
    return std::shared_ptr<Callback>(std::make_shared<ModelSummary>(depth));
  }
  TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"refresh_rate"}));
  int64_t rate = 1;
  TRIALSHIM_RETURN_IF_ERROR(r.Int("refresh_rate", &rate));
  if (rate < 0) {
    return Status::InvalidArgument(prefix +
                                   ".refresh_rate: expected an int >= 0, got " +
                                   std::to_string(rate));
  }
  return std::shared_ptr<Callback>(std::make_shared<ProgressBar>(rate));
}

}  // namespace

StatusOr<std::vector<std::shared_ptr<Callback>>> CallbacksFromConfig(
    const config::Node& node) {
  std::vector<std::shared_ptr<Callback>> out;
  internal::MapReader top(node, "callbacks");
  TRIALSHIM_RETURN_IF_ERROR(
      top.CheckKeys({"model_checkpoint", "early_stopping", "lr_monitor",
                     "model_summary", "progress_bar"}));
  if (node.is_null()) return out;
  for (const auto& [name, value] : node.AsMap()) {
    if (value.is_null()) continue;
    const std::string prefix = "callbacks." + name;
    StatusOr<std::shared_ptr<Callback>> made =
        name == "model_checkpoint" ? MakeModelCheckpoint(value, prefix)
        : name == "early_stopping" ? MakeEarlyStopping(value, prefix)
                                   : MakeOther(name, value, prefix);
    if (!made.ok()) return made.status();
    out.push_back(*made);
  }
  return out;
}

}  // namespace trialshim::trainer
