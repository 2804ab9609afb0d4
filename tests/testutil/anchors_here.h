// The anchors environment for the Anchors* suites of this branch:
// tests/testutil/anchors.h where the branch that adds `make anchors` has
// landed, else the same convention here (delete this file then, and
// include anchors.h).
#ifndef TRIALSHIM_TESTS_TESTUTIL_ANCHORS_HERE_H_
#define TRIALSHIM_TESTS_TESTUTIL_ANCHORS_HERE_H_

#include <string>
#include <vector>

#if __has_include("tests/testutil/anchors.h")
#include "tests/testutil/anchors.h"
#else
// The anchors convention (tests/testutil/anchors.h, which the branch adding
// `make anchors` brings), until it is here: the interpreter is
// $TRIALSHIM_ANCHORS_PYTHON or <build>/anchors/bin/python; without it an
// Anchors* test skips, unless TRIALSHIM_REQUIRE_ANCHORS=1.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/testutil/subprocess.h"

namespace trialshim::testing {

inline std::string AnchorsPython() {
  const char* env = std::getenv("TRIALSHIM_ANCHORS_PYTHON");
  return env && *env
             ? env
             : std::string(TRIALSHIM_BIN_DIR) + "/../anchors/bin/python";
}

inline const std::string& AnchorsMissing() {
  static const std::string missing = [] {
    Finished f =
        RunToEnd({AnchorsPython(), "-c",
                  "import hydra, hydra_plugins.hydra_optuna_sweeper as s\n"
                  "assert hydra.__version__ == '1.3.2', hydra.__version__\n"
                  "assert s.__version__ == '1.2.0', s.__version__\n"});
    if (f.exit_code == 0) return std::string();
    return "the anchors environment " + AnchorsPython() +
           " is missing or incomplete (`make anchors` builds it; "
           "TRIALSHIM_ANCHORS_PYTHON names another):\n" +
           f.err;
  }();
  return missing;
}

inline bool AnchorsRequired() {
  const char* env = std::getenv("TRIALSHIM_REQUIRE_ANCHORS");
  return env && std::string(env) == "1";
}

inline Finished RunAnchorsScript(const std::string& script,
                                 const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {
      AnchorsPython(), std::string(TRIALSHIM_SOURCE_DIR) + "/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunToEnd(argv);
}

}  // namespace trialshim::testing

#define SKIP_WITHOUT_ANCHORS()                                       \
  if (const std::string& anchors_missing_ =                          \
          ::trialshim::testing::AnchorsMissing();                    \
      !anchors_missing_.empty()) {                                   \
    if (::trialshim::testing::AnchorsRequired()) {                   \
      FAIL() << anchors_missing_ << "(TRIALSHIM_REQUIRE_ANCHORS=1)"; \
    }                                                                \
    GTEST_SKIP() << anchors_missing_;                                \
  }
#endif

#endif  // TRIALSHIM_TESTS_TESTUTIL_ANCHORS_HERE_H_
