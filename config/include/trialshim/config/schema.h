// Schema<T>: a structured config, what OmegaConf gives a dataclass, for a
// C++ struct.
//
// A program declares once, beside its config struct, each field's key, type
// (the member's own), doc, and optionally an allowed range, a list of choices
// or that it is mandatory (OmegaConf's MISSING, "???"). The schema then
//   - binds a composed, resolved config to the struct (Bind) with OmegaConf's
//     conversions and errors: "5" fills an int, 1.0 does not; an unknown key
//     is refused with did-you-mean; every error names file:line:col and the
//     full dotted key;
//   - gives the defaults as a Node (ToNode), the base config a program
//     composes onto, as OmegaConf.structured(T) does;
//   - checks a parsed command-line override before composition (struct mode);
//   - prints itself: a YAML view with the docs as comments (`--cfg schema`)
//     and a draft-07 JSON Schema that YAML editors use for completion and
//     checking (`# yaml-language-server: $schema=train.schema.json`).
//
//   struct Data { std::string path = "data/digits.csv"; double val = 0.2; };
//   struct Train {
//     int64_t batch_size = 64;
//     std::string optimizer = "adam";
//     std::optional<int64_t> seed;
//     Data data;
//   };
//   Schema<Data> data("Data");
//   data.Field("path", &Data::path, "CSV file");
//   data.Field("val", &Data::val, "held-out fraction").Range(0.0, 1.0);
//   Schema<Train> train("Train");
//   train.Field("batch_size", &Train::batch_size, "samples per step")
//       .Range(1, 65536);
//   train.Field("optimizer", &Train::optimizer, "update rule")
//       .Choices({"sgd", "adam", "adamw"});
//   train.Field("seed", &Train::seed, "RNG seed; null: random");
//   train.Field("data", &Train::data, data, "the data set");
//   StatusOr<Train> t = train.Bind(composed_and_resolved);
//
// Field types: bool, int64_t, int, double, std::string, config::Node (Any),
// std::optional of a scalar, std::vector and std::map<std::string, ...> of a
// scalar, and another struct through its Schema. Copies of a Schema share
// one declaration. Errors are InvalidArgument. Once declared, a Schema may
// be used from any thread.
#ifndef TRIALSHIM_CONFIG_SCHEMA_H_
#define TRIALSHIM_CONFIG_SCHEMA_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/config/override.h"

namespace trialshim::config {

namespace schema_internal {

enum class Kind { kBool, kInt, kFloat, kStr, kAny, kList, kMap, kStruct };

class Core;

// How one field's value is typed: a scalar (or Any), an Optional of one, a
// list or string-keyed map of one, or a nested struct.
struct FieldType {
  Kind kind = Kind::kAny;
  Kind item = Kind::kAny;  // the item's kind for kList and kMap
  bool optional = false;
  bool int32 = false;                  // an `int` member: the value must fit
  std::shared_ptr<const Core> nested;  // for kStruct
};

inline FieldType MakeType(Kind kind, Kind item = Kind::kAny,
                          bool int32 = false) {
  FieldType t;
  t.kind = kind;
  t.item = item;
  t.int32 = int32;
  return t;
}

// The type-erased description of one field.
struct FieldSpec {
  std::string name;
  std::string doc;
  FieldType type;
  bool required = false;
  std::optional<std::pair<double, double>> range;
  std::vector<std::string> choices;
  std::function<Node(const void*)> get;         // member -> Node
  std::function<void(void*, const Node&)> set;  // checked Node -> member
};

// The non-template part of Schema<T>: all the rules live here (schema.cc).
class Core {
 public:
  explicit Core(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  const std::vector<FieldSpec>& fields() const { return fields_; }
  void Add(FieldSpec f);
  FieldSpec* last() { return fields_.empty() ? nullptr : &fields_.back(); }

  Node ToNode(const void* object) const;
  // ToNode of a default-constructed object with "???" for required fields.
  Node Defaults(const void* default_object) const;
  void MarkRequired(Node* map) const;
  // Checks and converts `input` merged over `defaults` into a complete map
  // with canonical values, then writes it into `object`.
  Status Bind(const Node& input, const Node& defaults, void* object) const;
  Status CheckOverride(const Override& o, bool closed,
                       const Node& defaults) const;
  std::string Yaml(const Node& defaults) const;
  nlohmann::json JsonSchema(const Node& defaults) const;

  // For nested structs: the checked map (Merge's result) into `object`.
  void Fill(const Node& checked, void* object) const;
  Status Merge(const Node& input, Node* out, const std::string& path,
               bool overriding) const;
  Status FindMissing(const Node& checked, const std::string& path) const;
  const FieldSpec* Find(const std::string& key) const;
  std::vector<std::string> Names() const;
  nlohmann::json ObjectSchema(const Node& defaults) const;
  void AppendYaml(const Node& defaults, int indent, std::string* out) const;

 private:
  std::string name_;
  std::vector<FieldSpec> fields_;
};

// The type table: how a member type maps to a FieldType and converts to and
// from a Node. Values reaching FromNode were checked by Core.
template <typename V, typename = void>
struct Traits;  // unsupported field type: no specialization

template <>
struct Traits<bool> {
  static FieldType Type() { return MakeType(Kind::kBool); }
  static Node ToNode(bool v) { return Node::Bool(v); }
  static bool FromNode(const Node& n) { return n.AsBool(); }
};
template <>
struct Traits<int64_t> {
  static FieldType Type() { return MakeType(Kind::kInt); }
  static Node ToNode(int64_t v) { return Node::Int(v); }
  static int64_t FromNode(const Node& n) { return n.AsInt(); }
};
template <>
struct Traits<int> {
  static FieldType Type() { return MakeType(Kind::kInt, Kind::kAny, true); }
  static Node ToNode(int v) { return Node::Int(v); }
  static int FromNode(const Node& n) { return static_cast<int>(n.AsInt()); }
};
template <>
struct Traits<double> {
  static FieldType Type() { return MakeType(Kind::kFloat); }
  static Node ToNode(double v) { return Node::Double(v); }
  static double FromNode(const Node& n) { return n.AsDouble(); }
};
template <>
struct Traits<std::string> {
  static FieldType Type() { return MakeType(Kind::kStr); }
  static Node ToNode(const std::string& v) { return Node::String(v); }
  static std::string FromNode(const Node& n) { return n.AsString(); }
};
template <>
struct Traits<Node> {
  static FieldType Type() { return MakeType(Kind::kAny); }
  static Node ToNode(const Node& v) { return v; }
  static Node FromNode(const Node& n) { return n; }
};
template <typename V>
struct Traits<std::optional<V>> {
  static FieldType Type() {
    FieldType t = Traits<V>::Type();
    t.optional = true;
    return t;
  }
  static Node ToNode(const std::optional<V>& v) {
    return v ? Traits<V>::ToNode(*v) : Node::Null();
  }
  static std::optional<V> FromNode(const Node& n) {
    if (n.is_null()) return std::nullopt;
    return Traits<V>::FromNode(n);
  }
};
template <typename V>
struct Traits<std::vector<V>> {
  static FieldType Type() {
    FieldType t = Traits<V>::Type();
    return MakeType(Kind::kList, t.kind, t.int32);
  }
  static Node ToNode(const std::vector<V>& v) {
    Node::List items;
    for (const V& x : v) items.push_back(Traits<V>::ToNode(x));
    return Node::MakeList(std::move(items));
  }
  static std::vector<V> FromNode(const Node& n) {
    std::vector<V> out;
    for (const Node& x : n.AsList()) out.push_back(Traits<V>::FromNode(x));
    return out;
  }
};
template <typename V>
struct Traits<std::map<std::string, V>> {
  static FieldType Type() {
    FieldType t = Traits<V>::Type();
    return MakeType(Kind::kMap, t.kind, t.int32);
  }
  static Node ToNode(const std::map<std::string, V>& v) {
    Node::Map entries;
    for (const auto& [k, x] : v) entries.emplace_back(k, Traits<V>::ToNode(x));
    return Node::MakeMap(std::move(entries));
  }
  static std::map<std::string, V> FromNode(const Node& n) {
    std::map<std::string, V> out;
    for (const auto& [k, x] : n.AsMap()) out[k] = Traits<V>::FromNode(x);
    return out;
  }
};

// Whether Traits has an entry for V (a struct member needs its Schema).
template <typename V, typename = void>
struct Supported : std::false_type {};
template <typename V>
struct Supported<V, std::void_t<decltype(Traits<V>::Type())>> : std::true_type {
};

}  // namespace schema_internal

template <typename T>
class Schema {
 public:
  // `name` is the struct's name as messages give it ("Key 'x' not in
  // 'Train'"), as OmegaConf names the dataclass.
  explicit Schema(std::string name)
      : core_(std::make_shared<schema_internal::Core>(std::move(name))) {}

  // Declares the field `key` held in `member`; its default is the member's
  // value in a default-constructed T.
  template <typename V>
  Schema& Field(std::string key, V T::*member, std::string doc = "") {
    static_assert(schema_internal::Supported<V>::value,
                  "unsupported field type: bool, int64_t, int, double, "
                  "std::string, Node, or std::optional, std::vector, "
                  "std::map<std::string, ...> of a scalar; a struct member "
                  "is declared with its Schema");
    using Tr = schema_internal::Traits<V>;
    schema_internal::FieldSpec f;
    f.name = std::move(key);
    f.doc = std::move(doc);
    f.type = Tr::Type();
    f.get = [member](const void* o) {
      return Tr::ToNode(static_cast<const T*>(o)->*member);
    };
    f.set = [member](void* o, const Node& n) {
      static_cast<T*>(o)->*member = Tr::FromNode(n);
    };
    core_->Add(std::move(f));
    return *this;
  }

  // Declares a nested struct field described by `nested`.
  template <typename U>
  Schema& Field(std::string key, U T::*member, const Schema<U>& nested,
                std::string doc = "") {
    schema_internal::FieldSpec f;
    f.name = std::move(key);
    f.doc = std::move(doc);
    f.type.kind = schema_internal::Kind::kStruct;
    f.type.nested = nested.core_;
    std::shared_ptr<const schema_internal::Core> core = nested.core_;
    f.get = [member, core](const void* o) {
      return core->ToNode(&(static_cast<const T*>(o)->*member));
    };
    f.set = [member, core](void* o, const Node& n) {
      core->Fill(n, &(static_cast<T*>(o)->*member));
    };
    core_->Add(std::move(f));
    return *this;
  }

  // Constraints on the field declared last. Range: numbers (and the items
  // of a list or map of numbers) must lie in [min, max].
  Schema& Range(double min, double max) {
    if (auto* f = core_->last()) f->range = std::make_pair(min, max);
    return *this;
  }
  // The value (a str, or any scalar by its Python str) must be one of these.
  Schema& Choices(std::vector<std::string> choices) {
    if (auto* f = core_->last()) f->choices = std::move(choices);
    return *this;
  }
  // No default: the config must give a value ("???" in ToNode()).
  Schema& Required() {
    if (auto* f = core_->last()) f->required = true;
    return *this;
  }

  const std::string& name() const { return core_->name(); }
  // The fields' keys, in declaration order.
  std::vector<std::string> Keys() const { return core_->Names(); }

  // `config` (composed and resolved) as a T: the defaults overlaid with the
  // config's keys, converted and checked as OmegaConf does.
  StatusOr<T> Bind(const Node& config) const {
    T out{};
    TRIALSHIM_RETURN_IF_ERROR(core_->Bind(config, ToNode(), &out));
    return out;
  }

  // The defaults, "???" for required fields: OmegaConf.structured(T).
  Node ToNode() const {
    T defaults{};
    return core_->Defaults(&defaults);
  }
  // A bound value back as a config (for printing what a run used).
  Node ToNode(const T& value) const { return core_->ToNode(&value); }

  // Checks one override against the schema in struct mode: its key must be a
  // field (unless added with + or ++, as OmegaConf allows; `closed`: not
  // even then, for a config that is bound whole to the schema, whose Bind
  // refuses keys it lacks) and its value must convert; + on a field is
  // refused where its default is not null (Hydra takes + over a null). The
  // config may set what the schema leaves null: composition, which sees
  // both (ComposeRequest::declared), decides then. Overrides of config
  // groups (a '/' in the key, or an @package) and of `hydra.*` are not the
  // schema's and pass.
  Status CheckOverride(const Override& o, bool closed = false) const {
    return core_->CheckOverride(o, closed, ToNode());
  }

  // The defaults as YAML with each field's type, doc and constraints as a
  // comment: "batch_size: 64  # int, samples per step, range [1, 65536]".
  std::string Yaml() const { return core_->Yaml(ToNode()); }
  // A JSON Schema (draft-07) of the config: types, descriptions, defaults,
  // enum, minimum/maximum, required, and additionalProperties false.
  nlohmann::json JsonSchema() const { return core_->JsonSchema(ToNode()); }

 private:
  template <typename U>
  friend class Schema;
  std::shared_ptr<schema_internal::Core> core_;
};

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_SCHEMA_H_
