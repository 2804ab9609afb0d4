// ParseSimpleYaml against yaml-cpp's parse (LoadYamlWithYamlCpp): every one
// of Hydra's own configs (hydra_builtin.cc) must take the fast path, and
// wherever it is taken (the table, every YAML file of the repository, the
// fuzz corpora) it must give the very Node yaml-cpp's parse gives, marks and
// key marks included; YAML outside the subset must give nullopt (yaml-cpp
// then reads it), never a different Node.
#include "config/src/simple_yaml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
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

// Whether the fast path took `text`; where it did, it gave yaml-cpp's Node.
bool TakenLikeYamlCpp(const std::string& name, std::string_view text) {
  std::optional<Node> fast = ParseSimpleYaml(text, name);
  if (!fast) return false;
  StatusOr<Node> loaded = LoadYamlWithYamlCpp(text, name);
  EXPECT_TRUE(loaded.ok()) << name << ": the fast path took what yaml-cpp "
                           << "refuses: " << loaded.status().ToString();
  if (loaded.ok()) {
    EXPECT_EQ(Difference(*fast, *loaded, "<root>"), "") << name;
  }
  return true;
}

void ExpectLikeLoader(const std::string& name, std::string_view text) {
  EXPECT_TRUE(TakenLikeYamlCpp(name, text))
      << name << ": not parsed by the fast path";
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
      {"colon in a flow list", "a: [b:c]\n", false},
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

// Every YAML file of the repository (configs, examples, test trees and
// their broken files) and the compose and job spec fuzz corpora: wherever
// the fast path reads one, it reads it as yaml-cpp does.
TEST(SimpleYaml, EveryFileItReadsAsYamlCppReadsIt) {
  namespace fs = std::filesystem;
  const fs::path root = TRIALSHIM_SOURCE_DIR;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root);
       it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name == ".git")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file() &&
               (it->path().extension() == ".yaml" ||
                it->path().parent_path().filename() == "compose_fuzz" ||
                it->path().parent_path().filename() == "job_spec_fuzz")) {
      files.push_back(it->path());
    }
  }
  size_t yaml = 0, taken = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    bool is_yaml = f.extension() == ".yaml";
    yaml += is_yaml;
    taken += TakenLikeYamlCpp(f.string(), text.str()) && is_yaml;
  }
  // Most configs are plain block YAML: the fast path must read most files.
  EXPECT_GE(files.size(), 500u);
  EXPECT_GE(taken, yaml / 2) << taken << " of " << yaml << " .yaml files";
}

}  // namespace
}  // namespace trialshim::config::internal
