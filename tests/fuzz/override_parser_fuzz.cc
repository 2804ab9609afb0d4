// Fuzzes Hydra's override grammar: one argv item, as the shim and
// `trialshim compose` receive it. Any input must give an Override or an
// InvalidArgument, never a crash, a hang or an exception.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "trialshim/config/override.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialshim;
  std::string_view text = fuzz::AsView(data, size);
  StatusOr<config::Override> o = config::ParseOverride(text);
  if (o.ok()) {
    // Touch what callers read, so a malformed result shows up under ASan.
    (void)o->KeyWithPackage();
    if (o->value) (void)o->value->CountNodes();
    if (o->input != text) __builtin_trap();
  } else if (o.status().code() != StatusCode::kInvalidArgument ||
             o.status().message().empty()) {
    __builtin_trap();  // errors must be explained
  }
  (void)config::ParseOverrideValue(text);
  return 0;
}
