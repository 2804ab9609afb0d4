// `trialshim compose` against real Hydra: every case in
// tests/data/hydra_app/cases.json is a Hydra app command line (`--cfg
// job|hydra|all`, `--resolve`, `--config-name`, overrides) with what
// Hydra 1.3.2 printed for it (generate.py in that folder made them). Where
// Hydra printed a config, compose must print the same bytes (and warn
// naming what the case lists, for an option a plugin provides); where Hydra
// refused, compose must exit 2 with an error that names what the case lists.
// With the anchors (Anchors*), the same command lines run by real Hydra now.
// The same for hydra-optuna-sweeper's configs (tests/data/optuna_sweeper).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/hydra_app.h"
#include "tests/testutil/optuna_sweeper.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/base/strings.h"

namespace trialshim {
namespace {

using Json = nlohmann::json;

const std::string& kDir = testing::kHydraAppDir;

std::vector<Json> LoadCases() {
  return testing::LoadHydraAppCases("cases.json");
}

// `trialshim compose` on case `c`'s command line prints what Hydra printed,
// or refuses naming what the case lists.
void ExpectComposeLikeHydra(const Json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const std::string tree = kDir + "/trees/" + c["tree"].get<std::string>();
  std::vector<std::string> argv = {
      std::string(TRIALSHIM_BIN_DIR) + "/trialshim", "compose",
      "--config-path", tree, "--job-name", "app"};
  // The app's config_name is "config" unless the case names another.
  if (std::find(c["args"].begin(), c["args"].end(), "--config-name") ==
      c["args"].end()) {
    argv.insert(argv.end(), {"--config-name", "config"});
  }
  for (const Json& a : c["args"]) {
    argv.push_back(ReplaceAll(a.get<std::string>(), "<tree>", tree));
  }
  testing::Finished r = testing::RunToEnd(argv);

  if (c["exit_code"].get<int>() != 0) {
    EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    for (const Json& s : c["says"]) {
      EXPECT_NE(r.err.find(s.get<std::string>()), std::string::npos)
          << "error should mention '" << s.get<std::string>() << "'\nours:  "
          << r.err << "\nhydra: " << c["hydra_message"].get<std::string>();
    }
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A case Hydra composes with a plugin installed: our warning names it.
  for (const Json& s : c.value("says", Json::array())) {
    EXPECT_NE(r.err.find(s.get<std::string>()), std::string::npos)
        << "warning should mention '" << s.get<std::string>()
        << "'\nours: " << r.err;
  }
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  std::string expected = ReplaceAll(c["stdout"].get<std::string>(), "<tree>", tree);
  EXPECT_EQ(r.out, ReplaceAll(expected, "<cwd>", cwd));
}

class ComposeLikeHydra : public ::testing::TestWithParam<Json> {};

TEST_P(ComposeLikeHydra, PrintsWhatHydraPrints) {
  ExpectComposeLikeHydra(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cases, ComposeLikeHydra,
                         ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Json>& info) {
                           return info.param["name"].get<std::string>();
                         });

TEST(ComposeLikeHydraData, AllCasesLoaded) {
  // A missing or unreadable cases.json would otherwise pass vacuously.
  EXPECT_GE(LoadCases().size(), 1u);
}

// Real Hydra runs every command line again (generate.py): it must print what
// cases.json recorded, and compose what Hydra prints now.
TEST(AnchorsComposeLikeHydra, RealHydraPrintsTheRecordedCases) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir live;
  testing::Finished gen = testing::RunAnchorsScript(
      "tests/data/hydra_app/generate.py", {"--out", live.path(), "cases"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(
      testing::FirstDifference(kDir + "/cases.json", live.Join("cases.json")),
      "")
      << "real Hydra no longer prints what cases.json says: run "
         "tests/data/hydra_app/generate.py (its header says how)";
  std::vector<Json> cases =
      testing::LoadHydraAppCases("cases.json", live.path());
  EXPECT_EQ(cases.size(), LoadCases().size());
  for (const Json& c : cases) ExpectComposeLikeHydra(c);
}

// hydra-optuna-sweeper 1.2.0's configs (hydra/sweeper=optuna and the
// samplers of hydra/sweeper/sampler) and their schemas, against real Hydra
// with the plugin installed: tests/data/optuna_sweeper/cases.json's
// "compose" section (generate.py there).
class ComposeLikeHydraWithOptuna : public ::testing::TestWithParam<Json> {};

TEST_P(ComposeLikeHydraWithOptuna, PrintsWhatHydraPrints) {
  const Json& c = GetParam();
  const std::string tree =
      testing::kOptunaSweeperDir + "/trees/" + c["tree"].get<std::string>();
  std::vector<std::string> argv = {
      std::string(TRIALSHIM_BIN_DIR) + "/trialshim",
      "compose",
      "--config-path",
      tree,
      "--job-name",
      "app"};
  if (std::find(c["args"].begin(), c["args"].end(), "--config-name") ==
      c["args"].end()) {
    argv.insert(argv.end(), {"--config-name", "config"});
  }
  for (const Json& a : c["args"]) argv.push_back(a.get<std::string>());
  testing::Finished r = testing::RunToEnd(argv);
  if (c["exit_code"].get<int>() != 0) {
    EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out;
    for (const Json& s : c["says"]) {
      EXPECT_NE(r.err.find(s.get<std::string>()), std::string::npos)
          << "error should mention '" << s.get<std::string>()
          << "'\nours:  " << r.err
          << "\nhydra: " << c["hydra_message"].get<std::string>();
    }
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "no warning: the plugin's configs are composed";
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(r.out, ReplaceAll(ReplaceAll(c["stdout"].get<std::string>(),
                                         "<tree>", tree),
                              "<cwd>", cwd));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ComposeLikeHydraWithOptuna,
    ::testing::ValuesIn(testing::OptunaSweeperCases("compose")),
    [](const ::testing::TestParamInfo<Json>& info) {
      return info.param["name"].get<std::string>();
    });

TEST(ComposeLikeHydraWithOptunaData, AllCasesLoaded) {
  EXPECT_GE(testing::OptunaSweeperCases("compose").size(), 15u);
}

// Samplers of the plugin's development version (after 1.2.0, which refuses
// them): compose keeps the choice with a warning naming the version, and
// takes the app's keys for it.
TEST(ComposeWithPluginOption, NewerSamplersWarn) {
  for (const char* sampler : {"gp", "qmc"}) {
    testing::Finished r = testing::RunToEnd(
        {std::string(TRIALSHIM_BIN_DIR) + "/trialshim", "compose",
         "--config-path", testing::kOptunaSweeperDir + "/trees/compose",
         "--config-name", "config", "--cfg", "hydra",
         std::string("hydra/sweeper/sampler=") + sampler,
         std::string("+hydra.sweeper.sampler.seed=3")});
    EXPECT_EQ(r.exit_code, 0) << sampler << ": " << r.err;
    EXPECT_NE(r.err.find("1.2.0 has no " + std::string(sampler)),
              std::string::npos)
        << sampler << ": " << r.err;
    EXPECT_NE(
        r.out.find("      hydra/sweeper/sampler: " + std::string(sampler)),
        std::string::npos)
        << sampler << ": " << r.out;
  }
}

}  // namespace
}  // namespace trialshim
