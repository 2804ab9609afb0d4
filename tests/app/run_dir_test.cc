// The run directory (app/src/run_dir.cc) through a real app run (app_task):
// Hydra's .hydra/ files, written durably, and what a killed run left
// half-written removed (the files' contents against real Hydra are in
// app_test).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "tests/testutil/fault.h"
#include "tests/testutil/hydra_app.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::app {
namespace {

using ::testing::HasSubstr;
using testing::ListDir;
using testing::ReadFile;
using testing::TempDir;

const std::string kTree = testing::kHydraAppDir + "/trees/basic";

// app_task on the basic tree in `dir` with its run directory <dir>/run,
// with SIGXFSZ ignored (Subprocess gives a child the default dispositions;
// an ignored one survives exec), so that a file size limit fails a write
// with EFBIG instead of killing the run.
testing::Finished RunIn(const TempDir& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {
      "sh",  "-c", "trap '' XFSZ; exec \"$0\" \"$@\"", testing::kAppTask,
      "-cp", kTree, "hydra.run.dir=run", "port=1"};
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions o = testing::Child::Options({});
  o.cwd = dir.path();
  return testing::RunToEndWith(argv, o);
}

TEST(RunDirTest, WritesTheHydraFilesAndRemovesStaleTemporaries) {
  TempDir dir;
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = ".metrics.csv.tmp." + std::to_string(dead) + ".0";
  dir.Write("run/" + stale, "half");
  dir.Write("run/.hydra/.config.yaml.tmp." + std::to_string(dead) + ".3", "h");
  testing::Finished r = RunIn(dir, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(dir.Join("run")).count(stale), 0u);
  EXPECT_EQ(ListDir(dir.Join("run/.hydra")),
            (std::set<std::string>{"config.yaml", "hydra.yaml",
                                   "overrides.yaml"}));
  EXPECT_EQ(ReadFile(dir.Join("run/.hydra/overrides.yaml")), "- port=1\n");
  EXPECT_EQ(ReadFile(dir.Join("run/.hydra/hydra.yaml")).rfind("hydra:\n", 0),
            0u);
}

TEST(RunDirTest, NullOutputSubdirWritesNoHydraFiles) {
  TempDir dir;
  testing::Finished r = RunIn(dir, {"hydra.output_subdir=null"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(dir.Join("run")).count(".hydra"), 0u);
}

TEST(RunDirTest, WriteFailureNamesTheFileAndLeavesNoTemporary) {
  struct Case {
    const char* name;
    rlim_t size_limit;  // 0: none; else .hydra is a regular file
    std::string named;  // what the message names, relative to run/
    int reason;
  };
  const Case cases[] = {
      {".hydra is a regular file", 0, ".hydra", ENOTDIR},
      {"file size limit (as a full disk)", 4, ".hydra/config.yaml", EFBIG},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    if (c.size_limit == 0) dir.Write("run/.hydra", "not a directory");
    testing::Finished r;
    {
      // The child inherits the limit.
      testing::FileSizeLimit limit(c.size_limit ? c.size_limit : RLIM_INFINITY);
      r = RunIn(dir, {});
    }
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(dir.Join("run/" + c.named)));
    EXPECT_THAT(r.err, HasSubstr(std::strerror(c.reason)));
    if (c.size_limit > 0) {
      EXPECT_EQ(ListDir(dir.Join("run/.hydra")), std::set<std::string>{});
    }
  }
}

}  // namespace
}  // namespace trialshim::app
