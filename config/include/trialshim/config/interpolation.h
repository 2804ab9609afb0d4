// OmegaConf-style interpolation: "${a.b}", "${.sibling}", "${..up}",
// "${a[0]}", string interpolation ("x_${a}"), nested "${${k}}", escaped
// "\${..}", and the resolvers oc.env, oc.decode, oc.select, oc.create
// (plus oc.dict.keys and oc.dict.values).
//
// A whole-value interpolation keeps its target's type; string interpolation
// gives a string. Missing keys, "???" values, unknown resolvers and cycles
// are InvalidArgument errors naming the full key and the chain of
// interpolations that led there.
#ifndef TRIALSHIM_CONFIG_INTERPOLATION_H_
#define TRIALSHIM_CONFIG_INTERPOLATION_H_

#include <string_view>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::config {

// Returns a copy of `root` with every interpolation resolved and escapes
// ("\${") unescaped. "???" values are an error (as OmegaConf.to_container
// with throw_on_missing, which `--cfg job --resolve` uses).
StatusOr<Node> ResolveAll(const Node& root);

// Resolves the value at dotted `path` (with whatever it refers to).
// NotFound if the path does not exist.
StatusOr<Node> ResolvePath(const Node& root, std::string_view path);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_INTERPOLATION_H_
