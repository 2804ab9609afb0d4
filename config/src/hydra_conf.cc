// CheckHydraNode(): HydraConf's field types (hydra/conf/__init__.py in
// Hydra 1.3.2), the sweepers' (BasicSweeperConf, and hydra-optuna-sweeper
// 1.2.0's OptunaSweeperConf and sampler configs, chosen by the node's
// _target_), and OmegaConf 2.3's rules for a config merged into them, as
// Hydra composes. Messages are OmegaConf's ValidationError texts.
#include "hydra_conf.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/typed_value.h"
#include "typed_value.h"

namespace trialshim::config::internal {
namespace {

enum class Kind {
  kStr,
  kInt,
  kFloat,
  kBool,
  kAny,
  kRunMode,
  kStrList,  // List[str]
  kAnyList,  // List[ConfigSourceInfo]: written by Hydra, not checked
  kStrDict,  // Dict[str, str]
  kAnyDict,  // Dict[str, Any]
  kStruct,
};

struct Field {
  std::string_view path;  // dotted, under `hydra`
  Kind kind;
  bool optional = false;
  std::string_view type_name = {};  // the dataclass, for kStruct
};

// An Enum that types a field: its class name and members (name, value), in
// declaration order. HydraConf has one, hydra.types.RunMode (RUN = 1,
// MULTIRUN = 2); the sweepers' enums (Optuna's Direction) type Any fields.
struct EnumMember {
  std::string_view name;
  int64_t value;
};
struct EnumType {
  std::string_view name;
  std::vector<EnumMember> members;
};
const EnumType kRunMode = {"RunMode", {{"RUN", 1}, {"MULTIRUN", 2}}};

// Every field of HydraConf, depth first, as hydra/conf/__init__.py declares
// them: `optional` is an Optional[...] annotation (mode, job.chdir,
// job.config_name, output_subdir), where null is a value; every other field
// refuses null, whatever its default (MISSING included). `env` is not a
// HydraConf field but every composition has it: HydraConf's defaults list
// names env: default (hydra/conf/hydra/env/default.yaml).
const Field kFields[] = {
    {"", Kind::kStruct, false, "HydraConf"},
    {"mode", Kind::kRunMode, true},
    {"searchpath", Kind::kStrList},
    {"run", Kind::kStruct, false, "RunDir"},
    {"run.dir", Kind::kStr},
    {"sweep", Kind::kStruct, false, "SweepDir"},
    {"sweep.dir", Kind::kStr},
    {"sweep.subdir", Kind::kStr},
    {"hydra_logging", Kind::kAnyDict},
    {"job_logging", Kind::kAnyDict},
    {"sweeper", Kind::kAny},
    {"launcher", Kind::kAny},
    {"callbacks", Kind::kAnyDict},
    {"env", Kind::kAnyDict},
    {"help", Kind::kStruct, false, "HelpConf"},
    {"help.app_name", Kind::kStr},
    {"help.header", Kind::kStr},
    {"help.footer", Kind::kStr},
    {"help.template", Kind::kStr},
    {"hydra_help", Kind::kStruct, false, "HydraHelpConf"},
    {"hydra_help.hydra_help", Kind::kStr},
    {"hydra_help.template", Kind::kStr},
    {"output_subdir", Kind::kStr, true},
    {"overrides", Kind::kStruct, false, "OverridesConf"},
    {"overrides.hydra", Kind::kStrList},
    {"overrides.task", Kind::kStrList},
    {"job", Kind::kStruct, false, "JobConf"},
    {"job.name", Kind::kStr},
    {"job.chdir", Kind::kBool, true},
    {"job.override_dirname", Kind::kStr},
    {"job.id", Kind::kStr},
    {"job.num", Kind::kInt},
    {"job.config_name", Kind::kStr, true},
    {"job.env_set", Kind::kStrDict},
    {"job.env_copy", Kind::kStrList},
    {"job.config", Kind::kStruct, false, "JobConfig"},
    {"job.config.override_dirname", Kind::kStruct, false, "OverrideDirname"},
    {"job.config.override_dirname.kv_sep", Kind::kStr},
    {"job.config.override_dirname.item_sep", Kind::kStr},
    {"job.config.override_dirname.exclude_keys", Kind::kStrList},
    {"runtime", Kind::kStruct, false, "RuntimeConf"},
    {"runtime.version", Kind::kStr},
    {"runtime.version_base", Kind::kStr},
    {"runtime.cwd", Kind::kStr},
    {"runtime.config_sources", Kind::kAnyList},
    {"runtime.output_dir", Kind::kStr},
    {"runtime.choices", Kind::kAnyDict},
    {"verbose", Kind::kAny},
};

// The sweepers' structured configs, by their _target_: Hydra's
// BasicSweeperConf and hydra-optuna-sweeper 1.2.0's OptunaSweeperConf under
// hydra.sweeper, the Optuna samplers' configs under hydra.sweeper.sampler.
// Paths are relative to the node the schema types.
const Field kBasicSweeper[] = {
    {"", Kind::kStruct, false, "BasicSweeperConf"},
    {"_target_", Kind::kStr},
    {"max_batch_size", Kind::kInt, true},
    {"params", Kind::kStrDict, true},
};
const Field kOptunaSweeper[] = {
    {"", Kind::kStruct, false, "OptunaSweeperConf"},
    {"_target_", Kind::kStr},
    // SamplerConfig: typed by the sampler's own schema below, else open.
    {"sampler", Kind::kAnyDict},
    {"direction", Kind::kAny},
    {"storage", Kind::kAny, true},
    {"study_name", Kind::kStr, true},
    {"n_trials", Kind::kInt},
    {"n_jobs", Kind::kInt},
    {"search_space", Kind::kAnyDict, true},
    {"params", Kind::kStrDict, true},
    {"custom_search_space", Kind::kStr, true},
};
const Field kTpeSampler[] = {
    {"", Kind::kStruct, false, "TPESamplerConfig"},
    {"_target_", Kind::kStr},
    {"seed", Kind::kInt, true},
    {"consider_prior", Kind::kBool},
    {"prior_weight", Kind::kFloat},
    {"consider_magic_clip", Kind::kBool},
    {"consider_endpoints", Kind::kBool},
    {"n_startup_trials", Kind::kInt},
    {"n_ei_candidates", Kind::kInt},
    {"multivariate", Kind::kBool},
    {"warn_independent_sampling", Kind::kBool},
};
const Field kRandomSampler[] = {
    {"", Kind::kStruct, false, "RandomSamplerConfig"},
    {"_target_", Kind::kStr},
    {"seed", Kind::kInt, true},
};
const Field kCmaEsSampler[] = {
    {"", Kind::kStruct, false, "CmaEsSamplerConfig"},
    {"_target_", Kind::kStr},
    {"seed", Kind::kInt, true},
    {"x0", Kind::kAnyDict, true},
    {"sigma0", Kind::kFloat, true},
    {"independent_sampler", Kind::kAny, true},
    {"warn_independent_sampling", Kind::kBool},
    {"consider_pruned_trials", Kind::kBool},
    {"restart_strategy", Kind::kAny, true},
    {"inc_popsize", Kind::kInt},
    {"use_separable_cma", Kind::kBool},
    {"source_trials", Kind::kAny, true},
};
const Field kNsgaIISampler[] = {
    {"", Kind::kStruct, false, "NSGAIISamplerConfig"},
    {"_target_", Kind::kStr},
    {"seed", Kind::kInt, true},
    {"population_size", Kind::kInt},
    {"mutation_prob", Kind::kFloat, true},
    {"crossover_prob", Kind::kFloat},
    {"swapping_prob", Kind::kFloat},
    {"constraints_func", Kind::kAny, true},
};
const Field kMoTpeSampler[] = {
    {"", Kind::kStruct, false, "MOTPESamplerConfig"},
    {"_target_", Kind::kStr},
    {"seed", Kind::kInt, true},
    {"consider_prior", Kind::kBool},
    {"prior_weight", Kind::kFloat},
    {"consider_magic_clip", Kind::kBool},
    {"consider_endpoints", Kind::kBool},
    {"n_startup_trials", Kind::kInt},
    {"n_ehvi_candidates", Kind::kInt},
};
const Field kGridSampler[] = {
    {"", Kind::kStruct, false, "GridSamplerConfig"},
    {"_target_", Kind::kStr},
    {"_partial_", Kind::kBool},
};

// A schema's fields and the path (under `hydra`) of the node it types.
struct Table {
  std::string_view prefix;
  const Field* begin = nullptr;
  const Field* end = nullptr;
};

template <size_t N>
Table MakeTable(std::string_view prefix, const Field (&fields)[N]) {
  return {prefix, fields, fields + N};
}

struct Typed {
  std::string_view target;
  Table table;
  std::string_view option = {};  // its hydra/sweeper/sampler option
};
const Typed kSweepers[] = {
    {"hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
     MakeTable("sweeper", kBasicSweeper)},
    {"hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper",
     MakeTable("sweeper", kOptunaSweeper)},
};
const Typed kSamplers[] = {
    {"optuna.samplers.TPESampler", MakeTable("sweeper.sampler", kTpeSampler),
     "tpe"},
    {"optuna.samplers.RandomSampler",
     MakeTable("sweeper.sampler", kRandomSampler),
     "random"},
    {"optuna.samplers.CmaEsSampler",
     MakeTable("sweeper.sampler", kCmaEsSampler),
     "cmaes"},
    {"optuna.samplers.NSGAIISampler",
     MakeTable("sweeper.sampler", kNsgaIISampler),
     "nsgaii"},
    {"optuna.samplers.MOTPESampler",
     MakeTable("sweeper.sampler", kMoTpeSampler),
     "motpe"},
    {"optuna.samplers.GridSampler", MakeTable("sweeper.sampler", kGridSampler),
     "grid"},
};

bool Within(std::string_view path, std::string_view prefix) {
  return prefix.empty() || path == prefix ||
         (StartsWith(path, prefix) && path[prefix.size()] == '.');
}

std::string Child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key)
                      : std::string(path) + "." + std::string(key);
}

// The schemas in force for `hydra`, most specific last: HydraConf, the
// sweeper's by hydra.sweeper._target_ (a plugin's that trialshim does not
// know leaves the node open), and the Optuna sampler's by the
// hydra/sweeper/sampler option merged (`sampler`), else by its _target_.
// Hydra merges the option's structured config into the node, which keeps
// that type whatever _target_ a later config writes: with sampler=random a
// config that sets TPE's n_startup_trials is refused, as the plugin does.
class Schemas {
 public:
  Schemas(const Node* hydra, std::string_view sampler) {
    tables_.push_back(MakeTable("", kFields));
    const Typed* sweeper = Find(hydra, "sweeper._target_", kSweepers);
    if (sweeper == nullptr) return;
    tables_.push_back(sweeper->table);
    if (sweeper->table.begin != kOptunaSweeper) return;
    for (const Typed& t : kSamplers) {
      if (!sampler.empty() && t.option == sampler) {
        tables_.push_back(t.table);
        return;
      }
    }
    if (const Typed* by_target =
            Find(hydra, "sweeper.sampler._target_", kSamplers)) {
      tables_.push_back(by_target->table);
    }
  }

  // The field at `path`, or nullptr under a Dict/Any/List field.
  const Field* FindField(std::string_view path) const {
    const Table& t = Owner(path);
    std::string_view rel = Relative(t, path);
    for (const Field* f = t.begin; f != t.end; ++f) {
      if (f->path == rel) return f;
    }
    return nullptr;
  }

  // The fields of the struct at `path`.
  std::vector<std::string> FieldNames(std::string_view path) const {
    const Table& t = Owner(path);
    std::string_view rel = Relative(t, path);
    std::string prefix = rel.empty() ? "" : std::string(rel) + ".";
    std::vector<std::string> names;
    for (const Field* f = t.begin; f != t.end; ++f) {
      std::string_view p = f->path;
      if (p.empty() || !StartsWith(p, prefix)) continue;
      p.remove_prefix(prefix.size());
      if (p.find('.') == std::string_view::npos) names.emplace_back(p);
    }
    return names;
  }

 private:
  template <size_t N>
  static const Typed* Find(const Node* hydra, std::string_view key,
                           const Typed (&typed)[N]) {
    const Node* target = hydra ? hydra->Find(key) : nullptr;
    if (target == nullptr || !target->is_string()) return nullptr;
    for (const Typed& t : typed) {
      if (t.target == target->AsString()) return &t;
    }
    return nullptr;
  }
  const Table& Owner(std::string_view path) const {
    for (size_t i = tables_.size(); i-- > 1;) {
      if (Within(path, tables_[i].prefix)) return tables_[i];
    }
    return tables_[0];
  }
  static std::string_view Relative(const Table& t, std::string_view path) {
    if (t.prefix.empty()) return path;
    return path.size() == t.prefix.size() ? std::string_view()
                                          : path.substr(t.prefix.size() + 1);
  }

  std::vector<Table> tables_;
};

class Checker {
 public:
  // `from_override`: the values checked are an override's
  // (hydra.mode=[1]), not a config's.
  Checker(const std::string& what, bool from_override, const Node* hydra,
          std::string_view sampler)
      : what_(what), from_override_(from_override), schemas_(hydra, sampler) {}

  Status Check(Node* node, const std::string& path) {
    const Field* f = schemas_.FindField(path);
    if (f == nullptr) return Status::Ok();  // under a Dict/Any/List field
    if (node->IsMissing() || node->IsInterpolation()) return Status::Ok();
    if (node->is_null()) {
      if (f->optional || f->kind == Kind::kAny) return Status::Ok();
      // OmegaConf's words for null merged into a field: a value node's
      // (ValueNode.validate_and_convert, omegaconf/nodes.py), or a
      // container's (DictConfig._validate_non_optional). An override
      // (hydra.job.name=null) gets the container's words from OmegaConf,
      // these here.
      const char* scalar = f->kind == Kind::kStr    ? "str"
                           : f->kind == Kind::kInt  ? "int"
                           : f->kind == Kind::kBool ? "bool"
                                                    : nullptr;
      if (scalar) {
        return Error(*node, path,
                     std::string("Incompatible value 'None' for field of "
                                 "type '") +
                         scalar + "'");
      }
      return Error(*node, path,
                   "field 'hydra" + Dotted(path) + "' is not Optional");
    }
    switch (f->kind) {
      case Kind::kStr:
        return Convert(node, path, ScalarKind::kStr);
      case Kind::kInt:
        return Convert(node, path, ScalarKind::kInt);
      case Kind::kFloat:
        return Convert(node, path, ScalarKind::kFloat);
      case Kind::kBool:
        return Convert(node, path, ScalarKind::kBool);
      case Kind::kRunMode:
        return ConvertEnum(node, path, kRunMode);
      case Kind::kStrList:
        // ListConfig._set_value_impl's words; then each item converts as
        // a str field would (an int item becomes "1").
        if (!node->is_list()) {
          return Error(*node, path,
                       "Invalid value assigned: " + PythonTypeName(*node) +
                           " is not a ListConfig, list or tuple.");
        }
        for (size_t i = 0; i < node->size(); ++i) {
          TRIALSHIM_RETURN_IF_ERROR(
              Convert(&node->MutableList()[i],
                      path + "[" + std::to_string(i) + "]", ScalarKind::kStr));
        }
        return Status::Ok();
      case Kind::kStrDict:
      case Kind::kAnyDict:
        if (!node->is_map()) {
          return Error(*node, path,
                       NotAMapMessage(*node, f->kind == Kind::kStrDict
                                                 ? "Dict[str, str]"
                                                 : "Dict[str, Any]"));
        }
        if (f->kind == Kind::kAnyDict) return Status::Ok();
        for (auto& [k, v] : node->MutableMap()) {
          TRIALSHIM_RETURN_IF_ERROR(
              Convert(&v, Child(path, k), ScalarKind::kStr));
        }
        return Status::Ok();
      case Kind::kStruct:
        return CheckStruct(node, path, *f);
      case Kind::kAny:
      case Kind::kAnyList:
        return Status::Ok();
    }
    return Status::Ok();
  }

 private:
  static std::string Dotted(const std::string& path) {
    return path.empty() ? "" : "." + path;
  }

  Status Error(const Node& at, const std::string& path,
               const std::string& message) const {
    return Error(at.mark(), path, message);
  }
  Status Error(const Mark& at, const std::string& path,
               const std::string& message) const {
    std::string where = at.known() ? at.ToString() + ": " : "";
    return Status::InvalidArgument(what_ + where + message +
                                   "\n    full_key: hydra" + Dotted(path));
  }

  // A dataclass node: DictConfig._raise_invalid_value for a scalar in its
  // place (OmegaConf adds ". value: 5"), and _validate_get's "Key 'x' not
  // in 'JobConf'" for a key the dataclass lacks (a struct config takes no
  // new key), checked before its value.
  Status CheckStruct(Node* node, const std::string& path, const Field& f) {
    if (!node->is_map()) {
      return Error(*node, path,
                   "Invalid type assigned: " + PythonTypeName(*node) +
                       " is not a subclass of " + std::string(f.type_name));
    }
    std::vector<std::string> names = schemas_.FieldNames(path);
    for (auto& [key, value] : node->MutableMap()) {
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        return Error(value.KeyOrValueMark(), Child(path, key),
                     "Key '" + key + "' not in '" + std::string(f.type_name) +
                         "'" + DidYouMean(key, names));
      }
      TRIALSHIM_RETURN_IF_ERROR(Check(&value, Child(path, key)));
    }
    return Status::Ok();
  }

  // OmegaConf's conversion on assignment (typed_value.h), in place: the
  // value kept is the converted one ("1" into an int field is 1), as
  // OmegaConf's merge stores what validate_and_convert returned.
  Status Convert(Node* node, const std::string& path, ScalarKind kind) {
    if (node->IsMissing()) return Status::Ok();
    StatusOr<Node> converted = ConvertScalar(*node, kind);
    if (!converted.ok()) {
      return Error(*node, path, converted.status().message());
    }
    *node = std::move(converted).value();
    return Status::Ok();
  }

  // EnumNode.validate_and_convert_to_enum (omegaconf/nodes.py): a member's
  // name, the name after "<class>." ("RunMode.RUN") and an int equal to a
  // member's value (not a bool) convert to the member, kept as its name
  // (what --cfg prints and what Hydra's get_mode compares); other strings
  // and ints are "Invalid value", any other type "not a valid input". A
  // container is named as OmegaConf holds it: a ListConfig merged from a
  // config, a plain list from an override.
  Status ConvertEnum(Node* node, const std::string& path, const EnumType& e) {
    std::optional<std::string_view> name;
    if (node->is_string()) {
      std::string_view s = node->AsString();
      const std::string prefix = std::string(e.name) + ".";
      if (StartsWith(s, prefix)) s.remove_prefix(prefix.size());
      for (const EnumMember& m : e.members) {
        if (m.name == s) name = m.name;
      }
    } else if (node->is_int()) {
      for (const EnumMember& m : e.members) {
        if (m.value == node->AsInt()) name = m.name;
      }
    } else if (!node->is_bool()) {
      std::string type = node->is_scalar() || from_override_
                             ? PythonTypeName(*node)
                             : OmegaTypeName(*node);
      return Error(*node, path,
                   "Value " + PythonStr(*node) + " (" + type +
                       ") is not a valid input for <enum '" +
                       std::string(e.name) + "'>");
    }
    if (!name) {
      std::vector<std::string> valid;
      for (const EnumMember& m : e.members) valid.emplace_back(m.name);
      return Error(*node, path,
                   "Invalid value '" + PythonStr(*node) +
                       "', expected one of [" + JoinStrings(valid, ", ") + "]");
    }
    Node member = Node::String(std::string(*name));
    member.set_mark(node->mark());
    member.set_key_mark(node->key_mark());
    *node = std::move(member);
    return Status::Ok();
  }

  const std::string& what_;
  const bool from_override_;
  Schemas schemas_;
};

}  // namespace

Status CheckHydraNode(Node* hydra, std::string_view key,
                      const std::string& what, std::string_view sampler) {
  // A key added under a typed container (+hydra.job.env_set.X=1) takes the
  // container's item type: check the container. Hydra accepts it and
  // stores "1", the Dict[str, str] element converted.
  Schemas schemas(hydra, sampler);
  if (!key.empty() && schemas.FindField(key) == nullptr) {
    size_t dot = key.rfind('.');
    std::string_view parent =
        dot == std::string_view::npos ? "" : key.substr(0, dot);
    const Field* f = schemas.FindField(parent);
    if (f != nullptr &&
        (f->kind == Kind::kStrDict || f->kind == Kind::kStrList)) {
      key = parent;
    }
  }
  Node* node = key.empty() ? hydra : hydra->FindMutable(key);
  if (node == nullptr) return Status::Ok();
  return Checker(what, !key.empty(), hydra, sampler)
      .Check(node, std::string(key));
}

std::string HydraStructName(const Node& hydra, std::string_view key,
                            std::string_view sampler) {
  const Field* f = Schemas(&hydra, sampler).FindField(key);
  return f && f->kind == Kind::kStruct ? std::string(f->type_name) : "";
}

}  // namespace trialshim::config::internal
