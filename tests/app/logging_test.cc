// Logger against Python's logging: the same dictConfig-shaped nodes and the
// same records, formatted by python3's logging module (run live; skipped if
// /usr/bin/python3 is missing) and by Logger into a log file; the levels
// config may give, taken or refused as logging._checkLevel does.
#include "trialshim/app/logging.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
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

// What `/usr/bin/python3 -c script args...` prints, stdout then stderr
// ("No such file" in it where there is no /usr/bin/python3).
std::string Python(const std::string& script,
                   const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3", "-c", script};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::Finished f = testing::RunToEnd(argv);
  return f.out + f.err;
}

// What Python's logging writes for `format` and the records "a"/DEBUG,
// "hello world"/INFO, "careful"/WARNING at root level `level`.
std::string PythonLines(const std::string& format, const std::string& level) {
  return Python(
      "import logging, sys\n"
      "h = logging.StreamHandler(sys.stdout)\n"
      "h.setFormatter(logging.Formatter(sys.argv[1]))\n"
      "log = logging.getLogger(\"app\"); logging.root.addHandler(h)\n"
      "logging.root.setLevel(sys.argv[2])\n"
      "log.debug(\"a\"); log.info(\"hello world\"); log.warning(\"careful\")",
      {format, level});
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
    config::Node job =
        Yaml(std::string("formatters: {f: {format: '") + c.format +
             "'}}\nhandlers: {file: {class: "
             "logging.FileHandler, formatter: f, filename: " +
             file + "}}\nroot: {level: " + c.level +
             ", handlers: [file]}\n"
             "disable_existing_loggers: false\n");
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

// Each level a config may give (as JSON, which YAML reads alike), through
// Python's logging._checkLevel and getLevelName live, and through ours:
// the same taken, as the same number printed with the same name, and the
// same refused, ours saying why and what would do.
TEST(Logger, TakesTheLevelsPythonsLoggingTakes) {
  const std::string levels =
      R"(["CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG",)"
      R"( "NOTSET", "warn", "Warning", "fatal", " INFO", "", "30", "Level 30",)"
      R"( 30, 50, 25, 0, -5, 1000, true, false, 1.5, null, [10], {"a": 1}])";
  const std::string got = Python(
      "import json, logging, sys\n"
      "out = []\n"
      "for v in json.loads(sys.argv[1]):\n"
      "    try:\n"
      "        n = int(logging._checkLevel(v))\n"
      "        out.append({\"level\": n, \"name\": logging.getLevelName(n)})\n"
      "    except (TypeError, ValueError) as e:\n"
      "        out.append({\"error\": str(e)})\n"
      "print(json.dumps(out))",
      {levels});
  if (got.find("No such file") != std::string::npos) GTEST_SKIP();
  nlohmann::json python = nlohmann::json::parse(got, nullptr, false);
  config::Node ours = Yaml(levels);
  ASSERT_TRUE(python.is_array()) << got;
  ASSERT_EQ(python.size(), ours.size()) << got;
  for (size_t i = 0; i < python.size(); ++i) {
    const nlohmann::json& want = python[i];
    const std::string name = nlohmann::json::parse(levels)[i].dump();
    StatusOr<int> level = CheckLevel(ours.AsList()[i], "x.level");
    if (want.contains("error")) {
      ASSERT_FALSE(level.ok()) << name << ": Python refuses it: " << want;
      EXPECT_THAT(level, StatusIs(_, HasSubstr("x.level: "))) << name;
      EXPECT_THAT(level, StatusIs(_, HasSubstr("a level is an int or one of "
                                               "CRITICAL, FATAL, ERROR, WARN, "
                                               "WARNING, INFO, DEBUG, NOTSET")))
          << name;
      continue;
    }
    ASSERT_OK(level) << name << ": Python takes it as " << want;
    EXPECT_EQ(*level, want["level"].get<int>()) << name;
    EXPECT_EQ(LevelName(*level), want["name"].get<std::string>()) << name;
  }
}

// A did-you-mean for a level names one that is taken (a name differs from
// Python's only in case), and a dictConfig with it logs.
TEST(Logger, ALevelsHintLeadsToALevelTaken) {
  const struct {
    const char* given;
    const char* hint;
  } cases[] = {{"warn", "WARN"},
               {"Warning", "WARNING"},
               {"fatal", "FATAL"},
               {"DEBGU", "DEBUG"}};
  for (const auto& c : cases) {
    StatusOr<std::unique_ptr<Logger>> refused =
        Logger::FromConfig(config::Node::MakeMap(),
                           Yaml(std::string("root: {level: ") + c.given + "}"),
                           config::Node::Bool(false), "app");
    EXPECT_THAT(refused,
                StatusIs(_, HasSubstr(std::string("unknown level '") + c.given +
                                      "' (did you mean '" + c.hint + "'?)")))
        << c.given;
    EXPECT_OK(
        Logger::FromConfig(config::Node::MakeMap(),
                           Yaml(std::string("root: {level: ") + c.hint + "}"),
                           config::Node::Bool(false), "app"))
        << c.hint;
  }
}

TEST(Logger, RefusesWhatItCanNotHonour) {
  const struct {
    const char* name;
    const char* yaml;
    const char* message;
  } cases[] = {
      {"unknown field",
       "formatters: {f: {format: '%(nmae)s'}}\nhandlers: {c: "
       "{class: logging.StreamHandler, formatter: f}}\nroot: {handlers: [c]}",
       "%(nmae) is not supported (did you mean 'name'?)"},
      {"unknown handler class",
       "handlers: {c: {class: logging.handlers."
       "RotatingFileHandler}}\nroot: {handlers: [c]}",
       "'logging.handlers.RotatingFileHandler' is not supported"},
      {"handler not declared", "root: {handlers: [console]}",
       "names 'console', which is not in hydra.job_logging.handlers"},
      {"bad level", "root: {level: LOUD}", "unknown level 'LOUD'"},
      {"level of another type", "root: {level: 1.5}",
       "hydra.job_logging.root.level: level 1.5 is not an int or a level name"},
      {"handler's level",
       "handlers: {c: {class: logging.StreamHandler, "
       "level: warn}}\nroot: {handlers: [c]}",
       "hydra.job_logging.handlers.c.level: unknown level 'warn'"},
      {"a declared handler no logger has",
       "handlers: {c: {class: "
       "logging.StreamHandler}, x: {class: nope}}\nroot: {handlers: [c]}",
       "hydra.job_logging.handlers.x.class 'nope' is not supported"},
      {"unwritable file",
       "handlers: {f: {class: logging.FileHandler, "
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
