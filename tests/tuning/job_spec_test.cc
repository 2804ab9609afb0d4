// Parsing of the gcloud HyperparameterTuningJob YAML: every field the
// reference example has, and unknown fields at every level with a location
// and a did-you-mean.
#include "trialshim/tuning/job_spec.h"

#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::tuning {
namespace {

// The example of vertex-contract.md section 5.
const char kExample[] = R"(displayName: shim-hpt
maxTrialCount: 24
parallelTrialCount: 4
maxFailedTrialCount: 6
studySpec:
  metrics:
  - metricId: val_loss
    goal: MINIMIZE
  parameters:
  - parameterId: optimizer.lr
    doubleValueSpec: {minValue: 1.0e-5, maxValue: 1.0e-2}
    scaleType: UNIT_LOG_SCALE
  - parameterId: data.batch_size
    integerValueSpec: {minValue: 16, maxValue: "256"}
    scaleType: UNIT_LINEAR_SCALE
  - parameterId: model.width
    discreteValueSpec: {values: [64, 128, 256]}
    scaleType: UNIT_LINEAR_SCALE
  - parameterId: optimizer.name
    categoricalValueSpec: {values: [adam, sgd]}
  algorithm: ALGORITHM_UNSPECIFIED
  measurementSelectionType: BEST_MEASUREMENT
trialJobSpec:
  baseOutputDirectory:
    outputUriPrefix: gs://my-bucket/hpt/run-001
  scheduling:
    timeout: 86400s
  workerPoolSpecs:
  - machineSpec:
      machineType: a2-highgpu-1g
      acceleratorType: NVIDIA_TESLA_A100
      acceleratorCount: 1
    replicaCount: 1
    diskSpec: {bootDiskType: pd-ssd, bootDiskSizeGb: 200}
    containerSpec:
      imageUri: us-central1-docker.pkg.dev/my-proj/train/trainer:1.0
      command: ["/usr/local/bin/trial-shim"]
      args: ["experiment=base"]
      env:
      - {name: LOG_LEVEL, value: info}
)";

JobSpec Parse(const std::string& text, std::vector<Diagnostic>* diags) {
  StatusOr<config::Node> root = config::LoadYamlString(text, "job.yaml");
  EXPECT_OK(root);
  return ParseJobSpec(root.ok() ? *root : config::Node(), diags);
}

TEST(JobSpecTest, ParsesTheReferenceExample) {
  std::vector<Diagnostic> diags;
  JobSpec job = Parse(kExample, &diags);
  for (const Diagnostic& d : diags) ADD_FAILURE() << d.ToString();
  EXPECT_EQ(job.display_name, "shim-hpt");
  EXPECT_EQ(job.MaxTrials(), 24);
  EXPECT_EQ(job.ParallelTrials(), 4);
  EXPECT_EQ(job.max_failed_trial_count.value_or(-1), 6);
  ASSERT_EQ(job.metrics.size(), 1u);
  EXPECT_EQ(job.metrics[0].id, "val_loss");
  EXPECT_EQ(job.metrics[0].goal, Goal::kMinimize);
  ASSERT_EQ(job.parameters.size(), 4u);
  EXPECT_EQ(job.parameters[0].type, ParameterType::kDouble);
  EXPECT_EQ(job.parameters[0].min_value, 1e-5);
  EXPECT_EQ(job.parameters[0].scale, ScaleType::kLog);
  EXPECT_EQ(job.parameters[0].id_mark.line, 10);
  EXPECT_EQ(job.parameters[1].type, ParameterType::kInteger);
  EXPECT_EQ(job.parameters[1].max_value, 256) << "int64 as a JSON string";
  EXPECT_EQ(job.parameters[2].discrete_values,
            (std::vector<double>{64, 128, 256}));
  EXPECT_EQ(job.parameters[3].categorical_values,
            (std::vector<std::string>{"adam", "sgd"}));
  EXPECT_EQ(job.algorithm, Algorithm::kUnspecified);
  EXPECT_EQ(job.measurement_selection, MeasurementSelection::kBest);
  EXPECT_EQ(job.base_output_directory.value_or(""),
            "gs://my-bucket/hpt/run-001");
  EXPECT_EQ(job.trial_timeout_seconds, 86400);
  ASSERT_EQ(job.worker_pools.size(), 1u);
  const ContainerSpec& c = job.worker_pools[0].container;
  EXPECT_EQ(c.command, std::vector<std::string>{"/usr/local/bin/trial-shim"});
  EXPECT_EQ(c.args, std::vector<std::string>{"experiment=base"});
  ASSERT_EQ(c.env.size(), 1u);
  EXPECT_EQ(c.env[0],
            (std::pair<std::string, std::string>{"LOG_LEVEL", "info"}));
}

TEST(JobSpecTest, ShapeErrors) {
  struct Case {
    const char* name;
    std::string from, to;  // a replacement in kExample
    std::string want;      // the diagnostic, as printed: an unknown field
                           // is reported at its key
  } cases[] = {
      {"top level", "maxTrialCount: 24", "maxTrialCont: 24",
       "job.yaml:2:1: error: unknown field 'maxTrialCont' in "
       "HyperparameterTuningJob (did you mean 'maxTrialCount'?)"},
      // A block value starts on the next line; the key is where it is.
      {"block value", "studySpec:", "studySpc:",
       "job.yaml:5:1: error: unknown field 'studySpc' in "
       "HyperparameterTuningJob (did you mean 'studySpec'?)"},
      {"study", "  algorithm:", "  algoritm:",
       "job.yaml:21:3: error: unknown field 'algoritm' in studySpec (did you "
       "mean 'algorithm'?)"},
      {"metric", "    goal: MINIMIZE", "    gol: MINIMIZE",
       "job.yaml:8:5: error: unknown field 'gol' in metrics[] (did you mean "
       "'goal'?)"},
      {"value spec", "{minValue: 16, maxValue: \"256\"}",
       "{minValue: 16, maxvalue: \"256\"}",
       "job.yaml:14:38: error: unknown field 'maxvalue' in integerValueSpec "
       "(did you mean 'maxValue'?)"},
      {"snake case", "  - parameterId: model.width",
       "  - parameter_id: model.width",
       "job.yaml:16:5: error: unknown field 'parameter_id' in parameters[]"},
      {"container", "      imageUri:", "      image_uri:",
       "job.yaml:36:7: error: unknown field 'image_uri' in containerSpec (did "
       "you mean 'imageUri'"},
      {"enum", "goal: MINIMIZE", "goal: MINIMISE",
       "job.yaml:8:11: error: unknown goal 'MINIMISE' (did you mean "
       "'MINIMIZE'?)"},
      {"enum no near", "UNIT_LOG_SCALE", "LOG",
       "job.yaml:12:16: error: unknown scaleType 'LOG' (expected one of "
       "SCALE_TYPE_UNSPECIFIED, UNIT_LINEAR_SCALE, UNIT_LOG_SCALE, "
       "UNIT_REVERSE_LOG_SCALE)"},
      {"pools not a list", "  workerPoolSpecs:\n  - machineSpec:",
       "  workerPoolSpecs:\n    machineSpec:",
       "workerPoolSpecs must be a list"},
      {"integer", "minValue: 16,", "minValue: 1.5,",
       "job.yaml:14:34: error: minValue must be an integer, got float"},
      {"two value specs",
       "    scaleType: UNIT_LINEAR_SCALE\n  - parameterId: "
       "model.width",
       "    doubleValueSpec: {minValue: 1, maxValue: 2}\n  - parameterId: "
       "model.width",
       "has more than one value spec"},
      {"timeout", "86400s", "a day",
       "scheduling.timeout: 'a day' is not a "
       "duration"},
      {"default value", "values: [adam, sgd]}",
       "values: [adam, sgd], defaultValue: adam}",
       "warning: defaultValue is not supported"},
      {"boolean categorical", "[adam, sgd]", "[adam, yes]",
       "item is a YAML boolean; quote it"},
      {"stopping flag type", "  measurementSelectionType: BEST_MEASUREMENT",
       "  measurementSelectionType: BEST_MEASUREMENT"
       "\n  medianAutomatedStoppingSpec: {useElapsedDuration: \"true\"}",
       "job.yaml:23:53: error: useElapsedDuration must be a boolean, got "
       "'true'"},
      {"two stopping rules", "  measurementSelectionType: BEST_MEASUREMENT",
       "  measurementSelectionType: BEST_MEASUREMENT"
       "\n  medianAutomatedStoppingSpec: {}\n  decayCurveStoppingSpec: {}",
       "job.yaml:24:27: error: decayCurveStoppingSpec and "
       "medianAutomatedStoppingSpec are one field in the API (the "
       "automatedStoppingSpec oneof): set only one"},
      {"stopping field", "  measurementSelectionType: BEST_MEASUREMENT",
       "  measurementSelectionType: BEST_MEASUREMENT"
       "\n  decayCurveStoppingSpec: {useElapsedTime: true}",
       "job.yaml:23:28: error: unknown field 'useElapsedTime' in "
       "decayCurveStoppingSpec"},
      {"stopping not a map", "  measurementSelectionType: BEST_MEASUREMENT",
       "  measurementSelectionType: BEST_MEASUREMENT"
       "\n  decayCurveStoppingSpec: true",
       "job.yaml:23:27: error: decayCurveStoppingSpec must be a mapping, got "
       "bool"},
      {"convex stopping", "  measurementSelectionType: BEST_MEASUREMENT",
       "  measurementSelectionType: BEST_MEASUREMENT"
       "\n  convexAutomatedStoppingSpec: {maxStepCount: 10}",
       "job.yaml:23:32: warning: convexAutomatedStoppingSpec is not emulated"},
      {"output-only v1 field", "maxTrialCount: 24",
       "maxTrialCount: 24\nstate: JOB_STATE_SUCCEEDED",
       "job.yaml:3:1: warning: field 'state' in HyperparameterTuningJob is a "
       "Vertex AI v1 field that trialshim does not check"},
  };
  for (const Case& c : cases) {
    std::string text = kExample;
    size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << "case " << c.name;
    text.replace(at, c.from.size(), c.to);
    std::vector<Diagnostic> diags;
    Parse(text, &diags);
    std::string all;
    for (const Diagnostic& d : diags) all += d.ToString() + "\n";
    EXPECT_NE(all.find(c.want), std::string::npos) << "case " << c.name << "\n"
                                                   << all;
  }
}

// Extreme ranges are refused where they are read, with the reason: an
// integer bound beyond 2^53 (a trial's values are doubles), a double bound
// that is not finite. Wide but finite ranges are taken.
TEST(JobSpecTest, ExtremeRangesAreRefusedWithTheirReason) {
  struct Case {
    const char* name;
    std::string spec;  // replaces the batch size's value spec
    std::string want;  // "" when accepted
  } cases[] = {
      {"int64's largest",
       "integerValueSpec: {minValue: 0, maxValue: 9223372036854775807}",
       "job.yaml:14:47: error: integerValueSpec of 'data.batch_size': "
       "maxValue 9223372036854775807 is beyond +-2^53 (9007199254740992); a "
       "trial's values are doubles, which hold every integer only up to "
       "there"},
      {"int64's smallest, as proto JSON writes it",
       "integerValueSpec: {minValue: \"-9223372036854775808\", maxValue: 0}",
       "minValue -9223372036854775808 is beyond +-2^53"},
      {"2^53 + 1", "integerValueSpec: {minValue: 0, maxValue: 9007199254740993}",
       "maxValue 9007199254740993 is beyond +-2^53"},
      {"2^53", "integerValueSpec: {minValue: -9007199254740992, maxValue: "
               "9007199254740992}",
       ""},
      {"nan", "doubleValueSpec: {minValue: .nan, maxValue: 1}",
       "doubleValueSpec of 'data.batch_size': minValue must be a finite "
       "number, got nan"},
      {"inf as text", "doubleValueSpec: {minValue: 0, maxValue: \"inf\"}",
       "maxValue must be a finite number, got inf"},
      {"the doubles' whole width",
       "doubleValueSpec: {minValue: -1.0e+308, maxValue: 1.0e+308}", ""},
  };
  for (const Case& c : cases) {
    std::string text = kExample;
    const std::string from = "integerValueSpec: {minValue: 16, maxValue: \"256\"}";
    text.replace(text.find(from), from.size(), c.spec);
    std::vector<Diagnostic> diags;
    Parse(text, &diags);
    std::string all;
    for (const Diagnostic& d : diags) all += d.ToString() + "\n";
    if (std::string(c.want).empty()) {
      EXPECT_EQ(all, "") << "case " << c.name;
    } else {
      EXPECT_NE(all.find(c.want), std::string::npos) << "case " << c.name
                                                     << "\n"
                                                     << all;
    }
  }
}

TEST(JobSpecTest, StoppingSpecs) {
  struct Case {
    const char* name;
    std::string study_lines;  // added to kExample's studySpec
    StoppingRule rule;
    bool use_elapsed;
  } cases[] = {
      {"none", "", StoppingRule::kNone, false},
      {"median", "  medianAutomatedStoppingSpec: {}\n", StoppingRule::kMedian,
       false},
      {"median bare", "  medianAutomatedStoppingSpec:\n", StoppingRule::kMedian,
       false},
      {"decay elapsed",
       "  decayCurveStoppingSpec: {useElapsedDuration: true}\n",
       StoppingRule::kDecayCurve, true},
      {"median step",
       "  medianAutomatedStoppingSpec:\n    useElapsedDuration: false\n",
       StoppingRule::kMedian, false},
  };
  for (const Case& c : cases) {
    std::string text = kExample;
    std::string after = "BEST_MEASUREMENT\n";
    text.insert(text.find(after) + after.size(), c.study_lines);
    std::vector<Diagnostic> diags;
    JobSpec job = Parse(text, &diags);
    for (const Diagnostic& d : diags) {
      ADD_FAILURE() << "case " << c.name << ": " << d.ToString();
    }
    EXPECT_EQ(job.stopping, c.rule) << "case " << c.name;
    EXPECT_EQ(job.stopping_use_elapsed, c.use_elapsed) << "case " << c.name;
  }
}

TEST(JobSpecTest, MissingSections) {
  std::vector<Diagnostic> diags;
  JobSpec job = Parse("displayName: x\n", &diags);
  std::string all;
  for (const Diagnostic& d : diags) all += d.ToString() + "\n";
  EXPECT_NE(all.find("no studySpec"), std::string::npos) << all;
  EXPECT_NE(all.find("no trialJobSpec"), std::string::npos) << all;
  EXPECT_EQ(job.MaxTrials(), 1) << "gcloud's default";
}

TEST(JobSpecTest, Durations) {
  struct Case {
    const char* text;
    double want;  // < 0: an error
  } cases[] = {{"86400s", 86400}, {"1.5s", 1.5}, {"90m", 5400},
               {"2h", 7200},      {"10", 10},    {"", -1},
               {"s", -1},         {"-1s", -1},   {"1d", -1}};
  for (const Case& c : cases) {
    StatusOr<double> got = ParseDurationSeconds(c.text);
    if (c.want < 0) {
      EXPECT_FALSE(got.ok()) << "case '" << c.text << "'";
    } else {
      ASSERT_OK(got);
      EXPECT_EQ(*got, c.want) << "case '" << c.text << "'";
    }
  }
}

TEST(JobSpecTest, LoadErrors) {
  std::vector<Diagnostic> diags;
  StatusOr<JobSpec> job = LoadJobSpecFile("/no/such/job.yaml", &diags);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace trialshim::tuning
