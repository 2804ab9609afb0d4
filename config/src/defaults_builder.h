// The builder of a Hydra 1.3 defaults list (private to the config library's
// defaults-list files): the state one BuildDefaultsList call carries while
// it expands the defaults tree (defaults_tree.cc), classifies and applies
// the overrides that choose group options (defaults_choices.cc), and walks
// the tree into the list to merge (defaults_list.cc). It mirrors
// hydra/_internal/defaults_list.py's Overrides class and
// _create_defaults_tree_impl.
#ifndef TRIALSHIM_CONFIG_SRC_DEFAULTS_BUILDER_H_
#define TRIALSHIM_CONFIG_SRC_DEFAULTS_BUILDER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "defaults_entry.h"
#include "defaults_list.h"
#include "trialshim/base/status.h"
#include "trialshim/config/override.h"

namespace trialshim::config::internal::defaults {

// A group choice as overrides carry it: a name or a list of names.
struct Choice {
  bool is_options = false;
  std::optional<std::string> name;  // nullopt: `override db: null`
  std::vector<std::string> options;
};

struct OverrideEntry {
  std::string key;  // "db", "db@src", "model/encoder"
  Choice value;
  bool external = false;
  std::string containing_config;  // for overrides from a defaults list
  std::string input;              // for command-line overrides
  bool used = false;
};

struct Deletion {
  std::string key;
  std::optional<std::string> name;
  std::string input;
  bool used = false;
};

class Builder {
 public:
  Builder(ConfigCache* cache, const std::vector<Override>& overrides,
          bool skip_missing)
      : cache_(cache), overrides_(overrides), skip_missing_(skip_missing) {}

  StatusOr<DefaultsListResult> Build(const std::string& config_name);

 private:
  const ConfigRepository& repo() const { return cache_->repo(); }

  Status ClassifyOverrides(DefaultsListResult* result);
  Status Expand(TreeNode* root, bool is_root_config, bool interpolated);
  // Adds the implicit `_self_` Hydra adds; returns whether it did.
  StatusOr<bool> AddImplicitSelf(std::vector<Default>* defaults,
                                 bool is_root_config,
                                 const std::string& path) const;
  // The children of `root` from its defaults list, last entry first.
  Status ExpandEntries(TreeNode* root, std::vector<Default>* defaults,
                       bool interpolated,
                       std::vector<std::unique_ptr<TreeNode>>* children);
  // One child per option of a `group: [a, b]` entry.
  Status ExpandOptionsList(TreeNode* root, const Default& d, bool interpolated,
                           std::vector<std::unique_ptr<TreeNode>>* children);
  Status AddChild(TreeNode* root, Default d, bool interpolated,
                  std::vector<std::unique_ptr<TreeNode>>* children);
  Status UpdateOverrides(std::vector<Default>* defaults, const Default& parent,
                         bool interpolated);
  Status ResolveInterpolation(Default* d, const std::vector<Default>& defaults,
                              bool self_added);
  Status NotFoundError(const TreeNode& tree) const;
  std::optional<std::string> PluginSource(const Default& d) const;
  // Refuses a choice or config path that could name a file outside the
  // config directory (`db=../../x`).
  Status CheckInsideConfigDir(const TreeNode& tree) const;
  // Refuses a config that appears in its own ancestry (`defaults: [self]`).
  Status CheckNoCycle(const TreeNode& tree) const;
  Status SetKnownChoice(Default* d);
  OverrideEntry* FindOverride(const std::string& key);
  Deletion* FindDeletion(const Default& d);
  Status EnsureOverridesUsed() const;
  Status EnsureDeletionsUsed() const;

  void Walk(const TreeNode* tree, std::vector<ResultDefault>* out,
            std::vector<std::string>* keys) const;
  void PrintTree(const TreeNode* tree, int indent,
                 std::vector<std::string>* out) const;
  void Visit(const TreeNode* tree, const Default& node,
             std::vector<ResultDefault>* out,
             std::vector<std::string>* keys) const;

  ConfigCache* cache_;
  const std::vector<Override>& overrides_;
  const bool skip_missing_;
  std::vector<OverrideEntry> override_choices_;
  std::vector<Default> append_group_defaults_;
  std::vector<Deletion> deletions_;
  struct KnownChoice {
    std::string key;
    std::optional<std::string> name;
    std::string chosen_by;
  };
  std::vector<KnownChoice> known_choices_;
  std::vector<std::string> warnings_;
  std::vector<std::string> plugin_packages_;
  std::map<std::string, std::set<std::string>> known_per_group_;
};

}  // namespace trialshim::config::internal::defaults

#endif  // TRIALSHIM_CONFIG_SRC_DEFAULTS_BUILDER_H_
