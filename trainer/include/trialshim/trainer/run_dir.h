// The run directory, laid out the way Hydra lays out a single run.
//
//   outputs/YYYY-MM-DD/HH-MM-SS/        (local time; or an explicit dir)
//     .hydra/config.yaml                the composed config, unresolved
//     .hydra/overrides.yaml             the task overrides as given
//     metrics.csv, checkpoints/, model.pt, <job>.log   (written later)
//
// The files are replaced durably (base/file.h); temporaries a killed run
// left in the directory are removed when it is created again.
#ifndef TRIALSHIM_TRAINER_RUN_DIR_H_
#define TRIALSHIM_TRAINER_RUN_DIR_H_

#include <ctime>
#include <string>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::trainer {

// "outputs/YYYY-MM-DD/HH-MM-SS" for `now` in local time (Hydra's default
// hydra.run.dir, relative to the working directory).
std::string DefaultRunDir(std::time_t now);

// Creates `dir` and, when `hydra_subdir` is not empty (Hydra's
// hydra.output_subdir, default ".hydra"), writes config.yaml and
// overrides.yaml into it. IOError naming the file and the reason when
// something can not be written.
Status CreateRunDir(const std::string& dir, const config::Node& config,
                    const std::vector<std::string>& overrides,
                    const std::string& hydra_subdir = ".hydra");

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_RUN_DIR_H_
