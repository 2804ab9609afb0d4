// The run directory's files, as Hydra 1.3.2's run_job writes them
// (private to the app library).
//
//   <output_dir>/<output_subdir>/config.yaml     the task config, unresolved
//   <output_dir>/<output_subdir>/hydra.yaml      {hydra: ...}, unresolved
//   <output_dir>/<output_subdir>/overrides.yaml  the task overrides
//
// Each is replaced durably (base/file.h); temporaries a killed run left are
// removed first. No subdirectory when output_subdir is null (hydra's own
// way to turn them off).
#ifndef TRIALSHIM_APP_SRC_RUN_DIR_H_
#define TRIALSHIM_APP_SRC_RUN_DIR_H_

#include <optional>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::app::internal {

Status CreateRunDir(const std::string& output_dir,
                    const std::optional<std::string>& output_subdir,
                    const config::Node& task_config,
                    const config::Node& hydra,
                    const std::vector<std::string>& task_overrides);

}  // namespace trialshim::app::internal

#endif  // TRIALSHIM_APP_SRC_RUN_DIR_H_
