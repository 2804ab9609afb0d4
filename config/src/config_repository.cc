#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "directory_listings.h"
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

// `dir`/`rel` as std::filesystem joins them: "conf/" and "x" make "conf/x".
std::string Join(const std::string& dir, std::string_view rel) {
  return dir.back() == '/' ? dir + std::string(rel)
                           : dir + "/" + std::string(rel);
}

using Kind = internal::DirectoryListings::Kind;

void CollectGroups(internal::DirectoryListings* listings,
                   const std::string& root, const std::string& prefix,
                   std::vector<std::string>* out) {
  for (const std::string& name :
       listings->Names(prefix.empty() ? root : Join(root, prefix))) {
    // Python packages keep caches next to configs; Hydra hides them too.
    if (name == "__pycache__") continue;
    std::string group = prefix.empty() ? name : prefix + "/" + name;
    if (listings->KindOf(root, group) != Kind::kDirectory) continue;
    out->push_back(group);
    CollectGroups(listings, root, group, out);
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

ConfigRepository::ConfigRepository()
    : listings_(std::make_shared<internal::DirectoryListings>()) {}

StatusOr<ConfigRepository> ConfigRepository::Open(const std::string& dir) {
  if (dir.empty()) return Status::NotFound("config path is empty");
  ConfigRepository repo;
  // Listing it now also answers the lookups to come (directory_listings.h).
  int error = repo.listings_->ListError(dir);
  if (error == ENOENT) {
    return Status::NotFound("config path '" + Abbreviated(dir) +
                            "' does not exist");
  }
  if (error == ENOTDIR) {
    return Status::NotFound("config path '" + dir + "' is not a directory");
  }
  // A directory we may not see or list would otherwise read as one without
  // configs ("Cannot find primary config", exit 2); it is a runtime fault.
  if (error != 0) {
    return Status::IOError("cannot read config directory " + Abbreviated(dir) +
                           ": " + std::generic_category().message(error));
  }
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
  for (const std::string& dir : SearchDirs()) {
    if (listings_->KindOf(dir, group) == Kind::kDirectory) return true;
  }
  return false;
}

std::vector<std::string> ConfigRepository::GroupOptions(
    std::string_view group) const {
  std::vector<std::string> options = internal::BuiltinGroupOptions(group);
  const std::string rel(group);
  for (const std::string& dir : SearchDirs()) {
    if (listings_->KindOf(dir, rel) != Kind::kDirectory) continue;
    for (const std::string& name : listings_->Names(Join(dir, rel))) {
      if (!EndsWith(name, kExtension) ||
          listings_->KindOf(dir, rel + "/" + name) != Kind::kFile) {
        continue;
      }
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
  for (const std::string& dir : SearchDirs()) {
    CollectGroups(listings_.get(), dir, "", &groups);
  }
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
    if (listings_->KindOf(dir, file) == Kind::kFile) return Join(dir, file);
  }
  return "";
}

bool ConfigRepository::IsBuiltin(std::string_view path) {
  if (EndsWith(path, kExtension)) path.remove_suffix(kExtension.size());
  return internal::FindBuiltinConfig(path) != nullptr;
}

}  // namespace trialshim::config
