// OmegaConf-style interpolation: "${a.b}", "${.sibling}", "${..up}",
// "${a[0]}", string interpolation ("x_${a}"), nested "${${k}}", escaped
// "\${..}", the resolvers oc.env, oc.decode, oc.select, oc.create,
// oc.deprecated, oc.dict.keys and oc.dict.values, and Hydra's own: hydra
// (see ResolveOptions::hydra) and now (strftime of the local time, one time
// per pattern and resolution, as Hydra caches it).
//
// A whole-value interpolation keeps its target's type; string interpolation
// gives a string. Missing keys, "???" values, unknown resolvers and cycles
// are InvalidArgument errors naming the full key and the chain of
// interpolations that led there.
#ifndef TRIALSHIM_CONFIG_INTERPOLATION_H_
#define TRIALSHIM_CONFIG_INTERPOLATION_H_

#include <map>
#include <string>
#include <string_view>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::config {

struct ResolveOptions {
  // false: a "???" value is an error (OmegaConf.to_container with
  // throw_on_missing: what a program reading its config needs). true: it
  // stays "???", and so becomes every value that interpolates one, as
  // OmegaConf.resolve does for Hydra's `--cfg job --resolve` (which also
  // refuses a result that is bad interpolation syntax, as "\${x" resolves
  // to "${x"). Default: false.
  bool keep_missing = false;
  // Hydra's node (ComposeResult::hydra) for the `hydra` resolver:
  // ${hydra:job.name} is OmegaConf.select of it (null for a missing or
  // absent key), as under a Hydra app. Null: ${hydra:...} is an error, as
  // outside one ("HydraConfig was not set").
  const Node* hydra = nullptr;
  // The ${now:pattern} values already given, by pattern: OmegaConf's
  // resolver cache of one config object, shared by the resolutions of one
  // run (its directory and its config) and copied by Hydra from a
  // multirun's config into each job's, so that all see one time. Null: a
  // cache for this resolution alone. Default: null.
  std::map<std::string, Node>* now = nullptr;
};

// Returns a copy of `root` with every interpolation resolved and escapes
// ("\${") unescaped.
StatusOr<Node> ResolveAll(const Node& root,
                          ResolveOptions options = ResolveOptions());

// Checks every string value under `root` that holds "${" against
// OmegaConf's interpolation grammar, as OmegaConf does when a config is
// created (it raises GrammarParseError then, not when the value is read).
// Keys are not checked: OmegaConf does not parse them. `key` is the full key
// of `root` itself ("" for a whole config). InvalidArgument names the value's
// file:line:col (when known), the grammar error with a caret under its
// column, and the value's full key ("a.b", "l[1]").
Status CheckInterpolationSyntax(const Node& root, const std::string& key = "");

// Resolves the value at dotted `path` (with whatever it refers to).
// NotFound if the path does not exist.
StatusOr<Node> ResolvePath(const Node& root, std::string_view path,
                           ResolveOptions options = ResolveOptions());

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_INTERPOLATION_H_
