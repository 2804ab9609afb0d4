// The rules of Schema<T> (schema.h): OmegaConf 2.3's merge of a config into
// a structured config, with its messages (omegaconf/errors.py texts), the
// struct-mode check of Hydra's overrides, and the printed views.
#include "trialshim/config/schema.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/base/spell.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/typed_value.h"
#include "typed_value.h"

namespace trialshim::config::schema_internal {
namespace {

using internal::NotAMapMessage;

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// OmegaConf's layout, format_and_raise's template in omegaconf/_utils.py:
// "$MSG\n    full_key: $FULL_KEY\n    object_type=$OBJECT_TYPE", with our
// file:line:col first (OmegaConf has no positions). The reference_type line
// OmegaConf adds for a typed node is left out.
Status Error(const Mark& at, const std::string& key,
             const std::string& object_type, const std::string& message) {
  std::string where = at.known() ? at.ToString() + ": " : "";
  return Status::InvalidArgument(where + message + "\n    full_key: " + key +
                                 "\n    object_type=" + object_type);
}

Status Error(const Node& at, const std::string& key,
             const std::string& object_type, const std::string& message) {
  return Error(at.mark(), key, object_type, message);
}

bool IsScalarKind(Kind k) {
  return k == Kind::kBool || k == Kind::kInt || k == Kind::kFloat ||
         k == Kind::kStr;
}

ScalarKind ToScalarKind(Kind k) {
  switch (k) {
    case Kind::kBool:
      return ScalarKind::kBool;
    case Kind::kInt:
      return ScalarKind::kInt;
    case Kind::kFloat:
      return ScalarKind::kFloat;
    default:
      return ScalarKind::kStr;
  }
}

std::string KindName(Kind k) {
  return k == Kind::kAny ? "Any" : ScalarKindName(ToScalarKind(k));
}

// Python's annotation of the field: "int", "Optional[str]", "List[int]".
std::string TypeName(const FieldType& t) {
  std::string name;
  if (t.kind == Kind::kList) {
    name = "List[" + KindName(t.item) + "]";
  } else if (t.kind == Kind::kMap) {
    name = "Dict[str, " + KindName(t.item) + "]";
  } else if (t.kind == Kind::kStruct) {
    name = t.nested->name();
  } else {
    name = KindName(t.kind);
  }
  return t.optional ? "Optional[" + name + "]" : name;
}

std::string NumberText(double v, Kind k) {
  if (k == Kind::kInt) return std::to_string(static_cast<int64_t>(v));
  return PythonStr(Node::Double(v));
}

std::string ChoicesText(const std::vector<std::string>& choices) {
  std::string out = "[";
  for (size_t i = 0; i < choices.size(); ++i) {
    out += (i ? ", " : "") + choices[i];
  }
  return out + "]";
}

// The range and choices of `f` for one converted scalar `v`. Neither is an
// OmegaConf rule (a dataclass field has only a type); the words follow
// OmegaConf's "Value 'x' ..." style so that they read as one family.
std::string Violation(const FieldSpec& f, Kind kind, const Node& v) {
  if (f.range && v.is_number()) {
    double x = v.AsDouble();
    if (!(x >= f.range->first && x <= f.range->second)) {
      return "Value '" + PythonStr(v) + "' is out of range, expected " +
             NumberText(f.range->first, kind) +
             " <= value <= " + NumberText(f.range->second, kind);
    }
  }
  if (!f.choices.empty()) {
    std::string text = PythonStr(v);
    for (const std::string& c : f.choices) {
      if (c == text) return "";
    }
    return "Invalid value '" + text + "', expected one of " +
           ChoicesText(f.choices) + DidYouMean(text, f.choices);
  }
  return "";
}

nlohmann::json ToJsonValue(const Node& n) {
  switch (n.type()) {
    case Node::Type::kNull:
      return nullptr;
    case Node::Type::kBool:
      return n.AsBool();
    case Node::Type::kInt:
      return n.AsInt();
    case Node::Type::kDouble:
      return n.AsDouble();
    case Node::Type::kString:
      return n.AsString();
    case Node::Type::kList: {
      nlohmann::json out = nlohmann::json::array();
      for (const Node& x : n.AsList()) out.push_back(ToJsonValue(x));
      return out;
    }
    case Node::Type::kMap: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, x] : n.AsMap()) out[k] = ToJsonValue(x);
      return out;
    }
  }
  return nullptr;
}

const char* JsonType(Kind k) {
  switch (k) {
    case Kind::kBool:
      return "boolean";
    case Kind::kInt:
      return "integer";
    case Kind::kFloat:
      return "number";
    case Kind::kStr:
      return "string";
    default:
      return nullptr;
  }
}

// The schema of one scalar value of kind `k` under the constraints of `f`.
nlohmann::json ScalarSchema(const FieldSpec& f, Kind k, bool optional) {
  nlohmann::json s = nlohmann::json::object();
  if (const char* type = JsonType(k)) {
    s["type"] =
        optional ? nlohmann::json::array({type, "null"}) : nlohmann::json(type);
  }
  if (f.range) {
    s["minimum"] = k == Kind::kInt
                       ? nlohmann::json(static_cast<int64_t>(f.range->first))
                       : nlohmann::json(f.range->first);
    s["maximum"] = k == Kind::kInt
                       ? nlohmann::json(static_cast<int64_t>(f.range->second))
                       : nlohmann::json(f.range->second);
  }
  if (!f.choices.empty()) {
    nlohmann::json e = nlohmann::json::array();
    for (const std::string& c : f.choices) {
      StatusOr<Node> v = ConvertScalar(Node::String(c), ToScalarKind(k));
      e.push_back(v.ok() && IsScalarKind(k) ? ToJsonValue(*v)
                                            : nlohmann::json(c));
    }
    if (optional) e.push_back(nullptr);
    s["enum"] = e;
  }
  return s;
}

// A config file may hold "???" or an interpolation in any field (OmegaConf
// validates an interpolation only when it is resolved); the schema says so
// wherever a plain string would not already pass.
nlohmann::json OrInterpolation(nlohmann::json s) {
  bool text_passes =
      s.contains("type") && s["type"] == "string" && !s.contains("enum");
  if (s.empty() || text_passes) {
    return s;
  }
  nlohmann::json text = {{"type", "string"}, {"pattern", "^[?][?][?]$|[$][{]"}};
  return {{"anyOf", nlohmann::json::array({std::move(s), std::move(text)})}};
}

nlohmann::json ItemSchema(const FieldSpec& f, Kind k, bool optional) {
  return OrInterpolation(ScalarSchema(f, k, optional));
}

// The value written after "key: " in the YAML view.
std::string YamlValue(const Node& v) {
  if (!v.is_scalar()) return ToJson(v, -1);  // flow style: JSON is YAML
  Node one = Node::MakeMap({{"k", v}});
  std::string line = ToYaml(one);  // "k: <value>\n"
  return line.substr(3, line.size() - 4);
}

std::string Describe(const FieldSpec& f) {
  std::string out = TypeName(f.type);
  if (!f.doc.empty()) out += ", " + f.doc;
  if (f.required) out += ", required";
  Kind k = f.type.kind == Kind::kList || f.type.kind == Kind::kMap
               ? f.type.item
               : f.type.kind;
  if (f.range) {
    out += ", range [" + NumberText(f.range->first, k) + ", " +
           NumberText(f.range->second, k) + "]";
  }
  if (!f.choices.empty()) out += ", one of " + ChoicesText(f.choices);
  return out;
}

// One field's value converted and checked; see Core::Merge. The
// conversions are OmegaConf's ValueNode validate_and_convert (nodes.py, via
// ConvertScalar); the messages are theirs: "Incompatible value 'None' for
// field of type 'int'" (nodes.py) for null into a non-Optional field, and
// ListConfig's "Invalid value assigned: int is not a ListConfig, list or
// tuple." (listconfig.py). When `overriding`, an interpolation passes
// unchecked, as OmegaConf.update stores it without resolving it.
class Converter {
 public:
  Converter(const FieldSpec& f, const std::string& object_type, bool overriding)
      : f_(f), object_type_(object_type), overriding_(overriding) {}

  StatusOr<Node> Field(const Node& v, const std::string& key) const {
    if (v.IsMissing() || (overriding_ && v.IsInterpolation())) return v;
    const FieldType& t = f_.type;
    if (v.is_null() && (t.optional || t.kind == Kind::kAny)) return v;
    if (v.is_null() && !IsScalarKind(t.kind)) {
      return Error(
          v, key, object_type_,
          "Incompatible value 'None' for field of type '" + TypeName(t) + "'");
    }
    if (t.kind == Kind::kList) return List(v, key);
    if (t.kind == Kind::kMap) return Map(v, key);
    return Item(v, t.kind, key);
  }

  StatusOr<Node> Item(const Node& v, Kind kind, const std::string& key) const {
    if (kind == Kind::kAny || (overriding_ && v.IsInterpolation())) return v;
    if (v.IsMissing()) {
      return Error(v, key, object_type_, "Missing mandatory value: " + key);
    }
    StatusOr<Node> c = ConvertScalar(v, ToScalarKind(kind));
    if (!c.ok()) return Error(v, key, object_type_, c.status().message());
    if (f_.type.int32 && (c->AsInt() < std::numeric_limits<int>::min() ||
                          c->AsInt() > std::numeric_limits<int>::max())) {
      return Error(
          v, key, object_type_,
          "Value '" + PythonStr(*c) + "' does not fit in a 32-bit int");
    }
    std::string bad = Violation(f_, kind, *c);
    if (!bad.empty()) return Error(v, key, object_type_, bad);
    return c;
  }

 private:
  StatusOr<Node> List(const Node& v, const std::string& key) const {
    if (!v.is_list()) {
      return Error(v, key, object_type_,
                   "Invalid value assigned: " + PythonTypeName(v) +
                       " is not a ListConfig, list or tuple.");
    }
    Node out = v;
    Node::List& items = out.MutableList();
    for (size_t i = 0; i < items.size(); ++i) {
      TRIALSHIM_ASSIGN_OR_RETURN(
          items[i],
          Item(items[i], f_.type.item, key + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

  StatusOr<Node> Map(const Node& v, const std::string& key) const {
    if (!v.is_map()) {
      return Error(v, key, object_type_, NotAMapMessage(v, TypeName(f_.type)));
    }
    Node out = v;
    for (auto& [k, x] : out.MutableMap()) {
      TRIALSHIM_ASSIGN_OR_RETURN(x, Item(x, f_.type.item, Join(key, k)));
    }
    return out;
  }

  const FieldSpec& f_;
  const std::string& object_type_;
  bool overriding_;
};

}  // namespace

void Core::Add(FieldSpec f) { fields_.push_back(std::move(f)); }

const FieldSpec* Core::Find(const std::string& key) const {
  for (const FieldSpec& f : fields_) {
    if (f.name == key) return &f;
  }
  return nullptr;
}

std::vector<std::string> Core::Names() const {
  std::vector<std::string> names;
  for (const FieldSpec& f : fields_) names.push_back(f.name);
  return names;
}

Node Core::ToNode(const void* object) const {
  Node out = Node::MakeMap();
  for (const FieldSpec& f : fields_) out.Set(f.name, f.get(object));
  return out;
}

Node Core::Defaults(const void* default_object) const {
  Node out = ToNode(default_object);
  MarkRequired(&out);
  return out;
}

void Core::MarkRequired(Node* map) const {
  for (const FieldSpec& f : fields_) {
    Node* v = map->GetMutable(f.name);
    if (f.required) {
      *v = Node::String("???");
    } else if (f.type.kind == Kind::kStruct) {
      f.type.nested->MarkRequired(v);
    }
  }
}

// OmegaConf.merge(structured, input): each key of `input` must be a field
// (DictConfig._validate_get: "Key 'x' not in 'T'"); its value is converted
// into `out` (which holds the defaults, or is empty when checking an
// override). "???" leaves a field's default as it is, as
// BaseContainer._map_merge (basecontainer.py) keeps the destination when
// the source is missing (x: int = 5 merged with {x: ???} stays 5); a field
// without a default stays "???", which Bind reports. An override is an
// assignment (OmegaConf.update), so there "???" replaces the value.
Status Core::Merge(const Node& input, Node* out, const std::string& path,
                   bool overriding) const {
  if (input.mark().known()) out->set_mark(input.mark());
  for (const auto& [key, value] : input.AsMap()) {
    const FieldSpec* f = Find(key);
    std::string full = Join(path, key);
    if (f == nullptr) {
      return Error(value.KeyOrValueMark(), full, name_,
                   "Key '" + key + "' not in '" + name_ + "'" +
                       DidYouMean(key, Names()));
    }
    if (f->type.kind != Kind::kStruct) {
      const Node* dest = out->Get(key);
      if (!overriding && value.IsMissing() && dest && !dest->IsMissing()) {
        continue;
      }
      TRIALSHIM_ASSIGN_OR_RETURN(
          Node v, Converter(*f, name_, overriding).Field(value, full));
      out->Set(key, std::move(v));
      continue;
    }
    if (value.IsMissing() || (overriding && value.IsInterpolation())) continue;
    // DictConfig's "field 'n' is not Optional" and _validate_merge's
    // "Merge error: int is not a subclass of T" (dictconfig.py).
    if (value.is_null()) {
      return Error(value, full, name_, "field '" + full + "' is not Optional");
    }
    if (!value.is_map()) {
      return Error(value, full, name_,
                   "Merge error: " + PythonTypeName(value) +
                       " is not a subclass of " + f->type.nested->name() +
                       ". value: " + PythonStr(value));
    }
    Node sub = out->Get(key) != nullptr ? *out->Get(key) : Node::MakeMap();
    TRIALSHIM_RETURN_IF_ERROR(
        f->type.nested->Merge(value, &sub, full, overriding));
    out->Set(key, std::move(sub));
  }
  return Status::Ok();
}

// A "???" left after the merge: a required field the config did not give,
// which OmegaConf reports only once the field is read (MissingMandatoryValue,
// whose words we use). Where the config gave no value, the error points at
// the enclosing map.
Status Core::FindMissing(const Node& checked, const std::string& path) const {
  for (const FieldSpec& f : fields_) {
    const Node& v = *checked.Get(f.name);
    std::string full = Join(path, f.name);
    if (v.IsMissing()) {
      return Error(v.mark().known() ? v : checked, full, name_,
                   "Missing mandatory value: " + full);
    }
    if (f.type.kind == Kind::kStruct) {
      TRIALSHIM_RETURN_IF_ERROR(f.type.nested->FindMissing(v, full));
    }
  }
  return Status::Ok();
}

void Core::Fill(const Node& checked, void* object) const {
  for (const FieldSpec& f : fields_) f.set(object, *checked.Get(f.name));
}

Status Core::Bind(const Node& input, const Node& defaults, void* object) const {
  if (!input.is_map()) {
    return Error(input, "", name_,
                 "Invalid type assigned: " + PythonTypeName(input) +
                     " is not a subclass of " + name_);
  }
  Node checked = defaults;
  TRIALSHIM_RETURN_IF_ERROR(Merge(input, &checked, "", false));
  TRIALSHIM_RETURN_IF_ERROR(FindMissing(checked, ""));
  Fill(checked, object);
  return Status::Ok();
}

namespace {

// The values an override assigns: its element, or each choice of a sweep.
std::vector<Node> AssignedValues(const Override& o) {
  if (!o.value || o.type == OverrideType::kDelete) return {};
  if (!o.is_sweep()) return {*o.value};
  return o.value->is_list() ? o.value->AsList() : std::vector<Node>{};
}

std::vector<std::string> SplitKey(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos;
       start = dot + 1) {
    parts.push_back(key.substr(start, dot - start));
  }
  parts.push_back(key.substr(start));
  return parts;
}

}  // namespace

// Hydra applies an override to the composed config in struct mode
// (ConfigLoaderImpl._apply_overrides_to_config in hydra/_internal/
// config_loader_impl.py, with its messages): the key must name a field (a
// new key needs + or ++), + may not replace one, and the value is merged
// with OmegaConf.update(merge=True), as a config would be. Inside an Any
// field or a map or list only the item type is known. Group overrides
// (a package, a '/') and hydra.* keys are checked elsewhere.
Status Core::CheckOverride(const Override& o, bool closed,
                           const Node& defaults) const {
  const std::string& key = o.key_or_group;
  if (o.package || key.find('/') != std::string::npos || o.is_hydra()) {
    return Status::Ok();
  }
  std::string what = "Error merging override " + o.input + "\n";
  bool adding =
      o.type == OverrideType::kAdd || o.type == OverrideType::kForceAdd;
  std::vector<std::string> parts = SplitKey(key);
  const Core* core = this;
  const Node* at = &defaults;  // `core`'s defaults
  std::string parent;          // the dotted path of `core`
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldSpec* f = core->Find(parts[i]);
    const Node* value = at != nullptr ? at->Get(parts[i]) : nullptr;
    std::string path = Join(parent, parts[i]);
    if (f == nullptr) {
      if (adding && !closed) return Status::Ok();
      std::string head = adding ? "Could not add '" + key + "': "
                         : o.type == OverrideType::kDelete
                             ? "Could not delete from config. "
                             : "Could not override '" + key + "'.\n" +
                                   // Hydra's hint; `closed` refuses the
                                   // + it suggests too.
                                   (closed ? std::string()
                                           : "To append to your config use +" +
                                                 o.input + "\n");
      return Status::InvalidArgument(
          head + "Key '" + parts[i] + "' not in '" + core->name() + "'" +
          DidYouMean(parts[i], core->Names()) + "\n    full_key: " + path +
          "\n    object_type=" + core->name());
    }
    bool last = i + 1 == parts.size();
    // Hydra's rule for +: an item is there unless OmegaConf.select gives
    // None, which it does for null and, with throw_on_missing=False, for
    // "???"; a dict or list value merges in. A null default the config may
    // have set is composition's.
    const bool adds_scalar =
        !o.value || (!o.value->is_map() && !o.value->is_list());
    if (last && o.type == OverrideType::kAdd && adds_scalar &&
        (value == nullptr || !(value->is_null() || value->IsMissing()))) {
      return Status::InvalidArgument(
          "Could not append to config. An item is already at '" + key +
          "'.\nEither remove + prefix: '" + o.input.substr(1) +
          "'\nOr add a second + to add or override '" + key + "': '+" +
          o.input + "'");
    }
    if (f->type.kind == Kind::kStruct && !last) {
      core = f->type.nested.get();
      at = value;
      parent = path;
      continue;
    }
    // An item of a list or map field: its item type; deeper, or inside an
    // Any field, nothing is known.
    bool item = i + 2 == parts.size() && f->type.kind != Kind::kAny;
    if (!last && !item) return Status::Ok();
    for (const Node& v : AssignedValues(o)) {
      Node out = Node::MakeMap();
      Status st =
          last ? core->Merge(Node::MakeMap({{parts[i], v}}), &out, parent, true)
               : Converter(*f, core->name(), true)
                     .Item(v, f->type.item, key)
                     .status();
      if (!st.ok()) return Status::InvalidArgument(what + st.message());
    }
    return Status::Ok();
  }
  return Status::Ok();
}

std::string Core::Yaml(const Node& defaults) const {
  std::string out = "# " + name_ + "\n";
  AppendYaml(defaults, 0, &out);
  return out;
}

void Core::AppendYaml(const Node& defaults, int indent,
                      std::string* out) const {
  std::string pad(static_cast<size_t>(indent), ' ');
  for (const FieldSpec& f : fields_) {
    const Node& v = *defaults.Get(f.name);
    if (f.type.kind == Kind::kStruct) {
      *out += pad + f.name + ":  # " + Describe(f) + "\n";
      f.type.nested->AppendYaml(v, indent + 2, out);
    } else {
      *out += pad + f.name + ": " + YamlValue(v) + "  # " + Describe(f) + "\n";
    }
  }
}

nlohmann::json Core::ObjectSchema(const Node& defaults) const {
  nlohmann::json s = {{"type", "object"}, {"title", name_}};
  nlohmann::json props = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (const FieldSpec& f : fields_) {
    const Node& v = *defaults.Get(f.name);
    const FieldType& t = f.type;
    nlohmann::json p;
    if (t.kind == Kind::kStruct) {
      p = t.nested->ObjectSchema(v);
    } else if (t.kind == Kind::kList) {
      p = OrInterpolation(
          {{"type", "array"}, {"items", ItemSchema(f, t.item, false)}});
    } else if (t.kind == Kind::kMap) {
      p = OrInterpolation(
          {{"type", "object"},
           {"additionalProperties", ItemSchema(f, t.item, false)}});
    } else {
      p = ItemSchema(f, t.kind, t.optional);
    }
    if (!f.doc.empty()) p["description"] = f.doc;
    if (f.required) {
      required.push_back(f.name);
    } else if (t.kind != Kind::kStruct) {
      p["default"] = ToJsonValue(v);
    }
    props[f.name] = p;
  }
  s["properties"] = props;
  if (!required.empty()) s["required"] = required;
  s["additionalProperties"] = false;
  return s;
}

nlohmann::json Core::JsonSchema(const Node& defaults) const {
  nlohmann::json s = ObjectSchema(defaults);
  s["$schema"] = "http://json-schema.org/draft-07/schema#";
  return s;
}

}  // namespace trialshim::config::schema_internal
