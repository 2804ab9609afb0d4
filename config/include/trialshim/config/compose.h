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
// wins. The result holds no `hydra:` node and its interpolations are left
// unresolved (see interpolation.h).
//
// Errors are InvalidArgument (NotFound for a missing config or option) with
// messages at least as clear as Hydra's: unknown keys name the nearest keys
// and how to add one (`+key=...`), unknown group options list the options,
// `+` on an existing key says to use `++`, and sweeps in a single run get
// Hydra's advice.
#ifndef TRIALSHIM_CONFIG_COMPOSE_H_
#define TRIALSHIM_CONFIG_COMPOSE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/config/override.h"
#include "trialshim/base/status.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {

// The config files under one directory: the primary configs at its top and
// config groups as sub-directories ("db/mysql.yaml" is option "mysql" of
// group "db"; "model/encoder/small.yaml" is option "small" of group
// "model/encoder"). Cheap to copy.
class ConfigRepository {
 public:
  // NotFound if `dir` does not exist or is not a directory.
  static StatusOr<ConfigRepository> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // True if `group` ("db", "model/encoder") is a directory here.
  bool GroupExists(std::string_view group) const;
  // The options of `group` (file names without ".yaml"), sorted.
  std::vector<std::string> GroupOptions(std::string_view group) const;
  // Every group, recursively ("db", "model", "model/encoder"), sorted.
  std::vector<std::string> Groups() const;
  // True if "<dir>/<path>.yaml" exists ("config", "db/mysql").
  bool ConfigExists(std::string_view path) const;

 private:
  std::string dir_;
};

struct ComposeRequest {
  // Directory holding the primary config and its groups.
  std::string config_path;
  // Primary config name, with or without ".yaml".
  std::string config_name;
  // Hydra overrides, as given on a command line.
  std::vector<std::string> overrides;
  // Bounds applied to every YAML file read.
  LoadLimits limits;
};

struct ComposeResult {
  // The composed task config, unresolved, without a `hydra:` node.
  Node config;
  // The final choice for every group in the defaults list, in defaults-list
  // order, as Hydra's hydra.runtime.choices ("optimizer" -> "adam"; a null
  // placeholder gives "null"; a packaged slot is named "db@src").
  std::vector<std::pair<std::string, std::string>> choices;
  // The task overrides as parsed, in command-line order.
  std::vector<Override> overrides;
};

StatusOr<ComposeResult> Compose(const ComposeRequest& request);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_COMPOSE_H_
