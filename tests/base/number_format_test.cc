#include "trialshim/base/number_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

// Expected strings are what CPython 3.11 prints for repr(float(x)).
TEST(NumberFormatTest, MatchesPythonRepr) {
  struct Case {
    double value;
    const char* repr;
  } cases[] = {
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {123.0, "123.0"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1.5e-7, "1.5e-07"},
      {123456.0, "123456.0"},
      {0.987, "0.987"},
      {1.0 / 3, "0.3333333333333333"},
      {2e-05, "2e-05"},
      {1e22, "1e+22"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {5e-324, "5e-324"},
      {-2.5, "-2.5"},
      {12345678901234567890.0, "1.2345678901234567e+19"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::nan(""), "nan"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatPythonFloat(c.value), c.repr) << "case " << c.repr;
  }
}

// str(int(text)) against /usr/bin/python3's own, text or message: the
// hand-picked corners (cloudml-hypertune writes a global_step so), then
// random strings over what int() treats specially.
TEST(PythonIntTextTest, ReadsAsPythonsIntDoes) {
  std::vector<std::string> texts = {"0",
                                    "12",
                                    " 12 ",
                                    "+12",
                                    "-7",
                                    "-0",
                                    "+000",
                                    "007",
                                    "1_000",
                                    "99999999999999999999",
                                    "-99999999999999999999999999999999999999",
                                    "\t42\n",
                                    "\v1\f",
                                    "12abc",
                                    "1.5",
                                    " ",
                                    "",
                                    "_1",
                                    "1_",
                                    "1__0",
                                    "0x10",
                                    "1e3",
                                    "- 1",
                                    "1 _0",
                                    "--1",
                                    "+-1",
                                    "1\x1c",
                                    std::string("1\0", 2),
                                    "'quoted'",
                                    "\xc3\xa9",
                                    std::string(250, 'x'),
                                    std::string(4300, '9')};
  const std::string alphabet = " \t\n+-_019x.";
  std::mt19937 rng(1618);
  for (int k = 0; k < 5000; ++k) {
    std::string t;
    const size_t len = std::uniform_int_distribution<size_t>(0, 8)(rng);
    for (size_t j = 0; j < len; ++j) {
      t += alphabet[std::uniform_int_distribution<size_t>(
          0, alphabet.size() - 1)(rng)];
    }
    texts.push_back(t);
  }
  const std::string script =
      "import json, sys\n"
      "out = []\n"
      "for t in json.load(sys.stdin):\n"
      "  try: out.append('ok: ' + str(int(t)))\n"
      "  except ValueError as e: out.append('error: ' + str(e))\n"
      "json.dump(out, sys.stdout)\n";
  testing::TempDir dir;
  const std::string input =
      dir.Write("texts.json", nlohmann::json(texts).dump());
  testing::Finished f = testing::RunToEnd(
      {"/bin/sh", "-c", "/usr/bin/python3 -c \"$0\" < \"$1\"", script, input});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const auto want =
      nlohmann::json::parse(f.out).get<std::vector<std::string>>();
  ASSERT_EQ(want.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    StatusOr<std::string> got = PythonIntText(texts[i]);
    EXPECT_EQ(got.ok() ? "ok: " + *got : "error: " + got.status().message(),
              want[i])
        << "case " << nlohmann::json(texts[i]).dump();
  }
  // Python 3.11's limit on the digits of a str.
  StatusOr<std::string> too_long = PythonIntText(std::string(4301, '1'));
  ASSERT_FALSE(too_long.ok()) << "case 4301 digits";
  EXPECT_EQ(too_long.status().message(),
            "Exceeds the limit (4300 digits) for integer string conversion: "
            "value has 4301 digits; use sys.set_int_max_str_digits() to "
            "increase the limit")
      << "case 4301 digits";
}

}  // namespace
}  // namespace trialshim
