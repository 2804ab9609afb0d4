// The renderer: the override parser's inverse.
//
// RenderValue(v) returns override value text that ParseOverrideValue reads
// back to exactly v (same type, same value): numbers, bools and null stay
// bare ("0.1", "64", "true", "null"), lists and dicts use Hydra's bracket
// syntax, and strings are left bare when Hydra would read them back as the
// same string, escaped with backslashes or quoted otherwise ("a,b" ->
// "'a,b'", "epoch=3.ckpt" -> "'epoch=3.ckpt'", "01" stays "01", "1e-3" the
// string -> "'1e-3'"). Strings containing "${" are kept as interpolations.
#ifndef TRIALSHIM_CONFIG_RENDER_H_
#define TRIALSHIM_CONFIG_RENDER_H_

#include <string>
#include <string_view>

#include "trialshim/config/node.h"

namespace trialshim::config {

std::string RenderValue(const Node& value);

// Renders a string that must stay a string (same as RenderValue of
// Node::String(s)).
std::string RenderString(std::string_view s);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_RENDER_H_
