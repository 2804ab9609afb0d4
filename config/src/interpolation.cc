#include "trialshim/config/interpolation.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "interpolation_grammar.h"
#include "trialshim/base/number_format.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/yaml_loader.h"
#include "yaml_scalar.h"

namespace trialshim::config {
namespace {

using interp::Element;
using interp::Interpolation;
using interp::KeyPart;
using interp::Piece;

// Longest chain of interpolations followed before we call it pathological
// (each link costs a few stack frames; this stays far from any stack limit).
constexpr size_t kMaxChain = 256;

// Largest string an interpolation may build. Repeated references grow
// exponentially (`${a}${a}...` over a few keys reaches gigabytes from a 1 KB
// file), so the size is checked as the string is built, to fail fast.
constexpr size_t kMaxResolvedBytes = size_t{64} << 20;

// A position in the tree: map keys and list indices (as text).
using Path = std::vector<std::string>;

// OmegaConf's full_key spelling: "a.b", "l[1]", "a.l[0].c".
std::string FullKey(const Node& root, const Path& path) {
  std::string out;
  const Node* cur = &root;
  for (const std::string& part : path) {
    if (cur != nullptr && cur->is_list()) {
      out += "[" + part + "]";
    } else {
      if (!out.empty()) out += ".";
      out += part;
    }
    if (cur == nullptr) continue;
    if (cur->is_list()) {
      size_t i = std::strtoul(part.c_str(), nullptr, 10);
      cur = i < cur->size() ? &cur->AsList()[i] : nullptr;
    } else {
      cur = cur->Get(part);
    }
  }
  return out;
}

// A list index as OmegaConf reads one, with Python's int(): surrounding
// whitespace, a sign, and single underscores between digits ("1_0" is 10).
// Python's non-ASCII digits are not accepted here.
std::optional<long> PythonInt(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws), e = s.find_last_not_of(ws);
  if (b == std::string_view::npos) return std::nullopt;
  s = s.substr(b, e - b + 1);
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  long value = 0;
  bool digit_before = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && digit_before && i + 1 < s.size() &&
        std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      digit_before = false;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    if (value > (LONG_MAX - 9) / 10) return std::nullopt;  // no list is that long
    value = value * 10 + (s[i] - '0');
    digit_before = true;
  }
  if (!digit_before) return std::nullopt;
  return negative ? -value : value;
}

const Node* Lookup(const Node& root, const Path& path) {
  const Node* cur = &root;
  for (const std::string& part : path) {
    if (cur->is_map()) {
      cur = cur->Get(part);
    } else if (cur->is_list()) {
      std::optional<long> i = PythonInt(part);
      if (!i || *i < 0 || static_cast<size_t>(*i) >= cur->size()) {
        return nullptr;
      }
      cur = &cur->AsList()[*i];
    } else {
      return nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

bool ContainsInterpolationSyntax(const Node& n) {
  // OmegaConf parses any string holding "${" (escaped ones included, so
  // that "\${" gets unescaped).
  return n.is_string() && n.AsString().find("${") != std::string::npos;
}

// False, with the error, when `n` is a string OmegaConf would parse and
// refuse (GrammarParseError).
bool ValidSyntax(const Node& n, interp::ParseError* error) {
  std::vector<Piece> pieces;
  return !ContainsInterpolationSyntax(n) ||
         interp::ParseConfigValue(n.AsString(), &pieces, error);
}

// "<what> (column N)", then the text and a caret under the column.
std::string GrammarMessage(const std::string& text,
                           const interp::ParseError& e) {
  std::string caret(e.offset, ' ');
  for (size_t i = 0; i < e.offset && i < text.size(); ++i) {
    if (text[i] == '\t') caret[i] = '\t';
  }
  return e.message + " (column " + std::to_string(e.offset + 1) + ")\n    " +
         text + "\n    " + caret + "^";
}

Path SplitPath(std::string_view path);

class Resolver {
 public:
  // `hydra_root`: `root` holds *options.hydra at "hydra", where
  // ${hydra:...} resolves in place.
  Resolver(const Node& root, ResolveOptions options, bool hydra_root = false)
      : root_(root), options_(options), hydra_root_(hydra_root) {
    if (options_.now == nullptr) options_.now = &own_now_;
  }

  // The fully resolved value of the node at `path` (which exists).
  StatusOr<Node> ResolveAt(const Path& path) {
    if (stack_.empty()) top_ = path;
    std::string memo_key = JoinPath(path);
    auto memo = memo_.find(memo_key);
    if (memo != memo_.end()) return memo->second;
    if (in_progress_.count(memo_key)) return CycleError(path);
    if (stack_.size() >= kMaxChain) {
      return Error("interpolation chain longer than " +
                       std::to_string(kMaxChain) + " links",
                   path);
    }
    const Node* node = Lookup(root_, path);
    if (node == nullptr) {
      return Status::NotFound("Key '" + FullKey(root_, path) + "' not found");
    }
    in_progress_.insert(memo_key);
    stack_.push_back(path);
    StatusOr<Node> result = ResolveNode(*node, path);
    stack_.pop_back();
    in_progress_.erase(memo_key);
    if (result.ok()) memo_.emplace(memo_key, *result);
    return result;
  }

  // Which key to name in "full_key:" (the outermost one resolved).
  void set_top(const Path& path) { top_ = path; }

 private:
  static std::string JoinPath(const Path& p) {
    std::string out;
    for (const std::string& s : p) {
      out += s;
      out += '\x1f';
    }
    return out;
  }

  StatusOr<Node> ResolveNode(const Node& node, const Path& path) {
    if (node.is_map()) {
      Node out = Node::MakeMap();
      out.set_mark(node.mark());
      for (const auto& [k, v] : node.AsMap()) {
        Path child = path;
        child.push_back(k);
        TRIALSHIM_ASSIGN_OR_RETURN(Node value, ResolveAt(child));
        value.set_key_mark(v.key_mark());  // not the key it was resolved from
        out.MutableMap().emplace_back(k, std::move(value));
      }
      return out;
    }
    if (node.is_list()) {
      Node out = Node::MakeList();
      out.set_mark(node.mark());
      for (size_t i = 0; i < node.size(); ++i) {
        Path child = path;
        child.push_back(std::to_string(i));
        TRIALSHIM_ASSIGN_OR_RETURN(Node value, ResolveAt(child));
        out.MutableList().push_back(std::move(value));
      }
      return out;
    }
    if (node.IsMissing()) {
      if (options_.keep_missing) return node;
      return Error("Missing mandatory value: " + FullKey(root_, path), path,
                   &node);
    }
    if (!ContainsInterpolationSyntax(node)) return node;
    Path parent(path.begin(), path.end() - (path.empty() ? 0 : 1));
    StatusOr<Node> value = EvaluateString(node.AsString(), parent, &node);
    if (!value.ok() && options_.keep_missing && missing_seen_) {
      // OmegaConf.resolve: a value that needs a missing one becomes "???".
      missing_seen_ = false;
      Node missing = Node::String("???");
      missing.set_mark(node.mark());
      return missing;
    }
    if (!value.ok()) return value.status();
    interp::ParseError perr;
    if (options_.keep_missing && !ValidSyntax(*value, &perr)) {
      // OmegaConf.resolve stores the result back, parsed as any new value:
      // "\${x" gives "${x", which it then refuses.
      return GrammarError(value->AsString(), perr, &node);
    }
    value->set_mark(node.mark());
    return value;
  }

  // Evaluates a config string found under `parent` (for relative keys).
  StatusOr<Node> EvaluateString(const std::string& text, const Path& parent,
                                const Node* origin) {
    std::vector<Piece> pieces;
    interp::ParseError perr;
    if (!interp::ParseConfigValue(text, &pieces, &perr)) {
      return GrammarError(text, perr, origin);
    }
    Context ctx{parent, origin};
    return EvaluateText(pieces, ctx, /*quoted=*/false);
  }

  struct Context {
    Path parent;         // where relative keys start
    const Node* origin;  // the node whose text is evaluated (for its mark)
  };

  // `text`: a lone interpolation keeps its value; anything else is the
  // concatenation of str() of the parts, unescaped as OmegaConf does
  // (GrammarVisitor.visitText and _unescape, omegaconf/grammar_visitor.py):
  // ESC_INTER drops half its backslashes and the one escaping "${"; a
  // TOP_ESC is halved only before an interpolation, a QUOTED_ESC also at
  // the end of its quoted string. With b: B, '\\${b} \${b} a\\b' is
  // '\B ${b} a\\b'.
  StatusOr<Node> EvaluateText(const std::vector<Piece>& pieces,
                              const Context& ctx, bool quoted) {
    if (pieces.size() == 1 && pieces[0].kind == Piece::kInterp) {
      return EvaluateInterpolation(*pieces[0].interp, ctx);
    }
    std::string out;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      bool next_is_interp =
          i + 1 < pieces.size() && pieces[i + 1].kind == Piece::kInterp;
      switch (p.kind) {
        case Piece::kInterp: {
          TRIALSHIM_ASSIGN_OR_RETURN(Node v,
                                     EvaluateInterpolation(*p.interp, ctx));
          std::string text = PythonStr(v);
          if (out.size() + text.size() > kMaxResolvedBytes) {
            return TooLongError(out.size() + text.size(), ctx);
          }
          out += text;
          break;
        }
        case Piece::kEscInter:
          out += p.text.substr(p.text.size() - (p.text.size() / 2 + 1));
          break;
        case Piece::kEsc:
          for (size_t k = 1; k < p.text.size(); k += 2) out += p.text[k];
          break;
        case Piece::kTopEsc:
        case Piece::kQuotedEsc: {
          bool unescape = next_is_interp || (p.kind == Piece::kQuotedEsc &&
                                             quoted && i + 1 == pieces.size());
          if (unescape) {
            out += std::string(p.text.size() / 2, '\\');
          } else {
            out += p.text;
          }
          break;
        }
        default:
          out += p.text;
      }
    }
    if (out.size() > kMaxResolvedBytes) return TooLongError(out.size(), ctx);
    return Node::String(std::move(out));
  }

  StatusOr<std::string> KeyText(const KeyPart& part, const Context& ctx,
                                const char* what) {
    if (!part.interp) return part.text;
    TRIALSHIM_ASSIGN_OR_RETURN(Node v,
                               EvaluateInterpolation(*part.interp, ctx));
    if (!v.is_string()) {
      return Error(std::string("The following interpolation is used to denote "
                               "a ") +
                       what +
                       " and thus should return a string, but instead "
                       "returned `" +
                       PythonStr(v) + "` of type `" + v.type_name() +
                       "`: " + part.interp->source,
                   ctx);
    }
    return v.AsString();
  }

  StatusOr<Node> EvaluateInterpolation(const Interpolation& in,
                                       const Context& ctx) {
    if (in.is_resolver) return CallResolver(in, ctx);
    std::string key;
    for (const auto& [punct, part] : in.key) {
      if (punct) {
        key += part.text;
        continue;
      }
      TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                                 KeyText(part, ctx, "config key"));
      key += text;
    }
    return SelectInterpolationKey(key, ctx);
  }

  // Splits "..a.b[0]" into the path it names, relative to ctx.parent when it
  // starts with a dot. Returns false when it climbs above the root.
  // Container._resolve_key_and_root (omegaconf/base.py): a key without a
  // leading dot starts at the root; ".c" is the caller's sibling and each
  // further dot climbs one parent; past the root it is ConfigKeyError
  // ("Error resolving key '...c'").
  bool KeyToPath(const std::string& key, const Path& parent, Path* out) {
    size_t i = 0;
    Path path;
    if (!key.empty() && key[0] == '.') {
      size_t dots = 0;
      while (dots < key.size() && key[dots] == '.') ++dots;
      if (dots - 1 > parent.size()) return false;
      path.assign(parent.begin(), parent.end() - (dots - 1));
      i = dots;
    }
    std::string cur;
    bool have = false;
    while (i < key.size()) {
      char c = key[i];
      if (c == '.') {
        if (have) path.push_back(cur);
        cur.clear();
        have = true;  // "a..b" names an empty key, as OmegaConf splits it
        ++i;
      } else if (c == '[') {
        if (have || !cur.empty()) path.push_back(cur);
        size_t close = key.find(']', i);
        if (close == std::string::npos) close = key.size();
        path.push_back(key.substr(i + 1, close - i - 1));
        cur.clear();
        have = false;
        i = close + 1;
      } else {
        cur += c;
        have = true;
        ++i;
      }
    }
    if (have) path.push_back(cur);
    *out = std::move(path);
    return true;
  }

  // A node interpolation: the target, resolved. _resolve_node_interpolation
  // and _select_impl (omegaconf/base.py): a node on the way that is itself
  // an interpolation is dereferenced first (so ${a.b} walks into what
  // a: ${oc.create:...} makes), a scalar on the way is a ConfigTypeError,
  // and a '???' target is MissingMandatoryValue, which OmegaConf.resolve
  // turns into '???' (missing_seen_).
  StatusOr<Node> SelectInterpolationKey(const std::string& key,
                                        const Context& ctx) {
    Path path;
    if (!KeyToPath(key, ctx.parent, &path)) {
      return Error(
          "ConfigKeyError while resolving interpolation: Error "
          "resolving key '" +
              key + "'",
          ctx);
    }
    const Node* cur = &root_;
    Node detached;  // a resolved interpolation we walk into (oc.create)
    bool in_detached = false;
    for (size_t i = 0; i < path.size(); ++i) {
      if (ContainsInterpolationSyntax(*cur)) {
        Path prefix(path.begin(), path.begin() + i);
        TRIALSHIM_ASSIGN_OR_RETURN(detached, ResolveAt(prefix));
        cur = &detached;
        in_detached = true;
      }
      const Node* next = nullptr;
      if (cur->is_map()) {
        next = cur->Get(path[i]);
      } else if (cur->is_list()) {
        std::optional<long> idx = PythonInt(path[i]);
        if (!idx) {
          return Error(
              "TypeError raised while resolving interpolation: "
              "Index '" +
                  path[i] + "' (str) is not an int",
              ctx);
        }
        if (*idx >= 0 && static_cast<size_t>(*idx) < cur->size()) {
          next = &cur->AsList()[*idx];
        }
      } else {
        Path prefix(path.begin(), path.begin() + i);
        return Error(
            "ConfigTypeError raised while resolving interpolation: "
            "Error trying to access " +
                key + ": node `" + FullKey(root_, prefix) +
                "` is not a container and thus cannot contain `" + path[i] +
                "`",
            ctx);
      }
      if (next == nullptr) {
        return Error("Interpolation key '" + key + "' not found", ctx);
      }
      cur = next;
    }
    if (in_detached) return Node(*cur);
    if (cur->IsMissing()) {
      missing_seen_ = true;
      return Error(
          "MissingMandatoryValue while resolving interpolation: "
          "Missing mandatory value: " +
              FullKey(root_, path),
          ctx);
    }
    return ResolveAt(path);
  }

  // ---- resolvers ---------------------------------------------------------

  StatusOr<Node> EvaluateElement(const Element& e, const Context& ctx) {
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
  StatusOr<Node> Primitive(const std::vector<Piece>& pieces,
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
  StatusOr<Node> CallResolver(const Interpolation& in, const Context& ctx) {
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
  Status Arity(const std::string& name, const std::vector<Node>& args,
               size_t min, size_t max, const char* usage, const Context& ctx) {
    if (args.size() >= min && args.size() <= max) return Status::Ok();
    return Error("TypeError raised while resolving interpolation: " + name +
                     " takes " + usage + ", got " +
                     std::to_string(args.size()) + " argument(s)",
                 ctx);
  }

  // The built-in resolvers, with OmegaConf's error wording
  // (omegaconf/resolvers/oc/__init__.py, env).
  StatusOr<Node> OcEnv(const std::string& name, const std::vector<Node>& args,
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
  StatusOr<Node> OcDecode(const std::string& name,
                          const std::vector<Node>& args, const Context& ctx) {
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
  StatusOr<Node> OcSelect(const std::string& name,
                          const std::vector<Node>& args, const Context& ctx) {
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
  StatusOr<Node> OcCreate(const std::string& name,
                          const std::vector<Node>& args, const Context& ctx) {
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
  StatusOr<Node> HydraSelect(const std::string& name,
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
  StatusOr<Node> Now(const std::string& name, const std::vector<Node>& args,
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
    size_t n = pattern.empty()
                   ? 0
                   : std::strftime(out.data(), out.size(), pattern.c_str(), &local);
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
  StatusOr<Node> OcDeprecated(const std::string& name,
                              const std::vector<Node>& args,
                              const Context& ctx) {
    TRIALSHIM_RETURN_IF_ERROR(Arity(name, args, 1, 2, "(key, message)", ctx));
    const char* what[] = {"key", "message"};
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].is_string()) {
        return Error("TypeError raised while resolving interpolation: "
                     "oc.deprecated: interpolation " +
                         std::string(what[i]) + " type is not a string (" +
                         (args[i].is_null() ? "NoneType"
                                            : args[i].type_name()) +
                         ")",
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
  StatusOr<Node> OcDictKeysOrValues(const std::string& name,
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
  StatusOr<Node> ResolveDetached(const Node& n, const Context& ctx) {
    if (stack_.size() >= kMaxChain) {
      return Error(
          "interpolation nesting deeper than " + std::to_string(kMaxChain),
          ctx);
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

  // ---- errors --------------------------------------------------------------

  std::string Where(const Node* origin) const {
    if (origin != nullptr && origin->mark().known()) {
      return origin->mark().ToString() + ": ";
    }
    return "";
  }

  // OmegaConf names the outermost value whose resolution failed: the first
  // scalar on our stack (containers above it are only being walked).
  std::string FailingKey() const {
    for (const Path& p : stack_) {
      const Node* n = Lookup(root_, p);
      if (n != nullptr && n->is_scalar()) return FullKey(root_, p);
    }
    return FullKey(root_, stack_.empty() ? top_ : stack_.back());
  }

  std::string Trailer() const {
    std::string out =
        "\n    full_key: " + FailingKey() + "\n    object_type=dict";
    std::vector<std::string> chain;
    for (const Path& p : stack_) {
      const Node* n = Lookup(root_, p);
      if (n != nullptr && n->is_scalar()) chain.push_back(FullKey(root_, p));
    }
    if (chain.size() > 1) {
      out += "\n    while resolving: ";
      for (size_t i = 0; i < chain.size(); ++i) {
        out += (i ? " -> " : "") + chain[i];
      }
    }
    return out;
  }

  Status Error(const std::string& what, const Context& ctx) {
    return Status::InvalidArgument(Where(ctx.origin) + what + Trailer());
  }
  Status Error(const std::string& what, const Path& path,
               const Node* origin = nullptr) {
    (void)path;
    return Status::InvalidArgument(Where(origin) + what + Trailer());
  }

  Status TooLongError(size_t size, const Context& ctx) {
    std::string key = FullKey(root_, stack_.empty() ? top_ : stack_.back());
    return Error("the value of '" + key +
                     "' resolves to a string of at least " +
                     std::to_string(size) + " bytes, more than the " +
                     std::to_string(kMaxResolvedBytes) +
                     " (64 MiB) allowed: its interpolations repeat too much",
                 ctx);
  }

  Status CycleError(const Path& path) {
    std::string chain;
    size_t first = 0;
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] == path) {
        first = i;
        break;
      }
    }
    for (size_t i = first; i < stack_.size(); ++i) {
      chain += FullKey(root_, stack_[i]) + " -> ";
    }
    chain += FullKey(root_, path);
    const Node* origin = Lookup(root_, stack_.back());
    return Status::InvalidArgument(
        Where(origin) + "Recursive interpolation detected: " + chain +
        "\n    full_key: " + FailingKey() + "\n    object_type=dict");
  }

  Status GrammarError(const std::string& text, const interp::ParseError& e,
                      const Node* origin,
                      const std::string& prefix = "GrammarParseError: ") {
    return Status::InvalidArgument(Where(origin) + prefix +
                                   GrammarMessage(text, e) + Trailer());
  }

  const Node& root_;
  std::map<std::string, Node> own_now_;  // options_.now unless one is given
  ResolveOptions options_;
  const bool hydra_root_;
  Node hydra_config_;  // root_ with *options_.hydra, made on first use
  std::unique_ptr<Resolver> hydra_resolver_;
  bool missing_seen_ = false;  // the error on its way up is a missing value
  std::map<std::string, Node> memo_;
  std::set<std::string> in_progress_;
  std::vector<Path> stack_;
  Path top_;
};

// "a.b[0].c" -> {"a", "b", "0", "c"}.
Path SplitPath(std::string_view path) {
  Path parts;
  std::string cur;
  for (char c : path) {
    if (c == '.' || c == '[' || c == ']') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

}  // namespace

StatusOr<Node> ResolveAll(const Node& root, ResolveOptions options) {
  Resolver resolver(root, options);
  if (!root.is_map() && !root.is_list()) return resolver.ResolveAt({});
  // Resolve child by child so that "full_key" names the key being resolved,
  // as OmegaConf.to_container does.
  Node out = root.is_map() ? Node::MakeMap() : Node::MakeList();
  out.set_mark(root.mark());
  for (size_t i = 0; i < root.size(); ++i) {
    std::string key = root.is_map() ? root.AsMap()[i].first : std::to_string(i);
    resolver.set_top({key});
    TRIALSHIM_ASSIGN_OR_RETURN(Node v, resolver.ResolveAt({key}));
    if (root.is_map()) {
      out.MutableMap().emplace_back(key, std::move(v));
    } else {
      out.MutableList().push_back(std::move(v));
    }
  }
  return out;
}

Status CheckInterpolationSyntax(const Node& root, const std::string& key) {
  if (root.is_map() || root.is_list()) {
    for (size_t i = 0; i < root.size(); ++i) {
      std::string child = root.is_list() ? key + "[" + std::to_string(i) + "]"
                                         : (key.empty() ? "" : key + ".") +
                                               root.AsMap()[i].first;
      const Node& value =
          root.is_list() ? root.AsList()[i] : root.AsMap()[i].second;
      TRIALSHIM_RETURN_IF_ERROR(CheckInterpolationSyntax(value, child));
    }
    return Status::Ok();
  }
  interp::ParseError e;
  if (ValidSyntax(root, &e)) return Status::Ok();
  std::string where =
      root.mark().known() ? root.mark().ToString() + ": " : std::string();
  return Status::InvalidArgument(
      where + "GrammarParseError: " + GrammarMessage(root.AsString(), e) +
      (key.empty() ? "" : "\n    full_key: " + key));
}

StatusOr<Node> ResolvePath(const Node& root, std::string_view path,
                           ResolveOptions options) {
  Path p = SplitPath(path);
  if (Lookup(root, p) == nullptr) {
    return Status::NotFound("Key '" + std::string(path) + "' not found");
  }
  Resolver resolver(root, options);
  resolver.set_top(p);
  return resolver.ResolveAt(p);
}

}  // namespace trialshim::config
