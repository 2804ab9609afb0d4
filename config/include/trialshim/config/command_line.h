// Hydra's command line: the flags a Hydra app accepts besides its overrides.
//
// HydraFlags() is the table of Hydra 1.3.2's flags, with their spellings,
// what value each takes and its help, as hydra/_internal/utils.py
// get_args_parser() declares them. ParseHydraCommandLine reads an argv the
// way that argparse parser does under Python 3.11 (Debian 12), including
// argparse's quirks: unique prefixes of long flags are accepted ("--cfg" from
// "--cf"), a short flag may carry its value ("-cjob") or be bundled with
// other short switches ("-mr"), "--" ends the flags, and the overrides are
// the first run of positional arguments.
//
// Hydra 1.3.2 calls parse_args, which refuses what argparse could not place
// ("unrecognized arguments: ..."); later Hydra versions append it to the
// overrides. The parser returns it apart, in `unrecognized`, so each caller
// decides: a plain Hydra app refuses it, the digits example hands
// Vertex-style --key=value arguments found there to the shim's translator.
//
// Errors are InvalidArgument with argparse's own wording (without the
// usage line and the "prog: error: " prefix).
#ifndef TRIALSHIM_CONFIG_COMMAND_LINE_H_
#define TRIALSHIM_CONFIG_COMMAND_LINE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::config {

enum class HydraFlagId {
  kHelp,
  kHydraHelp,
  kVersion,
  kCfg,
  kResolve,
  kPackage,
  kRun,
  kMultirun,
  kShellCompletion,
  kConfigPath,
  kConfigName,
  kConfigDir,
  kExperimentalRerun,
  kInfo,
};

// One of Hydra's flags, in get_args_parser()'s order.
struct HydraFlag {
  HydraFlagId id;
  std::string_view long_name;   // "--config-path"
  std::string_view short_name;  // "-cp", or empty
  enum Arity {
    kSwitch,    // takes no value (store_true, version)
    kValue,     // takes exactly one value
    kOptional,  // takes one value if the next argument is not a flag (--info)
  } arity;
  std::vector<std::string> choices;  // empty: any value
  std::string_view help;  // Hydra's, for an app's own --help
};

// All of Hydra's flags.
const std::vector<HydraFlag>& HydraFlags();

// The flag `name` names exactly ("--cfg", "-c"), or nullptr.
const HydraFlag* FindHydraFlag(std::string_view name);

// What an argv says, as Hydra reads it. Defaults are argparse's: a flag not
// given leaves its field unset (false / nullopt).
struct HydraCommandLine {
  bool help = false;
  bool hydra_help = false;
  // --version stops the parser where it stands (argparse prints the version
  // and exits): later arguments are not read.
  bool version = false;
  std::optional<std::string> cfg;  // job, hydra or all
  bool resolve = false;
  std::optional<std::string> package;
  bool run = false;
  bool multirun = false;
  bool shell_completion = false;
  std::optional<std::string> config_path;
  std::optional<std::string> config_name;
  std::optional<std::string> config_dir;
  std::optional<std::string> experimental_rerun;
  std::optional<std::string> info;  // a bare --info means "all"
  // The overrides: argparse's positional `overrides`, in order.
  std::vector<std::string> overrides;
  // What argparse could not place (its "extras"), in order: unknown flags
  // such as "--lr=0.1", and positional arguments after the first run of them
  // ("a=1 --multirun b=2" leaves "b=2" here).
  std::vector<std::string> unrecognized;
};

// Parses `args` (without the program name). InvalidArgument with
// argparse's message when argparse would exit with status 2, plus a
// did-you-mean for an invalid choice. `more_cfg`: values of --cfg the
// caller takes besides Hydra's (an app's "schema"), accepted and listed
// among the choices. Default: none.
StatusOr<HydraCommandLine> ParseHydraCommandLine(
    const std::vector<std::string>& args,
    const std::vector<std::string>& more_cfg = {});

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_COMMAND_LINE_H_
