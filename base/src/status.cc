#include "trialshim/base/status.h"

#include <cstdio>
#include <cstdlib>

namespace trialshim::internal {

void DieOnValueOfError(const Status& status) {
  std::fprintf(stderr, "StatusOr::value() of an error: %s\n",
               status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace trialshim::internal
