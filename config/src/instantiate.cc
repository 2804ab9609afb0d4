#include "trialshim/config/instantiate.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "trialshim/base/spell.h"
#include "trialshim/config/interpolation.h"

namespace trialshim::config {

namespace internal {
struct TargetEntry {
  Factory factory;
  TargetInfo info;
};
}  // namespace internal

struct Registry::Context {
  bool recursive = true;
};

namespace {

// Hydra's `_Keys` (hydra/_internal/instantiate/_instantiate2.py). None of
// them reaches the factory as a keyword: instantiate_node leaves out the
// first four, and `_args_`, which it does pass on, is popped again by
// `_extract_pos_args` before the call.
const char* const kSpecialKeys[] = {"_target_", "_convert_", "_recursive_",
                                    "_partial_", "_args_"};

bool IsSpecial(std::string_view key) {
  return std::find(std::begin(kSpecialKeys), std::end(kSpecialKeys), key) !=
         std::end(kSpecialKeys);
}

std::string Child(const std::string& key, std::string_view name) {
  return key.empty() ? std::string(name) : key + "." + std::string(name);
}

std::string Where(const Mark& mark) {
  return mark.known() ? mark.ToString() + ": " : "";
}

std::string FullKey(const std::string& key) {
  return key.empty() ? "" : "\nfull_key: " + key;
}

// True if `pred` holds for `node` or a node below it.
template <typename Pred>
bool Any(const Node& node, Pred pred) {
  if (pred(node)) return true;
  if (node.is_map()) {
    for (const auto& [k, v] : node.AsMap()) {
      if (Any(v, pred)) return true;
    }
  } else if (node.is_list()) {
    for (const Node& v : node.AsList()) {
      if (Any(v, pred)) return true;
    }
  }
  return false;
}

// Hydra's `_is_target`: a map holding the key `_target_`, whatever its value.
bool ContainsTarget(const Node& node) {
  return Any(node, [](const Node& n) {
    return n.is_map() && n.Get("_target_") != nullptr;
  });
}

bool ContainsInterpolation(const Node& node) {
  return Any(node, [](const Node& n) { return n.IsInterpolation(); });
}

// Hydra's "Error in call to target 'x':\n<what>\nfull_key: k" (`_call_target`
// in _instantiate2.py): what the target raised, wrapped; no full_key line for
// the config's root, whose key is empty.
Status CallError(const Arguments& a, const Mark& where, const Status& what) {
  return Status(what.code(), Where(where.known() ? where : a.mark) +
                                 "Error in call to target '" + a.target +
                                 "':\n" + what.message() + FullKey(a.key));
}

void SetKwarg(Kwargs* kwargs, const std::string& name, Value v) {
  for (auto& [k, old] : *kwargs) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  kwargs->emplace_back(name, std::move(v));
}

// Python's text of a scalar, for messages ("5", "x", "True").
std::string ScalarText(const Node& n) {
  if (n.is_string()) return n.AsString();
  if (n.is_bool()) return n.AsBool() ? "True" : "False";
  if (n.is_int()) return std::to_string(n.AsInt());
  if (n.is_double()) return std::to_string(n.AsDouble());
  return n.type_name();
}

// InvalidArgument for a keyword the target does not list (none when it
// lists none: like a Python callable taking **kwargs). The words are
// CPython's TypeError ("got an unexpected keyword argument 'c'"), which
// Hydra shows inside its call error.
Status CheckNames(const internal::TargetEntry& entry, const Arguments& a) {
  const std::vector<std::string>& params = entry.info.params;
  if (params.empty()) return Status::Ok();
  for (const auto& [name, v] : a.kwargs) {
    if (std::find(params.begin(), params.end(), name) != params.end()) {
      continue;
    }
    std::string accepted;
    for (const std::string& p : params) {
      accepted += (accepted.empty() ? "" : ", ") + p;
    }
    return CallError(
        a, v.kind() == Value::Kind::kNode ? v.node().KeyOrValueMark() : a.mark,
        Status::InvalidArgument("got an unexpected keyword argument '" + name +
                                "'" + DidYouMean(name, params) + "; " +
                                a.target + " accepts: " + accepted));
  }
  return Status::Ok();
}

// Binds positional arguments to the target's keyword names (as Python
// binds them), checks the names and calls the factory. The messages are
// CPython's for f(1, 2, 3) and f(1, a=2) on `def f(a, b)`; Hydra passes
// them on unchanged, so the checks happen here, before the factory runs.
StatusOr<Object> Invoke(const internal::TargetEntry& entry, Arguments a) {
  const std::vector<std::string>& params = entry.info.params;
  auto bad = [&a](const std::string& what) {
    return CallError(a, a.mark, Status::InvalidArgument(what));
  };
  if (!params.empty()) {
    if (a.args.size() > params.size()) {
      return bad("takes " + std::to_string(params.size()) +
                 " positional arguments but " + std::to_string(a.args.size()) +
                 " were given");
    }
    Kwargs bound;
    for (size_t i = 0; i < a.args.size(); ++i) {
      if (a.Find(params[i]) != nullptr) {
        return bad("got multiple values for argument '" + params[i] + "'");
      }
      bound.emplace_back(params[i], std::move(a.args[i]));
    }
    a.args.clear();
    for (auto& kv : a.kwargs) bound.push_back(std::move(kv));
    a.kwargs = std::move(bound);
  }
  TRIALSHIM_RETURN_IF_ERROR(CheckNames(entry, a));
  StatusOr<Object> made = entry.factory(a);
  if (!made.ok()) return CallError(a, a.mark, made.status());
  return made;
}

Status UnknownTarget(const std::string& target, const Node& where,
                     const std::string& key,
                     const std::vector<std::string>& all_names,
                     const std::vector<std::string>& targets) {
  std::string listed;
  for (const std::string& t : targets) {
    listed += (listed.empty() ? "" : ", ") + t;
  }
  return Status::NotFound(Where(where.mark()) + "Error locating target '" +
                          target + "': nothing is registered under that name" +
                          DidYouMean(target, all_names) +
                          "; registered targets: " +
                          (listed.empty() ? "(none)" : listed) + FullKey(key));
}

}  // namespace

std::string TypeNameOf(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name != nullptr ? name : type.name();
  std::free(name);
  return out;
}

std::string Object::type_name() const {
  return type_ == nullptr ? "empty object" : TypeNameOf(*type_);
}

Value Value::MakeList(List items) {
  Value v;
  v.kind_ = Kind::kList;
  v.list_ = std::move(items);
  return v;
}

Value Value::MakeMap(Map entries) {
  Value v;
  v.kind_ = Kind::kMap;
  v.map_ = std::move(entries);
  return v;
}

std::string Value::Describe() const {
  switch (kind_) {
    case Kind::kNode:
      return std::string("a config ") + node_.type_name();
    case Kind::kObject:
      return "an object " + object_.type_name();
    case Kind::kList:
      return "a list of objects";
    case Kind::kMap:
      return "a map of objects";
  }
  return "";
}

const Value* Arguments::Find(std::string_view name) const {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string Arguments::KeyOf(std::string_view name) const {
  return Child(key, name);
}

namespace {

// The plain node of keyword `name` if it is present and not null; an
// error if it is not a node of a type `ok` accepts. Null reads as absent:
// C++ has no None to pass, so the factory's own default stands in for it.
template <typename Pred>
StatusOr<const Node*> Plain(const Arguments& a, std::string_view name,
                            const char* expected, Pred ok) {
  const Value* v = a.Find(name);
  if (v == nullptr) return static_cast<const Node*>(nullptr);
  if (v->kind() == Value::Kind::kNode) {
    const Node& n = v->node();
    if (n.is_null()) return static_cast<const Node*>(nullptr);
    if (ok(n)) return &n;
    std::string got = n.type_name();
    if (n.is_scalar()) got += " '" + ScalarText(n) + "'";
    return Status::InvalidArgument(Where(n.mark()) + a.KeyOf(name) +
                                   ": expected " + expected + ", got " + got);
  }
  return Status::InvalidArgument(Where(a.mark) + a.KeyOf(name) + ": expected " +
                                 expected + ", got " + v->Describe());
}

}  // namespace

Status Arguments::Double(std::string_view name, double* out) const {
  TRIALSHIM_ASSIGN_OR_RETURN(
      const Node* n, Plain(*this, name, "a float",
                           [](const Node& x) { return x.is_number(); }));
  if (n != nullptr) *out = n->AsDouble();
  return Status::Ok();
}

Status Arguments::Int(std::string_view name, int64_t* out) const {
  TRIALSHIM_ASSIGN_OR_RETURN(
      const Node* n,
      Plain(*this, name, "an int", [](const Node& x) { return x.is_int(); }));
  if (n != nullptr) *out = n->AsInt();
  return Status::Ok();
}

Status Arguments::Bool(std::string_view name, bool* out) const {
  TRIALSHIM_ASSIGN_OR_RETURN(
      const Node* n,
      Plain(*this, name, "a bool", [](const Node& x) { return x.is_bool(); }));
  if (n != nullptr) *out = n->AsBool();
  return Status::Ok();
}

Status Arguments::String(std::string_view name, std::string* out) const {
  TRIALSHIM_ASSIGN_OR_RETURN(
      const Node* n,
      Plain(*this, name, "a str", [](const Node& x) { return x.is_string(); }));
  if (n != nullptr) *out = n->AsString();
  return Status::Ok();
}

Status Arguments::WrongObject(std::string_view name,
                              const std::type_info& type) const {
  const Value* v = Find(name);
  const std::string want = TypeNameOf(type);
  if (v == nullptr) {
    return Status::InvalidArgument("missing required argument '" +
                                   std::string(name) + "' (a " + want + ")");
  }
  return Status::InvalidArgument(KeyOf(name) + ": expected an object " + want +
                                 ", got " + v->Describe());
}

StatusOr<Node> Arguments::NodeMap(const std::vector<std::string>& skip) const {
  Node out = Node::MakeMap();
  for (const auto& [k, v] : kwargs) {
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    if (v.kind() != Value::Kind::kNode) {
      return Status::InvalidArgument(
          KeyOf(k) + ": expected a config value, got " + v.Describe());
    }
    out.Set(k, v.node());
  }
  return out;
}

StatusOr<Object> Partial::Call(const Kwargs& kwargs,
                               const std::vector<Value>& args) const {
  Arguments a = bound_;
  a.args.insert(a.args.end(), args.begin(), args.end());
  for (const auto& [k, v] : kwargs) SetKwarg(&a.kwargs, k, v);
  return Invoke(*entry_, std::move(a));
}

// An alias is a second name for one entry (the Python class path a config
// writes, "torch.optim.Adam"); only the main name is listed in targets_.
Status Registry::Register(std::string target, Factory factory,
                          TargetInfo info) {
  std::vector<std::string> names = info.aliases;
  names.insert(names.begin(), target);
  for (const std::string& n : names) {
    if (by_name_.count(n) != 0) {
      return Status::InvalidArgument("instantiate: target '" + n +
                                     "' is already registered");
    }
  }
  auto entry = std::make_shared<const internal::TargetEntry>(
      internal::TargetEntry{std::move(factory), std::move(info)});
  for (const std::string& n : names) by_name_[n] = entry;
  targets_.insert(std::upper_bound(targets_.begin(), targets_.end(), target),
                  target);
  return Status::Ok();
}

Status Registry::Refuse(const std::vector<std::string>& names,
                        std::string reason) {
  for (const std::string& n : names) {
    if (by_name_.count(n) != 0 || refused_.count(n) != 0) {
      return Status::InvalidArgument("instantiate: target '" + n +
                                     "' is already registered");
    }
  }
  for (const std::string& n : names) refused_[n] = reason;
  return Status::Ok();
}

std::vector<std::string> Registry::Targets() const { return targets_; }

const TargetInfo* Registry::Find(std::string_view target) const {
  auto it = by_name_.find(target);
  return it == by_name_.end() ? nullptr : &it->second->info;
}

StatusOr<Value> Registry::Build(const Node& node, const std::string& key,
                                Context ctx) const {
  // A subtree without `_target_` comes back as it is: instantiate_node
  // rebuilds it as a new DictConfig/ListConfig of the same values, which
  // for a config::Node is the node itself.
  if (!ContainsTarget(node)) return Value(node);
  if (node.is_list()) {
    Value::List items;
    for (size_t i = 0; i < node.AsList().size(); ++i) {
      TRIALSHIM_ASSIGN_OR_RETURN(
          Value v,
          Build(node.AsList()[i], key + "[" + std::to_string(i) + "]", ctx));
      items.push_back(std::move(v));
    }
    return Value::MakeList(std::move(items));
  }
  if (node.Get("_target_") != nullptr) {
    return BuildTarget(node, key, ctx, {}, nullptr);
  }
  Value::Map entries;
  for (const auto& [k, v] : node.AsMap()) {
    TRIALSHIM_ASSIGN_OR_RETURN(Value built, Build(v, Child(key, k), ctx));
    entries.emplace_back(k, std::move(built));
  }
  return Value::MakeMap(std::move(entries));
}

namespace {

// A `_partial_`/`_recursive_` flag: the node's own, else `fallback`. In
// instantiate_node (_instantiate2.py) `_recursive_` is handed down to the
// children and so holds for the subtree; `_partial_` is not (a nested
// target is built whole), hence the callers' fallbacks. A non-bool is
// Hydra's TypeError "Instantiation: _recursive_ flag must be a bool".
StatusOr<bool> Flag(const Node& node, const char* name, bool fallback,
                    const std::string& key) {
  const Node* f = node.Get(name);
  if (f == nullptr) return fallback;
  if (!f->is_bool()) {
    return Status::InvalidArgument(Where(f->mark()) + "Instantiation: " + name +
                                   " flag must be a bool, got " +
                                   f->type_name() + FullKey(key));
  }
  return f->AsBool();
}

// Hydra's ConvertMode (hydra/types.py) values. Hydra compares `_convert_`
// with them and takes any other value as "none"; we refuse it on purpose
// (a typo would silently change nothing), see docs/hydra-differences.md.
Status CheckConvert(const Node& node, const std::string& key) {
  const Node* c = node.Get("_convert_");
  if (c == nullptr) return Status::Ok();
  static const std::vector<std::string> kModes = {"none", "partial", "object",
                                                  "all"};
  if (c->is_string() &&
      std::find(kModes.begin(), kModes.end(), c->AsString()) != kModes.end()) {
    return Status::Ok();
  }
  const std::string got = c->is_string() ? c->AsString() : c->type_name();
  return Status::InvalidArgument(
      Where(c->mark()) +
      "Instantiation: _convert_ must be none, partial, "
      "object or all, got '" +
      got + "'" + DidYouMean(got, kModes) + FullKey(key));
}

}  // namespace

// The keyword arguments (the node's, then the call's) and `_args_`, built
// depth first unless ctx says otherwise.
Status Registry::Collect(const Node& node, const Node* args, Context ctx,
                         bool partial, const Kwargs& extra_kwargs,
                         Arguments* a) const {
  auto build = [&](const Node& v, const std::string& k) -> StatusOr<Value> {
    return ctx.recursive ? Build(v, k, ctx) : StatusOr<Value>(Value(v));
  };
  for (const auto& [k, v] : node.AsMap()) {
    if (IsSpecial(k)) continue;
    // instantiate_node skips a "???" keyword of a partial (the call may
    // supply it); otherwise reading it raises MissingMandatoryValue.
    if (v.IsMissing()) {
      if (partial) continue;
      return Status::InvalidArgument(
          Where(v.mark()) + "Missing mandatory value: " + Child(a->key, k) +
          FullKey(Child(a->key, k)));
    }
    TRIALSHIM_ASSIGN_OR_RETURN(Value built, build(v, Child(a->key, k)));
    a->kwargs.emplace_back(k, std::move(built));
  }
  // The call's keywords, as OmegaConf.merge(config, kwargs) in Hydra's
  // instantiate: one the node has is replaced in its place, a new one goes
  // last. Flags among them were read by BuildTarget already.
  for (const auto& [k, v] : extra_kwargs) {
    if (v.kind() != Value::Kind::kNode) {
      SetKwarg(&a->kwargs, k, v);
    } else if (!IsSpecial(k)) {
      TRIALSHIM_ASSIGN_OR_RETURN(Value built,
                                 build(v.node(), Child(a->key, k)));
      SetKwarg(&a->kwargs, k, std::move(built));
    }
  }
  // `_extract_pos_args` in _instantiate2.py takes any Python Sequence and
  // refuses the rest with these words. A string is a Sequence there (its
  // characters become the arguments); we refuse it as well, see
  // docs/hydra-differences.md.
  if (args != nullptr) {
    if (!args->is_list()) {
      return Status::InvalidArgument(
          Where(args->mark()) + "Error in collecting args and kwargs for '" +
          a->target + "':\nUnsupported _args_ type: '" + args->type_name() +
          "'. value: '" + ScalarText(*args) + "'" + FullKey(a->key));
    }
    TRIALSHIM_ASSIGN_OR_RETURN(Value built,
                               build(*args, Child(a->key, "_args_")));
    if (built.kind() == Value::Kind::kList) {
      a->args = built.list();
    } else {
      for (const Node& item : args->AsList()) a->args.emplace_back(item);
    }
  }
  return Status::Ok();
}

// The merged node-and-call arguments, built depth first, then the factory
// (or a Partial). Follows instantiate_node of Hydra 1.3.2's _instantiate2.py.
StatusOr<Value> Registry::BuildTarget(
    const Node& node, const std::string& key, Context ctx,
    const Kwargs& extra_kwargs, const std::vector<Value>* extra_args) const {
  const Node& target = *node.Get("_target_");
  if (!target.is_string()) {
    return Status::InvalidArgument(Where(target.mark()) +
                                   "Expected a callable target, got '" +
                                   ScalarText(target) + "' of type '" +
                                   target.type_name() + "'" + FullKey(key));
  }
  // A non-string `_target_` is `_resolve_target`'s "Expected a callable
  // target" (a string is located first, and that fails with "Error locating
  // target"; we add why and what is registered instead of an import error).
  auto it = by_name_.find(target.AsString());
  if (auto refused = refused_.find(target.AsString()); refused != refused_.end()) {
    return Status::InvalidArgument(Where(target.mark()) + "Error locating target '" +
                                   target.AsString() + "': " + refused->second +
                                   FullKey(key));
  }
  if (it == by_name_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, e] : by_name_) names.push_back(n);
    return UnknownTarget(target.AsString(), target, key, names, targets_);
  }
  // Hydra merges the call's keywords into the node first, flags included.
  Node flags = node;
  for (const auto& [k, v] : extra_kwargs) {
    if (IsSpecial(k) && v.kind() == Value::Kind::kNode) flags.Set(k, v.node());
  }
  TRIALSHIM_ASSIGN_OR_RETURN(ctx.recursive,
                             Flag(flags, "_recursive_", ctx.recursive, key));
  TRIALSHIM_ASSIGN_OR_RETURN(bool partial,
                             Flag(flags, "_partial_", false, key));
  TRIALSHIM_RETURN_IF_ERROR(CheckConvert(flags, key));
  Arguments a;
  a.target = target.AsString();
  a.key = key;
  a.mark = target.mark();
  TRIALSHIM_RETURN_IF_ERROR(
      Collect(node, flags.Get("_args_"), ctx, partial, extra_kwargs, &a));
  // `_extract_pos_args`: positional arguments of the call replace `_args_`
  // whole, and only when there are some.
  if (extra_args != nullptr && !extra_args->empty()) a.args = *extra_args;
  const internal::TargetEntry& entry = *it->second;
  if (!partial) {
    TRIALSHIM_ASSIGN_OR_RETURN(Object o, Invoke(entry, std::move(a)));
    return Value(std::move(o));
  }
  // Check the names now (Hydra waits for the call): the config's line is
  // known here, not where the partial is called.
  TRIALSHIM_RETURN_IF_ERROR(CheckNames(entry, a));
  auto p = std::make_shared<Partial>();
  p->entry_ = it->second;
  p->bound_ = std::move(a);
  return Value(Object::Make(std::move(p), target.AsString()));
}

namespace {

// The node at `key` with its interpolations resolved against the whole
// config, as Hydra's instantiate runs OmegaConf.resolve on the node (it
// keeps its parent) before building. `_resolve` in omegaconf/_impl.py
// leaves "???" in place, and turns a value interpolating one into "???":
// a partial may still leave it out.
StatusOr<Node> Located(const Node& config, std::string_view key) {
  const Node* node = key.empty() ? &config : config.Find(key);
  if (node == nullptr) {
    return Status::NotFound("instantiate: no key '" + std::string(key) +
                            "' in the config");
  }
  if (!ContainsInterpolation(*node)) return *node;
  ResolveOptions options;
  options.keep_missing = true;  // OmegaConf.resolve keeps "???"
  TRIALSHIM_ASSIGN_OR_RETURN(Node resolved, ResolveAll(config, options));
  return key.empty() ? resolved : *resolved.Find(key);
}

}  // namespace

// Hydra returns a map without `_target_` as a DictConfig; a caller asking
// for an object gets an error instead (InstantiateTree takes any node).
StatusOr<Object> Registry::Instantiate(const Node& config, std::string_view key,
                                       const Kwargs& kwargs,
                                       const std::vector<Value>& args) const {
  TRIALSHIM_ASSIGN_OR_RETURN(Node node, Located(config, key));
  if (!node.is_map() || node.Get("_target_") == nullptr) {
    return Status::InvalidArgument(
        Where(node.mark()) + "Cannot instantiate " +
        (key.empty() ? std::string("the config")
                     : "'" + std::string(key) + "'") +
        ": expected a map with '_target_', got " +
        (node.is_map() ? std::string("a map without it") : node.type_name()));
  }
  TRIALSHIM_ASSIGN_OR_RETURN(
      Value v, BuildTarget(node, std::string(key), Context(), kwargs, &args));
  return v.object();
}

StatusOr<Value> Registry::InstantiateTree(const Node& config,
                                          std::string_view key) const {
  TRIALSHIM_ASSIGN_OR_RETURN(Node node, Located(config, key));
  Context ctx;
  if (node.is_map()) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        ctx.recursive, Flag(node, "_recursive_", true, std::string(key)));
  }
  return Build(node, std::string(key), ctx);
}

Status Registry::WrongType(const Node& config, std::string_view key,
                           const Object& o, const std::type_info& want) const {
  const Node* node = key.empty() ? &config : config.Find(key);
  const Node* target = node != nullptr ? node->Get("_target_") : nullptr;
  std::string hint;
  if (o.Is<Partial>()) {
    hint =
        " (it has _partial_: true: call the Partial with the remaining "
        "arguments, or drop _partial_)";
  }
  return Status::InvalidArgument(
      Where(target != nullptr ? target->mark() : Mark()) + "target '" +
      o.target() + "' makes a " + o.type_name() + ", not a " +
      TypeNameOf(want) + hint + FullKey(std::string(key)));
}

}  // namespace trialshim::config
