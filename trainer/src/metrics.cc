#include "trialshim/trainer/metrics.h"

#include <cstdio>
#include <cstring>

namespace trialshim::trainer {

std::string JoinMetrics(const std::map<std::string, double>& metrics) {
  std::string out;
  for (const auto& [name, value] : metrics) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", value);
    out += (out.empty() ? "" : " ") + name + "=" + buf;
  }
  return out;
}

void MetricStore::BeginStep(Stage stage, int64_t batch_size) {
  stage_ = stage;
  batch_size_ = batch_size;
  step_.clear();
}

void MetricStore::Log(const std::string& name, double value,
                      const LogOptions& options) {
  const bool training = stage_ == Stage::kTrain;
  const bool on_step = options.on_step.value_or(training);
  const bool on_epoch = options.on_epoch.value_or(!training);
  const bool both = on_step && on_epoch;
  if (on_step) {
    std::string key = both ? name + "_step" : name;
    step_[key] = value;
    if (options.prog_bar) prog_bar_.insert(key);
    if (options.sync_dist) sync_dist_.insert(key);
  }
  if (on_epoch) {
    std::string key = both ? name + "_epoch" : name;
    Mean& m = epoch_[stage_][key];
    m.sum += value * static_cast<double>(batch_size_);
    m.weight += static_cast<double>(batch_size_);
    if (options.prog_bar) prog_bar_.insert(key);
    if (options.sync_dist) sync_dist_.insert(key);
  }
}

std::map<std::string, double> MetricStore::EpochValues(Stage stage) const {
  std::map<std::string, double> out;
  auto it = epoch_.find(stage);
  if (it == epoch_.end()) return out;
  for (const auto& [name, m] : it->second) {
    if (m.weight > 0) out[name] = m.sum / m.weight;
  }
  return out;
}

void MetricStore::ResetEpoch(Stage stage) { epoch_.erase(stage); }

nlohmann::json MetricStore::State() const {
  nlohmann::json state = nlohmann::json::object();
  auto it = epoch_.find(Stage::kTrain);
  if (it == epoch_.end()) return state;
  for (const auto& [name, m] : it->second) {
    // Sums are stored as bit patterns: JSON text would round them and a
    // resumed epoch must end on exactly the same mean.
    uint64_t sum_bits, weight_bits;
    static_assert(sizeof(double) == sizeof(uint64_t));
    std::memcpy(&sum_bits, &m.sum, sizeof sum_bits);
    std::memcpy(&weight_bits, &m.weight, sizeof weight_bits);
    state[name] = {sum_bits, weight_bits};
  }
  return state;
}

Status MetricStore::LoadState(const nlohmann::json& state) {
  epoch_.erase(Stage::kTrain);
  try {
    for (const auto& [name, pair] : state.items()) {
      uint64_t sum_bits = pair.at(0).get<uint64_t>();
      uint64_t weight_bits = pair.at(1).get<uint64_t>();
      Mean m;
      std::memcpy(&m.sum, &sum_bits, sizeof sum_bits);
      std::memcpy(&m.weight, &weight_bits, sizeof weight_bits);
      epoch_[Stage::kTrain][name] = m;
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss(std::string("bad metric state: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace trialshim::trainer
