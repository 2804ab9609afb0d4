// The trainer's log (spdlog) through an app's Logger (trialshim/app), so a
// trainer run by trialshim::app::Run logs in Hydra's layout to the handlers
// hydra.job_logging configures, beside the task's own lines.
#ifndef TRIALSHIM_TRAINER_APP_LOG_H_
#define TRIALSHIM_TRAINER_APP_LOG_H_

#include <memory>

#include "trialshim/app/logging.h"

namespace spdlog {
class logger;
}

namespace trialshim::trainer {

// A spdlog logger whose lines go to `log` (which must outlive it) at the
// matching level; set it as TrainerOptions::logger.
std::shared_ptr<spdlog::logger> SpdlogFor(app::Logger* log);

}  // namespace trialshim::trainer

#endif  // TRIALSHIM_TRAINER_APP_LOG_H_
