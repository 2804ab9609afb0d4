// Fuzzes interpolation resolution. Even first byte: the rest is a YAML
// document (loaded, then resolved). Odd first byte: the rest is lines
// "dotted.key=value", each setting a string value in a tree built directly
// (so every input reaches the interpolation grammar, not the YAML parser);
// then the whole tree and the first key are resolved. Resolution must end
// (cycles are errors) and never crash.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/yaml_loader.h"

namespace {

using namespace trialshim;
using config::Node;

// Sets `value` at the dotted path, creating maps on the way; a scalar in
// the way is replaced by a map (as Node::Set does).
void SetPath(Node* root, const std::string& path, Node value) {
  std::vector<std::string> segs = fuzz::Split(path, ".");
  Node* cur = root;
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    Node* next = cur->is_map() ? cur->GetMutable(segs[i]) : nullptr;
    if (next == nullptr || !next->is_map()) {
      cur->Set(segs[i], Node::MakeMap());
      next = cur->GetMutable(segs[i]);
    }
    cur = next;
  }
  cur->Set(segs.back(), std::move(value));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  std::string_view rest = fuzz::AsView(data + 1, size - 1);
  Node root = Node::MakeMap();
  std::string first_key;
  if ((data[0] & 1) == 0) {
    config::LoadLimits limits;
    limits.max_nodes = 20000;
    StatusOr<Node> loaded = config::LoadYamlString(rest, "fuzz.yaml", limits);
    if (!loaded.ok()) return 0;
    root = *loaded;
    if (root.is_map() && root.size() > 0) first_key = root.AsMap()[0].first;
  } else {
    for (const std::string& line : fuzz::Split(rest, "\n")) {
      size_t eq = line.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      std::string key = line.substr(0, eq);
      if (first_key.empty()) first_key = key;
      SetPath(&root, key, Node::String(line.substr(eq + 1)));
    }
  }
  StatusOr<Node> resolved = config::ResolveAll(root);
  if (!resolved.ok() && resolved.status().message().empty()) __builtin_trap();
  if (!first_key.empty()) (void)config::ResolvePath(root, first_key);
  return 0;
}
