// Run(): Hydra 1.3.2's _run_hydra and run_job for a C++ task.
#include "trialshim/app/app.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "help.h"
#include "multirun.h"
#include "run_job.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"
#include "trialshim/translate/translate.h"

namespace trialshim::app {
namespace {

namespace fs = std::filesystem;

// See TRIALSHIM_APP_SECTION: kept by `used` although nothing reads it here.
[[gnu::used, gnu::section(TRIALSHIM_APP_SECTION)]] const char kAppMarker[] =
    "trialshim app: translates Vertex trial arguments in-process";

volatile std::sig_atomic_t g_stop = 0;

extern "C" void OnStopSignal(int sig) { g_stop = sig; }

std::string ExeDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

// @hydra.main's config_path: absolute, or relative to the calling source
// file's directory, else to the executable's (an installed app).
std::string ConfigDir(const std::string& path, const char* caller) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  std::error_code ec;
  for (const fs::path& base :
       {fs::path(caller ? caller : "").parent_path(), fs::path(ExeDir())}) {
    if (base.empty()) continue;
    fs::path dir = (base / path).lexically_normal();
    if (fs::is_directory(dir, ec)) return dir.string();
  }
  return path;
}

struct Invocation {
  std::vector<std::string> args;  // translated
  config::HydraCommandLine flags;
  config::ComposeRequest request;
};

StatusOr<config::HydraCommandLine> ParseFlags(
    const std::vector<std::string>& args, const AppOptions& options) {
  std::vector<std::string> more_cfg;
  if (options.schema) more_cfg = {"schema", "schema-json"};
  TRIALSHIM_ASSIGN_OR_RETURN(config::HydraCommandLine flags,
                             config::ParseHydraCommandLine(args, more_cfg));
  if (flags.shell_completion || flags.experimental_rerun) {
    return Status::InvalidArgument(
        std::string("argument ") +
        (flags.shell_completion ? "--shell-completion"
                                : "--experimental-rerun") +
        " is not supported by trialshim apps (it needs Python's Hydra)");
  }
  return flags;
}

// The fields of the schema's defaults that `cfg` lacks, added: the config
// Hydra's schema pattern composes (defaults: [schema, _self_]), whose keys
// a Vertex argument may name (--optimized_metric=val_acc).
void AddDeclared(config::Node* cfg, const config::Node& declared) {
  if (!cfg->is_map() || !declared.is_map()) return;
  for (const auto& [key, value] : declared.AsMap()) {
    config::Node* have = cfg->GetMutable(key);
    if (have == nullptr) {
      cfg->Set(key, value);
    } else {
      AddDeclared(have, value);
    }
  }
}

// The command line as Hydra reads it, Vertex's --key=value arguments
// translated against the config they name (as `trialshim run` does).
// `add_unknown`: keys the config lacks become "+key=value".
StatusOr<Invocation> Read(const std::vector<std::string>& args,
                          const AppOptions& options, const std::string& job,
                          const char* caller, bool add_unknown = false) {
  Invocation in;
  TRIALSHIM_ASSIGN_OR_RETURN(config::HydraCommandLine first,
                             ParseFlags(args, options));
  in.request.config_path =
      first.config_path ? *first.config_path
                        : ConfigDir(options.config_path, caller);
  in.request.config_name = first.config_name.value_or(options.config_name);
  if (first.config_dir) in.request.config_dirs.push_back(*first.config_dir);
  in.request.job_name = job;
  if (options.schema) in.request.declared = options.schema->Defaults();
  std::vector<std::string> translated = args;
  if (!first.unrecognized.empty() && !first.help && !first.hydra_help &&
      !first.version) {
    TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult base,
                               config::Compose(in.request));
    AddDeclared(&base.config, in.request.declared);
    translate::TranslateOptions topts;
    topts.config = &base;
    topts.repository = &base.repository;
    topts.add_unknown = add_unknown;
    // The app takes +key=value itself, unless its schema refuses new keys.
    topts.add_unknown_hint =
        options.schema ? translate::TranslateOptions::AddUnknownHint::kGroups
                       : translate::TranslateOptions::AddUnknownHint::kOverride;
    TRIALSHIM_ASSIGN_OR_RETURN(translated, translate::TranslateToArgv(args, topts));
  }
  TRIALSHIM_ASSIGN_OR_RETURN(in.flags, ParseFlags(translated, options));
  in.args = std::move(translated);
  if (!in.flags.unrecognized.empty()) {
    std::string extra;
    for (const std::string& a : in.flags.unrecognized) extra += " " + a;
    return Status::InvalidArgument("unrecognized arguments:" + extra);
  }
  in.request.overrides = in.flags.overrides;
  return in;
}

// "schema" or "schema-json" for `--cfg schema[-json]` (also -c, --cfg=):
// ours, not Hydra's, so read before Hydra's parser refuses the choice.
std::optional<std::string> SchemaRequest(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string value;
    if ((args[i] == "--cfg" || args[i] == "-c") && i + 1 < args.size()) {
      value = args[i + 1];
    } else if (args[i].rfind("--cfg=", 0) == 0) {
      value = args[i].substr(6);
    }
    if (value == "schema" || value == "schema-json") return value;
  }
  return std::nullopt;
}

// The value overrides checked against the schema before composition; group
// overrides (db=pg) and Hydra's own are the composition's to check.
Status CheckOverrides(const Invocation& in, const SchemaView& schema) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      config::ConfigRepository repo,
      config::ConfigRepository::Open(in.request.config_path));
  for (const std::string& text : in.request.overrides) {
    TRIALSHIM_ASSIGN_OR_RETURN(config::Override o, config::ParseOverride(text));
    if (repo.GroupExists(o.key_or_group)) continue;
    // "optimizr=sgd": composition says which group is meant.
    if (o.value && o.value->is_string() &&
        repo.GroupMeant(o.key_or_group, o.value->AsString())) {
      continue;
    }
    Status st = schema.CheckOverride(o);
    // A closed schema takes no key it lacks, + or not (schema.h): say that
    // the key is no group here either, where the user may have meant one
    // of another config tree (hparams_search=... of a template's).
    if (!st.ok() && o.type == config::OverrideType::kChange &&
        st.message().find("' not in '") != std::string::npos) {
      std::vector<std::string> groups;  // the app's, not Hydra's own
      for (const std::string& g : repo.Groups()) {
        if (g != "hydra" && !StartsWith(g, "hydra/")) groups.push_back(g);
      }
      return Status::InvalidArgument(
          st.message() + "\n'" + o.key_or_group + "' is no config group of " +
          Abbreviated(in.request.config_path) +
          " either (its groups: " + JoinStrings(groups, ", ") +
          "), and the app's schema takes no key it lacks, with + or without");
    }
    TRIALSHIM_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

// --add-unknown is trialshim's option: the app takes the overrides it would
// make ("+act=relu") itself. The advice is the whole command with them, once
// it is known to pass (a closed schema refuses new keys even so).
Status AddUnknownAdvice(const std::string& argv0,
                        std::vector<std::string> args,
                        const AppOptions& options, const std::string& job,
                        const char* caller) {
  args.erase(std::remove(args.begin(), args.end(), "--add-unknown"),
             args.end());
  TRIALSHIM_ASSIGN_OR_RETURN(Invocation in,
                             Read(args, options, job, caller, true));
  if (options.schema) {
    TRIALSHIM_RETURN_IF_ERROR(CheckOverrides(in, *options.schema));
  }
  std::string command = ShellQuote(argv0);
  for (const std::string& a : in.args) command += " " + ShellQuote(a);
  return Status::InvalidArgument(
      "--add-unknown is an option of the trialshim command, not of this "
      "app, which takes the overrides it makes itself; run: " +
      command);
}

// --cfg, --help, --hydra-help, --info: Hydra prints instead of running.
StatusOr<std::string> Show(const Invocation& in) {
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed,
                             config::Compose(in.request));
  const config::HydraCommandLine& f = in.flags;
  if (f.help) return internal::AppHelp(composed, f.resolve);
  if (f.hydra_help) return internal::HydraHelp(composed);
  if (f.info) return internal::Info(*f.info, composed);
  config::Node out = config::ConfigView(composed, *f.cfg);
  std::string header;
  if (f.package && *f.package != "_global_") {
    const config::Node* at = out.Find(*f.package);
    if (at == nullptr) {
      return Status::NotFound("package '" + *f.package +
                              "' not found in config");
    }
    if (!at->is_map() && !at->is_list()) return config::ToYaml(*at);
    header = "# @package " + *f.package + "\n";
    out = *at;
  }
  if (f.resolve) {
    TRIALSHIM_ASSIGN_OR_RETURN(out, config::ResolveShown(out, composed));
  }
  return header + config::ToYaml(out);
}

// A run (Hydra's run): the job in hydra.run.dir. Hydra adds hydra.mode=RUN
// when nothing set the mode.
StatusOr<int> Execute(Invocation in, bool add_mode, const Task& task) {
  if (add_mode) in.request.overrides.push_back("hydra.mode=RUN");
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed,
                             internal::ComposeJob(std::move(in.request)));
  internal::NowCache now;
  TRIALSHIM_ASSIGN_OR_RETURN(std::string output_dir,
                             internal::JobDir(composed, "run.dir", "", &now));
  TRIALSHIM_RETURN_IF_ERROR(internal::LogHydraDebug(composed, &now));
  return internal::RunJob(std::move(composed), output_dir, &now, task);
}

// Hydra's get_mode: hydra.mode as the configs and overrides set it (null
// when unset, or when they do not compose; the run then says why).
std::optional<std::string> Mode(config::ComposeRequest request) {
  request.mode = config::ComposeMode::kMultirun;
  StatusOr<config::ComposeResult> composed = config::Compose(request);
  const config::Node* mode =
      composed.ok() ? composed->hydra.Get("mode") : nullptr;
  if (mode == nullptr || !mode->is_string()) return std::nullopt;
  return mode->AsString();
}

// Hydra's _run_app: -m, or hydra.mode: MULTIRUN from the configs (as
// hparams_search configs set it), starts a multirun, else a run;
// hydra.mode=RUN or MULTIRUN is added when nothing set the mode.
StatusOr<int> Launch(Invocation in, const Task& task, const std::string& job) {
  std::optional<std::string> mode = Mode(in.request);
  if (in.flags.multirun && mode == "RUN") {
    std::cerr << job << ": warning: running with --multirun, overriding "
                        "with `hydra.mode=MULTIRUN`\n";
  }
  if (!in.flags.multirun && mode != "MULTIRUN") {
    return Execute(std::move(in), !mode, task);
  }
  return internal::Multirun(std::move(in.request), mode != "MULTIRUN", task,
                            [&](const std::string& m) {
                              std::cerr << job << ": error: " << m << "\n";
                            });
}

}  // namespace

int Run(int argc, char** argv, const AppOptions& options, const Task& task,
        const char* caller) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string job = options.job_name.empty()
                              ? fs::path(argv[0]).stem().string()
                              : options.job_name;
  auto fail = [&](const Status& s) {
    std::cerr << job << ": error: " << s.message() << "\n";
    return ExitCodeFor(s);
  };
  if (std::optional<std::string> view = SchemaRequest(args)) {
    if (!options.schema) {
      return fail(Status::InvalidArgument(
          "--cfg " + *view + ": this app declares no schema (AppOptions::schema)"));
    }
    std::cout << (*view == "schema" ? options.schema->Yaml()
                                    : options.schema->JsonSchema() + "\n");
    return 0;
  }
  if (std::find(args.begin(), args.end(), "--add-unknown") != args.end()) {
    return fail(AddUnknownAdvice(argv[0], args, options, job, caller));
  }
  StatusOr<Invocation> in = Read(args, options, job, caller);
  if (!in.ok()) return fail(in.status());
  if (options.schema) {
    if (Status st = CheckOverrides(*in, *options.schema); !st.ok()) {
      return fail(st);
    }
  }
  if (in->flags.version) {
    std::cout << "Hydra 1.3.2 (trialshim app)\n";
    if (options.version) std::cout << options.version() << "\n";
    return 0;
  }
  const config::HydraCommandLine& f = in->flags;
  // --help and --hydra-help print before Hydra counts the commands.
  if (!f.help && !f.hydra_help &&
      f.run + f.multirun + f.cfg.has_value() + f.info.has_value() > 1) {
    return fail(Status::InvalidArgument(
        "Only one of --run, --multirun, --cfg, --info and --shell_completion "
        "can be specified"));
  }
  if (f.help || f.hydra_help || f.info || f.cfg) {
    StatusOr<std::string> text = Show(*in);
    if (!text.ok()) return fail(text.status());
    std::cout << *text;
    return 0;
  }
  StatusOr<int> code = Launch(std::move(in).value(), task, job);
  return code.ok() ? *code : fail(code.status());
}

void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int StopRequested() { return g_stop; }

}  // namespace trialshim::app
