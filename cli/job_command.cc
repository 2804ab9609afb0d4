// `trialshim job --config-path DIR --config-name NAME [OVERRIDE...] --
// COMMAND...`: prints the Vertex tuning job of a Hydra sweep
// (tuning/job_writer.h).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "hydra_sweep_flags.h"
#include "options.h"
#include "trialshim/tuning/job_writer.h"

namespace trialshim::cli {

using translate::OptionId;
namespace {

int RunJob(const HydraSweepFlags& flags,
           const std::vector<std::string>& command, const std::string& image,
           const std::string& output_dir) {
  tuning::HydraSweepRequest request = flags.Request(command);
  request.image_uri = image;
  request.output_dir = output_dir;
  StatusOr<tuning::HydraSweepJob> job = tuning::HydraSweepToJob(request);
  if (!job.ok()) {
    std::cerr << "trialshim job: error: " << job.status().message() << "\n";
    return ExitCodeFor(job.status());
  }
  for (const std::string& w : job->warnings) {
    std::cerr << "trialshim job: warning: " << w << "\n";
  }
  std::vector<std::string> header = {
      "Written by: " +
      flags.CommandLine("trialshim", "job", command,
                        {"--image", image, "--output-dir", output_dir}) +
      " (docs/hydra-sweep-to-vertex.md)"};
  for (const std::string& n : job->notes) header.push_back("note: " + n);
  std::cout << tuning::JobSpecYaml(job->spec, header);
  return 0;
}

}  // namespace

void AddJobCommand(CLI::App& app, const std::vector<std::string>* command,
                   int* exit_code) {
  auto flags = std::make_shared<HydraSweepFlags>();
  auto image = std::make_shared<std::string>();
  auto output_dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "job",
      "Print the Vertex HyperparameterTuningJob YAML of a Hydra sweep "
      "(gcloud ai hp-tuning-jobs create --config): trialshim job "
      "--config-path DIR --config-name NAME [OVERRIDE...] -- COMMAND...");
  flags->Add(cmd, /*required=*/true);
  AddOption(cmd, OptionId::kImage, image.get())->required();
  AddOption(cmd, OptionId::kOutputDir, output_dir.get())->required();
  AddOption(cmd, OptionId::kMachineType, &flags->machine_type)
      ->capture_default_str();
  AddOption(cmd, OptionId::kAcceleratorType, &flags->accelerator.type);
  AddOption(cmd, OptionId::kAcceleratorCount, &flags->accelerator.count)
      ->check(Bounded<int64_t>(1));
  AddOption(cmd, OptionId::kReplicaCount, &flags->replica_count)
      ->check(Bounded<int64_t>(1))
      ->capture_default_str();
  AddOption(cmd, OptionId::kDisplayName, &flags->display_name);
  cmd->add_option("overrides", flags->overrides,
                  "Hydra overrides, sweeps included (as after -m)");
  cmd->callback([flags, image, output_dir, command, exit_code] {
    if (command->empty()) {
      std::cerr << "trialshim job: error: no COMMAND after '--' (the trainer "
                   "each trial runs)\n";
      *exit_code = 2;
      return;
    }
    *exit_code = RunJob(*flags, *command, *image, *output_dir);
  });
}

}  // namespace trialshim::cli
