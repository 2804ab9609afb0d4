// Logger against Python's logging: the same dictConfig-shaped nodes and the
// same records, formatted by python3's logging module (run live; skipped if
// /usr/bin/python3 is missing) and by Logger into a log file.
#include "trialshim/app/logging.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/yaml_loader.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::app {
namespace {

config::Node Yaml(const std::string& text) {
  StatusOr<config::Node> n = config::LoadYamlString(text, "logging.yaml");
  EXPECT_OK(n);
  return n.ok() ? *n : config::Node();
}

// What Python's logging writes for `format` and the records "a"/DEBUG,
// "hello world"/INFO, "careful"/WARNING at root level `level`.
std::string PythonLines(const std::string& format, const std::string& level) {
  std::string cmd =
      "/usr/bin/python3 -c 'import logging, sys\n"
      "h = logging.StreamHandler(sys.stdout)\n"
      "h.setFormatter(logging.Formatter(sys.argv[1]))\n"
      "log = logging.getLogger(\"app\"); logging.root.addHandler(h)\n"
      "logging.root.setLevel(sys.argv[2])\n"
      "log.debug(\"a\"); log.info(\"hello world\"); log.warning(\"careful\")' '" +
      format + "' " + level + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (p) pclose(p);
  return out;
}

TEST(Logger, FormatsRecordsAsPythonsLogging) {
  const struct {
    const char* name;
    const char* format;
    const char* level;
  } cases[] = {
      {"hydra's layout without the time",
       "[%(name)s][%(levelname)s] - %(message)s", "INFO"},
      {"message only", "%(message)s", "DEBUG"},
      {"widths and justification", "%(levelname)-8s|%(name)6s|%(levelno)d|%(message)s",
       "INFO"},
      {"precision", "%(levelname).1s %(message).5s", "WARNING"},
      {"percent", "100%% %(message)s", "INFO"},
  };
  for (const auto& c : cases) {
    std::string want = PythonLines(c.format, c.level);
    if (want.find("No such file") != std::string::npos) GTEST_SKIP();
    testing::TempDir tmp;
    const std::string file = tmp.Join("app.log");
    config::Node job = Yaml(std::string("formatters: {f: {format: '") +
                            c.format + "'}}\nhandlers: {file: {class: "
                            "logging.FileHandler, formatter: f, filename: " +
                            file + "}}\nroot: {level: " + c.level +
                            ", handlers: [file]}\n");
    {
      StatusOr<std::unique_ptr<Logger>> log = Logger::FromConfig(
          config::Node::MakeMap(), job, config::Node::Bool(false), "app");
      ASSERT_OK(log) << c.name;
      (*log)->Debug("a");
      (*log)->Info("hello world");
      (*log)->Warning("careful");
    }
    std::ifstream in(file);
    std::stringstream got;
    got << in.rdbuf();
    EXPECT_EQ(got.str(), want) << c.name;
  }
}

TEST(Logger, RefusesWhatItCanNotHonour) {
  const struct {
    const char* name;
    const char* yaml;
    const char* message;
  } cases[] = {
      {"unknown field", "formatters: {f: {format: '%(nmae)s'}}\nhandlers: {c: "
       "{class: logging.StreamHandler, formatter: f}}\nroot: {handlers: [c]}",
       "%(nmae) is not supported (did you mean 'name'?)"},
      {"unknown handler class", "handlers: {c: {class: logging.handlers."
       "RotatingFileHandler}}\nroot: {handlers: [c]}",
       "'logging.handlers.RotatingFileHandler' is not supported"},
      {"handler not declared", "root: {handlers: [console]}",
       "names 'console', which is not in hydra.job_logging.handlers"},
      {"bad level", "root: {level: LOUD}", "unknown level 'LOUD'"},
      {"unwritable file", "handlers: {f: {class: logging.FileHandler, "
       "filename: /nonexistent/dir/app.log}}\nroot: {handlers: [f]}",
       "cannot open log file /nonexistent/dir/app.log: No such file"},
  };
  for (const auto& c : cases) {
    StatusOr<std::unique_ptr<Logger>> log = Logger::FromConfig(
        config::Node::MakeMap(), Yaml(c.yaml), config::Node::Bool(false), "app");
    ASSERT_FALSE(log.ok()) << c.name;
    EXPECT_THAT(log, StatusIs(_, HasSubstr(c.message))) << c.name;
  }
}

}  // namespace
}  // namespace trialshim::app
