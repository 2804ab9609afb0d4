// ConfigFromCommand: what a Hydra app prints for `--cfg all`, read back as
// a composed config (here from stand-ins that print it; the Anchors suite in
// tests/cli/run_command_test.cc asks a real Python Hydra app).
#include "trialshim/shim/config_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::shim {
namespace {

using testing::TempDir;

std::string Script(TempDir& dir, const std::string& name,
                   const std::string& body) {
  std::string path = dir.Write(name, "#!/bin/sh\n" + body);
  chmod(path.c_str(), 0755);
  return path;
}

TEST(ConfigFromCommand, ReadsWhatTheAppPrints) {
  TempDir dir;
  dir.Write("conf/db/pg.yaml", "host: pg\n");
  dir.Write("printed.yaml",
            "hydra:\n"
            "  runtime:\n"
            "    config_sources:\n"
            "    - {path: " +
                dir.Join("conf") +
                ", schema: file, provider: main}\n"
                "    choices: {db: pg, hydra/launcher: basic, optional: null}\n"
                "db:\n  host: pg\nbatch_size: 32\nlr: 0.1\n");
  // Prints its arguments to stderr and the config to stdout.
  std::string app = Script(dir, "app.sh",
                           "echo \"$*\" > " + dir.Join("args") + "\ncat " +
                               dir.Join("printed.yaml") + "\n");
  StatusOr<config::ComposeResult> got = ConfigFromCommand({app, "a=1"});
  ASSERT_OK(got.status());
  EXPECT_EQ(testing::ReadFile(dir.Join("args")), "a=1 --cfg all\n");
  EXPECT_TRUE(got->config.Find("batch_size")->is_int());
  EXPECT_TRUE(got->config.Find("lr")->is_double());
  EXPECT_EQ(got->config.Find("hydra"), nullptr) << "hydra: is kept apart";
  EXPECT_NE(got->hydra.Find("runtime.choices"), nullptr);
  ASSERT_EQ(got->choices.size(), 3u);
  EXPECT_EQ(got->choices[0].first, "db");
  EXPECT_EQ(got->choices[0].second, "pg");
  EXPECT_EQ(got->choices[2].second, std::nullopt);
  EXPECT_EQ(got->repository.dir(), dir.Join("conf"));
  EXPECT_TRUE(got->repository.GroupExists("db"));
}

TEST(ConfigFromCommand, RefusesWhatIsNotAConfig) {
  TempDir dir;
  struct Case {
    std::string name, body, says;
  };
  const std::vector<Case> cases = {
      {"exit status", "exit 3\n", "exited with status 3"},
      {"not YAML", "echo 'a: [1'\n", "printed what is not YAML"},
      {"no hydra node", "echo 'lr: 1'\n",
       "printed no config with a hydra: node"},
      {"a training log", "echo 'epoch 1 loss 0.3'\n",
       "printed no config with a hydra: node"},
  };
  for (const Case& c : cases) {
    std::string app = Script(dir, "app.sh", c.body);
    StatusOr<config::ComposeResult> got = ConfigFromCommand({app});
    ASSERT_FALSE(got.ok()) << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.says)))
        << c.name;
    EXPECT_THAT(got, StatusIs(_, HasSubstr("--config-path")))
        << c.name << ": the way out is named";
  }
  StatusOr<config::ComposeResult> missing =
      ConfigFromCommand({dir.Join("none")});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound)
      << missing.status().message();
}


// The probe is bounded: an app that never answers `--cfg all` (it waits
// for a GPU, a lock, a prompt) is killed after the timeout, with what it
// started, and the error says how to give it longer.
TEST(ConfigFromCommand, AppThatNeverAnswersIsKilledAfterTheTimeout) {
  TempDir dir;
  const std::string fifo = dir.Join("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  struct Case {
    std::string name, body;
  };
  const std::vector<Case> cases = {
      {"sleeps", "exec sleep 300\n"},
      {"waits on a FIFO nobody writes", "read answer < " + fifo + "\n"},
      {"a daemon holds its stdout",
       "/usr/bin/python3 -c 'import os, sys, time; pid = os.fork(); "
       "(open(sys.argv[1], \"w\").write(str(pid)) if pid else (os.setsid(), "
       "time.sleep(300)))' " +
           dir.Join("daemon.pid") + "; sleep 300\n"},
  };
  for (const Case& c : cases) {
    std::string app = Script(dir, "app.sh", c.body);
    StatusOr<config::ComposeResult> got =
        ConfigFromCommand({app}, std::chrono::milliseconds(500));
    EXPECT_THAT(got,
                StatusIs(StatusCode::kIOError,
                         "--config-from-command: running `" + app +
                             " --cfg all`: '" + app +
                             "' did not finish within 0.5 s; it was killed (a "
                             "Hydra app prints its config for --cfg all and "
                             "exits; TRIALSHIM_CONFIG_PROBE_TIMEOUT sets the "
                             "seconds it may take)"))
        << c.name;
  }
  std::string pid = testing::ReadFile(dir.Join("daemon.pid"));
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(testing::EndsWithin(std::stoi(pid), std::chrono::seconds(20)))
      << "the app's daemon outlived the probe";
}

}  // namespace
}  // namespace trialshim::shim
