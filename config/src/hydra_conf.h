// Hydra's own config (private to the config library): the `hydra:` node that
// Hydra 1.3.2 composes beside the task config.
//
// Hydra ships it as configs in its package (hydra/output, hydra/launcher,
// hydra/job_logging, ...) and as a structured config, HydraConf, that types
// every field. trialshim carries the same configs as data (hydra_builtin.cc)
// so that the defaults list sees Hydra's groups and options as Hydra's does,
// and checks the composed node against HydraConf's types with OmegaConf's
// conversions ("7" for a str field, 1 for `true` is refused in an int field).
#ifndef TRIALSHIM_CONFIG_SRC_HYDRA_CONF_H_
#define TRIALSHIM_CONFIG_SRC_HYDRA_CONF_H_

#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config::internal {

// A config of Hydra's own source, by config path ("hydra/job_logging/none").
struct BuiltinConfig {
  std::string_view path;
  std::string_view yaml;
  // A structured config of Hydra's (hydra/config, the basic launcher and
  // sweeper): searched after the app's directory, where Hydra's files
  // (pkg://hydra.conf) are searched before it.
  bool structured = false;
};

// nullptr if Hydra has no such config.
const BuiltinConfig* FindBuiltinConfig(std::string_view path);
// Hydra's own options of `group` ("hydra/launcher" -> {"basic"}).
std::vector<std::string> BuiltinGroupOptions(std::string_view group);
// Hydra's own groups ("hydra", "hydra/launcher", ...).
const std::vector<std::string>& BuiltinGroups();

// An option of one of Hydra's groups that only a plugin provides.
struct PluginOption {
  std::string_view group;    // "hydra/sweeper"
  std::string_view option;   // "optuna"
  std::string_view package;  // "hydra-optuna-sweeper"
};
const PluginOption* FindPluginOption(std::string_view group,
                                     std::string_view option);
// The options of `group` that the plugins above provide, in their order.
std::vector<std::string_view> PluginOptions(std::string_view group);

// Checks the subtree of `hydra` (the `hydra:` node) at dotted `key` ("" for
// the whole node) against HydraConf's types (and the sweeper's and Optuna
// sampler's structured configs, by their _target_) and converts values as
// OmegaConf does on assignment. `what` prefixes errors ("In 'config': ", "Error
// merging override hydra.job.num=x\n"). `sampler`: the hydra/sweeper/sampler
// option composed ("random"), whose structured config types
// hydra.sweeper.sampler whatever _target_ the configs set; "" types it by
// that _target_. A non-empty `key` is an override's: OmegaConf then names a
// list or dict value as Python does ("list"), not as its merged node
// ("ListConfig").
Status CheckHydraNode(Node* hydra, std::string_view key,
                      const std::string& what, std::string_view sampler = {});

// The structured config that types Hydra's node at dotted `key` ("" for
// the whole node; "sweeper" with hydra-optuna-sweeper: "OptunaSweeperConf"),
// or "" where no schema closes the node.
std::string HydraStructName(const Node& hydra, std::string_view key,
                            std::string_view sampler = {});

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_HYDRA_CONF_H_
