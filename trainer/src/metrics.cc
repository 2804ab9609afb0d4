#include "trialshim/trainer/metrics.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "trialshim/base/csv.h"
#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"

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

void MetricsCsv::Add(int64_t epoch, int64_t step,
                     const std::map<std::string, double>& metrics) {
  rows_.push_back(Row{epoch, step, metrics});
  for (const auto& [name, value] : metrics) keys_.insert(name);
}

std::string MetricsCsv::Render() const {
  // CSVLogger sorts every key it has seen, "epoch" and "step" included, and
  // writes through csv.DictWriter.
  std::set<std::string> columns = keys_;
  columns.insert("epoch");
  columns.insert("step");
  std::string out;
  AppendCsvRow(std::vector<std::string>(columns.begin(), columns.end()), &out);
  std::vector<std::string> cells;
  for (const Row& row : rows_) {
    cells.clear();
    for (const auto& c : columns) {
      if (c == "epoch") {
        cells.push_back(std::to_string(row.epoch));
      } else if (c == "step") {
        cells.push_back(std::to_string(row.step));
      } else if (auto it = row.metrics.find(c); it != row.metrics.end()) {
        cells.push_back(FormatPythonFloat(it->second));
      } else {
        cells.emplace_back();
      }
    }
    AppendCsvRow(cells, &out);
  }
  return out;
}

Status MetricsCsv::Flush() const {
  TRIALSHIM_RETURN_IF_ERROR(
      MakeDirectories(std::filesystem::path(path_).parent_path().string()));
  return WriteFileDurably(path_, Render());
}

Status MetricsCsv::Resume(int64_t global_step) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Status::Ok();  // nothing logged yet
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return Status::DataLoss(path_ + " can not be continued: " + why);
  };
  StatusOr<std::vector<std::vector<std::string>>> rows = ParseCsv(text);
  if (!rows.ok()) return bad(rows.status().message());
  if (rows->empty()) return Status::Ok();
  const std::vector<std::string>& header = rows->front();
  std::vector<Row> kept;
  std::set<std::string> keys;
  for (size_t r = 1; r < rows->size(); ++r) {
    const std::vector<std::string>& cells = (*rows)[r];
    if (cells.size() != header.size()) {
      return bad("row " + std::to_string(r + 1) + " has " +
                 std::to_string(cells.size()) + " fields, the header " +
                 std::to_string(header.size()));
    }
    Row row{-1, -1, {}};
    for (size_t c = 0; c < cells.size(); ++c) {
      if (cells[c].empty()) continue;
      char* end = nullptr;
      const double v = std::strtod(cells[c].c_str(), &end);
      if (*end != '\0') return bad("'" + cells[c] + "' is not a number");
      if (header[c] == "epoch") {
        row.epoch = static_cast<int64_t>(v);
      } else if (header[c] == "step") {
        row.step = static_cast<int64_t>(v);
      } else {
        row.metrics[header[c]] = v;
      }
    }
    if (row.epoch < 0 || row.step < 0) return bad("a row has no epoch or step");
    if (row.step >= global_step) continue;
    for (const auto& m : row.metrics) keys.insert(m.first);
    kept.push_back(std::move(row));
  }
  rows_ = std::move(kept);
  keys_ = std::move(keys);
  return Status::Ok();
}

}  // namespace trialshim::trainer
