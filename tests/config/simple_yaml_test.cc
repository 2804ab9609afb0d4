// ParseSimpleYaml against LoadYamlString: every one of Hydra's own configs
// (hydra_builtin.cc) must take the fast path and give the very Node the
// yaml-cpp loader gives, marks and key marks included; YAML outside the
// subset must give nullopt (the caller then uses the loader), never a
// different Node.
#include "config/src/simple_yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/src/hydra_conf.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config::internal {
namespace {

// Empty when `a` and `b` are the same tree with the same marks, else where
// they first differ.
std::string Difference(const Node& a, const Node& b, const std::string& at) {
  auto mark = [](const Mark& m) {
    return (m.file ? *m.file : "-") + ":" + std::to_string(m.line) + ":" +
           std::to_string(m.column);
  };
  if (a.type() != b.type() || (a.is_scalar() && a != b)) {
    return at + ": value differs";
  }
  if (mark(a.mark()) != mark(b.mark())) {
    return at + ": mark " + mark(a.mark()) + " vs " + mark(b.mark());
  }
  if (mark(a.key_mark()) != mark(b.key_mark())) {
    return at + ": key mark " + mark(a.key_mark()) + " vs " +
           mark(b.key_mark());
  }
  if (a.size() != b.size()) return at + ": sizes differ";
  for (size_t i = 0; i < a.size(); ++i) {
    std::string d;
    if (a.is_list()) {
      d = Difference(a.AsList()[i], b.AsList()[i],
                     at + "[" + std::to_string(i) + "]");
    } else if (a.AsMap()[i].first != b.AsMap()[i].first) {
      d = at + ": key " + a.AsMap()[i].first + " vs " + b.AsMap()[i].first;
    } else {
      d = Difference(a.AsMap()[i].second, b.AsMap()[i].second,
                     at + "." + a.AsMap()[i].first);
    }
    if (!d.empty()) return d;
  }
  return "";
}

void ExpectLikeLoader(const std::string& name, std::string_view text) {
  std::optional<Node> fast = ParseSimpleYaml(text, name);
  ASSERT_TRUE(fast.has_value()) << name << ": not parsed by the fast path";
  StatusOr<Node> loaded = LoadYamlString(text, name);
  ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.status().ToString();
  EXPECT_EQ(Difference(*fast, *loaded, "<root>"), "") << name;
}

TEST(SimpleYaml, EveryBuiltinConfigAsTheLoaderGivesIt) {
  int seen = 0;
  for (const std::string& group : BuiltinGroups()) {
    for (const std::string& option : BuiltinGroupOptions(group)) {
      const BuiltinConfig* c = FindBuiltinConfig(group + "/" + option);
      ASSERT_NE(c, nullptr) << group << "/" << option;
      ExpectLikeLoader("pkg://hydra.conf/" + group + "/" + option + ".yaml",
                       c->yaml);
      ++seen;
    }
  }
  EXPECT_GE(seen, 20);  // hydra/config, the logging configs, the samplers...
}

struct Case {
  const char* name;
  const char* yaml;
  bool fast;  // parsed by the fast path (then as the loader parses it)
};

TEST(SimpleYaml, SubsetLikeTheLoaderAndTheRestRefused) {
  const Case cases[] = {
      {"empty", "", true},
      {"comments only", "# @package hydra\n\n# x\n", true},
      {"types", "a: 1\nb: 1.5\nc: true\nd: null\ne: x y\nf: 0x10\ng: ~\n",
       true},
      {"nested", "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", true},
      {"list at the key's column", "d:\n- a: 1\n- b\ne: 1\n", true},
      {"list indented", "d:\n  - 1\n  -   two\n", true},
      {"item map of two keys", "- a: 1\n  b: 2\n- c: 3\n", true},
      {"flow lists", "a: []\nb: [x]\nc: [x,  y , 1]\n", true},
      {"empty flow map", "a: {}\n", true},
      {"quoted", "a: 'x: y'\nb: 'it''s'\nc: ''\n", true},
      {"literal", "a: |\n  one\n\n    two\n\n\nb: 1\n", true},
      {"literal last", "t: |\n  x\n  y\n", true},
      {"indicators that start plain scalars", "a: ???\nb: -1\nc: -x\nd: :x\n",
       true},
      {"indicators alone", "a: - x\n", false},
      {"interpolations", "a: ${b}/${now:%H-%M}\nb: ext://sys.stdout\n", true},
      {"double quoted", "a: \"x\"\n", false},
      {"empty value", "a:\nb: 1\n", false},
      {"multi-line plain", "a: x\n  y\n", false},
      {"anchor", "a: &x 1\nb: *x\n", false},
      {"flow map", "a: {b: 1}\n", false},
      {"nested flow", "a: [[1]]\n", false},
      {"duplicate key", "a: 1\na: 2\n", false},
      {"int key", "1: a\n", false},
      {"comment after value", "a: 1 # one\n", false},
      {"folded", "a: >\n  x\n", false},
      {"literal keep", "a: |+\n  x\n", false},
      {"tag", "a: !!str 1\n", false},
      {"lone scalar", "x\n", false},
      {"merge key", "<<: {a: 1}\n", false},
      {"bad indentation", "a:\n    b: 1\n  c: 2\n", false},
      {"unclosed quote", "a: 'x\n", false},
      {"tab", "a:\n\tb: 1\n", false},
      {"document marker", "---\na: 1\n", false},
  };
  for (const Case& c : cases) {
    if (c.fast) {
      ExpectLikeLoader(c.name, c.yaml);
    } else {
      EXPECT_FALSE(ParseSimpleYaml(c.yaml, c.name).has_value()) << c.name;
    }
  }
}

}  // namespace
}  // namespace trialshim::config::internal
