// Tests for ResolveAll / ResolvePath. Every expectation was checked against
// OmegaConf with
//   OmegaConf.to_container(OmegaConf.create(cfg), resolve=True,
//                          throw_on_missing=True)
// except where a case says "ours" (our own addition to the message); the
// Anchors* tests ask the anchors' omegaconf 2.3.0 again
// (tests/anchors/omegaconf_cases.py), and the tests that ask omegaconf live
// without them ask Debian's python3-omegaconf 2.2 where it says the same.

#include "trialshim/config/interpolation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tests/testutil/omegaconf.h"
#include "tests/testutil/status_matchers.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/yaml_loader.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

class InterpolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TS_V", "42", 1);
    setenv("TS_S", "hello world", 1);
    setenv("TS_L", "[1, 2]", 1);
    unsetenv("TS_NOPE");
  }
};

Node Load(const std::string& yaml, const std::string& name) {
  auto n = LoadYamlString(yaml, "t.yaml");
  EXPECT_TRUE(n.ok()) << name << ": " << n.status().message();
  return n.ok() ? *n : Node();
}

struct ValueCase {
  std::string name;
  std::string config;  // YAML
  std::string key;     // checked in the ResolveAll result
  std::string want;    // YAML flow text of the expected value
};

const std::vector<ValueCase>& ValueCases() {
  static const auto* cases = new std::vector<ValueCase>{
      // References.
      {"absolute", "a:\n  b: 1\nx: ${a.b}\n", "x", "1"},
      {"whole map keeps type", "a:\n  b: 1\nx: ${a}\n", "x", "{b: 1}"},
      {"list by dot", "l: [10, 20]\nx: ${l.1}\n", "x", "20"},
      {"list by bracket", "l: [10, 20]\nx: ${l[1]}\n", "x", "20"},
      {"bracket key", "a:\n  b: 1\nx: ${a[b]}\n", "x", "1"},
      {"bracket first", "a:\n  b: 1\nx: ${[a].b}\n", "x", "1"},
      {"whitespace inside", "a: 1\nx: ${ a }\n", "x", "1"},
      {"float keeps type", "y: 1.0\nx: ${y}\n", "x", "1.0"},
      {"list keeps type", "l: [1, 2]\nx: ${l}\n", "x", "[1, 2]"},
      {"chain", "a: ${b}\nb: ${c}\nc: 3\n", "a", "3"},
      // Relative.
      {"sibling", "a:\n  b:\n    c: 1\n    d: ${.c}\nx: ${a.b.d}\n", "x", "1"},
      {"parent", "a:\n  b:\n    c: 1\n    d: ${..e}\n  e: 5\n", "a.b.d", "5"},
      {"grandparent", "a:\n  b:\n    d: ${...top}\ntop: T\n", "a.b.d", "T"},
      {"relative in list", "l: [1, '${.0}']\n", "l", "[1, 1]"},
      {"relative from list item map", "l:\n- a: 1\n  b: ${..1}\n- 7\n", "l",
       "[{a: 1, b: 7}, 7]"},
      {"subtree resolved at its home",
       "a:\n  b: ${c}\n  e: ${.f}\n  f: 2\nc: 1\nx: ${a}\n", "x",
       "{b: 1, e: 2, f: 2}"},
      // String interpolation.
      {"string concat", "a: 1\nx: v_${a}_${a}\n", "x", "v_1_1"},
      {"two floats", "a: 1.5\nx: ${a}${a}\n", "x", "'1.51.5'"},
      {"python str of bool and None", "a: true\nb: null\nx: ${a}-${b}\n", "x",
       "True-None"},
      {"python str of list", "l: [1, 2]\nx: str_${l}\n", "x", "'str_[1, 2]'"},
      {"python str of dict", "d:\n  k: v\n  n: 1\nx: str_${d}\n", "x",
       "\"str_{'k': 'v', 'n': 1}\""},
      {"python repr picks quotes", "d:\n  k: \"it's\"\nx: s_${d}\n", "x",
       "\"s_{'k': \\\"it's\\\"}\""},
      {"python str of small float", "y: 1.0e-05\nx: v${y}\n", "x", "v1e-05"},
      {"python str of inf", "y: .inf\nx: ${y}${y}\n", "x", "infinf"},
      {"dollar alone", "x: $a\n", "x", "$a"},
      // Nested.
      {"nested key", "k: a\na: 7\nx: ${${k}}\n", "x", "7"},
      {"nested segment", "k: b\na:\n  b: 3\nx: ${a.${k}}\n", "x", "3"},
      // Escapes.
      {"escaped", "x: \\${a}\n", "x", "${a}"},
      {"escaped then real", "x: a\\${b}c${d}\nd: 1\n", "x", "a${b}c1"},
      {"escaped backslash", "a: 1\nx: \\\\${a}\n", "x", "'\\1'"},
      {"escaped backslash and escape", "a: 1\nx: \\\\\\${a}\n", "x",
       "'\\${a}'"},
      {"four backslashes", "d: 1\nx: a\\\\\\\\${d}\n", "x", "'a\\\\1'"},
      {"backslashes elsewhere kept", "d: 1\nx: a\\\\b${d}\\\\\n", "x",
       "'a\\\\b1\\\\'"},
      {"no interpolation untouched", "x: a\\\\b\n", "x", "'a\\\\b'"},
      // oc.env.
      {"env", "x: ${oc.env:TS_V}\n", "x", "'42'"},
      {"env default", "x: ${oc.env:TS_NOPE,dflt}\n", "x", "dflt"},
      {"env default null", "x: ${oc.env:TS_NOPE,null}\n", "x", "null"},
      {"env default int becomes str", "x: ${oc.env:TS_NOPE,5}\n", "x", "'5'"},
      {"env default quoted", "x: ${oc.env:TS_NOPE,'5'}\n", "x", "'5'"},
      {"env set ignores default", "x: ${oc.env:TS_V, 'd'}\n", "x", "'42'"},
      {"env args trimmed", "x: '${ oc.env : TS_V }'\n", "x", "'42'"},
      {"env quoted name", "x: ${oc.env:'TS_V'}\n", "x", "'42'"},
      {"env in string", "a: 1\nx: ${oc.env:TS_S}_${a}\n", "x", "hello world_1"},
      {"env concat", "x: ${oc.env:TS_V}0\n", "x", "'420'"},
      {"env list default is its text", "x: ${oc.env:TS_NOPE,[1, a]}\n", "x",
       "\"[1, 'a']\""},
      {"env dict default is its text", "x: '${oc.env:TS_NOPE,{a: 1}}'\n", "x",
       "\"{'a': 1}\""},
      // oc.decode.
      {"decode int", "x: ${oc.decode:${oc.env:TS_V}}\n", "x", "42"},
      {"decode list", "x: ${oc.decode:${oc.env:TS_L}}\n", "x", "[1, 2]"},
      {"decode dict", "x: \"${oc.decode:'{a: 1, b: [x]}'}\"\n", "x",
       "{a: 1, b: [x]}"},
      {"decode float", "x: ${oc.decode:'1.5'}\n", "x", "1.5"},
      {"decode bool", "x: ${oc.decode:'true'}\n", "x", "true"},
      {"decode null", "x: ${oc.decode:'null'}\n", "x", "null"},
      {"decode null arg", "x: ${oc.decode:null}\n", "x", "null"},
      {"decode word", "x: ${oc.decode:'hello'}\n", "x", "hello"},
      {"decode keeps spaces", "x: ${oc.decode:' 12 '}\n", "x", "' 12 '"},
      {"decode underscores", "x: ${oc.decode:'1_000'}\n", "x", "1000"},
      {"decode inf", "x: ${oc.decode:'inf'}\n", "x", ".inf"},
      {"decode exponent", "x: ${oc.decode:'-1e3'}\n", "x", "-1000.0"},
      {"decode 010 is str", "x: ${oc.decode:'010'}\n", "x", "'010'"},
      {"decode quoted", "x: ${oc.decode:'\"q\"'}\n", "x", "q"},
      {"decode list mixed", "x: ${oc.decode:\"[1,  'a b' , 2.5]\"}\n", "x",
       "[1, a b, 2.5]"},
      {"decode sees config", "a: 1\nx: ${oc.decode:'${a}'}\n", "x", "1"},
      {"decode nested interp", "x: ${oc.decode:'[1, ${y}]'}\ny: 3\n", "x",
       "[1, 3]"},
      {"decode trailing backslash", "x: ${oc.decode:'a\\\\'}\n", "x", "'a\\'"},
      {"decode empty dict", "x: ${oc.decode:'{}'}\n", "x", "{}"},
      {"decode empty list", "x: ${oc.decode:'[]'}\n", "x", "[]"},
      // oc.select.
      {"select", "a: 1\nx: ${oc.select:a,2}\n", "x", "1"},
      {"select default", "x: ${oc.select:nope,2}\n", "x", "2"},
      {"select no default", "x: ${oc.select:nope}\n", "x", "null"},
      {"select relative", "a:\n  x: ${oc.select:.y}\n  y: 5\n", "a.x", "5"},
      {"select default interp", "x: ${oc.select:nope,${y}}\ny: 3\n", "x", "3"},
      {"select quoted default", "x: ${oc.select:nope,'default value'}\n", "x",
       "default value"},
      {"select follows interp", "x: ${oc.select:y}\ny: ${z}\nz: 3\n", "x", "3"},
      {"select nested key", "a: x\nx: ${oc.select:${a}_b,none}\n", "x", "none"},
      // oc.create.
      {"create dict", "x: '${oc.create:{a: 1}}'\n", "x", "{a: 1}"},
      {"create list", "x: ${oc.create:[1, 2]}\n", "x", "[1, 2]"},
      {"create yaml", "x: \"${oc.create:'a: 1'}\"\n", "x", "{a: 1}"},
      {"create with interp", "x: '${oc.create:{a: ${y}}}'\ny: 4\n", "x",
       "{a: 4}"},
      {"create from node", "x: ${oc.create:${y}}\ny:\n  k: 1\n", "x", "{k: 1}"},
      {"create then index", "x: ${y.1}\ny: ${oc.create:[a, b]}\n", "x", "b"},
      // oc.dict.
      {"dict keys", "d:\n  a: 1\n  b: 2\nx: ${oc.dict.keys:d}\n", "x",
       "[a, b]"},
      {"dict keys empty", "x: ${oc.dict.keys:y}\ny: {}\n", "x", "[]"},
      {"dict keys of parent", "a:\n  x: ${oc.dict.keys:.}\n  y: 5\n", "a.x",
       "[x, y]"},
      {"dict values resolved",
       "d:\n  a: 1\n  b: ${c}\nc: 9\nx: ${oc.dict.values:d}\n", "x", "[1, 9]"},
      // oc.deprecated: select_node(_parent_, key, absolute_key=True), so a
      // leading dot starts at the caller's parent, as in ${.c}.
      {"deprecated absolute", "a:\n  b: ${oc.deprecated:c}\nc: 2\n", "a.b",
       "2"},
      {"deprecated sibling", "a:\n  b: ${oc.deprecated:.c}\n  c: 1\n", "a.b",
       "1"},
      {"deprecated at the root", "b: ${oc.deprecated:.c}\nc: 1\n", "b", "1"},
      {"deprecated two dots", "a:\n  x:\n    b: ${oc.deprecated:..c}\n  c: 2\n",
       "a.x.b", "2"},
      {"deprecated three dots",
       "c: 3\na:\n  x:\n    b: ${oc.deprecated:...c}\n", "a.x.b", "3"},
      {"deprecated relative nested",
       "a:\n  b: ${oc.deprecated:.c.d}\n  c:\n    d: 9\n", "a.b", "9"},
      {"deprecated relative list index",
       "a:\n  b: ${oc.deprecated:.l.1}\n  l: [5, 6]\n", "a.b", "6"},
      {"deprecated relative follows interp",
       "a:\n  b: ${oc.deprecated:.c}\n  c: ${.d}\n  d: 4\n", "a.b", "4"},
      {"deprecated relative with message",
       "a:\n  b: '${oc.deprecated:.c,\"use a.c\"}'\n  c: 1\n", "a.b", "1"},
      {"deprecated relative in a string",
       "a:\n  b: x${oc.deprecated:.c}\n  c: 1\n", "a.b", "x1"},
  };
  return *cases;
}

TEST_F(InterpolationTest, ResolvesLikeOmegaConf) {
  for (const ValueCase& c : ValueCases()) {
    Node cfg = Load(c.config, c.name);
    auto got = ResolveAll(cfg);
    ASSERT_OK(got) << "case " << c.name;
    const Node* v = got->Find(c.key);
    ASSERT_NE(v, nullptr) << "case " << c.name;
    Node want = *Load("v: " + c.want + "\n", c.name).Get("v");
    EXPECT_EQ(*v, want) << "case " << c.name << ": got " << ToJson(*v, -1)
                        << ", want " << ToJson(want, -1);
  }
}

struct ErrorCase {
  std::string name;
  std::string config;
  std::vector<std::string> want;  // substrings of the message
};

const std::vector<ErrorCase>& ErrorCases() {
  static const auto* cases = new std::vector<ErrorCase>{
      {"missing key",
       "x: ${a.nope}\n",
       {"Interpolation key 'a.nope' not found", "full_key: x",
        "object_type=dict", "t.yaml:1:4: "}},
      {"missing nested key",
       "a:\n  b: 1\nx:\n  y: ${a.nope}\n",
       {"Interpolation key 'a.nope' not found", "full_key: x.y",
        "t.yaml:4:6: "}},
      {"list index out of range",
       "l: [1, 2]\nx: ${l.5}\n",
       {"Interpolation key 'l.5' not found"}},
      {"list index not int",
       "l: [1, 2]\nx: ${l.a}\n",
       {"Index 'a' (str) is not an int"}},
      {"scalar is not a container",
       "a: 1\nx: ${a.b}\n",
       {"Error trying to access a.b: node `a` is not a container and thus "
        "cannot contain `b`"}},
      {"above the root",
       "a:\n  b:\n    d: ${....top}\n",
       {"Error resolving key '....top'", "full_key: a.b.d"}},
      {"mandatory missing",
       "c: ???\n",
       {"Missing mandatory value: c", "full_key: c"}},
      {"interpolation to missing",
       "x: ${y}\ny: ???\n",
       {"MissingMandatoryValue while resolving interpolation: Missing "
        "mandatory value: y",
        "full_key: x"}},
      {"missing through a chain",
       "p:\n  q: ${r.s}\nr:\n  s: ${t}\nt: ???\n",
       {"Missing mandatory value: t", "full_key: p.q",
        "while resolving: p.q -> r.s"}},  // the chain line is ours
      {"missing in string interpolation",
       "x: pre ${y} post\ny: ???\n",
       {"Missing mandatory value: y", "full_key: x"}},
      {"self reference",
       "a: ${a}\n",
       {"Recursive interpolation detected: a -> a", "full_key: a"}},
      {"two-cycle",
       "a: ${b}\nb: ${a}\n",
       {"Recursive interpolation detected: a -> b -> a"}},
      {"three-cycle",
       "a: ${b}\nb: ${c}\nc: ${a}\n",
       {"Recursive interpolation detected: a -> b -> c -> a"}},
      {"nested cycle",
       "p:\n  q: ${r.s}\nr:\n  s: ${p.q}\n",
       {"Recursive interpolation detected: p.q -> r.s -> p.q",
        "full_key: p.q"}},
      {"container cycle",
       "a:\n  b: ${a}\n",
       {"Recursive interpolation detected: a -> a.b -> a"}},
      {"unknown resolver",
       "x: ${foo:1}\n",
       {"Unsupported interpolation type foo", "oc.env", "oc.decode",
        "full_key: x"}},
      {"unknown nested resolver name",
       "x: ${ns.${n}:1}\nn: env\n",
       {"Unsupported interpolation type ns.env"}},
      {"env unset",
       "x: ${oc.env:TS_NOPE}\n",
       {"Environment variable 'TS_NOPE' not found", "full_key: x"}},
      {"env no args", "x: ${oc.env:}\n", {"oc.env takes (key[, default])"}},
      {"decode int arg",
       "x: ${oc.decode:5}\n",
       {"`oc.decode` can only take strings or None as input, but `5` is of "
        "type int"}},
      {"decode bad text",
       "x: ${oc.decode:'a,b'}\n",
       {"GrammarParseError", "expected the end of the value"}},
      {"decode unclosed",
       "v: ${oc.decode:'[1, 2'}\n",
       {"GrammarParseError", "expected ',' or ']'", "(column 6)",
        "full_key: v"}},
      {"decode leading space before list",
       "x: ${oc.decode:'  [1, 2]  '}\n",
       {"GrammarParseError"}},
      {"decode empty", "x: ${oc.decode:''}\n", {"GrammarParseError"}},
      {"decode missing key",
       "x: ${oc.decode:'${nope}'}\n",
       {"Interpolation key 'nope' not found"}},
      {"dict keys missing",
       "d:\n  a: 1\nx: ${oc.dict.keys:nope}\n",
       {"Key not found: 'nope'"}},
      {"dict keys of list",
       "l: [1]\nx: ${oc.dict.keys:l}\n",
       {"`oc.dict.keys` cannot be applied to objects of type: ListConfig"}},
      {"unterminated",
       "x: ${a\n",
       {"GrammarParseError", "unterminated interpolation '${a'", "(column 4)",
        "    ${a\n       ^", "full_key: x", "t.yaml:1:4: "}},
      {"empty interpolation", "x: ${}\n", {"GrammarParseError"}},
      {"space in key",
       "x: ${a b}\n",
       {"GrammarParseError", "whitespace", "(column 4)"}},
      {"quote in key", "x: ${a.'b'}\n", {"GrammarParseError"}},
      {"unterminated resolver",
       "x: ${oc.env:A\n",
       {"GrammarParseError", "expected ',' or '}'"}},
      {"unterminated quote in args",
       "x: ${oc.env:'A}\n",
       {"GrammarParseError", "closing '"}},
      {"bad char in args", "x: ${oc.env:a#b}\n", {"GrammarParseError"}},
      {"grammar error before lookup",
       "x: ${nope} ${a\n",
       {"GrammarParseError"}},
      {"key interpolation must give a string",
       "k: 1\nx: ${${k}}\n",
       {"should return a string"}},
  };
  return *cases;
}

TEST_F(InterpolationTest, ErrorsNameTheKey) {
  for (const ErrorCase& c : ErrorCases()) {
    Node cfg = Load(c.config, c.name);
    auto got = ResolveAll(cfg);
    ASSERT_FALSE(got.ok()) << "case " << c.name << ": resolved to "
                           << ToJson(*got, -1);
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    for (const std::string& w : c.want) {
      EXPECT_THAT(got, StatusIs(_, HasSubstr(w))) << "case " << c.name;
    }
  }
}

// Both tables through omegaconf 2.3.0: each value must be what it
// resolves today, and each refused config refused by it too.
class AnchorsInterpolationTest : public InterpolationTest {};

TEST_F(AnchorsInterpolationTest, ResolvesTheTablesAsOmegaConf) {
  nlohmann::json input = nlohmann::json::array();
  for (const ValueCase& c : ValueCases()) {
    input.push_back({{"yaml", c.config}, {"key", c.key}});
  }
  for (const ErrorCase& c : ErrorCases()) {
    input.push_back({{"yaml", c.config}, {"key", ""}});
  }
  ASK_ANCHORS_OMEGACONF(live, "resolve", input);
  for (size_t i = 0; i < ValueCases().size(); ++i) {
    const ValueCase& c = ValueCases()[i];
    const nlohmann::ordered_json& r = live.results[i];
    ASSERT_TRUE(r.contains("json")) << c.name << ": " << testing::Outcome(r);
    Node want = *Load("v: " + c.want + "\n", c.name).Get("v");
    EXPECT_EQ(ToJson(want, -1), r["json"])
        << c.name << ": the table is not what omegaconf 2.3.0 resolves";
    StatusOr<Node> got = ResolveAll(Load(c.config, c.name));
    ASSERT_OK(got) << c.name;
    EXPECT_EQ(ToJson(*got->Find(c.key), -1), r["json"]) << c.name;
  }
  for (size_t i = 0; i < ErrorCases().size(); ++i) {
    const ErrorCase& c = ErrorCases()[i];
    const nlohmann::ordered_json& r = live.results[ValueCases().size() + i];
    EXPECT_NE(testing::ErrorType(r), "")
        << c.name << ": omegaconf 2.3.0 resolves it: " << testing::Outcome(r);
  }
}

TEST_F(InterpolationTest, ResolvePathResolvesOneValue) {
  Node cfg = Load(
      "a:\n  b: ${c}\n  l: [x, '${c}']\nc: 3\nbad: ${nope}\nm: ???\n", "t");
  struct Case {
    std::string name, path, want;
  };
  const std::vector<Case> cases = {
      {"scalar", "a.b", "3"},
      {"map", "a", "{b: 3, l: [x, 3]}"},
      {"list item by bracket", "a.l[1]", "3"},
      {"list item by dot", "a.l.1", "3"},
      {"plain", "c", "3"},
  };
  for (const Case& c : cases) {
    auto got = ResolvePath(cfg, c.path);
    ASSERT_OK(got) << "case " << c.name;
    Node want = *Load("v: " + c.want + "\n", c.name).Get("v");
    EXPECT_EQ(*got, want) << "case " << c.name << ": " << ToJson(*got, -1);
  }
  auto missing = ResolvePath(cfg, "a.nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto bad = ResolvePath(cfg, "bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad, StatusIs(_, HasSubstr("full_key: bad")));
  auto m = ResolvePath(cfg, "m");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m, StatusIs(_, HasSubstr("Missing mandatory value: m")));
}

TEST_F(InterpolationTest, ResolveAllKeepsOrderAndLeavesPlainValues) {
  Node cfg =
      Load("z: ${a}\na: 1\nm: {k: [1, 2.5, null, true]}\ns: plain\n", "t");
  auto got = ResolveAll(cfg);
  ASSERT_OK(got);
  EXPECT_EQ(ToJson(*got, -1),
            "{\"z\": 1, \"a\": 1, \"m\": {\"k\": [1, 2.5, null, true]}, "
            "\"s\": \"plain\"}");
}

// Pathological inputs are errors, never a stack overflow.
TEST_F(InterpolationTest, PathologicalInputsAreBounded) {
  struct Case {
    std::string name;
    std::string config;
    std::string want;
  };
  std::string chain;
  for (int i = 0; i < 5000; ++i) {
    chain += "k" + std::to_string(i) + ": ${k" + std::to_string(i + 1) + "}\n";
  }
  chain += "k5000: end\n";
  std::string nested = "x: ";
  for (int i = 0; i < 10000; ++i) nested += "${";
  nested += "a";
  for (int i = 0; i < 10000; ++i) nested += "}";
  std::string brackets = "x: \"${oc.decode:" + std::string(10000, '[') +
                         std::string(10000, ']') + "}\"";
  const std::vector<Case> cases = {
      {"5000-link chain", chain, "interpolation chain longer than 256"},
      {"10000 nested interpolations", nested + "\n", "nested more than 64"},
      {"10000 nested lists", brackets + "\n", "nested more than 64"},
  };
  for (const Case& c : cases) {
    Node cfg = Load(c.config, c.name);
    auto got = ResolveAll(cfg);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(_, HasSubstr(c.want))) << "case " << c.name;
  }
  // Repetition grows exponentially: 40^5 bytes (100 MB) at 'f' from a 1 KB
  // file. The 64 MiB cap fails it, naming the key and the file.
  std::string bomb = "a: x\n";
  for (char k = 'b'; k <= 'g'; ++k) {
    bomb += std::string(1, k) + ": ";
    for (int i = 0; i < 40; ++i) bomb += "${" + std::string(1, k - 1) + "}";
    bomb += "\n";
  }
  auto exploded = ResolveAll(Load(bomb, "string bomb"));
  ASSERT_FALSE(exploded.ok());
  EXPECT_EQ(exploded.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& want :
       {std::string("t.yaml:6:4: the value of 'f' resolves to a string"),
        std::string("more than the 67108864 (64 MiB) allowed"),
        std::string("full_key: f")}) {
    EXPECT_THAT(exploded, StatusIs(_, HasSubstr(want)))
        << "case string bomb";
  }
  // 40^4 bytes (2.5 MB) is fine.
  auto e = ResolvePath(Load(bomb, "string bomb"), "e");
  ASSERT_OK(e);
  EXPECT_EQ(e->AsString().size(), 40u * 40 * 40 * 40);

  // A long chain within the limit resolves.
  std::string ok_chain;
  for (int i = 0; i < 200; ++i) {
    ok_chain +=
        "k" + std::to_string(i) + ": ${k" + std::to_string(i + 1) + "}\n";
  }
  ok_chain += "k200: end\n";
  auto got = ResolveAll(Load(ok_chain, "ok chain"));
  ASSERT_OK(got);
  EXPECT_EQ(*got->Get("k0"), Node::String("end"));
}

// OmegaConf.resolve, as Hydra's `--cfg job --resolve` runs it, on each
// case (omegaconf_cases.py's `keep`), against ResolveAll with `keep_missing`.
struct ResolveCase {
  const char* name;
  std::string yaml;
  bool keep_missing;
};

const std::vector<ResolveCase>& ResolveCases() {
  static const auto* cases = new std::vector<ResolveCase>{
      // Issue 14.1: OmegaConf.resolve keeps "???" and turns a value that
      // needs a missing one into "???".
      {"missing stays", "a: ???\nb: 1\nc: ${b}\n", true},
      {"nested and in a list", "d:\n  e: ???\nl:\n- ???\n- ${b}\nb: 2\n", true},
      {"interpolation to missing", "a: ???\nx: ${a}\n", true},
      {"string interpolation of missing", "a: ???\nx: pre_${a}_post\n", true},
      {"through a chain", "p: ${q}\nq: ${r}\nr: ???\n", true},
      {"a node holding missing", "a:\n  b: ???\n  c: 1\nx: ${a}\n", true},
      // It stores each result back and parses it again, so an escaped
      // "\${x" (the text "${x") fails there (ParsesEachResultAgain below).
      {"a result parsed again", "ok: \\${y}\nbad: x\\${y\n", true},
      // Issue 14.6: oc.dict.keys and oc.dict.values follow a key whose value
      // is itself an interpolation.
      {"dict resolvers follow an interpolated key",
       "d:\n  a: 1\n  b: ${y}\ny:\n  k: 2\nw: ${d}\n"
       "ks: ${oc.dict.keys:d}\nvs: ${oc.dict.values:d}\n"
       "wk: ${oc.dict.keys:w}\nwv: ${oc.dict.values:w}\n",
       false},
      // Issue 14.6: oc.deprecated gives the value at the new key (its
      // UserWarning is not shown: a library prints nothing).
      {"oc.deprecated",
       "new:\n  a: 1\nold: ${oc.deprecated:new}\n"
       "old2: '${oc.deprecated:new.a,\"use new.a\"}'\n",
       false},
  };
  return *cases;
}

nlohmann::json ResolveInput() {
  nlohmann::json input = nlohmann::json::array();
  for (const ResolveCase& c : ResolveCases()) input.push_back(c.yaml);
  return input;
}

void ExpectResolvedAs(const testing::OmegaConfAnswer& omegaconf) {
  for (size_t i = 0; i < ResolveCases().size(); ++i) {
    const ResolveCase& c = ResolveCases()[i];
    const nlohmann::ordered_json& want = omegaconf.results[i];
    ResolveOptions options;
    options.keep_missing = c.keep_missing;
    StatusOr<Node> got = ResolveAll(Load(c.yaml, c.name), options);
    if (want.is_string()) {
      ASSERT_OK(got) << c.name;
      EXPECT_EQ(ToYaml(*got), want) << c.name;
    } else {
      ASSERT_FALSE(got.ok()) << c.name << ": omegaconf " << omegaconf.version
                             << " refuses it: " << testing::Outcome(want);
      EXPECT_THAT(got, StatusIs(_, HasSubstr(testing::ErrorType(want))))
          << c.name;
    }
  }
}

TEST(ResolveAll, ResolvesAsOmegaConfResolve) {
  ASK_DEBIAN_OMEGACONF(debian, "keep", ResolveInput());
  ExpectResolvedAs(debian);
}

TEST(AnchorsResolveAll, ResolvesAsOmegaConfResolve) {
  ASK_ANCHORS_OMEGACONF(live, "keep", ResolveInput());
  ExpectResolvedAs(live);
}

TEST(ResolveAllKeepMissing, WithoutItAMissingValueIsAnError) {
  for (const ResolveCase& c : ResolveCases()) {
    if (c.yaml.find("???") == std::string::npos) continue;
    EXPECT_FALSE(ResolveAll(Load(c.yaml, c.name)).ok()) << c.name;
  }
}

// An escaped "\${x" read as a value is the text "${x"; resolved in place
// (keep_missing, as OmegaConf.resolve) it is parsed again and refused.
TEST(ResolveAllKeepMissing, ParsesEachResultAgainAsOmegaConfResolveDoes) {
  const std::string yaml = "ok: \\${y}\nbad: x\\${y\n";
  ResolveOptions keep;
  keep.keep_missing = true;
  StatusOr<Node> got = ResolveAll(Load(yaml, "unescaped"), keep);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "t.yaml:2:6: GrammarParseError: unterminated interpolation '${y', "
            "expected '}' (column 5)\n"
            "    x${y\n"
            "        ^\n"
            "    full_key: bad\n"
            "    object_type=dict");
  StatusOr<Node> read = ResolveAll(Load(yaml, "unescaped"));
  ASSERT_OK(read);
  EXPECT_EQ(*read->Get("bad"), Node::String("x${y"));
  EXPECT_EQ(*read->Get("ok"), Node::String("${y}"));
}

// ${now:...} resolves once per pattern in a cache the caller may share
// (ResolveOptions::now), as Hydra copies a multirun's resolver cache into
// every job's config: a time given there is the one every resolution sees.
TEST(ResolveAll, NowComesFromTheSharedCache) {
  std::map<std::string, Node> now = {{"%H-%M-%S", Node::String("01-02-03")}};
  ResolveOptions options;
  options.now = &now;
  StatusOr<Node> got =
      ResolveAll(Load("t: ${now:%H-%M-%S}\ny: ${now:%Y}\n", "now"), options);
  ASSERT_OK(got);
  EXPECT_EQ(got->Get("t")->AsString(), "01-02-03");
  // A pattern not given yet is added, for the next resolution.
  ASSERT_EQ(now.count("%Y"), 1u);
  EXPECT_EQ(now["%Y"], *got->Get("y"));
}

// oc.deprecated's errors, with OmegaConf's words (omegaconf_cases.py's
// `resolve`: the Anchors* test finds each text in OmegaConf's message).
struct DeprecatedError {
  const char* name;
  std::string yaml;
  std::string message_has;
};

const std::vector<DeprecatedError>& DeprecatedErrors() {
  static const auto* cases = new std::vector<DeprecatedError>{
      {"missing key", "bad: ${oc.deprecated:nope}\n",
       "ConfigKeyError raised while resolving interpolation: In oc.deprecated "
       "resolver at 'bad': Key not found: 'nope'"},
      {"key not a string", "bad2: ${oc.deprecated:1}\n",
       "TypeError raised while resolving interpolation: oc.deprecated: "
       "interpolation key type is not a string (int)"},
      {"missing relative key", "a:\n  b: ${oc.deprecated:.nope}\n  c: 1\n",
       "ConfigKeyError raised while resolving interpolation: In oc.deprecated "
       "resolver at 'a.b': Key not found: '.nope'"},
      // select_node catches the ConfigTypeError of a scalar on the way.
      {"relative key through a scalar",
       "a:\n  b: ${oc.deprecated:.c.d}\n  c: 1\n",
       "ConfigKeyError raised while resolving interpolation: In oc.deprecated "
       "resolver at 'a.b': Key not found: '.c.d'"},
      // _resolve_key_and_root's error, which select_node lets through.
      {"relative key above the root",
       "a:\n  b: ${oc.deprecated:...c}\n  c: 1\n",
       "ConfigKeyError raised while resolving interpolation: Error resolving "
       "key '...c'"},
      {"two dots at the root", "b: ${oc.deprecated:..c}\nc: 1\n",
       "ConfigKeyError raised while resolving interpolation: Error resolving "
       "key '..c'"},
      // ".1" is the float 0.1 to the grammar, not a key.
      {"dot digit is a float", "a: ['${oc.deprecated:.1}', 7]\n",
       "TypeError raised while resolving interpolation: oc.deprecated: "
       "interpolation key type is not a string (float)"},
  };
  return *cases;
}

TEST(ResolveAll, OcDeprecatedErrors) {
  for (const DeprecatedError& c : DeprecatedErrors()) {
    StatusOr<Node> r = ResolveAll(Load(c.yaml, c.name));
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_THAT(r, StatusIs(_, HasSubstr(c.message_has))) << c.name;
  }
}

TEST(AnchorsResolveAll, OcDeprecatedErrorsAreOmegaConfs) {
  nlohmann::json input = nlohmann::json::array();
  for (const DeprecatedError& c : DeprecatedErrors()) {
    input.push_back({{"yaml", c.yaml}, {"key", ""}});
  }
  ASK_ANCHORS_OMEGACONF(live, "resolve", input);
  for (size_t i = 0; i < DeprecatedErrors().size(); ++i) {
    const DeprecatedError& c = DeprecatedErrors()[i];
    const nlohmann::ordered_json& r = live.results[i];
    ASSERT_NE(testing::ErrorType(r), "")
        << c.name << ": omegaconf 2.3.0 resolves it: " << testing::Outcome(r);
    EXPECT_THAT(r["message"].get<std::string>(), HasSubstr(c.message_has))
        << c.name;
  }
}

// Issue 14.6: a list index is read as Python's int() reads it ("1_0" is 10,
// " 3" and "+2" are indices, "1__0" and "0x1" are not). Each case's value
// (or failure) is OmegaConf's own (omegaconf_cases.py's `index`).
const char* const kListIndices[] = {
    "1_0",  "+2", " 3",  "01", "-1",
    "1__0", "_1", "0x1", "1_", "9999999999999999999999"};

void ExpectListIndicesAs(const testing::OmegaConfAnswer& omegaconf) {
  for (size_t i = 0; i < std::size(kListIndices); ++i) {
    const std::string index = kListIndices[i];
    const nlohmann::ordered_json& want = omegaconf.results[i];
    StatusOr<Node> got = ResolveAll(Load(
        "l: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\nx: ${l." + index + "}\n",
        index));
    EXPECT_EQ(got.ok() ? std::to_string(got->Get("x")->AsInt()) : "error",
              want.is_string() ? want.get<std::string>() : "error")
        << "index '" << index << "': omegaconf " << omegaconf.version << ": "
        << testing::Outcome(want);
  }
}

nlohmann::json IndexInput() {
  nlohmann::json input = nlohmann::json::array();
  for (const char* index : kListIndices) input.push_back(index);
  return input;
}

TEST(ResolveAll, ListIndicesAsPythonIntReadsThem) {
  ASK_DEBIAN_OMEGACONF(debian, "index", IndexInput());
  ExpectListIndicesAs(debian);
}

TEST(AnchorsResolveAll, ListIndicesAsPythonIntReadsThem) {
  ASK_ANCHORS_OMEGACONF(live, "index", IndexInput());
  ExpectListIndicesAs(live);
}

// Issue 14.2: OmegaConf parses every string holding "${" when a config is
// created and raises GrammarParseError then. `refused` is what omegaconf
// 2.3.0 does with OmegaConf.create({"a": text}) (omegaconf_cases.py's
// `create`), asked again by the Anchors* test; the other asks Debian's 2.2
// on the cases where it agrees.
struct SyntaxCase {
  const char* text;
  bool refused;
  bool differs_in_2_2 = false;  // omegaconf 2.2 decides the other way
};

const std::vector<SyntaxCase>& SyntaxCases() {
  static const auto* cases = new std::vector<SyntaxCase>{
      {"${dict . a}", true},
      {"${0:1,2,3}", true},
      {"${foo:bar", true},
      {"a${", true},
      {"${x", true},
      {"${foo bar}", true},
      {"${}", true},
      {"${a}${", true},
      {"${a.b", true},
      {"\\\\${x", true},
      {"${.}", true},
      {"${a:'x}", true},
      {"${a:\"x}", true},
      {"x ${ y", true},
      {"${a.}", true},
      {"${a..b}", true},
      {"$foo", false},
      {"\\${x}", false},
      {"\\${x", false},
      {"a\\${", false},
      {"${ x }", false},
      {"x}", false},
      {"${a}}", false},
      {"${oc.env:A,${b}}", false},
      {"${..a}", false},
      {"${a:}", false},
      {"${a:b,}", false},
      {"${[a]}", false},
      {"${a[0]}", false},
      {"$${a}", false},
      {"${${a}}", false},
      {"${a}\\", false},
      {"plain", false},
      {"${-a:1}", true},
      {"${a-b}", false},
      {"${x:a-b}", false},
      // omegaconf 2.3 takes '-' in resolver names after the first character;
      // 2.2 refused it (ID: (CHAR|'_') (CHAR|DIGIT|'_'|'-')* in 2.3's lexer).
      {"${my-res:1}", false, true},
      {"${ns.my-res:x}", false, true},
      {"${my-:1}", false, true},
  };
  return *cases;
}

nlohmann::json SyntaxInput() {
  nlohmann::json input = nlohmann::json::array();
  for (const SyntaxCase& c : SyntaxCases()) input.push_back(c.text);
  return input;
}

TEST(CheckInterpolationSyntax, RefusesWhatOmegaConfRefusesAtCreation) {
  for (const SyntaxCase& c : SyntaxCases()) {
    Status st = CheckInterpolationSyntax(Node::String(c.text), "a");
    EXPECT_EQ(!st.ok(), c.refused) << "'" << c.text << "': " << st.message();
  }
  ASK_DEBIAN_OMEGACONF(debian, "create", SyntaxInput());
  for (size_t i = 0; i < SyntaxCases().size(); ++i) {
    const SyntaxCase& c = SyntaxCases()[i];
    const nlohmann::ordered_json& r = debian.results[i];
    EXPECT_EQ(testing::ErrorType(r) == "GrammarParseError",
              c.refused != c.differs_in_2_2)
        << "'" << c.text << "': omegaconf " << debian.version << ": "
        << testing::Outcome(r);
  }
}

TEST(AnchorsCheckInterpolationSyntax, RefusesWhatOmegaConfRefusesAtCreation) {
  ASK_ANCHORS_OMEGACONF(live, "create", SyntaxInput());
  for (size_t i = 0; i < SyntaxCases().size(); ++i) {
    const SyntaxCase& c = SyntaxCases()[i];
    const nlohmann::ordered_json& r = live.results[i];
    EXPECT_EQ(testing::ErrorType(r) == "GrammarParseError", c.refused)
        << "'" << c.text << "': the table disagrees with omegaconf 2.3.0: "
        << testing::Outcome(r);
  }
}

TEST(CheckInterpolationSyntax, SaysWhereWhatAndWhichKey) {
  StatusOr<Node> cfg =
      LoadYamlString("a:\n  ok: ${b}\n  l: [1, '${x y}']\nb: 1\n", "t.yaml");
  ASSERT_OK(cfg);
  EXPECT_OK(CheckInterpolationSyntax(*cfg->Get("b")));
  Status st = CheckInterpolationSyntax(*cfg);
  EXPECT_EQ(st.message(),
            "t.yaml:3:10: GrammarParseError: unexpected whitespace in "
            "interpolation '${x y...', expected '}', ':' or a key (column 4)\n"
            "    ${x y}\n"
            "       ^\n"
            "    full_key: a.l[1]");
  // Keys are not parsed (OmegaConf does not), only values.
  EXPECT_OK(CheckInterpolationSyntax(*LoadYamlString("${x y}: 1\n", "t.yaml")));
}

}  // namespace
}  // namespace trialshim::config
