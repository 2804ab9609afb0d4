// Python's int() and float() of a str, against /usr/bin/python3's own: the
// hand-picked corners, then random strings over what the two treat
// specially; and the documented limits where trialshim reads less.
#include "trialshim/base/python_number.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/base/number_format.h"

namespace trialshim {
namespace {

// What Python gives for each text: "ok: str(int(t))" or "error: message",
// the same for repr(float(t)), and whether int(t) fits in 64 bits.
struct Python {
  std::string int_text;
  std::string float_text;
  bool fits = false;
};

std::vector<Python> AskPython(const std::vector<std::string>& texts) {
  const std::string script =
      "import json, sys\n"
      "def call(f, t):\n"
      "  try: return 'ok: ' + f(t)\n"
      "  except ValueError as e: return 'error: ' + str(e)\n"
      "def fits(t):\n"
      "  try: return -2**63 <= int(t) < 2**63\n"
      "  except ValueError: return False\n"
      "json.dump([[call(lambda t: str(int(t)), t),\n"
      "            call(lambda t: repr(float(t)), t), fits(t)]\n"
      "           for t in json.load(sys.stdin)], sys.stdout)\n";
  testing::TempDir dir;
  const std::string input =
      dir.Write("texts.json", nlohmann::json(texts).dump());
  testing::Finished f = testing::RunToEnd(
      {"/bin/sh", "-c", "/usr/bin/python3 -c \"$0\" < \"$1\"", script, input});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  std::vector<Python> out;
  if (f.exit_code != 0) return out;
  for (const auto& row : nlohmann::json::parse(f.out)) {
    out.push_back({row[0].get<std::string>(), row[1].get<std::string>(),
                   row[2].get<bool>()});
  }
  return out;
}

TEST(PythonNumberTest, ReadsAsPythonsIntAndFloatDo) {
  std::vector<std::string> texts = {
      "0", "12", " 12 ", "+12", "-7", "-0", "+000", "007", "1_000",
      "99999999999999999999", "-99999999999999999999999999999999999999",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "\t42\n", "\v1\f", "12abc", "1.5", " ", "",
      "_1", "1_", "1__0", "0x10", "1e3", "- 1", "1 _0", "--1", "+-1",
      // \x1c..\x1f: str.strip() removes them, int() and float() do not.
      "1\x1c", "\x1f" "1", std::string("1\0", 2), "'quoted'", "\xc3\xa9",
      std::string(250, 'x'), std::string(4300, '9'),
      // float()'s own corners.
      ".5", "5.", ".", "._5", "1._5", "1_0.5", "1e", "1e+", "1e-3_0", "1E5",
      "inF", "-Infinity", "+nan", "NaN", "infinit", "nan(1)", "0x1p3",
      "1e309", "-1e309", "1e-400", "4.9e-324", "2.5e-324",
      "1.7976931348623159e308", "1e0000000000000000000001",
      "0." + std::string(400, '0') + "1e400",
      // int() counts the digits before it reads what follows them.
      std::string(5000, '7') + ".5", std::string(5000, '7') + "__1",
      std::string(5000, '7') + "_"};
  const std::string alphabet = " \t\n+-_019x.eEinf";
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
  const std::vector<Python> want = AskPython(texts);
  ASSERT_EQ(want.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string name = "case " + nlohmann::json(texts[i]).dump();
    StatusOr<std::string> i_text = PythonIntText(texts[i]);
    EXPECT_EQ(i_text.ok() ? "ok: " + *i_text : "error: " + i_text.status().message(),
              want[i].int_text)
        << name;
    EXPECT_EQ(PythonIntAccepts(texts[i]), i_text.ok()) << name;
    StatusOr<std::optional<int64_t>> i64 = ParsePythonInt(texts[i]);
    EXPECT_EQ(i64.ok(), i_text.ok()) << name;
    if (i64.ok()) {
      EXPECT_EQ(i64->has_value(), want[i].fits) << name;
      if (i64->has_value()) {
        EXPECT_EQ(std::to_string(**i64), *i_text) << name;
      }
    }
    StatusOr<double> f = ParsePythonFloat(texts[i]);
    EXPECT_EQ(f.ok() ? "ok: " + FormatPythonFloat(*f) : "error: " + f.status().message(),
              want[i].float_text)
        << name;
    EXPECT_EQ(PythonFloatAccepts(texts[i]), f.ok()) << name;
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

// The documented limits: Python reads these, trialshim refuses them.
TEST(PythonNumberTest, ReadsOnlyAsciiDigitsAndWhitespace) {
  const std::vector<std::string> texts = {
      "\xd9\xa1\xd9\xa2",  // U+0661 U+0662: Arabic-Indic 12
      "1\xc2\xa0",         // U+00A0, no-break space
      "\xe2\x80\x83" "1",  // U+2003, em space
  };
  const std::vector<Python> python = AskPython(texts);
  ASSERT_EQ(python.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string name = "case " + nlohmann::json(texts[i]).dump();
    EXPECT_EQ(python[i].int_text.rfind("ok: ", 0), 0u) << name;
    EXPECT_EQ(python[i].float_text.rfind("ok: ", 0), 0u) << name;
    EXPECT_FALSE(PythonIntAccepts(texts[i])) << name;
    EXPECT_FALSE(PythonFloatAccepts(texts[i])) << name;
  }
}

}  // namespace
}  // namespace trialshim
