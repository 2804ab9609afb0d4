// The digits example's entry point, free of LibTorch headers so that the
// program's main compiles fast.
#ifndef TRIALSHIM_EXAMPLES_DIGITS_TRAIN_H_
#define TRIALSHIM_EXAMPLES_DIGITS_TRAIN_H_

#include <memory>
#include <string>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace spdlog {
class logger;
}

namespace trialshim::digits {

struct RunContext {
  // The config tree's directory (the data defaults to ../data beside it).
  std::string config_dir;
  // The run directory (metrics.csv, checkpoints/, model.pt).
  std::string run_dir;
  std::shared_ptr<spdlog::logger> logger;
};

// Trains with the resolved, composed config. Cancelled after SIGTERM (the
// checkpoint is written); InvalidArgument for config errors.
Status Train(const config::Node& config, const RunContext& context);

}  // namespace trialshim::digits

#endif  // TRIALSHIM_EXAMPLES_DIGITS_TRAIN_H_
