// The cases tests/data/hydra_app/generate.py made by running real Hydra
// 1.3.2 apps: cases.json (--cfg and errors) and runs.json (runs), and
// multirun.py's multirun.json (multiruns); how they normalised Hydra's
// output, and app_task, the trialshim app the tests compare with them.
#ifndef TRIALSHIM_TESTS_TESTUTIL_HYDRA_APP_H_
#define TRIALSHIM_TESTS_TESTUTIL_HYDRA_APP_H_

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "trialshim/base/strings.h"

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

inline const std::string kAppTask =
    std::string(TRIALSHIM_BIN_DIR) + "/app_task";

// `s` with every run that has `shape` ('d' a digit, any other character
// itself) replaced by `with`.
inline std::string ReplaceShape(std::string s, const std::string& shape,
                                const std::string& with) {
  auto at = [&](size_t i) {
    for (size_t k = 0; k < shape.size(); ++k) {
      char c = s[i + k];
      if (shape[k] == 'd' ? !std::isdigit(static_cast<unsigned char>(c))
                          : c != shape[k]) {
        return false;
      }
    }
    return true;
  };
  for (size_t i = 0; i + shape.size() <= s.size(); ++i) {
    if (at(i)) s.replace(i, shape.size(), with);
  }
  return s;
}

// What the generators do to Hydra's output: <tree>, <cwd>, Python's
// asctime ("2026-11-24 02:14:02,044") and a default sweep directory's
// date and time.
inline std::string Normalize(std::string s, const std::string& tree,
                             const std::string& cwd) {
  s = ReplaceAll(ReplaceAll(s, tree, "<tree>"), cwd, "<cwd>");
  s = ReplaceShape(s, "dddd-dd-dd dd:dd:dd,ddd", "<asctime>");
  return ReplaceShape(s, "multirun/dddd-dd-dd/dd-dd-dd",
                      "multirun/<date>/<time>");
}

// app_task (tests/app/app_task.cc) on config directory `tree`, in `cwd`.
inline Finished RunTask(const std::string& tree,
                        const std::vector<std::string>& args,
                        const std::string& cwd,
                        const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {kAppTask, "-cp", tree};
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions o = Child::Options(env);
  o.cwd = cwd;
  return RunToEndWith(argv, o);
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_HYDRA_APP_H_
