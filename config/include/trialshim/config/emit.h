// Writing Nodes as YAML or JSON, the way OmegaConf and Python print them.
//
// ToYaml matches OmegaConf.to_yaml (block style, key order kept, strings
// quoted only where YAML would read them as another type). ToJson matches
// Python's json.dumps(indent=2): floats as repr() prints them, and
// Infinity, -Infinity and NaN for the non-finite ones.
#ifndef TRIALSHIM_CONFIG_EMIT_H_
#define TRIALSHIM_CONFIG_EMIT_H_

#include <string>

#include "trialshim/config/node.h"

namespace trialshim::config {

std::string ToYaml(const Node& node);
// indent < 0 writes one line.
std::string ToJson(const Node& node, int indent = 2);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_EMIT_H_
