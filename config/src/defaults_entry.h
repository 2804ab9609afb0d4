// One entry of a Hydra 1.3 defaults list and the tree it expands into
// (private to the config library's defaults-list files).
//
// Default is Hydra's InputDefault (hydra/core/default_element.py): a
// ConfigDefault (`db/mysql`, `_self_`) or a GroupDefault (`db: mysql`), with
// the rules that give it its config path, its package and the key a
// command-line override names it by. ParseDefaultsList reads a config's
// `defaults` node into such entries.
#ifndef TRIALSHIM_CONFIG_SRC_DEFAULTS_ENTRY_H_
#define TRIALSHIM_CONFIG_SRC_DEFAULTS_ENTRY_H_

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/node.h"

namespace trialshim::config::internal::defaults {

inline std::string SlashesToDots(std::string s) {
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

// Why `name` (an option or config path, relative to the config directory)
// could reach a file outside that directory, or "" when it can not. Hydra
// refuses '..' and '\\' in names too; a leading '/' is refused where the
// caller does not give it a meaning (`allow_leading_slash`).
std::string PathEscape(std::string_view name, bool allow_leading_slash);

// "\tadam\n\tsgd" as Hydra lists options.
std::string OptionLines(const std::vector<std::string>& options);

// One entry of a defaults list: Hydra's ConfigDefault (`db/mysql`,
// `_self_`) or GroupDefault (`db: mysql`), with the parent context Hydra
// fills in while walking the tree.
struct Default {
  bool is_group = false;
  std::string path;   // ConfigDefault
  std::string group;  // GroupDefault, may start with '/'
  bool is_options = false;
  std::optional<std::string> name;  // GroupDefault choice; nullopt = null
  std::vector<std::string> options;
  std::optional<std::string> package;
  std::optional<std::string> package_header;
  std::optional<std::string> parent_base_dir;
  std::optional<std::string> parent_package;
  bool optional = false;
  bool is_override = false;
  bool deleted = false;
  bool primary = false;
  bool external_append = false;
  bool known = false;     // registered as a group choice
  std::string chosen_by;  // the command-line override that set the choice

  bool IsSelf() const {
    return is_group ? (!is_options && name == "_self_") : path == "_self_";
  }

  // InputDefault.get_group_path (hydra/core/default_element.py): a leading
  // '/' makes a group or path absolute, from the config directory; else it
  // is relative to the directory of the config whose list holds it.
  std::string GroupPath() const {
    const std::string& base = parent_base_dir.value_or("");
    if (is_group) {
      if (StartsWith(group, "/")) return group.substr(1);
      return base.empty() ? group : base + "/" + group;
    }
    bool absolute = StartsWith(path, "/");
    std::string p = absolute ? path.substr(1) : path;
    size_t slash = p.rfind('/');
    std::string dir = slash == std::string::npos ? "" : p.substr(0, slash);
    if (absolute || base.empty()) return dir;
    return dir.empty() ? base : base + "/" + dir;
  }

  std::optional<std::string> Name() const {
    if (is_group) return is_options ? std::nullopt : name;
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }

  std::string NameForMessage() const {
    if (is_options) return "[" + JoinStrings(options, ", ") + "]";
    return Name().value_or("null");
  }

  std::string ConfigPath() const {
    if (is_group) return GroupPath() + "/" + Name().value_or("None");
    if (StartsWith(path, "/")) return path.substr(1);
    const std::string& base = parent_base_dir.value_or("");
    return base.empty() ? path : base + "/" + path;
  }

  std::string DefaultPackage() const { return SlashesToDots(GroupPath()); }

  std::string RelativeGroupPath() const {
    if (is_group) return StartsWith(group, "/") ? group.substr(1) : group;
    std::string p = StartsWith(path, "/") ? path.substr(1) : path;
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? "" : p.substr(0, slash);
  }

  // _get_final_package: the entry's package (`@pkg`, else the file's
  // `# @package` header, else its relative group path with dots) under the
  // parent's package, less everything up to the last `_global_`, which
  // makes what follows absolute.
  std::string FinalPackage(bool default_to_header = true) const {
    std::optional<std::string> pkg = package;
    if (!pkg && default_to_header) pkg = package_header;
    std::string p = pkg ? *pkg : SlashesToDots(RelativeGroupPath());
    const std::string& pp = parent_package.value_or("");
    std::string ret = pp.empty() ? p : (p.empty() ? pp : pp + "." + p);
    size_t global = ret.rfind("_global_");
    if (global == std::string::npos) return ret;
    size_t start = global + std::string_view("_global_.").size();
    return start >= ret.size() ? "" : ret.substr(start);
  }

  // get_override_key: how overrides name the entry: its group path, with
  // `@package` only where the list moved it from the group's default
  // (`db@backup`, `db@_global_`). The file's own header is left out, so it
  // does not change what the command line calls the entry.
  std::string OverrideKey() const {
    std::string final_pkg = FinalPackage(/*default_to_header=*/false);
    std::string key = GroupPath();
    if (DefaultPackage() != final_pkg) {
      key += "@" + (final_pkg.empty() ? std::string("_global_") : final_pkg);
    }
    return key;
  }

  // update_parent: `_group_` in a package stands for the group's default
  // package; it is resolved here, once the parent is known, and absolute.
  void UpdateParent(const std::string& base_dir, const std::string& pkg) {
    parent_base_dir = base_dir;
    parent_package = pkg;
    if (package && package->find("_group_") != std::string::npos) {
      package = "_global_." + ReplaceAll(*package, "_group_", DefaultPackage());
    }
  }

  void SetPackageHeader(std::optional<std::string> header) {
    if (!header) return;
    // A header is always absolute (set_package_header).
    if (*header != "_global_" && !StartsWith(*header, "_global_.")) {
      header = header->empty() ? "_global_" : "_global_." + *header;
    }
    package_header = std::move(header);
  }

  bool IsMissing() const { return !is_options && Name() == "???"; }

  bool IsInterpolation() const {
    if (is_group)
      return !is_options && name && Node::String(*name).IsInterpolation();
    return Node::String(ConfigPath()).IsInterpolation();
  }
};

struct TreeNode {
  Default node;
  TreeNode* parent = nullptr;
  std::vector<std::unique_ptr<TreeNode>> children;  // empty: a leaf
};

// The entries of a config's `defaults` list, in order; `where` names the
// config in errors.
StatusOr<std::vector<Default>> ParseDefaultsList(const Node& list,
                                                 const std::string& where);

}  // namespace trialshim::config::internal::defaults

#endif  // TRIALSHIM_CONFIG_SRC_DEFAULTS_ENTRY_H_
