// The trialshim binary end to end, with real child processes: the argv the
// trainer receives, exit codes, usage errors, signals (exec mode, scrape
// mode and PID 1 in a fresh PID namespace), metric scraping and the
// translate subcommand.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::cli {
namespace {

using nlohmann::json;
using ::trialshim::testing::Child;
using ::trialshim::testing::Finished;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::RunToEnd;
using ::trialshim::testing::TempDir;
using ::trialshim::testing::TrialshimBinary;
using ::trialshim::testing::WaitForFile;

const std::string kArgvDump =
    std::string(TRIALSHIM_BIN_DIR) + "/trialshim_argv_dump";
const std::string kTrainTree =
    std::string(TRIALSHIM_TEST_DATA_DIR) + "/conformance/compose/trees/train";

std::vector<std::string> Shim(std::vector<std::string> args) {
  args.insert(args.begin(), TrialshimBinary());
  return args;
}

TEST(Trialshim, TrainerReceivesTheTranslatedArgv) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"vertex_mix",
       {"experiment=base", "--lr=0.02", "--epochs", "5", "--dry",
        "--act=relu,gelu"},
       {"experiment=base", "lr=0.02", "epochs=5", "dry=true",
        "act='relu,gelu'"}},
      {"no_word_splitting_or_globbing",
       {"--name=my run", "--glob=*", "a b"},
       {"name=my run", "glob=*", "a b"}},
      {"empty_and_odd_passthrough",
       {"", "-", "~x", "'q'"},
       {"", "-", "~x", "'q'"}},
      {"hydra_flags",
       {"--multirun", "--cfg", "job", "seed=1,2"},
       {"--multirun", "--cfg", "job", "seed=1,2"}},
      {"no_args", {}, {}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = Shim({"--", kArgvDump});
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Finished f = RunToEnd(argv);
    ASSERT_EQ(f.exit_code, 0) << "case " << c.name << ": " << f.err;
    json got = json::parse(f.out, nullptr, false);
    ASSERT_TRUE(got.is_array()) << "case " << c.name << ": " << f.out;
    std::vector<std::string> have = got.get<std::vector<std::string>>();
    if (c.name == std::string("vertex_mix")) {
      // The comma value may be quoted either way; the rest is exact.
      ASSERT_EQ(have.size(), c.want.size()) << "case " << c.name;
      EXPECT_TRUE(have[4] == "act='relu,gelu'" ||
                  have[4] == "act=\"relu,gelu\"" ||
                  have[4] == "act=relu\\,gelu")
          << "case " << c.name << ": " << have[4];
      have[4] = c.want[4];
    }
    if (c.name == std::string("no_word_splitting_or_globbing")) {
      ASSERT_EQ(have.size(), 3u) << "case " << c.name << ": " << f.out;
      EXPECT_TRUE(have[0] == "name=my run" || have[0] == "name='my run'")
          << "case " << c.name << ": " << have[0];
      have[0] = c.want[0];
    }
    EXPECT_EQ(have, c.want) << "case " << c.name << ": " << f.out;
  }
}

std::vector<std::string> SplitOn(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    size_t end = s.find(sep, at);
    out.push_back(s.substr(at, end - at));
    if (end == std::string::npos) return out;
    at = end + sep.size();
  }
}

// The README's headline example, run as it is written: the job spec's
// command and args (with /app as examples/vertex, the image's layout), the
// arguments Vertex appends, and what the trainer receives.
TEST(Trialshim, ReadmeHeadlineExampleIsTrue) {
  const std::string readme =
      ReadFile(std::string(TRIALSHIM_SOURCE_DIR) + "/README.md");
  auto find = [&](const std::string& pattern) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(readme, m, std::regex(pattern))) << pattern;
    return m.size() > 1 ? m[1].str() : std::string();
  };
  std::vector<std::string> command = SplitOn(find("command: \\[([^\\]]*)\\]"), ", ");
  std::vector<std::string> args = SplitOn(find("args: \\[([^\\]]*)\\]"), ", ");
  std::vector<std::string> appended = SplitOn(find("Vertex appends\\s+`([^`]*)`"), " ");
  std::string receives = find("receives\\s+`([^`]*)`");
  ASSERT_FALSE(command.empty());
  ASSERT_EQ(command[0], "trialshim");
  std::vector<std::string> argv = {TrialshimBinary(), "--dry-run"};
  for (size_t i = 1; i < command.size(); ++i) {
    argv.push_back(std::regex_replace(
        command[i], std::regex("^/app/"),
        std::string(TRIALSHIM_SOURCE_DIR) + "/examples/vertex/"));
  }
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), appended.begin(), appended.end());
  Finished f = RunToEnd(argv);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  json got = json::parse(f.out);
  std::string overrides;
  for (size_t i = 2; i < got.size(); ++i) {
    overrides += (overrides.empty() ? "" : " ") + got[i].get<std::string>();
  }
  EXPECT_EQ(overrides, receives) << f.out;
}

TEST(Trialshim, DryRunPrintsOneJsonArray) {
  Finished f = RunToEnd(
      Shim({"--dry-run", "--", "python", "train.py", "--lr=0.1", "x=1"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out, "[\"python\", \"train.py\", \"lr=0.1\", \"x=1\"]\n");
}

// --dry-run prints what the trainer receives as Python's json.dumps(sys.argv)
// prints it there: checked against python3 itself run through trialshim,
// for text that is not UTF-8, non-ASCII text and a newline.
TEST(Trialshim, DryRunPrintsWhatPythonReceives) {
  const std::vector<std::string> args = {"--tag=a\xff\xfe" "b", "--name=\xe6\x97\xa5",
                                         "--note=two\nlines", "x=1"};
  const std::string code =
      "import json,sys; print(json.dumps(sys.argv[1:]))";
  std::vector<std::string> dry = {"--dry-run", "--", "/usr/bin/python3", "-c",
                                  code};
  std::vector<std::string> real = {"--", "/usr/bin/python3", "-c", code};
  dry.insert(dry.end(), args.begin(), args.end());
  real.insert(real.end(), args.begin(), args.end());
  Finished printed = RunToEnd(Shim(dry));
  Finished received = RunToEnd(Shim(real));
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  ASSERT_EQ(received.exit_code, 0) << received.err;
  // The dry run also shows the program and -c CODE; python3 prints the rest.
  std::string prefix = "[\"/usr/bin/python3\", \"-c\", \"" + code + "\", ";
  ASSERT_EQ(printed.out.substr(0, prefix.size()), prefix) << printed.out;
  EXPECT_EQ("[" + printed.out.substr(prefix.size()), received.out);
  EXPECT_NE(received.out.find("\\udcff\\udcfe"), std::string::npos)
      << received.out;
}

TEST(Trialshim, ExitCodes) {
  TempDir tmp;
  std::string not_exec = tmp.Write("train.sh", "#!/bin/sh\nexit 0\n");
  chmod(not_exec.c_str(), 0644);
  struct Case {
    const char* name;
    std::vector<std::string> command;
    int want_code;
    std::vector<std::string> want_in_stderr;
  };
  const std::vector<Case> cases = {
      {"success", {"/bin/true"}, 0, {}},
      {"child_code", {"/bin/sh", "-c", "exit 3", "--lr=1"}, 3, {}},
      {"child_code_255", {"/bin/sh", "-c", "exit 255"}, 255, {}},
      {"not_executable",
       {not_exec, "--lr=1"},
       126,
       {not_exec, "Permission denied"}},
      {"directory", {tmp.path()}, 126, {tmp.path(), "Permission denied"}},
      {"missing_path",
       {tmp.Join("missing/train")},
       127,
       {tmp.Join("missing/train"), "No such file or directory"}},
      {"missing_in_path",
       {"trialshim-no-such-trainer"},
       127,
       {"trialshim-no-such-trainer", "not found in PATH"}},
  };
  for (bool scrape : {false, true}) {
    for (const Case& c : cases) {
      std::vector<std::string> argv = Shim({});
      if (scrape) argv.insert(argv.end(), {"--metric-regex", "loss=([0-9.]+)"});
      argv.push_back("--");
      argv.insert(argv.end(), c.command.begin(), c.command.end());
      Finished f = RunToEnd(argv, {"CLOUD_ML_HP_METRIC_FILE=" + tmp.Join("m")});
      std::string name = std::string(c.name) + (scrape ? "/scrape" : "/exec");
      EXPECT_EQ(f.exit_code, c.want_code) << "case " << name << ": " << f.err;
      for (const std::string& part : c.want_in_stderr) {
        EXPECT_NE(f.err.find(part), std::string::npos)
            << "case " << name << ": " << f.err;
      }
    }
  }
}

TEST(Trialshim, ProgramKilledBySignal) {
  // Exec mode: trialshim is the program, so it dies of the signal itself.
  Finished exec = RunToEnd(Shim({"--", "/bin/sh", "-c", "kill -TERM $$"}));
  EXPECT_EQ(exec.term_signal, SIGTERM);
  // Supervised: trialshim reports 128+N, as a shell would.
  TempDir tmp;
  for (int sig : {SIGTERM, SIGKILL, SIGINT}) {
    Finished f = RunToEnd(Shim({"--metric-regex", "x=(1)", "--", "/bin/sh",
                                "-c", "kill -" + std::to_string(sig) + " $$"}),
                          {"CLOUD_ML_HP_METRIC_FILE=" + tmp.Join("m")});
    EXPECT_EQ(f.exit_code, 128 + sig) << "case signal " << sig << ": " << f.err;
  }
}

TEST(Trialshim, UsageErrorsExitTwoNamingTheArgument) {
  TempDir tmp;
  tmp.Write("bad/config.yaml", "lr: 0.1\nname: ${foo:bar\n");
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::string want_in_stderr;
  };
  const std::vector<Case> cases = {
      {"no_command", {}, "COMMAND"},
      {"nothing_after_dashdash", {"--dry-run", "--"}, "COMMAND"},
      {"unknown_option", {"--bogus", "--", "/bin/true"}, "--bogus"},
      {"bad_map", {"--map", "lr", "--", "/bin/true"}, "FROM=TO"},
      {"missing_map_file",
       {"--map-file", tmp.Join("nope.yaml"), "--", "/bin/true"},
       "nope.yaml"},
      {"tag_without_regex",
       {"--metric-tag", "x", "--", "/bin/true"},
       "--metric-regex"},
      {"bad_regex",
       {"--metric-regex", "(", "--", "/bin/true"},
       "--metric-regex"},
      {"config_name_missing",
       {"--config-path", kTrainTree, "--", "/bin/true"},
       "--config-name"},
      {"config_dir_missing",
       {"--config-path", tmp.Join("none"), "--config-name", "config", "--",
        "/bin/true"},
       "none"},
      {"bad_key", {"--dry-run", "--", "/bin/true", "--a b=1"}, "'--a b=1'"},
      {"unknown_key",
       {"--config-path", kTrainTree, "--config-name", "config", "--",
        "/bin/true", "--optimizer.lrr=0.1"},
       "did you mean 'optimizer.lr'"},
      // Issue 14.2: what the app refuses as it loads, refused here too.
      {"bad_interpolation_in_config",
       {"--dry-run", "--config-path", tmp.Join("bad"), "--config-name",
        "config", "--", "/bin/true", "--lr=0.2"},
       "config.yaml:2:7: GrammarParseError"},
      {"bad_interpolation_in_argument",
       {"--dry-run", "--", "/bin/true", "--name=${foo bar}"},
       "argument '--name=${foo bar}': the app would refuse the value: "
       "GrammarParseError"},
      // Issue 28.3: and the override's text, kept in hydra.overrides.task:
      // both quotes inside ${...}, and a blank that needs quotes.
      {"both_quotes_in_interpolation",
       {"--dry-run", "--", "/bin/true", "--name=${foo:'a', \"b\"} "},
       "argument '--name=${foo:'a', \"b\"} ': the app would refuse the "
       "override name="},
  };
  for (const Case& c : cases) {
    Finished f = RunToEnd(Shim(c.args));
    EXPECT_EQ(f.exit_code, 2) << "case " << c.name << ": " << f.err;
    EXPECT_NE(f.err.find(c.want_in_stderr), std::string::npos)
        << "case " << c.name << ": " << f.err;
  }
}

TEST(Trialshim, ConfigAwareDryRun) {
  Finished f =
      RunToEnd(Shim({"--dry-run", "--config-path", kTrainTree, "--config-name",
                     "config", "--", "python", "train.py", "--optimizer=sgd",
                     "--optimizer.momentum=0.95", "--data__batch-size=64.0",
                     "--optimizer.nesterov"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(
      json::parse(f.out, nullptr, false),
      json({"python", "train.py", "optimizer=sgd", "optimizer.momentum=0.95",
            "data.batch_size=64", "optimizer.nesterov=true"}));
  Finished added =
      RunToEnd(Shim({"--dry-run", "--add-unknown", "--config-path", kTrainTree,
                     "--config-name", "config", "--", "p", "--warmup=3"}));
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(json::parse(added.out, nullptr, false), json({"p", "+warmup=3"}));
}

TEST(Trialshim, MapAndKeepFlags) {
  TempDir tmp;
  std::string map_file = tmp.Write("map.yaml", "learning-rate: optimizer.lr\n");
  Finished f = RunToEnd(
      Shim({"--dry-run", "--map-file", map_file, "--map", "bs=data.batch_size",
            "--keep", "--local_rank", "--", "p", "--learning-rate=0.1", "--bs",
            "32", "--local_rank", "0"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(json::parse(f.out, nullptr, false),
            json({"p", "optimizer.lr=0.1", "data.batch_size=32", "--local_rank",
                  "0"}));
}

// A trialshim app (app::Run) translates Vertex's arguments itself, with its
// own config: trialshim without --config-path leaves them to it, so
// Vertex's 5432.0 for an int key arrives as 5432 through the app's config,
// where trialshim alone would have passed port=5432.0, which the app's
// schema refuses (issue 26.5). --map still renames.
TEST(Trialshim, TrialshimAppTranslatesItsOwnArguments) {
  TempDir dir;
  const std::string app = std::string(TRIALSHIM_BIN_DIR) + "/app_task";
  // The fields of app_task's schema (APP_TASK_SCHEMA), port an int.
  dir.Write("conf/config.yaml",
            "defaults:\n  - db: mysql\n  - _self_\nname: app\nport: 8080\n"
            "url: http://${db.host}:${port}\n");
  dir.Write("conf/db/mysql.yaml", "host: localhost\n");
  dir.Write("conf/db/pg.yaml", "host: pg\n");
  const std::string tree = dir.Join("conf");
  const std::vector<std::string> env = {"APP_TASK_SCHEMA=1"};
  struct Case {
    const char* name;
    std::vector<std::string> shim;  // trialshim's options
    std::vector<std::string> args;  // the trial's, after the app's flags
    std::string want;               // a line the task prints
  };
  const std::vector<Case> cases = {
      {"int key from Vertex's float", {}, {"--port=5432.0"}, "port: 5432"},
      {"--key value form", {}, {"--port", "80.0"}, "port: 80"},
      {"renamed by --map", {"--map", "p=port"}, {"--p=5433.0"}, "port: 5433"},
      {"group switch", {}, {"--db=pg", "--port=1"}, "  host: pg"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = c.shim;
    argv.insert(argv.end(), {"--", app, "--config-path", tree,
                             "hydra.run.dir=" + dir.Join("run")});
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Finished f = RunToEnd(Shim(argv), env);
    EXPECT_EQ(f.exit_code, 0) << c.name << ": " << f.err;
    EXPECT_NE(f.out.find("\n" + c.want + "\n"), std::string::npos)
        << c.name << ": " << f.out;
  }
  // What the app receives: Vertex's form, renamed; a program that is not an
  // app gets Hydra overrides (without a config, 5432.0 stays a float).
  Finished dry =
      RunToEnd(Shim({"--dry-run", "--map", "p=port", "--", app, "x=1",
                     "--p=5432.0", "--fast", "--cfg", "job"}));
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(json::parse(dry.out, nullptr, false),
            json({app, "x=1", "--port=5432.0", "--fast", "--cfg", "job"}));
  Finished other =
      RunToEnd(Shim({"--dry-run", "--", kArgvDump, "--port=5432.0"}));
  EXPECT_EQ(json::parse(other.out, nullptr, false),
            json({kArgvDump, "port=5432.0"}));
}

// --config-from-command: the config's types from the app's own `--cfg all`
// (a Python app's dataclass schema), here from a stand-in that prints what
// a Hydra app prints and otherwise shows its argv.
TEST(Trialshim, ConfigFromCommand) {
  TempDir dir;
  dir.Write("conf/model/small.yaml", "layers: 2\n");
  dir.Write("conf/model/big.yaml", "layers: 8\n");
  const std::string cfg =
      "hydra:\n"
      "  runtime:\n"
      "    config_sources:\n"
      "    - {path: hydra.conf, schema: pkg, provider: hydra}\n"
      "    - {path: " +
      dir.Join("conf") +
      ", schema: file, provider: main}\n"
      "    choices: {model: small}\n"
      "data:\n  batch_size: 32\n  path: data\n"
      "lr: 0.1\nmodel:\n  layers: 2\n";
  dir.Write("printed.yaml", cfg);
  // The stand-in logs each call, so the test sees how often it was asked.
  const std::string app =
      dir.Write("app.sh",
                "#!/bin/sh\n"
                "echo \"$*\" >> " +
                    dir.Join("calls") +
                    "\n"
                    "for a; do last2=\"$prev $a\"; prev=$a; done\n"
                    "if [ \"$last2\" = \"--cfg all\" ]; then cat " +
                    dir.Join("printed.yaml") +
                    "; exit 0; fi\n"
                    "exec " +
                    kArgvDump + " \"$@\"\n");
  chmod(app.c_str(), 0755);
  Finished f =
      RunToEnd(Shim({"--config-from-command", "--", app, "x=1",
                     "--data.batch_size=64.0", "--lr", "1", "--model=big"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(json::parse(f.out, nullptr, false),
            json({"x=1", "data.batch_size=64", "lr=1", "model=big"}));
  // Asked once for the static arguments, once more with the group switched.
  EXPECT_EQ(ReadFile(dir.Join("calls")),
            "x=1 --cfg all\nx=1 model=big --cfg all\n"
            "x=1 data.batch_size=64 lr=1 model=big\n");

  Finished typo = RunToEnd(
      Shim({"--config-from-command", "--", app, "--data.batch_sze=64.0"}));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean 'data.batch_size'?"), std::string::npos)
      << typo.err;
  struct Bad {
    const char* name;
    std::string program;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {"fails", dir.Write("fail.sh", "#!/bin/sh\nexit 3\n"),
       "exited with status 3"},
      {"not a Hydra app", dir.Write("plain.sh", "#!/bin/sh\necho training\n"),
       "printed no config with a hydra: node"},
      {"missing", dir.Join("none"), "cannot run"},
  };
  for (const Bad& b : bad) {
    chmod(b.program.c_str(), 0755);
    Finished r =
        RunToEnd(Shim({"--config-from-command", "--", b.program, "--lr=1"}));
    EXPECT_EQ(r.exit_code, 2) << b.name;
    EXPECT_NE(r.err.find(b.says), std::string::npos) << b.name << ": " << r.err;
    EXPECT_NE(r.err.find("--config-from-command"), std::string::npos)
        << b.name << ": " << r.err;
  }
  Finished both = RunToEnd(Shim({"--config-from-command", "--config-path",
                                 dir.path(), "--config-name", "c", "--", app}));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

// A real Python Hydra app whose config is typed by a dataclass: Hydra
// refuses Vertex's 64.0 for its int field, and trialshim passes 64 once it
// has asked the app for its config.
TEST(AnchorsConfigFromCommand, PythonDataclassApp) {
  SKIP_WITHOUT_ANCHORS();
  TempDir dir;
  dir.Write("conf/config.yaml",
            "defaults:\n  - base\n  - model: small\n  - _self_\n");
  dir.Write("conf/model/small.yaml", "layers: 2\n");
  dir.Write("conf/model/big.yaml", "layers: 8\n");
  std::string app =
      dir.Write("app.py",
                "import json\n"
                "from dataclasses import dataclass, field\n"
                "from typing import Any\n"
                "import hydra\n"
                "from hydra.core.config_store import ConfigStore\n"
                "from omegaconf import OmegaConf\n"
                "@dataclass\n"
                "class Data:\n"
                "    batch_size: int = 32\n"
                "@dataclass\n"
                "class Config:\n"
                "    data: Data = field(default_factory=Data)\n"
                "    lr: float = 0.1\n"
                "    model: Any = None\n"
                "ConfigStore.instance().store(name='base', node=Config)\n"
                "@hydra.main(version_base='1.3', config_path='conf', "
                "config_name='config')\n"
                "def main(cfg):\n"
                "    print(json.dumps(OmegaConf.to_container(cfg)))\n"
                "main()\n");
  const std::vector<std::string> trial = {
      testing::AnchorsPython(), app,      "hydra.run.dir=" + dir.Join("run"),
      "--data.batch_size=64.0", "--lr=1", "--model=big"};
  std::vector<std::string> plain = {"--"};
  plain.insert(plain.end(), trial.begin(), trial.end());
  Finished refused = RunToEnd(Shim(plain));
  EXPECT_NE(refused.exit_code, 0) << "Hydra refuses 64.0 for an int field";
  std::vector<std::string> asked = {"--config-from-command", "--"};
  asked.insert(asked.end(), trial.begin(), trial.end());
  Finished f = RunToEnd(Shim(asked));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  // dump(): 64 and 64.0 differ there.
  EXPECT_EQ(json::parse(f.out, nullptr, false).dump(),
            R"({"data":{"batch_size":64},"lr":1.0,"model":{"layers":8}})")
      << f.out;
}

TEST(Trialshim, ExecModeKeepsThePid) {
  Child p(Shim({"--", "/bin/sh", "-c", "echo $$"}));
  Finished f = p.Wait();
  EXPECT_EQ(f.exit_code, 0);
  EXPECT_EQ(f.out, std::to_string(p.pid()) + "\n");
}

// A Python trainer with no SIGTERM handler: Python's default is to die.
const char kPythonTrainer[] =
    "import sys, time\nprint('ready', "
    "flush=True)\ntime.sleep(60)\nsys.exit(5)\n";

TEST(Trialshim, SigtermReachesTheTrainer) {
  TempDir tmp;
  std::string ready = tmp.Join("ready");
  // Short sleeps keep the shell alive until the signal, the thing under
  // test: a shell runs a trap only between commands.
  std::string trap = "trap 'echo got-term; exit 42' TERM; : > " + ready +
                     "; while :; do sleep 0.02; done";
  struct Case {
    const char* name;
    std::vector<std::string> argv;
    const char* wait_for;  // stdout text, or "" to wait for the ready file
    int want_code;         // -1: killed by SIGTERM itself
  };
  const std::vector<Case> cases = {
      {"exec_shell_trap", Shim({"--", "/bin/sh", "-c", trap}), "", 42},
      {"scrape_shell_trap",
       Shim({"--metric-regex", "l=(1)", "--", "/bin/sh", "-c", trap}), "", 42},
      {"exec_python", Shim({"--", "/usr/bin/python3", "-c", kPythonTrainer}),
       "ready", -1},
      {"scrape_python",
       Shim({"--metric-regex", "l=(1)", "--", "/usr/bin/python3", "-c",
             kPythonTrainer}),
       "ready", 128 + SIGTERM},
  };
  for (const Case& c : cases) {
    unlink(ready.c_str());
    Child p(c.argv, {"CLOUD_ML_HP_METRIC_FILE=" + tmp.Join("m")});
    if (*c.wait_for) {
      ASSERT_TRUE(p.WaitForOutput(c.wait_for)) << "case " << c.name;
    } else {
      ASSERT_TRUE(WaitForFile(ready)) << "case " << c.name;
    }
    p.Signal(SIGTERM);
    Finished f = p.Wait();
    if (c.want_code < 0) {
      EXPECT_EQ(f.term_signal, SIGTERM) << "case " << c.name << ": " << f.err;
    } else {
      EXPECT_EQ(f.exit_code, c.want_code) << "case " << c.name << ": " << f.err;
    }
  }
}

// A trainer's tree: a shell, a background sleep in its group, and a
// Python sleeper that started a session of its own; their pids go to the
// files a, b and c in $D, each written whole under another name and renamed
// (a file that exists is complete). The sleeps are the tree's life, the
// thing under test, not waits.
const std::vector<std::string> kTrainerTree = {
    "--",
    "/bin/sh",
    "-c",
    "echo $$ > $D/a~; mv $D/a~ $D/a; sleep 300 & echo $! > $D/b~; "
    "mv $D/b~ $D/b; /usr/bin/python3 -c \"$1\" & wait",
    "sh",
    "import os, time\nos.setsid()\nd = os.environ['D']\n"
    "open(d + '/c~', 'w').write(str(os.getpid()))\n"
    "os.rename(d + '/c~', d + '/c')\ntime.sleep(300)\n"};

// kill -9 of a supervising trialshim (scraping, or with --kill-after; not
// PID 1) takes the trainer's whole tree with it: its group, and what left
// it. Before, the trainer's children lived on as orphans.
TEST(Trialshim, KilledSupervisorTakesTheTrainersWholeTree) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--metric-regex", "x=(1)"},
        std::vector<std::string>{"--kill-after", "2"}}) {
    TempDir tmp;
    std::vector<std::string> args = flags;
    args.insert(args.end(), kTrainerTree.begin(), kTrainerTree.end());
    Child p(Shim(args),
            {"CLOUD_ML_HP_METRIC_FILE=" + tmp.Join("m"), "D=" + tmp.path()});
    ASSERT_TRUE(::trialshim::testing::WaitForFiles(
        {tmp.Join("a"), tmp.Join("b"), tmp.Join("c")}))
        << "case " << flags[0];
    p.Signal(SIGKILL);
    Finished f = p.Wait();
    EXPECT_EQ(f.term_signal, SIGKILL) << "case " << flags[0];
    for (const char* name : {"a", "b", "c"}) {
      std::string pid = ReadFile(tmp.Join(name));
      ASSERT_FALSE(pid.empty()) << "case " << flags[0] << ": " << name;
      EXPECT_TRUE(::trialshim::testing::EndsWithin(std::stoi(pid), std::chrono::seconds(30))) << "case " << flags[0] << ": pid " << pid << " ("
                             << name << ") outlived trialshim";
    }
  }
}

// --kill-after makes trialshim supervise (it can act only then): a trainer
// that ignores SIGTERM gets SIGKILL that long after the forwarded SIGTERM.
// Before, trialshim exec'd the trainer and the option did nothing.
TEST(Trialshim, KillAfterEndsATrainerThatIgnoresSigterm) {
  Child p(Shim({"--kill-after", "1", "--", "/usr/bin/python3", "-c",
                "import signal, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "print('ready', flush=True)\ntime.sleep(300)\n"}));
  ASSERT_TRUE(p.WaitForOutput("ready"));
  p.Signal(SIGTERM);
  Finished f = p.Wait(std::chrono::seconds(120));
  EXPECT_FALSE(f.timed_out) << "SIGTERM was ignored and nothing followed";
  EXPECT_EQ(f.exit_code, 128 + SIGKILL) << f.err;
}

TEST(Trialshim, ScrapesMetricsIntoTheHypertuneFile) {
  TempDir tmp;
  std::string metrics = tmp.Join("hypertune/output.metrics");
  Finished f =
      RunToEnd(Shim({"--metric-regex", R"(val_loss=([0-9.e-]+))",
                     "--metric-tag", "val_loss", "--", "/bin/sh", "-c",
                     "echo epoch 1 val_loss=0.5; echo epoch 2 val_loss=1e-05 "
                     ">&2; exit 3"}),
               {"CLOUD_ML_HP_METRIC_FILE=" + metrics, "CLOUD_ML_TRIAL_ID=9"});
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_EQ(f.out, "epoch 1 val_loss=0.5\n");
  EXPECT_EQ(f.err, "epoch 2 val_loss=1e-05\n");
  std::string text = ReadFile(metrics);
  EXPECT_NE(text.find(R"("trial": "9", "val_loss": "0.5"})"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("trial": "9", "val_loss": "1e-05"})"),
            std::string::npos)
      << text;
}

// A metric file under a regular file cannot be written (ENOTDIR): a run
// whose every report fails exits 1 naming the file and the reason, unless
// the trainer's own failure code says more; one report that got through
// keeps exit 0 with a warning.
TEST(Trialshim, LostMetricsFailTheRun) {
  TempDir tmp;
  tmp.Write("plain", "");
  std::string blocked = tmp.Join("plain/output.metrics");
  std::string dir = tmp.Join("d");
  std::string later = dir + "/output.metrics";
  // Reports once, waits until that report is on disk, then turns the
  // metric file's directory into a regular file and reports again.
  std::string then_break = "echo v=1; " + std::string(TRIALSHIM_BIN_DIR) +
                           "/trialshim_wait_for_file " + later +
                           " || exit 9; rm -r " + dir + "; touch " + dir +
                           "; echo v=2";
  struct Case {
    const char* name;
    std::string script;
    std::string metric_file;
    int want_code;
    bool want_error;
  };
  const std::vector<Case> cases = {
      {"all_failed", "echo v=1; echo v=2", blocked, 1, true},
      {"all_failed_trainer_code_wins", "echo v=1; exit 3", blocked, 3, false},
      {"one_got_through", then_break, later, 0, false},
  };
  for (const Case& c : cases) {
    Finished f = RunToEnd(
        Shim({"--metric-regex", "v=([0-9]+)", "--", "/bin/sh", "-c", c.script}),
        {"CLOUD_ML_HP_METRIC_FILE=" + c.metric_file});
    EXPECT_EQ(f.exit_code, c.want_code) << "case " << c.name << ": " << f.err;
    EXPECT_NE(f.err.find("warning: could not report metric"), std::string::npos)
        << "case " << c.name << ": " << f.err;
    EXPECT_NE(f.err.find("Not a directory"), std::string::npos)
        << "case " << c.name << ": " << f.err;
    size_t error = f.err.find(
        "trialshim: error: no metric could be written to " + c.metric_file);
    EXPECT_EQ(error != std::string::npos, c.want_error)
        << "case " << c.name << ": " << f.err;
    if (c.want_error) {
      EXPECT_NE(f.err.find("Not a directory", error), std::string::npos)
          << "case " << c.name << ": " << f.err;
    }
  }
}

TEST(Trialshim, TranslateSubcommand) {
  Finished plain =
      RunToEnd(Shim({"translate", "--", "--lr=0.1", "x=1", "--epochs", "5"}));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "lr=0.1\nx=1\nepochs=5\n");
  Finished explained =
      RunToEnd(Shim({"translate", "--explain", "--", "--a=x,y"}));
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("--a=x,y"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("quoted"), std::string::npos) << explained.out;
  // A value holding a newline breaks the one-per-line text; json does not.
  Finished json_out = RunToEnd(Shim(
      {"translate", "--format", "json", "--", "--note=two\nlines", "x=1"}));
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  nlohmann::json overrides = nlohmann::json::parse(json_out.out, nullptr, false);
  ASSERT_TRUE(overrides.is_array()) << json_out.out;
  ASSERT_EQ(overrides.size(), 2u) << json_out.out;
  EXPECT_NE(overrides[0].get<std::string>().find("two\nlines"),
            std::string::npos)
      << json_out.out;
  EXPECT_EQ(overrides[1], "x=1");
  Finished refused =
      RunToEnd(Shim({"translate", "--config-path", kTrainTree, "--config-name",
                     "config", "--", "--optimizer=adamw"}));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("did you mean 'adam'"), std::string::npos)
      << refused.err;
}

// PID 1 in a fresh PID namespace, as in a container.
class Pid1 : public ::testing::Test {
 protected:
  void SetUp() override {
    Finished probe =
        RunToEnd({"unshare", "--fork", "--pid", "--mount-proc", "/bin/true"});
    if (probe.exit_code != 0) {
      GTEST_SKIP() << "unshare --pid not permitted here: " << probe.err;
    }
  }
  static std::vector<std::string> InNamespace(std::vector<std::string> args) {
    std::vector<std::string> argv = {"unshare", "--fork", "--pid",
                                     "--mount-proc", TrialshimBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // The namespace's PID 1 (trialshim) is unshare's only child.
  static pid_t ChildOf(pid_t parent) {
    std::ifstream in("/proc/" + std::to_string(parent) + "/task/" +
                     std::to_string(parent) + "/children");
    pid_t child = 0;
    in >> child;
    return child;
  }
};

TEST_F(Pid1, SupervisesInsteadOfExecing) {
  Finished f = RunToEnd(InNamespace({"--", "/bin/sh", "-c", "echo $$ $PPID"}));
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out, "2 1\n");
}

TEST_F(Pid1, ExitStatus) {
  struct Case {
    const char* name;
    std::string script;
    int want;
  } cases[] = {{"zero", "exit 0", 0},
               {"seven", "exit 7", 7},
               {"sigterm", "kill -TERM $$", 128 + SIGTERM},
               {"sigkill", "kill -KILL $$", 128 + SIGKILL}};
  for (const Case& c : cases) {
    Finished f = RunToEnd(InNamespace({"--", "/bin/sh", "-c", c.script}));
    EXPECT_EQ(f.exit_code, c.want) << "case " << c.name << ": " << f.err;
  }
}

TEST_F(Pid1, ForwardsSignalsToTheTrainer) {
  struct Case {
    const char* name;
    int sig;
    std::vector<std::string> command;
    int want;
  };
  const std::vector<Case> cases = {
      {"python_without_handler_sigterm",
       SIGTERM,
       {"/usr/bin/python3", "-c", kPythonTrainer},
       128 + SIGTERM},
      {"python_sigint_is_keyboard_interrupt",
       SIGINT,
       {"/usr/bin/python3", "-c", kPythonTrainer},
       128 + SIGINT},
      // The loops keep the shell alive for the signal (see above).
      {"shell_trap_usr1",
       SIGUSR1,
       {"/bin/sh", "-c",
        "trap 'exit 50' USR1; echo ready; while :; do sleep 0.02; done"},
       50},
      {"shell_trap_hup",
       SIGHUP,
       {"/bin/sh", "-c",
        "trap 'exit 51' HUP; echo ready; while :; do sleep 0.02; done"},
       51},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--"};
    args.insert(args.end(), c.command.begin(), c.command.end());
    Child p(InNamespace(args));
    ASSERT_TRUE(p.WaitForOutput("ready")) << "case " << c.name;
    pid_t init = ChildOf(p.pid());
    ASSERT_GT(init, 0) << "case " << c.name;
    kill(init, c.sig);
    Finished f = p.Wait();
    EXPECT_EQ(f.exit_code, c.want) << "case " << c.name << ": " << f.err;
  }
}

TEST_F(Pid1, ReapsOrphanedZombies) {
  // The inner shell leaves a background sleep behind; when it ends, the
  // orphan is PID 1's to reap. Any zombie left shows up as state Z. (The
  // sleeps are the orphan's life and the time PID 1 has to reap it: a
  // reap leaves nothing to wait on.)
  Finished f = RunToEnd(InNamespace(
      {"--", "/bin/sh", "-c",
       "sh -c 'sleep 0.1 &'; sleep 0.6; cat /proc/[0-9]*/stat 2>/dev/null"}));
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("(trialshim)"), std::string::npos)
      << "no process list: " << f.out;
  EXPECT_EQ(f.out.find(") Z "), std::string::npos) << f.out;
}

// A trainer that takes a while to checkpoint on SIGTERM, behind a shell
// that would copy its outputs afterwards: the common `command:`.
const char kSlowCheckpointer[] = R"(
import os, signal, sys, time
def on_term(sig, frame):
    time.sleep(float(os.environ["SAVE_SECONDS"]))
    with open(os.environ["CKPT"], "w") as f:
        f.write("saved")
    sys.exit(143)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while True:
    signal.pause()
)";

TEST_F(Pid1, SigtermReachesTheTrainerBehindAShell) {
  struct Case {
    const char* name;
    std::vector<std::string> flags;
    std::string save_seconds;
    bool want_saved;
  };
  const std::vector<Case> cases = {
      // bash dies of the SIGTERM at once; python is still saving, and PID 1
      // must not exit (which kills the namespace) before it is done.
      {"waits for the trainer's group", {}, "1", true},
      {"--kill-after ends a trainer that takes too long",
       {"--kill-after", "0.5"}, "60", false},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    std::string ckpt = tmp.Join("ckpt");
    std::vector<std::string> args = c.flags;
    for (const char* a : {"--", "/bin/bash", "-c",
                          "/usr/bin/python3 -c \"$TRAINER\"; echo done"}) {
      args.push_back(a);
    }
    Child p(InNamespace(args),
            {"TRAINER=" + std::string(kSlowCheckpointer), "CKPT=" + ckpt,
             "SAVE_SECONDS=" + c.save_seconds});
    ASSERT_TRUE(p.WaitForOutput("ready")) << "case " << c.name;
    pid_t init = ChildOf(p.pid());
    ASSERT_GT(init, 0) << "case " << c.name;
    kill(init, SIGTERM);
    Finished f = p.Wait();
    // The shell's own status: it died of SIGTERM before its `echo done`.
    EXPECT_EQ(f.exit_code, 128 + SIGTERM) << "case " << c.name << ": " << f.err;
    EXPECT_EQ(f.out.find("done"), std::string::npos) << "case " << c.name;
    EXPECT_EQ(ReadFile(ckpt), c.want_saved ? "saved" : "")
        << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::cli
