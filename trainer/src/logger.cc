// What every Lightning logger shares: the save_dir/name/version directory
// (lightning/fabric/loggers/csv_logs.py and tensorboard.py, 2.6.2), the
// metric prefix, and the Trainer's default loggers.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "trialshim/trainer/loggers.h"
#include "trialshim/trainer/options.h"

namespace trialshim::trainer {

std::string PathJoin(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (i == 0 || (!p.empty() && p[0] == '/')) {
      out = p;
    } else if (out.empty() || out.back() == '/') {
      out += p;
    } else {
      out += "/" + p;
    }
  }
  return out;
}

int64_t NextLoggerVersion(const std::string& dir) {
  DIR* d = opendir(dir.empty() ? "." : dir.c_str());
  if (d == nullptr) return 0;
  int64_t next = 0;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, 8, "version_") != 0) continue;
    // name.split("_")[1].isdigit()
    const std::string number = name.substr(8, name.find('_', 8) - 8);
    if (number.empty() || number.size() > 18) continue;
    bool digits = true;
    for (char c : number)
      digits = digits && std::isdigit(static_cast<unsigned char>(c));
    struct stat st;
    if (!digits || stat(PathJoin({dir, name}).c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      continue;
    }
    next =
        std::max<int64_t>(next, std::strtoll(number.c_str(), nullptr, 10) + 1);
  }
  closedir(d);
  return next;
}

DirLogger::DirLogger(LoggerDirOptions options)
    : options_(std::move(options)), save_dir_(MapGcsUri(options_.save_dir)) {}

void DirLogger::set_default_save_dir(const std::string& dir) {
  if (options_.save_dir.empty()) save_dir_ = MapGcsUri(dir);
}

std::string DirLogger::version() {
  if (!version_) {
    const LoggerVersion& v = options_.version;
    if (const auto* s = std::get_if<std::string>(&v)) {
      version_ = *s;
    } else if (const auto* n = std::get_if<int64_t>(&v)) {
      version_ = std::to_string(*n);
    } else {
      version_ = std::to_string(
          NextLoggerVersion(PathJoin({save_dir_, options_.name})));
    }
  }
  return *version_;
}

std::string DirLogger::log_dir() {
  const std::string v = version();
  const bool named = std::holds_alternative<std::string>(options_.version);
  return PathJoin({save_dir_, options_.name, named ? v : "version_" + v});
}

std::map<std::string, double> DirLogger::Prefixed(
    const std::map<std::string, double>& metrics) const {
  if (options_.prefix.empty()) return metrics;
  std::map<std::string, double> out;
  for (const auto& [k, v] : metrics) out[options_.prefix + "-" + k] = v;
  return out;
}

std::string DirLogger::EpochName() const {
  return options_.prefix.empty() ? "epoch" : options_.prefix + "-epoch";
}

std::vector<std::shared_ptr<Logger>> DefaultLoggers() {
  CsvLoggerOptions csv;
  csv.name = "";
  csv.version = std::string();
  std::vector<std::shared_ptr<Logger>> out = {std::make_shared<CsvLogger>(csv)};
  const char* tensorboard = std::getenv("AIP_TENSORBOARD_LOG_DIR");
  if (tensorboard != nullptr && *tensorboard != '\0') {
    TensorBoardLoggerOptions tb;
    tb.save_dir = tensorboard;
    tb.name = "";
    tb.version = std::string();
    out.push_back(std::make_shared<TensorBoardLogger>(tb));
  }
  return out;
}

}  // namespace trialshim::trainer
