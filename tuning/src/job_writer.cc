// The job writer; see job_writer.h for what maps to what.
#include "trialshim/tuning/job_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/render.h"
#include "trialshim/config/sweepers.h"
#include "trialshim/search/optuna_samplers.h"
#include "trialshim/search/optuna_sweeper.h"
#include "trialshim/search/search.h"
#include "trialshim/translate/translate.h"
#include "trialshim/tuning/check.h"
#include "trialshim/tuning/container.h"
#include "trialshim/tuning/vertex_rules.h"

namespace trialshim::tuning {
namespace {

using config::Node;
using config::OptunaDistribution;
using config::Override;
using DKind = config::OptunaDistribution::Kind;

constexpr char kOptunaSweeper[] =
    "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper";
constexpr char kBasicSweeper[] =
    "hydra._internal.core_plugins.basic_sweeper.BasicSweeper";
// DiscreteValueSpec.values "should not contain more than 1,000 values"
// (study.py); check.h refuses more.
constexpr size_t kMaxDiscreteValues = 1000;

Status Refuse(const std::string& key, const std::string& why) {
  return Status::InvalidArgument("'" + key + "': " + why);
}

// The text that makes trialshim hand the trial `v`: a string as it is (the
// shim quotes what Hydra would misread), anything else as override text.
std::string VertexText(const Node& v) {
  return v.is_string() ? v.AsString() : config::RenderValue(v);
}

// The value a job gets from override text (the part after "key="): Hydra
// parses it; text Hydra can not read as one value (a comma list from
// choice('a,b')) is taken as the string it spells, as trialshim passes it.
Node JobValue(const std::string& text) {
  StatusOr<Node> v = config::ParseOverrideValue(text);
  return v.ok() ? *v : Node::String(text);
}

// A decimal step's value without the last bit of float error:
// 0.1 * 3 -> 0.3, as people write it and Hydra's float range() gives it
// (FloatRange in hydra/core/override_parser/types.py steps in
// decimal.Decimal).
double RoundedDecimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return std::strtod(buf, nullptr);
}

// Python's str() of a sampler option, for notes.
std::string Shown(const Node& v) { return config::PythonStr(v); }

// The request's accelerator with its defaults (job_writer.h): what the
// machine type comes with, a count of the machine type's or 1.
Accelerator AcceleratorOf(const HydraSweepRequest& r) {
  Accelerator a = r.accelerator;
  std::optional<Accelerator> attached = AttachedAccelerator(r.machine_type);
  if (a.type.empty()) return attached && a.count == 0 ? *attached : a;
  if (a.count == 0) a.count = attached ? attached->count : 1;
  return a;
}

class Writer {
 public:
  explicit Writer(const HydraSweepRequest& request)
      : req_(request), accelerator_(AcceleratorOf(request)) {}

  StatusOr<HydraSweepJob> Run() {
    if (req_.config_path.empty() || req_.config_name.empty()) {
      return Status::InvalidArgument(
          "a Hydra sweep needs --config-path and --config-name");
    }
    if (req_.command.empty()) {
      return Status::InvalidArgument("no COMMAND: the trainer to run");
    }
    TRIALSHIM_RETURN_IF_ERROR(CheckVertexFields());
    TRIALSHIM_RETURN_IF_ERROR(Compose());
    TRIALSHIM_RETURN_IF_ERROR(ReadSweeper());
    if (job_.spec.parameters.empty()) {
      return Status::InvalidArgument(
          "nothing to tune: hydra.sweeper.params and the overrides hold no "
          "sweep (a Vertex job needs at least one parameter), e.g. "
          "optimizer.lr=interval(1e-4,1e-1)");
    }
    TRIALSHIM_RETURN_IF_ERROR(ReadMetrics());
    BuildTrialJob();
    TRIALSHIM_RETURN_IF_ERROR(Check());
    return std::move(job_);
  }

 private:
  // What Vertex would refuse of the request's own fields, named by
  // `trialshim job`'s flags (vertex_rules.h).
  Status CheckVertexFields() const {
    Status machine = CheckMachineType(req_.machine_type);
    if (!machine.ok()) {
      return Status::InvalidArgument("--machine-type: " + machine.message());
    }
    if (!accelerator_.type.empty()) {
      Status ok = CheckAccelerator(req_.machine_type, accelerator_);
      if (!ok.ok()) {
        return Status::InvalidArgument(
            "--accelerator-type " + accelerator_.type +
            " --accelerator-count " + std::to_string(accelerator_.count) +
            ": " + ok.message());
      }
    } else if (accelerator_.count != 0) {
      return Status::InvalidArgument(
          "--accelerator-count without --accelerator-type: name the GPU");
    }
    if (req_.replica_count < 1) {
      return Status::InvalidArgument(
          "--replica-count " + std::to_string(req_.replica_count) +
          ": a trial needs at least 1 replica");
    }
    if (!req_.output_dir.empty()) {
      Status gcs = CheckOutputUriPrefix(req_.output_dir);
      if (!gcs.ok()) {
        return Status::InvalidArgument("--output-dir " + gcs.message());
      }
    }
    return Status::Ok();
  }

  // ---- The config.

  Status Compose() {
    config::ComposeRequest request;
    request.config_path = req_.config_path;
    request.config_name = req_.config_name;
    TRIALSHIM_ASSIGN_OR_RETURN(
        config::ConfigRepository repo,
        config::ConfigRepository::Open(req_.config_path));
    for (const std::string& text : req_.overrides) {
      TRIALSHIM_ASSIGN_OR_RETURN(Override o, config::ParseOverride(text));
      if (o.is_hydra()) {
        // Hydra's own refusal, word for word: a multirun may not sweep
        // hydra.* (ConfigLoaderImpl.validate_sweep_overrides_legal,
        // hydra/_internal/config_loader_impl.py).
        if (o.is_sweep()) {
          return Status::InvalidArgument(
              "Sweeping over Hydra's configuration is not supported : '" +
              text + "'");
        }
        if (!Sweeper(o) && o.key_or_group != "hydra.mode" &&
            !StartsWith(o.key_or_group, "hydra.sweep.")) {
          hydra_args_.push_back(text);
        }
      } else {
        task_overrides_.push_back(text);
      }
      if (!o.is_sweep()) {
        request.overrides.push_back(text);
        continue;
      }
      TRIALSHIM_RETURN_IF_ERROR(SweptKey(o));
      if (repo.GroupExists(o.key_or_group) && !o.sweep.items.empty() &&
          o.sweep.items[0].value.is_string()) {
        // Hydra composes a multirun's master config without its sweeps
        // (Overrides in hydra/_internal/defaults_list.py skips them) and
        // skips a "???" group; here the group's first option stands in, so
        // that its keys' types are known and no "???" is left.
        request.overrides.push_back(o.KeyElement() + "=" +
                                    o.sweep.items[0].text);
      }
    }
    StatusOr<config::ComposeResult> composed = config::Compose(request);
    if (!composed.ok()) {
      return composed.status().WithPrefix("config '" + req_.config_name +
                                          "' in '" + req_.config_path + "'");
    }
    composed_ = std::move(composed).value();
    return Status::Ok();
  }

  // What a Vertex parameter can not stand for: a deletion, a package.
  static Status SweptKey(const Override& o) {
    if (o.type == config::OverrideType::kDelete) {
      return Refuse(o.KeyElement(),
                    "a sweep of a deletion can not be a Vertex parameter");
    }
    if (o.package) {
      return Refuse(o.KeyElement(),
                    "a sweep of a group with a package (@" + *o.package +
                        ") can not be a Vertex parameter, whose id trialshim "
                        "reads as a key or a group");
    }
    return Status::Ok();
  }

  static bool Sweeper(const Override& o) {
    return o.key_or_group == "hydra.sweeper" ||
           StartsWith(o.key_or_group, "hydra.sweeper.") ||
           StartsWith(o.key_or_group, "hydra/sweeper");
  }

  // hydra.<key> resolved against the whole config, as a plugin reads it.
  StatusOr<Node> Hydra(const std::string& key) const {
    return config::ResolveHydra(composed_, key, false,
                                config::HydraScope::kWholeConfig);
  }
  // A task key resolved, or null when the config has none.
  StatusOr<Node> Task(const std::string& key) const {
    if (composed_.config.Find(key) == nullptr) return Node::Null();
    config::ResolveOptions options;
    options.hydra = &composed_.hydra;
    return config::ResolvePath(composed_.config, key, options);
  }

  std::string Choice(const std::string& group) const {
    for (const auto& [g, option] : composed_.choices) {
      if (g == group && option) return *option;
    }
    return "";
  }

  // ---- The sweeper and its parameters.

  Status ReadSweeper() {
    const Node* target = composed_.hydra.Find("sweeper._target_");
    std::string t = target && target->is_string() ? target->AsString() : "";
    if (t != kOptunaSweeper && t != kBasicSweeper) {
      return Status::InvalidArgument(
          "hydra/sweeper=" + Choice("hydra/sweeper") +
          ": trialshim reads Hydra's basic sweeper and hydra-optuna-sweeper "
          "(override hydra/sweeper: optuna)");
    }
    // The Optuna sweeper's node is read once (search/optuna_sweeper.h);
    // the basic sweeper's params alone.
    Node params;
    if (t == kOptunaSweeper) {
      TRIALSHIM_ASSIGN_OR_RETURN(
          optuna_, ReadOptunaSweeperConfig(composed_, "a Vertex job"));
      params = optuna_.params;
    } else {
      TRIALSHIM_ASSIGN_OR_RETURN(params, Hydra("sweeper.params"));
    }
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> conf,
                               config::SweeperParamsOverrides(params));
    conf.insert(conf.end(), task_overrides_.begin(), task_overrides_.end());
    return t == kOptunaSweeper ? ReadOptuna(conf) : ReadBasic(conf);
  }

  // hydra-optuna-sweeper 1.2.0 (the anchor; OptunaSweeperImpl.sweep in
  // hydra_plugins/hydra_optuna_sweeper/_impl.py): its search space is
  // hydra.sweeper.params followed by the command line's overrides, the
  // later winning; it runs n_trials in batches of n_jobs.
  Status ReadOptuna(const std::vector<std::string>& conf) {
    TRIALSHIM_ASSIGN_OR_RETURN(config::OptunaSearchSpace space,
                               config::ReadOptunaSearchSpace(conf));
    job_.warnings.insert(job_.warnings.end(), space.warnings.begin(),
                         space.warnings.end());
    const int64_t n_trials = optuna_.n_trials;
    const int64_t n_jobs = optuna_.n_jobs;
    ReadSampler();
    TRIALSHIM_ASSIGN_OR_RETURN(uint64_t grid, ReadOptunaParams(space));
    for (const config::FixedParam& f : space.fixed) {
      fixed_args_.push_back(f.name + "=" + f.text);
    }
    // The GridSampler runs at most the grid: sweep() sets n_trials to
    // min(n_trials, the grid's size), "due to using GridSampler".
    int64_t trials = grid > 0 && grid < static_cast<uint64_t>(n_trials)
                         ? static_cast<int64_t>(grid)
                         : n_trials;
    job_.spec.max_trial_count = trials;
    job_.spec.parallel_trial_count = std::min(n_jobs, trials);
    // sweep() tells the study a trial FAILed and re-raises its exception.
    TRIALSHIM_RETURN_IF_ERROR(ReadDirections(optuna_.directions));
    Note(
        "a failed trial stops hydra-optuna-sweeper's whole study; Vertex "
        "goes on (maxFailedTrialCount is left to Vertex)");
    if (!optuna_.storage.is_null()) {
      Note("hydra.sweeper.storage=" + Shown(optuna_.storage) +
           ": Vertex keeps the study itself");
    }
    if (optuna_.study_name) {
      Note("hydra.sweeper.study_name=" + *optuna_.study_name +
           ": Vertex keeps the study itself");
    }
    return Status::Ok();
  }

  // The search space's parameters; with the GridSampler, each its grid's
  // values, and the grid's size is returned (0 otherwise). The plugin's
  // _to_grid_sampler_choices takes choices, and ranges as their values;
  // an interval has no grid ("GridSampler only supports discrete
  // distributions").
  StatusOr<uint64_t> ReadOptunaParams(const config::OptunaSearchSpace& space) {
    bool grid = job_.spec.algorithm == Algorithm::kGridSearch;
    uint64_t size = 1;
    for (const config::OptunaParam& p : space.params) {
      TRIALSHIM_ASSIGN_OR_RETURN(std::string id, ParameterId(p.from));
      ParameterSpec spec;
      if (grid) {
        StatusOr<std::vector<Node>> values =
            config::OptunaGridChoices(p.distribution);
        if (!values.ok()) {
          return Refuse(p.name, values.status().message() +
                                    " (GridSampler: use choice(...) or a "
                                    "range(...))");
        }
        std::vector<Node> jobs;
        for (const Node& v : *values) jobs.push_back(JobValue(Shown(v)));
        TRIALSHIM_ASSIGN_OR_RETURN(spec, FromValues(id, jobs));
        size *= std::max<size_t>(1, Count(spec));
      } else {
        TRIALSHIM_ASSIGN_OR_RETURN(spec, FromDistribution(id, p.distribution));
      }
      job_.spec.parameters.push_back(std::move(spec));
    }
    return grid ? size : 0;
  }

  // The sampler as Vertex's algorithm, with what Vertex can not follow.
  void ReadSampler() {
    const std::string& t = optuna_.sampler_target;
    const OptunaSampler* known = optuna_.known_sampler;
    std::string name =
        t.empty() ? "hydra/sweeper/sampler=" + optuna_.sampler_option : t;
    if (known == nullptr) {
      job_.warnings.push_back(
          "hydra.sweeper.sampler: " + name +
          " is not a sampler trialshim knows; ALGORITHM_UNSPECIFIED (Vertex's "
          "Bayesian optimization) stands in for it");
      job_.spec.algorithm = Algorithm::kUnspecified;
    } else {
      job_.spec.algorithm = known->algorithm;
      if (known->note) Note(name + ": " + known->note);
    }
    if (optuna_.sampler.is_map()) SamplerOptions(optuna_.sampler, t);
  }

  // The sampler's options Vertex has no use for: notes, and a warning for
  // Python objects.
  void SamplerOptions(const Node& sampler, const std::string& target) {
    static const std::set<std::string> kPython = {
        "independent_sampler", "restart_strategy", "source_trials",
        "constraints_func"};
    const Node defaults = config::OptunaSamplerDefaults(target);
    std::string options;
    for (const auto& [key, value] : sampler.AsMap()) {
      if (key == "_target_" || key == "_partial_" || value.is_null()) continue;
      const Node* preset = defaults.is_map() ? defaults.Get(key) : nullptr;
      if (preset && *preset == value) continue;  // the sampler's default
      if (key == "seed") {
        if (value.is_int()) job_.seed = static_cast<uint64_t>(value.AsInt());
        Note("hydra.sweeper.sampler.seed=" + Shown(value) +
             ": Vertex's search takes no seed (`trialshim sweep` uses it)");
      } else if (kPython.count(key)) {
        job_.warnings.push_back("hydra.sweeper.sampler." + key +
                                " is a Python object, which a Vertex job "
                                "can not take: ignored");
      } else {
        options += (options.empty() ? "" : ", ") + key + "=" + Shown(value);
      }
    }
    if (!options.empty()) {
      Note("hydra.sweeper.sampler's " + options +
           ": options of the sampler, which Vertex has no equivalent for");
    }
  }

  // Hydra's basic sweeper runs the Cartesian product of its sweeps
  // (itertools.product in BasicSweeper.split_arguments,
  // hydra/_internal/core_plugins/basic_sweeper.py): Vertex's GRID_SEARCH,
  // every combination once. Its default launcher runs one job at a time,
  // hence one parallel trial.
  Status ReadBasic(const std::vector<std::string>& conf) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        std::vector<config::BasicSweepAxis> axes,
        config::ReadBasicSweep(conf, &composed_.repository));
    uint64_t jobs = 1;
    for (const config::BasicSweepAxis& axis : axes) {
      if (!axis.from.is_sweep()) {
        fixed_args_.push_back(axis.key + "=" + axis.texts[0]);
        continue;
      }
      if (axis.texts.empty()) {
        return Refuse(axis.key, "the glob matches no option");
      }
      TRIALSHIM_ASSIGN_OR_RETURN(std::string id, ParameterId(axis.from));
      std::vector<Node> values;
      for (const std::string& text : axis.texts)
        values.push_back(JobValue(text));
      TRIALSHIM_ASSIGN_OR_RETURN(ParameterSpec spec, FromValues(id, values));
      jobs *= Count(spec);
      job_.spec.parameters.push_back(std::move(spec));
    }
    job_.spec.algorithm = Algorithm::kGridSearch;
    job_.spec.max_trial_count = static_cast<int64_t>(jobs);
    job_.spec.parallel_trial_count = 1;
    return ReadDirections({});
  }

  // The parameterId of a sweep's key ("+x" adds x: trialshim's
  // --add-unknown then adds it where the config lacks it).
  StatusOr<std::string> ParameterId(const Override& o) {
    TRIALSHIM_RETURN_IF_ERROR(SweptKey(o));  // hydra.sweeper.params' too
    const std::string name = o.KeyElement();
    if (o.type != config::OverrideType::kChange) add_unknown_ = true;
    for (const ParameterSpec& p : job_.spec.parameters) {
      if (p.id == o.key_or_group) {
        return Refuse(name, "swept twice (as " + p.id + " too)");
      }
    }
    return o.key_or_group;
  }

  // ---- Parameters.

  static size_t Count(const ParameterSpec& p) {
    if (p.type == ParameterType::kInteger) {
      return static_cast<size_t>(IntegerBound(p.max_value) -
                                 IntegerBound(p.min_value)) +
             1;
    }
    return p.type == ParameterType::kDiscrete ? p.discrete_values.size()
                                              : p.categorical_values.size();
  }

  // What the config holds at `id`: a group, a number, or else.
  bool IsGroup(const std::string& id) const {
    return composed_.repository.GroupExists(id);
  }
  const Node* KeyNode(const std::string& id) const {
    return IsGroup(id) ? nullptr : composed_.config.Find(id);
  }

  // The values a job gets for the key, as a Vertex parameter.
  StatusOr<ParameterSpec> FromValues(const std::string& id,
                                     const std::vector<Node>& values) {
    ParameterSpec p;
    p.id = id;
    p.has_value_spec = true;
    const Node* node = KeyNode(id);
    if (node && (node->is_map() || node->is_list())) {
      return Refuse(id, std::string("a sweep over a ") +
                            (node->is_map() ? "dict" : "list") +
                            " value: the config holds one there, and a Vertex "
                            "parameter sets a number or a string (sweep a "
                            "config group whose options set it, or its "
                            "items one by one)");
    }
    bool numbers = node && node->is_number();
    for (const Node& v : values) {
      if (v.is_map() || v.is_list()) {
        return Refuse(id, "a sweep over " +
                              std::string(v.is_map() ? "dict" : "list") +
                              " values (" + config::RenderValue(v) +
                              "): a Vertex parameter sets a number or a "
                              "string (sweep a config group whose options "
                              "set it)");
      }
      numbers = numbers && v.is_number();
    }
    if (numbers) {
      p.type = ParameterType::kDiscrete;
      for (const Node& v : values) p.discrete_values.push_back(v.AsDouble());
      std::sort(p.discrete_values.begin(), p.discrete_values.end());
      size_t before = p.discrete_values.size();
      p.discrete_values.erase(
          std::unique(p.discrete_values.begin(), p.discrete_values.end()),
          p.discrete_values.end());
      if (p.discrete_values.size() > kMaxDiscreteValues) {
        return TooMany(id, static_cast<double>(p.discrete_values.size()));
      }
      if (p.discrete_values.size() < before) Duplicates(id);
      return p;
    }
    p.type = ParameterType::kCategorical;
    for (const Node& v : values) {
      std::string text = VertexText(v);
      if (std::find(p.categorical_values.begin(), p.categorical_values.end(),
                    text) == p.categorical_values.end()) {
        p.categorical_values.push_back(text);
      } else {
        Duplicates(id);
      }
    }
    return p;
  }

  static Status TooMany(const std::string& id, double n) {
    return Refuse(id, FormatNumber(n) +
                          " values; Vertex takes at most 1000 DISCRETE values "
                          "(use a larger step, or interval(...))");
  }

  void Duplicates(const std::string& id) {
    Note(id + ": a value listed twice is one Vertex value");
  }

  // An optuna distribution as create_optuna_distribution_from_override
  // (_impl.py) makes it: choice() and shuffled ranges are categorical;
  // range() is IntUniform, or DiscreteUniform when a bound or the step is a
  // float; interval() is Uniform, or IntUniform for int bounds, log-scaled
  // with tag(log, ...). Choices and stepped ranges become CATEGORICAL or
  // DISCRETE values; the rest (intervals, integer ranges of step 1) a
  // range spec of their type and scale.
  StatusOr<ParameterSpec> FromDistribution(const std::string& id,
                                           const OptunaDistribution& d) {
    std::vector<Node> values;
    switch (d.kind) {
      case DKind::kCategorical:
        for (const Node& c : d.choices) {
          values.push_back(JobValue(config::OptunaValueText(c)));
        }
        return FromValues(id, values);
      case DKind::kIntUniform:
      case DKind::kDiscreteUniform: {
        if (d.kind == DKind::kIntUniform && d.step == 1 && d.low < d.high)
          break;
        double n = std::round((d.high - d.low) / d.step) + 1;
        if (n > kMaxDiscreteValues) return TooMany(id, n);
        for (double i = 0; i < n; ++i) {
          double v = i * d.step + d.low;
          values.push_back(d.is_int() ? Node::Int(static_cast<int64_t>(v))
                                      : Node::Double(RoundedDecimal(v)));
        }
        return FromValues(id, values);
      }
      default:
        if (d.low == d.high) {
          values.push_back(d.is_int() ? Node::Int(static_cast<int64_t>(d.low))
                                      : Node::Double(d.low));
          return FromValues(id, values);
        }
    }
    ParameterSpec p;
    p.id = id;
    p.has_value_spec = true;
    p.type = d.is_int() ? ParameterType::kInteger : ParameterType::kDouble;
    p.min_value = d.low;
    p.max_value = d.high;
    p.scale = d.is_log() ? ScaleType::kLog : ScaleType::kLinear;
    const Node* node = KeyNode(id);
    if (!d.is_int() && node && node->is_int()) {
      // Hydra passes the floats to an untyped key (the plugin's own examples
      // do); an app's structured config refuses them in the first trial.
      job_.warnings.push_back(
          id + ": interval(...) gives floats, but the config holds an int "
               "there (" +
          Shown(*node) +
          "): every trial's value is a float such as 2.5, which Hydra "
          "passes to an untyped key and a structured config refuses; for "
          "ints use int(interval(" +
          FormatNumber(d.low) + ", " + FormatNumber(d.high) + "))");
    }
    return p;
  }

  // ---- Metrics and goals.

  // --direction, else the sweeper's (none for the basic sweeper).
  Status ReadDirections(const std::vector<std::string>& sweeper) {
    directions_ = req_.directions.empty() ? sweeper : req_.directions;
    for (const std::string& d : directions_) {
      if (d != "minimize" && d != "maximize") {
        return Status::InvalidArgument("direction '" + d +
                                       "': expected minimize or maximize" +
                                       DidYouMean(d, {"minimize", "maximize"}));
      }
    }
    return Status::Ok();
  }

  StatusOr<std::vector<std::string>> MetricIds() const {
    if (!req_.metrics.empty()) return req_.metrics;
    TRIALSHIM_ASSIGN_OR_RETURN(Node optimized, Task("optimized_metric"));
    std::vector<std::string> ids;
    if (optimized.is_string()) {
      ids.push_back(optimized.AsString());
    } else if (optimized.is_list()) {
      for (const Node& m : optimized.AsList()) ids.push_back(Shown(m));
    } else if (!optimized.is_null()) {
      return Status::InvalidArgument(
          "optimized_metric must be a metric name "
          "or a list of them, got " +
          Shown(optimized));
    }
    if (!ids.empty()) return ids;
    for (const char* key : {"hypertune.tag", "hypertune.monitor"}) {
      TRIALSHIM_ASSIGN_OR_RETURN(Node tag, Task(key));
      if (tag.is_string() && !tag.AsString().empty()) {
        return std::vector<std::string>{tag.AsString()};
      }
    }
    return Status::InvalidArgument(
        "no metric: the config has no optimized_metric and no "
        "hypertune.monitor; name the metric the trials report with --metric "
        "NAME (once per objective, in the order of hydra.sweeper.direction)");
  }

  Status ReadMetrics() {
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> ids, MetricIds());
    if (!directions_.empty() && ids.size() != directions_.size()) {
      return Status::InvalidArgument(
          std::to_string(directions_.size()) + " objective" +
          (directions_.size() == 1 ? "" : "s") +
          " (direction: " + JoinStrings(directions_, ", ") + ") but " +
          std::to_string(ids.size()) + " metric" +
          (ids.size() == 1 ? "" : "s") + " (" + JoinStrings(ids, ", ") +
          "): name one metric per objective, in the order of direction, with "
          "--metric NAME (or optimized_metric: [NAME, ...])");
    }
    if (directions_.empty()) {
      job_.warnings.push_back(
          "the basic sweeper has no direction: the goal is left unset, "
          "which Vertex reads as MAXIMIZE (give --direction minimize or "
          "maximize)");
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      MetricSpec m;
      m.id = ids[i];
      if (i < directions_.size()) {
        m.goal =
            directions_[i] == "minimize" ? Goal::kMinimize : Goal::kMaximize;
      }
      job_.spec.metrics.push_back(std::move(m));
    }
    return Status::Ok();
  }

  // ---- The trial's container.

  // Whether COMMAND's own arguments name a config (-cp, -cn, -cd).
  bool CommandNamesConfig() const {
    std::vector<std::string> args(req_.command.begin() + 1, req_.command.end());
    StatusOr<config::HydraCommandLine> parsed =
        config::ParseHydraCommandLine(args);
    return parsed.ok() &&
           (parsed->config_path || parsed->config_name || parsed->config_dir);
  }

  // Whether COMMAND runs Python (python3 train.py, ./train.py): a Python
  // @hydra.main reads a relative --config-path against its script's
  // directory, not the working directory (Hydra 1.3's
  // compute_search_path_dir), so the trial's config path can not be passed
  // to it. Told by the command's words alone: the spec must not depend on
  // what is installed where it is written.
  bool RunsPython() const {
    auto base = [](const std::string& p) {
      return p.substr(p.find_last_of('/') + 1);
    };
    const std::string& program = req_.command[0];
    return StartsWith(base(program), "python") ||
           (program.size() > 3 &&
            program.compare(program.size() - 3, 3, ".py") == 0);
  }

  void BuildTrialJob() {
    JobSpec& spec = job_.spec;
    spec.display_name = req_.display_name;
    if (spec.display_name.empty()) {
      spec.display_name = optuna_.study_name.value_or(req_.config_name);
    }
    WorkerPoolSpec pool;
    pool.has_container = true;
    pool.machine_type = req_.machine_type;
    pool.accelerator = accelerator_;
    pool.replica_count = kPrimaryReplicas;
    ContainerSpec& c = pool.container;
    c.image_uri = req_.image_uri;
    c.command = {"trialshim", "--config-path", req_.config_path,
                 "--config-name", req_.config_name};
    if (add_unknown_) c.command.push_back("--add-unknown");
    c.command.push_back("--");
    c.command.insert(c.command.end(), req_.command.begin(), req_.command.end());
    // The trainer composes the config the sweep was written from: Hydra's
    // own flags, which a trialshim app (and any Hydra app) takes, unless
    // COMMAND names its config itself.
    if (CommandNamesConfig()) {
      // the trainer's own choice, passed as it is
    } else if (RunsPython()) {
      Note(req_.command[0] +
           " composes its own config (@hydra.main's "
           "config_path and config_name), which must be " +
           req_.config_path + "/" + req_.config_name +
           ": trialshim translates each trial's "
           "arguments against that one");
    } else {
      c.command.insert(c.command.end(), {"--config-path", req_.config_path,
                                         "--config-name", req_.config_name});
    }
    c.args = hydra_args_;
    c.args.insert(c.args.end(), fixed_args_.begin(), fixed_args_.end());
    // Since Hydra 1.2 a config may set hydra.mode=MULTIRUN itself (NEWS.md,
    // #394), which would make every trial a sweep of its own; the command
    // line's hydra.mode=RUN wins over it, as Hydra.get_mode composes the
    // config with the overrides (hydra/_internal/hydra.py).
    const Node* mode = composed_.hydra.Find("mode");
    if (mode && mode->is_string() && mode->AsString() == "MULTIRUN") {
      c.args.push_back("hydra.mode=RUN");
    }
    spec.worker_pools.push_back(pool);
    // More replicas are workers of the same trial, in pool 1 (Vertex wants
    // exactly one primary in pool 0; docs/distributed.md).
    if (req_.replica_count > kPrimaryReplicas) {
      pool.replica_count = req_.replica_count - kPrimaryReplicas;
      spec.worker_pools.push_back(std::move(pool));
    }
    if (!req_.output_dir.empty()) spec.base_output_directory = req_.output_dir;
  }

  // `trialshim check`'s rules on the spec: its errors are ours.
  Status Check() {
    std::vector<Diagnostic> diags;
    CheckJobSpec(job_.spec, CheckOptions(), &diags);
    std::string errors;
    for (const Diagnostic& d : diags) {
      if (d.severity == Diagnostic::Severity::kError) {
        errors += (errors.empty() ? "" : "\n") + d.message;
      } else if (d.severity == Diagnostic::Severity::kWarning) {
        job_.warnings.push_back(d.message);
      }
    }
    if (errors.empty()) return Status::Ok();
    return Status::InvalidArgument(errors);
  }

  void Note(std::string note) { job_.notes.push_back(std::move(note)); }

  const HydraSweepRequest& req_;
  const Accelerator accelerator_;
  config::ComposeResult composed_;
  HydraSweepJob job_;
  std::vector<std::string> task_overrides_;  // the sweeper's arguments
  std::vector<std::string> hydra_args_;      // Hydra's own, for every trial
  std::vector<std::string> fixed_args_;      // the fixed parameters
  std::vector<std::string> directions_;
  OptunaSweeperConfig optuna_;  // hydra.sweeper, for the Optuna sweeper
  bool add_unknown_ = false;
};

// ---- YAML.

Node ParameterNode(const ParameterSpec& p) {
  Node n = Node::MakeMap();
  n.Set("parameterId", Node::String(p.id));
  switch (p.type) {
    case ParameterType::kDouble:
      n.Set("doubleValueSpec",
            Node::MakeMap({{"minValue", Node::Double(p.min_value)},
                           {"maxValue", Node::Double(p.max_value)}}));
      break;
    case ParameterType::kInteger:
      n.Set("integerValueSpec",
            Node::MakeMap(
                {{"minValue", Node::Int(IntegerBound(p.min_value))},
                 {"maxValue", Node::Int(IntegerBound(p.max_value))}}));
      break;
    case ParameterType::kDiscrete: {
      Node::List values;
      for (double v : p.discrete_values) values.push_back(Node::Double(v));
      n.Set("discreteValueSpec",
            Node::MakeMap({{"values", Node::MakeList(std::move(values))}}));
      break;
    }
    case ParameterType::kCategorical: {
      Node::List values;
      for (const std::string& v : p.categorical_values) {
        values.push_back(Node::String(v));
      }
      n.Set("categoricalValueSpec",
            Node::MakeMap({{"values", Node::MakeList(std::move(values))}}));
      break;
    }
  }
  if (p.scale != ScaleType::kUnspecified) {
    n.Set("scaleType", Node::String(ScaleTypeName(p.scale)));
  }
  return n;
}

Node Strings(const std::vector<std::string>& items) {
  Node::List list;
  for (const std::string& s : items) list.push_back(Node::String(s));
  return Node::MakeList(std::move(list));
}

}  // namespace

StatusOr<HydraSweepJob> HydraSweepToJob(const HydraSweepRequest& request) {
  return Writer(request).Run();
}

std::string JobSpecYaml(const JobSpec& spec,
                        const std::vector<std::string>& notes) {
  Node root = Node::MakeMap();
  if (!spec.display_name.empty()) {
    root.Set("displayName", Node::String(spec.display_name));
  }
  if (spec.max_trial_count) {
    root.Set("maxTrialCount", Node::Int(*spec.max_trial_count));
  }
  if (spec.parallel_trial_count) {
    root.Set("parallelTrialCount", Node::Int(*spec.parallel_trial_count));
  }
  if (spec.max_failed_trial_count) {
    root.Set("maxFailedTrialCount", Node::Int(*spec.max_failed_trial_count));
  }
  Node study = Node::MakeMap();
  Node::List metrics;
  for (const MetricSpec& m : spec.metrics) {
    Node metric = Node::MakeMap({{"metricId", Node::String(m.id)}});
    if (m.goal != Goal::kUnspecified) {
      metric.Set("goal", Node::String(GoalName(m.goal)));
    }
    metrics.push_back(std::move(metric));
  }
  study.Set("metrics", Node::MakeList(std::move(metrics)));
  Node::List params;
  for (const ParameterSpec& p : spec.parameters) {
    params.push_back(ParameterNode(p));
  }
  study.Set("parameters", Node::MakeList(std::move(params)));
  study.Set("algorithm", Node::String(AlgorithmName(spec.algorithm)));
  root.Set("studySpec", std::move(study));
  Node trial = Node::MakeMap();
  if (spec.base_output_directory) {
    trial.Set("baseOutputDirectory",
              Node::MakeMap({{"outputUriPrefix",
                              Node::String(*spec.base_output_directory)}}));
  }
  Node::List pools;
  for (const WorkerPoolSpec& w : spec.worker_pools) {
    Node pool = Node::MakeMap();
    if (!w.machine_type.empty()) {
      Node machine =
          Node::MakeMap({{"machineType", Node::String(w.machine_type)}});
      if (!w.accelerator.type.empty()) {
        machine.Set("acceleratorType", Node::String(w.accelerator.type));
        machine.Set("acceleratorCount", Node::Int(w.accelerator.count));
      }
      pool.Set("machineSpec", std::move(machine));
    }
    pool.Set("replicaCount", Node::Int(w.replica_count));
    Node container = Node::MakeMap();
    if (!w.container.image_uri.empty()) {
      container.Set("imageUri", Node::String(w.container.image_uri));
    }
    container.Set("command", Strings(w.container.command));
    if (!w.container.args.empty()) {
      container.Set("args", Strings(w.container.args));
    }
    pool.Set("containerSpec", std::move(container));
    pools.push_back(std::move(pool));
  }
  trial.Set("workerPoolSpecs", Node::MakeList(std::move(pools)));
  root.Set("trialJobSpec", std::move(trial));
  std::string header;
  for (const std::string& n : notes) header += "# " + n + "\n";
  return header + config::ToYaml(root);
}

}  // namespace trialshim::tuning
