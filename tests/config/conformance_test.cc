// Runs the real `trialshim compose` binary on every case that real Hydra
// 1.3.2 produced (tests/data/conformance/compose/cases.json): the printed
// JSON must equal Hydra's exactly (types and key order included), and where
// Hydra refused, trialshim must exit 2 with a message on stderr. With the
// anchors (Anchors*), the same cases composed by real Hydra now.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

using Json = nlohmann::ordered_json;

const std::string kCompose =
    std::string(TRIALSHIM_TEST_DATA_DIR) + "/conformance/compose";

// Equality as Python compares Hydra's output, but strict on types: an int
// never equals a float, and object keys must come in the same order.
bool SameJson(const Json& a, const Json& b, std::string* where,
              const std::string& path = "$") {
  auto fail = [&] {
    *where = path + ": " + a.dump() + " vs " + b.dump();
    return false;
  };
  if (a.is_number_integer() != b.is_number_integer() ||
      a.is_number_float() != b.is_number_float()) {
    return fail();
  }
  if (a.is_number_integer()) {
    return a.get<int64_t>() == b.get<int64_t>() ? true : fail();
  }
  if (a.is_number_float()) {
    double x = a.get<double>(), y = b.get<double>();
    return (x == y || (x != x && y != y)) ? true : fail();
  }
  if (a.type() != b.type()) return fail();
  if (a.is_object()) {
    if (a.size() != b.size()) return fail();
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      if (ia.key() != ib.key()) return fail();
      if (!SameJson(ia.value(), ib.value(), where, path + "." + ia.key())) {
        return false;
      }
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return fail();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameJson(a[i], b[i], where, path + "[" + std::to_string(i) + "]")) {
        return false;
      }
    }
    return true;
  }
  return a == b ? true : fail();
}

std::vector<Json> LoadCases(const std::string& dir = kCompose) {
  std::ifstream in(dir + "/cases.json");
  Json all = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<Json> cases;
  if (all.is_array()) {
    for (const Json& c : all) cases.push_back(c);
  }
  return cases;
}

// `trialshim compose --resolve --format json` on case `c` prints what Hydra
// composed, or refuses where Hydra refused.
void ExpectComposesLikeHydra(const Json& c) {
  const std::string name = "case " + std::to_string(c["id"].get<int>()) + " (" +
                           c["tree"].get<std::string>() + " " +
                           c["overrides"].dump() + ")";
  std::vector<std::string> argv = {
      std::string(TRIALSHIM_BIN_DIR) + "/trialshim",
      "compose",
      "--config-path",
      kCompose + "/trees/" + c["tree"].get<std::string>(),
      "--config-name",
      c["config_name"].get<std::string>(),
      "--resolve",
      "--format",
      "json"};
  for (const Json& o : c["overrides"]) argv.push_back(o.get<std::string>());
  testing::Finished r = testing::RunToEnd(argv);

  if (c.value("error", false)) {
    EXPECT_EQ(r.exit_code, 2) << name << "\nstdout: " << r.out;
    EXPECT_FALSE(r.err.empty()) << name;
    EXPECT_TRUE(r.out.empty()) << name << "\nstdout: " << r.out;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << name << "\nstderr: " << r.err;
  Json got = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(got.is_discarded()) << name << ": not JSON:\n" << r.out;
  std::string where;
  EXPECT_TRUE(SameJson(got, c["expect"], &where))
      << name << ": differs at " << where << "\ngot:    " << got.dump()
      << "\nhydra:  " << c["expect"].dump();
}

class ComposeConformance : public ::testing::TestWithParam<Json> {};

TEST_P(ComposeConformance, MatchesHydra) {
  ExpectComposesLikeHydra(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cases, ComposeConformance,
                         ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Json>& info) {
                           return "case_" +
                                  std::to_string(info.param["id"].get<int>()) +
                                  "_" + info.param["tree"].get<std::string>();
                         });

TEST(ComposeConformanceData, AllCasesLoaded) {
  // A missing or unreadable cases.json would otherwise pass vacuously.
  EXPECT_GE(LoadCases().size(), 29u) << "case count of cases.json";
}

// Real Hydra composes every case again (generate.py beside cases.json): it
// must say what the committed file says, and compose what Hydra says.
TEST(AnchorsComposeConformance, RealHydraComposesTheRecordedCases) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir live;
  testing::Finished gen = testing::RunAnchorsScript(
      "tests/data/conformance/compose/generate.py", {"--out", live.path()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(testing::FirstDifference(kCompose + "/cases.json",
                                     live.Join("cases.json")),
            "")
      << "real Hydra no longer says what cases.json says: run "
         "tests/data/conformance/compose/generate.py (its header says how)";
  std::vector<Json> cases = LoadCases(live.path());
  EXPECT_EQ(cases.size(), LoadCases().size());
  for (const Json& c : cases) ExpectComposesLikeHydra(c);
}

}  // namespace
}  // namespace trialshim
