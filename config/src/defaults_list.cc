// BuildDefaultsList: Hydra's virtual root (its own config and the primary
// one) expanded, then walked into the files to merge, in order, and the
// lines `--info defaults-tree` prints.
#include "defaults_list.h"

#include <set>

#include "defaults_builder.h"

namespace trialshim::config::internal {
namespace defaults {

// _create_result_default and _tree_to_list's Collector
// (hydra/_internal/defaults_list.py): a leaf becomes one file to merge.
// Deleted, null and "???" entries merge nothing; a `_self_` leaf stands
// for its parent config, at the parent's package.
void Builder::Visit(const TreeNode* tree, const Default& node,
                    std::vector<ResultDefault>* out,
                    std::vector<std::string>* keys) const {
  if (node.deleted || !node.Name() || node.IsMissing()) return;
  ResultDefault r;
  // The virtual root has no parent: it is "<root>".
  auto path_of = [](const TreeNode* t) {
    return t == nullptr || t->parent == nullptr ? std::string("<root>")
                                                : t->node.ConfigPath();
  };
  if (node.IsSelf()) {
    r.config_path = tree->node.ConfigPath();
    r.package = tree->node.FinalPackage();
    r.is_self = true;
    r.primary = tree->node.primary;
    r.parent = path_of(tree->parent);
  } else {
    r.config_path = node.ConfigPath();
    r.package = node.FinalPackage();
    r.primary = node.primary;
    r.parent = path_of(tree);
    if (node.is_group) keys->push_back(node.OverrideKey());
  }
  out->push_back(std::move(r));
}

// Hydra's _print_defaults_tree_impl.
void Builder::PrintTree(const TreeNode* tree, int indent,
                        std::vector<std::string>* out) const {
  const Default& d = tree->node;
  std::string text = tree->parent == nullptr ? "<root>"
                     : d.IsSelf()           ? "_self_"
                     : d.is_group ? d.OverrideKey() + ": " + d.Name().value_or("null")
                                  : d.ConfigPath();
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  if (tree->children.empty()) {
    out->push_back(pad + text);
    return;
  }
  out->push_back(pad + text + ":");
  for (const auto& child : tree->children) PrintTree(child.get(), indent + 1, out);
}

// _dfs_walk: depth first, children in list order, so the merge order is
// the list order at every level: what a list names before `_self_` merges
// before the config's own content.
void Builder::Walk(const TreeNode* tree, std::vector<ResultDefault>* out,
                   std::vector<std::string>* keys) const {
  if (tree->children.empty()) {
    Visit(tree->parent, tree->node, out, keys);
    return;
  }
  for (const auto& child : tree->children) Walk(child.get(), out, keys);
}

// create_defaults_list: the command-line overrides are classified
// first (their choices must be known before any list is read), then the
// tree is expanded, flattened and checked; overrides and deletions that
// met nothing are errors only once the whole tree is known.
StatusOr<DefaultsListResult> Builder::Build(const std::string& config_name) {
  DefaultsListResult result;
  TRIALSHIM_RETURN_IF_ERROR(ClassifyOverrides(&result));
  // Hydra's virtual root: its own config, then the primary one. Expanded
  // last first, as Hydra's _expand_virtual_root does, so that the primary
  // config's `override hydra/...` entries reach Hydra's defaults list.
  TreeNode root;
  auto hydra = std::make_unique<TreeNode>();
  hydra->node.path = "hydra/config";
  hydra->parent = &root;
  auto primary = std::make_unique<TreeNode>();
  primary->node.path = config_name;
  primary->node.primary = true;
  primary->parent = &root;
  TRIALSHIM_RETURN_IF_ERROR(Expand(primary.get(), true, false));
  hydra->node.UpdateParent("", "");
  TRIALSHIM_RETURN_IF_ERROR(Expand(hydra.get(), false, false));
  root.children.push_back(std::move(hydra));
  root.children.push_back(std::move(primary));
  std::vector<std::string> keys;
  Walk(&root, &result.defaults, &keys);
  // Hydra's ensure_no_duplicates_in_list.
  std::set<std::string> seen;
  for (const std::string& k : keys) {
    if (!seen.insert(k).second) {
      return Status::InvalidArgument(
          k + " appears more than once in the final defaults list");
    }
  }
  TRIALSHIM_RETURN_IF_ERROR(EnsureOverridesUsed());
  TRIALSHIM_RETURN_IF_ERROR(EnsureDeletionsUsed());
  PrintTree(&root, 0, &result.tree_lines);
  result.warnings = std::move(warnings_);
  result.plugin_packages = std::move(plugin_packages_);
  // Hydra's known_choices: in the order the choices were made.
  for (const KnownChoice& k : known_choices_) {
    result.choices.emplace_back(k.key, k.name);
  }
  return result;
}

}  // namespace defaults

StatusOr<DefaultsListResult> BuildDefaultsList(
    ConfigCache* cache, const std::string& config_name,
    const std::vector<Override>& overrides, bool skip_missing) {
  defaults::Builder builder(cache, overrides, skip_missing);
  return builder.Build(config_name);
}

}  // namespace trialshim::config::internal
