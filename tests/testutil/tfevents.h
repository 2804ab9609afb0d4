// Test helper: a TensorBoard event file read by a reader that shares no
// code with our writer (tests/data/loggers/read_tfevents.py: the TFRecord
// framing and masked CRC-32Cs checked in Python, records decoded by protoc).
#ifndef TRIALSHIM_TESTS_TESTUTIL_TFEVENTS_H_
#define TRIALSHIM_TESTS_TESTUTIL_TFEVENTS_H_

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"

namespace trialshim::testing {

// One JSON object per record (see read_tfevents.py); a framing or CRC error
// fails the calling test.
inline std::vector<nlohmann::json> ReadEvents(const std::string& path) {
  Finished f = RunToEnd(
      {"/usr/bin/python3",
       std::string(TRIALSHIM_TEST_DATA_DIR) + "/loggers/read_tfevents.py", path,
       std::string(TRIALSHIM_SOURCE_DIR) + "/trainer/proto"});
  EXPECT_EQ(f.exit_code, 0) << path << ": " << f.err;
  std::vector<nlohmann::json> out;
  std::istringstream lines(f.out);
  for (std::string line; std::getline(lines, line);) {
    out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

// One line per summary value: "<step> <tag> <simple_value>", or the plugin's
// name in place of the value.
inline std::vector<std::string> Summaries(
    const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    for (const auto& v : e["values"]) {
      out.push_back(std::to_string(e["step"].get<int64_t>()) + " " +
                    v["tag"].get<std::string>() + " " +
                    (v["simple_value"].is_null()
                         ? v["plugin_name"].get<std::string>()
                         : v["simple_value"].get<std::string>()));
    }
  }
  return out;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_TFEVENTS_H_
