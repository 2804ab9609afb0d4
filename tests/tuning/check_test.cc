// `trialshim check`: each broken job spec in tests/tuning/data/check/
// carries one planted mistake, which must be reported at its place; the
// good specs and the shipped examples pass.
#include "trialshim/tuning/check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::tuning {
namespace {

const std::string kDir =
    std::string(TRIALSHIM_SOURCE_DIR) + "/tests/tuning/data/check/";

// The specs' relative paths (../conf, train.py) mean paths of kDir, as the
// image's working directory: what `trialshim check` run there finds.
CheckOptions InCheckDir() {
  CheckOptions options;
  options.workdir = kDir;
  return options;
}

using Severity = Diagnostic::Severity;

std::string All(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const Diagnostic& d : diags) s += d.ToString() + "\n";
  return s;
}

TEST(CheckTest, CatchesEachPlantedMistake) {
  struct Case {
    const char* name;  // the file, without .yaml
    int line, column;
    Severity severity;
    const char* phrase;
  } cases[] = {
      {"unknown_field", 3, 1, Severity::kError,
       "unknown field 'maxTrialCont' in HyperparameterTuningJob (did you "
       "mean 'maxTrialCount'?)"},
      {"unknown_nested_field", 10, 37, Severity::kError,
       "unknown field 'maxvalue' in integerValueSpec (did you mean "
       "'maxValue'?)"},
      {"min_not_below_max", 10, 47, Severity::kError,
       "minValue (3) must be less than maxValue (1)"},
      {"log_scale_zero", 12, 33, Severity::kError,
       "UNIT_LOG_SCALE needs a strictly positive range, but minValue is 0"},
      {"discrete_not_increasing", 12, 46, Severity::kError,
       "discrete values must be increasing, but 0.5 follows 64"},
      {"discrete_too_close", 12, 60, Severity::kError,
       "must be at least 1e-10 apart"},
      {"discrete_too_many", 12, 24, Severity::kError,
       "1001 discrete values; at most 1000 allowed"},
      {"grid_over_double", 11, 18, Severity::kError,
       "GRID_SEARCH needs INTEGER, DISCRETE or CATEGORICAL parameters; "
       "'optimizer.lr' is DOUBLE"},
      {"grid_over_conditional_double", 13, 22, Severity::kError,
       "GRID_SEARCH needs INTEGER, DISCRETE or CATEGORICAL parameters; "
       "'slope' is DOUBLE"},
      {"parallel_above_max", 4, 21, Severity::kError,
       "parallelTrialCount (16) is larger than maxTrialCount (12)"},
      {"zero_trials", 3, 16, Severity::kError,
       "maxTrialCount must be >= 1, got 0"},
      {"trials_above_study_limit", 3, 16, Severity::kWarning,
       "maxTrialCount 1001 is above 1000, the documented maximum of trials "
       "in a Vizier study"},
      {"bad_enum", 13, 16, Severity::kError,
       "unknown scaleType 'UNIT_REVERSE_LOG_SCAL' (did you mean "
       "'UNIT_REVERSE_LOG_SCALE'?)"},
      {"pools_not_a_list", 26, 5, Severity::kError,
       "workerPoolSpecs must be a list"},
      {"duplicate_parameter", 11, 18, Severity::kError,
       "duplicate parameterId 'layers'"},
      {"categorical_with_scale", 16, 16, Severity::kError,
       "scaleType must be unset for CATEGORICAL parameters"},
      {"no_metrics", 6, 12, Severity::kError, "studySpec has no metrics"},
      {"bad_conditional_parent", 17, 7, Severity::kError,
       "'relux' is not a value of 'act' (did you mean 'relu'?)"},
      {"python_option_value", 29, 53, Severity::kWarning,
       "the script 'nope.py' does not exist"},
      {"bad_conditional_int", 12, 7, Severity::kError,
       "parentIntValues: 4 is outside the range of 'layers' (1 to 3), so the "
       "child would never be active"},
      {"bad_conditional_discrete", 16, 7, Severity::kError,
       "parentDiscreteValues: 0.55 is not a value of 'width' (did you mean "
       "0.5?)"},
      {"unknown_config_key", 11, 18, Severity::kError,
       "'optimizer.lrate' is not in the config (did you mean"},
      // Hydra passes floats to an untyped int key: a warning, not an error.
      {"double_to_int_key", 14, 18, Severity::kWarning,
       "sets data.batch_size, which is an int in the config, and the trials "
       "get DOUBLE values like 0.5, which Hydra passes to an untyped key"},
      {"bad_group_option", 22, 43, Severity::kError,
       "'sgdd' is not an option of config group 'optimizer'"},
      {"group_not_categorical", 21, 18, Severity::kError,
       "selects config group 'optimizer', so it must be CATEGORICAL, not "
       "INTEGER"},
      {"categorical_to_int_key", 18, 43, Severity::kError,
       "value 'wide' is not of type int"},
      {"metric_not_reported", 8, 15, Severity::kWarning,
       "the trainer reports 'val_acc' (hypertune.monitor in the config) but "
       "the metricId is 'val_loss'"},
      {"second_metric_not_reported", 10, 15, Severity::kWarning,
       "metric 'val_loss' is never reported: the trainer reports only "
       "'val_acc' (hypertune.monitor in the config), so every trial would "
       "end INFEASIBLE; report them all: add "
       "'hypertune.monitor=[val_acc,val_loss]' to containerSpec.args"},
      {"not_through_trialshim", 28, 17, Severity::kWarning,
       "the command does not go through trialshim"},
      {"unknown_trialshim_option", 28, 28, Severity::kError,
       "unknown trialshim option '--add-unkown' (did you mean "
       "'--add-unknown'?): the trial would exit 2 before the trainer starts"},
      {"trialshim_option_without_value", 28, 28, Severity::kError,
       "trialshim option --metric-tag needs a value"},
      {"trialshim_without_dashes", 28, 28, Severity::kError,
       "unexpected argument 'python3' before '--'"},
      {"hydra_flag_after_override", 29, 32, Severity::kError,
       "Hydra 1.3 reads overrides only up to its first flag"},
      {"hydra_args_refused", 28, 32, Severity::kError,
       "the trainer's arguments, read as Hydra reads them: argument "
       "--cfg/-c: invalid choice: 'bogus'"},
      {"config_not_found", 35, 13, Severity::kWarning,
       "config directory '../no_such_conf' does not exist; parameterIds not "
       "checked (a local `trialshim sweep` refuses this"},
      {"primary_replicas", 30, 19, Severity::kError,
       "workerPoolSpecs[0] is the primary replica: Vertex requires "
       "replicaCount 1 there, got 3; put the other 2 in workerPoolSpecs[1]"},
      {"output_not_gcs", 27, 42, Severity::kError,
       "outputUriPrefix '/tmp/x' is not a Cloud Storage URI: Vertex takes "
       "gs://BUCKET/PATH"},
      {"unknown_machine_type", 29, 32, Severity::kError,
       "workerPoolSpecs[0]: unknown machine type 'n1-standrad-4' (did you "
       "mean 'n1-standard-4'"},
      {"accelerator_not_on_machine", 29, 64, Severity::kError,
       "workerPoolSpecs[0]: n1-standard-8 takes no NVIDIA_TESLA_A100: N1 "
       "machines take NVIDIA_TESLA_T4, NVIDIA_TESLA_V100, NVIDIA_TESLA_P100, "
       "NVIDIA_TESLA_P4"},
      {"accelerator_count", 29, 64, Severity::kError,
       "workerPoolSpecs[0]: a2-highgpu-1g comes with 1 NVIDIA_TESLA_A100, not "
       "2 NVIDIA_TESLA_A100: give acceleratorType NVIDIA_TESLA_A100 and "
       "acceleratorCount 1"},
      {"accelerator_unknown", 29, 64, Severity::kError,
       "workerPoolSpecs[0]: unknown acceleratorType 'NVIDIA_TESLA_T5' (did "
       "you mean 'NVIDIA_TESLA_T4' or 'NVIDIA_TESLA_P4'?)"},
      {"accelerator_missing", 29, 32, Severity::kWarning,
       "workerPoolSpecs[0]: g2-standard-24 comes with 2 NVIDIA_L4 that the "
       "spec does not ask for (add acceleratorType: NVIDIA_L4 and "
       "acceleratorCount: 2 to its machineSpec)"},
      {"multirun_trials", 36, 13, Severity::kError,
       "the composed config sets hydra.mode: MULTIRUN, so each trial would "
       "run a sweep instead of one job: Vertex bills every trial for all of "
       "them and reads one metric. Add hydra.mode=RUN to the container args"},
      {"trainer_without_config", 35, 17, Severity::kWarning,
       "'./train_app' names no config after it, so it composes its own (a "
       "trialshim app: its built-in config), which check can not see"},
      {"needs_quoting", 24, 43, Severity::kNote,
       "value 'leaky,0.1' of 'model.activation' would be misread by Hydra; "
       "trialshim passes it as 'leaky,0.1'"},
  };
  for (const Case& c : cases) {
    std::string path = kDir + c.name + ".yaml";
    StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(path, InCheckDir());
    ASSERT_OK(diags);
    bool found = false;
    for (const Diagnostic& d : *diags) {
      found = found || (d.mark.line == c.line && d.mark.column == c.column &&
                        d.severity == c.severity &&
                        d.message.find(c.phrase) != std::string::npos &&
                        d.mark.file && *d.mark.file == path);
    }
    EXPECT_TRUE(found) << "case " << c.name << ": want " << c.line << ":"
                       << c.column << " "
                       << Diagnostic::SeverityName(c.severity) << " '"
                       << c.phrase << "', got\n"
                       << All(*diags);
    EXPECT_EQ(HasErrors(*diags), c.severity == Severity::kError)
        << "case " << c.name << "\n"
        << All(*diags);
  }
}

// The good specs: no error and no warning (notes are fine).
TEST(CheckTest, PassesGoodSpecs) {
  for (const std::string& f :
       {kDir + "good_basic.yaml", kDir + "good_config.yaml",
        kDir + "good_grid_conditional.yaml"}) {
    StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(f, InCheckDir());
    ASSERT_OK(diags);
    for (const Diagnostic& d : *diags) {
      EXPECT_EQ(d.severity, Severity::kNote)
          << "case " << f << ": " << d.ToString();
    }
  }
}

// Each fix a diagnostic above names, followed, leaves no such diagnostic:
// the planted file with the fix applied, checked again.
TEST(CheckTest, TheHintsWork) {
  struct Case {
    const char* name;  // the planted file, without .yaml
    const char* from;  // its text the hint replaces ...
    const char* to;    // ... with what the hint says
    const char* gone;  // the diagnostic's phrase
  } cases[] = {
      {"multirun_trials", "+search=multirun]",
       "+search=multirun, hydra.mode=RUN]", "hydra.mode: MULTIRUN"},
      {"trainer_without_config", "./train_app]",
       "./train_app, --config-path, ../conf, --config-name, config]",
       "names no config"},
      {"primary_replicas", "    replicaCount: 3\n", "    replicaCount: 1\n",
       "primary replica"},
      {"accelerator_not_on_machine", "n1-standard-8", "a2-highgpu-1g",
       "takes no"},
      {"accelerator_count", "acceleratorCount: 2", "acceleratorCount: 1",
       "comes with"},
      {"accelerator_unknown", "NVIDIA_TESLA_T5", "NVIDIA_TESLA_T4",
       "acceleratorType"},
      {"bad_conditional_discrete", "0.55]", "0.5]", "not a value of"},
      {"bad_conditional_parent", "[relux]", "[relu]", "not a value of"},
      {"accelerator_missing", "g2-standard-24}",
       "g2-standard-24, acceleratorType: NVIDIA_L4, acceleratorCount: 2}",
       "comes with"},
  };
  testing::TempDir dir;
  for (const Case& c : cases) {
    std::ifstream in(kDir + c.name + ".yaml");
    std::stringstream text;
    text << in.rdbuf();
    std::string spec = text.str();
    size_t at = spec.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.name;
    spec.replace(at, std::strlen(c.from), c.to);
    if (std::string(c.name) == "primary_replicas") {
      // The other two replicas as workers: pool 1, the same machine and
      // container (pool 0 ends the file).
      std::string pool = spec.substr(spec.find("  - machineSpec:"));
      pool.replace(pool.find("replicaCount: 1"), 15, "replicaCount: 2");
      spec += pool;
    }
    std::string file = dir.Write(std::string(c.name) + ".yaml", spec);
    CheckOptions options = InCheckDir();
    StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(file, options);
    ASSERT_OK(diags);
    EXPECT_FALSE(HasErrors(*diags)) << c.name << "\n" << All(*diags);
    EXPECT_EQ(All(*diags).find(c.gone), std::string::npos)
        << c.name << "\n" << All(*diags);
  }
}

// Whether a trial runs one job is Hydra's to decide: a real @hydra.main app
// (Hydra 1.3.2 with hydra-optuna-sweeper) on conf-lightning, given the
// container's args, runs the jobs counted here; check must refuse exactly
// the specs whose trials would run more than one.
TEST(AnchorsCheckTest, MultirunVerdictIsHydras) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir dir;
  const std::string conf =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning";
  std::string app = dir.Write("app.py", R"(import os
import hydra

@hydra.main(config_path=os.environ["CONF"], config_name="config",
            version_base=None)
def main(cfg):
    with open(os.environ["JOBS"], "a") as f:
        f.write("job\n")
    return 0.5

main()
)");
  const std::string search = "hparams_search=digits_optuna";
  const std::string sweep_dir = "hydra.sweep.dir=" + dir.Join("multirun");
  struct Case {
    const char* name;
    std::vector<std::string> args;
  } cases[] = {
      {"a search config that sets MULTIRUN",
       {search, "hydra.sweeper.n_trials=3", sweep_dir}},
      {"the same with hydra.mode=RUN",
       {search, "hydra.sweeper.n_trials=3", sweep_dir, "hydra.mode=RUN"}},
      {"no search", {"trainer.max_epochs=1"}},
  };
  for (const Case& c : cases) {
    std::string jobs = dir.Join(std::string("jobs-") + c.name);
    std::vector<std::string> argv = {testing::AnchorsPython(), app};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    SubprocessOptions spawn =
        testing::Child::Options({"CONF=" + conf, "JOBS=" + jobs});
    spawn.cwd = dir.path();
    testing::Finished hydra = testing::RunToEndWith(argv, spawn);
    ASSERT_EQ(hydra.exit_code, 0) << c.name << ": " << hydra.err;
    std::string ran = testing::ReadFile(jobs);
    size_t count = std::count(ran.begin(), ran.end(), '\n');

    std::string args;
    for (const std::string& a : c.args) args += (args.empty() ? "" : ", ") + a;
    std::string spec = dir.Write(
        std::string("spec-") + c.name + ".yaml",
        "maxTrialCount: 2\n"
        "studySpec:\n"
        "  metrics: [{metricId: val_acc, goal: MAXIMIZE}]\n"
        "  parameters:\n"
        "  - parameterId: optimizer.lr\n"
        "    doubleValueSpec: {minValue: 0.001, maxValue: 0.1}\n"
        "  algorithm: RANDOM_SEARCH\n"
        "trialJobSpec:\n"
        "  baseOutputDirectory: {outputUriPrefix: gs://b/p}\n"
        "  workerPoolSpecs:\n"
        "  - machineSpec: {machineType: n1-standard-4}\n"
        "    replicaCount: 1\n"
        "    containerSpec:\n"
        "      imageUri: i\n"
        "      command: [trialshim, --config-path, " + conf +
            ", --config-name, config, --, python3, " + app + "]\n"
        "      args: [" + args + "]\n");
    StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(spec, {});
    ASSERT_OK(diags);
    bool refused = All(*diags).find("so each trial would run") !=
                   std::string::npos;
    EXPECT_EQ(refused, count > 1)
        << c.name << ": Hydra ran " << count << " job(s); check said\n"
        << All(*diags);
    EXPECT_EQ(HasErrors(*diags), count > 1) << c.name << "\n" << All(*diags);
  }
}

// --config-path/--config-name given to check win over the container's.
TEST(CheckTest, ConfigFromOptions) {
  CheckOptions options = InCheckDir();
  options.config_path =
      std::string(TRIALSHIM_SOURCE_DIR) + "/tests/tuning/data/conf";
  options.config_name = "config";
  StatusOr<std::vector<Diagnostic>> diags =
      CheckJobFile(kDir + "config_not_found.yaml", options);
  ASSERT_OK(diags);
  EXPECT_FALSE(HasErrors(*diags)) << All(*diags);
  EXPECT_EQ(All(*diags).find("does not exist"), std::string::npos)
      << All(*diags);
  // And they make a spec without a config in its args checkable.
  diags = CheckJobFile(kDir + "not_through_trialshim.yaml", options);
  ASSERT_OK(diags);
  EXPECT_NE(All(*diags).find("'layers' is not in the config"),
            std::string::npos)
      << All(*diags);
}

// Issue 14.2: a config file with bad interpolation syntax does not load in
// the app (OmegaConf's GrammarParseError), so check reports it.
TEST(CheckTest, BadInterpolationInTheConfigIsAnError) {
  testing::TempDir conf;
  conf.Write("config.yaml", "optimizer:\n  lr: ${dict . a}\n");
  CheckOptions options;
  options.config_path = conf.path();
  options.config_name = "config";
  StatusOr<std::vector<Diagnostic>> diags =
      CheckJobFile(kDir + "config_not_found.yaml", options);
  ASSERT_OK(diags);
  EXPECT_TRUE(HasErrors(*diags)) << All(*diags);
  EXPECT_NE(All(*diags).find("does not compose: " + conf.path() +
                             "/config.yaml:2:7: GrammarParseError: "),
            std::string::npos)
      << All(*diags);
  EXPECT_NE(All(*diags).find("full_key: optimizer.lr"), std::string::npos)
      << All(*diags);
}

// What Linux's execve() refuses (E2BIG) is an error where it is written:
// one argument of MAX_ARG_STRLEN (128 KiB with its NUL) or more, an env
// entry as long, or everything together over the 2 MiB a default 8 MiB
// stack leaves. Every trial would otherwise fail with exit 126.
TEST(CheckTest, ArgumentsTheKernelWouldRefuse) {
  const std::string most(131071 - 6, 'v');  // "--big=" + this: 131071 bytes
  const std::string big(200 * 1024, 'v');
  const std::string chunk(100000, 'c');
  std::string many;  // 22 arguments of 100 KB: 2.2 MB in all
  for (int i = 0; i < 22; ++i) many += (i ? ", " : "") + chunk;
  struct Case {
    std::string name;
    std::string container;  // the containerSpec's lines after command
    std::string error;      // "" when it passes
    int line = 0, column = 0;
  } cases[] = {
      {"largest argument", "      args: [--big=" + most + "]\n", ""},
      {"200 KB argument", "      args: [a, --big=" + big + "]\n",
       "args[1] is 204806 bytes; Linux's execve() takes at most 131071 in one "
       "argument (MAX_ARG_STRLEN), so every trial would fail with exit 126 "
       "\"Argument list too long\"; pass large values in a file",
       10, 17},
      {"200 KB env value",
       "      env:\n      - {name: BIG, value: " + big + "}\n",
       "the container's command, args and env with the longest parameter "
       "values: environment variable BIG is 204804 bytes with its name",
       8, 7},
      {"2.2 MB in all", "      args: [" + many + "]\n",
       "the container's command, args and env with the longest parameter "
       "values: the arguments and environment take ",
       8, 7},
  };
  testing::TempDir dir;
  for (const Case& c : cases) {
    std::string path = dir.Write(
        "job.yaml",
        "displayName: big\n"
        "studySpec:\n"
        "  metrics: [{metricId: loss, goal: MINIMIZE}]\n"
        "  parameters: [{parameterId: lr, doubleValueSpec: {minValue: 0.1, "
        "maxValue: 1}}]\n"
        "trialJobSpec:\n"
        "  workerPoolSpecs:\n"
        "  - containerSpec:\n"
        "      imageUri: example/trainer:1\n"
        "      command: [trialshim, --, python3, train.py]\n" +
            c.container);
    StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(path, {});
    ASSERT_OK(diags);
    bool found = c.error.empty() ? !HasErrors(*diags) : false;
    for (const Diagnostic& d : *diags) {
      found = found || (d.severity == Severity::kError &&
                        d.message.rfind(c.error, 0) == 0 &&
                        d.mark.line == c.line && d.mark.column == c.column);
    }
    EXPECT_TRUE(found) << "case " << c.name << ": want " << c.line << ":"
                       << c.column << " '" << c.error << "', got\n"
                       << All(*diags).substr(0, 2000);
  }
}

TEST(CheckTest, YamlSyntaxErrorIsOneDiagnostic) {
  testing::TempDir dir;
  std::string path = dir.Write("bad.yaml", "studySpec: {metrics: [\n");
  StatusOr<std::vector<Diagnostic>> diags = CheckJobFile(path, {});
  ASSERT_OK(diags);
  ASSERT_EQ(diags->size(), 1u) << All(*diags);
  EXPECT_EQ((*diags)[0].severity, Severity::kError);
  EXPECT_NE((*diags)[0].ToString().find("bad.yaml:"), std::string::npos)
      << All(*diags);
  EXPECT_FALSE(CheckJobFile(dir.Join("missing.yaml"), {}).ok());
}

// The binary: one line per problem on stdout (-q leaves out notes), exit 2
// on errors, and with --werror on warnings too. Each case runs without and
// with --werror; stdout is the same both times.
TEST(CheckCommandTest, ExitCodesAndOutput) {
  std::string bin = std::string(TRIALSHIM_BIN_DIR) + "/trialshim";
  if (access(bin.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << bin;
  const std::string root = TRIALSHIM_SOURCE_DIR;
  struct Case {
    const char* name;
    std::string dir;   // where check runs
    std::string args;  // after "check -q [--werror]"
    int exit_code, werror_exit_code;
    std::string out;
  } cases[] = {
      {"clean", kDir, "good_config.yaml", 0, 0, ""},
      {"error", kDir, "zero_trials.yaml", 2, 2,
       "zero_trials.yaml:3:16: error: maxTrialCount must be >= 1, got 0\n"},
      {"warning", kDir, "not_through_trialshim.yaml", 0, 2,
       "not_through_trialshim.yaml:28:17: warning: the command does not go "
       "through trialshim: the trainer gets Vertex's \"--id=value\" "
       "arguments as they are, which a Hydra app refuses (command: "
       "[trialshim, --, python3, train.py])\n"},
      {"unchecked v1 field", kDir, "unchecked_field.yaml", 0, 2,
       "unchecked_field.yaml:29:47: warning: field 'gpuPartitionSize' in "
       "machineSpec is a Vertex AI v1 field that trialshim does not check\n"},
      {"misspelt unchecked v1 field", kDir, "unknown_field_near_unchecked.yaml",
       2, 2,
       "unknown_field_near_unchecked.yaml:31:5: error: unknown field "
       "'lustreMount' in workerPoolSpecs[] (did you mean 'lustreMounts'?)\n"},
      {"tensorboard without serviceAccount", kDir,
       "tensorboard_without_service_account.yaml", 2, 2,
       "tensorboard_without_service_account.yaml:28:16: error: "
       "trialJobSpec.tensorboard needs trialJobSpec.serviceAccount: Vertex "
       "refuses the job (\"service_account must be specified when uploading "
       "to TensorBoard\"); add serviceAccount: "
       "NAME@PROJECT.iam.gserviceaccount.com, an account that may write to "
       "the Tensorboard\n"},
      {"no baseOutputDirectory", kDir, "no_base_output_directory.yaml", 0, 2,
       "no_base_output_directory.yaml:27:3: warning: trialJobSpec has no "
       "baseOutputDirectory: Vertex then sets no AIP_MODEL_DIR, "
       "AIP_CHECKPOINT_DIR or AIP_TENSORBOARD_LOG_DIR, so checkpoints and "
       "the model die with the VM (add baseOutputDirectory: "
       "{outputUriPrefix: gs://BUCKET/PATH})\n"},
      {"parameterId is a Hydra flag", kDir, "hydra_flag_parameter.yaml", 2, 2,
       "hydra_flag_parameter.yaml:19:18: error: parameterId 'cfg' is one of "
       "Hydra's flags: the trial argument --cfg=0.0 would be read by Hydra "
       "as its --cfg flag, not as an override; rename the parameter (e.g. "
       "'model.cfg', or 'cfg_' with --map cfg_=cfg in the trialshim "
       "command)\n"},
      {"DISCRETE on an int key, the config not trialshim's", kDir,
       "discrete_to_int_key_untranslated.yaml", 0, 2,
       "discrete_to_int_key_untranslated.yaml:18:18: warning: parameter "
       "'model.width' is DISCRETE, so Vertex sends --model.width=32.0 (a "
       "float), and model.width is an int in the config; trialshim makes it "
       "32 only with --config-path and --config-name before -- in its "
       "command, so here the trainer gets 32.0, which int() and range() "
       "refuse. Add them, or make the trainer accept floats\n"},
      // The shipped examples, with the flags hpt.yaml's header gives.
      {"example hpt.yaml", root,
       "--volume examples/vertex:/app examples/vertex/hpt.yaml", 0, 0, ""},
      {"example digits_job.yaml", root, "examples/vertex/digits_job.yaml", 0, 0,
       ""},
  };
  for (const Case& c : cases) {
    for (bool werror : {false, true}) {
      std::string name = std::string(c.name) + (werror ? " --werror" : "");
      std::vector<std::string> argv = {bin, "check", "-q"};
      if (werror) argv.push_back("--werror");
      std::istringstream words(c.args);
      for (std::string w; words >> w;) argv.push_back(w);
      SubprocessOptions run = testing::Child::Options();
      run.cwd = c.dir;
      run.err = Stdio::Null();
      testing::Finished f = testing::RunToEndWith(argv, run);
      ASSERT_EQ(f.term_signal, 0) << "case " << name;
      EXPECT_EQ(f.exit_code, werror ? c.werror_exit_code : c.exit_code)
          << "case " << name << "\n"
          << f.out;
      EXPECT_EQ(f.out, c.out) << "case " << name;
    }
  }
}

}  // namespace
}  // namespace trialshim::tuning
