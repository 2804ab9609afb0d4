// The translator: Vertex-style trial arguments to Hydra overrides.
//
// A tuning service appends "--key=value" (or "--key value", or a bare
// "--flag") to the container command; Hydra apps need "key=value". Translate
// turns each such argument into one override whose value is rendered with
// the config engine's renderer, so Hydra receives exactly the value the user
// meant (commas, '=', spaces, quotes and non-ASCII are quoted or escaped).
// Tokens that do not start with "--" pass through unchanged and in place,
// as do Hydra's own flags and the caller's --keep flags. With a composed
// config, keys are resolved against it (exact, then '-'/'_' swapped), group
// names switch groups, Vertex's integral floats become ints for int keys,
// and unknown keys are refused with did-you-mean (or added with '+' when
// add_unknown is set). No I/O: the caller composes the config.
#ifndef TRIALSHIM_SHIM_TRANSLATE_H_
#define TRIALSHIM_SHIM_TRANSLATE_H_

#include <string>
#include <utility>
#include <vector>

#include "trialshim/config/compose.h"
#include "trialshim/config/status.h"

namespace trialshim::shim {

struct TranslateOptions {
  // --map FROM=TO: rename key FROM (as given after "--") to TO. Default: none.
  std::vector<std::pair<std::string, std::string>> key_map;
  // --keep FLAG: flags of the trainer's own, passed through untouched with
  // their value token if they have one ("--local_rank"). Default: none.
  std::vector<std::string> keep_flags;
  // Unknown keys become "+key=value" instead of an error (only with a
  // config). Default: false.
  bool add_unknown = false;
  // The composed config and its repository for config-aware resolution, or
  // null for purely syntactic translation. Not owned. Default: null.
  const config::ComposeResult* config = nullptr;
  const config::ConfigRepository* repository = nullptr;
};

// One output argument and why it is what it is.
struct TranslatedArg {
  std::vector<std::string> inputs;  // the argv tokens it came from
  std::string output;               // the argument handed to the program
  std::string explanation;          // for `trialshim translate --explain`
};

// Translates `args` (the program's arguments, without the program itself).
// InvalidArgument names the offending argument and what was expected.
StatusOr<std::vector<TranslatedArg>> Translate(
    const std::vector<std::string>& args, const TranslateOptions& options);

// Convenience: only the output arguments, in order.
StatusOr<std::vector<std::string>> TranslateToArgv(
    const std::vector<std::string>& args, const TranslateOptions& options);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_TRANSLATE_H_
