// OmegaConf 2.3's conversions of a value assigned to a typed field (the
// ValueNode classes in omegaconf/nodes.py), shared by the check of Hydra's own
// node (hydra_conf.cc) and by structured configs (schema.cc) so that the
// rules live in one place. Private to trialshim_config.
#ifndef TRIALSHIM_CONFIG_SRC_TYPED_VALUE_H_
#define TRIALSHIM_CONFIG_SRC_TYPED_VALUE_H_

#include <string>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config::internal {

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

// Python's type() name of a value as OmegaConf's messages give it: its node
// classes "ListConfig", "DictConfig" for containers, else PythonTypeName
// (python_text.h).
std::string OmegaTypeName(const Node& v);

// OmegaConf 2.3's refusal of `v`, not a map, merged into a field of
// `dict_type` ("Dict[str, int]"): "Invalid type assigned: list is not a
// subclass of Dict[str, int]. value: [1]" for a list (2.2 said "Cannot
// assign list to ..."), "Cannot assign int to Dict[str, int]" otherwise.
std::string NotAMapMessage(const Node& v, const std::string& dict_type);

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_TYPED_VALUE_H_
