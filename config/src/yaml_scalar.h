// How PyYAML (and OmegaConf on top of it) types and writes plain scalars.
//
// Private to trialshim_config: the YAML loader uses it to type what it reads
// and the emitter to decide which strings need quotes. The rules are PyYAML
// 6.0's YAML 1.1 implicit resolvers (resolver.py) and constructors
// (constructor.py), plus the float regex OmegaConf's loader adds. (Python's
// own int()/float(), which the constructors and OmegaConf's dumper call, are
// base/python_number.h.)
#ifndef TRIALSHIM_CONFIG_SRC_YAML_SCALAR_H_
#define TRIALSHIM_CONFIG_SRC_YAML_SCALAR_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace trialshim::config::yaml_internal {

// The tag a plain scalar resolves to.
enum class PlainKind {
  kNull,
  kBool,
  kInt,
  kFloat,
  kTimestamp,
  kMerge,  // "<<"
  kValue,  // "="
  kStr,
};

// PyYAML's resolution of a plain scalar. With `omegaconf_loader` OmegaConf's
// float regex is added (after PyYAML's own) and timestamps are dropped, as
// OmegaConf.load does; without it, this is the resolver yaml.Dumper uses to
// decide whether a string may be written plain.
PlainKind ResolvePlain(std::string_view s, bool omegaconf_loader);

// PyYAML's constructors. Each returns false (and sets *error) where Python
// would raise: a bad digit under an explicit tag, an int beyond 64 bits.
bool ConstructYamlBool(std::string_view s, bool* out, std::string* error);
bool ConstructYamlInt(std::string_view s, int64_t* out, std::string* error);
bool ConstructYamlFloat(std::string_view s, double* out, std::string* error);

}  // namespace trialshim::config::yaml_internal

#endif  // TRIALSHIM_CONFIG_SRC_YAML_SCALAR_H_
