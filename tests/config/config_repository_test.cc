// ConfigRepository on a real directory: which groups and options Hydra
// would see there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/compose.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

using Strings = std::vector<std::string>;

class ConfigRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* f :
         {"config.yaml", "other.yaml", "db/mysql.yaml", "db/postgres.yaml",
          "db/notes.txt", "db/old.yml", "model/base.yaml",
          "model/encoder/small.yaml", "model/encoder/large.yaml",
          "__pycache__/x.yaml", "db/B.yaml"}) {
      tmp_.Write(f, "a: 1\n");
    }
    tmp_.Write("db/nested.yaml/keep", "");  // a directory, not an option
  }
  testing::TempDir tmp_;
};

TEST_F(ConfigRepositoryTest, ListsOptionsSortedBytewise) {
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(tmp_.path());
  ASSERT_OK(repo);
  struct {
    const char* name;
    const char* group;
    Strings want;
  } cases[] = {
      {"yaml files only, bytewise order", "db", {"B", "mysql", "postgres"}},
      {"nested group", "model/encoder", {"large", "small"}},
      {"primary configs", "", {"config", "other"}},
      {"missing group", "nope", {}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(repo->GroupOptions(c.group), c.want) << "case " << c.name;
  }
}

TEST_F(ConfigRepositoryTest, AnswersExistenceQuestions) {
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(tmp_.path());
  ASSERT_OK(repo);
  struct {
    const char* name;
    bool got;
    bool want;
  } cases[] = {
      {"group", repo->GroupExists("db"), true},
      {"nested group", repo->GroupExists("model/encoder"), true},
      {"file is no group", repo->GroupExists("config"), false},
      {"missing group", repo->GroupExists("optimizer"), false},
      {"config", repo->ConfigExists("db/mysql"), true},
      {"config with extension", repo->ConfigExists("db/mysql.yaml"), true},
      {"primary", repo->ConfigExists("config"), true},
      {".yml is not read (Hydra 1.2+)", repo->ConfigExists("db/old"), false},
      {"directory is no config", repo->ConfigExists("db/nested"), false},
      {"missing config", repo->ConfigExists("db/oracle"), false},
  };
  for (const auto& c : cases) EXPECT_EQ(c.got, c.want) << "case " << c.name;
}

// The app's groups and Hydra's own (pkg://hydra.conf comes first in Hydra's
// search path), sorted together; hydra/sweeper/sampler is
// hydra-optuna-sweeper's, which trialshim provides as Hydra does with the
// plugin installed.
TEST_F(ConfigRepositoryTest, ListsEveryGroupRecursively) {
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(tmp_.path());
  ASSERT_OK(repo);
  EXPECT_EQ(repo->Groups(),
            (Strings{"db", "db/nested.yaml", "hydra", "hydra/callbacks",
                     "hydra/env", "hydra/help", "hydra/hydra_help",
                     "hydra/hydra_logging", "hydra/job_logging",
                     "hydra/launcher", "hydra/output", "hydra/sweeper",
                     "hydra/sweeper/sampler", "model", "model/encoder"}));
  EXPECT_EQ(repo->dir(), tmp_.path());
}

TEST_F(ConfigRepositoryTest, KnowsHydrasOwnConfigs) {
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(tmp_.path());
  ASSERT_OK(repo);
  EXPECT_TRUE(repo->ConfigExists("hydra/config"));
  EXPECT_TRUE(repo->ConfigExists("hydra/job_logging/disabled.yaml"));
  EXPECT_FALSE(repo->ConfigExists("hydra/job_logging/colorlog"));
  EXPECT_EQ(repo->GroupOptions("hydra/job_logging"),
            (Strings{"default", "disabled", "none", "stdout"}));
  EXPECT_EQ(repo->GroupOptions("hydra/launcher"), Strings{"basic"});
}

TEST_F(ConfigRepositoryTest, RefusesWhatIsNotADirectory) {
  struct {
    const char* name;
    std::string dir;
    const char* message_has;
  } cases[] = {
      {"missing", tmp_.Join("nope"), "does not exist"},
      {"a file", tmp_.Join("config.yaml"), "is not a directory"},
      {"empty", "", "empty"},
  };
  for (const auto& c : cases) {
    StatusOr<ConfigRepository> repo = ConfigRepository::Open(c.dir);
    ASSERT_FALSE(repo.ok()) << "case " << c.name;
    EXPECT_THAT(repo, StatusIs(StatusCode::kNotFound, HasSubstr(c.message_has)))
        << "case " << c.name;
  }
}

// hydra.searchpath's pkg:// entries, as Hydra's importlib source finds
// them (checked against Hydra in tests/data/hydra_app: searchpath_*): the
// package's directory under the roots Python imports from; a name Python
// can not import is not searched; a namespace package (no __init__.py) is
// searched, with Hydra's warning.
TEST_F(ConfigRepositoryTest, SearchesPackagesAsPythonImportsThem) {
  testing::TempDir root;
  root.Write("pkg/__init__.py", "");
  root.Write("pkg/conf/__init__.py", "");
  root.Write("pkg/conf/data/a.yaml", "x: 1\n");
  root.Write("ns/data/b.yaml", "x: 1\n");
  root.Write("data/c.yaml", "x: 1\n");  // at the root itself
  struct {
    const char* name;
    const char* entry;
    const char* shown;    // its path in hydra.runtime.config_sources
    const char* option;   // of group "data", found through it ("" none)
    const char* warning;  // part of the warning, "" for none
  } cases[] = {
      {"package", "pkg://pkg.conf", "pkg.conf", "a", ""},
      {"slashes are dots", "pkg://pkg/conf/", "pkg.conf", "a", ""},
      {"namespace package", "pkg://ns", "ns", "b", "no __init__.py"},
      {"missing", "pkg://nowhere", "nowhere", "", "no directory nowhere"},
      {"empty name", "pkg://", "", "", "not a Python package name"},
      {"empty part", "pkg://pkg..conf", "pkg..conf", "",
       "not a Python package name"},
      {"relative name", "pkg://.data", ".data", "", "not a Python package name"},
  };
  for (const auto& c : cases) {
    StatusOr<ConfigRepository> repo = ConfigRepository::Open(tmp_.path());
    ASSERT_OK(repo);
    std::string warning;
    repo->AddSearchPath(c.entry, "test", {root.path()}, &warning);
    EXPECT_EQ(repo->Sources()[2].path, c.shown) << c.name;
    EXPECT_EQ(repo->GroupOptions("data"),
              *c.option ? Strings{c.option} : Strings{})
        << c.name;
    if (*c.warning) {
      EXPECT_NE(warning.find(c.warning), std::string::npos)
          << c.name << ": " << warning;
      EXPECT_NE(warning.find("path=" + std::string(c.shown) +
                             " is not available"),
                std::string::npos)
          << c.name << ": " << warning;
    } else {
      EXPECT_EQ(warning, "") << c.name;
    }
  }
}

// Issue 13.10: a config directory that can not be read is an I/O error
// (exit 1) naming it and the reason, not "Cannot find primary config" (exit
// 2). Root reads everything, so the check runs as nobody in a child.
TEST_F(ConfigRepositoryTest, UnreadableDirectoryIsAnIOError) {
  struct Case {
    const char* name;
    mode_t parent_mode;  // the temporary directory holding conf/
    mode_t conf_mode;
  } cases[] = {
      {"conf/ not listable", 0755, 0},
      {"its parent not searchable", 0700, 0755},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    const std::string conf = dir.Join("conf");
    dir.Write("conf/config.yaml", "a: 1\n");
    chmod(conf.c_str(), c.conf_mode);
    chmod(dir.path().c_str(), c.parent_mode);
    std::string got = testing::InChild([&] {
      std::string why = testing::AsNobody();
      if (!why.empty()) return "skip: " + why;
      StatusOr<ConfigRepository> repo = ConfigRepository::Open(conf);
      return repo.ok() ? std::string("opened") : repo.status().ToString();
    });
    chmod(dir.path().c_str(), 0700);
    chmod(conf.c_str(), 0755);
    if (got.rfind("skip: ", 0) == 0) GTEST_SKIP() << got;
    EXPECT_EQ(got, "IO_ERROR: cannot read config directory " + conf +
                       ": Permission denied")
        << c.name;
  }
}

// Lookups come from each directory's listing, read once
// (config/src/directory_listings.h); what a listing alone can not tell is
// asked with stat(2), so the answers are what stat(2) says: links are
// followed, a FIFO or a dangling link is no config, and a directory that
// may be searched but not listed (mode --x) still finds what it holds.
TEST_F(ConfigRepositoryTest, AnswersAsStatDoesForLinksAndOddEntries) {
  ASSERT_EQ(symlink("db/mysql.yaml", tmp_.Join("linked.yaml").c_str()), 0);
  ASSERT_EQ(symlink("db", tmp_.Join("dblink").c_str()), 0);
  ASSERT_EQ(symlink("gone.yaml", tmp_.Join("db/dangling.yaml").c_str()), 0);
  ASSERT_EQ(mkfifo(tmp_.Join("db/fifo.yaml").c_str(), 0644), 0);
  tmp_.Write("hidden/opt/a.yaml", "a: 1\n");
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(tmp_.path());
  ASSERT_OK(repo);
  struct {
    const char* name;
    bool got;
    bool want;
  } cases[] = {
      {"link to a config", repo->ConfigExists("linked"), true},
      {"link to a group", repo->GroupExists("dblink"), true},
      {"config through a linked group", repo->ConfigExists("dblink/mysql"),
       true},
      {"dangling link", repo->ConfigExists("db/dangling"), false},
      {"FIFO", repo->ConfigExists("db/fifo"), false},
      {"'..' in the path", repo->ConfigExists("db/../db/mysql"), true},
      {"'.' in the path", repo->GroupExists("./model/encoder"), true},
      {"config as a directory on the way", repo->ConfigExists("config/x"),
       false},
  };
  for (const auto& c : cases) EXPECT_EQ(c.got, c.want) << "case " << c.name;
  EXPECT_EQ(repo->GroupOptions("dblink"),
            (Strings{"B", "mysql", "postgres"}));  // not the FIFO or the link

  // Root lists every directory: the --x case runs as nobody in a child.
  chmod(tmp_.path().c_str(), 0755);
  chmod(tmp_.Join("hidden").c_str(), 0711);
  std::string got = testing::InChild([&] {
    std::string why = testing::AsNobody();
    if (!why.empty()) return "skip: " + why;
    StatusOr<ConfigRepository> in = ConfigRepository::Open(tmp_.path());
    if (!in.ok()) return in.status().ToString();
    return std::string(in->ConfigExists("hidden/opt/a") ? "found" : "not") +
           (in->GroupExists("hidden/opt") ? " group" : " none");
  });
  chmod(tmp_.Join("hidden").c_str(), 0755);
  chmod(tmp_.path().c_str(), 0700);
  if (got.rfind("skip: ", 0) == 0) GTEST_SKIP() << got;
  EXPECT_EQ(got, "found group");
}

}  // namespace
}  // namespace trialshim::config
