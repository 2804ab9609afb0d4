// The cases tests/data/optuna_sweeper/generate.py recorded by running Hydra
// 1.3.2's sweepers and hydra-optuna-sweeper 1.2.0 (cases.json), and the
// anchors environment that runs it again live (Anchors* suites).
#ifndef TRIALSHIM_TESTS_TESTUTIL_OPTUNA_SWEEPER_H_
#define TRIALSHIM_TESTS_TESTUTIL_OPTUNA_SWEEPER_H_

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trialshim/config/node.h"

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
  return env && *env ? env
                     : std::string(TRIALSHIM_BIN_DIR) + "/../anchors/bin/python";
}

inline const std::string& AnchorsMissing() {
  static const std::string missing = [] {
    Finished f = RunToEnd(
        {AnchorsPython(), "-c",
         "import hydra, hydra_plugins.hydra_optuna_sweeper as s\n"
         "assert hydra.__version__ == '1.3.2', hydra.__version__\n"
         "assert s.__version__ == '1.2.0', s.__version__\n"});
    if (f.exit_code == 0) return std::string();
    return "the anchors environment " + AnchorsPython() +
           " is missing or incomplete (`make anchors` builds it; "
           "TRIALSHIM_ANCHORS_PYTHON names another):\n" + f.err;
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

namespace trialshim::testing {

inline const std::string kOptunaSweeperDir =
    std::string(TRIALSHIM_TEST_DATA_DIR) + "/optuna_sweeper";

// The recording at `file` (default: the committed cases.json), or null if
// it can not be read.
inline nlohmann::json LoadOptunaSweeperCases(
    const std::string& file = kOptunaSweeperDir + "/cases.json") {
  std::ifstream in(file);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// One section of the committed recording ("distributions", "compose", ...);
// empty if missing (each suite checks a minimum count).
inline std::vector<nlohmann::json> OptunaSweeperCases(const std::string& section) {
  static const nlohmann::json all = LoadOptunaSweeperCases();
  std::vector<nlohmann::json> out;
  if (all.is_object() && all.contains(section) && all[section].is_array()) {
    out.assign(all[section].begin(), all[section].end());
  }
  return out;
}

// A config value as JSON with its type (64 and 64.0 stay apart in dump()).
inline nlohmann::json ToJsonValue(const config::Node& n) {
  switch (n.type()) {
    case config::Node::Type::kNull:
      return nullptr;
    case config::Node::Type::kBool:
      return n.AsBool();
    case config::Node::Type::kInt:
      return n.AsInt();
    case config::Node::Type::kDouble:
      return n.AsDouble();
    case config::Node::Type::kString:
      return n.AsString();
    case config::Node::Type::kList: {
      nlohmann::json out = nlohmann::json::array();
      for (const config::Node& item : n.AsList()) out.push_back(ToJsonValue(item));
      return out;
    }
    case config::Node::Type::kMap: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, v] : n.AsMap()) out[k] = ToJsonValue(v);
      return out;
    }
  }
  return nullptr;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_OPTUNA_SWEEPER_H_
