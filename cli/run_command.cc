// `trialshim [OPTIONS] -- COMMAND [ARG...]`: translate the trial's
// arguments, then run (or with --dry-run, print) the command.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "translate_flags.h"
#include "trialshim/shim/cluster_spec.h"
#include "trialshim/shim/process.h"
#include "trialshim/translate/translate.h"

namespace trialshim::cli {

using shim::DistributedEnvironment;
using translate::OptionId;
using shim::ProcessEnvironment;
using shim::RunOptions;
using shim::RunResult;
namespace {

struct RunFlags {
  TranslateFlags translate;
  bool dry_run = false;
  std::string metric_tag;
  std::string metric_regex;
  double kill_after_s = 0;
};

int Fail(const Status& s) {
  std::cerr << "trialshim: error: " << s.message() << "\n";
  return ExitCodeFor(s);
}

int RunMain(const RunFlags& flags, const std::vector<std::string>& command) {
  if (command.empty()) {
    std::cerr << "trialshim: error: no COMMAND given\n"
                 "usage: trialshim [OPTIONS] -- COMMAND [ARG...]   "
                 "(trialshim --help for the options)\n";
    return 2;
  }
  StatusOr<std::vector<std::string>> translated =
      TranslateCommand(flags.translate, command);
  if (!translated.ok()) return Fail(translated.status());
  const std::vector<std::string>& argv = *translated;

  if (flags.dry_run) {
    std::cout << ArgvJson(argv) << "\n";
    return 0;
  }
  RunOptions run;
  run.metric_regex = flags.metric_regex;
  run.metric_tag = flags.metric_tag;
  run.kill_after = std::chrono::milliseconds(
      static_cast<int64_t>(flags.kill_after_s * 1000));
  // A multi-replica Vertex job: the env:// rendezvous variables from
  // CLUSTER_SPEC / TF_CONFIG (cluster_spec.h), unless already set.
  StatusOr<std::vector<std::pair<std::string, std::string>>> dist =
      DistributedEnvironment(ProcessEnvironment());
  if (!dist.ok()) return Fail(dist.status());
  for (const auto& [name, value] : *dist) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  std::cout.flush();
  RunResult result = RunProgram(argv, run);
  for (const std::string& w : result.warnings) {
    std::cerr << "trialshim: warning: " << w << "\n";
  }
  if (!result.error.empty()) {
    std::cerr << "trialshim: error: " << result.error << "\n";
  }
  return result.exit_code;
}

}  // namespace

void SetUpRunCommand(CLI::App& app, const std::vector<std::string>* command,
                     int* exit_code) {
  auto flags = std::make_shared<RunFlags>();
  AddTranslateFlags(&app, &flags->translate, /*command=*/true);
  AddOption(&app, OptionId::kDryRun, &flags->dry_run);
  CLI::Option* regex =
      AddOption(&app, OptionId::kMetricRegex, &flags->metric_regex);
  AddOption(&app, OptionId::kMetricTag, &flags->metric_tag)->needs(regex);
  AddOption(&app, OptionId::kKillAfter, &flags->kill_after_s)
      ->check(Bounded(0.0, 7.0 * 24 * 3600));
  app.final_callback([&app, flags, command, exit_code] {
    if (!app.get_subcommands().empty()) return;  // a subcommand ran instead
    *exit_code = RunMain(*flags, *command);
  });
}

}  // namespace trialshim::cli
