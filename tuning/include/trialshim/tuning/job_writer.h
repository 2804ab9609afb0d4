// The job writer: a Hydra sweep as a Vertex HyperparameterTuningJob. Backs
// `trialshim job` (which prints the spec for `gcloud ai hp-tuning-jobs create
// --config`) and `trialshim sweep --config-path` (which runs it here).
//
// The sweep is the one `COMMAND -m OVERRIDE...` would run: the config
// composed from config_path/config_name with the overrides that are not
// sweeps, the sweeper it selects (Hydra's basic sweeper, or
// hydra-optuna-sweeper 1.2.0 with `override hydra/sweeper: optuna`), and the
// parameters as that sweeper reads hydra.sweeper.params followed by the
// command line's task overrides (config/sweepers.h).
// docs/hydra-sweep-to-vertex.md has the whole table; in short:
//
//  - Parameters. The Optuna sweeper's distributions: uniform ->
//    DOUBLE and int uniform -> INTEGER (UNIT_LINEAR_SCALE), log-uniform ->
//    UNIT_LOG_SCALE, a stepped range -> DISCRETE values (float ranges
//    written as decimals: 0.3, not 0.30000000000000004); choices of numbers
//    on a number key -> DISCRETE; anything else (strings, bools, config
//    groups, numbers on a key that is not a number) -> CATEGORICAL, each
//    value the string that makes trialshim pass the trial what Optuna would
//    (64 stays an int where the key is not a number). A basic-sweeper sweep,
//    or the Optuna GridSampler's, lists every value: GRID_SEARCH over
//    DISCRETE and CATEGORICAL. "+key" sweeps add --add-unknown to trialshim.
//  - Fixed overrides (not sweeps) and Hydra's own overrides other than the
//    sweeper's go in the container's args, as every job gets them, then
//    `hydra.mode=RUN` where the config sets MULTIRUN (else the trial would
//    start a sweep of its own).
//  - The metric: `metrics`, else optimized_metric (a string or a list),
//    else hypertune.tag or hypertune.monitor; one per objective of
//    hydra.sweeper.direction (or `directions`), in that order.
//  - maxTrialCount: n_trials (the GridSampler's: at most the grid; the
//    basic sweeper: the whole product); parallelTrialCount: n_jobs (basic:
//    1); the algorithm: TPESampler and GPSampler -> ALGORITHM_UNSPECIFIED
//    (Vertex's Bayesian optimization), RandomSampler -> RANDOM_SEARCH,
//    GridSampler and the basic sweeper -> GRID_SEARCH, QMCSampler ->
//    RANDOM_SEARCH; CMA-ES, NSGA-II and MOTPE -> ALGORITHM_UNSPECIFIED with
//    a note.
//  - trialJobSpec: workerPoolSpecs[0], one `machine_type` replica (the
//    primary; Vertex takes no more there), and with `replica_count` > 1
//    workerPoolSpecs[1] of the other replicas, the same machine and
//    container: `image_uri` with command [trialshim, --config-path, DIR,
//    --config-name, NAME, --, COMMAND..., --config-path, DIR,
//    --config-name, NAME] (the trainer's flags left out where COMMAND names
//    a config or runs Python, told by its words: the spec never depends on
//    what is installed here); baseOutputDirectory `output_dir`. The machine
//    type, its accelerator, a gs:// output_dir and replica_count >= 1 are
//    checked first (vertex_rules.h), the error naming job's flag.
//
// What Vertex can not express is an error naming the key: a sweep over list
// or dict values, a sweep of a key's deletion or package (~x, db@pkg), of
// Hydra's own config, a glob (the Optuna sweeper) or an interval (the basic
// sweeper), custom_search_space (Python code), an empty or mismatched
// metric list, more than 1000 DISCRETE values. A sampler option that is a
// Python object (constraints_func, ...) is a warning; what Vertex does
// differently (TPE's options, the seed, storage) is a note. The spec is then
// checked as `trialshim check` checks a file (check.h): its errors are the
// writer's errors and its warnings the writer's warnings.
//
// Library code: nothing is printed.
#ifndef TRIALSHIM_TUNING_JOB_WRITER_H_
#define TRIALSHIM_TUNING_JOB_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/tuning/job_spec.h"

namespace trialshim::tuning {

struct HydraSweepRequest {
  // The config directory and primary config name (required), as the trial
  // names them: relative paths mean the image's working directory.
  std::string config_path;
  std::string config_name;
  // The multirun's overrides, sweeps included. Default: none.
  std::vector<std::string> overrides;
  // COMMAND: the trainer and its own arguments (required).
  std::vector<std::string> command;
  // Metric ids, one per objective. Default: from the config (above).
  std::vector<std::string> metrics;
  // "minimize" or "maximize" per objective, instead of
  // hydra.sweeper.direction. Default: the sweeper's (the basic sweeper has
  // none: the goal is left unset, which Vertex reads as MAXIMIZE).
  std::vector<std::string> directions;
  // containerSpec.imageUri. Default: empty, left out (a spec for `trialshim
  // sweep`; gcloud needs one).
  std::string image_uri;
  // machineSpec.machineType. Default: n1-standard-4.
  std::string machine_type = "n1-standard-4";
  // machineSpec.acceleratorType/acceleratorCount. Default: none, but a
  // machine type that comes with GPUs (a2-highgpu-1g, g2-standard-4, ...)
  // gets them written; a type without a count gets the machine type's
  // number, else 1.
  Accelerator accelerator;
  // replicaCount. Default: 1.
  int64_t replica_count = 1;
  // baseOutputDirectory.outputUriPrefix ("gs://BUCKET/PATH"). Default:
  // empty, left out.
  std::string output_dir;
  // displayName. Default: hydra.sweeper.study_name, else the config name.
  std::string display_name;
};

struct HydraSweepJob {
  JobSpec spec;
  // What Vertex does differently from the Hydra sweep (the YAML's header).
  std::vector<std::string> notes;
  // What the user should fix or know.
  std::vector<std::string> warnings;
  // The sampler's seed (hydra.sweeper.sampler.seed), or 0.
  uint64_t seed = 0;
};

// The job. InvalidArgument naming the key for what Vertex can not express,
// for a config that does not compose, and for every error `trialshim check`
// finds in the spec.
StatusOr<HydraSweepJob> HydraSweepToJob(const HydraSweepRequest& request);

// The spec as the YAML `gcloud ai hp-tuning-jobs create --config` takes,
// each note a comment line at the top. `trialshim check` reads it back as
// `spec` (job_spec.h).
std::string JobSpecYaml(const JobSpec& spec,
                        const std::vector<std::string>& notes = {});

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_JOB_WRITER_H_
