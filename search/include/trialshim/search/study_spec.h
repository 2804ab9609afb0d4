// StudySpec's search space and goals: the part of a Vertex AI
// HyperparameterTuningJob's studySpec that decides which values a trial
// gets (the parameters, their scales, the algorithm, the goal) and how its
// measurements are judged (measurementSelectionType, the stopping rule).
//
// These are the search engine's inputs. The job spec parser
// (tuning/job_spec.h) fills them from a YAML file, keeping each field's
// file:line:col for `trialshim check`; an app's -m (optuna_study.h) builds
// them from the Optuna sweeper's config, with empty marks. Plain data.
#ifndef TRIALSHIM_SEARCH_STUDY_SPEC_H_
#define TRIALSHIM_SEARCH_STUDY_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/config/node.h"

namespace trialshim::tuning {

enum class ParameterType { kDouble, kInteger, kDiscrete, kCategorical };
enum class ScaleType { kUnspecified, kLinear, kLog, kReverseLog };
enum class Algorithm { kUnspecified, kGridSearch, kRandomSearch };
enum class Goal { kUnspecified, kMaximize, kMinimize };
enum class MeasurementSelection { kUnspecified, kLast, kBest };
// studySpec's automatedStoppingSpec, a oneof: decayCurveStoppingSpec or
// medianAutomatedStoppingSpec (early_stopping.h says what each does).
enum class StoppingRule { kNone, kDecayCurve, kMedian };

// study.proto's tolerance for DISCRETE values: a discreteValueSpec's values
// are "at least 1e-10 apart", and a DiscreteValueCondition matches "within"
// it ("The Epsilon of the value matching is 1e-10").
inline constexpr double kDiscreteEpsilon = 1e-10;

struct ConditionalParameterSpec;

// studySpec.parameters[i]. Exactly one of the *ValueSpec fields is set in a
// valid spec; `type` says which one was found first.
struct ParameterSpec {
  std::string id;
  config::Mark mark;     // the list item
  config::Mark id_mark;  // the parameterId value
  ParameterType type = ParameterType::kDouble;
  bool has_value_spec = false;
  config::Mark value_spec_mark;  // the *ValueSpec key's value

  // DOUBLE and INTEGER bounds (INTEGER bounds are integral).
  double min_value = 0;
  double max_value = 0;
  config::Mark min_mark, max_mark;
  // DISCRETE values (doubles, as the API has them) or CATEGORICAL values.
  std::vector<double> discrete_values;
  std::vector<std::string> categorical_values;
  std::vector<config::Mark> value_marks;  // one per value, either kind

  ScaleType scale = ScaleType::kUnspecified;
  config::Mark scale_mark;

  std::vector<ConditionalParameterSpec> conditionals;
};

// conditionalParameterSpecs[i]: `parameter` is only active when the parent
// takes one of the listed values.
struct ConditionalParameterSpec {
  config::Mark mark;
  std::vector<int64_t> parent_int_values;
  std::vector<double> parent_discrete_values;
  std::vector<std::string> parent_categorical_values;
  ParameterSpec parameter;
};

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_STUDY_SPEC_H_
