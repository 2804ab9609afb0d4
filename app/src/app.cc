// Run(): Hydra 1.3.2's _run_hydra and run_job for a C++ task.
#include "trialshim/app/app.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>

#include "help.h"
#include "run_dir.h"
#include "trialshim/base/python_text.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"
#include "trialshim/shim/translate.h"

namespace trialshim::app {
namespace {

namespace fs = std::filesystem;

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

// Python's repr() of a list of strings: ['a=1', 'b=2'].
std::string PythonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", " : "") + PythonStringRepr(items[i]);
  }
  return out + "]";
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
  if (flags.multirun) {
    return Status::InvalidArgument(
        "--multirun: a trialshim app runs one job; run a sweep with "
        "`trialshim sweep JOB_SPEC` (a Vertex tuning job run locally)");
  }
  if (flags.shell_completion || flags.experimental_rerun) {
    return Status::InvalidArgument(
        std::string("argument ") +
        (flags.shell_completion ? "--shell-completion"
                                : "--experimental-rerun") +
        " is not supported by trialshim apps (it needs Python's Hydra)");
  }
  return flags;
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
  std::vector<std::string> translated = args;
  if (!first.unrecognized.empty() && !first.help && !first.hydra_help &&
      !first.version) {
    TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult base,
                               config::Compose(in.request));
    shim::TranslateOptions topts;
    topts.config = &base;
    topts.repository = &base.repository;
    topts.add_unknown = add_unknown;
    // The app takes +key=value itself, unless its schema refuses new keys.
    topts.add_unknown_hint =
        options.schema ? shim::TranslateOptions::AddUnknownHint::kGroups
                       : shim::TranslateOptions::AddUnknownHint::kOverride;
    TRIALSHIM_ASSIGN_OR_RETURN(translated, shim::TranslateToArgv(args, topts));
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
    TRIALSHIM_RETURN_IF_ERROR(schema.CheckOverride(o));
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

// hydra.run.dir resolved (${now:...}, ${hydra.job.name}, the task's keys),
// made absolute.
StatusOr<std::string> OutputDir(const config::ComposeResult& composed) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      config::Node dir,
      config::ResolveHydra(composed, "run.dir", false,
                           config::HydraScope::kWholeConfig));
  if (!dir.is_string() || dir.AsString().empty()) {
    return Status::InvalidArgument("hydra.run.dir must be a path");
  }
  std::error_code ec;
  return fs::absolute(dir.AsString(), ec).lexically_normal().string();
}

// run_job: the run directory, its files, the environment, the working
// directory and the log, then the task.
// What run_job reads of Hydra's node, each key resolved on its own as
// Python reads it lazily, and where Python reads it: the logging configs and
// verbose from the whole config (a log file name may name ${task_name}, as
// lightning-hydra-template's does), chdir and env_set from HydraConfig's copy
// of the node alone. run.dir and sweep.dir may name task keys too, which that
// copy could not resolve (OutputDir reads run.dir).
struct JobHydra {
  config::Node chdir, env_set, hydra_logging, job_logging, verbose, job_name;
};

StatusOr<JobHydra> ReadJobHydra(const config::ComposeResult& composed) {
  using config::HydraScope;
  JobHydra out;
  const std::tuple<const char*, HydraScope, config::Node*> keys[] = {
      {"job.chdir", HydraScope::kHydraOnly, &out.chdir},
      {"job.env_set", HydraScope::kHydraOnly, &out.env_set},
      {"job.name", HydraScope::kHydraOnly, &out.job_name},
      {"hydra_logging", HydraScope::kWholeConfig, &out.hydra_logging},
      {"job_logging", HydraScope::kWholeConfig, &out.job_logging},
      {"verbose", HydraScope::kWholeConfig, &out.verbose}};
  for (const auto& [key, scope, node] : keys) {
    // hydra.job.num and the like stay "???" in a run.
    TRIALSHIM_ASSIGN_OR_RETURN(*node,
                               config::ResolveHydra(composed, key, true, scope));
  }
  return out;
}

// Under hydra.verbose (for Hydra's own logger) Hydra logs its --info all
// through hydra_logging alone, before the job's logging replaces it.
Status LogHydraDebug(const config::ComposeResult& composed,
                     const JobHydra& hydra) {
  const char* const kHydraLogger = "hydra._internal.hydra";
  if (!IsVerbose(hydra.verbose, kHydraLogger)) return Status::Ok();
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::unique_ptr<Logger> log,
      Logger::FromConfig(hydra.hydra_logging, config::Node(),
                         config::Node::Bool(true), kHydraLogger));
  for (const std::string& m : internal::AllInfo(composed)) log->Debug(m);
  return Status::Ok();
}

// The run's config. Hydra's colorlog plugin is Python (lightning-hydra-
// template overrides both logging groups with it): its options log as
// Hydra's default configs do, without colours, under what the app's configs
// set, and say so in `composed.warnings`.
StatusOr<config::ComposeResult> ComposeRun(config::ComposeRequest request) {
  // Hydra's get_mode: hydra.mode from the configs and overrides; only when
  // it is unset does the run add hydra.mode=RUN.
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed,
                             config::Compose(request));
  const config::Node* mode = composed.hydra.Get("mode");
  if (mode != nullptr && mode->is_string() && mode->AsString() == "MULTIRUN") {
    return Status::InvalidArgument(
        "hydra.mode is MULTIRUN" +
        (mode->mark().known() ? " (" + mode->mark().ToString() + ")"
                              : std::string()) +
        ", which starts a multirun as Hydra 1.2+ does, and a trialshim app "
        "runs one job; to run one, add the override hydra.mode=RUN");
  }
  if (mode == nullptr || mode->is_null()) {
    request.overrides.push_back("hydra.mode=RUN");
    TRIALSHIM_ASSIGN_OR_RETURN(composed, config::Compose(request));
  }
  std::vector<std::string> notes;
  const config::Node* choices = composed.hydra.Find("runtime.choices");
  for (const std::string group : {"hydra/hydra_logging", "hydra/job_logging"}) {
    const config::Node* choice = choices ? choices->Get(group) : nullptr;
    if (choice && choice->is_string() && choice->AsString() == "colorlog") {
      request.overrides.push_back(group + "=default");
      notes.push_back(group + "=colorlog is the Python hydra-colorlog plugin; "
                      "logging as " + group + "=default does");
    }
  }
  if (notes.empty()) return composed;
  TRIALSHIM_ASSIGN_OR_RETURN(composed, config::Compose(request));
  composed.warnings.insert(composed.warnings.end(), notes.begin(), notes.end());
  return composed;
}

StatusOr<int> Execute(Invocation in, const Task& task) {
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed,
                             ComposeRun(std::move(in.request)));
  TRIALSHIM_ASSIGN_OR_RETURN(std::string output_dir, OutputDir(composed));
  composed.hydra.FindMutable("runtime")->Set("output_dir",
                                             config::Node::String(output_dir));
  config::ResolveOptions under_hydra;
  under_hydra.hydra = &composed.hydra;
  TRIALSHIM_ASSIGN_OR_RETURN(config::Node cfg,
                             config::ResolveAll(composed.config, under_hydra));
  TRIALSHIM_ASSIGN_OR_RETURN(JobHydra hydra, ReadJobHydra(composed));
  TRIALSHIM_RETURN_IF_ERROR(LogHydraDebug(composed, hydra));
  const config::Node* subdir = composed.hydra.Get("output_subdir");
  std::vector<std::string> task_overrides;
  for (const config::Node& o : composed.hydra.Find("overrides.task")->AsList()) {
    task_overrides.push_back(o.AsString());
  }
  TRIALSHIM_RETURN_IF_ERROR(internal::CreateRunDir(
      output_dir,
      subdir && subdir->is_string() ? std::optional(subdir->AsString())
                                    : std::nullopt,
      composed.config, composed.hydra, task_overrides));
  if (hydra.chdir.is_bool() && hydra.chdir.AsBool() &&
      ::chdir(output_dir.c_str()) != 0) {
    return Status::IOError("cannot change directory to " + output_dir);
  }
  for (const auto& [key, value] : hydra.env_set.AsMap()) {
    setenv(key.c_str(), value.AsString().c_str(), 1);
  }
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::unique_ptr<Logger> log,
      Logger::FromConfig(hydra.hydra_logging, hydra.job_logging, hydra.verbose,
                         hydra.job_name.AsString()));
  for (const std::string& w : composed.warnings) log->Warning(w);
  Job job(std::move(cfg), composed.hydra, output_dir, task_overrides,
          log.get());
  try {
    return task(job);
  } catch (const std::exception& e) {
    log->Error("Error executing job with overrides: " +
               PythonList(task_overrides) + "\n" + e.what());
    return 1;
  }
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
    return 0;
  }
  if (in->flags.help || in->flags.hydra_help || in->flags.info ||
      in->flags.cfg) {
    StatusOr<std::string> text = Show(*in);
    if (!text.ok()) return fail(text.status());
    std::cout << *text;
    return 0;
  }
  StatusOr<int> code = Execute(std::move(in).value(), task);
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
