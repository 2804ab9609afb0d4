// What the files of Hydra's override functions share (private to the
// config library): the errors they raise as Python would, the type masks of
// their signatures, the arguments bound to a call, and each function's body
// (override_casts.cc: int/float/str/bool; override_sweeps.cc:
// choice/range/interval/tag/sort/shuffle/glob). override_functions.cc binds
// a call and dispatches to them.
#ifndef TRIALSHIM_CONFIG_SRC_OVERRIDE_FUNCTIONS_INTERNAL_H_
#define TRIALSHIM_CONFIG_SRC_OVERRIDE_FUNCTIONS_INTERNAL_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "override_value.h"
#include "trialshim/base/status.h"

namespace trialshim::config::override_internal {

using K = PVal::K;

// InvalidArgument "<type>: <msg>", as CallFunction's callers expect.
Status Err(const char* type, const std::string& msg);
Status AssertionError();

constexpr uint32_t Bit(K k) { return 1u << static_cast<int>(k); }
constexpr uint32_t kAny = 0xffffffffu;
constexpr uint32_t kNumber = Bit(K::kInt) | Bit(K::kBool) | Bit(K::kFloat);
constexpr uint32_t kElement =
    Bit(K::kStr) | kNumber | Bit(K::kList) | Bit(K::kDict);
constexpr uint32_t kSweep =
    Bit(K::kChoice) | Bit(K::kRange) | Bit(K::kInterval);

// The arguments bound to a signature (inspect.Signature.bind).
struct Bound {
  std::vector<PVal> var;  // *args
  std::map<std::string, PVal> named;
  const PVal* Get(const std::string& name) const {
    auto it = named.find(name);
    return it == named.end() ? nullptr : &it->second;
  }
  // The value of an optional parameter; null when absent.
  PVal Opt(const std::string& name) const {
    const PVal* v = Get(name);
    return v ? *v : PVal::Null();
  }
};

// The generator shuffle() and shuffled sweeps draw from, one per thread.
std::mt19937_64& Rng();

// A choice sweep in its simple form (`a,b,c`).
PVal SimpleChoice(std::vector<PVal> items);
// _list_to_simple_choice: every item must be a ParsedElementType.

StatusOr<PVal> ListToSimpleChoice(std::vector<PVal> items);

enum class Cast { kInt, kFloat, kStr, kBool };

StatusOr<PVal> CallCast(Cast c, Bound b);

StatusOr<PVal> CallChoice(Bound b);
StatusOr<PVal> CallRange(Bound b);
StatusOr<PVal> CallInterval(Bound b);
StatusOr<PVal> CallGlob(Bound b);
StatusOr<PVal> CallTag(Bound b);
StatusOr<PVal> CallSort(Bound b);
StatusOr<PVal> CallShuffle(Bound b);

}  // namespace trialshim::config::override_internal

#endif  // TRIALSHIM_CONFIG_SRC_OVERRIDE_FUNCTIONS_INTERNAL_H_
