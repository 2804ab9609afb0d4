// The plain block-style YAML that Hydra's own configs are written in
// (hydra_builtin.cc), parsed without yaml-cpp (private to the config library).
//
// Every composition merges about ten of those configs, and the shim composes
// at every trial's start: through yaml-cpp they cost most of the shim's
// start-up with --config-path (its scanner spends about a thousand
// instructions a byte). This parser reads the subset those texts use and
// gives the very Node yaml-cpp's loader gives (types, marks, key marks):
// block maps with plain keys, block lists (a `- key: value` item is a map),
// plain scalars typed as OmegaConf types them, single-quoted scalars, `|`
// literal blocks, one-line flow lists of plain scalars, `{}`, and comment
// lines. Anything else, or anything it is unsure of, gives nullopt: the
// caller then loads the text with LoadYamlString, so a builtin written in
// other YAML is only slower (tests/config/simple_yaml_test.cc requires each
// builtin to take this path and to give LoadYamlString's Node).
#ifndef TRIALSHIM_CONFIG_SRC_SIMPLE_YAML_H_
#define TRIALSHIM_CONFIG_SRC_SIMPLE_YAML_H_

#include <optional>
#include <string>
#include <string_view>

#include "trialshim/config/node.h"

namespace trialshim::config::internal {

// `text` as LoadYamlString(text, name) loads it, or nullopt (see above).
std::optional<Node> ParseSimpleYaml(std::string_view text,
                                    const std::string& name);

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_SIMPLE_YAML_H_
