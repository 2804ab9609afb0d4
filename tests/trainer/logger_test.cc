// What the loggers share (logger.cc): os.path.join, Lightning's version
// scan, the save_dir/name/version directory, and the default loggers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/testutil/temp_dir.h"
#include "trialshim/trainer/loggers.h"

namespace trialshim::trainer {
namespace {

TEST(LoggerTest, PathJoinIsPythonsOsPathJoin) {
  struct Case {
    std::vector<std::string> parts;
    std::string want;  // os.path.join(*parts) in Python 3.11
  } cases[] = {
      {{"logs", "lightning_logs", "version_0"},
       "logs/lightning_logs/version_0"},
      {{"logs", "", "version_0"}, "logs/version_0"},
      {{"logs", "", ""}, "logs/"},
      {{"logs/", "csv/", "version_1"}, "logs/csv/version_1"},
      {{"logs", "/abs", "v"}, "/abs/v"},
      {{"", "name", "v"}, "name/v"},
      {{"", "", "v"}, "v"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PathJoin(c.parts), c.want) << c.want;
  }
}

TEST(LoggerTest, NextVersionScansAsLightning) {
  struct Case {
    const char* name;
    std::vector<std::string> dirs;
    std::vector<std::string> files;
    int64_t want;
  };
  const Case cases[] = {
      {"missing directory", {}, {}, 0},
      {"none yet", {"other"}, {}, 0},
      {"one past the largest", {"version_0", "version_3", "version_1"}, {}, 4},
      {"text after a second '_' is ignored (split('_')[1])",
       {"version_10_old"},
       {},
       11},
      {"not digits",
       {"version_x", "version_", "version_1a", "versions_9"},
       {},
       0},
      {"files do not count", {"version_2"}, {"version_7"}, 3},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    const std::string root = dir.Join("lightning_logs");
    if (!c.dirs.empty() || !c.files.empty())
      std::filesystem::create_directory(root);
    for (const auto& d : c.dirs)
      std::filesystem::create_directory(root + "/" + d);
    for (const auto& f : c.files) dir.Write("lightning_logs/" + f, "");
    EXPECT_EQ(NextLoggerVersion(root), c.want) << c.name;
  }
}

TEST(LoggerTest, LogDirIsSaveDirNameVersion) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.Join("lightning_logs/version_4"));
  struct Case {
    const char* name;
    std::string save_dir;  // "" : the default (set_default_save_dir)
    std::string logger_name;
    LoggerVersion version;
    std::string want_dir;  // after the temp dir
    std::string want_version;
  };
  const Case cases[] = {
      {"defaults: the next version",
       "",
       "lightning_logs",
       {},
       "/lightning_logs/version_5",
       "5"},
      {"version number", "", "lightning_logs", int64_t{2},
       "/lightning_logs/version_2", "2"},
      {"version string is the directory", "", "exp", std::string("final"),
       "/exp/final", "final"},
      {"no name", "", "", int64_t{0}, "/version_0", "0"},
      {"no name, empty version: save_dir itself", "", "", std::string(), "/",
       ""},
      {"explicit save_dir wins over the default",
       dir.Join("mine"),
       "n",
       {},
       "/mine/n/version_0",
       "0"},
  };
  for (const Case& c : cases) {
    CsvLoggerOptions o;
    o.save_dir = c.save_dir;
    o.name = c.logger_name;
    o.version = c.version;
    CsvLogger logger(o);
    logger.set_default_save_dir(dir.path());
    EXPECT_EQ(logger.log_dir(), dir.path() + c.want_dir) << c.name;
    EXPECT_EQ(logger.version(), c.want_version) << c.name;
    EXPECT_EQ(logger.name(), c.logger_name) << c.name;
  }
}

// logger=true: metrics.csv in default_root_dir as before; on Vertex with
// TensorBoard asked for, a TensorBoardLogger into its directory too.
TEST(LoggerTest, DefaultLoggers) {
  struct Case {
    const char* name;
    const char* env;
    std::vector<std::string> want_dirs;
  };
  const Case cases[] = {
      {"local", nullptr, {"/root/"}},
      {"Vertex TensorBoard", "gs://b/tb", {"/root/", "/gcs/b/tb/"}},
  };
  for (const Case& c : cases) {
    if (c.env) {
      setenv("AIP_TENSORBOARD_LOG_DIR", c.env, 1);
    } else {
      unsetenv("AIP_TENSORBOARD_LOG_DIR");
    }
    std::vector<std::string> dirs;
    for (const auto& logger : DefaultLoggers()) {
      logger->set_default_save_dir("/root");
      dirs.push_back(logger->log_dir());
    }
    EXPECT_EQ(dirs, c.want_dirs) << c.name;
  }
  unsetenv("AIP_TENSORBOARD_LOG_DIR");
}

}  // namespace
}  // namespace trialshim::trainer
