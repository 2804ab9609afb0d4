#include "directory_listings.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>

namespace trialshim::config::internal {
namespace {

using Kind = DirectoryListings::Kind;

Kind StatKind(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Kind::kMissing;
  if (S_ISREG(st.st_mode)) return Kind::kFile;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  return Kind::kOther;
}

}  // namespace

const DirectoryListings::Listing& DirectoryListings::List(
    const std::string& dir) {
  auto [it, fresh] = listings_.try_emplace(dir);
  Listing& l = it->second;
  if (!fresh) return l;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    l.error = errno;
    return l;
  }
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    l.names.push_back(name);
    l.types.emplace(std::move(name), e->d_type);
  }
  // A listing cut short answers nothing: stat(2) answers instead.
  if (errno != 0) l.error = errno;
  ::closedir(d);
  return l;
}

Kind DirectoryListings::KindOf(const std::string& root, std::string_view rel) {
  std::string dir = root;
  for (size_t pos = 0;;) {
    size_t slash = rel.find('/', pos);
    std::string_view name =
        rel.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
    // "a//b", "./x", "../x": not a name in a listing; stat(2) knows.
    if (name.empty() || name == "." || name == "..") {
      return StatKind(root + "/" + std::string(rel));
    }
    const Listing& l = List(dir);
    if (l.error == ENOENT || l.error == ENOTDIR) return Kind::kMissing;
    std::string path = dir + "/" + std::string(name);
    if (l.error != 0) {
      return StatKind(slash == std::string_view::npos
                          ? path
                          : path + std::string(rel.substr(slash)));
    }
    auto it = l.types.find(std::string(name));
    if (it == l.types.end()) return Kind::kMissing;
    Kind kind = it->second == DT_REG   ? Kind::kFile
                : it->second == DT_DIR ? Kind::kDirectory
                : it->second == DT_LNK || it->second == DT_UNKNOWN
                    ? StatKind(path)
                    : Kind::kOther;
    if (slash == std::string_view::npos) return kind;
    if (kind != Kind::kDirectory) return Kind::kMissing;
    dir = std::move(path);
    pos = slash + 1;
  }
}

std::vector<std::string> DirectoryListings::Names(const std::string& dir) {
  return List(dir).names;
}

}  // namespace trialshim::config::internal
