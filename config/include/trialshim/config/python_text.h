// How Python prints config values (str and repr of a Node; plain strings
// are in base/python_text.h), for messages, string interpolation and files
// that must read exactly as Hydra's, OmegaConf's or Lightning's do.
#ifndef TRIALSHIM_CONFIG_PYTHON_TEXT_H_
#define TRIALSHIM_CONFIG_PYTHON_TEXT_H_

#include <string>
#include <string_view>

#include "trialshim/base/python_text.h"
#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config {

// Python's str() of the value (strings as they are, None, True, 1.0,
// containers with repr() of their items).
std::string PythonStr(const Node& v);

// Python's repr() of the value.
std::string PythonRepr(const Node& v);

// Python's float() of the value: ints, floats and bools, and strings as
// float() reads them (" 1.5", "1_000", "-inf", "nan"). InvalidArgument
// with Python's ValueError or TypeError message otherwise.
StatusOr<double> PythonFloat(const Node& v);

// Python's type(v).__name__ of the plain value: "NoneType", "bool", "int",
// "float", "str", "list", "dict". (OmegaConf's messages name its node
// classes instead: OmegaTypeName in typed_value.cc. Hydra says "mapping"
// for a defaults list that is a dict, at that one place.)
std::string PythonTypeName(const Node& v);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_PYTHON_TEXT_H_
