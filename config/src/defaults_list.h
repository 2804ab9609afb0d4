// The defaults list: which config files Hydra 1.3 merges, in which order and
// at which package (private to the config library).
//
// BuildDefaultsList expands the primary config's defaults list depth-first
// exactly as Hydra's defaults_list.py does: entries are visited last to
// first so that an `override` in a later config applies to an earlier
// entry, `_self_` is appended when missing, command-line group overrides
// replace choices, `+group=opt` entries are appended to the primary list,
// `~group` entries are dropped, option names may be interpolations of other
// choices, and `# @package` headers and `group@pkg` decide where each file
// lands. Hydra's own config (`hydra/config`, see hydra_conf.h) is expanded
// beside the primary config, as Hydra's virtual root has it.
#ifndef TRIALSHIM_CONFIG_SRC_DEFAULTS_LIST_H_
#define TRIALSHIM_CONFIG_SRC_DEFAULTS_LIST_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/config/compose.h"
#include "trialshim/config/node.h"
#include "trialshim/config/override.h"
#include "trialshim/base/status.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config::internal {

// One config file as Hydra's repository hands it out.
struct LoadedConfig {
  Node config;  // the file's content, top-level `defaults` removed
  std::optional<std::string> package_header;  // from `# @package X`
  Node defaults;  // the raw `defaults` list (null when there is none)
};

// Loads and caches config files of one repository ("db/mysql" ->
// <dir>/db/mysql.yaml). Each file is read at most once per composition.
class ConfigCache {
 public:
  ConfigCache(const ConfigRepository& repo, LoadLimits limits)
      : repo_(repo), limits_(limits) {}

  const ConfigRepository& repo() const { return repo_; }
  // nullptr (and OK) when the file does not exist.
  StatusOr<const LoadedConfig*> Load(const std::string& config_path);

 private:
  const ConfigRepository& repo_;
  LoadLimits limits_;
  std::map<std::string, std::unique_ptr<LoadedConfig>> cache_;
};

// One file to merge, in order.
struct ResultDefault {
  std::string config_path;  // "db/mysql"
  std::string package;      // "" for the root, else "db", "a.b"
  bool is_self = false;
  bool primary = false;
  std::string parent;       // the config whose list it is in, or "<root>"
};

struct DefaultsListResult {
  std::vector<ResultDefault> defaults;
  // Final group choices in defaults-list order (see ComposeResult::choices).
  std::vector<std::pair<std::string, std::optional<std::string>>> choices;
  // Hydra's defaults tree as `--info defaults-tree` prints it: one line per
  // node ("hydra/config:", "db: mysql", "_self_"), indented two spaces a
  // level.
  std::vector<std::string> tree_lines;
  // What the composition could not do and the app may (see
  // ComposeResult::warnings).
  std::vector<std::string> warnings;
  // Where the configs of those plugin options would go ("hydra.sweeper").
  std::vector<std::string> plugin_packages;
  // The overrides that are not group overrides, in command-line order.
  std::vector<const Override*> value_overrides;
};

// `overrides` must outlive the result (value_overrides points into it).
// Sweeps among them are left out (the sweeper's, not the composition's);
// `skip_missing`: a group whose choice is "???" is left out instead of
// refused, as Hydra composes a multirun's own config.
StatusOr<DefaultsListResult> BuildDefaultsList(
    ConfigCache* cache, const std::string& config_name,
    const std::vector<Override>& overrides, bool skip_missing = false);

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_DEFAULTS_LIST_H_
