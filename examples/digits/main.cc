// digits-train: trains the digits MLP from a Hydra config tree.
//
//   digits-train [--config-path DIR] [--config-name NAME] [--cfg job
//                [--resolve]] [key=value ...] [--key=value ...]
//
// Hydra's flags are read as Hydra 1.3.2 reads them (config/command_line.h);
// those a single run has no use for are refused. Hydra overrides and
// Vertex-style --key=value arguments may be mixed: the latter go through the
// shim's translator with the composed config, so a tuning job can call this
// binary directly. Exit codes: 0 done, 2 usage or config error, 1 runtime
// failure, 128+N stopped by SIGTERM/SIGINT/SIGHUP (143/130/129; checkpoint
// written, a restart resumes).
#include <limits.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "train.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"
#include "trialshim/shim/translate.h"
#include "trialshim/trainer/run_dir.h"
#include "trialshim/trainer/trainer.h"

namespace {

namespace fs = std::filesystem;
using trialshim::Status;
using trialshim::StatusOr;
namespace config = trialshim::config;

constexpr char kUsage[] =
    "usage: digits-train [--config-path DIR] [--config-name NAME]\n"
    "                    [--cfg job [--resolve]] [OVERRIDE ...]\n"
    "OVERRIDE is a Hydra override (optimizer=sgd optimizer.lr=0.01) or a\n"
    "Vertex-style argument (--optimizer.lr=0.01). hydra.run.dir=DIR sets the\n"
    "run directory (default outputs/YYYY-MM-DD/HH-MM-SS).\n";

struct Args {
  std::string config_path;
  std::string config_name = "config";
  std::string cfg;  // "" or "job"
  bool resolve = false;
  bool help = false;
  std::vector<std::string> overrides;  // task overrides
  std::string run_dir;                 // hydra.run.dir
  std::string output_subdir = ".hydra";
  bool chdir = false;
};

std::string ExeDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return fs::path(std::string(buf, n)).parent_path().string();
}

// --config-path, else next to the executable (installed or in a build
// directory inside the source tree), else the source tree it was built from.
std::string FindConfigDir(const std::string& given) {
  if (!given.empty()) return given;
  const std::string exe = ExeDir();
  for (const std::string& dir :
       {exe + "/../share/trialshim/examples/digits/conf",
        exe + "/../../examples/digits/conf",
        std::string(TRIALSHIM_DIGITS_SOURCE_DIR) + "/conf"}) {
    std::error_code ec;
    if (fs::is_regular_file(dir + "/config.yaml", ec)) {
      return fs::weakly_canonical(dir, ec).string();
    }
  }
  return std::string(TRIALSHIM_DIGITS_SOURCE_DIR) + "/conf";
}

// Reads Hydra's flags as Hydra does (config/command_line.h). The overrides
// are those argparse placed and, as later Hydra versions do, those it could
// not (here also the Vertex-style --key=value arguments before translation).
Status ParseFlags(const std::vector<std::string>& argv, Args* args) {
  TRIALSHIM_ASSIGN_OR_RETURN(config::HydraCommandLine flags,
                             config::ParseHydraCommandLine(argv));
  if (flags.multirun) {
    return Status::InvalidArgument(
        "--multirun is not supported by digits-train; run one trial per "
        "process (trialshim sweep emulates a tuning job)");
  }
  if (flags.cfg && *flags.cfg != "job") {
    return Status::InvalidArgument(
        "argument --cfg: only 'job' is supported here (got '" + *flags.cfg +
        "')");
  }
  const std::pair<bool, const char*> unsupported[] = {
      {flags.hydra_help, "--hydra-help"},
      {flags.version, "--version"},
      {flags.package.has_value(), "--package"},
      {flags.shell_completion, "--shell-completion"},
      {flags.config_dir.has_value(), "--config-dir"},
      {flags.experimental_rerun.has_value(), "--experimental-rerun"},
      {flags.info.has_value(), "--info"},
  };
  for (const auto& [given, name] : unsupported) {
    if (given) {
      return Status::InvalidArgument(std::string("argument ") + name +
                                     " is not supported by digits-train");
    }
  }
  args->help = flags.help;
  if (flags.config_path) args->config_path = *flags.config_path;
  if (flags.config_name) args->config_name = *flags.config_name;
  args->cfg = flags.cfg.value_or("");
  args->resolve = flags.resolve;
  args->overrides = std::move(flags.overrides);
  args->overrides.insert(args->overrides.end(), flags.unrecognized.begin(),
                         flags.unrecognized.end());
  return Status::Ok();
}

// Pulls hydra.* overrides out of the task overrides: the config engine
// composes the task config only.
Status TakeHydraOverrides(Args* args) {
  std::vector<std::string> task;
  for (const auto& o : args->overrides) {
    std::string_view key = o;
    while (!key.empty() && (key[0] == '+' || key[0] == '~'))
      key.remove_prefix(1);
    if (key.compare(0, 6, "hydra.") != 0) {
      task.push_back(o);
      continue;
    }
    TRIALSHIM_ASSIGN_OR_RETURN(config::Override parsed,
                               config::ParseOverride(o));
    const config::Node& v = parsed.value ? *parsed.value : config::Node();
    if (parsed.key_or_group == "hydra.run.dir" && v.is_string()) {
      args->run_dir = v.AsString();
    } else if (parsed.key_or_group == "hydra.output_subdir") {
      args->output_subdir = v.is_string() ? v.AsString() : "";
    } else if (parsed.key_or_group == "hydra.job.chdir" && v.is_bool()) {
      args->chdir = v.AsBool();
    } else {
      return Status::InvalidArgument(
          "unsupported Hydra override '" + o +
          "': digits-train understands hydra.run.dir, hydra.output_subdir and "
          "hydra.job.chdir");
    }
  }
  args->overrides = task;
  return Status::Ok();
}

Status Run(int argc, char** argv, bool* stopped) {
  std::vector<std::string> raw(argv + 1, argv + argc);
  Args first;
  // The config location may be given as flags; find it before translating.
  TRIALSHIM_RETURN_IF_ERROR(ParseFlags(raw, &first));
  if (first.help) {
    std::cout << kUsage;
    return Status::Ok();
  }
  const std::string config_dir = FindConfigDir(first.config_path);
  TRIALSHIM_ASSIGN_OR_RETURN(config::ConfigRepository repo,
                             config::ConfigRepository::Open(config_dir));
  config::ComposeRequest base_request;
  base_request.config_path = config_dir;
  base_request.config_name = first.config_name;
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult base,
                             config::Compose(base_request));

  // Vertex-style arguments become overrides, checked against the config.
  trialshim::shim::TranslateOptions topts;
  topts.config = &base;
  topts.repository = &repo;
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> translated,
                             trialshim::shim::TranslateToArgv(raw, topts));
  Args args;
  TRIALSHIM_RETURN_IF_ERROR(ParseFlags(translated, &args));
  TRIALSHIM_RETURN_IF_ERROR(TakeHydraOverrides(&args));
  config::ComposeRequest request = base_request;
  request.config_name = args.config_name;
  request.overrides = args.overrides;
  request.job_name = "digits-train";
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed,
                             config::Compose(request));

  if (args.cfg == "job") {
    if (args.resolve) {  // "???" stays, as in Hydra's --cfg job --resolve
      config::ResolveOptions keep;
      keep.keep_missing = true;
      keep.hydra = &composed.hydra;
      TRIALSHIM_ASSIGN_OR_RETURN(config::Node resolved,
                                 config::ResolveAll(composed.config, keep));
      std::cout << config::ToYaml(resolved);
    } else {
      std::cout << config::ToYaml(composed.config);
    }
    return Status::Ok();
  }
  std::string run_dir =
      args.run_dir.empty()
          ? trialshim::trainer::DefaultRunDir(std::time(nullptr))
          : args.run_dir;
  // In a data-parallel job only global rank 0 writes the run directory's
  // files (.hydra/, the log); the other ranks log to stderr alone.
  const char* rank = std::getenv("RANK");
  const bool primary =
      rank == nullptr || *rank == '\0' || std::string(rank) == "0";
  std::error_code ec;
  if (primary) {
    TRIALSHIM_RETURN_IF_ERROR(trialshim::trainer::CreateRunDir(
        run_dir, composed.config, args.overrides, args.output_subdir));
  } else {
    fs::create_directories(run_dir, ec);
  }
  run_dir = fs::absolute(run_dir, ec).string();
  // ${hydra:runtime.output_dir} is the run directory, as in a Hydra app.
  composed.hydra.FindMutable("runtime")->Set("output_dir",
                                             config::Node::String(run_dir));
  config::ResolveOptions under_hydra;
  under_hydra.hydra = &composed.hydra;
  TRIALSHIM_ASSIGN_OR_RETURN(config::Node resolved,
                             config::ResolveAll(composed.config, under_hydra));
  if (args.chdir && chdir(run_dir.c_str()) != 0) {
    return Status::IOError("can not change directory to " + run_dir);
  }

  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  try {
    if (primary) {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(
          run_dir + "/digits-train.log"));
    }
  } catch (const spdlog::spdlog_ex& e) {
    return Status::IOError(std::string("can not open the log file: ") +
                           e.what());
  }
  auto logger = std::make_shared<spdlog::logger>("digits-train", sinks.begin(),
                                                 sinks.end());
  logger->set_pattern("[%Y-%m-%d %H:%M:%S,%e][%n][%l] - %v");  // Hydra's layout
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  logger->info("Run directory: {}", run_dir);

  Status st = trialshim::digits::Train(resolved, {config_dir, run_dir, logger});
  if (st.code() == trialshim::StatusCode::kCancelled) {
    logger->warn("{}", st.message());
    *stopped = true;
    return Status::Ok();
  }
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  bool stopped = false;
  Status st;
  try {
    st = Run(argc, argv, &stopped);
  } catch (const std::exception& e) {
    st = Status::Internal(e.what());
  }
  // 128 + the signal, as a process killed by it (143 for SIGTERM).
  if (stopped) return 128 + trialshim::trainer::StopSignal();
  if (!st.ok()) {
    std::fprintf(stderr, "digits-train: error: %s\n", st.message().c_str());
    if (trialshim::ExitCodeFor(st) == 2) std::fputs(kUsage, stderr);
    return trialshim::ExitCodeFor(st);
  }
  return 0;
}
