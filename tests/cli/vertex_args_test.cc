// The public conformance cases (tests/data/conformance/vertex_args.json,
// produced with real Hydra): `trialshim --dry-run -- /bin/echo ARGS...` must
// print an argv whose arguments are spellings Hydra parses to the intended
// overrides. One named test per case; each also runs for real through a
// helper that prints the argv it received, which must equal the dry run.
// The Anchors* test has Hydra 1.3.2's own parser read every spelling of
// every slot (tests/anchors/hydra_overrides.py): they must be one override.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::cli {
namespace {

using nlohmann::json;
using ::trialshim::testing::Finished;
using ::trialshim::testing::RunToEnd;
using ::trialshim::testing::TrialshimBinary;

struct VertexCase {
  std::string name;
  json data;
};

std::vector<VertexCase> LoadCases() {
  std::ifstream in(std::string(TRIALSHIM_TEST_DATA_DIR) +
                   "/conformance/vertex_args.json");
  json all = json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<VertexCase> cases;
  if (!all.is_array()) return cases;
  for (const json& c : all) cases.push_back({c.value("name", "unnamed"), c});
  return cases;
}

bool Matches(const std::vector<std::string>& got, const json& slots) {
  if (got.size() != slots.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    bool any = false;
    for (const json& spelling : slots[i]["any_of"])
      any = any || spelling == got[i];
    if (!any) return false;
  }
  return true;
}

class VertexArgs : public ::testing::TestWithParam<VertexCase> {};

TEST_P(VertexArgs, DryRunGivesAHydraSpelling) {
  const VertexCase& c = GetParam();
  std::vector<std::string> argv = {TrialshimBinary(), "--dry-run", "--",
                                   "/bin/echo"};
  for (const json& a : c.data["argv"]) argv.push_back(a.get<std::string>());
  Finished f = RunToEnd(argv);
  ASSERT_EQ(f.exit_code, 0) << "case " << c.name << ": " << f.err;
  json printed = json::parse(f.out, nullptr, false);
  ASSERT_TRUE(printed.is_array()) << "case " << c.name << ": " << f.out;
  ASSERT_FALSE(printed.empty());
  EXPECT_EQ(printed[0], "/bin/echo") << "case " << c.name;
  std::vector<std::string> got;
  for (size_t i = 1; i < printed.size(); ++i)
    got.push_back(printed[i].get<std::string>());
  bool ok = Matches(got, c.data["expect"]);
  for (const json& alt : c.data.value("expect_alts", json::array())) {
    ok = ok || Matches(got, alt);
  }
  EXPECT_TRUE(ok) << "case " << c.name << ": got " << f.out;

  // For real: the program receives exactly what the dry run printed.
  std::vector<std::string> real = {
      TrialshimBinary(), "--",
      std::string(TRIALSHIM_BIN_DIR) + "/trialshim_argv_dump"};
  for (const json& a : c.data["argv"]) real.push_back(a.get<std::string>());
  Finished r = RunToEnd(real);
  ASSERT_EQ(r.exit_code, 0) << "case " << c.name << ": " << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false), json(got)) << "case " << c.name;
}

INSTANTIATE_TEST_SUITE_P(Conformance, VertexArgs,
                         ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<VertexCase>& info) {
                           std::string n;
                           for (char ch : info.param.name)
                             n += std::isalnum(static_cast<unsigned char>(ch))
                                      ? ch
                                      : '_';
                           return n;
                         });

TEST(VertexArgsFile, HasCases) { EXPECT_GE(LoadCases().size(), 22u); }

// Each slot lists every spelling "that Hydra parses to the intended
// override": Hydra's parser must read them all as the same override (a
// slot of flags, which argparse reads, holds one spelling).
TEST(AnchorsVertexArgs, HydraReadsEverySpellingOfASlotAlike) {
  SKIP_WITHOUT_ANCHORS();
  json spellings = json::array();
  std::vector<std::pair<std::string, size_t>> slots;  // case/slot, count
  for (const VertexCase& c : LoadCases()) {
    std::vector<json> all = {c.data.value("expect", json::array())};
    for (const json& alt : c.data.value("expect_alts", json::array())) {
      all.push_back(alt);
    }
    for (const json& expect : all) {
      for (size_t i = 0; i < expect.size(); ++i) {
        for (const json& s : expect[i]["any_of"]) spellings.push_back(s);
        slots.emplace_back(c.name + " slot " + std::to_string(i),
                           expect[i]["any_of"].size());
      }
    }
  }
  testing::TempDir dir;
  Finished f =
      testing::RunAnchorsScript("tests/anchors/hydra_overrides.py",
                                {dir.Write("args.json", spellings.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  json read = json::parse(f.out, nullptr, false);
  ASSERT_EQ(read.size(), spellings.size()) << f.out;
  size_t at = 0;
  for (const auto& [slot, count] : slots) {
    const json& first = read[at];
    if (!first.is_string()) {  // a flag: not an override
      EXPECT_EQ(count, 1u) << slot << ": " << spellings[at];
    }
    for (size_t k = 1; k < count; ++k) {
      EXPECT_EQ(read[at + k], first)
          << slot << ": " << spellings[at + k] << " against " << spellings[at];
    }
    at += count;
  }
}

}  // namespace
}  // namespace trialshim::cli
