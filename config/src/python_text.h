// How Python prints values, for messages and string interpolation that must
// read exactly as Hydra's and OmegaConf's do.
#ifndef TRIALSHIM_CONFIG_SRC_PYTHON_TEXT_H_
#define TRIALSHIM_CONFIG_SRC_PYTHON_TEXT_H_

#include <string>
#include <string_view>

#include "trialshim/config/node.h"

namespace trialshim::config::internal {

// Python's repr() of a str: single quotes unless the text holds a single
// quote and no double quote; backslash escapes for the quote, '\\', \n, \r,
// \t and other control characters (\xNN).
std::string PythonStringRepr(std::string_view s);

// Python's str() of the value (strings as they are, None, True, 1.0,
// containers with repr() of their items).
std::string PythonStr(const Node& v);

// Python's repr() of the value.
std::string PythonRepr(const Node& v);

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_PYTHON_TEXT_H_
