// Resolution, OmegaConf's interpolation semantics: a value's text parsed
// by interpolation_grammar.h, its keys followed through the tree (relative,
// nested, dereferenced on the way), strings built and unescaped, cycles and
// runaway growth stopped, and errors worded as OmegaConf's. Resolver calls
// and the built-in resolvers are resolvers.cc's; resolver.h ties the two.
#include "trialshim/config/interpolation.h"

#include <cctype>
#include <climits>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interpolation_grammar.h"
#include "resolver.h"
#include "trialshim/base/number_format.h"
#include "trialshim/config/python_text.h"

namespace trialshim::config::internal {
namespace {

// Largest string an interpolation may build. Repeated references grow
// exponentially (`${a}${a}...` over a few keys reaches gigabytes from a 1 KB
// file), so the size is checked as the string is built, to fail fast.
constexpr size_t kMaxResolvedBytes = size_t{64} << 20;

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

}  // namespace

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

Resolver::Resolver(const Node& root, ResolveOptions options, bool hydra_root)
    : root_(root), options_(options), hydra_root_(hydra_root) {
  if (options_.now == nullptr) options_.now = &own_now_;
}

StatusOr<Node> Resolver::ResolveAt(const Path& path) {
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

std::string Resolver::JoinPath(const Path& p) {
  std::string out;
  for (const std::string& s : p) {
    out += s;
    out += '\x1f';
  }
  return out;
}

StatusOr<Node> Resolver::ResolveNode(const Node& node, const Path& path) {
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
StatusOr<Node> Resolver::EvaluateString(const std::string& text,
                                        const Path& parent,
                                        const Node* origin) {
  std::vector<Piece> pieces;
  interp::ParseError perr;
  if (!interp::ParseConfigValue(text, &pieces, &perr)) {
    return GrammarError(text, perr, origin);
  }
  Context ctx{parent, origin};
  return EvaluateText(pieces, ctx, /*quoted=*/false);
}

// `text`: a lone interpolation keeps its value; anything else is the
// concatenation of str() of the parts, unescaped as OmegaConf does
// (GrammarVisitor.visitText and _unescape, omegaconf/grammar_visitor.py):
// ESC_INTER drops half its backslashes and the one escaping "${"; a
// TOP_ESC is halved only before an interpolation, a QUOTED_ESC also at
// the end of its quoted string. With b: B, '\\${b} \${b} a\\b' is
// '\B ${b} a\\b'.
StatusOr<Node> Resolver::EvaluateText(const std::vector<Piece>& pieces,
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

StatusOr<std::string> Resolver::KeyText(const KeyPart& part, const Context& ctx,
                                        const char* what) {
  if (!part.interp) return part.text;
  TRIALSHIM_ASSIGN_OR_RETURN(Node v, EvaluateInterpolation(*part.interp, ctx));
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

StatusOr<Node> Resolver::EvaluateInterpolation(const Interpolation& in,
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
bool Resolver::KeyToPath(const std::string& key, const Path& parent,
                         Path* out) {
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
StatusOr<Node> Resolver::SelectInterpolationKey(const std::string& key,
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
              "` is not a container and thus cannot contain `" + path[i] + "`",
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

// ---- errors --------------------------------------------------------------

std::string Resolver::Where(const Node* origin) const {
  if (origin != nullptr && origin->mark().known()) {
    return origin->mark().ToString() + ": ";
  }
  return "";
}

// OmegaConf names the outermost value whose resolution failed: the first
// scalar on our stack (containers above it are only being walked).
std::string Resolver::FailingKey() const {
  for (const Path& p : stack_) {
    const Node* n = Lookup(root_, p);
    if (n != nullptr && n->is_scalar()) return FullKey(root_, p);
  }
  return FullKey(root_, stack_.empty() ? top_ : stack_.back());
}

std::string Resolver::Trailer() const {
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

Status Resolver::Error(const std::string& what, const Context& ctx) {
  return Status::InvalidArgument(Where(ctx.origin) + what + Trailer());
}
Status Resolver::Error(const std::string& what, const Path& path,
                       const Node* origin) {
  (void)path;
  return Status::InvalidArgument(Where(origin) + what + Trailer());
}

Status Resolver::TooLongError(size_t size, const Context& ctx) {
  std::string key = FullKey(root_, stack_.empty() ? top_ : stack_.back());
  return Error("the value of '" + key + "' resolves to a string of at least " +
                   std::to_string(size) + " bytes, more than the " +
                   std::to_string(kMaxResolvedBytes) +
                   " (64 MiB) allowed: its interpolations repeat too much",
               ctx);
}

Status Resolver::CycleError(const Path& path) {
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

Status Resolver::GrammarError(const std::string& text,
                              const interp::ParseError& e, const Node* origin,
                              const std::string& prefix) {
  return Status::InvalidArgument(Where(origin) + prefix +
                                 GrammarMessage(text, e) + Trailer());
}

}  // namespace trialshim::config::internal

namespace trialshim::config {

using internal::GrammarMessage;
using internal::Lookup;
using internal::Path;
using internal::Resolver;
using internal::SplitPath;
using internal::ValidSyntax;

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
