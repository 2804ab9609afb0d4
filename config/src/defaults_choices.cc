// The choices of one composition (hydra/_internal/defaults_list.py's
// Overrides class and _update_overrides): which option each group key
// gets, where it was chosen, and the checks that every override and
// deletion met an entry. Override keys are `group[@package]` as
// Default::OverrideKey makes them, so `db=x` and `db@src=x` choose for
// different entries.
#include <algorithm>
#include <cctype>

#include "defaults_builder.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/python_text.h"

namespace trialshim::config::internal::defaults {

namespace {

// Hydra 1.0's "${defaults.1.group1}" (Hydra's re.match(r"\${defaults\.\d\.")):
// Hydra 1.2 on refuses it, 1.1 only warns.
bool IsLegacyInterpolation(std::string_view name) {
  constexpr std::string_view kPrefix = "${defaults.";
  return StartsWith(name, kPrefix) && name.size() > kPrefix.size() + 1 &&
         std::isdigit(static_cast<unsigned char>(name[kPrefix.size()])) &&
         name[kPrefix.size() + 1] == '.';
}

}  // namespace

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

// Overrides.__init__: a command-line override whose key names a config
// group chooses an option of it, unless its value is a dict (`db={a: 1}`
// sets the content at key db); anything else is a value override of the
// composed config. Sweeps are left to the sweeper, which composes each job
// with one value of them.
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
      // Hydra keeps them in a dict: the last `~key` of a key wins.
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
    // A key chosen twice keeps its first place and takes the last value, as
    // Hydra's override_choices dict does. Command-line choices are recorded
    // before any `override` entry, and UpdateOverrides keeps the first one
    // recorded, so the command line beats every defaults list.
    if (OverrideEntry* e = FindOverride(key)) {
      e->value = choice;
      e->input = o.input;
    } else {
      override_choices_.push_back({key, choice, true, "", o.input, false});
    }
  }
  return Status::Ok();
}

// Overrides.set_known_choice: one choice per group key per composition.
// A second, different one means two lists chose the same group at the
// same package without `override`; Hydra says how to write the override,
// and we add the `+group=opt` case, the usual way to get there.
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

// _update_overrides: records the `override group: opt` entries of one
// list before its entries are expanded, so they reach this list's own
// entries and every subtree expanded after them. As with version_base
// 1.2 and later, a `hydra/...` entry without `override` is not taken for
// one (Hydra 1.1's legacy_hydra_override), and overrides must close the
// list: an entry after one is refused.
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
    // Hydra: interpolations are resolved only once every group is chosen,
    // so an interpolated option's subtree may not change choices anymore.
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

// _create_interpolation_map and InputDefault._resolve_interpolation_impl
// (hydra/core/default_element.py): an option name like `${db}` resolves
// as OmegaConf would a node `_dummy_` whose root holds the choices known
// so far (by override key) and this list as `defaults`. Hydra leaves the
// `_self_` it added itself out of that list.
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

// Overrides.ensure_overrides_used: a choice that met no entry is an
// error, not a no-op, so that a misspelt group or a package that differs
// (`db` for `db@src`) does not compose silently. Hydra names the keys the
// group does have.
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

// Overrides.ensure_deletions_used. Hydra says only "No match"; we add
// the choice the key has or the keys its group has.
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

}  // namespace trialshim::config::internal::defaults
