// The job spec's own rules (check.h lists them). Most are stated in the
// field comments of googleapis/googleapis google/cloud/aiplatform/v1/
// study.proto, hyperparameter_tuning_job.proto and custom_job.proto; checked
// here, a mistake costs no paid trial. Each check names its field. The
// parameters and the algorithm are check_parameters.cc's.
#include <cctype>
#include <optional>
#include <set>
#include <string>

#include "check_internal.h"
#include "trialshim/tuning/vertex_rules.h"

namespace trialshim::tuning::internal {
namespace {

class SpecChecker : public CheckerBase {
 public:
  using CheckerBase::CheckerBase;

  void Run() {
    CheckCounts();
    CheckMetrics();
    CheckParameterRules(job_, options_, diags_);  // check_parameters.cc
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
