// The container command of a job spec, read as trialshim would run it
// (check.h lists the rules).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "check_internal.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/base/subprocess.h"
#include "trialshim/config/command_line.h"
#include "trialshim/translate/options.h"
#include "trialshim/translate/translate.h"

namespace trialshim::tuning::internal {
namespace {

using translate::LoadKeyMapFile;
using translate::ParseKeyMapping;
namespace fs = std::filesystem;

class ContainerChecker : public CheckerBase {
 public:
  using CheckerBase::CheckerBase;

  std::optional<Launch> Run() {
    if (job_.worker_pools.empty()) return std::nullopt;  // the parser said why
    if (job_.worker_pools.size() > 1) {
      Note(job_.worker_pools[1].mark,
           "`trialshim sweep` runs only workerPoolSpecs[0] (the primary)");
    }
    const WorkerPoolSpec& pool = job_.worker_pools[0];
    if (!pool.has_container) {
      if (pool.has_python_package) {
        Warning(pool.mark,
                "pythonPackageSpec: `trialshim sweep` runs only "
                "containerSpec");
      } else {
        Error(pool.mark, "workerPoolSpecs[0] has no containerSpec");
      }
      return std::nullopt;
    }
    const ContainerSpec& c = pool.container;
    // ContainerSpec.command "overrides the entrypoint instruction in
    // Dockerfile when provided" (custom_job.proto); without it the image's
    // ENTRYPOINT runs, with args in place of its CMD, as docker run does.
    if (c.command.empty()) {
      Warning(c.mark,
              "containerSpec has no command: the image's ENTRYPOINT runs, "
              "which `trialshim sweep` can not know");
      return std::nullopt;
    }
    CheckArgumentSizes(c);
    Launch launch = Split(c);
    if (!launch.through_trialshim) CheckNativeCommand(c, launch);
    return launch;
  }

 private:
  // The container's command and args as one argv, with a mark per token:
  // the order the container starts them in, before Vertex appends the
  // trial's "--id=value" (docs/vertex-values.md).
  struct Argv {
    std::vector<std::string> tokens;
    std::vector<Mark> marks;
    Mark fallback;
    const Mark& at(size_t i) const {
      return i < marks.size() && marks[i].known() ? marks[i] : fallback;
    }
  };

  static Argv JoinArgv(const ContainerSpec& c) {
    Argv argv;
    argv.tokens = c.command;
    argv.tokens.insert(argv.tokens.end(), c.args.begin(), c.args.end());
    if (c.command_marks.size() == c.command.size() &&
        c.args_marks.size() == c.args.size()) {
      argv.marks = c.command_marks;
      argv.marks.insert(argv.marks.end(), c.args_marks.begin(),
                        c.args_marks.end());
    }
    argv.fallback = c.command_mark;
    return argv;
  }

  // Reads trialshim's options (`trialshim [launch] OPTIONS -- ...`) with
  // the binary's own option table; returns the index of the "--", or
  // argv.size() when there is none.
  size_t ReadShimOptions(const Argv& argv, Launch* l) {
    size_t i = 1;
    translate::Command command = translate::kRun;
    if (argv.tokens.size() > 1 && argv.tokens[1] == "launch") {
      command = translate::kLaunch;
      i = 2;
    }
    for (; i < argv.tokens.size() && argv.tokens[i] != "--"; ++i) {
      const std::string& tok = argv.tokens[i];
      size_t eq = StartsWith(tok, "--") ? tok.find('=') : std::string::npos;
      std::string name = tok.substr(0, eq);
      const translate::Option* opt = translate::FindOption(name, command);
      if (opt == nullptr) {
        Error(argv.at(i),
              (tok.empty() || tok[0] != '-'
                   ? "unexpected argument '" + tok + "' before '--'"
                   : "unknown trialshim option '" + name + "'" +
                         DidYouMean(name, translate::OptionSpellings(command))) +
                  ": the trial would exit 2 before the trainer starts");
        continue;
      }
      std::string value;
      if (eq != std::string::npos) {
        value = tok.substr(eq + 1);
      } else if (opt->takes_value) {
        if (i + 1 >= argv.tokens.size() || argv.tokens[i + 1] == "--") {
          Error(argv.at(i), "trialshim option " + name + " needs a value");
          continue;
        }
        value = argv.tokens[++i];
      }
      UseShimOption(opt->id, value, argv.at(i), l);
    }
    if (i == argv.tokens.size()) {
      Error(argv.at(0),
            "trialshim needs '--' before the trainer's command (command: "
            "[trialshim, OPTIONS..., --, PROGRAM, ARG...])");
    }
    return i;
  }

  void UseShimOption(translate::OptionId id, const std::string& value,
                     const Mark& mark, Launch* l) {
    switch (id) {
      case translate::OptionId::kConfigPath:
        l->config_path = value;
        break;
      case translate::OptionId::kConfigName:
        l->config_name = value;
        break;
      case translate::OptionId::kMapFile:
        l->map_file = value;
        break;
      case translate::OptionId::kKeep:
        l->translate.keep_flags.push_back(value);
        break;
      case translate::OptionId::kMetricTag:
        l->metric_tag = value;
        break;
      case translate::OptionId::kMetricRegex:
        l->scrapes = true;
        break;
      case translate::OptionId::kAddUnknown:
        l->translate.add_unknown = true;
        break;
      case translate::OptionId::kMap: {
        StatusOr<std::pair<std::string, std::string>> m =
            ParseKeyMapping(value);
        if (m.ok()) {
          l->translate.key_map.push_back(*m);
        } else {
          Error(mark, "--map: " + m.status().message());
        }
        break;
      }
      default:
        break;  // no bearing on the checks
    }
  }

  // --map-file's mappings go before --map's, as in the binary.
  void LoadMapFile(const ContainerSpec& c, Launch* l) {
    if (l->map_file.empty()) return;
    std::string found = FindPath(l->map_file, /*dir=*/false);
    auto mapping = LoadKeyMapFile(found.empty() ? l->map_file : found);
    if (mapping.ok()) {
      l->translate.key_map.insert(l->translate.key_map.begin(),
                                  mapping->begin(), mapping->end());
    } else {
      Warning(c.command_mark, "--map-file: " + mapping.status().message());
    }
  }

  // Where the app's own arguments start: after the program, or for a
  // Python interpreter after its options and the script (or -m MODULE, -c
  // COMMAND), as python(1)'s synopsis orders them: "python [options] [-c
  // command | script | -] [arguments]". -W and -X take their value from the
  // next word unless it is attached (-Wignore), as do -m and -c
  // (-mpkg.train), and --check-hash-based-pycs always.
  static size_t AppArgsStart(const Argv& argv, size_t program) {
    size_t i = program + 1;
    if (!StartsWith(fs::path(argv.tokens[program]).filename().string(),
                    "python")) {
      return i;
    }
    for (; i < argv.tokens.size() && StartsWith(argv.tokens[i], "-"); ++i) {
      const std::string& t = argv.tokens[i];
      if (t == "-") break;  // the script from standard input
      if (t == "-m" || t == "-c") return i + 2;
      if (t.size() > 2 && t[1] != '-' && (t[1] == 'm' || t[1] == 'c')) {
        return i + 1;
      }
      if (t == "-W" || t == "-X" || t == "--check-hash-based-pycs") ++i;
    }
    return i + 1;
  }

  // The app's arguments, read as Hydra 1.3.2 reads them (get_args_parser
  // in hydra/_internal/utils.py, ported in config/command_line.h); only
  // "key=value" overrides count, and the app's own flags name its config.
  void ReadTrainerArgs(const Argv& argv, size_t program, Launch* l) {
    size_t start = std::min(AppArgsStart(argv, program), argv.tokens.size());
    std::vector<std::string> args(argv.tokens.begin() + start,
                                  argv.tokens.end());
    StatusOr<config::HydraCommandLine> parsed =
        config::ParseHydraCommandLine(args);
    if (!parsed.ok()) {
      if (l->through_trialshim) {
        Error(argv.at(program),
              "the trainer's arguments, read as Hydra "
              "reads them: " +
                  parsed.status().message());
      }
      return;
    }
    if (l->through_trialshim) CheckTrialArgsAppend(argv, program, args);
    l->trainer_names_config =
        parsed->config_path || parsed->config_name || parsed->config_dir;
    l->trainer_multirun = parsed->multirun;
    if (l->config_path.empty() && parsed->config_path) {
      l->config_path = *parsed->config_path;
    }
    if (l->config_name.empty() && parsed->config_name) {
      l->config_name = *parsed->config_name;
    }
    for (const std::string& a : parsed->overrides) {
      if (!a.empty() && a[0] != '-' && a.find('=') != std::string::npos) {
        l->overrides.push_back(a);
      }
    }
  }

  // Vertex appends the trial's arguments, which trialshim turns into
  // overrides; Hydra 1.3.2 takes overrides only up to its first flag when
  // some come before it ("a=1 --config-name x" + "lr=0.1" is refused).
  // That is argparse's: the nargs="*" positional `overrides` of
  // get_args_parser is consumed once, so a later positional is one of
  // parse_args's "unrecognized arguments". A stand-in override appended
  // shows whether the real ones would be.
  void CheckTrialArgsAppend(const Argv& argv, size_t program,
                            std::vector<std::string> args) {
    const std::string stand_in = "trial.value=1";
    args.push_back(stand_in);
    StatusOr<config::HydraCommandLine> parsed =
        config::ParseHydraCommandLine(args);
    if (parsed.ok() && !parsed->unrecognized.empty() &&
        parsed->unrecognized.back() == stand_in) {
      Error(argv.at(program),
            "Hydra 1.3 reads overrides only up to its first flag, so it "
            "would refuse the trial's arguments that Vertex appends "
            "(\"unrecognized arguments\"): put Hydra's flags before the "
            "overrides in the container args");
    }
  }

  Launch Split(const ContainerSpec& c) {
    Launch l;
    Argv argv = JoinArgv(c);
    l.config_mark = c.args_mark.known() ? c.args_mark : c.command_mark;
    if (!argv.tokens.empty() && Container::IsTrialshim(argv.tokens[0])) {
      l.through_trialshim = true;
      l.program = ReadShimOptions(argv, &l) + 1;
      l.shim_has_config = !l.config_path.empty() && !l.config_name.empty();
      LoadMapFile(c, &l);
    }
    if (l.program < argv.tokens.size()) {
      l.program_name = argv.tokens[l.program];
      l.program_mark = argv.at(l.program);
      std::string base = fs::path(l.program_name).filename().string();
      l.runs_python = StartsWith(base, "python") ||
                      fs::path(l.program_name).extension() == ".py";
      ReadTrainerArgs(argv, l.program, &l);
      CheckRunsHere(c, argv, &l);
    }
    return l;
  }

  // What a trial runs must be here for a local run (Missing): the command,
  // the trainer trialshim starts, and a Python trainer's script. The PATH
  // searched is the one the trial would have: containerSpec.env's when it
  // sets one (with --volume's paths mapped), else ours.
  void CheckRunsHere(const ContainerSpec& c, const Argv& argv, Launch* l) {
    std::string path_var = getenv("PATH") ? getenv("PATH") : "";
    for (const auto& [k, v] : c.env) {
      if (k == "PATH") path_var = container_.MapToken(v);
    }
    auto resolve = [&](size_t i) -> std::string {
      StatusOr<std::string> found = container_.ResolveProgram(
          container_.MapToken(argv.tokens[i]), path_var, near_);
      if (found.ok()) return *found;
      Missing(argv.at(i), found.status().message());
      return "";
    };
    std::string first = resolve(0);
    if (!l->through_trialshim) {
      l->program_file = first;
    } else if (!first.empty()) {
      l->program_file = resolve(l->program);
    }
    size_t script = AppArgsStart(argv, l->program) - 1;
    if (script > l->program && script < argv.tokens.size() &&
        !StartsWith(argv.tokens[script - 1], "-")) {
      const std::string& file = argv.tokens[script];
      if (FindPath(file, /*dir=*/false).empty()) {
        Missing(argv.at(script),
                "the script '" + file + "' does not exist" + Fix(file));
      }
    }
  }

  // What Linux's execve() refuses with E2BIG (base/subprocess.h): one
  // argument or env entry of MAX_ARG_STRLEN or more, or everything together
  // (command, args, env and the longest "--id=value" of each parameter) over
  // the space a default 8 MiB stack leaves. Every trial would fail with
  // exit 126 "Argument list too long". execve(2), "Limits on size of
  // arguments and environment": 32 pages per string (MAX_ARG_STRLEN), and
  // 1/4 of RLIMIT_STACK for all of them; 8 MiB is the kernel's default
  // stack limit (_STK_LIM).
  void CheckArgumentSizes(const ContainerSpec& c) {
    const std::string consequence =
        ", so every trial would fail with exit 126 \"Argument list too "
        "long\"; pass large values in a file";
    Argv argv = JoinArgv(c);
    for (size_t i = 0; i < argv.tokens.size(); ++i) {
      if (argv.tokens[i].size() < kMaxArgStrlen) continue;
      std::string which =
          i < c.command.size()
              ? "command[" + std::to_string(i) + "]"
              : "args[" + std::to_string(i - c.command.size()) + "]";
      Error(argv.at(i), which + " is " + std::to_string(argv.tokens[i].size()) +
                            " bytes; Linux's execve() takes at most " +
                            std::to_string(kMaxArgStrlen - 1) +
                            " in one argument (MAX_ARG_STRLEN)" + consequence);
      return;
    }
    std::vector<std::string> env;
    for (const auto& [name, value] : c.env) env.push_back(name + "=" + value);
    std::function<void(const ParameterSpec&)> longest =
        [&](const ParameterSpec& p) {
          size_t value = 24;  // a number as Vertex writes it
          for (const std::string& v : p.categorical_values) {
            value = std::max(value, v.size());
          }
          argv.tokens.push_back("--" + p.id + "=" + std::string(value, 'x'));
          for (const ConditionalParameterSpec& k : p.conditionals) {
            longest(k.parameter);
          }
        };
    for (const ParameterSpec& p : job_.parameters) longest(p);
    Status fits = CheckExecLimits(argv.tokens, env, c.command[0],
                                  ExecArgSpace(8 << 20));
    if (!fits.ok()) {
      Error(c.mark, "the container's command, args and env with the longest "
                    "parameter values: " +
                        fits.message() + consequence);
    }
  }

  // A command without trialshim gets Vertex's "--id=value" as it is: right
  // for a trialshim app, which translates them itself; a Hydra app refuses
  // them. The advice is a command that runs: with the config when one is
  // known, so that trialshim casts Vertex's 64.0 for int keys too.
  void CheckNativeCommand(const ContainerSpec& c, const Launch& launch) {
    const Mark& mark =
        c.command_marks.empty() ? c.command_mark : c.command_marks[0];
    if (!launch.program_file.empty() &&
        translate::IsTrialshimApp(launch.program_file)) {
      Note(mark, "'" + c.command[0] +
                     "' is a trialshim app: it translates Vertex's "
                     "\"--id=value\" arguments itself");
      return;
    }
    std::string path = options_.config_path.empty() ? launch.config_path
                                                    : options_.config_path;
    std::string name = options_.config_name.empty() ? launch.config_name
                                                    : options_.config_name;
    std::string shim = "trialshim, ";
    if (!path.empty() && !name.empty()) {
      shim += "--config-path, " + path + ", --config-name, " + name + ", ";
    }
    Warning(mark,
            "the command does not go through trialshim: the trainer gets "
            "Vertex's \"--id=value\" arguments as they are, which a Hydra "
            "app refuses (command: [" +
                shim + "--, " + JoinStrings(c.command, ", ") + "])");
  }
};

}  // namespace

std::optional<Launch> CheckContainer(const JobSpec& job,
                                     const CheckOptions& options,
                                     std::vector<Diagnostic>* diagnostics) {
  return ContainerChecker(job, options, diagnostics).Run();
}

}  // namespace trialshim::tuning::internal
