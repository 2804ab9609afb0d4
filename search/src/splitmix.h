// SplitMix64 (private to the search library): tiny, fully specified, and
// good enough to drive a search, so a seed gives the same values on every
// machine, which std::mt19937's distributions do not promise.
#ifndef TRIALSHIM_SEARCH_SRC_SPLITMIX_H_
#define TRIALSHIM_SEARCH_SRC_SPLITMIX_H_

#include <cstdint>

namespace trialshim::tuning::internal {

inline uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform on [0, 1) from the top 53 bits.
inline double Uniform(uint64_t* state) {
  return static_cast<double>(SplitMix(state) >> 11) * 0x1.0p-53;
}

}  // namespace trialshim::tuning::internal

#endif  // TRIALSHIM_SEARCH_SRC_SPLITMIX_H_
