// digits-train as a real child process: SIGTERM mid-run then a restart
// ends exactly like an uninterrupted run, the metric file has
// cloudml-hypertune's format, metrics.csv and .hydra/ are written, config
// errors exit 2 with did-you-mean, Vertex-style arguments work (through
// trialshim too), and
// --cfg job prints the config.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace {

using trialshim::testing::Child;
using trialshim::testing::Finished;
using trialshim::Stdio;
using trialshim::SubprocessOptions;
using trialshim::testing::ReadFile;
using trialshim::testing::TempDir;

const std::string kBinary = std::string(TRIALSHIM_BIN_DIR) + "/digits-train";

// How digits-train runs here: extra environment `env` ("K=V"), in `cwd`,
// stdout and stderr on one pipe.
SubprocessOptions DigitsOptions(const std::vector<std::string>& env,
                                const std::string& cwd) {
  SubprocessOptions o = Child::Options(env);
  o.err = Stdio::SameAsStdout();
  o.cwd = cwd;
  return o;
}

std::vector<std::string> DigitsArgv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

int RunDigits(const std::vector<std::string>& args, std::string* out,
              const std::vector<std::string>& env = {},
              const std::string& cwd = "/") {
  Finished f = trialshim::testing::RunToEndWith(DigitsArgv(args),
                                                DigitsOptions(env, cwd));
  *out = f.out;
  return f.code();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The rows of a CSV file as Python's csv module writes them: each ends in
// "\r\n" (a file with other line ends reads as one row).
std::vector<std::string> CsvRows(const std::string& text) {
  std::vector<std::string> rows;
  for (size_t at = 0, end; (end = text.find("\r\n", at)) != std::string::npos;
       at = end + 2) {
    rows.push_back(text.substr(at, end - at));
  }
  return rows;
}

// The last metrics.csv row that has a val_acc, as "val_acc,val_loss" text.
std::string LastValidation(const std::string& csv) {
  auto lines = CsvRows(csv);
  if (lines.empty()) return "";
  std::vector<std::string> header;
  std::stringstream hs(lines[0]);
  for (std::string h; std::getline(hs, h, ',');) header.push_back(h);
  std::string last;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells;
    std::stringstream cs(lines[i]);
    for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(cell);
    cells.resize(header.size());
    std::string acc, loss, step;
    for (size_t k = 0; k < header.size(); ++k) {
      if (header[k] == "val_acc") acc = cells[k];
      if (header[k] == "val_loss") loss = cells[k];
      if (header[k] == "step") step = cells[k];
    }
    if (!acc.empty()) last = "step " + step + ": " + acc + "," + loss;
  }
  return last;
}

const std::vector<std::string> kDeterministic = {
    "trainer.deterministic=true", "trainer.max_epochs=8",
    "trainer.enable_progress_bar=false"};

std::vector<std::string> With(std::vector<std::string> a,
                              const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(DigitsTrainTest, SigtermThenRestartEndsLikeAnUninterruptedRun) {
  TempDir dir;
  // Uninterrupted.
  std::string out_a;
  ASSERT_EQ(
      RunDigits(With(kDeterministic, {"hydra.run.dir=" + dir.Join("a")}),
                &out_a, {"CLOUD_ML_HP_METRIC_FILE=" + dir.Join("a.metrics")}),
      0)
      << out_a;

  // Interrupted after epoch 2 has been logged, then restarted.
  const std::vector<std::string> args =
      With(kDeterministic, {"hydra.run.dir=" + dir.Join("b")});
  const std::vector<std::string> env = {"CLOUD_ML_HP_METRIC_FILE=" +
                                        dir.Join("b.metrics")};
  Child child(DigitsArgv(args), DigitsOptions(env, "/"));
  ASSERT_TRUE(child.WaitForOutput("Epoch 2:", std::chrono::minutes(5)))
      << child.out();
  child.Signal(SIGTERM);
  Finished stopped = child.Wait();
  std::string out_b = stopped.out;
  EXPECT_EQ(stopped.code(), 143) << out_b;
  EXPECT_NE(out_b.find("stopped by SIGTERM"), std::string::npos) << out_b;
  EXPECT_NE(out_b.find("checkpoint saved to " + dir.Join("b") +
                       "/checkpoints/last.ckpt"),
            std::string::npos)
      << out_b;
  std::string out_b2;
  ASSERT_EQ(RunDigits(args, &out_b2, env), 0) << out_b2;
  EXPECT_NE(
      out_b2.find("Resumed from " + dir.Join("b") + "/checkpoints/last.ckpt"),
      std::string::npos)
      << out_b2;

  const std::string want = LastValidation(ReadFile(dir.Join("a/metrics.csv")));
  ASSERT_NE(want, "");
  EXPECT_EQ(LastValidation(ReadFile(dir.Join("b/metrics.csv"))), want)
      << "uninterrupted:\n"
      << out_a << "\ninterrupted:\n"
      << out_b << "\nrestarted:\n"
      << out_b2;
  // Issue 13.7: the restart keeps the history before the checkpoint, so the
  // whole log is the uninterrupted run's, row for row.
  EXPECT_EQ(ReadFile(dir.Join("b/metrics.csv")),
            ReadFile(dir.Join("a/metrics.csv")))
      << "uninterrupted:\n"
      << out_a << "\ninterrupted:\n"
      << out_b << "\nrestarted:\n"
      << out_b2;
  auto last_report = [](const std::string& text) {
    auto lines = Lines(text);
    std::string line = lines.empty() ? "" : lines.back();
    // Everything but the timestamp and the run-specific path.
    return std::regex_replace(
        line, std::regex(R"re("timestamp": [0-9.e+]+|/[ab]/)re"), "");
  };
  EXPECT_EQ(last_report(ReadFile(dir.Join("b.metrics"))),
            last_report(ReadFile(dir.Join("a.metrics"))));
  // The final parameters too, byte for byte.
  EXPECT_TRUE(ReadFile(dir.Join("b/model.pt")) == ReadFile(dir.Join("a/model.pt")));
}

// Issue 13.1: a model directory that can not take model.pt is an error that
// names the file and the OS reason, exit 1 (not an abort), and no partial
// file or temporary is left there. The full disk is a 4 KiB tmpfs in a
// private mount namespace (unshare), listed before the namespace goes.
TEST(DigitsTrainTest, ModelWriteFailureIsAClearErrorAndLeavesNothing) {
  struct Case {
    const char* name;
    bool tmpfs;          // else the model directory's parent is a file
    std::string reason;  // strerror text
  };
  const Case cases[] = {
      {"full disk", true, std::strerror(ENOSPC)},
      {"parent is a regular file", false, std::strerror(ENOTDIR)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    dir.Write("file", "f");
    const std::string model_dir =
        c.tmpfs ? dir.Join("model") : dir.Join("file/model");
    std::filesystem::create_directories(dir.Join("model"));
    const std::string run =
        kBinary + " --trainer.max_epochs=1 hydra.run.dir=" + dir.Join("run") +
        " trainer.enable_progress_bar=false";
    const std::string script =
        (c.tmpfs
             ? "mount -t tmpfs -o size=4k none " + model_dir + " || exit 99; "
             : std::string()) +
        run + "; echo \"exit=$?\"; ls -A " + dir.Join("model");
    std::vector<std::string> argv = {"sh", "-c", script};
    if (c.tmpfs) argv = {"unshare", "-m", "sh", "-c", script};
    std::string cmd = "AIP_MODEL_DIR=" + model_dir;
    for (const auto& a : argv) cmd += " '" + a + "'";
    std::string out;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    int status = pclose(p);
    if (c.tmpfs && WIFEXITED(status) && WEXITSTATUS(status) == 99) {
      GTEST_SKIP() << "no tmpfs in a mount namespace here: " << out;
    }
    EXPECT_NE(out.find("exit=1\n"), std::string::npos) << out;
    EXPECT_NE(out.find(model_dir), std::string::npos) << out;
    EXPECT_NE(out.find(c.reason), std::string::npos) << out;
    // After "exit=1": the listing of the model directory, empty.
    EXPECT_EQ(out.substr(out.find("exit=1\n") + 7), "") << out;
  }
}

// A fit that fails says why on stderr, as Hydra reports the exception a
// Python task raises ("Error executing job with overrides: [...]", then
// the error), whatever the logging config: with hydra/job_logging=disabled
// too, and never on stdout.
TEST(DigitsTrainTest, AFailedFitSaysWhyOnStderrAsHydraDoes) {
  const char* logging[] = {"hydra/job_logging=default",
                           "hydra/job_logging=disabled"};
  for (const char* l : logging) {
    SCOPED_TRACE(l);
    TempDir dir;
    SubprocessOptions o = Child::Options({});
    o.cwd = dir.path();
    Finished f = trialshim::testing::RunToEndWith(
        DigitsArgv(
            {"data.path=/nope.csv", "hydra.run.dir=" + dir.Join("run"), l}),
        o);
    EXPECT_EQ(f.code(), 2) << f.out << f.err;
    // The task's overrides: Hydra's own (hydra.*, hydra/...) are not.
    EXPECT_EQ(f.err.rfind("Error executing job with overrides: "
                          "['data.path=/nope.csv']\n",
                          0),
              0u)
        << f.err;
    EXPECT_NE(f.err.find("can not open data file /nope.csv"), std::string::npos)
        << f.err;
    EXPECT_EQ(f.out.find("/nope.csv"), std::string::npos) << f.out;
  }
}

// SIGINT (Ctrl-C) and SIGHUP (a closed terminal) checkpoint like SIGTERM,
// and the exit code says which (128 + N).
TEST(DigitsTrainTest, EveryStopSignalCheckpoints) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(strsignal(sig));
    TempDir dir;
    Child child(DigitsArgv({"trainer.max_epochs=500",
                            "trainer.enable_progress_bar=false",
                            "hydra.run.dir=" + dir.Join("run")}),
                DigitsOptions({}, "/"));
    ASSERT_TRUE(child.WaitForOutput("Epoch 0:", std::chrono::minutes(5)))
        << child.out();
    child.Signal(sig);
    Finished f = child.Wait();
    EXPECT_EQ(f.code(), 128 + sig) << f.out;
    EXPECT_NE(f.out.find("checkpoint saved to " + dir.Join("run") +
                         "/checkpoints/last.ckpt"),
              std::string::npos)
        << f.out;
  }
}

// Issue 13.2: a newest checkpoint that exists but can not be read may be a
// good one: the trainer stops (exit 1, the file and the OS reason) instead
// of starting over from epoch 0 and overwriting the good checkpoints. The
// faults: EACCES (the file is root's, mode 0, and digits-train runs as
// nobody through setpriv) and EIO (strace injects it into every read of
// that file). The checkpoints stay byte for byte.
TEST(DigitsTrainTest, UnreadableCheckpointStopsInsteadOfStartingOver) {
  struct Case {
    const char* name;
    std::vector<std::string> wrapper;  // the checkpoints' paths follow
    int reason;
  };
  TempDir dir;
  chmod(dir.path().c_str(), 0777);  // nobody writes its run directory here
  const std::string ckpt = dir.Join("ckpt");
  const std::vector<std::string> env = {
      "AIP_CHECKPOINT_DIR=" + ckpt,
      "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("output.metrics")};
  std::string out;
  ASSERT_EQ(RunDigits({"trainer.max_epochs=2", "trainer.enable_progress_bar=false",
                       "hydra.run.dir=" + dir.Join("first")},
                      &out, env),
            0)
      << out;
  std::map<std::string, std::string> before;  // every checkpoint's bytes
  for (const auto& f : std::filesystem::directory_iterator(ckpt)) {
    if (f.path().extension() == ".ckpt") before[f.path()] = ReadFile(f.path());
  }
  ASSERT_GE(before.size(), 1u) << out;
  const Case cases[] = {
      {"EACCES", {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"},
       EACCES},
      {"EIO", {"strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=read",
               "-e", "inject=read:error=EIO"},
       EIO},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (trialshim::testing::RunToEnd({c.wrapper[0], "--version"}).exit_code != 0) {
      GTEST_SKIP() << c.wrapper[0] << " is not installed";
    }
    chmod(ckpt.c_str(), 0777);
    std::vector<std::string> argv = c.wrapper;
    for (const auto& [path, bytes] : before) {
      chmod(path.c_str(), c.reason == EACCES ? 0 : 0644);
      if (c.reason == EIO) argv.insert(argv.end(), {"-P", path});
    }
    argv.push_back(kBinary);
    for (const char* a : {"trainer.max_epochs=4", "trainer.enable_progress_bar=false"}) {
      argv.push_back(a);
    }
    argv.push_back("hydra.run.dir=" + dir.Join(std::string("run-") + c.name));
    Finished f =
        trialshim::testing::RunToEndWith(argv, DigitsOptions(env, "/"));
    EXPECT_EQ(f.code(), 1) << f.out;
    EXPECT_NE(f.out.find("can not read checkpoint " + ckpt + "/"),
              std::string::npos)
        << f.out;
    EXPECT_NE(f.out.find(std::strerror(c.reason)), std::string::npos) << f.out;
    EXPECT_EQ(f.out.find("Epoch 0:"), std::string::npos) << f.out;
    for (const auto& [path, bytes] : before) {
      chmod(path.c_str(), 0644);
      EXPECT_TRUE(ReadFile(path) == bytes) << path << " was rewritten";
    }
  }
}

// When every checkpoint fails its checks (cut short, or random bytes),
// digits-train still trains from epoch 0, as a preempted trial must still
// give a measurement, but keeps each file aside as <name>.unreadable-1 byte
// for byte, says which and why at WARNING (on the console and in the run's
// log), and records the restart in the trainer state of every later
// checkpoint, carried on by a later resume.
TEST(DigitsTrainTest, UnreadableCheckpointsAreKeptAsideAndTheRestartRecorded) {
  struct Case {
    const char* name;
    std::string (*damage)(const std::string&);
  } cases[] = {
      {"truncated",
       [](const std::string& b) { return b.substr(0, b.size() / 2); }},
      {"random bytes",
       [](const std::string& b) {
         std::string r(b.size(), '\0');
         unsigned x = 7;
         for (char& c : r) c = static_cast<char>((x = x * 1103515245 + 12345) >> 16);
         return r;
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    const std::string ckpt = dir.Join("ckpt");
    const std::vector<std::string> env = {
        "AIP_CHECKPOINT_DIR=" + ckpt,
        "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("output.metrics")};
    const std::vector<std::string> quiet = {"trainer.enable_progress_bar=false"};
    std::string out;
    ASSERT_EQ(RunDigits(With({"trainer.max_epochs=2",
                              "hydra.run.dir=" + dir.Join("first")},
                             quiet),
                        &out, env),
              0)
        << out;
    std::map<std::string, std::string> damaged;  // path -> its bytes now
    for (const auto& f : std::filesystem::directory_iterator(ckpt)) {
      if (f.path().extension() != ".ckpt") continue;
      damaged[f.path()] = c.damage(ReadFile(f.path()));
      std::ofstream(f.path(), std::ios::binary | std::ios::trunc)
          << damaged[f.path()];
    }
    ASSERT_GE(damaged.size(), 1u) << out;
    ASSERT_EQ(RunDigits(With({"trainer.max_epochs=2",
                              "hydra.run.dir=" + dir.Join("second")},
                             quiet),
                        &out, env),
              0)
        << out;
    for (const auto& [path, bytes] : damaged) {
      EXPECT_TRUE(ReadFile(path + ".unreadable-1") == bytes)
          << path << " was not kept aside as it was";
      EXPECT_NE(out.find("[WARNING] - Unreadable checkpoint " + path +
                         " kept aside as " + path + ".unreadable-1: checkpoint " +
                         path + " is truncated or corrupt: "),
                std::string::npos)
          << out;
    }
    const std::string restart = "[WARNING] - Every checkpoint in " + ckpt +
                                " was unreadable (" +
                                std::to_string(damaged.size()) +
                                " kept aside): training starts again from "
                                "epoch 0";
    EXPECT_NE(out.find(restart), std::string::npos) << out;
    std::string run_log;
    for (const auto& f : std::filesystem::directory_iterator(dir.Join("second"))) {
      if (f.path().extension() == ".log") run_log += ReadFile(f.path());
    }
    EXPECT_NE(run_log.find(restart), std::string::npos) << run_log;
    // The trainer state of the new checkpoints, and of those a resume
    // writes after them, names what was kept aside.
    const std::string kept = damaged.begin()->first + ".unreadable-1";
    EXPECT_NE(ReadFile(ckpt + "/last.ckpt").find("restarts"), std::string::npos);
    EXPECT_NE(ReadFile(ckpt + "/last.ckpt").find(kept), std::string::npos);
    ASSERT_EQ(RunDigits(With({"trainer.max_epochs=3",
                              "hydra.run.dir=" + dir.Join("third")},
                             quiet),
                        &out, env),
              0)
        << out;
    EXPECT_TRUE(std::regex_search(
        out, std::regex("Resumed from " + ckpt + "/[^ ]+\\.ckpt \\(epoch 2,")))
        << out;
    EXPECT_NE(ReadFile(ckpt + "/last.ckpt").find(kept), std::string::npos)
        << "the restart is carried on by a resume";
  }
}

// Issue 34.1: a run into a directory that holds another run's checkpoints
// (other settings) never resumes them: each is kept aside, named at
// WARNING with what differs, and the run trains from epoch 0; the same
// settings resume. Cases: a plain run into an old hydra.run.dir, and the
// issue's `-m hparams_search=digits_optuna` twice into one sweep directory
// with another seed, whose jobs must not return the first run's val_acc.
TEST(DigitsTrainTest, AnotherRunsCheckpointsAreNeverResumed) {
  const std::string data =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/data/digits.csv.gz";
  const std::string tree =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning";
  TempDir dir;
  const std::string run = dir.Join("run");
  const std::string ckpt = run + "/checkpoints/last.ckpt";
  const std::vector<std::string> quiet = {"trainer.enable_progress_bar=false",
                                          "hydra.run.dir=" + run};
  std::string out;
  ASSERT_EQ(RunDigits(With({"trainer.max_epochs=1", "optimizer.lr=0.01"}, quiet),
                      &out),
            0)
      << out;
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::vector<std::string> says;  // empty for a resume
  };
  const std::vector<Case> cases = {
      {"other lr and seed",
       {"trainer.max_epochs=1", "optimizer.lr=0.02", "seed=7"},
       {"[WARNING] - Checkpoint " + ckpt + " kept aside as " + ckpt +
            ".other-run-1, never resumed: " + ckpt +
            " is another run's checkpoint: its settings differ: ",
        // (data.split_seed and trainer.seed are ${seed} in conf/.)
        "optimizer.lr: 0.01 there, 0.02 here", "; seed: 42 there, 7 here"}},
      // Now the directory is the second run's: longer, it resumes.
      {"the same again, longer",
       {"trainer.max_epochs=2", "optimizer.lr=0.02", "seed=7"},
       {}},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(RunDigits(With(c.args, quiet), &out), 0) << c.name << "\n" << out;
    if (c.says.empty()) {
      // last.ckpt or its ranked copy, whichever is newer.
      EXPECT_TRUE(std::regex_search(
          out, std::regex("Resumed from " + run +
                          "/checkpoints/[^ ]+\\.ckpt \\(epoch 1,")))
          << c.name << "\n" << out;
      continue;
    }
    for (const std::string& say : c.says) {
      EXPECT_NE(out.find(say), std::string::npos) << c.name << "\n" << out;
    }
    EXPECT_EQ(out.find("Resumed from"), std::string::npos) << c.name << "\n" << out;
    EXPECT_NE(out.find("Epoch 0"), std::string::npos) << c.name << "\n" << out;
  }

  // The issue's multirun, twice into one sweep directory: the second with
  // another seed.
  const std::vector<std::string> search = {
      "-m", "-cp", tree, "hparams_search=digits_optuna",
      "hydra.sweeper.n_trials=2", "trainer.max_epochs=1", "data.path=" + data,
      "hydra.sweep.dir=" + dir.Join("search")};
  ASSERT_EQ(RunDigits(search, &out), 0) << out;
  ASSERT_EQ(RunDigits(With(search, {"seed=7"}), &out), 0) << out;
  for (const char* job : {"0", "1"}) {
    const std::string last =
        dir.Join("search/") + job + "/checkpoints/last.ckpt";
    const size_t said =
        out.find("[WARNING] - Checkpoint " + last + " kept aside as " + last +
                 ".other-run-1, never resumed: " + last +
                 " is another run's checkpoint: its settings differ: ");
    ASSERT_NE(said, std::string::npos) << job << "\n" << out;
    EXPECT_NE(out.substr(said, out.find('\n', said) - said)
                  .find("; seed: 42 there, 7 here"),
              std::string::npos)
        << job << "\n" << out;
    EXPECT_TRUE(std::filesystem::exists(last + ".other-run-1")) << job;
  }
  EXPECT_EQ(out.find("Resumed from"), std::string::npos) << out;
}

// Issue 13.6: two trainers on one checkpoint directory would resume from
// and overwrite each other's checkpoints; the second refuses, naming the
// first.
// Issue 14.5: popular templates point checkpoints and loggers at
// ${hydra:runtime.output_dir}; in a run it is the run directory.
TEST(DigitsTrainTest, HydraResolverGivesTheRunDirectory) {
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunDigits({"trainer.max_epochs=1", "trainer.enable_progress_bar=false",
                       "hydra.run.dir=" + dir.Join("run"),
                       "+callbacks.model_checkpoint.dirpath="
                       "${hydra:runtime.output_dir}/ckpt_${hydra:job.name}"},
                      &out),
            0)
      << out;
  EXPECT_TRUE(std::filesystem::exists(dir.Join("run/ckpt_digits-train/last.ckpt")))
      << out;
}

TEST(DigitsTrainTest, SecondTrainerOnOneCheckpointDirRefuses) {
  TempDir dir;
  const std::vector<std::string> env = {"AIP_CHECKPOINT_DIR=" + dir.Join("ckpt")};
  Child first(DigitsArgv({"trainer.max_epochs=500",
                          "trainer.enable_progress_bar=false",
                          "hydra.run.dir=" + dir.Join("a")}),
              DigitsOptions(env, "/"));
  ASSERT_TRUE(first.WaitForOutput("Epoch 0:", std::chrono::minutes(5)))
      << first.out();
  std::string out;
  EXPECT_EQ(RunDigits({"trainer.max_epochs=1", "hydra.run.dir=" + dir.Join("b")},
                      &out, env),
            1)
      << out;
  EXPECT_NE(out.find(dir.Join("ckpt") + " is in use by pid " +
                     std::to_string(first.pid()) + " ("),
            std::string::npos)
      << out;
  first.Signal(SIGTERM);
  EXPECT_EQ(first.Wait().code(), 143);
}

TEST(DigitsTrainTest, WritesHypertuneMetricsCsvAndHydraFiles) {
  TempDir dir;
  std::string out;
  ASSERT_EQ(
      RunDigits({"--trainer.max_epochs=3", "--optimizer.lr=0.01",
                 "--data.batch_size=32", "hydra.run.dir=" + dir.Join("run"),
                 "trainer.enable_progress_bar=false"},
                &out,
                {"CLOUD_ML_HP_METRIC_FILE=" + dir.Join("hp/metrics"),
                 "CLOUD_ML_TRIAL_ID=7"}),
      0)
      << out;
  // cloudml-hypertune: one JSON object per report, keys sorted, Python's
  // separators, the value as str(float).
  const std::regex line(
      R"re(\{"checkpoint_path": "([^"]*)", "global_step": "(\d+)", "timestamp": \d+\.\d+, )re"
      R"re("trial": "7", "val_acc": "(0\.\d+|1\.0)"\})re");
  auto lines = Lines(ReadFile(dir.Join("hp/metrics")));
  ASSERT_EQ(lines.size(), 3u) << out;
  int64_t previous_step = -1;
  for (const auto& l : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, line)) << "case line " << l;
    EXPECT_TRUE(std::filesystem::exists(m[1].str())) << "case checkpoint " << l;
    EXPECT_GT(std::stoll(m[2].str()), previous_step) << "case step " << l;
    previous_step = std::stoll(m[2].str());
  }
  EXPECT_EQ(previous_step, 3 * 45);  // 1438 rows in batches of 32

  // metrics.csv as Lightning's CSVLogger: sorted columns, empty cells.
  auto csv = CsvRows(ReadFile(dir.Join("run/metrics.csv")));
  ASSERT_GT(csv.size(), 3u);
  EXPECT_EQ(csv[0], "epoch,step,train_loss,val_acc,val_loss");
  EXPECT_TRUE(std::regex_match(csv[1], std::regex(R"(0,9,[0-9.e-]+,,)")))
      << csv[1];
  EXPECT_TRUE(
      std::regex_match(csv.back(), std::regex(R"(2,134,,[0-9.]+,[0-9.e-]+)")))
      << csv.back();

  EXPECT_EQ(
      ReadFile(dir.Join("run/.hydra/overrides.yaml")),
      "- trainer.max_epochs=3\n- optimizer.lr=0.01\n- data.batch_size=32\n"
      "- trainer.enable_progress_bar=false\n");
  const std::string config = ReadFile(dir.Join("run/.hydra/config.yaml"));
  EXPECT_NE(config.find("seed: ${seed}"), std::string::npos) << "unresolved:\n"
                                                             << config;
  EXPECT_NE(config.find("lr: 0.01"), std::string::npos) << config;
  EXPECT_TRUE(std::filesystem::exists(dir.Join("run/model.pt")));
  EXPECT_TRUE(std::filesystem::exists(dir.Join("run/digits-train.log")));
}

TEST(DigitsTrainTest, ConfigErrorsExitTwoWithTheKeyAndASuggestion) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"unknown trainer key",
       {"+trainer.max_epoch=3"},
       "unknown trainer option 'trainer.max_epoch' (did you mean 'max_epochs'"},
      {"wrong type",
       {"trainer.max_epochs=abc"},
       "trainer.max_epochs: expected an int, got str 'abc'"},
      // Translated as Hydra passes it (issue 33.4); the trainer's typed
      // options refuse it before training.
      {"wrong type, Vertex style",
       {"--trainer.max_epochs=1.5"},
       "trainer.max_epochs: expected an int, got float"},
      {"bad choice", {"trainer.on_nonfinite=skp"}, "did you mean 'skip'?"},
      {"unknown optimizer key",
       {"+optimizer.momentun=0.9"},
       "got an unexpected keyword argument 'momentun'"},
      {"unknown top-level key",
       {"+sed=1"},
       "Key 'sed' not in 'TrainConfig' (did you mean 'seed'?)"},
      {"unknown hypertune key",
       {"+hypertune.metric=x"},
       "unknown option 'hypertune.metric'"},
      // Refused before training, not at the first save (issue 27: the
      // first save threw std::out_of_range, std::bad_alloc).
      {"checkpoint filename Python can not format",
       {"+callbacks.model_checkpoint.filename='{{0[}'"},
       "callbacks.model_checkpoint.filename: checkpoint filename '{{0[}': "
       "KeyError: '={0[{0['"},
      {"checkpoint filename too wide",
       {"+callbacks.model_checkpoint.filename='{epoch:99999999999999}'"},
       "checkpoint filename '{epoch:99999999999999}': width 99999999999999 "
       "is too large (at most 4096 here)"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    std::string out;
    EXPECT_EQ(
        RunDigits(With(c.args, {"hydra.run.dir=" + dir.Join("run")}), &out), 2)
        << "case " << c.name << ": " << out;
    EXPECT_NE(out.find(c.want), std::string::npos)
        << "case " << c.name << ": " << out;
  }
}

// -m as Hydra's basic sweeper runs it, and the hint that leads there,
// followed: a sweep on the command line says to add --multirun. Then the
// template's search (hparams_search=digits_optuna: hydra/sweeper: optuna,
// TPE over optimizer.lr, data.batch_size, model.dropout, maximizing
// val_acc) as the Optuna sweeper runs it, with trialshim's search: each
// job returns its val_acc, the best is optimization_results.yaml's.
TEST(DigitsTrainTest, MultirunAndTheHintsThatLeadThere) {
  TempDir dir;
  const std::string data =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/data/digits.csv.gz";
  std::string out;
  // A sweep without -m: add --multirun.
  const std::vector<std::string> sweep = {
      "optimizer.lr=0.01,0.02", "trainer.max_epochs=1",
      "hydra.sweep.dir=" + dir.Join("sw")};
  ASSERT_EQ(RunDigits(sweep, &out), 2) << out;
  ASSERT_NE(out.find("3. To sweep over it, add --multirun to your command line"),
            std::string::npos)
      << out;
  std::vector<std::string> followed = sweep;
  followed.push_back("--multirun");
  ASSERT_EQ(RunDigits(followed, &out), 0) << out;
  EXPECT_NE(out.find("Launching 2 jobs locally"), std::string::npos) << out;
  for (const char* job : {"0", "1"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.Join("sw/") + job + "/metrics.csv"))
        << job << "\n" << out;
  }
  EXPECT_EQ(ReadFile(dir.Join("sw/1/.hydra/overrides.yaml")),
            "- optimizer.lr=0.02\n- trainer.max_epochs=1\n");

  const std::vector<std::string> search = {
      "-m", "-cp",
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning",
      "hparams_search=digits_optuna", "hydra.sweeper.n_trials=3",
      "hydra.sweeper.n_jobs=2", "trainer.max_epochs=1", "data.path=" + data,
      "hydra.sweep.dir=" + dir.Join("search")};
  ASSERT_EQ(RunDigits(search, &out), 0) << out;
  EXPECT_NE(out.find("Launching 2 jobs locally"), std::string::npos) << out;
  EXPECT_NE(out.find("Launching 1 jobs locally"), std::string::npos) << out;
  EXPECT_NE(out.find("Sampler: TPESampler (run as trialshim's Bayesian "
                     "search)"),
            std::string::npos)
      << out;
  // Each job's val_acc, as it returned it; the best is the results'.
  std::map<double, std::string> returned;  // its val_acc -> the text
  std::regex retrieved("Retrieved metric value! <val_acc=([0-9.e-]+)>");
  for (const char* job : {"0", "1", "2"}) {
    std::smatch m;
    const std::string log = ReadFile(dir.Join("search/") + job + "/train.log");
    ASSERT_TRUE(std::regex_search(log, m, retrieved)) << job << "\n" << log;
    returned[std::stod(m[1])] = m[1];
    EXPECT_EQ(ReadFile(dir.Join("search/") + job + "/.hydra/overrides.yaml")
                  .rfind("- optimizer.lr=", 0),
              0u)
        << job;
  }
  const std::string best = std::prev(returned.end())->second;  // maximize
  const std::string results = ReadFile(dir.Join("search/optimization_results.yaml"));
  EXPECT_EQ(results.rfind("name: optuna\nbest_params:\n  optimizer.lr: ", 0), 0u)
      << results;
  EXPECT_NE(results.find("\nbest_value: " + best + "\n"), std::string::npos)
      << results << "\nbest returned: " << best;
  EXPECT_NE(out.find("Best value: " + best), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir.Join("search/3"))) << out;
}

// The documented Pareto search (docs/hydra-sweep-to-vertex.md): the
// template's hparams_search with optimized_metric=[val_acc,val_loss] and
// two directions. Each job returns both metrics, in direction order (as
// the Optuna sweeper takes a list), and reports both to the tuning
// service; the multirun ends 0 with the front the jobs' values make:
// the jobs no other has a higher val_acc and a lower val_loss than.
TEST(DigitsTrainTest, ParetoMultirunOfTwoMetrics) {
  TempDir dir;
  const std::string data =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/data/digits.csv.gz";
  std::string out;
  const std::vector<std::string> search = {
      "-m", "-cp",
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning",
      "hparams_search=digits_optuna", "optimized_metric=[val_acc,val_loss]",
      "hydra.sweeper.direction=[maximize,minimize]",
      "hydra.sweeper.n_trials=3", "trainer.max_epochs=1", "data.path=" + data,
      "hydra.sweep.dir=" + dir.Join("search")};
  ASSERT_EQ(RunDigits(search, &out,
                      {"CLOUD_ML_HP_METRIC_FILE=" + dir.Join("m/output.metrics")}),
            0)
      << out;
  EXPECT_NE(out.find("Directions: ['maximize', 'minimize']"), std::string::npos)
      << out;
  // Each job's two values as it returned them, "[acc, loss]" as Python
  // prints the list.
  std::vector<std::pair<double, double>> values;
  std::vector<std::string> texts;
  const std::regex acc("Retrieved metric value! <val_acc=([0-9.e-]+)>");
  const std::regex loss("Retrieved metric value! <val_loss=([0-9.e-]+)>");
  for (const char* job : {"0", "1", "2"}) {
    const std::string log = ReadFile(dir.Join("search/") + job + "/train.log");
    std::smatch a, l;
    ASSERT_TRUE(std::regex_search(log, a, acc)) << job << "\n" << log;
    ASSERT_TRUE(std::regex_search(log, l, loss)) << job << "\n" << log;
    values.emplace_back(std::stod(a[1]), std::stod(l[1]));
    texts.push_back("[" + a[1].str() + ", " + l[1].str() + "]");
  }
  std::set<std::string> front;
  for (size_t i = 0; i < values.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < values.size(); ++j) {
      dominated |= values[j].first >= values[i].first &&
                   values[j].second <= values[i].second &&
                   values[j] != values[i];
    }
    if (!dominated) front.insert(texts[i]);
  }
  EXPECT_NE(out.find("Number of Pareto solutions: " +
                     std::to_string(front.size()) + "\n"),
            std::string::npos)
      << out;
  std::set<std::string> printed;
  const std::regex line("    Values: (\\[[^\\]]*\\]), Params: \\{'optimizer.lr': ");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line);
       it != std::sregex_iterator(); ++it) {
    printed.insert((*it)[1]);
  }
  EXPECT_EQ(printed, front) << out;
  // optimization_results.yaml: the plugin's `solutions`, one per front job.
  const std::string results =
      ReadFile(dir.Join("search/optimization_results.yaml"));
  EXPECT_EQ(results.rfind("name: optuna\nsolutions:\n- params:\n", 0), 0u)
      << results;
  for (const std::string& v : front) {
    const std::string acc_text = v.substr(1, v.find(',') - 1);
    const std::string loss_text =
        v.substr(v.find(", ") + 2, v.size() - v.find(", ") - 3);
    EXPECT_NE(results.find("  values:\n  - " + acc_text + "\n  - " +
                           loss_text + "\n"),
              std::string::npos)
        << results << "\n" << v;
  }
  // The last job's metric file: both metrics at its one epoch's step.
  const std::vector<std::string> reports =
      Lines(ReadFile(dir.Join("m/output.metrics")));
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_NE(reports[0].find("\"val_acc\": "), std::string::npos) << reports[0];
  EXPECT_NE(reports[1].find("\"val_loss\": "), std::string::npos) << reports[1];
  EXPECT_EQ(reports[0].substr(0, reports[0].find("\"timestamp\"")),
            reports[1].substr(0, reports[1].find("\"timestamp\"")));
}

TEST(DigitsTrainTest, CfgJobPrintsTheComposedConfig) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"unresolved",
       {"--cfg", "job"},
       {"  seed: ${seed}\n", "optimizer:\n  _target_: torch.optim.Adam\n"}},
      {"resolved", {"--cfg", "job", "--resolve"}, {"  seed: 42\n"}},
      {"Vertex-style group and value",
       {"--optimizer=sgd", "--optimizer.lr=0.2", "--cfg", "job"},
       {"  _target_: torch.optim.SGD\n", "  lr: 0.2\n"}},
  };
  for (const auto& c : cases) {
    std::string out;
    EXPECT_EQ(RunDigits(c.args, &out), 0) << "case " << c.name << ": " << out;
    for (const auto& w : c.want) {
      EXPECT_NE(out.find(w), std::string::npos)
          << "case " << c.name << ": " << out;
    }
  }
}

// Issue 16.4: examples/digits/conf-lightning, shaped as
// lightning-hydra-template's configs/ (trainer/, callbacks/, logger/,
// paths/, hydra/ groups, `_target_` everywhere), runs as it is: its CSVLogger
// writes under paths.output_dir (${hydra:runtime.output_dir}), and
// logger=tensorboard writes event files there instead.
// The chain a Vertex trial takes most often (issue 26.5): trialshim in the
// container's command without --config-path, and a DISCRETE parameter on an
// int key, which Vertex sends as 32.0. digits-train translates it with its
// own config, so it trains with batch_size 32.
TEST(DigitsTrainTest, VertexTrialThroughTrialshimWithoutConfigPath) {
  TempDir dir;
  Finished f = trialshim::testing::RunToEndWith(
      {std::string(TRIALSHIM_BIN_DIR) + "/trialshim", "--", kBinary,
       "hydra.run.dir=" + dir.Join("run"), "trainer.max_epochs=1",
       "trainer.enable_progress_bar=false", "--data.batch_size=32.0",
       "--optimizer.lr", "0.01"},
      DigitsOptions({}, dir.path()));
  ASSERT_EQ(f.code(), 0) << f.out;
  EXPECT_EQ(ReadFile(dir.Join("run/.hydra/overrides.yaml")),
            "- trainer.max_epochs=1\n- trainer.enable_progress_bar=false\n"
            "- data.batch_size=32\n- optimizer.lr=0.01\n");
}

// Issue 33.4, what a user ran on the template-shaped tree, as Hydra does
// it: a field of TrainConfig the YAML leaves out (optimized_metric, test,
// extras) takes `key=v`, `+key=v` and `++key=v` (its default is null), as
// under Hydra's schema pattern; and a sampler option under
// hparams_search=digits_optuna is refused for the TPE keys that config
// writes, naming the key, as the plugin's structured configs refuse them
// (tests/data/hydra_app/cases.json has real Hydra's runs of the same).
TEST(DigitsTrainTest, TheTemplateTreeTakesWhatHydraTakes) {
  const std::string tree =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning";
  struct Case {
    const char* name;
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"set", {"optimized_metric=val_acc"}, 0, "\noptimized_metric: val_acc\n"},
      {"added", {"+optimized_metric=val_acc"}, 0,
       "\noptimized_metric: val_acc\n"},
      {"forced", {"++optimized_metric=val_acc"}, 0,
       "\noptimized_metric: val_acc\n"},
      {"test", {"test=true"}, 0, "\ntest: true\n"},
      {"extras", {"extras={print_config: true}"}, 0,
       "\nextras:\n  print_config: true\n"},
      {"typed still", {"seed=abc"}, 2,
       "Value 'abc' of type 'str' could not be converted to Integer"},
      {"vertex style", {"--optimized_metric=val_acc"}, 0,
       "\noptimized_metric: val_acc\n"},
      // The schema types seed: Hydra's typing refuses a fraction there.
      {"vertex float for a typed int", {"--seed=1.5"}, 2,
       "could not be converted to Integer"},
      {"random sampler", {"hparams_search=digits_optuna",
                          "hydra/sweeper/sampler=random"},
       2, "Key 'n_startup_trials' not in 'RandomSamplerConfig'"},
      {"grid sampler", {"hparams_search=digits_optuna",
                        "hydra/sweeper/sampler=grid"},
       2, "Key 'seed' not in 'GridSamplerConfig'"},
      {"tpe sampler", {"hparams_search=digits_optuna",
                       "hydra/sweeper/sampler=tpe"},
       0, "\noptimized_metric: val_acc\n"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--config-path", tree, "--config-name",
                                     "config", "--cfg", "job"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    std::string out;
    EXPECT_EQ(RunDigits(args, &out), c.exit_code) << c.name << "\n" << out;
    EXPECT_NE(out.find(c.says), std::string::npos) << c.name << "\n" << out;
  }
}

TEST(DigitsTrainTest, RunsUnderALightningTemplateTree) {
  TempDir dir;
  const std::string tree =
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/digits/conf-lightning";
  const std::vector<std::string> base = {"--config-path", tree, "--config-name",
                                         "config",
                                         "hydra.run.dir=" + dir.Join("run")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  std::string out;
  // Lightning's Trainer(callbacks=[...]) as trainer.callbacks, besides the
  // tree's callbacks: map.
  ASSERT_EQ(RunDigits(with({"trainer.max_epochs=2",
                            "+trainer.callbacks=[{_target_: "
                            "lightning.pytorch.callbacks.LearningRateMonitor, "
                            "log_momentum: true}]"}),
                      &out),
            0)
      << out;
  const std::string csv = ReadFile(dir.Join("run/csv/version_0/metrics.csv"));
  EXPECT_EQ(csv.rfind("epoch,lr-Adam,lr-Adam-momentum,step,", 0), 0) << csv;
  // RichModelSummary(max_depth=-1)'s table, and ModelCheckpoint's
  // "epoch_{epoch:03d}" without metric names, best val_acc kept.
  EXPECT_NE(out.find("  | Name  | Type       | Params | Mode \n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Total estimated model params size (MB)"),
            std::string::npos)
      << out;
  const std::string ckpts = dir.Join("run/checkpoints");
  EXPECT_TRUE(std::filesystem::exists(ckpts + "/last.ckpt"));
  EXPECT_TRUE(std::filesystem::exists(ckpts + "/epoch_000.ckpt") ||
              std::filesystem::exists(ckpts + "/epoch_001.ckpt"))
      << out;
  // Lightning's ckpt_path=last resumes from it.
  ASSERT_EQ(RunDigits(with({"trainer.max_epochs=3", "ckpt_path=last"}), &out),
            0)
      << out;
  EXPECT_NE(out.find("Resumed from " + ckpts + "/last.ckpt (epoch 2"),
            std::string::npos)
      << out;
  // ckpt_path=best: the best ranked checkpoint last.ckpt names.
  ASSERT_EQ(RunDigits(with({"trainer.max_epochs=4", "ckpt_path=best"}), &out),
            0)
      << out;
  EXPECT_NE(out.find("Resumed from " + ckpts + "/epoch_00"), std::string::npos)
      << out;
  // ... which a fresh run directory does not have: exit 2, saying so.
  std::vector<std::string> fresh = with({"ckpt_path=best"});
  fresh[4] = "hydra.run.dir=" + dir.Join("fresh");
  ASSERT_EQ(RunDigits(fresh, &out), 2) << out;
  EXPECT_NE(out.find("trainer.ckpt_path=best, but there is no " +
                     dir.Join("fresh") + "/checkpoints/last.ckpt"),
            std::string::npos)
      << out;
  // The template's other logger.
  std::vector<std::string> tb = with({"logger=tensorboard", "trainer.max_epochs=1"});
  tb[4] = "hydra.run.dir=" + dir.Join("tb");
  ASSERT_EQ(RunDigits(tb, &out), 0) << out;
  bool events = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           dir.Join("tb/tensorboard"))) {
    events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  }
  EXPECT_TRUE(events) << out;
  EXPECT_FALSE(std::filesystem::exists(dir.Join("tb/csv"))) << out;
  // Without hydra.run.dir: the template's run directory per task under
  // paths.log_dir, with the log file named after the task.
  ASSERT_EQ(RunDigits({"--config-path", tree, "--config-name", "config",
                       "paths.log_dir=" + dir.Join("logs"), "task_name=eval",
                       "trainer.max_epochs=1"},
                      &out),
            0)
      << out;
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           dir.Join("logs/eval/runs"))) {
    if (e.path().extension() == ".log") logs.push_back(e.path().filename());
  }
  EXPECT_EQ(logs, std::vector<std::string>{"eval.log"}) << out;
  // What this build lacks is refused, exit 2, never as a typo.
  ASSERT_EQ(RunDigits(with({"trainer.accelerator=mps"}), &out), 2) << out;
  EXPECT_NE(out.find("trainer.accelerator=mps is not available in this build"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("did you mean"), std::string::npos) << out;
}

}  // namespace
