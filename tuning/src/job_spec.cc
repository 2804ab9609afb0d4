// Parsing of the HyperparameterTuningJob YAML. The field tables below follow
// the Vertex AI v1 messages (HyperparameterTuningJob, StudySpec,
// CustomJobSpec and their children, as in googleapis/python-aiplatform
// google/cloud/aiplatform_v1/types/ @91cc8ce); fields without a local
// meaning are accepted so that a real job spec parses.
#include "trialshim/tuning/job_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "trialshim/base/number_format.h"
#include "trialshim/base/spell.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/search/search.h"

namespace trialshim::tuning {

using config::Mark;
using config::Node;

std::string Diagnostic::ToString() const {
  std::string where = mark.ToString();
  return (where.empty() ? "" : where + ": ") + SeverityName(severity) + ": " +
         message;
}

const char* Diagnostic::SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

bool HasErrors(const std::vector<Diagnostic>& diagnostics) {
  for (const Diagnostic& d : diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) return true;
  }
  return false;
}

const char* ParameterTypeName(ParameterType t) {
  switch (t) {
    case ParameterType::kDouble:
      return "DOUBLE";
    case ParameterType::kInteger:
      return "INTEGER";
    case ParameterType::kDiscrete:
      return "DISCRETE";
    case ParameterType::kCategorical:
      return "CATEGORICAL";
  }
  return "?";
}

const char* ScaleTypeName(ScaleType s) {
  switch (s) {
    case ScaleType::kUnspecified:
      return "SCALE_TYPE_UNSPECIFIED";
    case ScaleType::kLinear:
      return "UNIT_LINEAR_SCALE";
    case ScaleType::kLog:
      return "UNIT_LOG_SCALE";
    case ScaleType::kReverseLog:
      return "UNIT_REVERSE_LOG_SCALE";
  }
  return "?";
}

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kUnspecified:
      return "ALGORITHM_UNSPECIFIED";
    case Algorithm::kGridSearch:
      return "GRID_SEARCH";
    case Algorithm::kRandomSearch:
      return "RANDOM_SEARCH";
  }
  return "?";
}

const char* GoalName(Goal g) {
  switch (g) {
    case Goal::kUnspecified:
      return "GOAL_TYPE_UNSPECIFIED";
    case Goal::kMaximize:
      return "MAXIMIZE";
    case Goal::kMinimize:
      return "MINIMIZE";
  }
  return "?";
}

// google.protobuf.Duration, as its JSON form is written: seconds with an
// "s" suffix ("3600s", "1.5s"; the ProtoJSON table in protobuf's
// language guide). A bare number of seconds and "m" or "h" are accepted
// too, for a spec written by hand (scheduling.timeout); the API itself
// takes only "s".
StatusOr<double> ParseDurationSeconds(const std::string& text) {
  if (text.empty()) return Status::InvalidArgument("empty duration");
  char unit = text.back();
  double scale = 1;
  std::string number = text;
  if (unit == 's' || unit == 'm' || unit == 'h') {
    scale = unit == 's' ? 1 : unit == 'm' ? 60 : 3600;
    number.pop_back();
  }
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() ||
      !std::isfinite(v) || v < 0) {
    return Status::InvalidArgument("'" + text +
                                   "' is not a duration (expected e.g. "
                                   "\"3600s\")");
  }
  return v * scale;
}

namespace {

// One object level of the schema: its name (for messages), the fields
// trialshim knows, and the other fields of the v1 message. Those are
// warnings, not errors: they are real (newer ones that an older gcloud
// refuses, output-only ones the API ignores), but trialshim does not look
// at them.
struct Fields {
  const char* what;
  std::vector<std::string> known;
  std::vector<std::string> unchecked = {};
};

const Fields kJobFields{
    "HyperparameterTuningJob",
    {"displayName", "studySpec", "maxTrialCount", "parallelTrialCount",
     "maxFailedTrialCount", "trialJobSpec", "labels", "encryptionSpec",
     "satisfiesPzs", "satisfiesPzi"},
    // Output only: what `gcloud ai hp-tuning-jobs describe` adds.
    {"name", "trials", "state", "createTime", "startTime", "endTime",
     "updateTime", "error"}};
const Fields kStudyFields{
    "studySpec",
    {"metrics", "parameters", "algorithm", "observationNoise",
     "measurementSelectionType", "decayCurveStoppingSpec",
     "medianAutomatedStoppingSpec", "convexAutomatedStoppingSpec",
     "studyStoppingConfig"}};
const Fields kMetricFields{"metrics[]", {"metricId", "goal", "safetyConfig"}};
const Fields kParameterFields{
    "parameters[]",
    {"parameterId", "doubleValueSpec", "integerValueSpec",
     "categoricalValueSpec", "discreteValueSpec", "scaleType",
     "conditionalParameterSpecs"}};
const Fields kRangeFields{"valueSpec",
                          {"minValue", "maxValue", "defaultValue"}};
const Fields kValuesFields{"valueSpec", {"values", "defaultValue"}};
const Fields kConditionalFields{"conditionalParameterSpecs[]",
                                {"parameterSpec", "parentDiscreteValues",
                                 "parentIntValues", "parentCategoricalValues"}};
const Fields kParentValuesFields{"parent values", {"values"}};
const Fields kTrialJobFields{
    "trialJobSpec",
    {"workerPoolSpecs", "scheduling", "serviceAccount", "network",
     "reservedIpRanges", "baseOutputDirectory", "protectedArtifactLocationId",
     "tensorboard", "enableWebAccess", "enableDashboardAccess", "experiment",
     "experimentRun", "models", "persistentResourceId", "pscInterfaceConfig"}};
const Fields kWorkerPoolFields{
    "workerPoolSpecs[]",
    {"containerSpec", "pythonPackageSpec", "machineSpec", "replicaCount",
     "nfsMounts", "diskSpec"},
    {"lustreMounts"}};
const Fields kContainerFields{"containerSpec",
                              {"imageUri", "command", "args", "env"}};
const Fields kEnvFields{"env[]", {"name", "value"}};
const Fields kMachineFields{
    "machineSpec",
    {"machineType", "acceleratorType", "acceleratorCount", "tpuTopology",
     "reservationAffinity"},
    {"gpuPartitionSize"}};
const Fields kDiskFields{"diskSpec", {"bootDiskType", "bootDiskSizeGb"}};
const Fields kSchedulingFields{
    "scheduling",
    {"timeout", "restartJobOnWorkerRestart", "disableRetries", "strategy",
     "maxWaitDuration"}};
const Fields kOutputFields{"baseOutputDirectory", {"outputUriPrefix"}};
const Fields kPythonPackageFields{
    "pythonPackageSpec",
    {"executorImageUri", "packageUris", "pythonModule", "args", "env"}};

class Parser {
 public:
  explicit Parser(std::vector<Diagnostic>* diags) : diags_(diags) {}

  void Error(const Mark& mark, std::string message) {
    diags_->push_back({Diagnostic::Severity::kError, mark, std::move(message)});
  }
  void Warning(const Mark& mark, std::string message) {
    diags_->push_back(
        {Diagnostic::Severity::kWarning, mark, std::move(message)});
  }

  // True if `node` is a map; otherwise reports it. Unchecked fields are
  // warnings, unknown ones errors.
  bool Map(const Node& node, const Fields& fields) {
    if (!node.is_map()) {
      Error(node.mark(), std::string(fields.what) + " must be a mapping, got " +
                             node.type_name());
      return false;
    }
    auto has = [](const std::vector<std::string>& names, const std::string& k) {
      return std::find(names.begin(), names.end(), k) != names.end();
    };
    for (const auto& [key, value] : node.AsMap()) {
      if (has(fields.known, key)) continue;
      if (has(fields.unchecked, key)) {
        Warning(value.KeyOrValueMark(), "field '" + key + "' in " + fields.what +
                                  " is a Vertex AI v1 field that trialshim "
                                  "does not check");
        continue;
      }
      std::vector<std::string> all = fields.known;
      all.insert(all.end(), fields.unchecked.begin(), fields.unchecked.end());
      std::string hint = DidYouMean(key, all);
      if (hint.empty()) hint = DidYouMeanSnakeCase(key, all);
      Error(value.KeyOrValueMark(),
            "unknown field '" + key + "' in " + fields.what + hint);
    }
    return true;
  }

  // Users coming from the Python SDK write snake_case: the proto's field
  // names (study.py's parameter_id), which the REST reference, and so a
  // spec file, spells in lowerCamelCase (parameterId), as protobuf's JSON
  // mapping names every field.
  static std::string DidYouMeanSnakeCase(
      const std::string& key, const std::vector<std::string>& known) {
    std::string camel;
    bool up = false;
    for (char c : key) {
      if (c == '_') {
        up = true;
      } else {
        camel += up ? static_cast<char>(std::toupper(c)) : c;
        up = false;
      }
    }
    if (camel == key) return "";
    for (const std::string& k : known) {
      if (k == camel)
        return " (did you mean '" + k + "'? fields are camelCase)";
    }
    return "";
  }

  std::optional<std::string> String(const Node& n, const char* field) {
    if (n.is_string()) return n.AsString();
    Error(n.mark(),
          std::string(field) + " must be a string, got " + n.type_name());
    return std::nullopt;
  }

  // int64 fields arrive as YAML ints or, as proto JSON writes them, strings
  // (the ProtoJSON table: "either numbers or strings are accepted"). An
  // integer written as a float (1e3, 8.0) is one too, as protobuf's JSON
  // parsers take it (conformance/binary_json_conformance_suite.cc: "integers
  // but represented as float values are accepted"); only below 2^53, where
  // a double still holds every integer exactly.
  std::optional<int64_t> Int(const Node& n, const char* field) {
    if (n.is_int()) return n.AsInt();
    if (n.is_double() && std::isfinite(n.AsDouble()) &&
        n.AsDouble() == std::floor(n.AsDouble()) &&
        std::fabs(n.AsDouble()) < 9e15) {
      return static_cast<int64_t>(n.AsDouble());
    }
    if (n.is_string()) {
      const std::string& s = n.AsString();
      int64_t v = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
    }
    Error(n.mark(),
          std::string(field) + " must be an integer, got " + Describe(n));
    return std::nullopt;
  }

  // double fields: a number or its text, which ProtoJSON accepts as well.
  std::optional<double> Number(const Node& n, const char* field) {
    if (n.is_number()) return n.AsDouble();
    if (n.is_string()) {
      const std::string& s = n.AsString();
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size()) return v;
    }
    Error(n.mark(),
          std::string(field) + " must be a number, got " + Describe(n));
    return std::nullopt;
  }

  static std::string Describe(const Node& n) {
    if (n.is_string()) return "'" + n.AsString() + "'";
    return n.type_name();
  }

  // Enum fields: one of `names` (index into it), with did-you-mean. ProtoJSON
  // writes an enum by its name; callers list the names in the order of the
  // proto's enum (study.py's GoalType, Algorithm, ...), which study_spec.h's
  // enums keep, so the index converts to ours (not to the proto's number:
  // GRID_SEARCH is 2 there).
  std::optional<size_t> Enum(const Node& n, const char* field,
                             const std::vector<std::string>& names) {
    std::optional<std::string> s = String(n, field);
    if (!s) return std::nullopt;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == *s) return i;
    }
    std::string hint = DidYouMean(*s, names);
    if (hint.empty()) {
      hint = " (expected one of ";
      for (size_t i = 0; i < names.size(); ++i) {
        hint += (i ? ", " : "") + names[i];
      }
      hint += ")";
    }
    Error(n.mark(), "unknown " + std::string(field) + " '" + *s + "'" + hint);
    return std::nullopt;
  }

  const Node* List(const Node* n, const char* field) {
    if (!n) return nullptr;
    if (!n->is_list()) {
      Error(n->mark(),
            std::string(field) + " must be a list, got " + n->type_name());
      return nullptr;
    }
    return n;
  }

  std::vector<std::string> Strings(const Node* n, const char* field,
                                   std::vector<Mark>* marks) {
    std::vector<std::string> out;
    if (!List(n, field)) return out;
    for (const Node& item : n->AsList()) {
      if (marks) marks->push_back(item.mark());
      if (item.is_string()) {
        out.push_back(item.AsString());
      } else if (item.is_int()) {
        out.push_back(std::to_string(item.AsInt()));
      } else if (item.is_double()) {
        out.push_back(FormatPythonFloat(item.AsDouble()));
      } else if (item.is_bool()) {
        // YAML 1.1 reads yes/no/on/off as booleans; the API wants strings.
        out.push_back(item.AsBool() ? "true" : "false");
        Warning(item.mark(), std::string(field) +
                                 " item is a YAML boolean; quote it (\"...\") "
                                 "so it stays the string you wrote");
      } else {
        Error(item.mark(), std::string(field) + " items must be strings, got " +
                               item.type_name());
        out.emplace_back();
      }
    }
    return out;
  }

  // StudySpec.ParameterSpec (study.py). The four value specs are the oneof
  // parameter_value_spec: at most one may be set, and a parameter without
  // one has nothing to search.
  void ParseParameter(const Node& n, ParameterSpec* p) {
    p->mark = n.mark();
    if (!Map(n, kParameterFields)) return;
    if (const Node* id = n.Get("parameterId")) {
      p->id_mark = id->mark();
      if (auto s = String(*id, "parameterId")) p->id = *s;
    } else {
      Error(n.mark(), "parameter has no parameterId");
    }
    static const char* kSpecs[] = {"doubleValueSpec", "integerValueSpec",
                                   "discreteValueSpec", "categoricalValueSpec"};
    static const ParameterType kTypes[] = {
        ParameterType::kDouble, ParameterType::kInteger,
        ParameterType::kDiscrete, ParameterType::kCategorical};
    for (int i = 0; i < 4; ++i) {
      const Node* spec = n.Get(kSpecs[i]);
      if (!spec) continue;
      if (p->has_value_spec) {
        Error(spec->mark(), "parameter '" + p->id +
                                "' has more than one "
                                "value spec (" +
                                kSpecs[i] + " and " + ValueSpecName(p->type) +
                                ")");
        continue;
      }
      p->has_value_spec = true;
      p->type = kTypes[i];
      p->value_spec_mark = spec->mark();
      ParseValueSpec(*spec, kSpecs[i], p);
    }
    if (!p->has_value_spec) {
      Error(p->id_mark.known() ? p->id_mark : n.mark(),
            "parameter '" + p->id +
                "' has no value spec (doubleValueSpec, integerValueSpec, "
                "discreteValueSpec or categoricalValueSpec)");
    }
    if (const Node* scale = n.Get("scaleType")) {
      p->scale_mark = scale->mark();
      if (auto i = Enum(*scale, "scaleType",
                        {"SCALE_TYPE_UNSPECIFIED", "UNIT_LINEAR_SCALE",
                         "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"})) {
        p->scale = static_cast<ScaleType>(*i);
      }
    }
    if (const Node* conds = List(n.Get("conditionalParameterSpecs"),
                                 "conditionalParameterSpecs")) {
      for (const Node& c : conds->AsList()) {
        ConditionalParameterSpec cond;
        cond.mark = c.mark();
        if (!Map(c, kConditionalFields)) continue;
        if (const Node* child = c.Get("parameterSpec")) {
          ParseParameter(*child, &cond.parameter);
        } else {
          Error(c.mark(), "conditional parameter spec has no parameterSpec");
        }
        // The parent's values are the oneof parent_value_condition
        // (ConditionalParameterSpec in study.py); without one the child
        // would never be active, so exactly one is required.
        int parents = 0;
        if (const Node* v = c.Get("parentIntValues")) {
          ++parents;
          if (Map(*v, kParentValuesFields) &&
              List(v->Get("values"), "parentIntValues.values")) {
            for (const Node& x : v->Get("values")->AsList()) {
              if (auto i = Int(x, "parentIntValues")) {
                cond.parent_int_values.push_back(*i);
              }
            }
          }
        }
        if (const Node* v = c.Get("parentDiscreteValues")) {
          ++parents;
          if (Map(*v, kParentValuesFields) &&
              List(v->Get("values"), "parentDiscreteValues.values")) {
            for (const Node& x : v->Get("values")->AsList()) {
              if (auto d = Number(x, "parentDiscreteValues")) {
                cond.parent_discrete_values.push_back(*d);
              }
            }
          }
        }
        if (const Node* v = c.Get("parentCategoricalValues")) {
          ++parents;
          if (Map(*v, kParentValuesFields)) {
            cond.parent_categorical_values = Strings(
                v->Get("values"), "parentCategoricalValues.values", nullptr);
          }
        }
        if (parents != 1) {
          Error(c.mark(),
                "conditional parameter spec needs exactly one of "
                "parentIntValues, parentDiscreteValues, "
                "parentCategoricalValues");
        }
        p->conditionals.push_back(std::move(cond));
      }
    }
  }

  static const char* ValueSpecName(ParameterType t) {
    switch (t) {
      case ParameterType::kDouble:
        return "doubleValueSpec";
      case ParameterType::kInteger:
        return "integerValueSpec";
      case ParameterType::kDiscrete:
        return "discreteValueSpec";
      case ParameterType::kCategorical:
        return "categoricalValueSpec";
    }
    return "?";
  }

  void ParseValueSpec(const Node& spec, const char* name, ParameterSpec* p) {
    bool range =
        p->type == ParameterType::kDouble || p->type == ParameterType::kInteger;
    Fields fields = range ? kRangeFields : kValuesFields;
    fields.what = name;
    if (!Map(spec, fields)) return;
    // study.py documents every value spec's default_value as "currently
    // only supported by the Vizier service. Not supported by
    // HyperparamterTuningJob or TrainingPipeline".
    if (const Node* d = spec.Get("defaultValue")) {
      Warning(d->mark(),
              "defaultValue is not supported for HyperparameterTuningJob "
              "(Vertex ignores or rejects it)");
    }
    if (range) {
      // minValue and maxValue are required and inclusive (DoubleValueSpec,
      // IntegerValueSpec); their order is check_parameters.cc's to judge.
      bool integer = p->type == ParameterType::kInteger;
      for (const char* bound : {"minValue", "maxValue"}) {
        const Node* b = spec.Get(bound);
        bool is_min = bound[1] == 'i';
        if (!b) {
          Error(spec.mark(),
                std::string(name) + " of '" + p->id + "' has no " + bound);
          continue;
        }
        (is_min ? p->min_mark : p->max_mark) = b->mark();
        std::optional<double> v;
        if (integer) {
          std::optional<int64_t> i = Int(*b, bound);
          // Every range is sampled inside its bounds, counted exactly, or
          // refused: a trial's values are doubles (Vertex's too), exact for
          // integers only up to 2^53.
          if (i && (*i > kMaxIntegerBound || *i < -kMaxIntegerBound)) {
            Error(b->mark(), std::string(name) + " of '" + p->id + "': " +
                                 bound + " " + std::to_string(*i) +
                                 " is beyond +-2^53 (" +
                                 std::to_string(kMaxIntegerBound) +
                                 "); a trial's values are doubles, which "
                                 "hold every integer only up to there");
            i.reset();
          }
          if (i) v = static_cast<double>(*i);
        } else {
          v = Number(*b, bound);
          if (v && !std::isfinite(*v)) {
            Error(b->mark(), std::string(name) + " of '" + p->id + "': " +
                                 bound + " must be a finite number, got " +
                                 FormatNumber(*v));
            v.reset();
          }
        }
        if (v) (is_min ? p->min_value : p->max_value) = *v;
      }
      return;
    }
    const Node* values = spec.Get("values");
    if (!values) {
      Error(spec.mark(),
            std::string(name) + " of '" + p->id + "' has no values");
      return;
    }
    if (p->type == ParameterType::kCategorical) {
      p->categorical_values =
          Strings(values, "categoricalValueSpec.values", &p->value_marks);
      return;
    }
    // A value that is not a number is reported here and kept as NaN, so that
    // discrete_values stays index for index with value_marks, whose marks
    // the later checks (increasing, 1e-10 apart, as study.py requires) use.
    if (!List(values, "discreteValueSpec.values")) return;
    for (const Node& v : values->AsList()) {
      p->value_marks.push_back(v.mark());
      auto d = Number(v, "discreteValueSpec value");
      p->discrete_values.push_back(d.value_or(NAN));
    }
  }

  // machineSpec's accelerator pair; check_spec.cc checks it against the
  // machine type (vertex_rules.h).
  void ParseAccelerator(const Node& machine, WorkerPoolSpec* pool) {
    const Node* type = machine.Get("acceleratorType");
    const Node* count = machine.Get("acceleratorCount");
    if (!type && !count) return;
    pool->accelerator_mark = (type ? type : count)->mark();
    if (type) {
      if (auto s = String(*type, "acceleratorType"))
        pool->accelerator.type = *s;
    }
    if (count) {
      if (auto i = Int(*count, "acceleratorCount"))
        pool->accelerator.count = *i;
    }
  }

  // ContainerSpec (custom_job.py): imageUri is required; command and args
  // are lists of strings; env is a list of EnvVar name/value pairs.
  void ParseContainer(const Node& n, ContainerSpec* c) {
    c->mark = n.mark();
    if (!Map(n, kContainerFields)) return;
    if (const Node* image = n.Get("imageUri")) {
      if (auto s = String(*image, "imageUri")) c->image_uri = *s;
    } else {
      Error(n.mark(), "containerSpec has no imageUri (Vertex requires one)");
    }
    if (const Node* cmd = n.Get("command")) {
      c->command_mark = cmd->mark();
      c->command = Strings(cmd, "command", &c->command_marks);
    }
    if (const Node* args = n.Get("args")) {
      c->args_mark = args->mark();
      c->args = Strings(args, "args", &c->args_marks);
    }
    if (const Node* env = List(n.Get("env"), "env")) {
      for (const Node& e : env->AsList()) {
        if (!Map(e, kEnvFields)) continue;
        const Node* name = e.Get("name");
        if (!name) {
          Error(e.mark(), "env item has no name");
          continue;
        }
        auto s = String(*name, "env name");
        std::string value;
        if (const Node* v = e.Get("value")) {
          value = ScalarText(*v);
        }
        if (s) c->env.emplace_back(*s, value);
      }
    }
  }

  // The text of a scalar the API would hold as a string: an unquoted
  // `value: 8` in env is YAML's int, but EnvVar.value is a string.
  std::string ScalarText(const Node& v) {
    if (v.is_string()) return v.AsString();
    if (v.is_int()) return std::to_string(v.AsInt());
    if (v.is_double()) return FormatPythonFloat(v.AsDouble());
    if (v.is_bool()) return v.AsBool() ? "true" : "false";
    if (v.is_null()) return "";
    Error(v.mark(), std::string("expected a string, got ") + v.type_name());
    return "";
  }

  // trialJobSpec is a CustomJobSpec (custom_job.py) that "applies to the
  // CustomJobs created in all the trials" (hyperparameter_tuning_job.py):
  // so its scheduling.timeout bounds each trial, not the whole job.
  void ParseTrialJob(const Node& n, JobSpec* job) {
    job->trial_job_mark = n.mark();
    if (!Map(n, kTrialJobFields)) return;
    if (const Node* pools = n.Get("workerPoolSpecs")) {
      job->worker_pools_mark = pools->mark();
      if (!pools->is_list()) {
        Error(pools->mark(),
              "workerPoolSpecs must be a list (one item per "
              "pool: \"- containerSpec: ...\"), got " +
                  std::string(pools->type_name()));
      } else {
        if (pools->AsList().empty()) {
          Error(pools->mark(), "workerPoolSpecs is empty");
        }
        for (const Node& p : pools->AsList()) {
          WorkerPoolSpec pool;
          pool.mark = p.mark();
          if (Map(p, kWorkerPoolFields)) {
            if (const Node* c = p.Get("containerSpec")) {
              pool.has_container = true;
              ParseContainer(*c, &pool.container);
            }
            if (const Node* py = p.Get("pythonPackageSpec")) {
              pool.has_python_package = true;
              Map(*py, kPythonPackageFields);
            }
            if (const Node* m = p.Get("machineSpec")) {
              if (Map(*m, kMachineFields)) {
                if (const Node* t = m->Get("machineType")) {
                  pool.machine_type_mark = t->mark();
                  if (auto s = String(*t, "machineType"))
                    pool.machine_type = *s;
                }
                ParseAccelerator(*m, &pool);
              }
            }
            if (const Node* d = p.Get("diskSpec")) Map(*d, kDiskFields);
            if (const Node* r = p.Get("replicaCount")) {
              pool.replica_mark = r->mark();
              if (auto i = Int(*r, "replicaCount")) pool.replica_count = *i;
            }
          }
          job->worker_pools.push_back(std::move(pool));
        }
      }
    } else {
      Error(n.mark(), "trialJobSpec has no workerPoolSpecs");
    }
    if (const Node* out = n.Get("baseOutputDirectory")) {
      job->base_output_mark = out->mark();
      if (Map(*out, kOutputFields)) {
        if (const Node* prefix = out->Get("outputUriPrefix")) {
          job->output_uri_mark = prefix->mark();
          if (auto s = String(*prefix, "outputUriPrefix")) {
            job->base_output_directory = *s;
          }
        } else {
          Error(out->mark(), "baseOutputDirectory has no outputUriPrefix");
        }
      }
    }
    if (const Node* tb = n.Get("tensorboard")) {
      job->tensorboard_mark = tb->mark();
      if (auto s = String(*tb, "tensorboard")) job->tensorboard = *s;
    }
    if (const Node* sa = n.Get("serviceAccount")) {
      if (auto s = String(*sa, "serviceAccount")) job->service_account = *s;
    }
    if (const Node* sched = n.Get("scheduling")) {
      if (Map(*sched, kSchedulingFields)) {
        if (const Node* t = sched->Get("timeout")) {
          job->timeout_mark = t->mark();
          StatusOr<double> secs = t->is_number()
                                      ? StatusOr<double>(t->AsDouble())
                                      : ParseDurationSeconds(ScalarText(*t));
          if (secs.ok()) {
            job->trial_timeout_seconds = *secs;
          } else {
            Error(t->mark(), "scheduling.timeout: " + secs.status().message());
          }
        }
      }
    }
  }

  void ParseStudy(const Node& n, JobSpec* job) {
    job->study_mark = n.mark();
    if (!Map(n, kStudyFields)) return;
    if (const Node* metrics = n.Get("metrics")) {
      job->metrics_mark = metrics->mark();
      if (List(metrics, "metrics")) {
        for (const Node& m : metrics->AsList()) {
          MetricSpec metric;
          metric.mark = m.mark();
          if (Map(m, kMetricFields)) {
            if (const Node* id = m.Get("metricId")) {
              metric.id_mark = id->mark();
              if (auto s = String(*id, "metricId")) metric.id = *s;
            } else {
              Error(m.mark(), "metric has no metricId");
            }
            if (const Node* goal = m.Get("goal")) {
              metric.goal_mark = goal->mark();
              if (auto i =
                      Enum(*goal, "goal",
                           {"GOAL_TYPE_UNSPECIFIED", "MAXIMIZE", "MINIMIZE"})) {
                metric.goal = static_cast<Goal>(*i);
              }
            }
          }
          job->metrics.push_back(std::move(metric));
        }
      }
    }
    if (const Node* params = n.Get("parameters")) {
      job->parameters_mark = params->mark();
      if (List(params, "parameters")) {
        for (const Node& p : params->AsList()) {
          ParameterSpec spec;
          ParseParameter(p, &spec);
          job->parameters.push_back(std::move(spec));
        }
      }
    }
    if (const Node* a = n.Get("algorithm")) {
      job->algorithm_mark = a->mark();
      if (auto i =
              Enum(*a, "algorithm",
                   {"ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH"})) {
        job->algorithm = static_cast<Algorithm>(*i);
      }
    }
    if (const Node* m = n.Get("measurementSelectionType")) {
      if (auto i = Enum(*m, "measurementSelectionType",
                        {"MEASUREMENT_SELECTION_TYPE_UNSPECIFIED",
                         "LAST_MEASUREMENT", "BEST_MEASUREMENT"})) {
        job->measurement_selection = static_cast<MeasurementSelection>(*i);
      }
    }
    // study.py: observation_noise is "currently only supported by the
    // Vertex AI Vizier service. Not supported by HyperparameterTuningJob".
    if (const Node* o = n.Get("observationNoise")) {
      Warning(o->mark(),
              "observationNoise is not supported for HyperparameterTuningJob");
    }
    ParseStopping(n, job);
  }

  // The automatedStoppingSpec oneof (StudySpec in study.py);
  // convexAutomatedStoppingSpec (v1beta1's more elaborate rule) and
  // studyStoppingConfig (when the whole study stops) are accepted but not
  // emulated.
  void ParseStopping(const Node& n, JobSpec* job) {
    // In file order, so the error is on the second one written.
    std::vector<std::pair<const char*, const Node*>> given;
    for (const char* field :
         {"decayCurveStoppingSpec", "medianAutomatedStoppingSpec",
          "convexAutomatedStoppingSpec"}) {
      if (const Node* s = n.Get(field)) given.emplace_back(field, s);
    }
    std::sort(given.begin(), given.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a.second->mark().line, a.second->mark().column) <
             std::make_pair(b.second->mark().line, b.second->mark().column);
    });
    const char* chosen = nullptr;
    for (const auto& [field, s] : given) {
      if (chosen) {
        Error(s->mark(), std::string(field) + " and " + chosen +
                             " are one field in the API (the "
                             "automatedStoppingSpec oneof): set only one");
        continue;
      }
      chosen = field;
      if (std::string(field) == "convexAutomatedStoppingSpec") {
        Warning(s->mark(),
                "convexAutomatedStoppingSpec is not emulated by `trialshim "
                "sweep`: every trial runs to its end");
        continue;
      }
      job->stopping_mark = s->mark();
      job->stopping =
          field[0] == 'd' ? StoppingRule::kDecayCurve : StoppingRule::kMedian;
      if (s->is_null()) continue;  // "medianAutomatedStoppingSpec:" alone
      if (!Map(*s, {field, {"useElapsedDuration"}})) continue;
      if (const Node* e = s->Get("useElapsedDuration")) {
        if (e->is_bool()) {
          job->stopping_use_elapsed = e->AsBool();
        } else {
          Error(e->mark(),
                "useElapsedDuration must be a boolean, got " + Describe(*e));
        }
      }
    }
    if (const Node* s = n.Get("studyStoppingConfig")) {
      Warning(s->mark(),
              "studyStoppingConfig is not emulated by `trialshim sweep`: the "
              "study runs its maxTrialCount trials");
    }
  }

  // HyperparameterTuningJob (hyperparameter_tuning_job.py): the counts are
  // int32 in the proto, read as integers here; their ranges and what a
  // missing one means are check_spec.cc's.
  void ParseJob(const Node& root, JobSpec* job) {
    job->mark = root.mark();
    if (!Map(root, kJobFields)) return;
    if (const Node* n = root.Get("displayName")) {
      if (auto s = String(*n, "displayName")) job->display_name = *s;
    }
    auto count = [&](const char* field, std::optional<int64_t>* out,
                     Mark* mark) {
      if (const Node* n = root.Get(field)) {
        *mark = n->mark();
        *out = Int(*n, field);
      }
    };
    count("maxTrialCount", &job->max_trial_count, &job->max_trial_mark);
    count("parallelTrialCount", &job->parallel_trial_count,
          &job->parallel_mark);
    count("maxFailedTrialCount", &job->max_failed_trial_count,
          &job->max_failed_mark);
    if (const Node* s = root.Get("studySpec")) {
      ParseStudy(*s, job);
    } else {
      Error(root.mark(), "job spec has no studySpec");
    }
    if (const Node* t = root.Get("trialJobSpec")) {
      ParseTrialJob(*t, job);
    } else {
      Error(root.mark(), "job spec has no trialJobSpec");
    }
  }

 private:
  std::vector<Diagnostic>* diags_;
};

}  // namespace

JobSpec ParseJobSpec(const Node& root, std::vector<Diagnostic>* diagnostics) {
  JobSpec job;
  Parser(diagnostics).ParseJob(root, &job);
  return job;
}

StatusOr<JobSpec> LoadJobSpecFile(const std::string& path,
                                  std::vector<Diagnostic>* diagnostics) {
  TRIALSHIM_ASSIGN_OR_RETURN(Node root, config::LoadYamlFile(path));
  JobSpec job = ParseJobSpec(root, diagnostics);
  job.file = path;
  if (!job.mark.known()) {
    job.mark.file = std::make_shared<const std::string>(path);
    job.mark.line = 1;
    job.mark.column = 1;
  }
  return job;
}

}  // namespace trialshim::tuning
