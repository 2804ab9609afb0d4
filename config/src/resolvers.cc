// Resolver calls, ${name:args}: the arguments evaluated (the grammar's
// elements, primitives typed as OmegaConf's _createPrimitive does), the
// resolver chosen by name, and the built-ins themselves: OmegaConf's oc.*
// (omegaconf/resolvers/oc/) and Hydra's hydra and now, with OmegaConf's
// argument checks and error wording. Keys and strings are resolved by
// interpolation.cc; resolver.h ties the two.
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interpolation_grammar.h"
#include "resolver.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/yaml_loader.h"
#include "yaml_scalar.h"

namespace trialshim::config::internal {

// ---- resolvers ---------------------------------------------------------

StatusOr<Node> Resolver::EvaluateElement(const Element& e, const Context& ctx) {
  switch (e.kind) {
    case Element::kQuoted: {
      if (e.pieces.empty()) return Node::String("");
      TRIALSHIM_ASSIGN_OR_RETURN(Node v, EvaluateText(e.pieces, ctx, true));
      return Node::String(PythonStr(v));
    }
    case Element::kList: {
      Node out = Node::MakeList();
      for (const Element& item : e.items) {
        TRIALSHIM_ASSIGN_OR_RETURN(Node v, EvaluateElement(item, ctx));
        out.MutableList().push_back(std::move(v));
      }
      return out;
    }
    case Element::kDict: {
      Node out = Node::MakeMap();
      for (const auto& [key_pieces, value] : e.entries) {
        TRIALSHIM_ASSIGN_OR_RETURN(Node k, Primitive(key_pieces, ctx));
        TRIALSHIM_ASSIGN_OR_RETURN(Node v, EvaluateElement(value, ctx));
        out.Set(k.is_string() ? k.AsString() : PythonStr(k), std::move(v));
      }
      return out;
    }
    case Element::kPrimitive:
      return Primitive(e.pieces, ctx);
  }
  return Node::Null();
}

// GrammarVisitor._createPrimitive: one token is typed (int(), float(),
// null, a bool by its lower case); several are their text, unescaped.
// Python's int has no bound; ours is int64_t (docs/hydra-differences.md).
StatusOr<Node> Resolver::Primitive(const std::vector<Piece>& pieces,
                                   const Context& ctx) {
  if (pieces.empty()) return Node::String("");  // an empty argument
  if (pieces.size() == 1) {
    const Piece& p = pieces[0];
    std::string err;
    switch (p.kind) {
      case Piece::kInterp:
        return EvaluateInterpolation(*p.interp, ctx);
      case Piece::kNull:
        return Node::Null();
      case Piece::kBool:
        return Node::Bool(p.text.size() == 4);
      case Piece::kInt: {
        std::string digits;
        for (char c : p.text) {
          if (c != '_') digits += c;
        }
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(digits.c_str(), &end, 10);
        if (errno == ERANGE) {
          return Error("integer " + p.text + " does not fit in 64 bits", ctx);
        }
        return Node::Int(v);
      }
      case Piece::kFloat: {
        double d = 0;
        if (!yaml_internal::ConstructYamlFloat(p.text, &d, &err)) {
          return Error(err, ctx);
        }
        return Node::Double(d);
      }
      default:
        break;
    }
  }
  return EvaluateText(pieces, ctx, false);
}

// The resolvers OmegaConf registers (omegaconf/resolvers/oc) and the two
// of Hydra's setup_globals (hydra/core/utils.py) a config uses: now and
// hydra. Hydra's third, python_version, is not among them.
StatusOr<Node> Resolver::CallResolver(const Interpolation& in,
                                      const Context& ctx) {
  std::string name;
  for (size_t i = 0; i < in.name.size(); ++i) {
    TRIALSHIM_ASSIGN_OR_RETURN(std::string part,
                               KeyText(in.name[i], ctx, "resolver name"));
    name += (i ? "." : "") + part;
  }
  std::vector<Node> args;
  for (const Element& e : in.args) {
    TRIALSHIM_ASSIGN_OR_RETURN(Node v, EvaluateElement(e, ctx));
    args.push_back(std::move(v));
  }
  if (name == "oc.env") return OcEnv(name, args, ctx);
  if (name == "oc.decode") return OcDecode(name, args, ctx);
  if (name == "oc.select") return OcSelect(name, args, ctx);
  if (name == "oc.create") return OcCreate(name, args, ctx);
  if (name == "oc.dict.keys" || name == "oc.dict.values") {
    return OcDictKeysOrValues(name, args, ctx);
  }
  if (name == "oc.deprecated") return OcDeprecated(name, args, ctx);
  if (name == "hydra") return HydraSelect(name, args, ctx);
  if (name == "now") return Now(name, args, ctx);
  return Error("Unsupported interpolation type " + name +
                   " (known resolvers: hydra, now, oc.create, oc.decode, "
                   "oc.deprecated, oc.dict.keys, oc.dict.values, oc.env, "
                   "oc.select)",
               ctx);
}

// OmegaConf's TypeError when a resolver gets too few or too many
// arguments.
Status Resolver::Arity(const std::string& name, const std::vector<Node>& args,
                       size_t min, size_t max, const char* usage,
                       const Context& ctx) {
  if (args.size() >= min && args.size() <= max) return Status::Ok();
  return Error("TypeError raised while resolving interpolation: " + name +
                   " takes " + usage + ", got " + std::to_string(args.size()) +
                   " argument(s)",
               ctx);
}

// The built-in resolvers, with OmegaConf's error wording
// (omegaconf/resolvers/oc/__init__.py, env).
StatusOr<Node> Resolver::OcEnv(const std::string& name,
                               const std::vector<Node>& args,
                               const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 2, "(key[, default])", ctx));
  std::string key =
      args[0].is_string() ? args[0].AsString() : PythonStr(args[0]);
  if (const char* v = std::getenv(key.c_str())) return Node::String(v);
  // A default other than null is its Python str(), a list's or a
  // dict's too (oc.env returns str(default)).
  if (args.size() == 2) {
    if (args[1].is_null()) return Node::Null();
    return Node::String(PythonStr(args[1]));
  }
  return Error(
      "KeyError raised while resolving interpolation: "
      "\"Environment variable '" +
          key + "' not found\"",
      ctx);
}

// resolvers/oc/__init__.py, decode: null stays null; a string is parsed
// with the grammar's singleElement rule and evaluated where the calling
// node is, so "${oc.decode:'[1, ${b}]'}" is a list holding b's value.
StatusOr<Node> Resolver::OcDecode(const std::string& name,
                                  const std::vector<Node>& args,
                                  const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 1, "(expr)", ctx));
  if (args[0].is_null()) return Node::Null();
  if (!args[0].is_string()) {
    return Error(
        "TypeError raised while resolving interpolation: "
        "`oc.decode` can only take strings or None as input, "
        "but `" +
            PythonStr(args[0]) + "` is of type " + args[0].type_name(),
        ctx);
  }
  Element e;
  interp::ParseError perr;
  if (!interp::ParseSingleElement(args[0].AsString(), &e, &perr)) {
    return GrammarError(args[0].AsString(), perr, ctx.origin,
                        "GrammarParseError raised while resolving "
                        "interpolation (oc.decode): ");
  }
  return EvaluateElement(e, ctx);
}

// resolvers/oc/__init__.py, select: _impl.select_value with absolute_key
// (a plain key from the root, ".c" from the caller's parent); an
// absent or '???' key is the default, null when none is given.
StatusOr<Node> Resolver::OcSelect(const std::string& name,
                                  const std::vector<Node>& args,
                                  const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 2, "(key[, default])", ctx));
  std::string key =
      args[0].is_string() ? args[0].AsString() : PythonStr(args[0]);
  Path path;
  const Node* target = nullptr;
  if (KeyToPath(key, ctx.parent, &path)) target = Lookup(root_, path);
  if (target == nullptr || target->IsMissing()) {
    return args.size() == 2 ? args[1] : Node::Null();
  }
  return ResolveAt(path);
}

// resolvers/oc/__init__.py, create: OmegaConf.create(obj, parent=...),
// which reads a string as YAML once more (a lone word is {word: null}).
StatusOr<Node> Resolver::OcCreate(const std::string& name,
                                  const std::vector<Node>& args,
                                  const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 1, "(obj)", ctx));
  Node obj = args[0];
  if (obj.is_string()) {
    auto loaded = LoadYamlString(obj.AsString(), "<oc.create>");
    if (!loaded.ok()) return Error(loaded.status().message(), ctx);
    obj = *loaded;
    // Strings in YAML text are not resolved yet: resolve them where the
    // calling node lives (absolute keys from the root).
    TRIALSHIM_ASSIGN_OR_RETURN(obj, ResolveDetached(obj, ctx));
  }
  if (!obj.is_map() && !obj.is_list()) {
    return Error(
        "ValidationError raised while resolving interpolation: "
        "oc.create needs a dict, a list or a YAML string of "
        "one, got " +
            std::string(obj.type_name()),
        ctx);
  }
  return obj;
}

// ${hydra:key}: Hydra's resolver, OmegaConf.select(HydraConfig.get(),
// key). HydraConfig keeps Hydra's node with the whole config as its
// parent, so what the value interpolates resolves there: the task's keys
// (hydra.job.override_dirname holding "b=${a}" from the override b=${a})
// and Hydra's node.
StatusOr<Node> Resolver::HydraSelect(const std::string& name,
                                     const std::vector<Node>& args,
                                     const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 1, "(path)", ctx));
  if (options_.hydra == nullptr) {
    return Error(
        "ValueError raised while resolving interpolation: HydraConfig was "
        "not set (${hydra:...} has a value only in a Hydra app's config)",
        ctx);
  }
  Resolver* in = this;
  if (!hydra_root_) {
    if (!hydra_resolver_) {
      hydra_config_ = root_.is_map() ? root_ : Node::MakeMap();
      hydra_config_.Set("hydra", *options_.hydra);
      hydra_resolver_ =
          std::make_unique<Resolver>(hydra_config_, options_, true);
    }
    in = hydra_resolver_.get();
  }
  std::string key =
      args[0].is_string() ? args[0].AsString() : PythonStr(args[0]);
  Path path = SplitPath("hydra." + key);
  const Node* target = Lookup(in->root_, path);
  if (target == nullptr || target->IsMissing()) return Node::Null();
  return in->ResolveAt(path);
}

// ${now:pattern}: Hydra's resolver, datetime.now().strftime(pattern),
// cached per pattern: setup_globals registers it with use_cache=True, and
// OmegaConf keeps that cache on the config, so every ${now:%H-%M-%S} of
// one config is the same time.
StatusOr<Node> Resolver::Now(const std::string& name,
                             const std::vector<Node>& args,
                             const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 1, "(pattern)", ctx));
  std::string pattern =
      args[0].is_string() ? args[0].AsString() : PythonStr(args[0]);
  std::map<std::string, Node>& now = *options_.now;
  auto cached = now.find(pattern);
  if (cached != now.end()) return cached->second;
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  std::string out(256 + pattern.size() * 8, '\0');
  size_t n = pattern.empty() ? 0
                             : std::strftime(out.data(), out.size(),
                                             pattern.c_str(), &local);
  out.resize(n);
  return now.emplace(pattern, Node::String(out)).first->second;
}

// ${oc.deprecated:new_key[,message]}: the value at new_key, found as
// resolvers/oc/__init__.py's deprecated finds it: select_node(_parent_,
// key, absolute_key=True), so "a.b" is read from the root and ".c" from
// the caller's parent, each further dot one parent up
// (_resolve_key_and_root: past the root is "Error resolving key"). A
// scalar on the way (ConfigTypeError, caught by select_node) or no such
// key is "Key not found". OmegaConf also warns (UserWarning) with the
// message; a library prints nothing, so the warning is not shown
// (docs/hydra-differences.md).
StatusOr<Node> Resolver::OcDeprecated(const std::string& name,
                                      const std::vector<Node>& args,
                                      const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 2, "(key, message)", ctx));
  const char* what[] = {"key", "message"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_string()) {
      return Error(
          "TypeError raised while resolving interpolation: "
          "oc.deprecated: interpolation " +
              std::string(what[i]) + " type is not a string (" +
              (args[i].is_null() ? "NoneType" : args[i].type_name()) + ")",
          ctx);
    }
  }
  const std::string& key = args[0].AsString();
  Path path;
  if (!KeyToPath(key, ctx.parent, &path)) {
    return Error(
        "ConfigKeyError raised while resolving interpolation: Error "
        "resolving key '" +
            key + "'",
        ctx);
  }
  if (Lookup(root_, path) == nullptr) {
    std::string at = stack_.empty() ? "" : FullKey(root_, stack_.back());
    return Error(
        "ConfigKeyError raised while resolving interpolation: In "
        "oc.deprecated resolver at '" +
            at + "': Key not found: '" + key + "'",
        ctx);
  }
  return ResolveAt(path);
}

// resolvers/oc/dict.py, keys and values: the key as oc.select finds it,
// refused when absent or not a dict. values returns ${key.k} references,
// resolved when read; here the values are resolved at once.
StatusOr<Node> Resolver::OcDictKeysOrValues(const std::string& name,
                                            const std::vector<Node>& args,
                                            const Context& ctx) {
  TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 1, "(key)", ctx));
  if (!args[0].is_string()) {
    return Error("TypeError raised while resolving interpolation: `" + name +
                     "` requires a string as input, but obtained `" +
                     PythonStr(args[0]) + "` of type: " + args[0].type_name(),
                 ctx);
  }
  const std::string& key = args[0].AsString();
  Path path;
  const Node* target = nullptr;
  if (key == ".") {
    path = ctx.parent;
    target = Lookup(root_, path);
  } else if (KeyToPath(key, ctx.parent, &path)) {
    target = Lookup(root_, path);
  }
  // A key whose value is itself an interpolation (w: ${d}) is followed,
  // as OmegaConf's select does; its values are then resolved already.
  Node followed;
  const bool follow = target != nullptr && ContainsInterpolationSyntax(*target);
  if (follow) {
    TRIALSHIM_ASSIGN_OR_RETURN(followed, ResolveAt(path));
    target = &followed;
  }
  if (target == nullptr || target->is_null()) {
    return Error(
        "ConfigKeyError raised while resolving interpolation: "
        "Key not found: '" +
            key + "'",
        ctx);
  }
  if (!target->is_map()) {
    return Error("TypeError raised while resolving interpolation: `" + name +
                     "` cannot be applied to objects of type: " +
                     (target->is_list() ? "ListConfig" : target->type_name()),
                 ctx);
  }
  Node out = Node::MakeList();
  for (const auto& [k, v] : target->AsMap()) {
    if (name == "oc.dict.keys") {
      out.MutableList().push_back(Node::String(k));
      continue;
    }
    if (follow) {
      out.MutableList().push_back(v);
      continue;
    }
    Path child = path;
    child.push_back(k);
    TRIALSHIM_ASSIGN_OR_RETURN(Node value, ResolveAt(child));
    out.MutableList().push_back(std::move(value));
  }
  return out;
}

// Resolves the strings of a node that is not in the tree (oc.create's
// YAML), with ctx's position for relative keys.
StatusOr<Node> Resolver::ResolveDetached(const Node& n, const Context& ctx) {
  if (stack_.size() >= kMaxChain) {
    return Error(
        "interpolation nesting deeper than " + std::to_string(kMaxChain), ctx);
  }
  if (n.is_map() || n.is_list()) {
    Node out = n;
    if (out.is_map()) {
      for (auto& [k, v] : out.MutableMap()) {
        TRIALSHIM_ASSIGN_OR_RETURN(v, ResolveDetached(v, ctx));
      }
    } else {
      for (Node& v : out.MutableList()) {
        TRIALSHIM_ASSIGN_OR_RETURN(v, ResolveDetached(v, ctx));
      }
    }
    return out;
  }
  if (!ContainsInterpolationSyntax(n)) return n;
  return EvaluateString(n.AsString(), ctx.parent, ctx.origin);
}

}  // namespace trialshim::config::internal
