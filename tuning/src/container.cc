// A trial's container as this machine stands in for it; see container.h.
#include "trialshim/tuning/container.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "trialshim/base/file.h"
#include "trialshim/base/strings.h"
#include "trialshim/base/subprocess.h"

namespace trialshim::tuning {
namespace {

namespace fs = std::filesystem;

// Hydra's default run and sweep roots: each trial starts without them, as
// in a fresh container, or trials started in the same second would share a
// run directory.
constexpr const char* kNeverLinked[] = {"outputs", "multirun"};

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// `dir` as the user would type it here: relative when inside the current
// directory.
std::string Display(const fs::path& dir) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (!ec) {
    fs::path rel = dir.lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..") return rel.string();
  }
  return dir.string();
}

// `near` and its parents, nearest first.
std::vector<fs::path> Around(const std::string& near) {
  std::vector<fs::path> out;
  if (near.empty()) return out;
  std::error_code ec;
  fs::path p = fs::absolute(near, ec).lexically_normal();
  for (int up = 0; up < 16 && !p.empty(); ++up) {
    out.push_back(p);
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return out;
}

std::string Normal(const fs::path& p) {
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

StatusOr<Volume> ParseVolume(const std::string& text) {
  size_t colon = text.rfind(":/");
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument(
        "--volume '" + text +
        "': expected HOST:CONTAINER with an absolute CONTAINER path, e.g. "
        "--volume examples/vertex:/app");
  }
  std::string host = text.substr(0, colon);
  std::string container = Normal(text.substr(colon + 1));
  if (!Exists(host)) {
    return Status::InvalidArgument("--volume '" + text + "': '" + host +
                                   "' does not exist here");
  }
  std::error_code ec;
  return Volume{Normal(fs::absolute(host, ec)), container};
}

Container::Container(std::string workdir, std::vector<Volume> volumes,
                     std::string self_exe)
    : volumes_(std::move(volumes)), self_exe_(std::move(self_exe)) {
  std::error_code ec;
  workdir_ = Normal(fs::absolute(workdir.empty() ? "." : workdir, ec));
}

std::string Container::HostPath(const std::string& path) const {
  if (path.empty()) return path;
  if (path[0] != '/') return Normal(fs::path(workdir_) / path);
  const Volume* best = nullptr;
  for (const Volume& v : volumes_) {
    bool under = path == v.container ||
                 (StartsWith(path, v.container) &&
                  (v.container == "/" || path[v.container.size()] == '/'));
    if (under && (!best || v.container.size() > best->container.size())) {
      best = &v;
    }
  }
  if (!best) return path;
  std::string rest = path.substr(best->container.size());
  return Normal(best->host + (rest.empty() || rest[0] == '/' ? "" : "/") +
                rest);
}

std::string Container::MapToken(const std::string& token) const {
  if (StartsWith(token, "/")) return HostPath(token);
  size_t eq = token.find('=');
  if (eq != std::string::npos && eq + 1 < token.size() &&
      token[eq + 1] == '/') {
    return token.substr(0, eq + 1) + HostPath(token.substr(eq + 1));
  }
  return token;
}

std::vector<std::string> Container::MapTokens(
    std::vector<std::string> tokens) const {
  for (std::string& t : tokens) t = MapToken(t);
  return tokens;
}

bool Container::IsTrialshim(const std::string& program) {
  return fs::path(program).filename() == "trialshim";
}

StatusOr<std::string> Container::ResolveProgram(
    const std::string& program, const std::string& path_var,
    const std::string& near) const {
  if (IsTrialshim(program)) {
    if (!self_exe_.empty()) return self_exe_;
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return IOErrorFor("read", "/proc/self/exe", ec.value());
    return self.string();
  }
  std::string found;
  if (program.find('/') != std::string::npos) {
    found = HostPath(program);
  } else {
    found = FindProgram(program, path_var, workdir_);
    if (found.empty()) {
      return Status::InvalidArgument("the command '" + program +
                                     "' is not in the trial's PATH (" +
                                     path_var + ")");
    }
    if (found[0] != '/') found = Normal(fs::path(workdir_) / found);
  }
  struct stat st;
  if (stat(found.c_str(), &st) != 0) {
    std::string fix = SuggestFix(program, near);
    return Status::InvalidArgument(
        "the command '" + program + "' does not exist here" +
        (program[0] == '/' ? "" : " (in " + workdir_ + ")") +
        (fix.empty() ? "" : ": " + fix + " finds it"));
  }
  if (!S_ISREG(st.st_mode) || access(found.c_str(), X_OK) != 0) {
    return Status::InvalidArgument("the command '" + program + "' (" + found +
                                   ") is not an executable file");
  }
  return found;
}

std::string Container::SuggestFix(const std::string& path,
                                  const std::string& near) const {
  std::vector<fs::path> dirs = Around(near);
  if (path.empty()) return "";
  if (path[0] != '/') {
    for (const fs::path& d : dirs) {
      if (Exists(d / path)) return "--workdir " + Display(d);
    }
    return "";
  }
  dirs.push_back(workdir_);
  std::vector<std::string> parts;
  for (const fs::path& part : fs::path(path).relative_path()) {
    parts.push_back(part.string());
  }
  // The shortest root that is not a directory here: mapping /usr would
  // hide the real one from every other token.
  std::string root;
  for (size_t k = 1; k < parts.size(); ++k) {
    root += "/" + parts[k - 1];
    if (Exists(root)) continue;
    fs::path rest;
    for (size_t i = k; i < parts.size(); ++i) rest /= parts[i];
    for (const fs::path& d : dirs) {
      if (Exists(d / rest)) return "--volume " + Display(d) + ":" + root;
    }
  }
  return "";
}

const char* WorkdirViewName(WorkdirView view) {
  switch (view) {
    case WorkdirView::kAuto:
      return "auto";
    case WorkdirView::kOverlay:
      return "overlay";
    case WorkdirView::kLinks:
      return "links";
  }
  return "?";
}

StatusOr<PrivateOverlay> Container::TrialOverlay(const std::string& trial_dir,
                                                 const std::string& out) const {
  PrivateOverlay o;
  o.upper = trial_dir + "/work";
  o.work = trial_dir + "/.overlay";
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(o.upper));
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(o.work));
  std::error_code ec;
  o.dir = fs::canonical(workdir_, ec).string();
  if (ec) return IOErrorFor("resolve", workdir_, ec.value());
  std::string real_out = fs::canonical(out, ec).string();
  if (ec) return IOErrorFor("resolve", out, ec.value());
  fs::path rel = fs::path(real_out).lexically_relative(o.dir);
  if (!rel.empty() && *rel.begin() != ".." && rel != ".") {
    o.keep.push_back(real_out);
  }
  return o;
}

Status Container::LinkWorkdir(const std::string& dir,
                              const std::vector<std::string>& exclude) const {
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));
  std::error_code ec;
  for (fs::directory_iterator it(workdir_, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool skip = false;
    for (const char* never : kNeverLinked) skip = skip || name == never;
    for (const std::string& e : exclude) skip = skip || name == e;
    std::string link = dir + "/" + name;
    struct stat st;
    if (skip || lstat(link.c_str(), &st) == 0) continue;
    if (symlink(it->path().c_str(), link.c_str()) != 0) {
      return IOErrorFor("link", link, errno);
    }
  }
  if (ec) return IOErrorFor("read directory", workdir_, ec.value());
  return Status::Ok();
}

}  // namespace trialshim::tuning
