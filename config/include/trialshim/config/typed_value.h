// OmegaConf 2.3's conversion of a value assigned to a typed field (the
// ValueNode classes in omegaconf/nodes.py), in one place for the check of
// Hydra's own node (hydra_conf.cc), structured configs (schema.h) and code
// outside the config library that checks a value against a config's key
// before the app does (the shim refuses a trial argument that the trainer's
// config would refuse, before a paid trial starts).
#ifndef TRIALSHIM_CONFIG_TYPED_VALUE_H_
#define TRIALSHIM_CONFIG_TYPED_VALUE_H_

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config {

enum class ScalarKind { kStr, kInt, kFloat, kBool };

// "str", "int", "float", "bool".
const char* ScalarKindName(ScalarKind kind);

// The value `v` converted as OmegaConf converts it on assignment to a field
// of `kind`: a str field takes Python's str() of an int, float or bool; an
// int field takes Python int() text ("5", " 1_0 ") but not 1.0, true or
// "1.5"; a float field takes ints and Python float() text; a bool field takes
// ints and int() text (non-zero is true) and y/yes/on/true, n/no/off/false
// in any case, not floats. The
// result keeps v's mark. Errors are InvalidArgument with OmegaConf's message
// and no location (the caller adds it); null is refused ("Incompatible value
// 'None' ..."): whether a field is Optional is the caller's rule.
StatusOr<Node> ConvertScalar(const Node& v, ScalarKind kind);

// `v` converted as ConvertScalar converts it for a field of the type of
// `like` when that is int, float, bool or str ("5" to an int, 1 to
// a float, "yes" to a bool; not 1.5 or true to an int); any other `like`
// (null, a list, a map) takes `v` as it is, and so does a null `v`.
// InvalidArgument with OmegaConf's message otherwise.
StatusOr<Node> ConvertLike(const Node& like, const Node& v);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_TYPED_VALUE_H_
