#include "trialshim/trainer/scheduler.h"

#include <algorithm>
#include <cmath>

#include "node_read.h"
#include "trialshim/base/spell.h"

namespace trialshim::trainer {

std::vector<double> GetLearningRates(const torch::optim::Optimizer& optimizer) {
  std::vector<double> lrs;
  for (const auto& group : optimizer.param_groups()) {
    lrs.push_back(group.options().get_lr());
  }
  return lrs;
}

void SetLearningRates(torch::optim::Optimizer& optimizer,
                      const std::vector<double>& lrs) {
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) {
    groups[i].options().set_lr(lrs[i]);
  }
}

LrScheduler::LrScheduler(torch::optim::Optimizer& optimizer)
    : optimizer_(optimizer), base_lrs_(GetLearningRates(optimizer)) {}

void LrScheduler::Step(double metric) {
  ++count_;
  SetLearningRates(optimizer_, ComputeLrs(metric));
}

void LrScheduler::Apply() {
  SetLearningRates(optimizer_,
                   ComputeLrs(std::numeric_limits<double>::quiet_NaN()));
}

nlohmann::json LrScheduler::State() const {
  return {{"name", name()}, {"count", count_}};
}

Status LrScheduler::LoadState(const nlohmann::json& state) {
  if (!state.is_object() || state.value("name", "") != name() ||
      !state.contains("count") || !state["count"].is_number_integer()) {
    return Status::DataLoss("scheduler state does not match a '" + name() +
                            "' scheduler");
  }
  count_ = state["count"].get<int64_t>();
  Apply();
  return Status::Ok();
}

StepLr::StepLr(torch::optim::Optimizer& optimizer, int64_t step_size,
               double gamma)
    : LrScheduler(optimizer),
      step_size_(std::max<int64_t>(1, step_size)),
      gamma_(gamma) {
  Apply();
}

std::vector<double> StepLr::ComputeLrs(double) {
  std::vector<double> lrs;
  double scale = std::pow(gamma_, static_cast<double>(count_ / step_size_));
  for (double base : base_lrs_) lrs.push_back(base * scale);
  return lrs;
}

ExponentialLr::ExponentialLr(torch::optim::Optimizer& optimizer, double gamma)
    : LrScheduler(optimizer), gamma_(gamma) {
  Apply();
}

std::vector<double> ExponentialLr::ComputeLrs(double) {
  std::vector<double> lrs;
  double scale = std::pow(gamma_, static_cast<double>(count_));
  for (double base : base_lrs_) lrs.push_back(base * scale);
  return lrs;
}

CosineWarmupLr::CosineWarmupLr(torch::optim::Optimizer& optimizer,
                               int64_t warmup, int64_t total,
                               double warmup_start_factor, double min_lr_factor)
    : LrScheduler(optimizer),
      warmup_(std::max<int64_t>(0, warmup)),
      total_(std::max<int64_t>(total, warmup_ + 1)),
      start_factor_(warmup_start_factor),
      min_factor_(min_lr_factor) {
  Apply();
}

std::vector<double> CosineWarmupLr::ComputeLrs(double) {
  double scale;
  if (count_ < warmup_) {
    scale = start_factor_ +
            (1.0 - start_factor_) * static_cast<double>(count_) / warmup_;
  } else {
    double progress = static_cast<double>(std::min(count_, total_) - warmup_) /
                      static_cast<double>(total_ - warmup_);
    scale = min_factor_ +
            (1.0 - min_factor_) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * scale);
  return lrs;
}

ReduceLrOnPlateau::ReduceLrOnPlateau(torch::optim::Optimizer& optimizer,
                                     bool maximize, double factor,
                                     int64_t patience, double threshold,
                                     int64_t cooldown, double min_lr)
    : LrScheduler(optimizer),
      maximize_(maximize),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      cooldown_(cooldown),
      min_lr_(min_lr),
      best_(maximize ? -std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::infinity()) {}

std::vector<double> ReduceLrOnPlateau::ComputeLrs(double metric) {
  std::vector<double> lrs = GetLearningRates(optimizer_);
  if (std::isnan(metric)) return lrs;  // nothing to judge (no validation)
  bool better =
      maximize_
          ? metric > best_ * (best_ >= 0 ? 1 + threshold_ : 1 - threshold_)
          : metric < best_ * (best_ >= 0 ? 1 - threshold_ : 1 + threshold_);
  if (better) {
    best_ = metric;
    bad_counts_ = 0;
  } else {
    ++bad_counts_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_counts_ = 0;
  }
  if (bad_counts_ > patience_) {
    for (double& lr : lrs) lr = std::max(lr * factor_, min_lr_);
    cooldown_left_ = cooldown_;
    bad_counts_ = 0;
  }
  return lrs;
}

nlohmann::json ReduceLrOnPlateau::State() const {
  nlohmann::json state = LrScheduler::State();
  state["best"] =
      std::isfinite(best_) ? nlohmann::json(best_) : nlohmann::json(nullptr);
  state["bad_counts"] = bad_counts_;
  state["cooldown_left"] = cooldown_left_;
  state["lrs"] = GetLearningRates(optimizer_);
  return state;
}

Status ReduceLrOnPlateau::LoadState(const nlohmann::json& state) {
  try {
    if (state.value("name", "") != name()) {
      return Status::DataLoss("scheduler state is not a 'plateau' one");
    }
    count_ = state.at("count").get<int64_t>();
    if (!state.at("best").is_null()) best_ = state.at("best").get<double>();
    bad_counts_ = state.at("bad_counts").get<int64_t>();
    cooldown_left_ = state.at("cooldown_left").get<int64_t>();
    SetLearningRates(optimizer_, state.at("lrs").get<std::vector<double>>());
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss(std::string("bad plateau scheduler state: ") +
                            e.what());
  }
  return Status::Ok();
}

StatusOr<SchedulerConfig> MakeScheduler(const config::Node& node,
                                        torch::optim::Optimizer& optimizer,
                                        int64_t total_epochs,
                                        int64_t total_steps) {
  SchedulerConfig out;
  if (node.is_null()) return out;
  internal::MapReader r(node, "scheduler");
  std::string name = "none";
  TRIALSHIM_RETURN_IF_ERROR(r.String("name", &name));
  std::string interval = "epoch";
  TRIALSHIM_RETURN_IF_ERROR(r.String("interval", &interval));
  if (interval != "epoch" && interval != "step") {
    return Status::InvalidArgument(
        "scheduler.interval: expected epoch|step, got '" + interval + "'");
  }
  out.interval =
      interval == "step" ? SchedulerInterval::kStep : SchedulerInterval::kEpoch;
  const int64_t total = interval == "step" ? total_steps : total_epochs;
  if (name == "none") {
    TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"name", "interval"}));
  } else if (name == "step") {
    TRIALSHIM_RETURN_IF_ERROR(
        r.CheckKeys({"name", "interval", "step_size", "gamma"}));
    int64_t step_size = 1;
    double gamma = 0.1;
    TRIALSHIM_RETURN_IF_ERROR(r.Int("step_size", &step_size));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("gamma", &gamma));
    out.scheduler = std::make_shared<StepLr>(optimizer, step_size, gamma);
  } else if (name == "exponential") {
    TRIALSHIM_RETURN_IF_ERROR(r.CheckKeys({"name", "interval", "gamma"}));
    double gamma = 0.9;
    TRIALSHIM_RETURN_IF_ERROR(r.Double("gamma", &gamma));
    out.scheduler = std::make_shared<ExponentialLr>(optimizer, gamma);
  } else if (name == "cosine") {
    TRIALSHIM_RETURN_IF_ERROR(
        r.CheckKeys({"name", "interval", "warmup", "total",
                     "warmup_start_factor", "min_lr_factor"}));
    int64_t warmup = 0, tot = total;
    double start = 0.01, min_factor = 0.0;
    TRIALSHIM_RETURN_IF_ERROR(r.Int("warmup", &warmup));
    TRIALSHIM_RETURN_IF_ERROR(r.Int("total", &tot));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("warmup_start_factor", &start));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("min_lr_factor", &min_factor));
    if (tot <= 0) {
      return Status::InvalidArgument(
          "scheduler.total: the cosine schedule needs a length; set "
          "scheduler.total or a finite trainer.max_epochs/max_steps");
    }
    out.scheduler = std::make_shared<CosineWarmupLr>(optimizer, warmup, tot,
                                                     start, min_factor);
  } else if (name == "plateau") {
    TRIALSHIM_RETURN_IF_ERROR(
        r.CheckKeys({"name", "interval", "monitor", "mode", "factor",
                     "patience", "threshold", "cooldown", "min_lr"}));
    std::string mode = "min";
    double factor = 0.1, threshold = 1e-4, min_lr = 0;
    int64_t patience = 10, cooldown = 0;
    TRIALSHIM_RETURN_IF_ERROR(r.String("monitor", &out.monitor));
    TRIALSHIM_RETURN_IF_ERROR(r.String("mode", &mode));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("factor", &factor));
    TRIALSHIM_RETURN_IF_ERROR(r.Int("patience", &patience));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("threshold", &threshold));
    TRIALSHIM_RETURN_IF_ERROR(r.Int("cooldown", &cooldown));
    TRIALSHIM_RETURN_IF_ERROR(r.Double("min_lr", &min_lr));
    if (mode != "min" && mode != "max") {
      return Status::InvalidArgument("scheduler.mode: expected min|max, got '" +
                                     mode + "'");
    }
    out.scheduler = std::make_shared<ReduceLrOnPlateau>(
        optimizer, mode == "max", factor, patience, threshold, cooldown,
        min_lr);
  } else {
    return Status::InvalidArgument(
        "scheduler.name: unknown scheduler '" + name +
        "'; expected one of none, step, exponential, cosine, plateau" +
        DidYouMean(
            name, {"none", "step", "exponential", "cosine", "plateau"}));
  }
  return out;
}

}  // namespace trialshim::trainer
