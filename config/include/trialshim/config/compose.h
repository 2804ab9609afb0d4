// Composition: what Hydra 1.3 builds from a config directory, a primary
// config name and a list of overrides.
//
// The primary config's defaults list is expanded depth-first (group
// defaults, `_self_` anywhere or appended last, `optional`, `override`,
// `null` placeholders, nested groups with relative and absolute paths,
// `# @package` headers including `_global_`, `group@pkg`), command-line
// group overrides are applied to it (`db=pg`, `+group=opt`, `~group`,
// `group@pkg=opt`, `model/encoder=x`), the selected configs are merged in
// order, and value overrides are applied in struct mode, in order, last
// wins. Hydra's own config is composed beside the task config, as Hydra
// does: its groups (hydra/launcher, hydra/job_logging, ...) and options are
// known, `hydra.*` values are checked against Hydra's schema, and the result
// keeps the two apart. Interpolations are left unresolved (see
// interpolation.h; `${hydra:...}` needs ResolveOptions::hydra).
//
// Errors are InvalidArgument (NotFound for a missing config or option) with
// messages at least as clear as Hydra's: unknown keys name the nearest keys
// and how to add one (`+key=...`), unknown group options list the options,
// `+` on an existing key says to use `++`, and sweeps in a single run get
// Hydra's advice.
#ifndef TRIALSHIM_CONFIG_COMPOSE_H_
#define TRIALSHIM_CONFIG_COMPOSE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/config/override.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {
namespace internal {
class DirectoryListings;
}  // namespace internal

// One place configs are searched, as Hydra's config_sources list it.
struct ConfigSource {
  std::string path;      // as Hydra shows it: "/abs/conf", "hydra.conf"
  std::string scheme;    // "file", "pkg" or "structured"
  std::string provider;  // "main", "hydra", "hydra.searchpath in main", ...
  std::string dir;       // the directory searched; "" when none is
};

// The config files of an app: the primary configs at the top of its config
// directory and config groups as sub-directories ("db/mysql.yaml" is option
// "mysql" of group "db"; "model/encoder/small.yaml" is option "small" of
// group "model/encoder"), plus Hydra's own configs (group "hydra" and its
// subgroups: hydra/launcher, hydra/job_logging, ...) and the directories
// hydra.searchpath adds, in the order of Hydra's search path: the first
// source holding a config wins, and a group's options are those of all
// sources. Cheap to copy; copies share the directory listings they read,
// so a repository and its copies are for one thread.
class ConfigRepository {
 public:
  ConfigRepository();

  // NotFound if `dir` does not exist or is not a directory.
  static StatusOr<ConfigRepository> Open(const std::string& dir);

  // Appends a hydra.searchpath entry ("file:///etc/app", "conf2" or
  // "pkg://my_app.conf") before Hydra's structured configs. A pkg:// entry
  // is searched as the package's directory under `pkg_roots` (where Python
  // would import it from: the app's directory); one that is not found, or
  // whose name Python can not import ("pkg://", "pkg://a..b"), is listed but
  // not searched, and `*warning` says so, as Hydra warns; so it does for a
  // directory without __init__.py, which is searched, as Hydra searches it.
  // A package whose __init__.py fails to import is searched: that takes
  // Python to know.
  void AddSearchPath(const std::string& entry, const std::string& provider,
                     const std::vector<std::string>& pkg_roots,
                     std::string* warning);

  // The main config directory.
  const std::string& dir() const { return dir_; }
  // Hydra's config search path, in order.
  std::vector<ConfigSource> Sources() const;
  // True if `group` ("db", "model/encoder") is a directory here.
  bool GroupExists(std::string_view group) const;
  // The options of `group` (file names without ".yaml"), sorted.
  std::vector<std::string> GroupOptions(std::string_view group) const;
  // Every group, recursively ("db", "model", "model/encoder"), sorted.
  std::vector<std::string> Groups() const;
  // The app's group that `key`, not a group itself, misspells, when that
  // group has `option` ("optimizr", "sgd" -> "optimizer"); else nullopt.
  std::optional<std::string> GroupMeant(std::string_view key,
                                        std::string_view option) const;
  // True if `path` ("config", "db/mysql", with or without ".yaml") is a
  // file of a source or one of Hydra's own configs.
  bool ConfigExists(std::string_view path) const;
  // The file that holds `path` (the first source's), or "" if none does.
  std::string FindFile(std::string_view path) const;
  // True if `path` is one of Hydra's own configs ("hydra/output/default").
  static bool IsBuiltin(std::string_view path);

 private:
  // The directories searched, in order.
  std::vector<std::string> SearchDirs() const;

  std::string dir_;
  std::vector<ConfigSource> extra_;  // from hydra.searchpath
  // Each directory searched is listed once (directory_listings.h), shared
  // by the copies: the composition's result, the shim's translation.
  std::shared_ptr<internal::DirectoryListings> listings_;
};

// Hydra's RunMode for a composition. kRun: one job's config; a sweep is
// refused with Hydra's advice. kMultirun: a multirun's own config, as
// Hydra's multirun composes it: sweeps are left out (hydra.overrides.task
// keeps them for the sweeper), a sweep of Hydra's own node is refused, and a
// group whose choice is "???" is left out.
enum class ComposeMode { kRun, kMultirun };

struct ComposeRequest {
  // Directory holding the primary config and its groups.
  std::string config_path;
  // Primary config name, with or without ".yaml".
  std::string config_name;
  // Hydra overrides, as given on a command line.
  std::vector<std::string> overrides;
  // Bounds applied to every YAML file read.
  LoadLimits limits;
  // More config directories (-cd/--config-dir), searched after
  // `config_path` (provider "command-line"). NotFound if one is not a
  // directory.
  std::vector<std::string> config_dirs;
  // hydra.job.name unless the config or an override sets it (Hydra takes
  // it from the app's file name: train.py -> "train").
  std::string job_name = "app";
  // See ComposeMode. Default: kRun.
  ComposeMode mode = ComposeMode::kRun;
  // The structured config the task config is bound to (an app's schema,
  // Schema<T>::ToNode()), or null. Hydra's schema pattern puts it first in
  // the defaults list (`defaults: [schema, _self_]`), so a key it declares
  // that the YAML leaves out holds its default: `key=v` sets it, and `+key=v`
  // is refused unless that default is null. trialshim adds such a key to the
  // composed config only when an override names it (docs/config.md).
  Node declared;
};

struct ComposeResult {
  // The composed task config, unresolved, without a `hydra:` node.
  Node config;
  // Hydra's own node as Hydra 1.3.2 composes it (what `--cfg hydra` shows,
  // help and hydra_help included): hydra.* from the configs and overrides,
  // checked against Hydra's schema, and the runtime fields Hydra fills at
  // composition (overrides, choices, job name, override_dirname,
  // config_name, version, cwd, config_sources). runtime.output_dir stays
  // "???": only a run knows it. Unresolved.
  Node hydra;
  // The final choice for every group, Hydra's own included, in the order
  // the choices were made, as Hydra's hydra.runtime.choices ("optimizer" ->
  // "adam"; nullopt for a null placeholder; a packaged slot is "db@src").
  std::vector<std::pair<std::string, std::optional<std::string>>> choices;
  // The task overrides as parsed, in command-line order.
  std::vector<Override> overrides;
  // The configs merged, in order, as Hydra's `--info defaults` lists them.
  struct Merged {
    std::string config_path;  // "db/mysql"
    std::string package;      // "db", "" for the root
    bool is_self = false;     // the containing config's own content
    std::string parent;       // whose defaults list, or "<root>"
  };
  std::vector<Merged> defaults_list;
  // Hydra's defaults tree, a line per node (`--info defaults-tree`).
  std::vector<std::string> defaults_tree;
  // Where the configs were searched (hydra.searchpath and -cd included).
  ConfigRepository repository;
  // What composition could not do here but the app may: an option of one of
  // Hydra's groups that only a plugin provides (hydra/sweeper=optuna).
  std::vector<std::string> warnings;
};

StatusOr<ComposeResult> Compose(const ComposeRequest& request);

// Where Hydra resolves a key of its node. It reads hydra.run.dir, the
// logging configs, verbose and the help templates from the whole config, so
// `${paths.log_dir}` there names the task's key (lightning-hydra-template's
// run.dir does); the job's env_set and chdir from HydraConfig's copy of its
// node alone.
enum class HydraScope { kHydraOnly, kWholeConfig };

// Hydra's node at dotted `key` ("run.dir"; "" for all of it) resolved as
// Hydra resolves it in `scope` (${hydra:...} works too). `keep_missing`:
// "???" stays, as hydra.job.num in a run.
// `now`: ResolveOptions::now.
StatusOr<Node> ResolveHydra(const ComposeResult& composed, std::string_view key,
                            bool keep_missing = false,
                            HydraScope scope = HydraScope::kHydraOnly,
                            std::map<std::string, Node>* now = nullptr);

// `shown` (a view of `composed`: ConfigView, a part of it) resolved as a
// Hydra app's --resolve resolves what it prints (OmegaConf.resolve): "???"
// stays, ${hydra:...} reads `composed.hydra`.
StatusOr<Node> ResolveShown(const Node& shown, const ComposeResult& composed);

// What a Hydra app's `--cfg <cfg_type>` shows: "job" (the task config),
// "hydra" ({hydra: ...} without its help texts, as Hydra's
// get_sanitized_hydra_cfg) or "all" ({hydra: ..., <task keys>}).
Node ConfigView(const ComposeResult& composed, std::string_view cfg_type);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_COMPOSE_H_
