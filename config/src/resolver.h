// The Resolver, the class behind ResolveAll, ResolvePath (interpolation.h):
// it resolves a config's values as OmegaConf does, following each key once
// (memo_), refusing cycles (in_progress_) and naming the failing key and
// the chain that led to it (stack_). Private to trialshim_config: callers
// see only the free functions. Its member functions live in two files:
//   interpolation.cc  resolution: keys followed, strings built and
//                     unescaped, OmegaConf's errors; the public functions
//   resolvers.cc      resolver calls: arguments evaluated, the resolver
//                     named, and the built-ins (oc.*, hydra, now)
// The grammar that parses a value is interpolation_grammar.h's.
#ifndef TRIALSHIM_CONFIG_SRC_RESOLVER_H_
#define TRIALSHIM_CONFIG_SRC_RESOLVER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "interpolation_grammar.h"
#include "trialshim/base/status.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/node.h"

namespace trialshim::config::internal {

using interp::Element;
using interp::Interpolation;
using interp::KeyPart;
using interp::Piece;

// Longest chain of interpolations followed before we call it pathological
// (each link costs a few stack frames; this stays far from any stack limit).
constexpr size_t kMaxChain = 256;

// A position in the tree: map keys and list indices (as text).
using Path = std::vector<std::string>;

// OmegaConf's full_key spelling: "a.b", "l[1]", "a.l[0].c".
std::string FullKey(const Node& root, const Path& path);

// The node at `path` under `root`, or null when there is none (list
// indices read as Python's int() reads them).
const Node* Lookup(const Node& root, const Path& path);

// Whether `n` is a string OmegaConf parses as an interpolation.
bool ContainsInterpolationSyntax(const Node& n);

// "a.b[0].c" -> {"a", "b", "0", "c"}.
Path SplitPath(std::string_view path);

class Resolver {
 public:
  // `hydra_root`: `root` holds *options.hydra at "hydra", where
  // ${hydra:...} resolves in place.
  Resolver(const Node& root, ResolveOptions options, bool hydra_root = false);

  // The fully resolved value of the node at `path` (which exists).
  StatusOr<Node> ResolveAt(const Path& path);

  // Which key to name in "full_key:" (the outermost one resolved).
  void set_top(const Path& path) { top_ = path; }

 private:
  struct Context {
    Path parent;         // where relative keys start
    const Node* origin;  // the node whose text is evaluated (for its mark)
  };

  // Resolution (interpolation.cc).
  static std::string JoinPath(const Path& p);
  StatusOr<Node> ResolveNode(const Node& node, const Path& path);
  StatusOr<Node> EvaluateString(const std::string& text, const Path& parent,
                                const Node* origin);
  StatusOr<Node> EvaluateText(const std::vector<Piece>& pieces,
                              const Context& ctx, bool quoted);
  StatusOr<std::string> KeyText(const KeyPart& part, const Context& ctx,
                                const char* what);
  StatusOr<Node> EvaluateInterpolation(const Interpolation& in,
                                       const Context& ctx);
  bool KeyToPath(const std::string& key, const Path& parent, Path* out);
  StatusOr<Node> SelectInterpolationKey(const std::string& key,
                                        const Context& ctx);

  // Resolver calls and the built-in resolvers (resolvers.cc).
  StatusOr<Node> EvaluateElement(const Element& e, const Context& ctx);
  StatusOr<Node> Primitive(const std::vector<Piece>& pieces,
                           const Context& ctx);
  StatusOr<Node> CallResolver(const Interpolation& in, const Context& ctx);
  Status Arity(const std::string& name, const std::vector<Node>& args,
               size_t min, size_t max, const char* usage, const Context& ctx);
  StatusOr<Node> OcEnv(const std::string& name, const std::vector<Node>& args,
                       const Context& ctx);
  StatusOr<Node> OcDecode(const std::string& name,
                          const std::vector<Node>& args, const Context& ctx);
  StatusOr<Node> OcSelect(const std::string& name,
                          const std::vector<Node>& args, const Context& ctx);
  StatusOr<Node> OcCreate(const std::string& name,
                          const std::vector<Node>& args, const Context& ctx);
  StatusOr<Node> HydraSelect(const std::string& name,
                             const std::vector<Node>& args, const Context& ctx);
  StatusOr<Node> Now(const std::string& name, const std::vector<Node>& args,
                     const Context& ctx);
  StatusOr<Node> OcDeprecated(const std::string& name,
                              const std::vector<Node>& args,
                              const Context& ctx);
  StatusOr<Node> OcDictKeysOrValues(const std::string& name,
                                    const std::vector<Node>& args,
                                    const Context& ctx);
  StatusOr<Node> ResolveDetached(const Node& n, const Context& ctx);

  // Errors (interpolation.cc).
  std::string Where(const Node* origin) const;
  std::string FailingKey() const;
  std::string Trailer() const;
  Status Error(const std::string& what, const Context& ctx);
  Status Error(const std::string& what, const Path& path,
               const Node* origin = nullptr);
  Status TooLongError(size_t size, const Context& ctx);
  Status CycleError(const Path& path);
  Status GrammarError(const std::string& text, const interp::ParseError& e,
                      const Node* origin,
                      const std::string& prefix = "GrammarParseError: ");

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

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_RESOLVER_H_
