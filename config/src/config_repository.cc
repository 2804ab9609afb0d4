#include <algorithm>
#include <filesystem>
#include <system_error>

#include "hydra_conf.h"
#include "trialshim/config/compose.h"

namespace trialshim::config {
namespace {

namespace fs = std::filesystem;

// Hydra 1.2+ reads only ".yaml" files as configs (".yml" was dropped).
constexpr std::string_view kExtension = ".yaml";

bool IsDirectory(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool IsRegularFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

void CollectGroups(const fs::path& dir, const std::string& prefix,
                   std::vector<std::string>* out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!IsDirectory(it->path())) continue;
    std::string name = it->path().filename().string();
    // Python packages keep caches next to configs; Hydra hides them too.
    if (name == "__pycache__") continue;
    std::string group = prefix.empty() ? name : prefix + "/" + name;
    out->push_back(group);
    CollectGroups(it->path(), group, out);
  }
}

}  // namespace

StatusOr<ConfigRepository> ConfigRepository::Open(const std::string& dir) {
  if (dir.empty()) return Status::NotFound("config path is empty");
  // A directory we may not see or list would otherwise read as one without
  // configs ("Cannot find primary config", exit 2); it is a runtime fault.
  auto unreadable = [&](const std::error_code& ec) {
    return Status::IOError("cannot read config directory " + dir + ": " +
                           ec.message());
  };
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory &&
      ec != std::errc::not_a_directory) {
    return unreadable(ec);
  }
  if (!fs::exists(st)) {
    return Status::NotFound("config path '" + dir + "' does not exist");
  }
  if (!fs::is_directory(st)) {
    return Status::NotFound("config path '" + dir + "' is not a directory");
  }
  fs::directory_iterator probe(dir, ec);
  if (ec) return unreadable(ec);
  ConfigRepository repo;
  repo.dir_ = dir;
  return repo;
}

// Hydra's search path puts its own configs (pkg://hydra.conf) before the
// app's directory: Hydra's groups and options are seen first, and an app may
// add options to them (hydra/job_logging/custom.yaml).

bool ConfigRepository::GroupExists(std::string_view group) const {
  std::vector<std::string> builtin = internal::BuiltinGroups();
  return std::find(builtin.begin(), builtin.end(), group) != builtin.end() ||
         IsDirectory(fs::path(dir_) / std::string(group));
}

std::vector<std::string> ConfigRepository::GroupOptions(
    std::string_view group) const {
  std::vector<std::string> options = internal::BuiltinGroupOptions(group);
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(dir_) / std::string(group), ec), end;
       !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!EndsWith(name, kExtension) || !IsRegularFile(it->path())) continue;
    options.push_back(name.substr(0, name.size() - kExtension.size()));
  }
  // Byte order, as Python's sorted() gives Hydra's listing.
  std::sort(options.begin(), options.end());
  options.erase(std::unique(options.begin(), options.end()), options.end());
  return options;
}

std::vector<std::string> ConfigRepository::Groups() const {
  std::vector<std::string> groups = internal::BuiltinGroups();
  CollectGroups(dir_, "", &groups);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

bool ConfigRepository::ConfigExists(std::string_view path) const {
  if (IsBuiltin(path)) return true;
  std::string file(path);
  if (!EndsWith(file, kExtension)) file += kExtension;
  return IsRegularFile(fs::path(dir_) / file);
}

bool ConfigRepository::IsBuiltin(std::string_view path) {
  if (EndsWith(path, kExtension)) path.remove_suffix(kExtension.size());
  return internal::FindBuiltinConfig(path) != nullptr;
}

}  // namespace trialshim::config
