// Container: the image's paths on this machine, the flag that finds a
// missing one, a trial's working directory, and telling a trialshim app.
#include "trialshim/tuning/container.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::tuning {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

TEST(ContainerTest, ParseVolume) {
  TempDir dir;
  dir.Write("host/x", "");
  struct Case {
    std::string name, text, host, container, error;
  };
  const std::vector<Case> cases = {
      {"absolute host", dir.Join("host") + ":/app", dir.Join("host"), "/app",
       ""},
      {"trailing slashes", dir.Join("host") + "/:/app/", dir.Join("host"),
       "/app", ""},
      {"no container", dir.Join("host"), "", "",
       "expected HOST:CONTAINER with an absolute CONTAINER path"},
      {"relative container", dir.Join("host") + ":app", "", "",
       "expected HOST:CONTAINER"},
      {"missing host", dir.Join("nope") + ":/app", "", "",
       "' does not exist here"},
  };
  for (const Case& c : cases) {
    StatusOr<Volume> v = ParseVolume(c.text);
    if (!c.error.empty()) {
      ASSERT_FALSE(v.ok()) << "case " << c.name;
      EXPECT_THAT(v, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.error)))
          << "case " << c.name;
      continue;
    }
    ASSERT_OK(v);
    EXPECT_EQ(v->host, c.host) << "case " << c.name;
    EXPECT_EQ(v->container, c.container) << "case " << c.name;
  }
}

TEST(ContainerTest, PathsAndTokens) {
  Container c("/work", {{"/h/app", "/app"}, {"/h/data", "/app/data"}});
  struct Case {
    std::string name, token, host_path, mapped;
  };
  const std::vector<Case> cases = {
      {"under a volume", "/app/conf", "/h/app/conf", "/h/app/conf"},
      {"the volume itself", "/app", "/h/app", "/h/app"},
      {"the longest volume wins", "/app/data/x.csv", "/h/data/x.csv",
       "/h/data/x.csv"},
      {"a prefix that is no component", "/apple/x", "/apple/x", "/apple/x"},
      {"outside every volume", "/usr/bin/python3", "/usr/bin/python3",
       "/usr/bin/python3"},
      {"relative: the working directory's, left to the links",
       "conf/x.yaml", "/work/conf/x.yaml", "conf/x.yaml"},
      {"after the first '='", "--config-path=/app/conf",
       "/work/--config-path=/app/conf", "--config-path=/h/app/conf"},
      {"an override's value", "data.path=/app/data", "/work/data.path=/app/data",
       "data.path=/h/data"},
      {"not a path", "trainer.max_epochs=3", "/work/trainer.max_epochs=3",
       "trainer.max_epochs=3"},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(c.HostPath(k.token), k.host_path) << "case " << k.name;
    EXPECT_EQ(c.MapToken(k.token), k.mapped) << "case " << k.name;
  }
}

// The flag under which a missing path would exist: a volume for the
// image's absolute paths (never over a directory this machine has), a
// working directory for relative ones, looked for near the job file.
TEST(ContainerTest, SuggestFix) {
  TempDir dir;
  dir.Write("project/examples/vertex/conf/config.yaml", "");
  dir.Write("project/examples/vertex/train.py", "");
  dir.Write("project/build/bin/app", "");
  std::string near = dir.Join("project/examples/vertex");
  Container c(dir.Join("elsewhere"), {});
  struct Case {
    std::string name, path, want;
  };
  const std::vector<Case> cases = {
      {"image directory", "/app/conf",
       "--volume " + dir.Join("project/examples/vertex") + ":/app"},
      {"image file", "/app/train.py",
       "--volume " + dir.Join("project/examples/vertex") + ":/app"},
      {"deeper root", "/app/src/conf",
       "--volume " + dir.Join("project/examples/vertex") + ":/app/src"},
      {"no root that is not here", "/usr/share/nothing-like-this", ""},
      {"relative, found in a parent", "build/bin/app",
       "--workdir " + dir.Join("project")},
      {"relative, nowhere", "no/such/thing", ""},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(c.SuggestFix(k.path, near), k.want) << "case " << k.name;
  }
}

TEST(ContainerTest, ResolveProgram) {
  TempDir dir;
  std::string tool = dir.Write("work/bin/tool", "#!/bin/sh\n");
  chmod(tool.c_str(), 0755);
  dir.Write("work/bin/plain", "");
  Container c(dir.Join("work"), {}, "/self/trialshim");
  struct Case {
    std::string name, program, path_var, want, error;
  };
  const std::vector<Case> cases = {
      {"trialshim by name", "trialshim", "", "/self/trialshim", ""},
      {"the image's trialshim", "/usr/local/bin/trialshim", "",
       "/self/trialshim", ""},
      {"relative to the working directory", "bin/tool", "", tool, ""},
      {"a relative PATH entry", "tool", "bin", tool, ""},
      {"missing", "bin/none", "", "",
       "the command 'bin/none' does not exist here (in " + dir.Join("work") +
           ")"},
      {"not in PATH", "none", "/nonexistent", "",
       "the command 'none' is not in the trial's PATH (/nonexistent)"},
      {"not executable", "bin/plain", "", "", "is not an executable file"},
  };
  for (const Case& k : cases) {
    StatusOr<std::string> got = c.ResolveProgram(k.program, k.path_var, "");
    if (!k.error.empty()) {
      ASSERT_FALSE(got.ok()) << "case " << k.name;
      EXPECT_THAT(got, StatusIs(_, HasSubstr(k.error))) << "case " << k.name;
      continue;
    }
    ASSERT_OK(got);
    EXPECT_EQ(*got, k.want) << "case " << k.name;
  }
}

// A trial's working directory links every entry of the working directory
// but --out's tree and Hydra's output roots; a rerun keeps what is there.
TEST(ContainerTest, LinkWorkdir) {
  TempDir dir;
  for (const char* f : {"src/a.py", "data/x.csv", "outputs/old/log",
                        "multirun/old/log", "sweeps/job/1/log", ".hidden"}) {
    dir.Write(std::string("work/") + f, "");
  }
  Container c(dir.Join("work"), {});
  std::string trial = dir.Join("trial/work");
  ASSERT_OK(c.LinkWorkdir(trial, {"sweeps"}));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(trial)) {
    names.push_back(e.path().filename().string());
    EXPECT_TRUE(e.is_symlink()) << "case " << names.back();
    EXPECT_EQ(fs::read_symlink(e.path()), dir.Join("work/" + names.back()))
        << "case " << names.back();
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".hidden", "data", "src"}));
  // What the trial made stays; new entries are linked on a rerun.
  dir.Write("trial/work/outputs/mine", "1");
  dir.Write("work/new.txt", "");
  ASSERT_OK(c.LinkWorkdir(trial, {"sweeps"}));
  EXPECT_EQ(testing::ReadFile(trial + "/outputs/mine"), "1");
  EXPECT_TRUE(fs::is_symlink(trial + "/new.txt"));
}

// A trial's overlay: the working directory over itself, the trial's work/
// above, --out bound back only when it lies inside (also by a route
// through a symbolic link, as the kernel resolves it).
TEST(ContainerTest, TrialOverlay) {
  TempDir dir;
  dir.Write("proj/data/x.csv", "");
  dir.Write("proj/sweeps/job/1/log", "");
  dir.Write("elsewhere/1/log", "");
  fs::create_directory_symlink(dir.Join("proj"), dir.Join("link"));
  std::string proj = fs::canonical(dir.Join("proj")).string();
  struct Case {
    std::string name;
    std::string workdir;
    std::string out;
    std::vector<std::string> keep;
  };
  const std::vector<Case> cases = {
      {"--out inside", dir.Join("proj"), dir.Join("proj/sweeps/job"),
       {proj + "/sweeps/job"}},
      {"--out outside", dir.Join("proj"), dir.Join("elsewhere"), {}},
      {"--out inside through a link", dir.Join("proj"),
       dir.Join("link/sweeps/job"), {proj + "/sweeps/job"}},
      {"working directory through a link", dir.Join("link"),
       dir.Join("proj/sweeps/job"), {proj + "/sweeps/job"}},
  };
  for (const Case& c : cases) {
    Container container(c.workdir, {});
    std::string trial = c.out + "/1";
    StatusOr<PrivateOverlay> o = container.TrialOverlay(trial, c.out);
    ASSERT_OK(o) << "case " << c.name;
    EXPECT_EQ(o->dir, proj) << "case " << c.name;
    EXPECT_EQ(o->upper, trial + "/work") << "case " << c.name;
    EXPECT_EQ(o->work, trial + "/.overlay") << "case " << c.name;
    EXPECT_TRUE(fs::is_directory(o->upper)) << "case " << c.name;
    EXPECT_TRUE(fs::is_directory(o->work)) << "case " << c.name;
    EXPECT_EQ(o->keep, c.keep) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::tuning
