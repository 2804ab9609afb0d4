// Expanding the defaults tree: each config's list, depth first and last
// entry first, as hydra/_internal/defaults_list.py's
// _create_defaults_tree_impl does (defaults_builder.h).
#include <algorithm>

#include "defaults_builder.h"
#include "hydra_conf.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"

namespace trialshim::config::internal::defaults {

// Where a choice of one of Hydra's groups that no config here provides may
// come from: a plugin known to provide it (" comes from the X plugin, which
// the app needs installed"), or, for hydra/launcher and hydra/sweeper, one
// the app's environment may have (Hydra finds plugins where it runs: an
// unknown option there is no more an error than submitit_slurm is).
std::optional<std::string> Builder::PluginSource(const Default& d) const {
  if (!d.is_group || !d.Name()) return std::nullopt;
  const std::string group = d.GroupPath();
  if (const PluginOption* plugin = FindPluginOption(group, *d.Name())) {
    return " comes from the " + std::string(plugin->package) +
           " plugin, which the app needs installed";
  }
  if (group != "hydra/launcher" && group != "hydra/sweeper") {
    return std::nullopt;
  }
  std::vector<std::string> known = repo().GroupOptions(group);
  for (const std::string_view plugin : PluginOptions(group)) {
    known.emplace_back(plugin);
  }
  return " is not an option of Hydra's or of a plugin trialshim knows (" +
         JoinStrings(known, ", ") + ")" + DidYouMean(*d.Name(), known) +
         "; a plugin installed where the app runs must provide it";
}

// config_not_found_error (hydra/_internal/defaults_list.py): Hydra's
// texts and its search path listing; which override chose the option,
// the did-you-mean and the missing-group case are ours.
Status Builder::NotFoundError(const TreeNode& tree) const {
  const Default& e = tree.node;
  std::string msg;
  if (e.primary) {
    std::vector<std::string> primaries = repo().GroupOptions("");
    msg = "Cannot find primary config '" + e.ConfigPath() +
          "'. Check that it's in your config search path" +
          DidYouMean(e.ConfigPath(), primaries) + ".";
    if (!primaries.empty()) {
      msg += "\nAvailable primary configs:\n" + OptionLines(primaries);
    }
  } else if (e.is_group) {
    std::string group = e.GroupPath();
    msg = "Could not find '" + e.ConfigPath() + "'";
    if (!e.chosen_by.empty())
      msg += ", chosen by override '" + e.chosen_by + "'";
    if (!repo().GroupExists(group)) {
      std::vector<std::string> groups = repo().Groups();
      msg += ": config group '" + group + "' does not exist" +
             DidYouMean(group, groups);
    } else {
      std::vector<std::string> options = repo().GroupOptions(group);
      msg += DidYouMean(e.Name().value_or(""), options);
      if (!options.empty()) {
        msg += "\n\nAvailable options in '" + group + "':\n" +
               OptionLines(options);
      }
    }
  } else {
    msg = "Could not load '" + e.ConfigPath() + "': no such config file";
  }
  if (!e.primary && tree.parent != nullptr) {
    msg = "In '" + tree.parent->node.ConfigPath() + "': " + msg;
  }
  msg += "\nConfig search path:";
  for (const ConfigSource& source : repo().Sources()) {
    msg += "\n\tprovider=" + source.provider + ", path=" + source.scheme +
           "://" + source.path;
  }
  return Status::NotFound(msg);
}

// add_child in _create_defaults_tree_impl: a child's own defaults list
// is expanded before the next sibling's (depth first), so the `override`
// entries it holds reach the siblings still to come: the earlier entries,
// as a list is expanded last first.
Status Builder::AddChild(TreeNode* root, Default d, bool interpolated,
                         std::vector<std::unique_ptr<TreeNode>>* children) {
  auto child = std::make_unique<TreeNode>();
  child->node = std::move(d);
  child->parent = root;
  TRIALSHIM_RETURN_IF_ERROR(Expand(child.get(), false, interpolated));
  children->push_back(std::move(child));
  return Status::Ok();
}

// Hydra answers such names with "Could not find" (PathEscape); we refuse
// them before reading anything. Interpolated names are checked once
// resolved, when their node is expanded.
Status Builder::CheckInsideConfigDir(const TreeNode& tree) const {
  const Default& d = tree.node;
  if (d.IsSelf() || !d.Name() || d.IsInterpolation()) return Status::Ok();
  std::string where;
  if (!d.chosen_by.empty()) {
    where = "Override '" + d.chosen_by + "': ";
  } else if (tree.parent != nullptr) {
    where = "In '" + tree.parent->node.ConfigPath() + ".yaml': ";
  }
  if (d.primary) {
    std::string why = PathEscape(d.path, /*allow_leading_slash=*/false);
    if (why.empty()) return Status::Ok();
    return Status::InvalidArgument(
        "Invalid config name '" + d.path + "': it has " + why +
        "; a config name names a config inside the config directory "
        "(e.g. 'config' or 'experiment/base'), not a file path");
  }
  if (d.is_group) {
    std::string why = PathEscape(*d.name, /*allow_leading_slash=*/false);
    if (why.empty()) why = PathEscape(d.GroupPath(), false);
    if (why.empty()) return Status::Ok();
    return Status::InvalidArgument(
        where + "invalid option '" + *d.name + "' for config group '" +
        d.GroupPath() + "': it has " + why +
        "; options are names of configs inside the group directory '" +
        d.GroupPath() + "/', not file paths");
  }
  std::string why = PathEscape(d.path, /*allow_leading_slash=*/true);
  if (why.empty()) return Status::Ok();
  return Status::InvalidArgument(
      where + "invalid config '" + d.path + "' in the defaults list: it has " +
      why + "; configs are named by their path inside the config directory");
}

Status Builder::CheckNoCycle(const TreeNode& tree) const {
  const Default& d = tree.node;
  if (d.IsSelf() || !d.Name() || d.IsInterpolation()) return Status::Ok();
  // The same file in its own ancestry expands to itself again (choices are
  // global and relative paths depend only on the file): recursion forever.
  const std::string path = d.ConfigPath();
  const TreeNode* repeat = nullptr;
  for (const TreeNode* p = tree.parent; p != nullptr; p = p->parent) {
    if (p->node.ConfigPath() == path) repeat = p;
  }
  if (repeat == nullptr) return Status::Ok();
  std::vector<std::string> chain;
  for (const TreeNode* p = &tree; p != repeat; p = p->parent) {
    chain.push_back(p->node.ConfigPath());
  }
  chain.push_back(path);
  std::reverse(chain.begin(), chain.end());
  return Status::InvalidArgument(
      "In '" + tree.parent->node.ConfigPath() +
      ".yaml': the defaults list includes '" + path +
      "' inside itself: " + JoinStrings(chain, " -> ") +
      " (a config can not be in its own defaults list, directly or through "
      "others)");
}

// _create_defaults_tree_impl (hydra/_internal/defaults_list.py), in
// Hydra's order, which is part of the behaviour: the `# @package` header
// is read first, as it decides where the file and its children land; a
// deleted entry stops before its choice is recorded and before its
// subtree is read, so nothing in it applies; the choice is recorded even
// when it is null or "???" (they show in ComposeResult::choices); the
// defaults list is read only then. Our additions: the path and cycle
// checks, and the plugin options that no config here provides.
Status Builder::Expand(TreeNode* root, bool is_root_config, bool interpolated) {
  Default& parent = root->node;
  TRIALSHIM_RETURN_IF_ERROR(CheckInsideConfigDir(*root));
  TRIALSHIM_RETURN_IF_ERROR(CheckNoCycle(*root));
  if (is_root_config) {
    parent.UpdateParent("", "");
    if (!repo().ConfigExists(parent.ConfigPath())) return NotFoundError(*root);
  }
  const std::string path = parent.ConfigPath();
  if (!parent.IsMissing() && parent.Name()) {
    TRIALSHIM_ASSIGN_OR_RETURN(const LoadedConfig* header, cache_->Load(path));
    if (header != nullptr) parent.SetPackageHeader(header->package_header);
  }
  if (Deletion* del = FindDeletion(parent)) {
    parent.deleted = true;
    del->used = true;
    return Status::Ok();
  }
  TRIALSHIM_RETURN_IF_ERROR(SetKnownChoice(&parent));
  if (!parent.Name()) return Status::Ok();  // a null placeholder
  // _check_not_missing: "???" must be chosen, except when a multirun
  // composes its own config: each job gets a choice from the sweep.
  if (parent.IsMissing() && skip_missing_) return Status::Ok();
  if (parent.IsMissing()) {
    std::string key = parent.OverrideKey();
    return Status::InvalidArgument(
        "You must specify '" + key + "', e.g. " + key +
        "=<OPTION> (the defaults list" +
        (root->parent ? " of '" + root->parent->node.ConfigPath() + "'" : "") +
        " leaves it as \"???\")\nAvailable options:\n" +
        OptionLines(repo().GroupOptions(parent.GroupPath())));
  }
  TRIALSHIM_ASSIGN_OR_RETURN(const LoadedConfig* loaded, cache_->Load(path));
  if (loaded == nullptr) {
    // `optional`: a missing file drops the entry, silently.
    if (parent.optional) {
      parent.deleted = true;
      return Status::Ok();
    }
    if (std::optional<std::string> from = PluginSource(parent)) {
      // The app's environment may have the plugin; its config is not ours
      // to compose, so the choice stands and nothing is merged for it.
      warnings_.push_back(parent.GroupPath() + "=" + *parent.Name() + *from +
                          "; its config is not composed here (hydra." +
                          parent.GroupPath().substr(6) +
                          " holds only what your configs set)");
      plugin_packages_.push_back(parent.FinalPackage());
      parent.deleted = true;
      return Status::Ok();
    }
    return NotFoundError(*root);
  }
  // ConfigLoaderImpl.load_configuration (config_loader_impl.py) refuses it
  // with this text; the explanation is ours.
  if (parent.primary && !loaded->config.is_map()) {
    return Status::InvalidArgument("primary config '" + path +
                                   "' must be a DictConfig, got ListConfig "
                                   "(the file holds a list, expected a "
                                   "mapping: key: value lines)");
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<Default> defaults,
                             ParseDefaultsList(loaded->defaults, path));

  TRIALSHIM_ASSIGN_OR_RETURN(bool self_added,
                             AddImplicitSelf(&defaults, is_root_config, path));
  if (is_root_config) {
    defaults.insert(defaults.end(), append_group_defaults_.begin(),
                    append_group_defaults_.end());
  }
  TRIALSHIM_RETURN_IF_ERROR(UpdateOverrides(&defaults, parent, interpolated));

  // Last to first, so an `override` met in a later entry's subtree applies
  // to an earlier entry; reversed back at the end.
  std::vector<std::unique_ptr<TreeNode>> children;
  TRIALSHIM_RETURN_IF_ERROR(
      ExpandEntries(root, &defaults, interpolated, &children));

  // Interpolated choices are resolved once the plain ones are known.
  for (auto& child : children) {
    Default& d = child->node;
    if (d.IsSelf() || !d.IsInterpolation()) continue;
    TRIALSHIM_RETURN_IF_ERROR(ResolveInterpolation(&d, defaults, self_added));
    d.UpdateParent(parent.GroupPath(), parent.FinalPackage());
    TRIALSHIM_RETURN_IF_ERROR(Expand(child.get(), false, true));
  }
  std::reverse(children.begin(), children.end());
  root->children = std::move(children);
  return Status::Ok();
}

// _validate_self: a list without `_self_` gets one at the end, so a
// config's own content merges after its defaults (Hydra 1.1's order;
// 1.0 merged it first). A list of `override` entries only gets none: the
// config stays a leaf and merges where it stands. Hydra also warns when a
// primary config with content has no `_self_` (a 1.0 migration aid,
// UserWarning); we do not.
StatusOr<bool> Builder::AddImplicitSelf(std::vector<Default>* defaults,
                                        bool is_root_config,
                                        const std::string& path) const {
  if (defaults->empty() &&
      !(is_root_config && !append_group_defaults_.empty())) {
    return false;
  }
  bool has_self = false, has_non_override = false;
  for (const Default& d : *defaults) {
    if (!d.is_override) has_non_override = true;
    if (!d.IsSelf()) continue;
    if (has_self) {
      return Status::InvalidArgument("Duplicate _self_ defined in " + path);
    }
    has_self = true;
  }
  if ((!has_self && has_non_override) || defaults->empty()) {
    // Without `_self_` the config's own content is merged last.
    Default self;
    self.path = "_self_";
    defaults->push_back(std::move(self));
  }
  return !has_self;
}

Status Builder::ExpandEntries(
    TreeNode* root, std::vector<Default>* defaults, bool interpolated,
    std::vector<std::unique_ptr<TreeNode>>* children) {
  const Default& parent = root->node;
  auto leaf = [&](const Default& d) {
    auto node = std::make_unique<TreeNode>();
    node->node = d;
    node->parent = root;
    children->push_back(std::move(node));
  };
  // Overrides apply to an entry before it is expanded; `override` entries
  // themselves were recorded by UpdateOverrides and add no child.
  for (auto it = defaults->rbegin(); it != defaults->rend(); ++it) {
    Default& d = *it;
    if (d.IsSelf()) {
      leaf(d);
      continue;
    }
    if (d.is_override) continue;
    d.UpdateParent(parent.GroupPath(), parent.FinalPackage());
    if (d.is_group) {
      if (OverrideEntry* e = FindOverride(d.OverrideKey())) {
        d.is_options = e->value.is_options;
        d.options = e->value.options;
        d.name = e->value.name;
        d.chosen_by = e->external ? e->input : "";
        e->used = true;
      }
    }
    if (d.is_group && d.is_options) {
      TRIALSHIM_RETURN_IF_ERROR(
          ExpandOptionsList(root, d, interpolated, children));
    } else if (d.IsInterpolation()) {
      leaf(d);  // resolved once the plain choices are known
    } else {
      TRIALSHIM_RETURN_IF_ERROR(AddChild(root, d, interpolated, children));
    }
  }
  return Status::Ok();
}

Status Builder::ExpandOptionsList(
    TreeNode* root, const Default& d, bool interpolated,
    std::vector<std::unique_ptr<TreeNode>>* children) {
  const Default& parent = root->node;
  for (auto o = d.options.rbegin(); o != d.options.rend(); ++o) {
    // Hydra: options are plain names; each becomes the ConfigDefault
    // `group/option`, so the entry itself records no choice.
    if (o->find("${") != std::string::npos) {
      return Status::InvalidArgument(
          "In '" + parent.ConfigPath() +
          "': Defaults List interpolation is not supported in options "
          "list items ('" +
          *o + "' in '" + d.group + "')");
    }
    Default item;
    item.path = d.group + "/" + *o;
    item.package = d.package;
    item.optional = d.optional;
    item.UpdateParent(parent.GroupPath(), parent.FinalPackage());
    TRIALSHIM_RETURN_IF_ERROR(
        AddChild(root, std::move(item), interpolated, children));
  }
  return Status::Ok();
}

}  // namespace trialshim::config::internal::defaults
