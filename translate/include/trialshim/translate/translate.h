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
// values the key's type would refuse (128.5 or "wide" for an int) are
// refused, and unknown keys are refused with did-you-mean (or added with
// '+' when add_unknown is set). No I/O: the caller composes the config.
//
// The rules, in order:
//  - "--k=v" splits at the first '='; in "--k v" the next token is the value
//    unless it starts with "--" ("-1", "-1e-3", "-x" are values); a bare
//    "--k" (last, or before another "--" token) means k=true. With a config,
//    a bool key followed by a non-bool token is a bare flag too, and the
//    token stays in place.
//  - Keys: --map (as given, then the dotted spelling), "__" -> ".", dots and
//    dashes kept; anything outside Hydra's key grammar is InvalidArgument.
//  - Values: text Hydra already reads as what it spells (numbers, bools,
//    null, lists, dicts, plain strings) is kept exactly as written ("5e-4");
//    anything else (sweeps like "a,b", '=', quotes, '#', padding spaces,
//    non-ASCII, "choice(..)") is a string, rendered with config::RenderString
//    so it reads back unchanged. Every rendering is parsed back and checked.
//  - The same key twice: only the last one is emitted, in its own place.
//  - Hydra's flags (config::HydraFlags(), by their long names) and
//    keep_flags pass through with their value token; so does every token
//    that does not start with "--".
#ifndef TRIALSHIM_TRANSLATE_TRANSLATE_H_
#define TRIALSHIM_TRANSLATE_TRANSLATE_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialshim/config/compose.h"
#include "trialshim/base/status.h"

// The ELF section every program built on app::Run carries: such a program
// translates Vertex's --key=value arguments itself, with its own config,
// so `trialshim check` asks for no trialshim in front of it, and trialshim
// without --config-path leaves those arguments to it (IsTrialshimApp).
#define TRIALSHIM_APP_SECTION ".trialshim_app"

namespace trialshim::translate {

// Whether `executable` is a 64-bit ELF file with a TRIALSHIM_APP_SECTION: a
// program built on app::Run. False for anything else, unreadable included.
// Reads the ELF header, the section headers and their names (a few
// kilobytes): about 4 microseconds, once per trial start (bench/README.md).
bool IsTrialshimApp(const std::string& executable);

struct TranslateOptions {
  // --map FROM=TO: rename key FROM (as given after "--") to TO. Default: none.
  std::vector<std::pair<std::string, std::string>> key_map;
  // --keep FLAG: flags of the trainer's own, passed through untouched with
  // their value token if they have one ("--local_rank"). Default: none.
  std::vector<std::string> keep_flags;
  // Unknown keys become "+key=value" instead of an error (only with a
  // config). Default: false.
  bool add_unknown = false;
  // How the caller's user adds what the config lacks, for the hint in a
  // refusal: kFlag, trialshim's --add-unknown; kOverride, the Hydra override
  // "+key=value" itself, where the command line takes one (an app); kGroups,
  // "+group=option" for a group but nothing for a key (an app whose schema
  // has every key its task may have). Default: kFlag.
  enum class AddUnknownHint { kFlag, kOverride, kGroups };
  AddUnknownHint add_unknown_hint = AddUnknownHint::kFlag;
  // The program is a trialshim app (IsTrialshimApp), which translates
  // Vertex's arguments itself, with its own config: each "--key=value",
  // "--key value" or bare "--key" stays one "--key[=value]" argument, with
  // only --map's renames (and "__" read as ".") applied; everything else is
  // as without it. Default: false.
  bool leave_to_app = false;
  // The composed config and its repository for config-aware resolution, or
  // null for purely syntactic translation. Not owned. Default: null.
  const config::ComposeResult* config = nullptr;
  const config::ConfigRepository* repository = nullptr;
  // Composes the config again with the group overrides found among the
  // arguments ("optimizer=sgd", "--optimizer=sgd", "+experiment=long"), so
  // keys that only the chosen options define resolve. Called at most once,
  // only when `config` is set and there are such overrides. Null: keys
  // resolve against `config` as given. Default: null.
  std::function<StatusOr<config::ComposeResult>(
      const std::vector<std::string>& group_overrides)>
      recompose;
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

// The arguments that are not Vertex's "--key=value" ones (Hydra's overrides
// and flags with their values, --keep flags, everything not starting with
// "--"), in order: what the program gets without the trial's values.
// InvalidArgument as Translate for an argument it can not read.
StatusOr<std::vector<std::string>> StaticArgs(
    const std::vector<std::string>& args, const TranslateOptions& options);

// Parses one --map argument "FROM=TO" (split at the first '='; both sides
// non-empty). InvalidArgument otherwise.
StatusOr<std::pair<std::string, std::string>> ParseKeyMapping(
    std::string_view text);

// Reads a --map-file: a YAML mapping of FROM: TO strings, in file order.
// NotFound / InvalidArgument (with file:line:col) on a bad file.
StatusOr<std::vector<std::pair<std::string, std::string>>> LoadKeyMapFile(
    const std::string& path);

}  // namespace trialshim::translate

#endif  // TRIALSHIM_TRANSLATE_TRANSLATE_H_
