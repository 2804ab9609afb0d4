// OmegaConf itself on the cases of an OmegaConf-level table
// (tests/anchors/omegaconf_cases.py says what each mode gives). The Anchors*
// tests ask the anchors' omegaconf 2.3.0, what Hydra 1.3.2 users get from pip
// and what trialshim follows; the tests that run without PyPI may ask
// Debian's python3-omegaconf 2.2 on the cases where 2.2 says the same
// (docs/hydra-differences.md lists where it does not).
#ifndef TRIALSHIM_TESTS_TESTUTIL_OMEGACONF_H_
#define TRIALSHIM_TESTS_TESTUTIL_OMEGACONF_H_

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testutil/anchors.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::testing {

inline constexpr char kDebianPython[] = "/usr/bin/python3";

struct OmegaConfAnswer {
  std::string version;             // omegaconf.__version__
  nlohmann::ordered_json results;  // one per case, in the case's order
  std::string problem;         // why there are none ("" when they came back)
  bool not_installed = false;  // `python` can not import omegaconf
};

// Runs `mode` of omegaconf_cases.py under `python` on `cases`.
inline OmegaConfAnswer AskOmegaConf(
    const std::string& python, const std::string& mode,
    const nlohmann::json& cases = nlohmann::json::array()) {
  TempDir dir;
  Finished f = RunToEnd(
      {python,
       std::string(TRIALSHIM_SOURCE_DIR) + "/tests/anchors/omegaconf_cases.py",
       mode, dir.Write("cases.json", cases.dump())});
  OmegaConfAnswer a;
  a.not_installed =
      f.err.find("No module named 'omegaconf'") != std::string::npos;
  nlohmann::ordered_json out =
      nlohmann::ordered_json::parse(f.out, nullptr, false);
  if (f.exit_code != 0 || !out.is_object()) {
    a.problem = python + " omegaconf_cases.py " + mode + " exited " +
                std::to_string(f.code()) + ":\n" + f.err + f.out;
    return a;
  }
  a.version = out["version"];
  a.results = out["results"];
  if (a.results.size() != (mode == "train" ? 1 : cases.size())) {
    a.problem = "omegaconf_cases.py " + mode + " answered " +
                std::to_string(a.results.size()) + " cases of " +
                std::to_string(cases.size());
  }
  return a;
}

// Debian's python3-omegaconf on `cases`; skips the calling test when it is
// not installed.
#define ASK_DEBIAN_OMEGACONF(answer, mode, cases)                             \
  ::trialshim::testing::OmegaConfAnswer answer =                              \
      ::trialshim::testing::AskOmegaConf(::trialshim::testing::kDebianPython, \
                                         mode, cases);                        \
  if (answer.not_installed) {                                                 \
    GTEST_SKIP() << "python3-omegaconf is not installed";                     \
  }                                                                           \
  ASSERT_EQ(answer.problem, "")

// The anchors' omegaconf 2.3.0 on `cases`; first statement of an Anchors*
// test (it skips or fails as SKIP_WITHOUT_ANCHORS does).
#define ASK_ANCHORS_OMEGACONF(answer, mode, cases)             \
  SKIP_WITHOUT_ANCHORS();                                      \
  ::trialshim::testing::OmegaConfAnswer answer =               \
      ::trialshim::testing::AskOmegaConf(                      \
          ::trialshim::testing::AnchorsPython(), mode, cases); \
  ASSERT_EQ(answer.problem, "");                               \
  ASSERT_EQ(answer.version, "2.3.0")

// The exception's type of an error ("" for a result).
inline std::string ErrorType(const nlohmann::ordered_json& result) {
  return result.is_object() ? result.value("error", "") : "";
}

// The first line of an error's message ("" for a result).
inline std::string FirstLine(const nlohmann::ordered_json& result) {
  std::string m = result.is_object() ? result.value("message", "") : "";
  return m.substr(0, m.find('\n'));
}

// An OmegaConf result for messages: "ok: <value>" or
// "<ExceptionType>: <message>".
inline std::string Outcome(const nlohmann::ordered_json& result) {
  if (!ErrorType(result).empty()) {
    return result["error"].get<std::string>() + ": " +
           result["message"].get<std::string>();
  }
  return "ok: " + result.dump();
}

// `message` without the " (did you mean ...)" trialshim adds to
// OmegaConf's words.
inline std::string WithoutDidYouMean(std::string message) {
  size_t at = message.find(" (did you mean ");
  if (at == std::string::npos) return message;
  size_t end = message.find("?)", at);
  return message.erase(
      at, end == std::string::npos ? std::string::npos : end + 2 - at);
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_OMEGACONF_H_
