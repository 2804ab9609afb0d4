// `trialshim check JOB.yaml`: lists what would make a tuning job fail.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "trialshim/tuning/check.h"

namespace trialshim::cli {

using translate::OptionId;
using tuning::CheckJobFile;
using tuning::CheckOptions;
using tuning::Diagnostic;
namespace {

struct CheckFlags {
  std::string job;
  std::string config_path;
  std::string config_name;
  bool werror = false;
  bool quiet = false;
  std::vector<std::string> volumes;  // HOST:CONTAINER
  std::string workdir;
};

int RunCheck(const CheckFlags& flags) {
  CheckOptions options;
  options.config_path = flags.config_path;
  options.config_name = flags.config_name;
  options.workdir = flags.workdir;
  for (const std::string& v : flags.volumes) {
    StatusOr<tuning::Volume> volume = tuning::ParseVolume(v);
    if (!volume.ok()) {
      std::cerr << "trialshim check: error: " << volume.status().message()
                << "\n";
      return 2;
    }
    options.volumes.push_back(*volume);
  }
  StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(flags.job, options);
  if (!diags.ok()) {
    std::cerr << "trialshim check: error: " << diags.status().message() << "\n";
    return ExitCodeFor(diags.status());
  }
  int errors = 0, warnings = 0;
  for (const Diagnostic& d : *diags) {
    errors += d.severity == Diagnostic::Severity::kError;
    warnings += d.severity == Diagnostic::Severity::kWarning;
    if (flags.quiet && d.severity == Diagnostic::Severity::kNote) continue;
    std::cout << d.ToString() << "\n";
  }
  std::cout.flush();
  auto plural = [](int n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  std::cerr << flags.job << ": "
            << (errors + warnings == 0 ? std::string("ok")
                                       : plural(errors, "error") + ", " +
                                             plural(warnings, "warning"))
            << "\n";
  return errors > 0 || (flags.werror && warnings > 0) ? 2 : 0;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Check a Vertex HyperparameterTuningJob YAML (gcloud ai hp-tuning-jobs "
      "create --config) before paying for it; exit 2 on errors");
  cmd->add_option("job", flags->job, "The job spec YAML")
      ->required()
      ->check(Existing(/*directory=*/false));
  AddOption(cmd, OptionId::kCheckConfigPath, &flags->config_path);
  AddOption(cmd, OptionId::kCheckConfigName, &flags->config_name);
  AddOption(cmd, OptionId::kWerror, &flags->werror);
  AddOption(cmd, OptionId::kQuiet, &flags->quiet);
  AddOption(cmd, OptionId::kVolume, &flags->volumes);
  AddOption(cmd, OptionId::kWorkdir, &flags->workdir)
      ->check(Existing(/*directory=*/true));
  cmd->callback([flags, exit_code] { *exit_code = RunCheck(*flags); });
}

}  // namespace trialshim::cli
