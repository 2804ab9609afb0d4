// OmegaConf 2.3's words for a value assigned to a typed field, shared by the
// check of Hydra's own node (hydra_conf.cc) and by structured configs
// (schema.cc); the conversion itself is public (trialshim/config/
// typed_value.h). Private to trialshim_config.
#ifndef TRIALSHIM_CONFIG_SRC_TYPED_VALUE_H_
#define TRIALSHIM_CONFIG_SRC_TYPED_VALUE_H_

#include <string>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config::internal {

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
