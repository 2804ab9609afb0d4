// Tests of RenderValue / RenderString: exact spellings (including every
// spelling tests/data/conformance/vertex_args.json accepts), and a property
// test: ParseOverrideValue(RenderValue(v)) == v over many generated values.
#include "trialshim/config/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

Node S(std::string s) { return Node::String(std::move(s)); }

struct RenderCase {
  const char* name;
  Node value;
  const char* want;
};

TEST(RenderTest, ExactSpellings) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<RenderCase> cases = {
      {"null", Node::Null(), "null"},
      {"true", Node::Bool(true), "true"},
      {"int", Node::Int(64), "64"},
      {"int_min", Node::Int(std::numeric_limits<int64_t>::min()),
       "-9223372036854775808"},
      {"float_short", Node::Double(0.1), "0.1"},
      {"float_integral", Node::Double(3.0), "3.0"},
      {"float_small", Node::Double(1e-5), "1e-05"},
      {"float_big", Node::Double(1e16), "1e+16"},
      {"float_neg_zero", Node::Double(-0.0), "-0.0"},
      {"inf", Node::Double(inf), "inf"},
      {"neg_inf", Node::Double(-inf), "-inf"},
      {"nan", Node::Double(std::nan("")), "nan"},
      {"plain", S("relu"), "relu"},
      {"empty", S(""), "''"},
      {"comma", S("a,b"), "'a,b'"},
      {"equals", S("epoch=3.ckpt"), "'epoch=3.ckpt'"},
      {"unicode", S("日本"), "'日本'"},
      {"leading_zero_stays_bare", S("01"), "01"},
      {"float_text", S("1e-3"), "'1e-3'"},
      {"bool_text", S("true"), "'true'"},
      {"bool_text_caps", S("True"), "'True'"},
      {"null_text", S("null"), "'null'"},
      {"nan_text", S("nan"), "'nan'"},
      {"int_text", S("100"), "'100'"},
      {"plus_int_text", S("+5"), "'+5'"},
      {"None_is_a_string", S("None"), "None"},
      {"path", S("gs://bucket/path"), "gs://bucket/path"},
      {"windows_path", S("c:\\dir\\f.txt"), "c:\\dir\\f.txt"},
      {"inner_space", S("a b"), "a b"},
      {"leading_space", S(" x"), "' x'"},
      {"trailing_space", S("x "), "'x '"},
      {"interpolation", S("${a.b}"), "${a.b}"},
      {"interpolation_comma", S("${oc.env:HOME,/tmp}"), "${oc.env:HOME,/tmp}"},
      {"interpolation_nested", S("${a:{b:c}}"), "'${a:{b:c}}'"},
      {"single_quote_inside", S("it's"), "\"it's\""},
      {"double_quote_inside", S("say \"hi\""), "'say \"hi\"'"},
      {"both_quotes", S("a'b\"c"), "'a\\'b\"c'"},
      // Hydra keeps the override's text where OmegaConf parses it: a quote
      // escaped inside ${...} would be refused there (issue 28.3).
      {"interpolation_with_both_quotes", S("${foo:'x'}\""),
       "\"${foo:'x'}\\\"\""},
      {"text_and_interpolation_with_both_quotes", S("it's ${foo:'x'} \"q\""),
       "\"it's ${foo:'x'} \\\"q\\\"\""},
      {"trailing_backslash", S("dir\\"), "dir\\"},
      {"trailing_backslash_quoted", S("a b,\\"), "'a b,\\\\'"},
      {"hash", S("a#b"), "'a#b'"},
      {"tilde", S("~x"), "'~x'"},
      {"dash", S("-x"), "-x"},
      {"list",
       Node::MakeList({Node::Int(1), S("a,b"), Node::MakeMap({{"k", S("v")}})}),
       "[1,'a,b',{k:v}]"},
      // In a list "\\" before ',' or ']' would be an escape: quoted there.
      {"list_trailing_backslash", Node::MakeList({S("dir\\"), S("a")}),
       "['dir\\\\',a]"},
      {"empty_list", Node::MakeList({}), "[]"},
      {"empty_dict", Node::MakeMap({}), "{}"},
      {"dict_escaped_key",
       Node::MakeMap({{"a:b", Node::Int(1)}, {"x y", Node::Int(2)}}),
       "{a\\:b:1,x y:2}"},
  };
  for (const RenderCase& c : cases) {
    EXPECT_EQ(RenderValue(c.value), c.want) << "case " << c.name;
    StatusOr<Node> back = ParseOverrideValue(RenderValue(c.value));
    ASSERT_TRUE(back.ok()) << "case " << c.name << ": "
                           << back.status().message();
    EXPECT_EQ(*back, c.value) << "case " << c.name;
    if (c.value.is_string()) {
      EXPECT_EQ(RenderString(c.value.AsString()), c.want) << "case " << c.name;
    }
  }
}

// Every string slot of vertex_args.json: "key=" + RenderString(value) must
// be one of the spellings Hydra was seen to accept for it.
TEST(RenderTest, VertexConformanceSpellings) {
  std::ifstream in(std::string(TRIALSHIM_TEST_DATA_DIR) +
                   "/conformance/vertex_args.json");
  ASSERT_TRUE(in);
  nlohmann::json cases = nlohmann::json::parse(in);
  int checked = 0;
  for (const auto& c : cases) {
    const std::string name = c["name"];
    if (c["argv"].size() != c["expect"].size()) continue;
    for (size_t i = 0; i < c["argv"].size(); ++i) {
      std::string arg = c["argv"][i];
      size_t eq = arg.find('=');
      if (arg.rfind("--", 0) != 0 || eq == std::string::npos) continue;
      std::string key = arg.substr(2, eq - 2), value = arg.substr(eq + 1);
      std::vector<std::string> any_of = c["expect"][i]["any_of"];
      // Only slots whose intended value is this very string.
      StatusOr<Override> intended = ParseOverride(any_of[0]);
      if (!intended.ok() || !intended->value || *intended->value != S(value))
        continue;
      std::string rendered = intended->key_or_group + "=" + RenderString(value);
      EXPECT_NE(std::find(any_of.begin(), any_of.end(), rendered), any_of.end())
          << "case " << name << ": rendered " << rendered;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8);
}

// ---- property test ----

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string NastyString() {
    static const std::vector<std::string> kPieces = {"a",      "Z",
                                                     "_",      "x1",
                                                     "0",      "01",
                                                     "1",      "-",
                                                     "+",      "~",
                                                     ".",      "/",
                                                     ":",      ",",
                                                     "=",      " ",
                                                     "\t",     "\\",
                                                     "\\\\",   "'",
                                                     "\"",     "\\'",
                                                     "\\\"",   "(",
                                                     ")",      "[",
                                                     "]",      "{",
                                                     "}",      "${x}",
                                                     "${a.b}", "${",
                                                     "$",      "#",
                                                     ";",      "&",
                                                     "!",      "^",
                                                     "`",      "<",
                                                     ">",      "%",
                                                     "*",      "@",
                                                     "?",      "|",
                                                     "日本",   "é",
                                                     "ü",      "nan",
                                                     "inf",    "True",
                                                     "null",   "None",
                                                     "true",   "1e-3",
                                                     "1_0",    "-1",
                                                     "0.5",    "e5",
                                                     "\n",     "${oc.env:A,b}",
                                                     "\\${x}", "key=",
                                                     "a,b"};
    static const std::vector<std::string> kWhole = {
        "",       " ",     "nan",  "NaN",  "-inf",  "True", "false",
        "null",   "NULL",  "None", "1e-3", "01",    "007",  "+5",
        "-0",     "1_000", "~x",   "+x",   "-x",    "${x}", "\\",
        "'",      "\"",    "''",   "a\\",  "a\\\\", "'a'",  " lead",
        "trail ", "\ttab", "0x10", "1.",   ".5"};
    if (Pick(5) == 0) return kWhole[Pick(static_cast<int>(kWhole.size()))];
    std::string s;
    int n = 1 + Pick(6);
    for (int i = 0; i < n; ++i) {
      if (Pick(4) == 0) {
        s += static_cast<char>(32 + Pick(95));  // any printable ASCII
      } else {
        s += kPieces[Pick(static_cast<int>(kPieces.size()))];
      }
    }
    return s;
  }

  // Keys Hydra's dict syntax can spell (no quotes in keys): words with
  // escapable punctuation inside.
  std::string Key() {
    static const char kFirst[] = "abcxyzABC_";
    static const char kRest[] = "abz09_-.,: =()[]{}/+%*@?|";
    std::string k(1, kFirst[Pick(sizeof kFirst - 1)]);
    int n = Pick(6);
    for (int i = 0; i < n; ++i) k += kRest[Pick(sizeof kRest - 1)];
    while (k.back() == ' ') k.pop_back();
    return k;
  }

  int64_t Int() {
    static const int64_t kEdges[] = {0,
                                     1,
                                     -1,
                                     7,
                                     100,
                                     1000000,
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::max() - 1,
                                     std::numeric_limits<int64_t>::min() + 1};
    if (Pick(2) == 0) return kEdges[Pick(10)];
    return static_cast<int64_t>(rng_());
  }

  double Double() {
    static const double kEdges[] = {0.0,
                                    -0.0,
                                    0.1,
                                    1e-5,
                                    1e16,
                                    1e22,
                                    123.0,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::nan(""),
                                    std::numeric_limits<double>::denorm_min(),
                                    -std::numeric_limits<double>::denorm_min(),
                                    std::numeric_limits<double>::min(),
                                    std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::lowest(),
                                    2.2250738585072009e-308};
    if (Pick(3) == 0) return kEdges[Pick(16)];
    uint64_t bits = rng_();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  Node Value(int depth) {
    int kind = Pick(depth < 3 ? 8 : 6);
    switch (kind) {
      case 0:
        return Node::Null();
      case 1:
        return Node::Bool(Pick(2) == 1);
      case 2:
        return Node::Int(Int());
      case 3:
        return Node::Double(Double());
      case 4:
      case 5:
        return Node::String(NastyString());
      case 6: {
        Node::List items;
        for (int i = Pick(4); i > 0; --i) items.push_back(Value(depth + 1));
        return Node::MakeList(std::move(items));
      }
      default: {
        Node m = Node::MakeMap({});
        for (int i = Pick(4); i > 0; --i) m.Set(Key(), Value(depth + 1));
        return m;
      }
    }
  }

 private:
  std::mt19937 rng_;
};

// A readable form of a value for failure messages.
std::string Describe(const Node& n) {
  switch (n.type()) {
    case Node::Type::kString:
      return "str" + nlohmann::json(n.AsString()).dump();
    case Node::Type::kList: {
      std::string out = "[";
      for (const Node& x : n.AsList()) out += Describe(x) + ", ";
      return out + "]";
    }
    case Node::Type::kMap: {
      std::string out = "{";
      for (const auto& [k, v] : n.AsMap())
        out += nlohmann::json(k).dump() + ": " + Describe(v) + ", ";
      return out + "}";
    }
    default:
      return std::string(n.type_name()) + " " + RenderValue(n);
  }
}

// Node equality treats -0.0 == 0.0; the renderer must keep the sign too.
bool SameSigns(const Node& a, const Node& b) {
  if (a.is_double() && b.is_double()) {
    return std::signbit(a.AsDouble()) == std::signbit(b.AsDouble()) ||
           std::isnan(a.AsDouble());
  }
  if (a.is_list()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameSigns(a.AsList()[i], b.AsList()[i])) return false;
    }
  }
  if (a.is_map()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameSigns(a.AsMap()[i].second, b.AsMap()[i].second)) return false;
    }
  }
  return true;
}

TEST(RenderTest, PropertyParseOfRenderIsIdentity) {
  constexpr int kValues = 30000;
  Generator gen(20240601);
  int strings = 0;
  for (int i = 0; i < kValues; ++i) {
    Node v = gen.Value(0);
    if (v.is_string()) ++strings;
    std::string text = RenderValue(v);
    StatusOr<Node> back = ParseOverrideValue(text);
    ASSERT_TRUE(back.ok()) << "case #" << i << ": rendered [" << text
                           << "]: " << back.status().message();
    ASSERT_EQ(*back, v) << "case #" << i << ": rendered [" << text
                        << "]\n  want " << Describe(v) << "\n  got  "
                        << Describe(*back);
    ASSERT_TRUE(SameSigns(*back, v))
        << "case #" << i << ": rendered [" << text << "]";
    // The rendering also works as a whole override, unless the value is bad
    // interpolation syntax, which Hydra refuses as it merges it (issue 14.2).
    StatusOr<Override> o = ParseOverride("k=" + text);
    if (!CheckInterpolationSyntax(v).ok()) {
      ASSERT_FALSE(o.ok()) << "case #" << i << ": rendered [" << text << "]";
      EXPECT_THAT(o, StatusIs(_, HasSubstr("GrammarParseError")))
          << "case #" << i;
      continue;
    }
    ASSERT_TRUE(o.ok()) << "case #" << i << ": " << o.status().message();
    ASSERT_EQ(*o->value, v) << "case #" << i << ": rendered [" << text << "]";
  }
  EXPECT_GT(strings, kValues / 5);
}

TEST(RenderTest, StringsThatLookLikeOtherTypesStayStrings) {
  for (const char* s :
       {"1",     "-1",     "1.5",         "1e5",   "inf", "-INF", "NaN", "true",
        "FALSE", "null",   "Null",        "1_000", "+1",  ".5",   "5.",  "[1]",
        "{a:1}", "int(1)", "choice(a,b)", "a,b",   "x=1", ""}) {
    std::string r = RenderString(s);
    StatusOr<Node> back = ParseOverrideValue(r);
    ASSERT_TRUE(back.ok()) << "case " << s << ": " << back.status().message();
    EXPECT_EQ(*back, S(s)) << "case " << s << ": rendered " << r;
  }
}

}  // namespace
}  // namespace trialshim::config
