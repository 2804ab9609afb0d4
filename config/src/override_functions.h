// Hydra's override functions: the casts int/float/str/bool and the sweep
// builders choice/range/interval/tag/sort/shuffle/glob, with Python's
// argument binding, Hydra's argument type checks and their error texts.
// Private to the config library.
#ifndef TRIALSHIM_CONFIG_SRC_OVERRIDE_FUNCTIONS_H_
#define TRIALSHIM_CONFIG_SRC_OVERRIDE_FUNCTIONS_H_

#include <string>
#include <utility>
#include <vector>

#include "override_value.h"
#include "trialshim/base/status.h"

namespace trialshim::config::override_internal {

// The names Hydra registers, sorted (as its "Available:" line lists them).
const std::vector<std::string>& FunctionNames();

// Evaluates name(args..., kwargs...). Errors are InvalidArgument with the
// message "<PythonExceptionType>: <message>" as Hydra would raise it
// ("TypeError: mismatch type argument start: ...").
StatusOr<PVal> CallFunction(const std::string& name, std::vector<PVal> args,
                            std::vector<std::pair<std::string, PVal>> kwargs);

// At most this many values are enumerated from one range() sweep.
constexpr size_t kMaxSweepValues = 100000;

// The values a choice or range sweep takes, in sweep order (shuffled when
// the sweep is). Ranges follow Python's range() or Hydra's decimal float
// range.
StatusOr<std::vector<PVal>> EnumerateSweep(const PVal& sweep);

}  // namespace trialshim::config::override_internal

#endif  // TRIALSHIM_CONFIG_SRC_OVERRIDE_FUNCTIONS_H_
