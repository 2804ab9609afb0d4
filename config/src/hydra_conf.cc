// CheckHydraNode(): HydraConf's field types (hydra/conf/__init__.py in
// Hydra 1.3.2) and OmegaConf 2.3's rules for a config merged into them, as
// Hydra composes. Messages are OmegaConf's ValidationError texts.
#include "hydra_conf.h"

#include <algorithm>
#include <utility>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/python_text.h"
#include "typed_value.h"

namespace trialshim::config::internal {
namespace {

enum class Kind {
  kStr,
  kInt,
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

// Every field of HydraConf, depth first. `env` is not a HydraConf field but
// every composition has it: hydra/env is one of Hydra's groups.
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

const Field* FindField(std::string_view path) {
  for (const Field& f : kFields) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string Child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key)
                      : std::string(path) + "." + std::string(key);
}

std::vector<std::string> FieldNames(std::string_view path) {
  std::vector<std::string> names;
  std::string prefix = path.empty() ? "" : std::string(path) + ".";
  for (const Field& f : kFields) {
    std::string_view p = f.path;
    if (p.empty() || !StartsWith(p, prefix)) continue;
    p.remove_prefix(prefix.size());
    if (p.find('.') == std::string_view::npos) names.emplace_back(p);
  }
  return names;
}

class Checker {
 public:
  explicit Checker(const std::string& what) : what_(what) {}

  Status Check(Node* node, const std::string& path) {
    const Field* f = FindField(path);
    if (f == nullptr) return Status::Ok();  // under a Dict/Any/List field
    if (node->IsMissing() || node->IsInterpolation()) return Status::Ok();
    if (node->is_null()) {
      if (f->optional || f->kind == Kind::kAny) return Status::Ok();
      // OmegaConf's words for null merged into a field: a value node's,
      // or a container's.
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
      case Kind::kBool:
        return Convert(node, path, ScalarKind::kBool);
      case Kind::kRunMode:
        if (node->is_string() &&
            (node->AsString() == "RUN" || node->AsString() == "MULTIRUN")) {
          return Status::Ok();
        }
        return Error(*node, path,
                     "Invalid value '" + PythonStr(*node) +
                         "', expected one of [RUN, MULTIRUN]");
      case Kind::kStrList:
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
    std::string where = at.mark().known() ? at.mark().ToString() + ": " : "";
    return Status::InvalidArgument(what_ + where + message +
                                   "\n    full_key: hydra" + Dotted(path));
  }

  Status CheckStruct(Node* node, const std::string& path, const Field& f) {
    if (!node->is_map()) {
      return Error(*node, path,
                   "Invalid type assigned: " + PythonTypeName(*node) +
                       " is not a subclass of " + std::string(f.type_name));
    }
    std::vector<std::string> names = FieldNames(path);
    for (auto& [key, value] : node->MutableMap()) {
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        return Error(value, Child(path, key),
                     "Key '" + key + "' not in '" + std::string(f.type_name) +
                         "'" + DidYouMean(key, names));
      }
      TRIALSHIM_RETURN_IF_ERROR(Check(&value, Child(path, key)));
    }
    return Status::Ok();
  }

  // OmegaConf's conversion on assignment (typed_value.h), in place.
  Status Convert(Node* node, const std::string& path, ScalarKind kind) {
    if (node->IsMissing()) return Status::Ok();
    StatusOr<Node> converted = ConvertScalar(*node, kind);
    if (!converted.ok()) {
      return Error(*node, path, converted.status().message());
    }
    *node = std::move(converted).value();
    return Status::Ok();
  }

  const std::string& what_;
};

}  // namespace

Status CheckHydraNode(Node* hydra, std::string_view key,
                      const std::string& what) {
  // A key added under a typed container (+hydra.job.env_set.X=1) takes the
  // container's item type: check the container.
  if (!key.empty() && FindField(key) == nullptr) {
    size_t dot = key.rfind('.');
    std::string_view parent =
        dot == std::string_view::npos ? "" : key.substr(0, dot);
    const Field* f = FindField(parent);
    if (f != nullptr &&
        (f->kind == Kind::kStrDict || f->kind == Kind::kStrList)) {
      key = parent;
    }
  }
  Node* node = key.empty() ? hydra : hydra->FindMutable(key);
  if (node == nullptr) return Status::Ok();
  return Checker(what).Check(node, std::string(key));
}

}  // namespace trialshim::config::internal
