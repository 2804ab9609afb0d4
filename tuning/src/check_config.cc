// A job spec's parameters and metric against the config its trainer
// composes (check.h lists the rules).
#include <algorithm>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "check_internal.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/search/search.h"
#include "trialshim/translate/translate.h"

namespace trialshim::tuning::internal {
namespace {

using config::Node;
using translate::TranslateOptions;
using translate::TranslateToArgv;

class ConfigChecker : public CheckerBase {
 public:
  using CheckerBase::CheckerBase;

  void Run(const Launch& launch) {
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
    CheckTrainerConfig(launch);
    CheckOneJobPerTrial(launch, *composed, request, aware);
  }


 private:
  // The config checked is trialshim's; the trial's trainer composes its
  // own unless its arguments name one. A trialshim app then composes its
  // built-in config (app::Run's config_path) and a Python app its
  // @hydra.main's, neither of which check can see. Where they differ,
  // every trial fails ("Key 'hparams_search' not in 'TrainConfig'").
  void CheckTrainerConfig(const Launch& launch) {
    if (!launch.through_trialshim || !launch.shim_has_config ||
        launch.trainer_names_config || launch.program_name.empty()) {
      return;
    }
    // As the container names it: the flags to add are the image's.
    const std::string& path = launch.config_path;
    const std::string& name = launch.config_name;
    if (launch.runs_python) {
      Note(launch.program_mark,
           "the trainer names no config, so @hydra.main's config_path and "
           "config_name choose it, which check can not see: they must be " +
               path + "/" + name +
               ", which trialshim translates the trial's arguments against");
      return;
    }
    Warning(launch.program_mark,
            "'" + launch.program_name +
                "' names no config after it, so it composes its own (a "
                "trialshim app: its built-in config), which check can not "
                "see, while trialshim translates the trial's arguments "
                "against " +
                path + "/" + name +
                "; where they differ every trial fails. Add --config-path " +
                path + " --config-name " + name + " after " +
                launch.program_name + " (as `trialshim job` writes it)");
  }

  // Why the trial's trainer would run a multirun of its own ("" if it runs
  // one job): Hydra 1.3 takes -m, else hydra.mode from the composed config
  // (lightning-hydra-template's hparams_search configs set MULTIRUN).
  static std::string MultirunReason(const Launch& launch,
                                    const config::ComposeResult& composed) {
    std::string jobs = "a sweep";
    if (const Node* n = composed.hydra.Find("sweeper.n_trials");
        n && n->is_int()) {
      jobs = "the whole search (hydra.sweeper.n_trials: " +
             std::to_string(n->AsInt()) + " jobs)";
    }
    if (launch.trainer_multirun) {
      return "the trainer's arguments have -m (--multirun), so each trial "
             "would run " + jobs;
    }
    const Node* mode = composed.hydra.Find("mode");
    if (mode && mode->is_string() && mode->AsString() == "MULTIRUN") {
      return "the composed config sets hydra.mode: MULTIRUN, so each trial "
             "would run " + jobs + " instead of one job";
    }
    return "";
  }

  // A trial runs one job: the config composed with the container's
  // arguments, then with a trial's values as trialshim translates them
  // (the first value of each parameter: a group option may set hydra.mode).
  void CheckOneJobPerTrial(const Launch& launch,
                           const config::ComposeResult& composed,
                           const config::ComposeRequest& request,
                           const TranslateOptions& aware) {
    std::string why = MultirunReason(launch, composed);
    if (why.empty() && launch.through_trialshim) {
      std::vector<std::string> trial;
      for (const ParameterSpec& p : job_.parameters) {
        std::vector<std::string> samples = Samples(p);
        if (p.has_value_spec && !p.id.empty() && !samples.empty()) {
          trial.push_back("--" + p.id + "=" + samples[0]);
        }
      }
      StatusOr<std::vector<std::string>> args = TranslateToArgv(trial, aware);
      if (!args.ok()) return;  // CheckResolves said why
      // Hydra's flags pass through untranslated (CheckNotHydraFlag says
      // why that is wrong); only the overrides compose.
      args->erase(std::remove_if(args->begin(), args->end(),
                                 [](const std::string& a) {
                                   return StartsWith(a, "-");
                                 }),
                  args->end());
      config::ComposeRequest again = request;
      again.overrides.insert(again.overrides.end(), args->begin(),
                             args->end());
      StatusOr<config::ComposeResult> with = config::Compose(again);
      if (!with.ok()) {
        Error(launch.config_mark, "the trial with " + JoinStrings(*args, " ") +
                                      " does not compose: " +
                                      with.status().message());
        return;
      }
      why = MultirunReason(launch, *with);
      if (!why.empty()) why += " (with " + JoinStrings(*args, " ") + ")";
    }
    if (why.empty()) return;
    Error(launch.config_mark,
          why + ": Vertex bills every trial for all of them and reads one "
                "metric. " +
              (launch.trainer_multirun
                   ? std::string("Remove -m from the trainer's arguments")
                   : std::string("Add hydra.mode=RUN to the container args "
                                 "(as `trialshim job` writes it)")));
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
    const std::string key = TranslatedKey(p, parents, options);
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

  // The config key Translate makes of `p`'s sample values (after
  // `parents`), noting values Hydra would misread; "" when it refuses them
  // (said here) or adds the key (--add-unknown, a warning).
  std::string TranslatedKey(const ParameterSpec& p,
                            const std::vector<std::string>& parents,
                            const TranslateOptions& options) {
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
        if (p.type != ParameterType::kCategorical) return "";
        continue;
      }
      if (out->size() != args.size()) return "";
      const std::string& arg = out->back();
      size_t eq = arg.find('=');
      if (eq == std::string::npos) return "";
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
        return "";
      }
    }
    return key;
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
        // Hydra passes a float to an untyped int key (the Optuna sweeper's
        // own examples sweep 2.5 over `x: 1`): the trainer decides.
        if (node.is_int()) {
          Warning(p.id_mark,
                  where + ", and the trials get DOUBLE values like 0.5, which "
                          "Hydra passes to an untyped key and a structured "
                          "config refuses (use integerValueSpec for ints, or "
                          "write the default as " +
                      std::to_string(node.AsInt()) + ".0 for floats)");
        } else if (!node.is_double()) {
          Error(p.id_mark, where + " (DOUBLE needs a float key)");
        }
        break;
      case ParameterType::kDiscrete:
        if (node.is_int()) {
          CheckDiscreteOnIntKey(p, key, where);
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

  // A DISCRETE parameter on an int key: every value must be integral, and
  // Vertex's float text reaches the trainer as it is unless trialshim has
  // the config.
  void CheckDiscreteOnIntKey(const ParameterSpec& p, const std::string& key,
                             const std::string& where) {
    bool integral = !p.discrete_values.empty();
    for (size_t i = 0; i < p.discrete_values.size(); ++i) {
      double v = p.discrete_values[i];
      if (std::isfinite(v) && v != std::floor(v)) {
        integral = false;
        Warning(i < p.value_marks.size() ? p.value_marks[i] : p.id_mark,
                where + ", and the trials get value " + FormatNumber(v) +
                    ", a float, which Hydra passes to an untyped key and a "
                    "structured config refuses");
        break;
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

  // The names a config key holds: a string or a list of strings, its
  // interpolations resolved (hypertune.monitor: ${optimized_metric}).
  // nullopt when absent, null, of another type or resolved only at run
  // time (${oc.env:...} of the trial's environment, ${hydra:...}).
  static std::optional<std::vector<std::string>> NamesAt(
      const Node& config, const std::string& key) {
    StatusOr<Node> value = config::ResolvePath(config, key);
    if (!value.ok()) return std::nullopt;
    std::vector<std::string> names;
    if (value->is_string() && !value->AsString().empty()) {
      names.push_back(value->AsString());
    } else if (value->is_list()) {
      for (const Node& item : value->AsList()) {
        if (!item.is_string()) return std::nullopt;
        names.push_back(item.AsString());
      }
    }
    if (names.empty()) return std::nullopt;
    return names;
  }

  // What the trainer reports, as the shipped trainers decide it:
  // digits-train (trainer/options.h) reports hypertune.monitor, each under
  // hypertune.tag's name when given; examples/vertex/train.py reports
  // hypertune.tag; `trialshim --metric-tag` scrapes one tag.
  void CheckMetricReported(const Launch& launch, const Node& config) {
    if (job_.metrics.empty()) return;
    std::vector<std::string> tags;
    std::string source, fix_key;
    const auto tag = NamesAt(config, "hypertune.tag");
    const auto monitor = NamesAt(config, "hypertune.monitor");
    if (!launch.metric_tag.empty()) {
      tags = {launch.metric_tag};
      source = "trialshim --metric-tag";
    } else if (tag) {
      tags = *tag;
      source = "hypertune.tag in the config";
      fix_key = monitor ? "hypertune.monitor" : "hypertune.tag";
    } else if (monitor) {
      tags = *monitor;
      source = "hypertune.monitor in the config";
      fix_key = "hypertune.monitor";
    }
    if (tags.empty()) {
      // Most trainers report with cloudml-hypertune, which check can not
      // see: not a warning.
      if (!launch.scrapes) {
        Note(job_.metrics[0].id_mark,
             "the config has no hypertune.monitor and trialshim no "
             "--metric-tag/--metric-regex: the trainer must report metric '" +
                 job_.metrics[0].id + "' itself, or every trial ends "
                 "INFEASIBLE");
      }
      return;
    }
    for (const std::string& t : tags) {
      if (t.find("${") != std::string::npos) return;  // resolved at run time
    }
    std::vector<std::string> ids;
    for (const MetricSpec& m : job_.metrics) ids.push_back(m.id);
    for (const MetricSpec& m : job_.metrics) {
      if (std::find(tags.begin(), tags.end(), m.id) != tags.end()) continue;
      if (job_.metrics.size() == 1 && tags.size() == 1) {
        Warning(m.id_mark, "the trainer reports '" + tags[0] + "' (" +
                               source + ") but the metricId is '" + m.id +
                               "': every trial would end INFEASIBLE" +
                               DidYouMean(m.id, tags));
        continue;
      }
      // Vertex needs every metricSpec measured (a trial without one is
      // INFEASIBLE); the trainer reports only what its config names.
      std::string fix;
      if (!fix_key.empty()) {
        fix = "; report them all: add '" + fix_key + "=[" +
              JoinStrings(ids, ",") + "]'" +
              (fix_key == "hypertune.monitor" && tag
                   ? " 'hypertune.tag=null'"
                   : "") +
              " to containerSpec.args (`trialshim job` takes " +
              (fix_key == "hypertune.monitor" && tag ? "them" : "it") +
              " among its overrides)";
      } else {
        fix = "; the trainer must report it itself";
      }
      Warning(m.id_mark, "metric '" + m.id + "' is never reported: the "
                             "trainer reports only '" +
                             JoinStrings(tags, "', '") + "' (" + source +
                             "), so every trial would end INFEASIBLE" + fix);
    }
  }
  bool shim_has_config_ = false;  // Launch::shim_has_config of the job
};

}  // namespace

void CheckAgainstConfig(const JobSpec& job, const CheckOptions& options,
                        const Launch& launch,
                        std::vector<Diagnostic>* diagnostics) {
  ConfigChecker(job, options, diagnostics).Run(launch);
}

}  // namespace trialshim::tuning::internal
