// format() and str.format() against Python's own: each case is run by
// /usr/bin/python3 (tests/data/python_format/python_format.py) and here,
// and the text, or the error message, must be the same.
#include "trialshim/base/python_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/python_format.h"
#include "tests/testutil/status_matchers.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim {
namespace {

using nlohmann::json;

std::string Got(const StatusOr<std::string>& got) {
  return got.ok() ? "ok: " + *got : "error: " + got.status().message();
}

const std::vector<PythonNumber>& Values() {
  static const std::vector<PythonNumber> values = {
      PythonNumber::Int(0),
      PythonNumber::Int(7),
      PythonNumber::Int(-1234567),
      PythonNumber::Int(255),
      PythonNumber::Int(0x1F600),  // 'c' gives an emoji
      PythonNumber::Int(std::numeric_limits<int64_t>::max()),
      PythonNumber::Int(std::numeric_limits<int64_t>::min()),
      PythonNumber::Float(0.0),
      PythonNumber::Float(-0.0),
      PythonNumber::Float(1.0),
      PythonNumber::Float(-0.04),
      PythonNumber::Float(static_cast<double>(0.1f)),
      PythonNumber::Float(2.5),
      PythonNumber::Float(100.0),
      PythonNumber::Float(123456.789),
      PythonNumber::Float(1e16),
      PythonNumber::Float(1e-5),
      PythonNumber::Float(-9.995e-5),
      PythonNumber::Float(1e300),
      PythonNumber::Float(5e-324),
      PythonNumber::Float(std::nan("")),
      PythonNumber::Float(-std::numeric_limits<double>::infinity()),
  };
  return values;
}

// Every part of the mini-language, in order, and what each may be.
std::string RandomSpec(std::mt19937* rng) {
  static const std::vector<std::vector<std::string>> kParts = {
      {"", "", "<", ">", "^", "=", "*<", "0>", "\xe2\x82\xac^", "x=", "<<"},
      {"", "", "+", "-", " "},
      {"", "", "z"},
      {"", "", "#"},
      {"", "", "0"},
      {"", "", "1", "8", "15", "40"},
      {"", "", "", ",", "_"},
      {"", "", ".0", ".1", ".3", ".17", ".40"},
      {"",         "",
       "b",        "c",
       "d",        "e",
       "E",        "f",
       "F",        "g",
       "G",        "n",
       "o",        "s",
       "x",        "X",
       "%",        "q",
       ",",        "z",
       "\xc3\xa9", std::string(1, '\0'),
       "\x01",     "5a"},
  };
  std::string spec;
  for (const auto& options : kParts) {
    spec += options[std::uniform_int_distribution<size_t>(
        0, options.size() - 1)(*rng)];
  }
  return spec;
}

TEST(PythonFormatTest, FormatsNumbersAsPythonDoes) {
  std::vector<std::pair<PythonNumber, std::string>> cases;
  // By hand: what a checkpoint name uses, and the corners of each step.
  const std::vector<std::string> specs = {
      "",     "d",       "03d", ".2f",   ".4f",  ".1e", ".1%",
      "g",    ".3",      ".1",  ".17",   "+06d", "*^5", ",",
      "010,", "012,.2f", "08,", "_x",    "_b",   "#X",  "#010x",
      "#o",   "#b",      "c",   "=5c",   "n",    ",n",  "_n",
      "z.1f", "z",       "zd",  "z.2",   "zc",   "#",   "#.0f",
      "#.0e", "#.0g",    "#g",  "#.3",   "#.0%", "010", "+010.2f",
      "=10",  "<05",     "0<5", "0=8.2", ",_",   "_,",  ",,",
      "++",   "5ab",     "q",   ".2q",   "s",    "X",   "\xe2\x82\xac^7",
      ".0",   "e",       "G",   "F",     "E",    "%",   ".400f",
      "40",   ".40g",    ".40e"};
  for (const PythonNumber& v : Values()) {
    for (const std::string& spec : specs) cases.push_back({v, spec});
  }
  std::mt19937 rng(2718);
  for (int k = 0; k < 20000; ++k) {
    const auto& values = Values();
    cases.push_back({values[std::uniform_int_distribution<size_t>(
                         0, values.size() - 1)(rng)],
                     RandomSpec(&rng)});
  }
  json input = json::array();
  for (const auto& [value, spec] : cases)
    input.push_back(
        {{"value", testing::PythonNumberJson(value)}, {"spec", spec}});
  const std::vector<std::string> python = testing::RunPythonFormat(input);
  ASSERT_EQ(python.size(), cases.size());
  int failures = 0;
  for (size_t i = 0; i < cases.size() && failures < 20; ++i) {
    const std::string got =
        Got(FormatPythonNumber(cases[i].first, cases[i].second));
    const std::string& want = python[i];
    if (got != want) ++failures;
    EXPECT_EQ(got, want) << "case format(" << input[i]["value"].dump() << ", "
                         << json(cases[i].second).dump() << ")";
  }
}

TEST(PythonFormatTest, FormatsTemplatesAsPythonDoes) {
  const PythonMapping mapping = {{"a", PythonNumber::Float(0.5)},
                                 {"epoch", PythonNumber::Int(3)},
                                 {"w", PythonNumber::Int(6)},
                                 {"{", PythonNumber::Int(1)},
                                 {"5", PythonNumber::Float(2.0)}};
  std::vector<std::string> templates = {"",
                                        "plain",
                                        "{{}}",
                                        "{{0[a]}}",
                                        "{0[a]}",
                                        "{0[a]:.2f}-{0[epoch]:03d}",
                                        "{[a]}-{[epoch]}",
                                        "{0[a]}{[a]}",
                                        "{[a]}{0[a]}",
                                        "{1[a]}",
                                        "{99999999999999999999[a]}",
                                        "{0[99999999999999999999]}",
                                        "{0[5]}",
                                        "{x}",
                                        "{0[missing]}",
                                        "{0[a]x}",
                                        "{0[a][b]}",
                                        "{0[a}b]}",
                                        "{0[]}",
                                        "{0[a]:{0[w]}}",
                                        "{0[a]:{0[w]}.{0[epoch]}f}",
                                        "{0[a]:{0[w]:{0[w]}}}",
                                        "{0[a]:{{}}}",
                                        "{0[{]}",
                                        "{0[a]!}",
                                        "{0[a]!x}",
                                        "{0[a]!rx}",
                                        "{0[a]!",
                                        "{0[a]",
                                        "{0[a",
                                        "{",
                                        "}",
                                        "a}b",
                                        "{0[a]:",
                                        "{0[a]:{",
                                        "{0[a]:}}",
                                        "{a{b}",
                                        "{0[a]:\xe2\x82\xac^9}",
                                        "\xc3\xa9{0[epoch]}\xe2\x98\x83",
                                        "{0[epoch]:{0[a]}}",
                                        "{0[epoch]:q}"};
  for (std::string& t :
       testing::RandomFormatStrings("{}[]0a:!.d5 1", 20000, 10, 31415)) {
    templates.push_back(std::move(t));
  }
  json input = json::array();
  json m = json::object();
  for (const auto& [k, v] : mapping) m[k] = testing::PythonNumberJson(v);
  for (const std::string& t : templates)
    input.push_back({{"template", t}, {"mapping", m}});
  const std::vector<std::string> python = testing::RunPythonFormat(input);
  ASSERT_EQ(python.size(), templates.size());
  int failures = 0;
  for (size_t i = 0; i < templates.size() && failures < 20; ++i) {
    const StatusOr<std::string> got =
        FormatPythonTemplate(templates[i], mapping);
    // Refused by name: Python would show a repr or an attribute here.
    if (!got.ok() &&
        got.status().message().find("not supported") != std::string::npos) {
      continue;
    }
    if (Got(got) != python[i]) ++failures;
    EXPECT_EQ(Got(got), python[i])
        << "case " << json(templates[i]).dump() << ".format(mapping)";
  }
}

// Where CPython would build any size of text, or run out of memory, a
// clear error instead; its own limits as it words them.
TEST(PythonFormatTest, RefusesWhatPythonCanNotBuild) {
  struct Case {
    std::string name;
    PythonNumber value;
    std::string spec;
    std::string want;  // the whole message
  };
  const PythonNumber i = PythonNumber::Int(3), f = PythonNumber::Float(0.5);
  const std::vector<Case> cases = {
      {"width past memory", i, "99999999999999",
       "width 99999999999999 is too large (at most 4096 here)"},
      {"width past memory, float", f, ">99999999999999.2f",
       "width 99999999999999 is too large (at most 4096 here)"},
      {"width just past the limit", i, "4097",
       "width 4097 is too large (at most 4096 here)"},
      {"width past int64", i, "99999999999999999999",
       "Too many decimal digits in format string"},
      {"width of 2**63", i, "9223372036854775808",
       "Too many decimal digits in format string"},
      {"width of 2**63-1", i, "9223372036854775807",
       "width 9223372036854775807 is too large (at most 4096 here)"},
      {"precision past int", f, ".9999999999f", "precision too big"},
      {"precision of 2**31", f, ".2147483648", "precision too big"},
      {"precision past the limit", f, ".2147483647f",
       "precision 2147483647 is too large (at most 4096 here)"},
      {"precision past int64", f, ".99999999999999999999f",
       "Too many decimal digits in format string"},
      {"precision of an int", i, ".9999999999",
       "Precision not allowed in integer format specifier"},
      {"precision of an int as a float", i, ".9999999999f",
       "precision too big"},
      {"a surrogate", PythonNumber::Int(0xd800), "c",
       "%c arg 55296 is a surrogate"},
  };
  for (const Case& c : cases) {
    StatusOr<std::string> got = FormatPythonNumber(c.value, c.spec);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    EXPECT_EQ(got.status().message(), c.want) << "case " << c.name;
  }
  StatusOr<std::string> widest = FormatPythonNumber(i, "4096");
  ASSERT_OK(widest) << "case the widest";
  EXPECT_EQ(widest->size(), 4096u) << "case the widest";
  StatusOr<std::string> longest =
      FormatPythonNumber(PythonNumber::Float(1e308), ",.4096f");
  ASSERT_OK(longest) << "case the longest";
  EXPECT_EQ(longest->size(), 309u + 102 + 1 + 4096) << "case the longest";
}

// What a number-only formatter can not answer, refused by name.
TEST(PythonFormatTest, RefusesFieldsItCanNotFormat) {
  struct Case {
    std::string name;
    std::string format_string;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"conversion", "{0[a]!r}",
       "field '0[a]': conversion '!r' is not supported"},
      {"attribute", "{0[a].real}", "field '0[a].real': attributes are not"},
      {"the mapping", "{0}", "field '0': formatting the mapping itself"},
  };
  const PythonMapping mapping = {{"a", PythonNumber::Float(0.5)}};
  for (const Case& c : cases) {
    StatusOr<std::string> got = FormatPythonTemplate(c.format_string, mapping);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(_, HasSubstr(c.want))) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim
