#include "defaults_list.h"
#include "hydra_conf.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/python_text.h"
#include "typed_value.h"

namespace trialshim::config::internal {
namespace {

std::string SlashesToDots(std::string s) {
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

// Why `name` (an option or config path, relative to the config directory)
// could reach a file outside that directory, or "" when it can not. Hydra
// refuses '..' and '\\' in names too; a leading '/' is refused where the
// caller does not give it a meaning (`allow_leading_slash`).
std::string PathEscape(std::string_view name, bool allow_leading_slash) {
  if (name.find('\\') != std::string_view::npos) return "a backslash";
  if (!allow_leading_slash && StartsWith(name, "/")) return "an absolute path";
  for (size_t i = 0; i <= name.size();) {
    size_t slash = name.find('/', i);
    if (slash == std::string_view::npos) slash = name.size();
    if (name.substr(i, slash - i) == "..") return "a '..' path segment";
    i = slash + 1;
  }
  return "";
}

// "\tadam\n\tsgd" as Hydra lists options.
std::string OptionLines(const std::vector<std::string>& options) {
  std::string out;
  for (const std::string& o : options) {
    if (!out.empty()) out += "\n";
    out += "\t" + o;
  }
  return out;
}

// `# @package X` from the leading `# @key value` comment lines of the first
// 512 bytes, as Hydra's ConfigSource._get_header_dict reads them.
StatusOr<std::optional<std::string>> PackageHeader(std::string_view head,
                                                   const std::string& file) {
  std::string text(head.substr(0, 512));
  std::optional<std::string> package;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find_first_of("\r\n", pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;  // blank lines are skipped
    line = line.substr(b, line.find_last_not_of(" \t") + 1 - b);
    if (line[0] != '#') break;
    size_t at = line.find_first_not_of("# \t");
    if (at == std::string::npos || line[at] != '@') break;
    std::vector<std::string> words;
    for (size_t i = at; i < line.size();) {
      size_t j = line.find(' ', i);
      if (j == std::string::npos) j = line.size();
      if (j > i) words.push_back(line.substr(i, j - i));
      i = j + 1;
    }
    if (words.size() != 2) {
      return Status::InvalidArgument(
          file + ": " +
          (words.size() < 2 ? "expected a header of the form '# @KEY VALUE'"
                            : "too many components in header") +
          ", got '" + line.substr(at) + "'");
    }
    if (words[0] == "@package") package = words[1];
  }
  return package;
}

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

  std::string OverrideKey() const {
    std::string final_pkg = FinalPackage(/*default_to_header=*/false);
    std::string key = GroupPath();
    if (DefaultPackage() != final_pkg) {
      key += "@" + (final_pkg.empty() ? std::string("_global_") : final_pkg);
    }
    return key;
  }

  void UpdateParent(const std::string& base_dir, const std::string& pkg) {
    parent_base_dir = base_dir;
    parent_package = pkg;
    if (package && package->find("_group_") != std::string::npos) {
      package = "_global_." + ReplaceAll(*package, "_group_", DefaultPackage());
    }
  }

  void SetPackageHeader(std::optional<std::string> header) {
    if (!header) return;
    // A header is always absolute.
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

StatusOr<std::vector<Default>> ParseDefaultsList(const Node& list,
                                                 const std::string& where) {
  std::vector<Default> out;
  for (const Node& item : list.AsList()) {
    Default d;
    std::string in = "In '" + where + "': ";
    if (item.is_string()) {
      std::string s = item.AsString();
      size_t at = s.find('@');
      d.path = s.substr(0, at);
      if (at != std::string::npos) {
        std::string pkg = s.substr(at + 1);
        d.package = pkg.substr(0, pkg.find(':'));
      }
      if (d.IsSelf() && d.package) {
        return Status::InvalidArgument(in + "'" + s +
                                       "': _self_@PACKAGE is not supported");
      }
    } else if (item.is_map()) {
      if (item.size() != 1) {
        return Status::InvalidArgument(
            in + (item.size() == 0
                      ? std::string("missing group name in a defaults item")
                      : "too many keys in defaults item {" +
                            JoinStrings(item.Keys(), ", ") +
                            "}: each item is one 'group: option'"));
      }
      const auto& [key, value] = item.AsMap()[0];
      d.is_group = true;
      size_t at = key.find('@');
      std::string head = key.substr(0, at);
      if (at != std::string::npos) {
        std::string pkg = key.substr(at + 1);
        d.package = pkg.substr(0, pkg.find(':'));
      }
      // "optional override db": keywords, then the group.
      std::vector<std::string> words;
      for (size_t i = 0;;) {
        size_t sp = head.find(' ', i);
        words.push_back(head.substr(i, sp - i));
        if (sp == std::string::npos) break;
        i = sp + 1;
      }
      d.group = words.back();
      for (size_t i = 0; i + 1 < words.size(); ++i) {
        if (words[i] == "optional") {
          d.optional = true;
        } else if (words[i] == "override") {
          d.is_override = true;
        } else {
          break;
        }
      }
      if (d.group.empty()) {
        return Status::InvalidArgument(in + "missing group name in '" + key +
                                       "'");
      }
      if (value.is_null()) {
        d.name.reset();
      } else if (value.is_string()) {
        d.name = value.AsString();
      } else if (value.is_list()) {
        d.is_options = true;
        for (const Node& v : value.AsList()) {
          if (!v.is_string()) {
            return Status::InvalidArgument(
                in + "unsupported item value in defaults '" + key + "': " +
                PythonTypeName(v) + ", nested list items must be strings");
          }
          d.options.push_back(v.AsString());
        }
      } else {
        return Status::InvalidArgument(
            in + "unsupported item value in defaults '" + key +
            "': " + PythonTypeName(value) +
            ". Supported: string or list (quote an option name that YAML "
            "reads as a number or bool)");
      }
    } else {
      return Status::InvalidArgument(
          in + "unsupported type in defaults: " + OmegaTypeName(item) +
          " (expected 'group: option' or a path)");
    }
    if (d.package && *d.package == "_here_") d.package = "";
    out.push_back(std::move(d));
  }
  return out;
}

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

OverrideEntry* Builder::FindOverride(const std::string& key) {
  for (OverrideEntry& e : override_choices_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

Deletion* Builder::FindDeletion(const Default& d) {
  if (!d.is_group) return nullptr;
  std::string key = d.OverrideKey();
  for (Deletion& del : deletions_) {
    if (del.key != key) continue;
    if (!del.name || del.name == d.Name()) return &del;
    return nullptr;
  }
  return nullptr;
}

Status Builder::ClassifyOverrides(DefaultsListResult* result) {
  for (const Override& o : overrides_) {
    if (o.is_sweep()) continue;
    const bool is_group = repo().GroupExists(o.key_or_group);
    const bool is_dict = o.value && o.value->is_map();
    if (is_dict || !is_group) {
      result->value_overrides.push_back(&o);
      continue;
    }
    const std::string key = o.KeyWithPackage();
    const std::string options =
        JoinStrings(repo().GroupOptions(o.key_or_group), ", ");
    if (o.type == OverrideType::kForceAdd) {
      return Status::InvalidArgument(
          "force-add of config groups is not supported: '" + o.input +
          "'. Use '" + o.input.substr(2) + "' to change the choice or '" +
          o.input.substr(1) + "' to add the group.");
    }
    if (o.type == OverrideType::kDelete) {
      Deletion del{key, std::nullopt, o.input, false};
      if (o.value && !o.value->is_null()) {
        if (!o.value->is_string()) {
          return Status::InvalidArgument(
              "Config group override deletion value must be a string: '" +
              o.input + "' (options of '" + o.key_or_group + "': " + options +
              ")");
        }
        del.name = o.value->AsString();
      }
      auto it = std::find_if(deletions_.begin(), deletions_.end(),
                             [&](const Deletion& x) { return x.key == key; });
      if (it != deletions_.end()) {
        *it = del;
      } else {
        deletions_.push_back(del);
      }
      continue;
    }
    Choice choice;
    const Node& v = *o.value;
    if (v.is_string()) {
      choice.name = v.AsString();
    } else if (v.is_list() &&
               std::all_of(v.AsList().begin(), v.AsList().end(),
                           [](const Node& x) { return x.is_string(); })) {
      choice.is_options = true;
      for (const Node& x : v.AsList()) choice.options.push_back(x.AsString());
    } else {
      return Status::InvalidArgument(
          "Config group override must be a string or a list of strings, got " +
          std::string(v.is_list() ? "a list with a non-string item"
                                  : PythonTypeName(v)) +
          ": '" + o.input + "'. " +
          (v.is_null()
               ? "To remove the group from the defaults list use ~" + key + ". "
               : "Quote the option name if it looks like a number or "
                 "bool. ") +
          "Options of '" + o.key_or_group + "': " + options);
    }
    if (o.type == OverrideType::kAdd) {
      Default d;
      d.is_group = true;
      d.group = o.key_or_group;
      d.package = o.package;
      if (d.package && *d.package == "_here_") d.package = "";
      d.is_options = choice.is_options;
      d.name = choice.name;
      d.options = choice.options;
      d.external_append = true;
      d.chosen_by = o.input;
      append_group_defaults_.push_back(std::move(d));
      continue;
    }
    if (OverrideEntry* e = FindOverride(key)) {
      e->value = choice;
      e->input = o.input;
    } else {
      override_choices_.push_back({key, choice, true, "", o.input, false});
    }
  }
  return Status::Ok();
}

Status Builder::SetKnownChoice(Default* d) {
  if (!d->is_group) return Status::Ok();
  std::string key = d->OverrideKey();
  std::optional<std::string> name = d->Name();
  auto it = std::find_if(known_choices_.begin(), known_choices_.end(),
                         [&](const KnownChoice& k) { return k.key == key; });
  if (it == known_choices_.end()) {
    known_choices_.push_back({key, name, d->chosen_by});
  } else if (it->name != name) {
    std::string prev = it->name.value_or("null");
    std::string msg = "Multiple values for " + key + " ('" + prev + "' and '" +
                      name.value_or("null") +
                      "'). To override a value use 'override " + key + ": " +
                      prev + "'";
    // An appended `+group=opt` clashes with the list's own choice.
    for (const std::string* input : {&it->chosen_by, &d->chosen_by}) {
      if (!input->empty() && (*input)[0] == '+') {
        msg += "\n'" + *input + "' adds a second " + key +
               "; to change the choice instead use " + input->substr(1);
      }
    }
    return Status::InvalidArgument(msg);
  }
  known_per_group_[d->GroupPath()].insert(key);
  d->known = true;
  return Status::Ok();
}

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

Status Builder::UpdateOverrides(std::vector<Default>* defaults,
                                const Default& parent, bool interpolated) {
  const Default* last_override = nullptr;
  for (Default& d : *defaults) {
    if (d.IsSelf()) continue;
    d.UpdateParent(parent.GroupPath(), parent.FinalPackage());
    if (last_override != nullptr && !(d.is_override || d.external_append)) {
      return Status::InvalidArgument(
          "In " + parent.ConfigPath() + ": Override '" +
          last_override->OverrideKey() + " : " +
          last_override->NameForMessage() + "' is defined before '" +
          d.OverrideKey() + ": " + d.NameForMessage() +
          "'.\nOverrides must be at the end of the defaults list");
    }
    if (!d.is_group || !d.is_override) continue;
    last_override = &d;
    if (interpolated) {
      return Status::InvalidArgument(
          parent.ConfigPath() +
          ": Default List Overrides are not allowed in the subtree of an "
          "interpolated config group (override " +
          d.OverrideKey() + "=" + d.NameForMessage() + ")");
    }
    std::string key = d.OverrideKey();
    if (FindOverride(key) == nullptr) {
      OverrideEntry e;
      e.key = key;
      e.value.is_options = d.is_options;
      e.value.name = d.name;
      e.value.options = d.options;
      e.containing_config = parent.ConfigPath();
      override_choices_.push_back(std::move(e));
    }
  }
  return Status::Ok();
}

// Hydra 1.0's "${defaults.1.group1}" (Hydra's re.match(r"\${defaults\.\d\.")):
// Hydra 1.2 on refuses it, 1.1 only warns.
bool IsLegacyInterpolation(std::string_view name) {
  constexpr std::string_view kPrefix = "${defaults.";
  return StartsWith(name, kPrefix) && name.size() > kPrefix.size() + 1 &&
         std::isdigit(static_cast<unsigned char>(name[kPrefix.size()])) &&
         name[kPrefix.size() + 1] == '.';
}

Status Builder::ResolveInterpolation(Default* d,
                                     const std::vector<Default>& defaults,
                                     bool self_added) {
  if (d->is_group && IsLegacyInterpolation(*d->name)) {
    return Status::InvalidArgument(
        "Defaults list element '" + d->OverrideKey() + "=" + *d->name +
        "' is using a deprecated interpolation form.\nSee "
        "http://hydra.cc/docs/1.1/upgrades/1.0_to_1.1/"
        "defaults_list_interpolation for migration information (name the "
        "group instead: ${group1} for ${defaults.1.group1}).");
  }
  // Hydra resolves against the choices made so far plus the list itself.
  Node root = Node::MakeMap();
  std::vector<std::string> keys;
  for (const KnownChoice& k : known_choices_) {
    root.Set(k.key, k.name ? Node::String(*k.name) : Node::Null());
    keys.push_back(k.key);
  }
  Node list = Node::MakeList();
  for (const Default& x : defaults) {
    if (self_added && x.IsSelf()) continue;
    if (!x.is_group) {
      list.MutableList().push_back(Node::String(x.ConfigPath()));
      continue;
    }
    Node value;
    if (x.is_options) {
      value = Node::MakeList();
      for (const std::string& o : x.options) {
        value.MutableList().push_back(Node::String(o));
      }
    } else if (x.name) {
      value = Node::String(*x.name);
    }
    list.MutableList().push_back(Node::MakeMap({{x.OverrideKey(), value}}));
  }
  root.Set("defaults", std::move(list));
  std::string raw = d->is_group ? *d->name : d->ConfigPath();
  root.Set("_dummy_", Node::String(raw));
  StatusOr<Node> resolved = ResolvePath(root, "_dummy_");
  if (!resolved.ok() || !resolved->is_string()) {
    std::string msg = "Error resolving interpolation '" + raw + "'";
    if (!keys.empty()) {
      msg += ", possible interpolation keys: " + JoinStrings(keys, ", ");
    }
    msg += resolved.ok() ? std::string("\nit gave a ") + resolved->type_name() +
                               ", not an option name"
                         : "\n" + resolved.status().message();
    return Status::InvalidArgument(msg);
  }
  if (d->is_group) {
    d->name = resolved->AsString();
  } else {
    d->path = resolved->AsString();
  }
  return Status::Ok();
}

Status Builder::AddChild(TreeNode* root, Default d, bool interpolated,
                         std::vector<std::unique_ptr<TreeNode>>* children) {
  auto child = std::make_unique<TreeNode>();
  child->node = std::move(d);
  child->parent = root;
  TRIALSHIM_RETURN_IF_ERROR(Expand(child.get(), false, interpolated));
  children->push_back(std::move(child));
  return Status::Ok();
}

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

void Builder::Walk(const TreeNode* tree, std::vector<ResultDefault>* out,
                   std::vector<std::string>* keys) const {
  if (tree->children.empty()) {
    Visit(tree->parent, tree->node, out, keys);
    return;
  }
  for (const auto& child : tree->children) Walk(child.get(), out, keys);
}

Status Builder::EnsureOverridesUsed() const {
  for (const OverrideEntry& e : override_choices_) {
    if (e.used) continue;
    std::string group = e.key.substr(0, e.key.find('@'));
    auto it = known_per_group_.find(group);
    std::vector<std::string> choices;
    if (it != known_per_group_.end()) {
      choices.assign(it->second.begin(), it->second.end());
    }
    std::string msg = "Could not override '" + e.key + "'.";
    if (choices.size() > 1) {
      msg += "\nDid you mean to override one of " + JoinStrings(choices, ", ") +
             "?";
    } else if (choices.size() == 1) {
      msg += "\nDid you mean to override " + choices[0] + "?";
    } else {
      msg.pop_back();
      msg += ". No match in the defaults list.";
    }
    if (!e.containing_config.empty()) {
      msg = "In '" + e.containing_config + "': " + msg;
    }
    if (e.external) {
      msg += "\nTo append to your default list use +" + e.input;
    }
    return Status::InvalidArgument(msg);
  }
  return Status::Ok();
}

Status Builder::EnsureDeletionsUsed() const {
  for (const Deletion& d : deletions_) {
    if (d.used) continue;
    std::string desc = d.name ? d.key + "=" + *d.name : d.key;
    std::string msg =
        "Could not delete '" + desc + "'. No match in the defaults list";
    std::string group = d.key.substr(0, d.key.find('@'));
    auto it =
        std::find_if(known_choices_.begin(), known_choices_.end(),
                     [&](const KnownChoice& k) { return k.key == d.key; });
    if (it != known_choices_.end() && d.name) {
      msg += " (the choice of '" + d.key + "' is '" +
             it->name.value_or("null") + "')";
    } else if (auto g = known_per_group_.find(group);
               g != known_per_group_.end()) {
      msg += " (did you mean " +
             JoinStrings(
                 std::vector<std::string>(g->second.begin(), g->second.end()),
                 " or ") +
             "?)";
    }
    return Status::InvalidArgument(msg + " (from '" + d.input + "')");
  }
  return Status::Ok();
}

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

}  // namespace

StatusOr<const LoadedConfig*> ConfigCache::Load(
    const std::string& config_path) {
  auto it = cache_.find(config_path);
  if (it != cache_.end()) return it->second.get();
  // The builder refuses such names with context; this guards other callers.
  if (std::string why = PathEscape(config_path, false); !why.empty()) {
    return Status::InvalidArgument("Invalid config path '" + config_path +
                                   "': it has " + why +
                                   "; configs are named by their path inside "
                                   "the config directory");
  }
  if (!repo_.ConfigExists(config_path)) {
    cache_.emplace(config_path, nullptr);
    return static_cast<const LoadedConfig*>(nullptr);
  }
  auto loaded = std::make_unique<LoadedConfig>();
  std::string file = repo_.FindFile(config_path);
  const BuiltinConfig* builtin = FindBuiltinConfig(config_path);
  if (builtin != nullptr && builtin->structured && !file.empty()) {
    // Hydra's structured configs come after the app's directories in its
    // search path: the app's file wins, matched against the schema.
    if (config_path == "hydra/config") {
      return Status::InvalidArgument(
          "'hydra/config' is validated against ConfigStore schema with the "
          "same name, and the automatically matched schema contains a "
          "defaults list: Hydra 1.2+ refuses this. Rename " +
          file +
          " (see https://hydra.cc/docs/1.2/upgrades/1.0_to_1.1/"
          "automatic_schema_matching)");
    }
    builtin = nullptr;
  }
  if (builtin != nullptr) {
    file = "pkg://hydra.conf/" + config_path + ".yaml";
    TRIALSHIM_ASSIGN_OR_RETURN(loaded->package_header,
                               PackageHeader(builtin->yaml, file));
    TRIALSHIM_ASSIGN_OR_RETURN(loaded->config,
                               LoadYamlString(builtin->yaml, file, limits_));
  } else {
    // Read once (ReadConfigText: a FIFO or a device in the tree is refused,
    // not waited on), for the header and the YAML both.
    TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                               ReadConfigText(file, limits_));
    TRIALSHIM_ASSIGN_OR_RETURN(
        loaded->package_header,
        PackageHeader(std::string_view(text).substr(0, 512), file));
    TRIALSHIM_ASSIGN_OR_RETURN(loaded->config,
                               LoadYamlString(text, file, limits_));
    // OmegaConf refuses bad interpolation syntax as it creates the config.
    TRIALSHIM_RETURN_IF_ERROR(CheckInterpolationSyntax(loaded->config));
  }
  if (loaded->config.is_null()) loaded->config = Node::MakeMap();
  loaded->defaults = Node::MakeList();
  if (loaded->config.is_map()) {
    if (const Node* d = loaded->config.Get("defaults")) {
      if (!d->is_list()) {
        return Status::InvalidArgument(
            "Invalid defaults list in '" + config_path +
            "', defaults must be a list (got " +
            // Hydra's _extract_defaults_list says "mapping" for a DictConfig.
            (d->is_map() ? std::string("mapping") : PythonTypeName(*d)) + ")" +
            (d->mark().known() ? " at " + d->mark().ToString() : ""));
      }
      loaded->defaults = *d;
      loaded->config.Erase("defaults");
    }
  } else if (!loaded->config.is_list()) {
    return Status::InvalidArgument(file + ": a config file must hold a " +
                                   "mapping, not a " +
                                   loaded->config.type_name());
  }
  const LoadedConfig* out = loaded.get();
  cache_.emplace(config_path, std::move(loaded));
  return out;
}

StatusOr<DefaultsListResult> BuildDefaultsList(
    ConfigCache* cache, const std::string& config_name,
    const std::vector<Override>& overrides, bool skip_missing) {
  Builder builder(cache, overrides, skip_missing);
  return builder.Build(config_name);
}

}  // namespace trialshim::config::internal
