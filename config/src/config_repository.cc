#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "hydra_conf.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
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

// Where Python would import the package `name` ("a.b") from, as Hydra's
// ImportlibResourcesConfigSource finds it: its directory under the first of
// `roots` holding it, or "" with `*why` set. A name Python can not import
// (empty, or with an empty part: "", ".x", "a..b") is not searched, as
// importlib raises ValueError or TypeError there and Hydra takes the source
// as unavailable; a directory without __init__.py (a namespace package) is
// searched, and Hydra's `available()` still says it is not.
std::string PackageDir(const std::string& name,
                       const std::vector<std::string>& roots,
                       std::string* why) {
  if (name.empty() || name.front() == '.' ||
      name.find("..") != std::string::npos) {
    *why = "not a Python package name";
    return "";
  }
  std::string rel = name;
  std::replace(rel.begin(), rel.end(), '.', '/');
  for (const std::string& root : roots) {
    fs::path dir = fs::path(root) / rel;
    if (!IsDirectory(dir)) continue;
    if (!IsRegularFile(dir / "__init__.py")) {
      *why = "no __init__.py in " + dir.string() +
             ": a namespace package, searched all the same";
    }
    return dir.string();
  }
  std::string where;
  for (const std::string& root : roots) {
    where += (where.empty() ? "" : " or ") + root;
  }
  *why = "no directory " + rel + " under " + where +
         ", where Python would import it from";
  return "";
}

}  // namespace

StatusOr<ConfigRepository> ConfigRepository::Open(const std::string& dir) {
  if (dir.empty()) return Status::NotFound("config path is empty");
  // A directory we may not see or list would otherwise read as one without
  // configs ("Cannot find primary config", exit 2); it is a runtime fault.
  auto unreadable = [&](const std::error_code& ec) {
    return Status::IOError("cannot read config directory " + Abbreviated(dir) +
                           ": " + ec.message());
  };
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory &&
      ec != std::errc::not_a_directory) {
    return unreadable(ec);
  }
  if (!fs::exists(st)) {
    return Status::NotFound("config path '" + Abbreviated(dir) +
                            "' does not exist");
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

// Hydra's search path: its own configs (pkg://hydra.conf), the app's
// directory, hydra.searchpath's entries, then Hydra's structured configs.
// An app may add options to Hydra's groups (hydra/job_logging/custom.yaml).

std::vector<ConfigSource> ConfigRepository::Sources() const {
  std::error_code ec;
  fs::path abs = fs::absolute(dir_, ec);
  std::string shown = ec ? dir_ : abs.lexically_normal().string();
  if (shown.size() > 1 && shown.back() == '/') shown.pop_back();
  std::vector<ConfigSource> out = {{"hydra.conf", "pkg", "hydra", ""},
                                   {shown, "file", "main", dir_}};
  out.insert(out.end(), extra_.begin(), extra_.end());
  out.push_back({"", "structured", "schema", ""});
  return out;
}

void ConfigRepository::AddSearchPath(const std::string& entry,
                                     const std::string& provider,
                                     const std::vector<std::string>& pkg_roots,
                                     std::string* warning) {
  ConfigSource source{entry, "file", provider, ""};
  size_t sep = entry.find("://");
  if (sep != std::string::npos) {
    source.scheme = entry.substr(0, sep);
    source.path = entry.substr(sep + 3);
  }
  std::string why;
  if (source.scheme == "file") {
    if (IsDirectory(source.path)) {
      source.dir = source.path;
    } else {
      why = "no such directory";
    }
  } else if (source.scheme == "pkg") {
    // Hydra's spelling of the package: "a/b/" is "a.b".
    std::replace(source.path.begin(), source.path.end(), '/', '.');
    while (!source.path.empty() && source.path.back() == '.') {
      source.path.pop_back();
    }
    source.dir = PackageDir(source.path, pkg_roots, &why);
  } else {
    why = "scheme '" + source.scheme + "' is not supported";
  }
  if (!why.empty()) {
    *warning = "provider=" + provider + ", path=" + source.path +
               " is not available (" + why + ")";
  }
  extra_.push_back(std::move(source));
}

std::vector<std::string> ConfigRepository::SearchDirs() const {
  std::vector<std::string> dirs = {dir_};
  for (const ConfigSource& s : extra_) {
    if (!s.dir.empty()) dirs.push_back(s.dir);
  }
  return dirs;
}

bool ConfigRepository::GroupExists(std::string_view group) const {
  const std::vector<std::string>& builtin = internal::BuiltinGroups();
  if (std::find(builtin.begin(), builtin.end(), group) != builtin.end()) {
    return true;
  }
  // stat(2) on the joined text: the shim asks this for every argument of
  // every trial, and std::filesystem::path costs more than the call.
  struct stat st;
  for (const std::string& dir : SearchDirs()) {
    std::string path = dir;
    path += '/';
    path += group;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return true;
  }
  return false;
}

std::vector<std::string> ConfigRepository::GroupOptions(
    std::string_view group) const {
  std::vector<std::string> options = internal::BuiltinGroupOptions(group);
  for (const std::string& dir : SearchDirs()) {
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(dir) / std::string(group), ec), end;
         !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!EndsWith(name, kExtension) || !IsRegularFile(it->path())) continue;
      options.push_back(name.substr(0, name.size() - kExtension.size()));
    }
  }
  // Byte order, as Python's sorted() gives Hydra's listing.
  std::sort(options.begin(), options.end());
  options.erase(std::unique(options.begin(), options.end()), options.end());
  return options;
}

std::vector<std::string> ConfigRepository::Groups() const {
  std::vector<std::string> groups = internal::BuiltinGroups();
  for (const std::string& dir : SearchDirs()) CollectGroups(dir, "", &groups);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

std::optional<std::string> ConfigRepository::GroupMeant(
    std::string_view key, std::string_view option) const {
  if (GroupExists(key)) return std::nullopt;
  std::vector<std::string> groups;
  for (std::string& g : Groups()) {
    if (!IsHydraKey(g)) groups.push_back(std::move(g));
  }
  for (const std::string& g : ClosestMatches(key, groups, 1)) {
    std::vector<std::string> options = GroupOptions(g);
    if (std::find(options.begin(), options.end(), option) != options.end()) {
      return g;
    }
  }
  return std::nullopt;
}

bool ConfigRepository::ConfigExists(std::string_view path) const {
  return IsBuiltin(path) || !FindFile(path).empty();
}

std::string ConfigRepository::FindFile(std::string_view path) const {
  std::string file(path);
  if (!EndsWith(file, kExtension)) file += kExtension;
  for (const std::string& dir : SearchDirs()) {
    fs::path candidate = fs::path(dir) / file;
    if (IsRegularFile(candidate)) return candidate.string();
  }
  return "";
}

bool ConfigRepository::IsBuiltin(std::string_view path) {
  if (EndsWith(path, kExtension)) path.remove_suffix(kExtension.size());
  return internal::FindBuiltinConfig(path) != nullptr;
}

}  // namespace trialshim::config
