// The cases tests/data/optuna_sweeper/generate.py recorded by running Hydra
// 1.3.2's sweepers and hydra-optuna-sweeper 1.2.0 (cases.json), and the
// anchors environment that runs it again live (Anchors* suites).
#ifndef TRIALSHIM_TESTS_TESTUTIL_OPTUNA_SWEEPER_H_
#define TRIALSHIM_TESTS_TESTUTIL_OPTUNA_SWEEPER_H_

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "trialshim/config/node.h"

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
inline std::vector<nlohmann::json> OptunaSweeperCases(
    const std::string& section) {
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
      for (const config::Node& item : n.AsList())
        out.push_back(ToJsonValue(item));
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
