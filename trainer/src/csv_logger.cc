// CSVLogger as Lightning 2.6.2 writes it: lightning/fabric/loggers/
// csv_logs.py (_ExperimentWriter: csv.DictWriter over the sorted keys, the
// file rewritten with the new header when a key appears) and
// lightning/pytorch/loggers/csv_logs.py (ExperimentWriter: hparams.yaml
// through save_hparams_to_yaml, i.e. OmegaConf.save).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "trialshim/base/csv.h"
#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/config/emit.h"
#include "trialshim/trainer/loggers.h"

namespace trialshim::trainer {

void MetricsCsv::Add(std::optional<int64_t> epoch, int64_t step,
                     const std::map<std::string, double>& metrics) {
  Row row{step, {}};
  for (const auto& [name, value] : metrics) {
    row.cells[name] = FormatPythonFloat(value);
    keys_.insert(name);
  }
  if (epoch) row.cells[epoch_column_] = std::to_string(*epoch);
  rows_.push_back(std::move(row));
}

std::string MetricsCsv::Render() const {
  // CSVLogger sorts every key it has seen, the epoch and "step" included,
  // and writes through csv.DictWriter (restval "").
  std::set<std::string> columns = keys_;
  columns.insert(epoch_column_);
  columns.insert("step");
  std::string out;
  AppendCsvRow(std::vector<std::string>(columns.begin(), columns.end()), &out);
  std::vector<std::string> cells;
  for (const Row& row : rows_) {
    cells.clear();
    for (const auto& c : columns) {
      if (c == "step") {
        cells.push_back(std::to_string(row.step));
      } else if (auto it = row.cells.find(c); it != row.cells.end()) {
        cells.push_back(it->second);
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
    Row row{-1, {}};
    for (size_t c = 0; c < cells.size(); ++c) {
      if (cells[c].empty()) continue;
      char* end = nullptr;
      const double v = std::strtod(cells[c].c_str(), &end);
      if (*end != '\0') return bad("'" + cells[c] + "' is not a number");
      if (header[c] == "step") {
        row.step = static_cast<int64_t>(v);
      } else {
        row.cells[header[c]] = cells[c];  // kept as written
      }
    }
    if (row.step < 0)
      return bad("row " + std::to_string(r + 1) + " has no step");
    if (row.step >= global_step) continue;
    for (const auto& cell : row.cells) {
      if (cell.first != epoch_column_) keys.insert(cell.first);
    }
    kept.push_back(std::move(row));
  }
  rows_ = std::move(kept);
  keys_ = std::move(keys);
  return Status::Ok();
}

CsvLogger::CsvLogger(CsvLoggerOptions options)
    : DirLogger(options), flush_every_(options.flush_logs_every_n_steps) {}

StatusOr<MetricsCsv*> CsvLogger::Experiment() {
  if (csv_) return &*csv_;
  const std::string dir = log_dir();
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));
  csv_.emplace(PathJoin({dir, "metrics.csv"}), EpochName());
  return &*csv_;
}

Status CsvLogger::resume(int64_t global_step) {
  TRIALSHIM_ASSIGN_OR_RETURN(MetricsCsv * csv, Experiment());
  return csv->Resume(global_step);
}

Status CsvLogger::log_hyperparams(const config::Node& params) {
  if (!params.is_null() && !params.is_map()) {
    return Status::InvalidArgument(
        std::string("CSVLogger.log_hyperparams: expected a map, got ") +
        params.type_name());
  }
  TRIALSHIM_RETURN_IF_ERROR(Experiment().status());
  if (params.is_map()) {
    for (const auto& [k, v] : params.AsMap()) hparams_.Set(k, v);  // update()
  }
  return WriteFileDurably(PathJoin({log_dir(), "hparams.yaml"}),
                          config::ToYaml(hparams_));
}

Status CsvLogger::log_metrics(const std::map<std::string, double>& metrics,
                              int64_t step, std::optional<int64_t> epoch) {
  TRIALSHIM_ASSIGN_OR_RETURN(MetricsCsv * csv, Experiment());
  csv->Add(epoch, step, Prefixed(metrics));
  if (flush_every_ > 0 && (step + 1) % flush_every_ == 0) return save();
  return Status::Ok();
}

Status CsvLogger::save() {
  // As _ExperimentWriter.save: nothing logged, nothing written.
  if (!csv_ || csv_->rows() == 0) return Status::Ok();
  return csv_->Flush();
}

Status CsvLogger::finalize(const std::string& status) {
  (void)status;
  return save();
}

}  // namespace trialshim::trainer
