// OmegaConf's merge and update, on Nodes (private to the config library).
//
// Hydra composes a config by merging each selected file into an empty map
// (OmegaConf.merge) and then applies value overrides with OmegaConf.update
// on the struct-mode result. These are those two operations with OmegaConf
// 2.2's semantics: maps merge key by key, lists and scalars replace, a "???"
// source value never replaces a set one, new keys go at the end and existing
// keys keep their place.
#ifndef TRIALSHIM_CONFIG_SRC_MERGE_H_
#define TRIALSHIM_CONFIG_SRC_MERGE_H_

#include <string>
#include <string_view>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::config::internal {

// Merges `src` into `dest`. With `struct_mode`, a key of `src` that `dest`
// lacks is an error: NotFound whose message is the full dotted key
// (`path` prefixes it; "" at the root). Merging a map with a list is
// InvalidArgument, as OmegaConf refuses it.
Status MergeInto(Node* dest, const Node& src, bool struct_mode,
                 const std::string& path = "");

// OmegaConf.update(cfg, key, value, merge=True, force_add=force_add) on a
// struct-mode `cfg`: follows the dotted `key` (list items by index),
// replacing non-containers on the way by empty maps, then merges a map or
// list `value` into an existing container or sets it. Without `force_add`
// a key that does not exist is NotFound with the full dotted key as the
// message; other failures (bad list index, map merged with list) are
// InvalidArgument with a description.
Status UpdateKey(Node* cfg, std::string_view key, const Node& value,
                 bool force_add);

// OmegaConf.select(cfg, key): the node at dotted `key`, or nullptr.
const Node* SelectKey(const Node& cfg, std::string_view key);

// Removes the node at dotted `key` (a map entry or a list item). False if
// there is none.
bool DeleteKey(Node* cfg, std::string_view key);

// Every dotted key of the maps in `cfg` ("a", "a.b", ...), parents first;
// list items are not listed. For did-you-mean suggestions.
std::vector<std::string> DottedKeys(const Node& cfg);

// Python's == between the values ("1 == 1.0", "True == 1"; dicts compare
// regardless of key order).
bool PythonEquals(const Node& a, const Node& b);

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_MERGE_H_
