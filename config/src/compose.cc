// Compose(): parse the overrides, refuse sweeps, build the defaults list,
// merge the selected files in order, then apply value overrides in struct
// mode, as Hydra 1.3's ConfigLoaderImpl does.
#include "trialshim/config/compose.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "hydra_conf.h"

#include "defaults_list.h"
#include "merge.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/python_text.h"

namespace trialshim::config {
namespace {

using internal::ConfigCache;

std::string ValueText(const Override& o) {
  size_t eq = o.input.find('=');
  return eq == std::string::npos ? "" : o.input.substr(eq + 1);
}

std::string KeyText(const Override& o) {
  return o.input.substr(0, o.input.find('='));
}

// Hydra's advice, each override quoted for the shell it is typed into
// (unquoted, key='a,b' reaches the app as key=a,b again).
Status RefuseSweep(const Override& o) {
  if (o.value_kind == ValueKind::kSimpleChoiceSweep) {
    return Status::InvalidArgument(
        "Ambiguous value for argument '" + o.input +
        "'\n1. To use it as a list, use " +
        ShellQuote(KeyText(o) + "=[" + ValueText(o) + "]") +
        "\n2. To use it as string, quote the value: " +
        ShellQuote(KeyText(o) + "='" + ValueText(o) + "'") +
        "\n3. To sweep over it, add --multirun to your command line (a "
        "Hydra app's; `trialshim compose` builds one config)");
  }
  return Status::InvalidArgument(
      "Sweep parameters '" + o.input +
      "' requires --multirun (a Hydra app's; `trialshim compose` builds one "
      "config)");
}

// Hydra keeps each override's text in hydra.overrides.task (or .hydra), a
// List[str], where OmegaConf parses a string holding "${" as it is stored:
// name='${foo:\'x\'}' has a valid value, ${foo:'x'}, but its text puts
// \' inside an interpolation, which OmegaConf's grammar refuses. So is
// hydra.job.override_dirname, the joined text.
Status CheckOverrideTexts(const std::vector<Override>& overrides) {
  size_t task = 0, hydra = 0;
  for (const Override& o : overrides) {
    std::string key = o.is_hydra()
                          ? "hydra.overrides.hydra[" + std::to_string(hydra++)
                          : "hydra.overrides.task[" + std::to_string(task++);
    Status st = CheckInterpolationSyntax(Node::String(o.input), key + "]");
    if (st.ok()) continue;
    // The same value in double quotes, where that spelling is fine.
    std::string hint;
    if (o.value && o.value->is_string() &&
        o.value->AsString().find_first_of("\"\\") == std::string::npos) {
      std::string again = KeyText(o) + "=\"" + o.value->AsString() + "\"";
      StatusOr<Override> parsed = ParseOverride(again);
      if (parsed.ok() && parsed->value == o.value &&
          CheckInterpolationSyntax(Node::String(again)).ok()) {
        hint = "\nWrite the value in double quotes instead: " +
               ShellQuote(again);
      }
    }
    return Status::InvalidArgument(
        "Override " + o.input +
        ": Hydra keeps its text in " + key.substr(0, key.find('[')) +
        ", where OmegaConf parses it as written, escaped quotes "
        "included\n" + st.message() + hint);
  }
  return Status::Ok();
}

// Suggestions for a key that is not in the config: the nearest existing
// dotted keys, else the nearest config groups.
std::string SuggestKey(const Node& cfg, const std::string& key,
                       const ConfigRepository& repo) {
  std::vector<std::string> keys = internal::DottedKeys(cfg);
  std::string hint = DidYouMean(key, keys);
  if (hint.empty()) {
    std::vector<std::string> groups = repo.Groups();
    std::vector<std::string> close = ClosestMatches(key, groups, 1);
    if (!close.empty()) {
      hint = " (did you mean the config group '" + close[0] + "': +" +
             close[0] + "=<OPTION>?)";
    }
  }
  return hint;
}

// The value OmegaConf.select would return: resolved, and nullopt for an
// absent key, null or "???".
StatusOr<std::optional<Node>> SelectResolved(const Node& cfg,
                                             const std::string& key,
                                             const Override& o) {
  const Node* n = internal::SelectKey(cfg, key);
  if (n == nullptr || n->is_null() || n->IsMissing()) {
    return std::optional<Node>();
  }
  if (!n->IsInterpolation()) return std::optional<Node>(*n);
  StatusOr<Node> resolved = ResolvePath(cfg, key);
  if (!resolved.ok()) {
    return Status::InvalidArgument("Error merging override " + o.input + ": " +
                                   resolved.status().message());
  }
  if (resolved->is_null() || resolved->IsMissing()) {
    return std::optional<Node>();
  }
  return std::optional<Node>(std::move(resolved).value());
}

// A key of the app's structured config (ComposeRequest::declared) that the
// YAML leaves out: in Hydra's schema pattern the composed config has it with
// its default, so it is put there before an override of it is applied.
void FillDeclared(Node* cfg, const Node& declared, const std::string& key) {
  Node* at = cfg;
  const Node* from = &declared;
  size_t start = 0;
  while (at->is_map() && from->is_map()) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos
                                             ? std::string::npos
                                             : dot - start);
    const Node* d = from->Get(part);
    if (d == nullptr) return;
    Node* c = at->GetMutable(part);
    if (c == nullptr) {
      at->Set(part, *d);
      return;
    }
    if (dot == std::string::npos) return;
    at = c;
    from = d;
    start = dot + 1;
  }
}

// `~key[=value]`, as Hydra's ConfigLoaderImpl._apply_overrides_to_config
// deletes: the key must exist and, with a value, hold it.
Status DeleteOverride(Node* cfg, const Override& o,
                      const ConfigRepository& repo) {
  const std::string& key = o.key_or_group;
  TRIALSHIM_ASSIGN_OR_RETURN(std::optional<Node> current,
                             SelectResolved(*cfg, key, o));
  if (!current) {
    return Status::InvalidArgument(
        "Could not delete from config. '" + key + "' does not exist" +
        (internal::SelectKey(*cfg, key) != nullptr
             ? " (its value is null or \"???\")"
             : SuggestKey(*cfg, key, repo)) +
        ".");
  }
  // "~key=null" is "~key", as Python's None is no value.
  if (o.value && !o.value->is_null() &&
      !internal::PythonEquals(*current, *o.value)) {
    return Status::InvalidArgument(
        "Could not delete from config. The value of '" + key + "' is " +
        PythonStr(*current) + " and not " + PythonStr(*o.value) + ".");
  }
  if (!internal::DeleteKey(cfg, key)) {
    return Status::InvalidArgument(
        "Error merging override " + o.input + ": '" + key +
        "' is a list item and only keys of a dict can be deleted (set "
        "the whole list instead)");
  }
  return Status::Ok();
}

// Why `key=value` found no key, in Hydra's words ("Could not override
// ... To append to your config use +key=value"), with what we know better:
// the config group meant, the parent that is not a dict, the hydra
// struct's type, a did-you-mean.
Status KeyNotFound(const Node& cfg, const Override& o, const Node& value,
                   const std::string& missing, const ConfigRepository& repo,
                   const std::string& sampler) {
  const std::string& key = o.key_or_group;
  // "optimizr=sgd": the group is meant, not a new key.
  if (std::optional<std::string> group =
          value.is_string() && missing == key
              ? repo.GroupMeant(key, value.AsString())
              : std::nullopt) {
    return Status::InvalidArgument(
        "Could not override '" + key + "': no config group or key '" + key +
        "' (did you mean the config group '" + *group + "': " + *group + "=" +
        value.AsString() + "?)");
  }
  std::string what = missing == key
                         ? "the config has no key '" + key + "'"
                         : "key '" + missing + "' is not in the config";
  size_t dot = missing.rfind('.');
  const Node* parent = dot == std::string::npos
                           ? nullptr
                           : internal::SelectKey(cfg, missing.substr(0, dot));
  if (parent != nullptr && !parent->is_map() && !parent->is_list()) {
    what += " ('" + missing.substr(0, dot) + "' is " +
            (parent->is_null() ? std::string("null")
                               : std::string("the ") + parent->type_name() +
                                     " " + PythonStr(*parent)) +
            ", not a dict)";
  }
  if (dot != std::string::npos && StartsWith(missing, "hydra.")) {
    std::string type = internal::HydraStructName(
        *cfg.Find("hydra"), dot > 6 ? missing.substr(6, dot - 6) : "",
        sampler);
    if (!type.empty()) {
      what += " (Key '" + missing.substr(dot + 1) + "' not in '" + type + "')";
    }
  }
  return Status::InvalidArgument("Could not override '" + key + "': " + what +
                                 SuggestKey(cfg, missing, repo) +
                                 ".\nTo append to your config use +" +
                                 o.input);
}

// `open`: the key may be new (as with ++), for a plugin's node.
Status ApplyValueOverride(Node* cfg, const Override& o,
                          const ConfigRepository& repo, bool open,
                          const Node& declared, const std::string& sampler) {
  const std::string& key = o.key_or_group;
  if (!o.package && !o.is_hydra()) FillDeclared(cfg, declared, key);
  if (o.package) {
    std::string group_hint = DidYouMean(key, repo.Groups());
    return Status::InvalidArgument(
        "Override " + o.input +
        " looks like a config group override, but config group '" + key +
        "' does not exist" + group_hint + ".");
  }
  if (key.find('/') != std::string::npos) {
    return Status::InvalidArgument(
        "Could not override '" + key + "': config group '" + key + "' " +
        (repo.GroupExists(key)
             ? "takes an option name, not a dict (set its keys with "
               "dotted overrides instead)"
             : "does not exist" + DidYouMean(key, repo.Groups())) +
        ".");
  }
  if (o.type == OverrideType::kDelete) return DeleteOverride(cfg, o, repo);
  const Node value = o.value.value_or(Node());
  if (o.type == OverrideType::kAdd) {
    TRIALSHIM_ASSIGN_OR_RETURN(std::optional<Node> current,
                               SelectResolved(*cfg, key, o));
    if (current && !value.is_map() && !value.is_list()) {
      return Status::InvalidArgument(
          "Could not append to config. An item is already at '" + key +
          "'.\nEither remove + prefix: '" + o.input.substr(1) +
          "'\nOr add a second + to add or override '" + key + "': '+" +
          o.input + "'");
    }
  }
  const bool force = open || o.type != OverrideType::kChange;
  Status st = internal::UpdateKey(cfg, key, value, force);
  if (st.ok()) return st;
  if (st.code() == StatusCode::kNotFound) {
    return KeyNotFound(*cfg, o, value, st.message(), repo, sampler);
  }
  return Status::InvalidArgument("Error merging override " + o.input + ": " +
                                 st.message());
}

// Places `config` at dotted `package` ("" is the root), as Hydra's
// _embed_result_config does before merging.
Node Embed(Node config, const std::string& package) {
  if (package.empty()) return config;
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = package.find('.', start);
    parts.push_back(package.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    config = Node::MakeMap({{*it, std::move(config)}});
  }
  return config;
}

// The configs of the defaults list merged in order, `hydra:` node included.
StatusOr<Node> MergeDefaults(const internal::DefaultsListResult& defaults,
                             ConfigCache* cache) {
  Node cfg = Node::MakeMap();
  for (const internal::ResultDefault& d : defaults.defaults) {
    TRIALSHIM_ASSIGN_OR_RETURN(const internal::LoadedConfig* loaded,
                               cache->Load(d.config_path));
    if (loaded == nullptr) {
      return Status::Internal("config '" + d.config_path + "' vanished");
    }
    if (loaded->config.is_list() && d.package.empty()) {
      return Status::InvalidArgument(
          "In '" + d.config_path +
          "': a list can not be merged at the root of the config; give it "
          "a package (" +
          d.config_path + "@some.key)");
    }
    Status st = internal::MergeInto(&cfg, Embed(loaded->config, d.package),
                                    /*struct_mode=*/false);
    if (!st.ok()) {
      return Status::InvalidArgument(
          "In '" + d.config_path +
          "': error while composing config: " + st.message());
    }
  }
  return cfg;
}

// Hydra's _process_config_searchpath: hydra.searchpath from the first
// command-line override of it, else from the primary config (resolved), adds
// sources to the repository before anything else is loaded. `cache` reads
// `repo`; the primary it keeps stays right, as the sources added come after
// the directory that held it.
Status AddSearchPath(const std::string& config_name,
                     const std::vector<Override>& overrides,
                     ConfigCache* cache, ConfigRepository* repo,
                     std::vector<std::string>* warnings) {
  std::optional<Node> searchpath;
  std::string provider = "hydra.searchpath in command-line";
  for (const Override& o : overrides) {
    if (o.key_or_group == "hydra.searchpath" && o.value) {
      searchpath = *o.value;
      break;
    }
  }
  if (!searchpath) {
    provider = "hydra.searchpath in main";
    // A primary config that does not load is the defaults list's error to
    // report, with its context.
    StatusOr<const internal::LoadedConfig*> primary = cache->Load(config_name);
    if (!primary.ok() || *primary == nullptr ||
        (*primary)->config.Find("hydra.searchpath") == nullptr) {
      return Status::Ok();
    }
    TRIALSHIM_ASSIGN_OR_RETURN(
        Node value, ResolvePath((*primary)->config, "hydra.searchpath"));
    searchpath = std::move(value);
  }
  if (searchpath->is_null()) return Status::Ok();
  bool strings = searchpath->is_list();
  for (size_t i = 0; strings && i < searchpath->size(); ++i) {
    strings = searchpath->AsList()[i].is_string();
  }
  if (!strings) {
    return Status::InvalidArgument(
        "hydra.searchpath must be a list of strings. Got: " +
        PythonStr(*searchpath) +
        (searchpath->mark().known() ? " at " + searchpath->mark().ToString()
                                    : ""));
  }
  // Python imports pkg:// entries from the app's directory, usually the
  // config directory's parent, or the working directory.
  std::error_code ec;
  std::vector<std::string> pkg_roots = {
      std::filesystem::absolute(repo->dir(), ec).parent_path().string(),
      std::filesystem::current_path(ec).string()};
  for (const Node& entry : searchpath->AsList()) {
    std::string warning;
    repo->AddSearchPath(entry.AsString(), provider, pkg_roots, &warning);
    if (!warning.empty()) warnings->push_back(warning);
  }
  return Status::Ok();
}

// Hydra's get_overrides_dirname: the task overrides not excluded, sorted,
// joined with item_sep, every '=' replaced by kv_sep.
std::string OverrideDirname(const ComposeResult& r) {
  const Node* conf = r.hydra.Find("job.config.override_dirname");
  auto text = [&](const char* key, const char* fallback) {
    const Node* n = conf ? conf->Get(key) : nullptr;
    return n && n->is_string() ? n->AsString() : std::string(fallback);
  };
  std::vector<std::string> exclude;
  if (const Node* ex = conf ? conf->Get("exclude_keys") : nullptr;
      ex && ex->is_list()) {
    for (const Node& k : ex->AsList()) exclude.push_back(PythonStr(k));
  }
  std::vector<std::string> lines;
  for (const Override& o : r.overrides) {
    if (o.is_hydra()) continue;
    if (std::find(exclude.begin(), exclude.end(), o.key_or_group) ==
        exclude.end()) {
      lines.push_back(o.input);
    }
  }
  std::sort(lines.begin(), lines.end());
  return ReplaceAll(JoinStrings(lines, text("item_sep", ",")), "=",
                    text("kv_sep", "="));
}

Node StringList(const std::vector<std::string>& items) {
  Node list = Node::MakeList();
  for (const std::string& s : items) {
    list.MutableList().push_back(Node::String(s));
  }
  return list;
}

// What Hydra's ConfigLoaderImpl writes into hydra.* once the config is
// composed (_load_configuration_impl).
Status FillRuntime(const ComposeRequest& request, const std::string& name,
                   const ConfigRepository& repo, ComposeResult* r) {
  Node& h = r->hydra;
  std::vector<std::string> hydra_lines, task_lines;
  for (const Override& o : r->overrides) {
    (o.is_hydra() ? hydra_lines : task_lines).push_back(o.input);
  }
  h.FindMutable("overrides")->Set("hydra", StringList(hydra_lines));
  h.FindMutable("overrides")->Set("task", StringList(task_lines));
  Node* choices = h.FindMutable("runtime.choices");
  for (const auto& [key, choice] : r->choices) {
    choices->Set(key, choice ? Node::String(*choice) : Node::Null());
  }
  Node* env_set = h.FindMutable("job.env_set");
  for (const Node& key : h.Find("job.env_copy")->AsList()) {
    const char* value = std::getenv(key.AsString().c_str());
    if (value == nullptr) {
      return Status::InvalidArgument(
          "hydra.job.env_copy names '" + key.AsString() +
          "', which is not set in the environment");
    }
    env_set->Set(key.AsString(), Node::String(value));
  }
  Node* runtime = h.FindMutable("runtime");
  runtime->Set("version", Node::String("1.3.2"));
  runtime->Set("version_base", Node::String("1.3"));
  std::error_code ec;
  runtime->Set("cwd", Node::String(std::filesystem::current_path(ec).string()));
  Node sources = Node::MakeList();
  for (const ConfigSource& s : repo.Sources()) {
    sources.MutableList().push_back(
        Node::MakeMap({{"path", Node::String(s.path)},
                       {"schema", Node::String(s.scheme)},
                       {"provider", Node::String(s.provider)}}));
  }
  runtime->Set("config_sources", std::move(sources));
  Node* job = h.FindMutable("job");
  if (job->Get("name")->IsMissing()) {
    job->Set("name", Node::String(request.job_name));
  }
  job->Set("override_dirname", Node::String(OverrideDirname(*r)));
  job->Set("config_name", Node::String(name));
  return Status::Ok();
}

}  // namespace

StatusOr<ComposeResult> Compose(const ComposeRequest& request) {
  ComposeResult result;
  for (const std::string& text : request.overrides) {
    TRIALSHIM_ASSIGN_OR_RETURN(Override o, ParseOverride(text));
    result.overrides.push_back(std::move(o));
  }
  const bool multirun = request.mode == ComposeMode::kMultirun;
  for (const Override& o : result.overrides) {
    if (!o.is_sweep()) continue;
    if (!multirun) return RefuseSweep(o);
    if (o.is_hydra()) {
      return Status::InvalidArgument(
          "Sweeping over Hydra's configuration is not supported : '" +
          o.input + "'");
    }
  }
  TRIALSHIM_ASSIGN_OR_RETURN(ConfigRepository repo,
                             ConfigRepository::Open(request.config_path));
  std::string name = request.config_name;
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0) {
    name.resize(name.size() - 5);
  }
  if (name.empty()) return Status::InvalidArgument("config name is empty");

  for (const std::string& dir : request.config_dirs) {
    std::error_code ec;
    std::string abs = std::filesystem::absolute(dir, ec).lexically_normal();
    if (!std::filesystem::is_directory(abs, ec)) {
      return Status::NotFound("Additional config directory '" + abs +
                              "' not found");
    }
    std::string unused;
    repo.AddSearchPath("file://" + abs, "command-line", {}, &unused);
  }
  ConfigCache cache(repo, request.limits);
  TRIALSHIM_RETURN_IF_ERROR(
      AddSearchPath(name, result.overrides, &cache, &repo, &result.warnings));
  TRIALSHIM_ASSIGN_OR_RETURN(
      internal::DefaultsListResult defaults,
      internal::BuildDefaultsList(&cache, name, result.overrides, multirun));
  TRIALSHIM_ASSIGN_OR_RETURN(Node cfg, MergeDefaults(defaults, &cache));
  // The Optuna sampler's structured config is the option merged.
  std::string sampler;
  for (const auto& [group, option] : defaults.choices) {
    if (group == "hydra/sweeper/sampler") sampler = option.value_or("");
  }
  TRIALSHIM_RETURN_IF_ERROR(
      internal::CheckHydraNode(cfg.GetMutable("hydra"), "", "", sampler));

  // A plugin's config is unknown here: its node is open to the app's keys
  // (hydra.sweeper.n_trials=20 for hydra/sweeper=optuna), as the plugin's
  // own schema would take them.
  for (const std::string& package : defaults.plugin_packages) {
    Node* node = cfg.FindMutable(package);
    if (node != nullptr && node->IsMissing()) *node = Node::MakeMap();
  }
  auto in_plugin = [&](const Override& o) {
    for (const std::string& package : defaults.plugin_packages) {
      if (StartsWith(o.key_or_group, package + ".")) return true;
    }
    return false;
  };
  for (const Override* o : defaults.value_overrides) {
    TRIALSHIM_RETURN_IF_ERROR(ApplyValueOverride(
        &cfg, *o, repo, in_plugin(*o), request.declared, sampler));
    if (o->is_hydra() && o->key_or_group != "hydra") {
      TRIALSHIM_RETURN_IF_ERROR(internal::CheckHydraNode(
          cfg.GetMutable("hydra"), o->key_or_group.substr(6),
          "Error merging override " + o->input + "\n", sampler));
    }
  }
  TRIALSHIM_RETURN_IF_ERROR(CheckOverrideTexts(result.overrides));
  result.hydra = std::move(*cfg.GetMutable("hydra"));
  cfg.Erase("hydra");
  result.config = std::move(cfg);
  result.choices = std::move(defaults.choices);
  result.warnings.insert(result.warnings.end(), defaults.warnings.begin(),
                         defaults.warnings.end());
  result.repository = repo;
  for (const internal::ResultDefault& d : defaults.defaults) {
    result.defaults_list.push_back({d.config_path, d.package, d.is_self, d.parent});
  }
  result.defaults_tree = std::move(defaults.tree_lines);
  TRIALSHIM_RETURN_IF_ERROR(FillRuntime(request, name, repo, &result));
  return result;
}

StatusOr<Node> ResolveHydra(const ComposeResult& composed, std::string_view key,
                            bool keep_missing, HydraScope scope,
                            std::map<std::string, Node>* now) {
  ResolveOptions options;
  options.keep_missing = keep_missing;
  options.hydra = &composed.hydra;
  options.now = now;
  Node root = Node::MakeMap({{"hydra", composed.hydra}});
  if (scope == HydraScope::kWholeConfig) {
    for (const auto& [k, value] : composed.config.AsMap()) root.Set(k, value);
  }
  const std::string path = key.empty() ? "hydra" : "hydra." + std::string(key);
  return ResolvePath(root, path, options);
}

StatusOr<Node> ResolveShown(const Node& shown, const ComposeResult& composed) {
  ResolveOptions options;
  options.keep_missing = true;
  options.hydra = &composed.hydra;
  return ResolveAll(shown, options);
}

Node ConfigView(const ComposeResult& composed, std::string_view cfg_type) {
  if (cfg_type == "job") return composed.config;
  Node hydra = composed.hydra;
  if (cfg_type == "hydra") {
    hydra.Erase("help");
    hydra.Erase("hydra_help");
  }
  Node out = Node::MakeMap({{"hydra", std::move(hydra)}});
  if (cfg_type == "all") {
    for (const auto& [key, value] : composed.config.AsMap()) out.Set(key, value);
  }
  return out;
}

}  // namespace trialshim::config
