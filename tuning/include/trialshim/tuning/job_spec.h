// JobSpec: the HyperparameterTuningJob YAML given to
// `gcloud ai hp-tuning-jobs create --config`, parsed with every field's
// file:line:col so that `trialshim check` can point at it.
//
// Field names are camelCase as in the Vertex API (gcloud refuses snake_case:
// its apitools messages know only the JSON names). gcloud loads the file into
// the HyperparameterTuningJob message and refuses unknown fields, so the
// parser does too, at every level it models, with a did-you-mean for the
// nearest field. Enum values (goal, scaleType, algorithm, ...) are checked
// the same way. Fields the API has but a local run has no use for (machine
// specs, network, labels, ...) are accepted and kept only as marks; the few
// v1 fields trialshim does not know (machineSpec.gpuPartitionSize,
// workerPoolSpecs[].lustreMounts, output-only ones) are warnings.
//
// Parsing is tolerant: it records every problem it finds as a Diagnostic and
// goes on, so one run of `check` lists them all. The semantic rules that go
// beyond the shape of the file (min < max, log scales, counts, ...) live in
// check.h. Everything here is pure; only LoadJobSpecFile touches the disk.
// The studySpec types the search engine reads (ParameterSpec, Goal, ...)
// are in search/study_spec.h, below this library.
#ifndef TRIALSHIM_TUNING_JOB_SPEC_H_
#define TRIALSHIM_TUNING_JOB_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/search/study_spec.h"
#include "trialshim/tuning/vertex_rules.h"

namespace trialshim::tuning {

// One problem found in a job spec, printed as
// "file:line:col: error: message".
struct Diagnostic {
  enum class Severity { kError, kWarning, kNote };
  Severity severity = Severity::kError;
  config::Mark mark;
  std::string message;

  // "file:line:col: error: message" (the location is left out if unknown).
  std::string ToString() const;
  static const char* SeverityName(Severity s);  // "error", "warning", "note"
};

bool HasErrors(const std::vector<Diagnostic>& diagnostics);

// API names: "DOUBLE", "UNIT_LOG_SCALE", "GRID_SEARCH", "MINIMIZE", ...
const char* ParameterTypeName(ParameterType t);
const char* ScaleTypeName(ScaleType s);
const char* AlgorithmName(Algorithm a);
const char* GoalName(Goal g);

struct MetricSpec {
  std::string id;
  Goal goal = Goal::kUnspecified;  // unspecified means MAXIMIZE
  config::Mark mark, id_mark, goal_mark;
};

struct ContainerSpec {
  std::string image_uri;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  config::Mark mark, command_mark, args_mark;
  std::vector<config::Mark> command_marks, args_marks;  // one per token
};

struct WorkerPoolSpec {
  config::Mark mark;
  bool has_container = false;
  bool has_python_package = false;
  ContainerSpec container;
  std::string machine_type;  // machineSpec.machineType
  // machineSpec.acceleratorType/acceleratorCount; type "" when neither is
  // given, count 0 when only the type is.
  Accelerator accelerator;
  int64_t replica_count = 1;
  config::Mark machine_type_mark, accelerator_mark, replica_mark;
};

struct JobSpec {
  std::string file;  // as given to LoadJobSpecFile ("" from a Node)
  config::Mark mark;

  std::string display_name;
  // Unset counts are 1, as gcloud makes them.
  std::optional<int64_t> max_trial_count;
  std::optional<int64_t> parallel_trial_count;
  // 0 (or unset) lets Vertex decide; the local sweep then has no limit.
  std::optional<int64_t> max_failed_trial_count;
  config::Mark max_trial_mark, parallel_mark, max_failed_mark;

  // studySpec
  config::Mark study_mark;
  std::vector<MetricSpec> metrics;
  config::Mark metrics_mark;
  std::vector<ParameterSpec> parameters;
  config::Mark parameters_mark;
  Algorithm algorithm = Algorithm::kUnspecified;
  config::Mark algorithm_mark;
  MeasurementSelection measurement_selection =
      MeasurementSelection::kUnspecified;
  StoppingRule stopping = StoppingRule::kNone;
  // useElapsedDuration: compare trials at the same elapsed time rather
  // than at the same global_step.
  bool stopping_use_elapsed = false;
  config::Mark stopping_mark;

  // trialJobSpec
  config::Mark trial_job_mark;
  std::vector<WorkerPoolSpec> worker_pools;
  config::Mark worker_pools_mark;
  std::optional<std::string> base_output_directory;  // outputUriPrefix
  config::Mark base_output_mark, output_uri_mark;
  std::string tensorboard;  // a Tensorboard resource name, or empty
  config::Mark tensorboard_mark;
  std::string service_account;  // empty: the Custom Code Service Agent
  // scheduling.timeout ("86400s"), the limit of one trial; 0 if unset.
  double trial_timeout_seconds = 0;
  config::Mark timeout_mark;

  int64_t MaxTrials() const { return max_trial_count.value_or(1); }
  int64_t ParallelTrials() const { return parallel_trial_count.value_or(1); }
};

// Reads a job spec from a YAML tree (as LoadYamlFile gives it), appending
// every problem to *diagnostics. The result is as complete as the input
// allows even when there are errors.
JobSpec ParseJobSpec(const config::Node& root,
                     std::vector<Diagnostic>* diagnostics);

// Loads and parses `path`. NotFound / IOError for an unreadable file and
// InvalidArgument for YAML that does not parse; shape problems go to
// *diagnostics (the spec is then still returned).
StatusOr<JobSpec> LoadJobSpecFile(const std::string& path,
                                  std::vector<Diagnostic>* diagnostics);

// Parses a duration as the API writes it ("86400s", "1.5s"; also "90m",
// "2h" for people). InvalidArgument otherwise.
StatusOr<double> ParseDurationSeconds(const std::string& text);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_JOB_SPEC_H_
