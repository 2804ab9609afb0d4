// The trialshim command line itself (cli/main.cc), as people mistype it:
// each mistake gets a message that says what was meant, and following that
// message works (tests/testutil/hints.h). Also --version.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/testutil/hints.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::cli {
namespace {

using testing::HintCase;
using testing::TempDir;

// One quick trial: tests/tuning/data/trainer.py reports once and exits.
const char kJob[] = R"(displayName: one
maxTrialCount: 1
parallelTrialCount: 1
studySpec:
  metrics:
  - {metricId: score, goal: MINIMIZE}
  parameters:
  - parameterId: x
    discreteValueSpec: {values: [1]}
  algorithm: GRID_SEARCH
trialJobSpec:
  workerPoolSpecs:
  - containerSpec:
      imageUri: example/trainer:1
      command: [/usr/bin/python3, @TRAINER@]
)";

class MainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string job = kJob;
    job.replace(job.find("@TRAINER@"), 9,
                std::string(TRIALSHIM_SOURCE_DIR) +
                    "/tests/tuning/data/trainer.py");
    env_ = {"T=" + testing::TrialshimBinary(),
            "DUMP=" + std::string(TRIALSHIM_BIN_DIR) + "/trialshim_argv_dump",
            "JOB=" + dir_.Write("one.yaml", job)};
  }
  testing::Followed Follow(const HintCase& c) {
    return testing::FollowHint(c, cwd_.path(), env_);
  }
  TempDir dir_, cwd_;
  std::vector<std::string> env_;
};

TEST_F(MainTest, EachMistakeGetsAHintThatWorks) {
  const std::vector<HintCase> cases = {
      {"misspelt_subcommand", "$T translat -- --lr=0.1",
       "did you mean '([^']+)'", HintCase::kReplace, "translat"},
      {"misspelt_subcommand_sweep", "$T swep $JOB --out out1",
       "did you mean '([^']+)'", HintCase::kReplace, "swep"},
      {"command_without_dashes", "$T $DUMP --lr=0.1",
       "put its command after --: (.*)", HintCase::kRun},
      {"command_without_dashes_after_options", "$T --dry-run $DUMP --lr=0.1",
       "put its command after --: (.*)", HintCase::kRun},
      {"misspelt_option", "$T --dryrun -- $DUMP --lr=0.1",
       "did you mean '([^']+)'", HintCase::kReplace, "--dryrun"},
      {"misspelt_option_of_a_subcommand",
       "$T sweep $JOB --paralel 1 --out out2", "did you mean '([^']+)'",
       HintCase::kReplace, "--paralel"},
  };
  for (const HintCase& c : cases) {
    testing::Followed f = Follow(c);
    EXPECT_EQ(f.first.exit_code, 2) << c.name << "\n" << f.first.err;
    EXPECT_EQ(f.first.err.find("not expected"), std::string::npos)
        << c.name << ": " << f.first.err;
    EXPECT_FALSE(f.hint.empty()) << c.name << ": no hint in\n" << f.first.err;
    EXPECT_EQ(f.second.exit_code, 0)
        << c.name << ": the hint " << f.hint << " led to " << f.next << "\n"
        << f.second.out << f.second.err;
  }
}

// "did you mean '--parallel', an option of `trialshim sweep`": the option
// goes into that subcommand.
TEST_F(MainTest, AnOptionOfAnotherSubcommandIsNamedWithIt) {
  testing::Followed f =
      Follow({"other_subcommand", "$T --paralel 1 $JOB --out out",
              "did you mean '([^']+)', an option of `trialshim sweep`",
              HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 2) << f.first.err;
  ASSERT_EQ(f.hint, "--parallel") << f.first.err;
  f = Follow({"followed", "$T sweep $JOB " + f.hint + " 1 --out out", "()",
              HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 0) << f.first.out << f.first.err;
}

// A trial's arguments given to translate before "--": they go after it.
TEST_F(MainTest, TranslateArgumentsGoAfterTheDashes) {
  testing::Followed f =
      Follow({"before", "$T translate --lr=0.1", "()", HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 2);
  EXPECT_EQ(f.first.err,
            "trialshim: error: unknown option '--lr' of `trialshim translate`; "
            "trialshim's options go before --, the trainer's arguments after "
            "it\n");
  f = Follow({"after", "$T translate -- --lr=0.1", "()", HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 0) << f.first.err;
  EXPECT_EQ(f.first.out, "lr=0.1\n");
}

// "pass --add-unknown (it becomes X)": with it, the output is X.
TEST_F(MainTest, AddUnknownGivesWhatItPromised) {
  const std::string translate =
      "$T translate --config-path " + std::string(TRIALSHIM_SOURCE_DIR) +
      "/examples/vertex/conf --config-name config ";
  testing::Followed f =
      Follow({"promise", translate + "-- --act=relu,gelu",
              "to add it anyway pass (--add-unknown) \\(it becomes", HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 2) << f.first.err;
  ASSERT_EQ(f.hint, "--add-unknown") << f.first.err;
  std::smatch promised;
  ASSERT_TRUE(std::regex_search(f.first.err, promised,
                                std::regex("\\(it becomes (.*)\\)")));
  f = Follow({"followed", translate + f.hint + " -- --act=relu,gelu", "()",
              HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 0) << f.first.err;
  EXPECT_EQ(f.first.out, promised[1].str() + "\n");
}

// A word that is no subcommand and no program gets no advice to run it.
TEST_F(MainTest, NoHintToRunWhatIsNoProgram) {
  testing::Followed f = Follow({"report", "$T report", "()", HintCase::kRun});
  EXPECT_EQ(f.first.exit_code, 2);
  EXPECT_EQ(f.first.err,
            "trialshim: error: 'report' is not a trialshim command or option "
            "(commands: translate, compose, check, job, sweep, env, launch)\n");
}

TEST_F(MainTest, VersionIsTheProjectVersion) {
  testing::Finished f = testing::RunToEnd({testing::TrialshimBinary(), "--version"});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out, std::string("trialshim ") + TRIALSHIM_VERSION + "\n");
}

// main builds only the parsers of the subcommands the command line names
// (start-up, bench/README.md); what a person sees must not change: help
// lists every subcommand, a word named like a subcommand is read as before,
// and errors are those of the whole interface.
TEST(MainParsersTest, BuildingOnlyTheNamedParsersChangesNothing) {
  const std::string dump =
      std::string(TRIALSHIM_BIN_DIR) + "/trialshim_argv_dump";
  struct Case {
    const char* name;
    std::vector<std::string> args;
    int exit_code;
    std::vector<std::string> out, err;  // each must appear
  };
  const Case cases[] = {
      {"help_lists_every_subcommand",
       {"--help"},
       0,
       {"Subcommands:", "  compose ", "  env ", "  launch ", "  check ",
        "  sweep ", "  job ", "  translate ", "--dry-run"},
       {}},
      {"subcommand_help", {"compose", "--help"}, 0, {"compose [OPTIONS]"}, {}},
      {"option_value_named_like_a_subcommand",
       {"--dry-run", "--keep", "env", "--", dump, "--lr=0.1", "--env=2"},
       0,
       {"\"lr=0.1\", \"--env=2\"]"},
       {}},
      {"option_value_named_like_a_subcommand_is_still_checked",
       {"--map-file", "job", "--", dump},
       2,
       {},
       {"'job'"}},
      {"run_option_out_of_range",
       {"--kill-after", "-1", "--", dump},
       2,
       {},
       {"--kill-after: must be from 0 to 604800, got '-1'"}},
      {"subcommand_after_a_run_option",
       {"--dry-run", "env", "--format", "json"},
       0,
       {"[]"},
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> argv = {testing::TrialshimBinary()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    testing::Finished f = testing::RunToEnd(argv);
    EXPECT_EQ(f.exit_code, c.exit_code) << f.out << f.err;
    for (const std::string& want : c.out) EXPECT_NE(f.out.find(want), std::string::npos) << f.out;
    for (const std::string& want : c.err) EXPECT_NE(f.err.find(want), std::string::npos) << f.err;
  }
}

}  // namespace
}  // namespace trialshim::cli
