// CreateRunDir: Hydra's .hydra/ files, written durably, and what a killed
// run left half-written removed (the files' contents against real Hydra are
// in app_test).
#include "app/src/run_dir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::app::internal {
namespace {

using testing::ListDir;
using testing::ReadFile;
using testing::TempDir;

config::Node Config() {
  return config::Node::MakeMap({{"seed", config::Node::Int(1)}});
}

config::Node Hydra() {
  return config::Node::MakeMap({{"mode", config::Node::String("RUN")}});
}

TEST(CreateRunDirTest, WritesTheHydraFilesAndRemovesStaleTemporaries) {
  TempDir dir;
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = ".metrics.csv.tmp." + std::to_string(dead) + ".0";
  dir.Write("run/" + stale, "half");
  dir.Write("run/.hydra/.config.yaml.tmp." + std::to_string(dead) + ".3", "h");
  ASSERT_OK(CreateRunDir(dir.Join("run"), ".hydra", Config(), Hydra(),
                         {"seed=1"}));
  EXPECT_EQ(ListDir(dir.Join("run")), std::set<std::string>{".hydra"});
  EXPECT_EQ(ListDir(dir.Join("run/.hydra")),
            (std::set<std::string>{"config.yaml", "hydra.yaml",
                                   "overrides.yaml"}));
  EXPECT_EQ(ReadFile(dir.Join("run/.hydra/overrides.yaml")), "- seed=1\n");
  EXPECT_EQ(ReadFile(dir.Join("run/.hydra/hydra.yaml")), "hydra:\n  mode: RUN\n");
}

TEST(CreateRunDirTest, NullOutputSubdirWritesNoHydraFiles) {
  TempDir dir;
  ASSERT_OK(CreateRunDir(dir.Join("run"), std::nullopt, Config(), Hydra(), {}));
  EXPECT_EQ(ListDir(dir.Join("run")), std::set<std::string>{});
}

TEST(CreateRunDirTest, WriteFailureNamesTheFileAndLeavesNoTemporary) {
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
    Status s;
    {
      testing::FileSizeLimit limit(c.size_limit ? c.size_limit : RLIM_INFINITY);
      s = CreateRunDir(dir.Join("run"), ".hydra", Config(), Hydra(), {"seed=1"});
    }
    EXPECT_EQ(s.code(), StatusCode::kIOError);
    EXPECT_NE(s.message().find(dir.Join("run/" + c.named)), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(std::strerror(c.reason)), std::string::npos)
        << s.message();
    if (c.size_limit > 0) {
      EXPECT_EQ(ListDir(dir.Join("run/.hydra")), std::set<std::string>{});
    }
  }
}

}  // namespace
}  // namespace trialshim::app::internal
