// The flags of a Hydra sweep that `trialshim job` writes as a Vertex job and
// `trialshim sweep` runs here: the config, its overrides (positional), the
// metrics and directions; COMMAND comes after "--" (main keeps it away from
// CLI11).
#ifndef TRIALSHIM_CLI_HYDRA_SWEEP_FLAGS_H_
#define TRIALSHIM_CLI_HYDRA_SWEEP_FLAGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/tuning/job_writer.h"

namespace trialshim::cli {

struct HydraSweepFlags {
  std::string config_path;
  std::string config_name;
  std::vector<std::string> overrides;
  std::vector<std::string> metrics;
  std::vector<std::string> directions;
  std::string machine_type = "n1-standard-4";
  tuning::Accelerator accelerator;
  int64_t replica_count = 1;
  std::string display_name;

  // Registers --config-path, --config-name (required or not), --metric and
  // --direction; the overrides are the caller's positional.
  void Add(CLI::App* cmd, bool required);
  tuning::HydraSweepRequest Request(
      const std::vector<std::string>& command) const;
  // `PROGRAM SUB` with these flags, the overrides and `-- COMMAND`,
  // quoted for a shell. PROGRAM is the trialshim that was run (argv[0]) in
  // a command a hint tells the user to run, as every hint names it.
  std::string CommandLine(const std::string& program, const std::string& sub,
                          const std::vector<std::string>& command,
                          const std::vector<std::string>& more = {}) const;
};

}  // namespace trialshim::cli

#endif  // TRIALSHIM_CLI_HYDRA_SWEEP_FLAGS_H_
