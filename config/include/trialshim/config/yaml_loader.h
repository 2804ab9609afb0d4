// Loading YAML files into Nodes, typed as OmegaConf types them.
//
// OmegaConf reads YAML with PyYAML's YAML 1.1 resolver plus a float regex:
// "1e-3" is a float, "yes"/"on"/"true" are bools, "0x10" is 16, "010" is 8,
// ".inf" is inf, "~" and "null" are null; quoted scalars always stay
// strings; timestamps stay strings. Every node carries its file:line:col.
//
// Plain block YAML (most configs) is read without yaml-cpp's scanner, which
// costs every trial's start dearly, into the very same Nodes; everything
// else goes through yaml-cpp (config/src/simple_yaml.h says which is which).
//
// The loader is bounded so that hostile input fails fast instead of eating
// memory: see LoadLimits. Errors are InvalidArgument naming file:line:col
// (NotFound for a missing file, IOError for an unreadable one).
#ifndef TRIALSHIM_CONFIG_YAML_LOADER_H_
#define TRIALSHIM_CONFIG_YAML_LOADER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::config {

struct LoadLimits {
  // Deepest nesting of lists and maps. Default: 128.
  int max_depth = 128;
  // Most nodes after alias expansion (stops "billion laughs"). Default: 1e6.
  size_t max_nodes = 1000000;
  // Largest file accepted, in bytes. Default: 64 MiB.
  size_t max_file_bytes = 64u << 20;
};

// Loads one YAML document from `path`. An empty file is an empty map; a file
// holding one string is read as OmegaConf.load reads it: as YAML once more,
// and a string that stays a string becomes a key ("foo" is {foo: null}). A
// file holding one number or bool is an error. The file is read by
// ReadConfigText (below): a FIFO or a device is refused, never waited on.
StatusOr<Node> LoadYamlFile(const std::string& path,
                            const LoadLimits& limits = LoadLimits());

// The text of config file `path`, read as every input is (base/file.h,
// ReadInputFile: regular files only, never blocking). NotFound "config file
// '<path>' not found"; IOError "can not read config file '<path>': it is a
// FIFO, not a regular file" (or the OS reason); InvalidArgument over
// max_file_bytes.
StatusOr<std::string> ReadConfigText(const std::string& path,
                                     const LoadLimits& limits = LoadLimits());

// Same, from text; `name` is used as the file name in marks and messages.
StatusOr<Node> LoadYamlString(std::string_view text, const std::string& name,
                              const LoadLimits& limits = LoadLimits());

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_YAML_LOADER_H_
