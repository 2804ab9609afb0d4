#include "trialshim/translate/options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/base/subprocess.h"

namespace trialshim::translate {
namespace {

constexpr unsigned kTranslating = kRun | kTranslate | kLaunch;

// Splits "--a,--b,-c" into its spellings.
std::vector<std::string_view> Spellings(std::string_view names) {
  std::vector<std::string_view> out;
  while (!names.empty()) {
    size_t comma = names.find(',');
    out.push_back(names.substr(0, comma));
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  return out;
}

using Id = OptionId;

// Every option of every command, in OptionId order: the parser, --help and
// the did-you-mean lists all read this one table, so a spelling cannot be
// accepted by one and unknown to another. A default named in a help text is
// the field it comes from, spelt as the job YAML spells it: the JSON names
// of google/cloud/aiplatform/v1/hyperparameter_tuning_job.proto
// (maxTrialCount, parallelTrialCount, studySpec), custom_job.proto
// (workerPoolSpecs, baseOutputDirectory) and hydra-optuna-sweeper 1.2.0's
// OptunaSweeperConf (hydra.sweeper.direction, study_name, sampler.seed).
constexpr Option kOptions[] = {
    {Id::kConfigPath, "--config-path", true,
     "Config directory of the trainer: check keys and group options "
     "against the composed config (default: off)",
     kTranslating},
    {Id::kConfigName, "--config-name", true,
     "Primary config name, with --config-path", kTranslating},
    {Id::kMap, "--map", true,
     "Rename a key: FROM=TO, e.g. lr=optimizer.lr (repeatable)", kTranslating},
    {Id::kMapFile, "--map-file", true, "YAML mapping of FROM: TO key renames",
     kTranslating},
    {Id::kKeep, "--keep", true,
     "A flag of the trainer's own to pass through untouched, e.g. "
     "--keep=--local_rank (repeatable)",
     kTranslating},
    {Id::kAddUnknown, "--add-unknown", false,
     "With --config-path: turn unknown keys into +key=value instead of "
     "refusing them",
     kTranslating},
    {Id::kConfigFromCommand, "--config-from-command", false,
     "Instead of --config-path: run COMMAND with its static arguments and "
     "--cfg all once before the trial and translate against the config the "
     "Hydra app prints (types of Python dataclass configs; opt-in, since a "
     "program that is not a Hydra app would start training)",
     kRun | kLaunch},
    {Id::kDryRun, "--dry-run", false,
     "Print the final argv as a JSON array and exit 0", kRun},
    {Id::kMetricRegex, "--metric-regex", true,
     "RE2 pattern matched against each output line of COMMAND; group 1 (or "
     "(?P<value>...)) is the metric value, group 2 (or (?P<step>...)) the "
     "global step, and without a step group the matches are steps 1, 2, "
     "...; each match is reported like cloudml-hypertune (default: off)",
     kRun},
    // cloudml-hypertune's default tag, _DEFAULT_HYPERPARAMETER_METRIC_TAG in
    // hypertune/hypertune.py: what a report without a tag is filed under.
    {Id::kMetricTag, "--metric-tag", true,
     "Metric name for --metric-regex reports (default: "
     "training/hptuning/metric)",
     kRun},
    {Id::kKillAfter, "--kill-after", true,
     "When trialshim supervises (as PID 1 or with --metric-regex): SIGKILL "
     "the trainer's process group this many seconds after forwarding "
     "SIGTERM/SIGINT/SIGHUP/SIGQUIT (default: 0, wait as long as it takes)",
     kRun},
    {Id::kExplain, "--explain", false,
     "Show each argument, what it became and why", kTranslate},
    {Id::kTranslateFormat, "--format", true,
     "Output format: text (one override per line) or json (one array, as "
     "Python's json.dumps; for values that hold a newline)",
     kTranslate},
    // torchrun's spellings too, so its command lines carry over: the
    // underscore ones are torch.distributed.run's argparse options
    // (torch/distributed/run.py), whose defaults the help texts below keep
    // (--master_addr 127.0.0.1; --master_port 29500 across nodes).
    {Id::kNprocPerNode, "--nproc-per-node,--nproc_per_node,--nproc", true,
     "Worker processes on this node", kLaunch},
    {Id::kNnodes, "--nnodes", true,
     "Nodes in the job (default: the replicas in CLUSTER_SPEC / TF_CONFIG, "
     "else 1)",
     kLaunch},
    {Id::kNodeRank, "--node-rank,--node_rank", true,
     "This node's rank (default: this replica's rank in CLUSTER_SPEC / "
     "TF_CONFIG, else 0)",
     kLaunch},
    {Id::kMasterAddr, "--master-addr,--master_addr", true,
     "Host of node 0 (default: the primary in CLUSTER_SPEC / TF_CONFIG, "
     "else 127.0.0.1)",
     kLaunch},
    {Id::kMasterPort, "--master-port,--master_port", true,
     "Rendezvous port (default: the primary's in CLUSTER_SPEC / TF_CONFIG, "
     "else a free port on one node, 29500 on several)",
     kLaunch},
    {Id::kRdzvId, "--rdzv-id,--rdzv_id", true,
     "TORCHELASTIC_RUN_ID for the workers", kLaunch},
    {Id::kHydra, "--hydra", false,
     "Translate the trial's --key=value arguments into Hydra overrides, as "
     "`trialshim -- COMMAND` does (implied by --config-path); without it "
     "they pass untouched, as with torchrun",
     kLaunch},
    {Id::kLaunchGrace, "--grace", true,
     "Seconds a rank has between SIGTERM and SIGKILL once another rank "
     "failed",
     kLaunch},
    {Id::kCheckConfigPath, "--config-path", true,
     "Config directory (default: the container args' --config-path)", kCheck},
    {Id::kCheckConfigName, "--config-name", true,
     "Primary config name (default: the container args' --config-name)",
     kCheck},
    {Id::kWerror, "--werror", false, "Exit 2 on warnings too", kCheck},
    {Id::kQuiet, "--quiet,-q", false, "Leave out notes", kCheck},
    {Id::kParallel, "--parallel", true,
     "Trials at once (default: parallelTrialCount)", kSweep},
    {Id::kMaxTrials, "--max-trials", true,
     "Trials in all (default: maxTrialCount)", kSweep},
    // study.proto's Algorithm: ALGORITHM_UNSPECIFIED is "the default
    // algorithm used by Vertex AI for hyperparameter tuning", which
    // docs/search.md explains we run as a Bayesian search of our own.
    {Id::kAlgorithm, "--algorithm", true,
     "grid, random or bayesian (default: studySpec.algorithm; "
     "ALGORITHM_UNSPECIFIED is bayesian)",
     kSweep},
    {Id::kSeed, "--seed", true,
     "Seed of the random and Bayesian searches (a Hydra sweep's default: "
     "hydra.sweeper.sampler.seed)",
     kSweep},
    {Id::kOut, "--out", true,
     "Sweep directory (default: sweeps/<job file name>, or for a Hydra "
     "sweep sweeps/<config name>)",
     kSweep},
    {Id::kResume, "--resume", false,
     "Continue the sweep in --out without rerunning finished trials", kSweep},
    {Id::kTimeout, "--timeout", true,
     "Per-trial limit in seconds (default: scheduling.timeout)", kSweep},
    {Id::kSweepGrace, "--grace", true,
     "Seconds between SIGTERM and SIGKILL when stopping a trial", kSweep},
    {Id::kNoCheck, "--no-check", false,
     "Run even if the config checks of `trialshim check` fail", kSweep},
    {Id::kVolume, "--volume,-v", true,
     "HOST:CONTAINER: read the spec's paths under the image's CONTAINER "
     "directory as HOST here, as `docker run -v` (repeatable)",
     kSweep | kCheck},
    {Id::kWorkdir, "--workdir", true,
     "The directory the spec's relative paths mean, as the image's WORKDIR "
     "(default: the current directory)",
     kSweep | kCheck},
    {Id::kPrivateWorkdir, "--private-workdir", true,
     "How a trial gets a working directory of its own: overlay (the working "
     "directory through a private overlay; what a trial writes lands in "
     "<out>/<id>/work/), links (<out>/<id>/work/ links each entry, so "
     "writes inside a linked directory are shared) or auto (overlay, else "
     "links with a warning)",
     kSweep},
    {Id::kComposeConfigPath, "--config-path", true,
     "Directory of the primary config and its groups", kCompose},
    {Id::kComposeConfigName, "--config-name", true,
     "Primary config name (without .yaml)", kCompose},
    {Id::kResolve, "--resolve", false, "Resolve interpolations", kCompose},
    {Id::kComposeFormat, "--format", true, "Output format", kCompose},
    {Id::kComposeCfg, "--cfg", true,
     "Which config to print, as Hydra's --cfg: job (the task's), hydra "
     "(Hydra's own node) or all",
     kCompose},
    {Id::kComposeJobName, "--job-name", true,
     "hydra.job.name (Hydra takes it from the app's file name)", kCompose},
    {Id::kEnvFormat, "--format", true, "Output format", kEnv},
    {Id::kSweepConfigPath, "--config-path", true,
     "Config directory of a Hydra sweep: the sweep COMMAND -m would run "
     "(instead of a job spec)",
     kJob | kSweep},
    {Id::kSweepConfigName, "--config-name", true,
     "Primary config name of the Hydra sweep", kJob | kSweep},
    {Id::kMetric, "--metric", true,
     "Metric the trials report, once per objective in the order of "
     "hydra.sweeper.direction (default: optimized_metric, else "
     "hypertune.monitor)",
     kJob | kSweep},
    // Without either, the plugin's own default applies: direction is
    // Direction.minimize in OptunaSweeperConf (hydra_optuna_sweeper/config.py).
    {Id::kDirection, "--direction", true,
     "minimize or maximize, once per objective (default: "
     "hydra.sweeper.direction)",
     kJob | kSweep},
    {Id::kImage, "--image", true,
     "Container image of the trials (containerSpec.imageUri)", kJob},
    {Id::kMachineType, "--machine-type", true,
     "machineSpec.machineType of the trials", kJob},
    // The default is AttachedAccelerator (vertex_rules.h): the GPUs Compute
    // Engine's GPU machine types come with, which `check` wants named.
    {Id::kAcceleratorType, "--accelerator-type", true,
     "machineSpec.acceleratorType: the trials' GPU, e.g. NVIDIA_TESLA_T4 on "
     "n1-standard-4 (default: the GPUs a2-, a3-, a4- and g2- machine types "
     "come with)",
     kJob},
    {Id::kAcceleratorCount, "--accelerator-count", true,
     "machineSpec.acceleratorCount (default: all the machine type's GPUs, "
     "else 1)",
     kJob},
    // Vertex's distributed-training page: the first worker pool is the
    // primary only, with replicaCount 1; workers go in the second.
    {Id::kReplicaCount, "--replica-count", true,
     "Replicas per trial: the primary (workerPoolSpecs[0], always 1) and "
     "N-1 workers (workerPoolSpecs[1])",
     kJob},
    // CustomJobSpec.base_output_directory (custom_job.proto): only when it
    // is set does a trial get <dir>/<trial_id>/model/ and the others.
    {Id::kOutputDir, "--output-dir", true,
     "baseOutputDirectory of the job (gs://BUCKET/PATH): each trial's "
     "AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR",
     kJob},
    // HyperparameterTuningJob.display_name is REQUIRED, hence a fallback.
    {Id::kDisplayName, "--display-name", true,
     "displayName (default: hydra.sweeper.study_name, else the config name)",
     kJob},
};

}  // namespace

const std::vector<Option>& Options() {
  static const std::vector<Option> options(std::begin(kOptions),
                                           std::end(kOptions));
  return options;
}

const Option& GetOption(OptionId id) {
  // The table is in OptionId order (options_test checks it).
  return Options()[static_cast<size_t>(id)];
}

const Option* FindOption(std::string_view spelling, Command command) {
  for (const Option& o : Options()) {
    if (!(o.commands & command)) continue;
    for (std::string_view s : Spellings(o.names)) {
      if (s == spelling) return &o;
    }
  }
  return nullptr;
}

std::vector<std::string> OptionSpellings(Command command) {
  std::vector<std::string> out;
  for (const Option& o : Options()) {
    if (!(o.commands & command)) continue;
    for (std::string_view s : Spellings(o.names)) out.emplace_back(s);
  }
  return out;
}

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> subcommands = {
      {"translate", kTranslate}, {"compose", kCompose}, {"check", kCheck},
      {"job", kJob},             {"sweep", kSweep},     {"env", kEnv},
      {"launch", kLaunch}};
  return subcommands;
}

namespace {

// Whether sh would find `word` as a program (a path, or a name on PATH).
bool IsProgram(const std::string& word) {
  const char* path = std::getenv("PATH");
  std::string found = FindProgram(word, path ? path : "/bin:/usr/bin");
  return !found.empty() && access(found.c_str(), X_OK) == 0;
}

bool IsNumber(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

// "unknown option '--dryrun' (did you mean '--dry-run'?)"; without a
// subcommand, where the user may have left one out, an option of another
// subcommand named with it. Within a subcommand only its own options are
// suggested: `trialshim job -m` is no misspelt `check -q`.
std::string UnknownOption(const std::string& flag, Command command,
                          const std::string& name) {
  // Hydra's multirun flag: job and sweep take the sweep's overrides as
  // they are, as after -m.
  if ((command & (kJob | kSweep)) && (flag == "-m" || flag == "--multirun")) {
    return "unknown option '" + flag + "' of `" + name +
           "`: leave it out; the overrides given are the sweep, as Hydra's "
           "overrides after -m";
  }
  std::vector<std::string> own = OptionSpellings(command);
  own.push_back("--help");
  if (command == kRun) own.push_back("--version");
  std::string hint = DidYouMean(flag, own);
  if (hint.empty() && command == kRun) {
    for (const Subcommand& sub : Subcommands()) {
      if (sub.command == command) continue;
      std::vector<std::string> close =
          ClosestMatches(flag, OptionSpellings(sub.command), 1);
      if (!close.empty()) {
        hint = " (did you mean '" + close[0] + "', an option of `trialshim " +
               std::string(sub.name) + "`?)";
        break;
      }
    }
  }
  std::string out = "unknown option '" + flag + "' of `" + name + "`" + hint;
  if (hint.empty() && (command & (kRun | kTranslate | kLaunch))) {
    out += "; trialshim's options go before --, the trainer's " +
           std::string(command == kTranslate ? "arguments" : "command") +
           " after it";
  }
  return out;
}

}  // namespace

std::string ExplainCommandLine(std::string_view program,
                               const std::vector<std::string>& args) {
  Command command = kRun;
  std::string name = "trialshim";
  size_t start = 0;
  std::vector<std::string> names;
  for (const Subcommand& sub : Subcommands()) {
    names.emplace_back(sub.name);
    if (!args.empty() && args[0] == sub.name) {
      command = sub.command;
      name += " " + args[0];
      start = 1;
    }
  }
  for (size_t i = start; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    // A negative number ("-1", "-1e-3") is a word, a value, not a misspelt
    // option.
    if (a.size() > 1 && a[0] == '-' && !IsNumber(a)) {
      std::string flag = a.substr(0, a.find('='));
      if (flag == "--help" || flag == "-h" ||
          (command == kRun && flag == "--version")) {
        continue;
      }
      const Option* o = FindOption(flag, command);
      if (o == nullptr) return UnknownOption(flag, command, name);
      if (o->takes_value && a.find('=') == std::string::npos) ++i;
      continue;
    }
    // Subcommands take words (a job file, overrides); the parser says
    // which are too many.
    if (command != kRun) continue;
    if (i == start) {
      std::string hint = DidYouMean(a, names);
      if (!hint.empty()) return "unknown command '" + a + "'" + hint;
    }
    std::string out = "'" + a + "' is not a trialshim command or option " +
                      "(commands: " + JoinStrings(names, ", ") + ")";
    if (!IsProgram(a)) return out;
    std::string fixed = ShellQuote(program);
    for (size_t j = 0; j < args.size(); ++j) {
      fixed += (j == i ? " -- " : " ") + ShellQuote(args[j]);
    }
    return out + "; to run a trainer, put its command after --: " + fixed;
  }
  return "";
}

}  // namespace trialshim::translate
