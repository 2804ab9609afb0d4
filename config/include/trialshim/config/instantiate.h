// instantiate: objects built from config nodes by their `_target_`, as
// hydra.utils.instantiate (Hydra 1.3.2) builds them in Python.
//
// A Registry maps target names to factories. Instantiate finds the node,
// looks up its `_target_` (a native name or one of its aliases: the Python
// class paths Lightning/Hydra configs write, "torch.optim.Adam"), builds the
// arguments and calls the factory:
//   - every other key is a keyword argument; a value holding `_target_`s
//     (directly, or inside lists and plain maps) has them instantiated first,
//     depth first; a plain value is passed as its config::Node;
//   - `_args_` (a list) are positional arguments. When the target lists its
//     keyword names, positional arguments bind to them in order, as Python
//     binds them (a name given both ways is an error);
//   - `_partial_: true` gives a Partial (functools.partial): the call waits
//     for the rest of the arguments ("???" values are left out then);
//   - `_recursive_: false` passes nested nodes uninstantiated (the flag holds
//     for the subtree until a node sets it again);
//   - `_convert_` (none|partial|object|all) is accepted and ignored: a
//     factory always gets config::Nodes, C++ has no DictConfig/dict split.
// Keyword arguments given to Instantiate override the node's keys, as
// Hydra merges them into the config; positional ones replace `_args_`.
//
// Objects are type-erased: an Object holds a std::shared_ptr to the type its
// factory was registered with (Register<T>); InstantiateAs<T> and
// Object::As<T> ask for exactly that type (no derived-to-base conversion:
// register with the base class callers will ask for).
//
// Errors are InvalidArgument (NotFound for an unknown target or key) with
// Hydra's wording, the file:line:col of the `_target_` value (or of the bad
// value) and the full key:
//   conf/model/mnist.yaml:4:13: Error in call to target 'torch.optim.Adam':
//   got an unexpected keyword argument 'lrr' (did you mean 'lr'?); ...
//   full_key: model.optimizer
// Differences from Hydra: keyword names are checked when a partial is made,
// not when it is called; an unknown `_convert_` is an error.
//
// Example:
//   config::Registry registry;
//   Status s = registry.Register<Net>(
//       "src.models.components.simple_dense_net.SimpleDenseNet",
//       [](const config::Arguments& a) -> StatusOr<std::shared_ptr<Net>> {
//         int64_t width = 64;
//         TRIALSHIM_RETURN_IF_ERROR(a.Int("lin1_size", &width));
//         return std::make_shared<Net>(width);
//       },
//       {"A dense net.", {"input_size", "lin1_size"}, {}});
//   StatusOr<std::shared_ptr<Net>> net =
//       registry.InstantiateAs<Net>(cfg, "model.net");
//   StatusOr<std::shared_ptr<config::Partial>> opt =
//       registry.InstantiateAs<config::Partial>(cfg, "model.optimizer");
//   (*opt)->CallAs<torch::optim::Optimizer>(
//       {{"params", config::Value::Of(module->parameters())}});
//
// A Registry is filled once, then read from any thread; Partials and Objects
// are values that do not refer to the registry.
#ifndef TRIALSHIM_CONFIG_INSTANTIATE_H_
#define TRIALSHIM_CONFIG_INSTANTIATE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"
#include "trialshim/config/schema.h"

namespace trialshim::config {

// The readable (demangled) name of a C++ type, for messages.
std::string TypeNameOf(const std::type_info& type);

// A type-erased object: a shared_ptr and the type it was made as.
class Object {
 public:
  Object() = default;  // empty
  template <typename T>
  static Object Make(std::shared_ptr<T> ptr, std::string target = "") {
    Object o;
    o.ptr_ = std::move(ptr);
    o.type_ = &typeid(T);
    o.target_ = std::move(target);
    return o;
  }
  bool empty() const { return ptr_ == nullptr; }
  template <typename T>
  bool Is() const {
    return type_ != nullptr && *type_ == typeid(T);
  }
  // Null when empty or made as another type.
  template <typename T>
  std::shared_ptr<T> As() const {
    return Is<T>() ? std::static_pointer_cast<T>(ptr_) : nullptr;
  }
  // The target that made it ("" for objects made in C++).
  const std::string& target() const { return target_; }
  std::string type_name() const;

 private:
  std::shared_ptr<void> ptr_;
  const std::type_info* type_ = nullptr;
  std::string target_;
};

// An argument: a config node (a plain value, or a whole subtree when not
// instantiated), an object, or a list or map holding objects somewhere.
class Value {
 public:
  enum class Kind { kNode, kObject, kList, kMap };
  using List = std::vector<Value>;
  using Map = std::vector<std::pair<std::string, Value>>;

  Value() = default;                            // a null node
  Value(Node node) : node_(std::move(node)) {}  // NOLINT: implicit
  Value(Object object)                          // NOLINT: implicit
      : kind_(Kind::kObject), object_(std::move(object)) {}
  template <typename T>
  Value(std::shared_ptr<T> ptr)  // NOLINT: implicit
      : Value(Object::Make(std::move(ptr))) {}
  // A copy of `v` as an object ("params", Value::Of(module->parameters())).
  template <typename T>
  static Value Of(T v) {
    return Value(std::make_shared<T>(std::move(v)));
  }
  static Value MakeList(List items);
  static Value MakeMap(Map entries);

  Kind kind() const { return kind_; }
  const Node& node() const { return node_; }
  const Object& object() const { return object_; }
  const List& list() const { return list_; }
  const Map& map() const { return map_; }
  // "a config float", "an object torch::optim::Optimizer", "a list".
  std::string Describe() const;

 private:
  Kind kind_ = Kind::kNode;
  Node node_;
  Object object_;
  List list_;
  Map map_;
};

using Kwargs = std::vector<std::pair<std::string, Value>>;

// What a factory receives: positional and keyword arguments (keywords in
// the node's order, call-time ones after), and where they came from.
struct Arguments {
  std::string target;  // as written in the config
  std::string key;     // full key of the node ("model.optimizer"); may be ""
  Mark mark;           // of the `_target_` value
  std::vector<Value> args;  // left only when the target lists no keywords
  Kwargs kwargs;

  // The keyword argument `name`, or null.
  const Value* Find(std::string_view name) const;
  // "model.optimizer.lr", or "lr" without a key.
  std::string KeyOf(std::string_view name) const;

  // Typed reads of plain keyword values: absent or null leaves *out as is.
  // InvalidArgument "file:line:col: model.lr: expected a float, got str
  // 'x'" for a wrong type (ints are accepted as floats).
  Status Double(std::string_view name, double* out) const;
  Status Int(std::string_view name, int64_t* out) const;
  Status Bool(std::string_view name, bool* out) const;
  Status String(std::string_view name, std::string* out) const;
  // The keyword `name` as an object of type T. InvalidArgument when it is
  // absent ("missing required argument 'params'") or another type.
  template <typename T>
  StatusOr<std::shared_ptr<T>> Get(std::string_view name) const {
    const Value* v = Find(name);
    if (v != nullptr && v->kind() == Value::Kind::kObject) {
      if (auto p = v->object().As<T>()) return p;
    }
    return WrongObject(name, typeid(T));
  }
  // The plain keyword values (nodes) as one map, those in `skip` left out.
  // InvalidArgument if another one holds an object.
  StatusOr<Node> NodeMap(const std::vector<std::string>& skip = {}) const;

 private:
  Status WrongObject(std::string_view name, const std::type_info& type) const;
};

using Factory = std::function<StatusOr<Object>(const Arguments&)>;
namespace internal {
struct TargetEntry;  // a registered factory and its info
}  // namespace internal

// How a target is documented and checked.
struct TargetInfo {
  // One line for listings.
  std::string doc;
  // The keyword arguments the factory accepts, in positional order. Empty:
  // any keyword is passed through and positional arguments stay in
  // Arguments::args.
  std::vector<std::string> params;
  // Other names that resolve to this target ("torch.optim.Adam").
  std::vector<std::string> aliases;
};

// A target with some of its arguments bound (`_partial_: true`). Calling it
// adds positional arguments after the bound ones and keyword arguments that
// override bound ones, as functools.partial does.
class Partial {
 public:
  StatusOr<Object> Call(const Kwargs& kwargs = {},
                        const std::vector<Value>& args = {}) const;
  template <typename T>
  StatusOr<std::shared_ptr<T>> CallAs(
      const Kwargs& kwargs = {}, const std::vector<Value>& args = {}) const;
  const std::string& target() const { return bound_.target; }
  // The bound arguments.
  const Arguments& bound() const { return bound_; }

 private:
  friend class Registry;
  std::shared_ptr<const internal::TargetEntry> entry_;
  Arguments bound_;
};

class Registry {
 public:
  // InvalidArgument if `target` or an alias is already taken.
  Status Register(std::string target, Factory factory, TargetInfo info = {});
  // A factory that makes a T; the object is made as T (see Object).
  template <typename T>
  Status Register(
      std::string target,
      std::function<StatusOr<std::shared_ptr<T>>(const Arguments&)> factory,
      TargetInfo info = {}) {
    return Register(std::move(target),
                    Factory([f = std::move(factory)](
                                const Arguments& a) -> StatusOr<Object> {
                      StatusOr<std::shared_ptr<T>> made = f(a);
                      if (!made.ok()) return made.status();
                      return Object::Make(std::move(made).value(), a.target);
                    }),
                    std::move(info));
  }

  // A factory whose keyword arguments are bound to an Args struct by its
  // Schema (schema.h): OmegaConf's conversions, defaults, ranges, choices,
  // and unknown keywords refused with did-you-mean. For targets whose
  // arguments are plain values (no nested objects).
  template <typename T, typename Args>
  Status Register(
      std::string target, const Schema<Args>& schema,
      std::function<StatusOr<std::shared_ptr<T>>(const Args&)> make,
      std::string doc = "", std::vector<std::string> aliases = {}) {
    std::function<StatusOr<std::shared_ptr<T>>(const Arguments&)> factory =
        [schema, make = std::move(make)](
            const Arguments& a) -> StatusOr<std::shared_ptr<T>> {
      StatusOr<Node> node = a.NodeMap();
      if (!node.ok()) return node.status();
      StatusOr<Args> args = schema.Bind(*node);
      if (!args.ok()) return args.status();
      return make(*args);
    };
    return Register<T>(std::move(target), std::move(factory),
                       {std::move(doc), schema.Keys(), std::move(aliases)});
  }

  // Instantiates the node at dotted `key` of `config` ("" is the config
  // itself): a map with `_target_` gives the target's object (or a Partial,
  // made as type Partial). `kwargs` and `args` are as Hydra's instantiate
  // takes them. NotFound if `key` does not exist; InvalidArgument if the
  // node is not a map with `_target_` (see InstantiateTree for those).
  // Interpolations in the node are resolved against `config` first.
  StatusOr<Object> Instantiate(const Node& config, std::string_view key = "",
                               const Kwargs& kwargs = {},
                               const std::vector<Value>& args = {}) const;
  // Instantiate, then the object as a T; InvalidArgument naming both types
  // when the target makes another one.
  template <typename T>
  StatusOr<std::shared_ptr<T>> InstantiateAs(
      const Node& config, std::string_view key = "", const Kwargs& kwargs = {},
      const std::vector<Value>& args = {}) const {
    StatusOr<Object> o = Instantiate(config, key, kwargs, args);
    if (!o.ok()) return o.status();
    if (auto p = o->As<T>()) return p;
    return WrongType(config, key, *o, typeid(T));
  }
  // Any node, as Hydra's instantiate takes it: a map without `_target_`
  // or a list gives a Value map or list with its targets instantiated; a
  // scalar gives itself.
  StatusOr<Value> InstantiateTree(const Node& config,
                                  std::string_view key = "") const;

  // Names a config may hold that this program can not make (Lightning's
  // WandbLogger): instantiating one is InvalidArgument with `reason`, never
  // "nothing is registered". They are not listed among the targets.
  // InvalidArgument if a name is already taken.
  Status Refuse(const std::vector<std::string>& names, std::string reason);

  // Registered names, sorted (aliases not included).
  std::vector<std::string> Targets() const;
  // The info of a target or alias, or null.
  const TargetInfo* Find(std::string_view target) const;

 private:
  friend class Partial;
  struct Context;
  StatusOr<Value> Build(const Node& node, const std::string& key,
                        Context ctx) const;
  StatusOr<Value> BuildTarget(const Node& node, const std::string& key,
                              Context ctx, const Kwargs& extra_kwargs,
                              const std::vector<Value>* extra_args) const;
  Status Collect(const Node& node, const Node* args, Context ctx, bool partial,
                 const Kwargs& extra_kwargs, Arguments* a) const;
  Status WrongType(const Node& config, std::string_view key, const Object& o,
                   const std::type_info& want) const;

  std::map<std::string, std::shared_ptr<const internal::TargetEntry>,
           std::less<>>
      by_name_;  // targets and aliases
  std::vector<std::string> targets_;
  std::map<std::string, std::string, std::less<>> refused_;  // name -> reason
};

template <typename T>
StatusOr<std::shared_ptr<T>> Partial::CallAs(
    const Kwargs& kwargs, const std::vector<Value>& args) const {
  StatusOr<Object> o = Call(kwargs, args);
  if (!o.ok()) return o.status();
  if (auto p = o->As<T>()) return p;
  return Status::InvalidArgument(
      "target '" + target() + "' makes a " + o->type_name() + ", not a " +
      TypeNameOf(typeid(T)) +
      (bound_.key.empty() ? "" : "\nfull_key: " + bound_.key));
}

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_INSTANTIATE_H_
