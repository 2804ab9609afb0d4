// The cases tests/data/hydra_app/generate.py made by running real Hydra
// 1.3.2 apps: cases.json (--cfg and errors) and runs.json (runs).
#ifndef TRIALSHIM_TESTS_TESTUTIL_HYDRA_APP_H_
#define TRIALSHIM_TESTS_TESTUTIL_HYDRA_APP_H_

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trialshim::testing {

inline const std::string kHydraAppDir =
    std::string(TRIALSHIM_TEST_DATA_DIR) + "/hydra_app";

// The entries of <dir>/<file>; empty if it can not be read (each suite
// checks a minimum count, so that can not pass unnoticed). `dir` is another
// only for what generate.py wrote just now (the Anchors* tests).
inline std::vector<nlohmann::json> LoadHydraAppCases(
    const std::string& file, const std::string& dir = kHydraAppDir) {
  std::ifstream in(dir + "/" + file);
  nlohmann::json all =
      nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<nlohmann::json> cases;
  if (all.is_array()) cases.assign(all.begin(), all.end());
  return cases;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_HYDRA_APP_H_
