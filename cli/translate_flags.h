// The flags `trialshim -- COMMAND` and `trialshim translate` share, and how
// they become TranslateOptions (reading the --map-file and composing the
// config when --config-path is given).
#ifndef TRIALSHIM_CLI_TRANSLATE_FLAGS_H_
#define TRIALSHIM_CLI_TRANSLATE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/config/compose.h"
#include "trialshim/translate/translate.h"

namespace trialshim::cli {

struct TranslateFlags {
  std::string config_path;
  std::string config_name;
  std::vector<std::string> maps;
  std::string map_file;
  std::vector<std::string> keep;
  bool add_unknown = false;
  bool config_from_command = false;  // run and launch only
};

// Registers the flags on `cmd`; --config-from-command only with `command`
// (run and launch, which have a COMMAND to ask).
void AddTranslateFlags(CLI::App* cmd, TranslateFlags* flags,
                       bool command = false);

// What TranslateOptions points at; must outlive the options.
struct TranslateContext {
  TranslateContext() = default;
  TranslateContext(const TranslateContext&) = delete;  // options point inside
  TranslateContext& operator=(const TranslateContext&) = delete;
  std::optional<config::ComposeResult> composed;
  translate::TranslateOptions options;
};

// Fills `ctx` from the flags: the key map (--map after --map-file, so the
// command line wins) and, with --config-path, the composed config.
Status BuildTranslateContext(const TranslateFlags& flags,
                             TranslateContext* ctx);

// `command` (non-empty) with its arguments translated as the flags say; the
// program itself, command[0], is kept as it is. A trialshim app without
// --config-path gets Vertex's arguments as they are, renamed by --map
// (TranslateOptions::leave_to_app): it translates them with its config.
// Called once a process: what it composes is kept until exit.
StatusOr<std::vector<std::string>> TranslateCommand(
    const TranslateFlags& flags, const std::vector<std::string>& command);

// `args` as Python's json.dumps(sys.argv) prints them in the trainer: ", "
// between items, ensure_ascii, and bytes that are not UTF-8 as the \udcXX
// surrogates Python's argv decoding makes of them, so what is printed is
// exactly what is passed (no U+FFFD).
std::string ArgvJson(const std::vector<std::string>& args);

}  // namespace trialshim::cli

#endif  // TRIALSHIM_CLI_TRANSLATE_FLAGS_H_
