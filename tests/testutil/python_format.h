// Test helper: Python's own format(), str.format() and Lightning's checkpoint
// names (tests/data/python_format/python_format.py run by /usr/bin/python3),
// for the tests that compare base/python_format.h and FormatCheckpointName
// with them, and the random format strings they compare on.
#ifndef TRIALSHIM_TESTS_TESTUTIL_PYTHON_FORMAT_H_
#define TRIALSHIM_TESTS_TESTUTIL_PYTHON_FORMAT_H_

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/base/python_format.h"

namespace trialshim::testing {

// A number as python_format.py reads one: exact, a float as float.hex().
inline nlohmann::json PythonNumberJson(const PythonNumber& v) {
  if (v.is_int) return {{"int", std::to_string(v.i)}};
  if (std::isnan(v.d)) return {{"float", "nan"}};
  if (std::isinf(v.d)) return {{"float", v.d > 0 ? "inf" : "-inf"}};
  char hex[64];
  std::snprintf(hex, sizeof hex, "%a", v.d);  // float.fromhex reads it
  return {{"float", hex}};
}

// Python's answer to each case (python_format.py says what a case is), as
// "ok: <text>" or "error: <message>" (a KeyError's with its name, as a
// traceback shows it).
inline std::vector<std::string> RunPythonFormat(const nlohmann::json& cases) {
  TempDir dir;
  Finished f = RunToEnd(
      {"/usr/bin/python3",
       std::string(TRIALSHIM_TEST_DATA_DIR) + "/python_format/python_format.py",
       dir.Write("cases.json", cases.dump())});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  std::vector<std::string> out;
  for (const nlohmann::json& r :
       nlohmann::json::parse(f.out, nullptr, /*allow_exceptions=*/false)) {
    if (r.contains("ok")) {
      out.push_back("ok: " + r["ok"].get<std::string>());
    } else {
      out.push_back(std::string("error: ") +
                    (r["error"] == "KeyError" ? "KeyError: " : "") +
                    r["message"].get<std::string>());
    }
  }
  return out;
}

// `count` strings of 1 to `max_len` characters drawn from `alphabet`, none
// with a number of more than three digits (as a width, Python would build
// it: gigabytes for ten).
inline std::vector<std::string> RandomFormatStrings(const std::string& alphabet,
                                                    size_t count,
                                                    size_t max_len,
                                                    unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  while (out.size() < count) {
    std::string t;
    const size_t len = std::uniform_int_distribution<size_t>(1, max_len)(rng);
    int digits = 0;
    for (size_t j = 0; j < len && digits < 4; ++j) {
      t += alphabet[std::uniform_int_distribution<size_t>(
          0, alphabet.size() - 1)(rng)];
      digits =
          std::isdigit(static_cast<unsigned char>(t.back())) ? digits + 1 : 0;
    }
    if (digits < 4) out.push_back(t);
  }
  return out;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_PYTHON_FORMAT_H_
