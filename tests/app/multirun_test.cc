// Multiruns of trialshim::app::Run (app/src/multirun.cc) against real Hydra
// 1.3.2: each case of tests/data/hydra_app/multirun.json (made by
// multirun.py there) is a multirun of a Python @hydra.main app; app_task runs
// the same command line and must print and leave the same bytes: the
// launcher's lines and each job's output, multirun.yaml, and each job's
// directory with its .hydra files and log. Where Hydra fails, trialshim
// must fail too, naming what the case says, having run the same jobs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/hydra_app.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<Json>& Cases() {
  static const std::vector<Json> cases =
      testing::LoadHydraAppCases("multirun.json");
  return cases;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const Json& c : Cases()) names.push_back(c["name"].get<std::string>());
  return names;
}

// Parameterized by name: a case's JSON is too long to print.
class MultirunLikeHydra : public ::testing::TestWithParam<std::string> {};

TEST_P(MultirunLikeHydra, PrintsAndWritesWhatHydraDoes) {
  const Json& c = *std::find_if(Cases().begin(), Cases().end(), [](const Json& j) {
    return j["name"] == GetParam();
  });
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  const std::string tree =
      testing::kHydraAppDir + "/trees/" + c["tree"].get<std::string>();
  testing::Finished r = testing::RunTask(
      tree, c["args"].get<std::vector<std::string>>(), cwd);
  const bool failed = c["exit_code"].get<int>() != 0;
  if (failed) {
    EXPECT_NE(r.exit_code, 0) << r.out;
    for (const Json& say : c["says"]) {
      EXPECT_NE(r.err.find(say.get<std::string>()), std::string::npos)
          << "says " << say << "\n" << r.err;
    }
  } else {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(testing::Normalize(r.out, tree, cwd), c["stdout"].get<std::string>());
  }
  std::vector<std::string> written;
  for (const std::string& f : FilesUnder(cwd)) {
    written.push_back(testing::Normalize(f, tree, cwd));
  }
  std::vector<std::string> expected;
  for (const auto& [file, text] : c["files"].items()) {
    expected.push_back(file);
    // A failed job's log holds our error line; Hydra prints it to stderr.
    if (failed && file.size() > 4 && file.substr(file.size() - 4) == ".log") {
      continue;
    }
    std::string path = file;
    for (const std::string& w : FilesUnder(cwd)) {
      if (testing::Normalize(w, tree, cwd) == file) path = w;
    }
    EXPECT_EQ(testing::Normalize(testing::ReadFile(cwd + "/" + path), tree, cwd),
              text.get<std::string>())
        << file;
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(written, expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, MultirunLikeHydra,
                         ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// What a C++ task adds to Hydra's rules: its exit code. A failed job lets
// the rest of its batch run, then the multirun ends with its code; a job
// stopped by a signal (the trainer checkpoints and exits 128+N) ends it at
// once. Also what is not here: other sweepers and launchers.
TEST(Multirun, ExitCodesAndWhatIsRefused) {
  struct Case {
    const char* name;
    std::string tree;
    std::vector<std::string> args;
    int exit_code;
    std::vector<std::string> jobs_run;  // the job directories made
    std::vector<std::string> in_err;
  };
  const std::string sweep = "hydra.sweep.dir=sw";
  const std::vector<Case> cases = {
      {"failed jobs end it after the batch", "basic",
       {"-m", sweep, "port=1", "+exit_code=0,3,4"}, 3, {"0", "1", "2"},
       {"job #1 with overrides ['port=1', '+exit_code=3'] exited with code 3",
        "job #2 with overrides ['port=1', '+exit_code=4'] exited with code 4"}},
      {"next batch not started", "basic",
       {"-m", sweep, "hydra.sweeper.max_batch_size=1", "port=1",
        "+exit_code=5,0"},
       5, {"0"}, {"job #0"}},
      {"a stopped job ends it at once", "basic",
       {"-m", sweep, "port=1", "+exit_code=0,143,0"}, 143, {"0", "1"},
       {"job #1"}},
      {"mode RUN overridden by -m", "basic",
       {"-m", sweep, "hydra.mode=RUN", "port=1,2"}, 0, {"0", "1"},
       {"warning: running with --multirun, overriding with "
        "`hydra.mode=MULTIRUN`"}},
      {"optuna sweeper", "optuna_search",
       {"-m", sweep, "hparams_search=optuna"}, 2, {},
       {"hydra/sweeper=optuna: a trialshim app's multirun has Hydra's basic "
        "sweeper only (the Optuna sweeper"}},
      {"another launcher", "basic",
       {"-m", sweep, "hydra/launcher=joblib", "port=1"}, 2, {},
       {"hydra/launcher=joblib", "one after another"}},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    const std::string cwd = fs::canonical(tmp.path()).string();
    testing::Finished r = testing::RunTask(
        testing::kHydraAppDir + "/trees/" + c.tree, c.args, cwd);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << "\n" << r.err;
    std::vector<std::string> made;
    if (fs::is_directory(cwd + "/sw")) {
      for (const auto& e : fs::directory_iterator(cwd + "/sw")) {
        if (e.is_directory()) made.push_back(e.path().filename().string());
      }
    }
    std::sort(made.begin(), made.end());
    EXPECT_EQ(made, c.jobs_run) << c.name;
    for (const std::string& say : c.in_err) {
      EXPECT_NE(r.err.find(say), std::string::npos) << c.name << "\n" << r.err;
    }
  }
}

TEST(MultirunData, AllCasesLoaded) { EXPECT_GE(Cases().size(), 26u); }

}  // namespace
}  // namespace trialshim
