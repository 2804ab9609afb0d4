// trialshim's own options: one table, read by the command line and by check.
//
// Each option has an id, its spellings, whether it takes a value, its help
// and the subcommands that accept it. The binary (cli/) builds its CLI11
// options from this table; `trialshim check` walks the same table to read
// the trialshim part of a job's container command, so an option the binary
// accepts is never unknown to check, and a misspelt one fails in check as it
// would on the trial. Positional arguments (a job file, the COMMAND after
// "--") and CLI11's checks on values (ranges, choices) stay in cli/.
//
// No CLI11 here: this library is linked by the tuning tools too.
#ifndef TRIALSHIM_TRANSLATE_OPTIONS_H_
#define TRIALSHIM_TRANSLATE_OPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

namespace trialshim::translate {

// A set of trialshim's commands; kRun is `trialshim [OPTIONS] -- COMMAND`.
enum Command : unsigned {
  kRun = 1u << 0,
  kTranslate = 1u << 1,
  kLaunch = 1u << 2,
  kCheck = 1u << 3,
  kSweep = 1u << 4,
  kCompose = 1u << 5,
  kEnv = 1u << 6,
  kJob = 1u << 7,
};

enum class OptionId {
  // How a trial's arguments are translated (run, translate, launch).
  kConfigPath,
  kConfigName,
  kMap,
  kMapFile,
  kKeep,
  kAddUnknown,
  kConfigFromCommand,
  // Run.
  kDryRun,
  kMetricRegex,
  kMetricTag,
  kKillAfter,
  // Translate.
  kExplain,
  kTranslateFormat,
  // Launch.
  kNprocPerNode,
  kNnodes,
  kNodeRank,
  kMasterAddr,
  kMasterPort,
  kRdzvId,
  kHydra,
  kLaunchGrace,
  // Check (and the config it checks against).
  kCheckConfigPath,
  kCheckConfigName,
  kWerror,
  kQuiet,
  // Sweep.
  kParallel,
  kMaxTrials,
  kAlgorithm,
  kSeed,
  kOut,
  kResume,
  kTimeout,
  kSweepGrace,
  kNoCheck,
  // Sweep and check: where the spec's paths are here (tuning/container.h).
  kVolume,
  kWorkdir,
  kPrivateWorkdir,
  // Compose and env.
  kComposeConfigPath,
  kComposeConfigName,
  kResolve,
  kComposeFormat,
  kComposeCfg,
  kComposeJobName,
  kEnvFormat,
  // A Hydra sweep: written as a job (job) or run here (sweep).
  kSweepConfigPath,
  kSweepConfigName,
  kMetric,
  kDirection,
  // Job: the trials' machines and outputs.
  kImage,
  kMachineType,
  kAcceleratorType,
  kAcceleratorCount,
  kReplicaCount,
  kOutputDir,
  kDisplayName,
};

struct Option {
  OptionId id;
  // Comma-separated, long names first, as CLI11 takes them:
  // "--nproc-per-node,--nproc_per_node,--nproc" or "--quiet,-q".
  std::string_view names;
  bool takes_value;  // false: a flag (present or not)
  std::string_view help;
  unsigned commands;  // a set of Command
};

// Every option of every command, in OptionId order.
const std::vector<Option>& Options();

// The option `id`.
const Option& GetOption(OptionId id);

// The option of `command` spelt `spelling` ("--map", "-q"), or nullptr.
const Option* FindOption(std::string_view spelling, Command command);

// Every spelling `command` accepts, for did-you-mean.
std::vector<std::string> OptionSpellings(Command command);

// trialshim's subcommands: the name on the command line, the command.
struct Subcommand {
  std::string_view name;
  Command command;
};
const std::vector<Subcommand>& Subcommands();

// What is wrong with a trialshim command line the parser refused, said for
// a person, or "" when this finds nothing (the parser's message stands).
// `args` is argv without the program, `program` how the user called it.
// Before the first "--": an unknown subcommand or option gets did-you-mean
// (an option of another subcommand is named as such), and a word that is
// neither, in `trialshim [OPTIONS] -- COMMAND`, is a trainer's command that
// belongs after "--" when it names a program (a path, or on PATH): the
// message gives the whole command line that puts it there.
std::string ExplainCommandLine(std::string_view program,
                               const std::vector<std::string>& args);

}  // namespace trialshim::translate

#endif  // TRIALSHIM_TRANSLATE_OPTIONS_H_
