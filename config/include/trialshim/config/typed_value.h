// OmegaConf's conversion of a value assigned to a typed field, for code
// outside the config library that checks a value against a config's key
// before the app does (the shim refuses a trial argument that the trainer's
// config would refuse, before a paid trial starts). The rules are
// OmegaConf 2.2's ValueNode classes, as structured configs and Hydra's own
// node apply them (config/src/typed_value.h).
#ifndef TRIALSHIM_CONFIG_TYPED_VALUE_H_
#define TRIALSHIM_CONFIG_TYPED_VALUE_H_

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config {

// `v` converted as OmegaConf converts a value assigned to a field of the
// type of `like` when that is int, float, bool or str ("5" to an int, 1 to
// a float, "yes" to a bool; not 1.5 or true to an int); any other `like`
// (null, a list, a map) takes `v` as it is, and so does a null `v`.
// InvalidArgument with OmegaConf's message otherwise.
StatusOr<Node> ConvertLike(const Node& like, const Node& v);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_TYPED_VALUE_H_
