// The job spec's own rules (check.h lists them). Most are stated in the
// field comments of googleapis/googleapis google/cloud/aiplatform/v1/
// study.proto, hyperparameter_tuning_job.proto and custom_job.proto; checked
// here, a mistake costs no paid trial. Each check names its field.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "check_internal.h"
#include "trialshim/base/spell.h"
#include "trialshim/config/command_line.h"
#include "trialshim/search/search.h"
#include "trialshim/tuning/vertex_rules.h"

namespace trialshim::tuning::internal {
namespace {

class SpecChecker : public CheckerBase {
 public:
  using CheckerBase::CheckerBase;

  void Run() {
    CheckCounts();
    CheckMetrics();
    CheckParameters();
    CheckAlgorithm();
    CheckOutputs();
    CheckPools();
  }

 private:
  // hyperparameter_tuning_job.proto: maxTrialCount and parallelTrialCount
  // are REQUIRED counts of trials; maxFailedTrialCount may be 0 ("Vertex AI
  // decides how many Trials must fail").
  void CheckCounts() {
    auto at_least = [&](const std::optional<int64_t>& v, const Mark& m,
                        const char* field, int64_t min) {
      if (v && *v < min) {
        Error(m, std::string(field) + " must be >= " + std::to_string(min) +
                     ", got " + std::to_string(*v));
      }
    };
    at_least(job_.max_trial_count, job_.max_trial_mark, "maxTrialCount", 1);
    at_least(job_.parallel_trial_count, job_.parallel_mark,
             "parallelTrialCount", 1);
    at_least(job_.max_failed_trial_count, job_.max_failed_mark,
             "maxFailedTrialCount", 0);
    // The only size limit found documented (docs/vertex-values.md, "Sizes"):
    // "Maximum number of trials in a study: 1,000", AI Platform Vizier's
    // quotas (https://cloud.google.com/ai-platform/optimizer/docs/quotas),
    // the service a tuning job's study runs on. Vertex's reference gives no
    // limit for maxTrialCount, parallelTrialCount or the parameter count.
    constexpr int64_t kMaxStudyTrials = 1000;
    if (job_.max_trial_count && *job_.max_trial_count > kMaxStudyTrials) {
      Warning(job_.max_trial_mark,
              "maxTrialCount " + std::to_string(*job_.max_trial_count) +
                  " is above 1000, the documented maximum of trials in a "
                  "Vizier study (which a tuning job runs); Vertex may refuse "
                  "the job");
    }
    if (!job_.max_trial_count) {
      Warning(job_.mark,
              "no maxTrialCount: gcloud runs 1 trial unless "
              "--max-trial-count is given");
    }
    if (job_.max_trial_count && job_.parallel_trial_count &&
        *job_.parallel_trial_count > *job_.max_trial_count &&
        *job_.max_trial_count >= 1) {
      Error(job_.parallel_mark, "parallelTrialCount (" +
                                    std::to_string(*job_.parallel_trial_count) +
                                    ") is larger than maxTrialCount (" +
                                    std::to_string(*job_.max_trial_count) +
                                    ")");
    }
  }

  // StudySpec.MetricSpec (study.proto): metric_id "must be unique amongst
  // all MetricSpecs"; an unset goal, GOAL_TYPE_UNSPECIFIED, "will default to
  // maximize", which is what makes a loss without a goal worth a warning.
  // Which names look like losses or scores is our heuristic.
  void CheckMetrics() {
    if (job_.metrics.empty()) {
      Error(job_.metrics_mark.known() ? job_.metrics_mark : job_.study_mark,
            "studySpec has no metrics: Vertex needs the metricId the trials "
            "report");
      return;
    }
    std::set<std::string> seen;
    for (const MetricSpec& m : job_.metrics) {
      CheckId(m.id, m.id_mark, "metricId");
      if (!m.id.empty() && !seen.insert(m.id).second) {
        Error(m.id_mark, "duplicate metricId '" + m.id + "'");
      }
      std::string lower = m.id;
      for (char& c : lower) c = static_cast<char>(std::tolower(c));
      bool lossy = lower.find("loss") != std::string::npos ||
                   lower.find("error") != std::string::npos ||
                   lower.find("rmse") != std::string::npos;
      bool scored = lower.find("acc") != std::string::npos ||
                    lower.find("auc") != std::string::npos ||
                    lower.find("f1") != std::string::npos;
      Goal goal = m.goal == Goal::kUnspecified ? Goal::kMaximize : m.goal;
      // The fix: a spec file's goal, or for a Hydra sweep written as a job
      // (no file; job_writer.h) the direction, which hydra-optuna-sweeper
      // defaults to minimize.
      auto fix = [&](const char* goal_text) {
        std::string lower_goal = goal_text;
        for (char& c : lower_goal) c = static_cast<char>(std::tolower(c));
        return job_.file.empty()
                   ? " (hydra.sweeper.direction): if it should be " +
                         lower_goal + "d, give --direction " + lower_goal
                   : ": if it should be " + lower_goal +
                         "d, set goal: " + goal_text;
      };
      if (lossy && goal == Goal::kMaximize) {
        Warning(m.goal_mark.known() ? m.goal_mark : m.id_mark,
                "metric '" + m.id + "' looks like a loss but the goal is " +
                    (m.goal == Goal::kUnspecified
                         ? std::string("unset (which means MAXIMIZE)")
                         : std::string("MAXIMIZE")) +
                    fix("MINIMIZE"));
      } else if (scored && goal == Goal::kMinimize) {
        Warning(m.goal_mark, "metric '" + m.id +
                                 "' looks like a score but the goal is "
                                 "MINIMIZE" +
                                 fix("MAXIMIZE"));
      } else if (m.goal == Goal::kUnspecified) {
        Note(m.id_mark, "metric '" + m.id + "' has no goal; Vertex maximizes");
      }
    }
    if (job_.metrics.size() > 1) {
      Note(job_.metrics[1].mark,
           "several metrics: `trialshim sweep` searches for their Pareto front");
    }
  }

  // metric_id and parameter_id "must not contain whitespaces" (study.proto).
  // A parameterId also becomes the trial's --<id>=<value> argument.
  void CheckId(const std::string& id, const Mark& m, const char* what) {
    if (id.empty()) {
      Error(m, std::string(what) + " is empty");
      return;
    }
    for (char c : id) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        Error(m, std::string(what) + " '" + id +
                     "' contains whitespace, which Vertex forbids");
        return;
      }
    }
  }

  void CheckParameters() {
    if (job_.parameters.empty()) {
      Error(
          job_.parameters_mark.known() ? job_.parameters_mark : job_.study_mark,
          "studySpec has no parameters");
    }
    std::set<std::string> seen;
    for (const ParameterSpec& p : job_.parameters) CheckParameter(p, &seen);
  }

  void CheckParameter(const ParameterSpec& p, std::set<std::string>* seen) {
    CheckId(p.id, p.id_mark, "parameterId");
    if (!p.id.empty() && !seen->insert(p.id).second) {
      Error(p.id_mark, "duplicate parameterId '" + p.id + "'");
    }
    CheckNotHydraFlag(p);
    // ParameterSpec.ScaleType: for UNIT_LOG_SCALE and UNIT_REVERSE_LOG_SCALE
    // "the entire feasible space must be strictly positive".
    bool log = p.scale == ScaleType::kLog || p.scale == ScaleType::kReverseLog;
    const std::string name = "'" + p.id + "'";
    if (p.has_value_spec) switch (p.type) {
        case ParameterType::kDouble:
        case ParameterType::kInteger:
          // Without both bounds the parser has already said what is wrong.
          if (p.min_mark.known() && p.max_mark.known() &&
              !(p.min_value < p.max_value)) {
            Error(p.max_mark.known() ? p.max_mark : p.value_spec_mark,
                  "parameter " + name + ": minValue (" +
                      FormatNumber(p.min_value) +
                      ") must be less than maxValue (" +
                      FormatNumber(p.max_value) + ")");
          }
          if (log && p.min_value <= 0) {
            Error(p.min_mark.known() ? p.min_mark : p.scale_mark,
                  "parameter " + name + ": " + ScaleTypeName(p.scale) +
                      " needs a strictly positive range, but minValue is " +
                      FormatNumber(p.min_value));
          }
          break;
        case ParameterType::kDiscrete:
          CheckDiscrete(p, log);
          break;
        case ParameterType::kCategorical:
          CheckCategorical(p);
          break;
      }
    for (const ConditionalParameterSpec& c : p.conditionals) {
      CheckConditional(p, c);
      CheckParameter(c.parameter, seen);
    }
  }

  // trialshim passes Hydra's own flags through untouched (translate.h), so
  // a parameterId that is one of them reaches Hydra as that flag.
  void CheckNotHydraFlag(const ParameterSpec& p) {
    if (config::FindHydraFlag("--" + p.id) == nullptr) return;
    std::vector<std::string> samples = Samples(p);
    Error(p.id_mark,
          "parameterId '" + p.id +
              "' is one of Hydra's flags: the trial "
              "argument --" +
              p.id + "=" + (samples.empty() ? "..." : samples[0]) +
              " would be read by Hydra as its --" + p.id +
              " flag, not as an override; rename the parameter (e.g. "
              "'model." +
              p.id + "', or '" + p.id + "_' with --map " + p.id + "_=" + p.id +
              " in the trialshim command)");
  }

  // DiscreteValueSpec.values (study.proto): "in increasing order and at
  // least 1e-10 apart" and "not more than 1,000 values".
  void CheckDiscrete(const ParameterSpec& p, bool log) {
    const std::string name = "'" + p.id + "'";
    const auto& v = p.discrete_values;
    if (v.empty()) {
      Error(p.value_spec_mark, "parameter " + name + " has no values");
    }
    if (v.size() > 1000) {
      Error(p.value_spec_mark, "parameter " + name + " has " +
                                   std::to_string(v.size()) +
                                   " discrete values; at most 1000 allowed");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const Mark& m =
          i < p.value_marks.size() ? p.value_marks[i] : p.value_spec_mark;
      if (!std::isfinite(v[i])) continue;  // the parser reported it
      if (log && v[i] <= 0) {
        Error(m, "parameter " + name + ": " + ScaleTypeName(p.scale) +
                     " needs strictly positive values, got " +
                     FormatNumber(v[i]));
      }
      if (i > 0 && std::isfinite(v[i - 1])) {
        if (v[i] <= v[i - 1]) {
          Error(m, "parameter " + name +
                       ": discrete values must be increasing, but " +
                       FormatNumber(v[i]) + " follows " +
                       FormatNumber(v[i - 1]));
        } else if (v[i] - v[i - 1] < kDiscreteEpsilon) {
          Error(m, "parameter " + name +
                       ": discrete values must be at least 1e-10 apart (" +
                       FormatNumber(v[i - 1]) + " and " + FormatNumber(v[i]) +
                       ")");
        }
      }
    }
  }

  void CheckCategorical(const ParameterSpec& p) {
    const std::string name = "'" + p.id + "'";
    if (p.categorical_values.empty()) {
      Error(p.value_spec_mark, "parameter " + name + " has no values");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < p.categorical_values.size(); ++i) {
      const Mark& m =
          i < p.value_marks.size() ? p.value_marks[i] : p.value_spec_mark;
      if (!seen.insert(p.categorical_values[i]).second) {
        Error(m, "parameter " + name + ": duplicate value '" +
                     p.categorical_values[i] + "'");
      }
    }
    // ParameterSpec.scale_type: "Leave unset for CATEGORICAL parameters."
    if (p.scale != ScaleType::kUnspecified) {
      Error(p.scale_mark, "parameter " + name +
                              ": scaleType must be unset for CATEGORICAL "
                              "parameters");
    }
  }

  // ConditionalParameterSpec (study.proto): each parent_value_condition
  // matches a parent of its own type, and its values are the parent's:
  // IntValueCondition's "must lie in integer_value_spec",
  // DiscreteValueCondition's and CategoricalValueCondition's "must exist in"
  // the parent's value spec (a DISCRETE one within kDiscreteEpsilon, as
  // they are matched). A value outside would never activate the child.
  void CheckConditional(const ParameterSpec& parent,
                        const ConditionalParameterSpec& c) {
    auto mismatch = [&](const char* field, ParameterType want) {
      Error(c.mark, std::string(field) + " needs a " + ParameterTypeName(want) +
                        " parent, but '" + parent.id + "' is " +
                        ParameterTypeName(parent.type));
    };
    if (!c.parent_int_values.empty()) {
      if (parent.type != ParameterType::kInteger) {
        mismatch("parentIntValues", ParameterType::kInteger);
      } else {
        CheckParentInts(parent, c);
      }
    }
    if (!c.parent_discrete_values.empty()) {
      if (parent.type != ParameterType::kDiscrete) {
        mismatch("parentDiscreteValues", ParameterType::kDiscrete);
      } else {
        CheckParentDiscretes(parent, c);
      }
    }
    if (!c.parent_categorical_values.empty()) {
      if (parent.type != ParameterType::kCategorical) {
        mismatch("parentCategoricalValues", ParameterType::kCategorical);
      } else {
        for (const std::string& v : c.parent_categorical_values) {
          if (std::find(parent.categorical_values.begin(),
                        parent.categorical_values.end(),
                        v) == parent.categorical_values.end()) {
            Error(c.mark, "parentCategoricalValues: '" + v +
                              "' is not a value of '" + parent.id + "'" +
                              DidYouMean(v, parent.categorical_values));
          }
        }
      }
    }
  }

  void CheckParentInts(const ParameterSpec& parent,
                       const ConditionalParameterSpec& c) {
    if (!parent.has_value_spec || !(parent.min_value <= parent.max_value)) {
      return;  // reported
    }
    for (int64_t v : c.parent_int_values) {
      const auto d = static_cast<double>(v);
      if (d < parent.min_value || d > parent.max_value) {
        Error(c.mark, "parentIntValues: " + std::to_string(v) +
                          " is outside the range of '" + parent.id + "' (" +
                          FormatNumber(parent.min_value) + " to " +
                          FormatNumber(parent.max_value) +
                          "), so the child would never be active");
      }
    }
  }

  void CheckParentDiscretes(const ParameterSpec& parent,
                            const ConditionalParameterSpec& c) {
    const std::vector<double>& values = parent.discrete_values;
    if (values.empty()) return;  // reported
    for (double v : c.parent_discrete_values) {
      auto nearest = std::min_element(
          values.begin(), values.end(), [v](double a, double b) {
            return std::fabs(a - v) < std::fabs(b - v);
          });
      if (std::fabs(*nearest - v) <= kDiscreteEpsilon) continue;
      Error(c.mark, "parentDiscreteValues: " + FormatNumber(v) +
                        " is not a value of '" + parent.id +
                        "' (did you mean " + FormatNumber(*nearest) + "?)");
    }
  }

  void CheckAlgorithm() {
    if (job_.algorithm == Algorithm::kUnspecified) {
      Note(job_.algorithm_mark,
           "ALGORITHM_UNSPECIFIED is Bayesian optimization on Vertex; "
           "`trialshim sweep` runs its own (Gaussian process, a "
           "confidence bound in a trust region), so its trials are not "
           "Vertex's");
    }
    if (job_.algorithm != Algorithm::kGridSearch) return;
    // study.proto, Algorithm.GRID_SEARCH: "all parameters must be INTEGER,
    // CATEGORICAL, or DISCRETE".
    bool gridable = true;
    // Conditional children are part of the grid (search.h), so they too
    // must be countable.
    std::function<void(const ParameterSpec&)> check =
        [&](const ParameterSpec& p) {
          if (p.has_value_spec && p.type == ParameterType::kDouble) {
            gridable = false;
            Error(p.id_mark,
                  "GRID_SEARCH needs INTEGER, DISCRETE or CATEGORICAL "
                  "parameters; '" +
                      p.id +
                      "' is DOUBLE (use discreteValueSpec, or RANDOM_SEARCH)");
          }
          for (const ConditionalParameterSpec& c : p.conditionals) {
            check(c.parameter);
          }
        };
    for (const ParameterSpec& p : job_.parameters) check(p);
    if (!gridable) return;
    StatusOr<uint64_t> size = GridSize(job_.parameters);
    if (!size.ok()) return;
    int64_t max = job_.MaxTrials();
    if (*size < static_cast<uint64_t>(max)) {
      Warning(job_.max_trial_mark,
              "the grid has " + std::to_string(*size) +
                  " points but maxTrialCount is " + std::to_string(max) +
                  "; Vertex may repeat points, `trialshim sweep` stops at " +
                  std::to_string(*size));
    } else if (*size > static_cast<uint64_t>(max)) {
      Warning(job_.max_trial_mark, "the grid has " + std::to_string(*size) +
                                       " points but maxTrialCount is " +
                                       std::to_string(max) +
                                       "; only part of the grid will be tried");
    }
  }

  // What Vertex refuses in the pools (vertex_rules.h): a primary of more
  // than one replica, a machine type it does not have, accelerators the
  // machine type does not take. The primary rule is Vertex's "Distributed
  // training" page: use the first worker pool only for the primary replica
  // and set its replicaCount to 1.
  void CheckPools() {
    for (size_t i = 0; i < job_.worker_pools.size(); ++i) {
      const WorkerPoolSpec& pool = job_.worker_pools[i];
      if (pool.machine_type.empty()) continue;
      const std::string where = "workerPoolSpecs[" + std::to_string(i) + "]: ";
      Status known = CheckMachineType(pool.machine_type);
      if (!known.ok()) {
        Error(
            pool.machine_type_mark.known() ? pool.machine_type_mark : pool.mark,
            where + known.message());
        continue;
      }
      CheckPoolAccelerator(pool, where);
    }
    if (job_.worker_pools.empty()) return;
    const WorkerPoolSpec& primary = job_.worker_pools[0];
    if (primary.replica_count == kPrimaryReplicas) return;
    std::string fix =
        primary.replica_count > kPrimaryReplicas
            ? "; put the other " +
                  std::to_string(primary.replica_count - kPrimaryReplicas) +
                  " in workerPoolSpecs[1] (the workers), with the same "
                  "machineSpec and containerSpec (docs/distributed.md)"
            : "";
    Error(primary.replica_mark.known() ? primary.replica_mark : primary.mark,
          "workerPoolSpecs[0] is the primary replica: Vertex requires "
          "replicaCount 1 there, got " +
              std::to_string(primary.replica_count) + fix);
  }

  void CheckPoolAccelerator(const WorkerPoolSpec& pool,
                            const std::string& where) {
    const Accelerator& a = pool.accelerator;
    std::optional<Accelerator> attached =
        AttachedAccelerator(pool.machine_type);
    if (a.type.empty() && a.count == 0) {
      // Vertex's own example of an A2 trial names its GPU (MachineSpec's
      // acceleratorCount is "the number of accelerators to attach").
      if (attached) {
        Warning(pool.machine_type_mark,
                where + pool.machine_type + " comes with " +
                    std::to_string(attached->count) + " " + attached->type +
                    " that the spec does not ask for (add acceleratorType: " +
                    attached->type + " and acceleratorCount: " +
                    std::to_string(attached->count) + " to its machineSpec)");
      }
      return;
    }
    if (a.type.empty()) {
      Error(pool.accelerator_mark,
            where + "acceleratorCount without acceleratorType: name the GPU " +
                (attached ? "(" + attached->type + ")" : "or TPU"));
      return;
    }
    Status ok = CheckAccelerator(pool.machine_type, a);
    if (!ok.ok()) Error(pool.accelerator_mark, where + ok.message());
  }

  // CustomJobSpec.base_output_directory (custom_job.proto): only "when this
  // field is set" does a trial get AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and
  // AIP_TENSORBOARD_LOG_DIR under <base_output_directory>/<trial_id>/. The
  // tensorboard rule is the API's error message, recorded with its source
  // in docs/vertex-values.md.
  void CheckOutputs() {
    if (job_.base_output_directory) {
      Status gcs = CheckOutputUriPrefix(*job_.base_output_directory);
      if (!gcs.ok()) {
        Error(job_.output_uri_mark.known() ? job_.output_uri_mark
                                           : job_.base_output_mark,
              "outputUriPrefix " + gcs.message());
      }
    }
    if (!job_.base_output_directory) {
      Warning(job_.trial_job_mark,
              "trialJobSpec has no baseOutputDirectory: Vertex then sets no "
              "AIP_MODEL_DIR, AIP_CHECKPOINT_DIR or AIP_TENSORBOARD_LOG_DIR, "
              "so checkpoints and the model die with the VM (add "
              "baseOutputDirectory: {outputUriPrefix: gs://BUCKET/PATH})");
    }
    if (!job_.tensorboard.empty() && job_.service_account.empty()) {
      Error(job_.tensorboard_mark,
            "trialJobSpec.tensorboard needs trialJobSpec.serviceAccount: "
            "Vertex refuses the job (\"service_account must be specified "
            "when uploading to TensorBoard\"); add serviceAccount: "
            "NAME@PROJECT.iam.gserviceaccount.com, an account that may "
            "write to the Tensorboard");
    }
  }
};

}  // namespace

void CheckSpecRules(const JobSpec& job, const CheckOptions& options,
                    std::vector<Diagnostic>* diagnostics) {
  SpecChecker(job, options, diagnostics).Run();
}

}  // namespace trialshim::tuning::internal
