// The cost IsTrialshimApp adds to every trial start of `trialshim --
// COMMAND` without --config-path (translate/translate.h): the median time of
// one call on each file given, over `repeats` calls (page cache warm, as on
// a trial: the program is about to run).
//
//   app_marker_bench [repeats=2000] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "trialshim/translate/translate.h"

int main(int argc, char** argv) {
  int first = 1;
  int repeats = 2000;
  if (argc > 1 && std::atoi(argv[1]) > 0) {
    repeats = std::atoi(argv[1]);
    first = 2;
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: app_marker_bench [repeats] FILE...\n");
    return 2;
  }
  for (int f = first; f < argc; ++f) {
    std::vector<double> us;
    bool app = false;
    for (int i = 0; i < repeats; ++i) {
      auto start = std::chrono::steady_clock::now();
      app = trialshim::translate::IsTrialshimApp(argv[f]);
      auto end = std::chrono::steady_clock::now();
      us.push_back(
          std::chrono::duration<double, std::micro>(end - start).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("%-40s app=%d  median %.1f us  p90 %.1f us\n", argv[f], app,
                us[us.size() / 2], us[us.size() * 9 / 10]);
  }
  return 0;
}
