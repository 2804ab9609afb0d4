// The rules of `trialshim check`; see check.h for the list.
#include "trialshim/tuning/check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <tuple>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/base/subprocess.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/tuning/container.h"
#include "trialshim/tuning/search.h"
#include "trialshim/translate/options.h"
#include "trialshim/translate/translate.h"

namespace trialshim::tuning {

using translate::LoadKeyMapFile;
using translate::ParseKeyMapping;
using translate::TranslateOptions;
using translate::TranslateToArgv;
namespace {

using config::Mark;
using config::Node;
namespace fs = std::filesystem;

class Checker {
 public:
  Checker(const JobSpec& job, const CheckOptions& options,
          std::vector<Diagnostic>* diags)
      : job_(job),
        options_(options),
        diags_(diags),
        container_(options.workdir, options.volumes),
        near_(fs::path(job.file).parent_path().string()) {}

  void Run() {
    CheckCounts();
    CheckMetrics();
    CheckParameters();
    CheckAlgorithm();
    CheckOutputs();
    CheckContainer();
  }

 private:
  void Error(const Mark& m, std::string msg) {
    diags_->push_back({Diagnostic::Severity::kError, Pick(m), std::move(msg)});
  }
  void Warning(const Mark& m, std::string msg) {
    diags_->push_back(
        {Diagnostic::Severity::kWarning, Pick(m), std::move(msg)});
  }
  void Note(const Mark& m, std::string msg) {
    diags_->push_back({Diagnostic::Severity::kNote, Pick(m), std::move(msg)});
  }
  // What a local run can not find: it fails every trial there (an error
  // for the sweep), while on Vertex the image may have it (a warning).
  void Missing(const Mark& m, std::string msg) {
    if (options_.local_run) {
      Error(m, std::move(msg));
    } else {
      Warning(m, std::move(msg) +
                     " (a local `trialshim sweep` refuses this; the image "
                     "may have it)");
    }
  }
  // Falls back to the document's mark so every line names the file.
  Mark Pick(const Mark& m) const { return m.known() ? m : job_.mark; }

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
      if (lossy && goal == Goal::kMaximize) {
        Warning(m.goal_mark.known() ? m.goal_mark : m.id_mark,
                "metric '" + m.id + "' looks like a loss but the goal is " +
                    (m.goal == Goal::kUnspecified
                         ? std::string("unset (which means MAXIMIZE)")
                         : std::string("MAXIMIZE")));
      } else if (scored && goal == Goal::kMinimize) {
        Warning(m.goal_mark, "metric '" + m.id +
                                 "' looks like a score but the goal is "
                                 "MINIMIZE");
      } else if (m.goal == Goal::kUnspecified) {
        Note(m.id_mark, "metric '" + m.id + "' has no goal; Vertex maximizes");
      }
    }
    if (job_.metrics.size() > 1) {
      Note(
          job_.metrics[1].mark,
          "several metrics: `trialshim sweep` searches for their Pareto front");
    }
  }

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
        } else if (v[i] - v[i - 1] < 1e-10) {
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
    if (p.scale != ScaleType::kUnspecified) {
      Error(p.scale_mark, "parameter " + name +
                              ": scaleType must be unset for CATEGORICAL "
                              "parameters");
    }
  }

  void CheckConditional(const ParameterSpec& parent,
                        const ConditionalParameterSpec& c) {
    auto mismatch = [&](const char* field, ParameterType want) {
      Error(c.mark, std::string(field) + " needs a " + ParameterTypeName(want) +
                        " parent, but '" + parent.id + "' is " +
                        ParameterTypeName(parent.type));
    };
    if (!c.parent_int_values.empty() &&
        parent.type != ParameterType::kInteger) {
      mismatch("parentIntValues", ParameterType::kInteger);
    }
    if (!c.parent_discrete_values.empty() &&
        parent.type != ParameterType::kDiscrete) {
      mismatch("parentDiscreteValues", ParameterType::kDiscrete);
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

  void CheckAlgorithm() {
    if (job_.algorithm == Algorithm::kUnspecified) {
      Note(job_.algorithm_mark,
           "ALGORITHM_UNSPECIFIED is Bayesian optimization on Vertex; "
           "`trialshim sweep` runs its own (Gaussian process, expected "
           "improvement), so its trials are not Vertex's");
    }
    if (job_.algorithm != Algorithm::kGridSearch) return;
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

  void CheckOutputs() {
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

  // What the container runs, split the way trialshim would see it.
  struct Launch {
    bool through_trialshim = false;
    // trialshim itself has the config, so it casts Vertex's 128.0 to 128
    // for int keys.
    bool shim_has_config = false;
    std::string config_path, config_name;
    Mark config_mark;
    TranslateOptions translate;
    std::string map_file;
    std::string metric_tag;
    bool scrapes = false;
    std::vector<std::string> overrides;  // the trainer's Hydra overrides
    size_t program = 0;  // the trainer's index in the command + args
    std::string program_file;  // where it is here; "" when it is not
  };

  // The container's command and args as one argv, with a mark per token.
  struct Argv {
    std::vector<std::string> tokens;
    std::vector<Mark> marks;
    Mark fallback;
    const Mark& at(size_t i) const {
      return i < marks.size() && marks[i].known() ? marks[i] : fallback;
    }
  };

  static Argv JoinArgv(const ContainerSpec& c) {
    Argv argv;
    argv.tokens = c.command;
    argv.tokens.insert(argv.tokens.end(), c.args.begin(), c.args.end());
    if (c.command_marks.size() == c.command.size() &&
        c.args_marks.size() == c.args.size()) {
      argv.marks = c.command_marks;
      argv.marks.insert(argv.marks.end(), c.args_marks.begin(),
                        c.args_marks.end());
    }
    argv.fallback = c.command_mark;
    return argv;
  }

  // Reads trialshim's options (`trialshim [launch] OPTIONS -- ...`) with
  // the binary's own option table; returns the index of the "--", or
  // argv.size() when there is none.
  size_t ReadShimOptions(const Argv& argv, Launch* l) {
    size_t i = 1;
    translate::Command command = translate::kRun;
    if (argv.tokens.size() > 1 && argv.tokens[1] == "launch") {
      command = translate::kLaunch;
      i = 2;
    }
    for (; i < argv.tokens.size() && argv.tokens[i] != "--"; ++i) {
      const std::string& tok = argv.tokens[i];
      size_t eq = StartsWith(tok, "--") ? tok.find('=') : std::string::npos;
      std::string name = tok.substr(0, eq);
      const translate::Option* opt = translate::FindOption(name, command);
      if (opt == nullptr) {
        Error(argv.at(i),
              (tok.empty() || tok[0] != '-'
                   ? "unexpected argument '" + tok + "' before '--'"
                   : "unknown trialshim option '" + name + "'" +
                         DidYouMean(name, translate::OptionSpellings(command))) +
                  ": the trial would exit 2 before the trainer starts");
        continue;
      }
      std::string value;
      if (eq != std::string::npos) {
        value = tok.substr(eq + 1);
      } else if (opt->takes_value) {
        if (i + 1 >= argv.tokens.size() || argv.tokens[i + 1] == "--") {
          Error(argv.at(i), "trialshim option " + name + " needs a value");
          continue;
        }
        value = argv.tokens[++i];
      }
      UseShimOption(opt->id, value, argv.at(i), l);
    }
    if (i == argv.tokens.size()) {
      Error(argv.at(0),
            "trialshim needs '--' before the trainer's command (command: "
            "[trialshim, OPTIONS..., --, PROGRAM, ARG...])");
    }
    return i;
  }

  void UseShimOption(translate::OptionId id, const std::string& value,
                     const Mark& mark, Launch* l) {
    switch (id) {
      case translate::OptionId::kConfigPath:
        l->config_path = value;
        break;
      case translate::OptionId::kConfigName:
        l->config_name = value;
        break;
      case translate::OptionId::kMapFile:
        l->map_file = value;
        break;
      case translate::OptionId::kKeep:
        l->translate.keep_flags.push_back(value);
        break;
      case translate::OptionId::kMetricTag:
        l->metric_tag = value;
        break;
      case translate::OptionId::kMetricRegex:
        l->scrapes = true;
        break;
      case translate::OptionId::kAddUnknown:
        l->translate.add_unknown = true;
        break;
      case translate::OptionId::kMap: {
        StatusOr<std::pair<std::string, std::string>> m =
            ParseKeyMapping(value);
        if (m.ok()) {
          l->translate.key_map.push_back(*m);
        } else {
          Error(mark, "--map: " + m.status().message());
        }
        break;
      }
      default:
        break;  // no bearing on the checks
    }
  }

  // --map-file's mappings go before --map's, as in the binary.
  void LoadMapFile(const ContainerSpec& c, Launch* l) {
    if (l->map_file.empty()) return;
    std::string found = FindPath(l->map_file, /*dir=*/false);
    auto mapping = LoadKeyMapFile(found.empty() ? l->map_file : found);
    if (mapping.ok()) {
      l->translate.key_map.insert(l->translate.key_map.begin(),
                                  mapping->begin(), mapping->end());
    } else {
      Warning(c.command_mark, "--map-file: " + mapping.status().message());
    }
  }

  // Where the app's own arguments start: after the program, or for a
  // Python interpreter after its options and the script (or -m MODULE).
  static size_t AppArgsStart(const Argv& argv, size_t program) {
    size_t i = program + 1;
    if (!StartsWith(fs::path(argv.tokens[program]).filename().string(),
                    "python")) {
      return i;
    }
    for (; i < argv.tokens.size() && StartsWith(argv.tokens[i], "-"); ++i) {
      if (argv.tokens[i] == "-m" || argv.tokens[i] == "-c") return i + 2;
    }
    return i + 1;
  }

  // The app's arguments, read as Hydra 1.3.2 reads them.
  void ReadTrainerArgs(const Argv& argv, size_t program, Launch* l) {
    size_t start = std::min(AppArgsStart(argv, program), argv.tokens.size());
    std::vector<std::string> args(argv.tokens.begin() + start,
                                  argv.tokens.end());
    StatusOr<config::HydraCommandLine> parsed =
        config::ParseHydraCommandLine(args);
    if (!parsed.ok()) {
      if (l->through_trialshim) {
        Error(argv.at(program),
              "the trainer's arguments, read as Hydra "
              "reads them: " +
                  parsed.status().message());
      }
      return;
    }
    if (l->through_trialshim) CheckTrialArgsAppend(argv, program, args);
    if (l->config_path.empty() && parsed->config_path) {
      l->config_path = *parsed->config_path;
    }
    if (l->config_name.empty() && parsed->config_name) {
      l->config_name = *parsed->config_name;
    }
    for (const std::string& a : parsed->overrides) {
      if (!a.empty() && a[0] != '-' && a.find('=') != std::string::npos) {
        l->overrides.push_back(a);
      }
    }
  }

  // Vertex appends the trial's arguments, which trialshim turns into
  // overrides; Hydra 1.3.2 takes overrides only up to its first flag when
  // some come before it ("a=1 --config-name x" + "lr=0.1" is refused).
  void CheckTrialArgsAppend(const Argv& argv, size_t program,
                            std::vector<std::string> args) {
    const std::string stand_in = "trial.value=1";
    args.push_back(stand_in);
    StatusOr<config::HydraCommandLine> parsed =
        config::ParseHydraCommandLine(args);
    if (parsed.ok() && !parsed->unrecognized.empty() &&
        parsed->unrecognized.back() == stand_in) {
      Error(argv.at(program),
            "Hydra 1.3 reads overrides only up to its first flag, so it "
            "would refuse the trial's arguments that Vertex appends "
            "(\"unrecognized arguments\"): put Hydra's flags before the "
            "overrides in the container args");
    }
  }

  Launch Split(const ContainerSpec& c) {
    Launch l;
    Argv argv = JoinArgv(c);
    l.config_mark = c.args_mark.known() ? c.args_mark : c.command_mark;
    if (!argv.tokens.empty() && Container::IsTrialshim(argv.tokens[0])) {
      l.through_trialshim = true;
      l.program = ReadShimOptions(argv, &l) + 1;
      l.shim_has_config = !l.config_path.empty() && !l.config_name.empty();
      LoadMapFile(c, &l);
    }
    if (l.program < argv.tokens.size()) {
      ReadTrainerArgs(argv, l.program, &l);
      CheckRunsHere(c, argv, &l);
    }
    return l;
  }

  // What a trial runs must be here for a local run (Missing): the command,
  // the trainer trialshim starts, and a Python trainer's script.
  void CheckRunsHere(const ContainerSpec& c, const Argv& argv, Launch* l) {
    std::string path_var = getenv("PATH") ? getenv("PATH") : "";
    for (const auto& [k, v] : c.env) {
      if (k == "PATH") path_var = container_.MapToken(v);
    }
    auto resolve = [&](size_t i) -> std::string {
      StatusOr<std::string> found = container_.ResolveProgram(
          container_.MapToken(argv.tokens[i]), path_var, near_);
      if (found.ok()) return *found;
      Missing(argv.at(i), found.status().message());
      return "";
    };
    std::string first = resolve(0);
    if (!l->through_trialshim) {
      l->program_file = first;
    } else if (!first.empty()) {
      l->program_file = resolve(l->program);
    }
    size_t script = AppArgsStart(argv, l->program) - 1;
    if (script > l->program && script < argv.tokens.size() &&
        !StartsWith(argv.tokens[script - 1], "-")) {
      const std::string& file = argv.tokens[script];
      if (FindPath(file, /*dir=*/false).empty()) {
        Missing(argv.at(script),
                "the script '" + file + "' does not exist" + Fix(file));
      }
    }
  }

  void CheckContainer() {
    if (job_.worker_pools.empty()) return;  // the parser said why
    if (job_.worker_pools.size() > 1) {
      Note(job_.worker_pools[1].mark,
           "`trialshim sweep` runs only workerPoolSpecs[0] (the primary)");
    }
    const WorkerPoolSpec& pool = job_.worker_pools[0];
    if (!pool.has_container) {
      if (pool.has_python_package) {
        Warning(pool.mark,
                "pythonPackageSpec: `trialshim sweep` runs only "
                "containerSpec");
      } else {
        Error(pool.mark, "workerPoolSpecs[0] has no containerSpec");
      }
      return;
    }
    if (pool.replica_count > 1) {
      Note(pool.mark, "replicaCount " + std::to_string(pool.replica_count) +
                          ": `trialshim sweep` runs one replica per trial");
    }
    const ContainerSpec& c = pool.container;
    if (c.command.empty()) {
      Warning(c.mark,
              "containerSpec has no command: the image's ENTRYPOINT runs, "
              "which `trialshim sweep` can not know");
      return;
    }
    CheckArgumentSizes(c);
    Launch launch = Split(c);
    if (!launch.through_trialshim) CheckNativeCommand(c, launch);
    CheckAgainstConfig(launch);
  }

  // What Linux's execve() refuses with E2BIG (base/subprocess.h): one
  // argument or env entry of MAX_ARG_STRLEN or more, or everything together
  // (command, args, env and the longest "--id=value" of each parameter) over
  // the space a default 8 MiB stack leaves. Every trial would fail with
  // exit 126 "Argument list too long".
  void CheckArgumentSizes(const ContainerSpec& c) {
    const std::string consequence =
        ", so every trial would fail with exit 126 \"Argument list too "
        "long\"; pass large values in a file";
    Argv argv = JoinArgv(c);
    for (size_t i = 0; i < argv.tokens.size(); ++i) {
      if (argv.tokens[i].size() < kMaxArgStrlen) continue;
      std::string which =
          i < c.command.size()
              ? "command[" + std::to_string(i) + "]"
              : "args[" + std::to_string(i - c.command.size()) + "]";
      Error(argv.at(i), which + " is " + std::to_string(argv.tokens[i].size()) +
                            " bytes; Linux's execve() takes at most " +
                            std::to_string(kMaxArgStrlen - 1) +
                            " in one argument (MAX_ARG_STRLEN)" + consequence);
      return;
    }
    std::vector<std::string> env;
    for (const auto& [name, value] : c.env) env.push_back(name + "=" + value);
    std::function<void(const ParameterSpec&)> longest =
        [&](const ParameterSpec& p) {
          size_t value = 24;  // a number as Vertex writes it
          for (const std::string& v : p.categorical_values) {
            value = std::max(value, v.size());
          }
          argv.tokens.push_back("--" + p.id + "=" + std::string(value, 'x'));
          for (const ConditionalParameterSpec& k : p.conditionals) {
            longest(k.parameter);
          }
        };
    for (const ParameterSpec& p : job_.parameters) longest(p);
    Status fits = CheckExecLimits(argv.tokens, env, c.command[0],
                                  ExecArgSpace(8 << 20));
    if (!fits.ok()) {
      Error(c.mark, "the container's command, args and env with the longest "
                    "parameter values: " +
                        fits.message() + consequence);
    }
  }

  // A command without trialshim gets Vertex's "--id=value" as it is: right
  // for a trialshim app, which translates them itself; a Hydra app refuses
  // them. The advice is a command that runs: with the config when one is
  // known, so that trialshim casts Vertex's 64.0 for int keys too.
  void CheckNativeCommand(const ContainerSpec& c, const Launch& launch) {
    const Mark& mark =
        c.command_marks.empty() ? c.command_mark : c.command_marks[0];
    if (!launch.program_file.empty() &&
        translate::IsTrialshimApp(launch.program_file)) {
      Note(mark, "'" + c.command[0] +
                     "' is a trialshim app: it translates Vertex's "
                     "\"--id=value\" arguments itself");
      return;
    }
    std::string path = options_.config_path.empty() ? launch.config_path
                                                    : options_.config_path;
    std::string name = options_.config_name.empty() ? launch.config_name
                                                    : options_.config_name;
    std::string shim = "trialshim, ";
    if (!path.empty() && !name.empty()) {
      shim += "--config-path, " + path + ", --config-name, " + name + ", ";
    }
    Warning(mark,
            "the command does not go through trialshim: the trainer gets "
            "Vertex's \"--id=value\" arguments as they are, which a Hydra "
            "app refuses (command: [" +
                shim + "--, " + JoinStrings(c.command, ", ") + "])");
  }

  // `path` as the trial names it, on this machine (container.h), when it
  // exists there as a directory (or file); else "".
  std::string FindPath(const std::string& path, bool dir) const {
    std::string host = container_.HostPath(path);
    std::error_code ec;
    bool ok = dir ? fs::is_directory(host, ec) : fs::is_regular_file(host, ec);
    return ok ? host : "";
  }

  // " : FLAG finds it" for a path the trial needs that is not here.
  std::string Fix(const std::string& path) const {
    std::string fix = container_.SuggestFix(path, near_);
    return fix.empty() ? "" : ": " + fix + " finds it";
  }

  void CheckAgainstConfig(Launch& launch) {
    std::string path = options_.config_path.empty() ? launch.config_path
                                                    : options_.config_path;
    std::string name = options_.config_name.empty() ? launch.config_name
                                                    : options_.config_name;
    TranslateOptions syntactic = launch.translate;
    if (path.empty() || name.empty()) {
      Note(launch.config_mark,
           "no config to check parameterIds against (give --config-path and "
           "--config-name, here or in the container args)");
      CheckQuoting(syntactic);
      return;
    }
    // check's own --config-path is a path here; the container's is the
    // image's.
    std::string dir = options_.config_path.empty() ? FindPath(path, true)
                                                   : path;
    if (dir.empty()) {
      Missing(launch.config_mark,
              "config directory '" + path + "' does not exist" + Fix(path) +
                  "; parameterIds not checked");
      CheckQuoting(syntactic);
      return;
    }
    config::ComposeRequest request;
    request.config_path = dir;
    request.config_name = name;
    request.overrides = launch.overrides;
    StatusOr<config::ComposeResult> composed = config::Compose(request);
    if (!composed.ok()) {
      Error(launch.config_mark,
            "config '" + name + "' in '" + dir +
                "' does not compose: " + composed.status().message());
      return;
    }
    for (const std::string& w : composed->warnings) {
      Note(launch.config_mark, w);
    }
    StatusOr<config::ConfigRepository> repo =
        config::ConfigRepository::Open(dir);
    if (!repo.ok()) return;
    TranslateOptions aware = launch.translate;
    aware.config = &*composed;
    aware.repository = &*repo;
    aware.recompose = [request](const std::vector<std::string>& groups) {
      config::ComposeRequest again = request;
      again.overrides.insert(again.overrides.end(), groups.begin(),
                             groups.end());
      return config::Compose(again);
    };
    shim_has_config_ = launch.shim_has_config;
    for (const ParameterSpec& p : job_.parameters) {
      CheckResolves(p, {}, aware, composed->config, *repo);
    }
    CheckMetricReported(launch, composed->config);
  }

  // Sample values of `p` as Vertex would pass them.
  static std::vector<std::string> Samples(const ParameterSpec& p) {
    std::vector<std::string> out;
    ParameterValue v{p.id, p.type, 0, ""};
    switch (p.type) {
      case ParameterType::kDouble:
      case ParameterType::kInteger:
        for (double x : {p.min_value, p.max_value}) {
          v.number = x;
          out.push_back(v.Format());
        }
        break;
      case ParameterType::kDiscrete:
        for (double x : p.discrete_values) {
          v.number = x;
          out.push_back(v.Format());
        }
        break;
      case ParameterType::kCategorical:
        out = p.categorical_values;
        break;
    }
    return out;
  }

  void CheckQuoting(const TranslateOptions& options) {
    for (const ParameterSpec& p : job_.parameters) {
      if (p.type != ParameterType::kCategorical) continue;
      for (size_t i = 0; i < p.categorical_values.size(); ++i) {
        const std::string& v = p.categorical_values[i];
        StatusOr<std::vector<std::string>> out =
            TranslateToArgv({"--" + p.id + "=" + v}, options);
        if (!out.ok() || out->size() != 1) continue;
        std::string got = (*out)[0].substr((*out)[0].find('=') + 1);
        if (got != v) {
          Note(i < p.value_marks.size() ? p.value_marks[i] : p.id_mark,
               "value '" + v + "' of '" + p.id +
                   "' would be misread by Hydra; trialshim passes it as " +
                   got);
        }
      }
    }
  }

  // `parents` are the arguments that activate `p` when it is conditional:
  // they go first so that a key only the chosen group option defines
  // resolves (TranslateOptions::recompose).
  void CheckResolves(const ParameterSpec& p,
                     const std::vector<std::string>& parents,
                     const TranslateOptions& options, const Node& config,
                     const config::ConfigRepository& repo) {
    if (!p.has_value_spec || p.id.empty()) return;
    for (const ConditionalParameterSpec& c : p.conditionals) {
      std::vector<std::string> with = parents;
      ParameterValue v{p.id, p.type, 0, ""};
      if (!c.parent_categorical_values.empty()) {
        v.text = c.parent_categorical_values[0];
      } else if (!c.parent_int_values.empty()) {
        v.number = static_cast<double>(c.parent_int_values[0]);
      } else if (!c.parent_discrete_values.empty()) {
        v.number = c.parent_discrete_values[0];
      }
      with.push_back(v.Arg());
      CheckResolves(c.parameter, with, options, config, repo);
    }
    // A group needs option names; say so before Translate refuses "1".
    if (p.type != ParameterType::kCategorical && repo.GroupExists(p.id)) {
      Error(p.id_mark, "parameter '" + p.id + "' selects config group '" +
                           p.id + "', so it must be CATEGORICAL, not " +
                           ParameterTypeName(p.type));
      return;
    }
    std::vector<std::string> samples = Samples(p);
    std::string key;
    for (size_t i = 0; i < samples.size(); ++i) {
      std::vector<std::string> args = parents;
      args.push_back("--" + p.id + "=" + samples[i]);
      StatusOr<std::vector<std::string>> out = TranslateToArgv(args, options);
      const Mark& m =
          p.type == ParameterType::kCategorical && i < p.value_marks.size()
              ? p.value_marks[i]
              : p.id_mark;
      if (!out.ok()) {
        Error(m, "parameter '" + p.id + "': " + out.status().message());
        if (p.type != ParameterType::kCategorical) return;
        continue;
      }
      if (out->size() != args.size()) return;
      const std::string& arg = out->back();
      size_t eq = arg.find('=');
      if (eq == std::string::npos) return;
      std::string got = arg.substr(eq + 1);
      if (p.type == ParameterType::kCategorical && got != samples[i]) {
        Note(m, "value '" + samples[i] + "' of '" + p.id +
                    "' would be misread by Hydra; trialshim passes it as " +
                    got);
      }
      if (!key.empty()) continue;
      key = arg.substr(0, eq);
      if (key[0] == '+') {
        Warning(p.id_mark, "parameter '" + p.id + "' is not in the config; " +
                               "trialshim adds it as " + arg.substr(0, eq) +
                               " (--add-unknown)");
        return;
      }
    }
    if (key.empty()) return;
    if (repo.GroupExists(key)) {
      if (p.type != ParameterType::kCategorical) {
        Error(p.id_mark, "parameter '" + p.id + "' selects config group '" +
                             key + "', so it must be CATEGORICAL, not " +
                             ParameterTypeName(p.type));
      }
      return;  // option names are checked by Translate
    }
    const Node* node = config.Find(key);
    if (!node) return;
    CheckType(p, key, *node);
  }

  void CheckType(const ParameterSpec& p, const std::string& key,
                 const Node& node) {
    if (node.is_null() || node.IsMissing() || node.IsInterpolation()) return;
    std::string type = node.type_name();
    std::string where = "parameter '" + p.id + "' sets " + key + ", which is " +
                        (type == "int" ? "an " : "a ") + type +
                        " in the config";
    if (node.is_map() || node.is_list()) {
      Error(p.id_mark, where + "; a tuned value must set a scalar key");
      return;
    }
    switch (p.type) {
      case ParameterType::kInteger:
        if (!node.is_number()) {
          Error(p.id_mark, where + " (INTEGER needs an int key)");
        }
        break;
      case ParameterType::kDouble:
        if (node.is_int()) {
          Error(p.id_mark, where +
                               "; DOUBLE values like 0.5 would break it (use "
                               "integerValueSpec, or write the default as " +
                               std::to_string(node.AsInt()) + ".0)");
        } else if (!node.is_double()) {
          Error(p.id_mark, where + " (DOUBLE needs a float key)");
        }
        break;
      case ParameterType::kDiscrete:
        if (node.is_int()) {
          bool integral = !p.discrete_values.empty();
          for (size_t i = 0; i < p.discrete_values.size(); ++i) {
            double v = p.discrete_values[i];
            if (std::isfinite(v) && v != std::floor(v)) {
              integral = false;
              Error(
                  i < p.value_marks.size() ? p.value_marks[i] : p.id_mark,
                  where + "; value " + FormatNumber(v) + " is not an integer");
            }
          }
          if (integral && !shim_has_config_) {
            ParameterValue v{p.id, p.type, p.discrete_values[0], ""};
            Warning(p.id_mark,
                    "parameter '" + p.id + "' is DISCRETE, so Vertex sends " +
                        v.Arg() + " (a float), and " + key +
                        " is an int in the config; trialshim makes it " +
                        FormatNumber(v.number) +
                        " only with --config-path and --config-name before "
                        "-- in its command, so here the trainer gets " +
                        v.Format() +
                        ", which int() and range() refuse. Add them, or "
                        "make the trainer accept floats");
          }
        } else if (!node.is_double()) {
          Error(p.id_mark, where + " (DISCRETE needs a number key)");
        }
        break;
      case ParameterType::kCategorical:
        if (node.is_string()) break;
        for (size_t i = 0; i < p.categorical_values.size(); ++i) {
          const std::string& v = p.categorical_values[i];
          if (!ReadsAs(v, node)) {
            Error(i < p.value_marks.size() ? p.value_marks[i] : p.id_mark,
                  where + "; value '" + v + "' is not of type " +
                      node.type_name());
          }
        }
        break;
    }
  }

  static bool ReadsAs(const std::string& v, const Node& node) {
    if (node.is_bool()) {
      std::string l = v;
      for (char& c : l) c = static_cast<char>(std::tolower(c));
      return l == "true" || l == "false";
    }
    char* end = nullptr;
    if (node.is_int()) {
      std::strtoll(v.c_str(), &end, 10);
      return !v.empty() && *end == '\0';
    }
    if (node.is_double()) {
      std::strtod(v.c_str(), &end);
      return !v.empty() && *end == '\0';
    }
    return false;
  }

  void CheckMetricReported(const Launch& launch, const Node& config) {
    if (job_.metrics.empty()) return;
    const MetricSpec& metric = job_.metrics[0];
    std::string tag, source;
    if (!launch.metric_tag.empty()) {
      tag = launch.metric_tag;
      source = "trialshim --metric-tag";
    } else if (const Node* t = config.Find("hypertune.tag");
               t && t->is_string() && !t->AsString().empty()) {
      tag = t->AsString();
      source = "hypertune.tag in the config";
    } else if (const Node* m = config.Find("hypertune.monitor");
               m && m->is_string()) {
      tag = m->AsString();
      source = "hypertune.monitor in the config";
    }
    if (tag.empty()) {
      // Most trainers report with cloudml-hypertune, which check can not
      // see: not a warning.
      if (!launch.scrapes) {
        Note(metric.id_mark,
             "the config has no hypertune.monitor and trialshim no "
             "--metric-tag/--metric-regex: the trainer must report metric '" +
                 metric.id + "' itself, or every trial ends INFEASIBLE");
      }
      return;
    }
    if (tag.find("${") != std::string::npos) return;  // resolved at run time
    if (tag != metric.id) {
      Warning(metric.id_mark, "the trainer reports '" + tag + "' (" + source +
                                  ") but the metricId is '" + metric.id +
                                  "': every trial would end INFEASIBLE" +
                                  DidYouMean(metric.id, {tag}));
    }
  }

  const JobSpec& job_;
  const CheckOptions& options_;
  std::vector<Diagnostic>* diags_;
  Container container_;  // where the spec's paths are here
  std::string near_;     // the job file's directory, for Container::SuggestFix
  bool shim_has_config_ = false;  // Launch::shim_has_config of the job
};

// YAML errors arrive as "file:line:col: message"; keep the location.
Diagnostic FromLoadError(const std::string& path, const Status& status) {
  Diagnostic d{Diagnostic::Severity::kError, {}, status.message()};
  const std::string& msg = status.message();
  if (msg.rfind(path + ":", 0) == 0) {
    int line = 0, col = 0;
    size_t used = 0;
    std::string rest = msg.substr(path.size() + 1);
    if (std::sscanf(rest.c_str(), "%d:%d: %zn", &line, &col, &used) >= 2 &&
        used > 0) {
      d.mark.file = std::make_shared<const std::string>(path);
      d.mark.line = line;
      d.mark.column = col;
      d.message = rest.substr(used);
    }
  }
  return d;
}

}  // namespace

void CheckJobSpec(const JobSpec& job, const CheckOptions& options,
                  std::vector<Diagnostic>* diagnostics) {
  Checker(job, options, diagnostics).Run();
}

StatusOr<std::vector<Diagnostic>> CheckJobFile(const std::string& path,
                                               const CheckOptions& options) {
  std::vector<Diagnostic> diags;
  StatusOr<JobSpec> job = LoadJobSpecFile(path, &diags);
  if (!job.ok()) {
    if (job.status().code() != StatusCode::kInvalidArgument) {
      return job.status();
    }
    diags.push_back(FromLoadError(path, job.status()));
    return diags;
  }
  CheckJobSpec(*job, options, &diags);
  std::stable_sort(diags.begin(), diags.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.mark.line, a.mark.column) <
                            std::tie(b.mark.line, b.mark.column);
                   });
  return diags;
}

}  // namespace trialshim::tuning
