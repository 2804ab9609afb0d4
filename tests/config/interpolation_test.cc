// Tests for ResolveAll / ResolvePath. Every expectation was checked against
// OmegaConf 2.2.2 (Debian python3-omegaconf) with
//   OmegaConf.to_container(OmegaConf.create(cfg), resolve=True,
//                          throw_on_missing=True)
// except where a case says "ours" (our own addition to the message).
#include "trialshim/config/interpolation.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/yaml_loader.h"

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

TEST_F(InterpolationTest, ResolvesLikeOmegaConf) {
  const std::vector<ValueCase> cases = {
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
  };
  for (const ValueCase& c : cases) {
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

TEST_F(InterpolationTest, ErrorsNameTheKey) {
  const std::vector<ErrorCase> cases = {
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
      {"env list default",
       "x: ${oc.env:TS_NOPE,[1]}\n",
       {"must be a string or None"}},
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
  for (const ErrorCase& c : cases) {
    Node cfg = Load(c.config, c.name);
    auto got = ResolveAll(cfg);
    ASSERT_FALSE(got.ok()) << "case " << c.name << ": resolved to "
                           << ToJson(*got, -1);
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    for (const std::string& w : c.want) {
      EXPECT_NE(got.status().message().find(w), std::string::npos)
          << "case " << c.name << ": want '" << w << "' in:\n"
          << got.status().message();
    }
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
  EXPECT_NE(bad.status().message().find("full_key: bad"), std::string::npos)
      << bad.status().message();
  auto m = ResolvePath(cfg, "m");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Missing mandatory value: m"),
            std::string::npos);
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
    EXPECT_NE(got.status().message().find(c.want), std::string::npos)
        << "case " << c.name << ": " << got.status().message().substr(0, 300);
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
    EXPECT_NE(exploded.status().message().find(want), std::string::npos)
        << "case string bomb: wanted '" << want << "' in "
        << exploded.status().message();
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

// What OmegaConf.resolve makes of `yaml`, as OmegaConf.to_yaml prints it
// (python3-omegaconf, run here), or "" with *skip set when it is missing.
std::string OmegaConfResolved(const std::string& yaml, bool* skip) {
  char path[] = "/tmp/trialshim_resolve_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "mkstemp failed";
  bool wrote = write(fd, yaml.data(), yaml.size()) ==
               static_cast<ssize_t>(yaml.size());
  close(fd);
  std::string cmd =
      "/usr/bin/python3 -W ignore -c 'import sys; from omegaconf import OmegaConf; "
      "c = OmegaConf.load(sys.argv[1]); OmegaConf.resolve(c); "
      "sys.stdout.write(OmegaConf.to_yaml(c))' " +
      std::string(path) + " 2>&1";
  FILE* p = wrote ? popen(cmd.c_str(), "r") : nullptr;
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;) {
    out.append(buf, n);
  }
  if (p) pclose(p);
  unlink(path);
  *skip = out.find("No module named 'omegaconf'") != std::string::npos;
  return out;
}

// Issue 14.1: Hydra's `--cfg job --resolve` runs OmegaConf.resolve, which
// keeps "???" and turns a value that needs a missing one into "???".
TEST(ResolveAllKeepMissing, PrintsWhatOmegaConfResolvePrints) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"missing stays", "a: ???\nb: 1\nc: ${b}\n"},
      {"nested and in a list", "d:\n  e: ???\nl:\n- ???\n- ${b}\nb: 2\n"},
      {"interpolation to missing", "a: ???\nx: ${a}\n"},
      {"string interpolation of missing", "a: ???\nx: pre_${a}_post\n"},
      {"through a chain", "p: ${q}\nq: ${r}\nr: ???\n"},
      {"a node holding missing", "a:\n  b: ???\n  c: 1\nx: ${a}\n"},
  };
  for (const auto& [name, yaml] : cases) {
    bool skip = false;
    std::string want = OmegaConfResolved(yaml, &skip);
    if (skip) GTEST_SKIP() << "python3-omegaconf is not installed";
    ResolveOptions keep;
    keep.keep_missing = true;
    StatusOr<Node> got = ResolveAll(Load(yaml, name), keep);
    ASSERT_OK(got) << name;
    EXPECT_EQ(ToYaml(*got), want) << name;
    EXPECT_FALSE(ResolveAll(Load(yaml, name)).ok())
        << name << ": without keep_missing a missing value is an error";
  }
}

// OmegaConf.resolve stores each result back and parses it again, so an
// escaped "\${x" (the text "${x") fails there; reading the value does not.
TEST(ResolveAllKeepMissing, ParsesEachResultAgainAsOmegaConfResolveDoes) {
  const std::string yaml = "ok: \\${y}\nbad: x\\${y\n";
  bool skip = false;
  std::string omegaconf = OmegaConfResolved(yaml, &skip);
  if (!skip) {
    EXPECT_NE(omegaconf.find("GrammarParseError"), std::string::npos)
        << omegaconf;
  }
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

// Issue 14.6: oc.dict.keys and oc.dict.values follow a key whose value is
// itself an interpolation, as OmegaConf does.
TEST(ResolveAll, DictResolversFollowAnInterpolatedKey) {
  const std::string yaml =
      "d:\n  a: 1\n  b: ${y}\ny:\n  k: 2\nw: ${d}\n"
      "ks: ${oc.dict.keys:d}\nvs: ${oc.dict.values:d}\n"
      "wk: ${oc.dict.keys:w}\nwv: ${oc.dict.values:w}\n";
  bool skip = false;
  std::string want = OmegaConfResolved(yaml, &skip);
  if (skip) GTEST_SKIP() << "python3-omegaconf is not installed";
  StatusOr<Node> got = ResolveAll(Load(yaml, "dict resolvers"));
  ASSERT_OK(got);
  EXPECT_EQ(ToYaml(*got), want);
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

// Issue 14.6: oc.deprecated gives the value at the new key (OmegaConf's
// UserWarning is not shown: a library prints nothing) and its errors.
TEST(ResolveAll, OcDeprecatedGivesTheNewKeysValue) {
  const std::string yaml =
      "new:\n  a: 1\nold: ${oc.deprecated:new}\n"
      "old2: '${oc.deprecated:new.a,\"use new.a\"}'\n";
  bool skip = false;
  std::string want = OmegaConfResolved(yaml, &skip);
  if (skip) GTEST_SKIP() << "python3-omegaconf is not installed";
  StatusOr<Node> got = ResolveAll(Load(yaml, "oc.deprecated"));
  ASSERT_OK(got);
  EXPECT_EQ(ToYaml(*got), want);
  struct Case {
    const char* name;
    std::string yaml;
    std::string message_has;  // OmegaConf's words
  } errors[] = {
      {"missing key", "bad: ${oc.deprecated:nope}\n",
       "ConfigKeyError raised while resolving interpolation: In oc.deprecated "
       "resolver at 'bad': Key not found: 'nope'"},
      {"key not a string", "bad2: ${oc.deprecated:1}\n",
       "TypeError raised while resolving interpolation: oc.deprecated: "
       "interpolation key type is not a string (int)"},
  };
  for (const Case& c : errors) {
    StatusOr<Node> r = ResolveAll(Load(c.yaml, c.name));
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(c.message_has), std::string::npos)
        << c.name << ": " << r.status().message();
  }
}

// Issue 14.6: a list index is read as Python's int() reads it ("1_0" is 10,
// " 3" and "+2" are indices, "1__0" and "0x1" are not). Each case's value
// (or failure) is OmegaConf's own, from python3-omegaconf run here.
TEST(ResolveAll, ListIndicesAsPythonIntReadsThem) {
  for (const char* index : {"1_0", "+2", " 3", "01", "-1", "1__0", "_1", "0x1",
                            "1_", "9999999999999999999999"}) {
    const std::string yaml = "l: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n"
                             "x: ${l." + std::string(index) + "}\n";
    std::string cmd =
        "/usr/bin/python3 -c 'import sys; from omegaconf import OmegaConf\n"
        "try: print(OmegaConf.create({\"l\": list(range(12)), \"x\": "
        "sys.argv[1]}).x)\nexcept Exception: print(\"error\")' '${l." +
        std::string(index) + "}' 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string want;
    char buf[256];
    while (fgets(buf, sizeof buf, p)) want += buf;
    ASSERT_EQ(pclose(p), 0) << index << ": " << want;
    if (want.find("No module named") != std::string::npos) {
      GTEST_SKIP() << "python3-omegaconf is not installed";
    }
    StatusOr<Node> got = ResolveAll(Load(yaml, index));
    std::string ours =
        got.ok() ? std::to_string((*got).Get("x")->AsInt()) + "\n" : "error\n";
    EXPECT_EQ(ours, want) << "index '" << index << "'";
  }
}

// Issue 14.2: OmegaConf parses every string holding "${" when a config is
// created and raises GrammarParseError then. `refused` is what OmegaConf
// 2.2.2 does with OmegaConf.create({"a": text}); the test asks
// python3-omegaconf again where it is installed, so the table can not drift.
TEST(CheckInterpolationSyntax, RefusesWhatOmegaConfRefusesAtCreation) {
  struct Case {
    const char* text;
    bool refused;
  } cases[] = {
      {"${dict . a}", true},   {"${0:1,2,3}", true},  {"${foo:bar", true},
      {"a${", true},           {"${x", true},         {"${foo bar}", true},
      {"${}", true},           {"${a}${", true},      {"${a.b", true},
      {"\\\\${x", true},       {"${.}", true},        {"${a:'x}", true},
      {"${a:\"x}", true},      {"x ${ y", true},      {"${a.}", true},
      {"${a..b}", true},       {"$foo", false},       {"\\${x}", false},
      {"\\${x", false},        {"a\\${", false},      {"${ x }", false},
      {"x}", false},           {"${a}}", false},      {"${oc.env:A,${b}}", false},
      {"${..a}", false},       {"${a:}", false},      {"${a:b,}", false},
      {"${[a]}", false},       {"${a[0]}", false},    {"$${a}", false},
      {"${${a}}", false},      {"${a}\\", false},     {"plain", false},
  };
  char path[] = "/tmp/trialshim_grammar_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string lines;
  for (const Case& c : cases) lines += std::string(c.text) + "\n";
  ASSERT_EQ(write(fd, lines.data(), lines.size()),
            static_cast<ssize_t>(lines.size()));
  close(fd);
  std::string cmd =
      "/usr/bin/python3 -c 'import sys\nfrom omegaconf import OmegaConf\n"
      "for t in open(sys.argv[1]).read().splitlines():\n"
      "  try: OmegaConf.create({\"a\": t}); print(0)\n"
      "  except Exception as e: print(type(e).__name__)' " +
      std::string(path) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::vector<std::string> oracle;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) oracle.push_back(buf);
  pclose(p);
  unlink(path);
  bool have_oracle = oracle.size() == std::size(cases);
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    Status st = CheckInterpolationSyntax(Node::String(c.text), "a");
    EXPECT_EQ(!st.ok(), c.refused) << "'" << c.text << "': " << st.message();
    if (have_oracle) {
      EXPECT_EQ(oracle[i], c.refused ? "GrammarParseError\n" : "0\n")
          << "'" << c.text << "': the table disagrees with OmegaConf";
    }
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
