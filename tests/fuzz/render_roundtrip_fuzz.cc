// The renderer's contract: ParseOverrideValue(RenderValue(v)) == v. Two
// sources of v: the input as a raw string (every byte string must survive
// RenderString, which is what the shim passes to Hydra), and the input read
// as an override value (lists, dicts, numbers). A value that does not read
// back, or reads back different, traps.
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_util.h"
#include "trialshim/config/override.h"
#include "trialshim/config/render.h"

namespace {

using trialshim::StatusOr;
using trialshim::config::Node;

void CheckRoundTrip(const Node& v, const std::string& rendered,
                    const char* what) {
  StatusOr<Node> back = trialshim::config::ParseOverrideValue(rendered);
  if (!back.ok() || *back != v) {
    fprintf(stderr, "%s round trip failed: rendered [%s] -> %s\n", what,
            rendered.c_str(),
            back.ok() ? "a different value" : back.status().message().c_str());
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(trialshim::fuzz::AsView(data, size));
  Node as_string = Node::String(s);
  CheckRoundTrip(as_string, trialshim::config::RenderString(s), "string");
  CheckRoundTrip(as_string, trialshim::config::RenderValue(as_string),
                 "string node");

  StatusOr<Node> parsed = trialshim::config::ParseOverrideValue(s);
  if (parsed.ok()) {
    CheckRoundTrip(*parsed, trialshim::config::RenderValue(*parsed), "value");
  }
  return 0;
}
