// The plain block YAML most configs are written in, parsed without yaml-cpp
// (private to the config library; LoadYamlString takes this path first).
//
// Every composition merges Hydra's own configs (about ten) and the app's,
// and the shim composes at every trial's start: through yaml-cpp they cost
// most of the shim's start-up with --config-path (its scanner spends about a
// thousand instructions a byte). This parser reads a subset and gives the
// very Node yaml-cpp's parse gives (types, marks, key marks): printable
// ASCII only; block maps with plain keys, block lists (a `- key: value` item
// is a map), plain scalars typed as OmegaConf types them, single-quoted
// scalars, `|` literal blocks, one-line flow lists of plain scalars, `{}`,
// and comment lines. Anything else, anything it is unsure of, and anything
// over LoadLimits gives nullopt: the caller then parses with yaml-cpp, which
// reads it or says what is wrong. tests/config/simple_yaml_test.cc compares
// the two on Hydra's own configs (which must all take this path), every
// YAML file of the repository and the fuzz corpora.
#ifndef TRIALSHIM_CONFIG_SRC_SIMPLE_YAML_H_
#define TRIALSHIM_CONFIG_SRC_SIMPLE_YAML_H_

#include <optional>
#include <string>
#include <string_view>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config::internal {

// `text` as LoadYamlWithYamlCpp(text, name, limits) loads it, or nullopt
// (see above).
std::optional<Node> ParseSimpleYaml(std::string_view text,
                                    const std::string& name,
                                    const LoadLimits& limits = LoadLimits());

// LoadYamlString without this path: yaml-cpp's parse (yaml_loader.cc).
StatusOr<Node> LoadYamlWithYamlCpp(std::string_view text,
                                   const std::string& name,
                                   const LoadLimits& limits = LoadLimits());

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_SIMPLE_YAML_H_
