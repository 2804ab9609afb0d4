// Optuna's samplers: which of Vertex's algorithms trialshim runs for each.
// The job writer (tuning/job_writer.h, its table) writes a Hydra sweep's
// sampler as that algorithm, and an app's -m (optuna_study.h) runs it; a
// file of its own, so that the `trialshim` binary does not link the study.
#ifndef TRIALSHIM_SEARCH_OPTUNA_SAMPLERS_H_
#define TRIALSHIM_SEARCH_OPTUNA_SAMPLERS_H_

#include <string_view>

#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

// Optuna's samplers as Vertex's algorithms (tuning/job_writer.h's table),
// which `trialshim sweep` and an app's -m run too: by _target_
// ("optuna.samplers.TPESampler"), or by the hydra/sweeper/sampler option
// ("tpe") when `target` is empty. nullptr for a sampler trialshim does not
// know.
struct OptunaSampler {
  const char* target;
  const char* option;
  Algorithm algorithm;
  const char* note;  // what Vertex lacks; nullptr: it has the same kind
};
const OptunaSampler* FindOptunaSampler(std::string_view target,
                                       std::string_view option);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_OPTUNA_SAMPLERS_H_
