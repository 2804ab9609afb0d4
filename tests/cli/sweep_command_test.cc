// `trialshim sweep` as a user runs it: stopped by a signal, a second sweep
// on the same --out, kill -9 and an immediate --resume, a trial orphaned by
// a killed supervisor, a full --out, hostile metric files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/fault.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::cli {
namespace {

using json = nlohmann::json;
using testing::ReadFile;
using testing::TempDir;
using testing::TrialshimBinary;
using testing::WaitForFiles;
using testing::WithMemoryCap;

const std::string kData =
    std::string(TRIALSHIM_SOURCE_DIR) + "/tests/tuning/data";

// Writes tests/tuning/data/NAME into `dir` with @DATA@ filled in and, when
// `mode` is set, every trial in that trainer mode. Returns its path.
std::string JobFile(const TempDir& dir, const std::string& name,
                    const std::string& mode = "") {
  std::string text = ReadFile(kData + "/" + name);
  for (size_t at; (at = text.find("@DATA@")) != std::string::npos;) {
    text.replace(at, 6, kData);
  }
  if (!mode.empty()) {
    text += "      env:\n      - {name: TRAINER_FORCE_MODE, value: " + mode + "}\n";
  }
  return dir.Write(name, text);
}

// Whether the process whose pid is in `pid_file` still runs. A missing
// file: the trial never started.
bool Alive(const std::string& pid_file) {
  std::string pid = ReadFile(pid_file);
  return !pid.empty() && testing::ProcessRuns(std::stoi(pid));
}

// Whether process `pid` still runs after a moment for the kernel to finish
// one being killed.
bool StillRuns(const std::string& pid) {
  return !pid.empty() &&
         !testing::EndsWithin(std::stoi(pid), std::chrono::seconds(2));
}

// The trials of `out` whose trainer process still runs, e.g. "3 4".
std::string LiveTrials(const std::string& out, const char* file = "pid") {
  std::string live;
  for (int id = 1; id <= 4; ++id) {
    if (StillRuns(ReadFile(out + "/" + std::to_string(id) + "/" + file))) {
      live += (live.empty() ? "" : " ") + std::to_string(id);
    }
  }
  return live;
}

SubprocessOptions LogTo(const std::string& log) {
  SubprocessOptions spawn = testing::Child::Options();
  spawn.out = Stdio::File(log);
  spawn.err = Stdio::SameAsStdout();
  return spawn;
}

// SIGINT, SIGTERM and SIGHUP (a closed terminal) all stop the trials,
// record them and exit 128+N; trials.json says how to go on.
TEST(SweepCommandTest, StopSignalsStopTheTrialsAndRecordThem) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    TempDir dir;
    std::string job = JobFile(dir, "sweep_resume.yaml");
    std::string out = dir.Join("out");
    std::string log = dir.Join("stdout");
    testing::Child sweep({TrialshimBinary(), "sweep", job, "--out", out},
                         LogTo(log));
    ASSERT_TRUE(WaitForFiles({out + "/3/started", out + "/4/started"}))
        << ReadFile(log);
    // Trials 1 and 2 end on their own.
    ASSERT_TRUE(
        testing::WaitForFileText(log, {"    1  SUCCEEDED", "    2  SUCCEEDED"}))
        << ReadFile(log);
    sweep.Signal(sig);
    testing::Finished f = sweep.Wait();
    std::string text = ReadFile(log);
    ASSERT_EQ(f.term_signal, 0) << strsignal(sig) << "\n" << text;
    EXPECT_EQ(f.exit_code, 128 + sig) << strsignal(sig) << "\n" << text;
    for (const char* want : {"    1  ACTIVE", "    1  SUCCEEDED",
                             "leaderboard", "    3  STOPPED", "--resume"}) {
      EXPECT_NE(text.find(want), std::string::npos)
          << strsignal(sig) << ": " << want << "\n"
          << text;
    }
    json saved = json::parse(ReadFile(out + "/trials.json"), nullptr, false);
    ASSERT_TRUE(saved.is_object()) << text;
    EXPECT_EQ(saved["trials"].size(), 4u) << strsignal(sig);
    EXPECT_TRUE(saved["stopped"].get<bool>()) << strsignal(sig);
    EXPECT_EQ(LiveTrials(out), "") << strsignal(sig);
  }
}

// Two sweeps on one --out would both run every trial: the second refuses,
// naming the first.
TEST(SweepCommandTest, SecondSweepOnOneOutRefuses) {
  TempDir dir;
  std::string job = JobFile(dir, "sweep_resume.yaml", "hang");
  std::string out = dir.Join("out");
  testing::Child first({TrialshimBinary(), "sweep", job, "--out", out},
                       LogTo(dir.Join("first")));
  ASSERT_TRUE(WaitForFiles({out + "/1/started"})) << ReadFile(dir.Join("first"));
  testing::Finished second = testing::RunToEnd(
      {TrialshimBinary(), "sweep", job, "--out", out, "--resume"});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find(out + " is in use by pid " +
                            std::to_string(first.pid()) + " ("),
            std::string::npos)
      << second.err;
  first.Signal(SIGTERM);
  EXPECT_EQ(first.Wait().exit_code, 143);
}

// --algorithm overrides studySpec.algorithm; bayesian is what
// ALGORITHM_UNSPECIFIED runs, and the sweep says which one ran.
TEST(SweepCommandTest, AlgorithmFlag) {
  struct Case {
    const char* flag;
    const char* recorded;
    const char* says;  // in the output
  } cases[] = {
      {"grid", "GRID_SEARCH", "GRID_SEARCH"},
      {"random", "RANDOM_SEARCH", "RANDOM_SEARCH"},
      {"bayesian", "ALGORITHM_UNSPECIFIED", "Bayesian optimization"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::string job = JobFile(dir, "sweep_resume.yaml", "ok");
    std::string out = dir.Join("out");
    testing::Finished r =
        testing::RunToEnd({TrialshimBinary(), "sweep", job, "--out", out,
                           "--max-trials", "2", "--algorithm", c.flag});
    ASSERT_EQ(r.exit_code, 0) << "case " << c.flag << ": " << r.err;
    json record = json::parse(ReadFile(out + "/trials.json"), nullptr, false);
    EXPECT_EQ(record.value("algorithm", ""), c.recorded) << "case " << c.flag;
    EXPECT_NE((r.out + r.err + ReadFile(out + "/report.html")).find(c.says),
              std::string::npos)
        << "case " << c.flag << ": " << r.out;
  }
}

// The pids a "tree" trial wrote: the trainer, its child and grandchild, and
// its worker in a session of its own.
std::vector<std::string> TreePids(const std::string& out, int trials) {
  std::vector<std::string> pids;
  for (int id = 1; id <= trials; ++id) {
    for (const char* f : {"pid", "child.pid", "grandchild.pid", "orphan.pid"}) {
      pids.push_back(ReadFile(out + "/" + std::to_string(id) + "/" + f));
    }
  }
  return pids;
}

// kill -9 of the sweep takes every process of its trials with it: the
// trainer, its child and grandchild, and a worker that started a session of
// its own (each trial runs contained, base/subprocess.h). So a --resume
// right after finds the trial directories free, finishes every trial, and
// no process of the first run is left.
TEST(SweepCommandTest, KilledSweepTakesItsWholeTrialsAndResumeFinishesThem) {
  TempDir dir;
  std::string job = JobFile(dir, "sweep_resume.yaml", "tree");
  std::string out = dir.Join("out");
  testing::Child sweep({TrialshimBinary(), "sweep", job, "--out", out},
                       LogTo(dir.Join("log")));
  ASSERT_TRUE(WaitForFiles({out + "/1/started", out + "/2/started",
                            out + "/3/started", out + "/4/started"},
                           std::chrono::seconds(60)))
      << ReadFile(dir.Join("log"));
  std::vector<std::string> pids = TreePids(out, 4);
  for (const std::string& pid : pids) {
    ASSERT_FALSE(pid.empty()) << ReadFile(dir.Join("log"));
  }
  sweep.Signal(SIGKILL);
  EXPECT_EQ(sweep.Wait().term_signal, SIGKILL);

  JobFile(dir, "sweep_resume.yaml", "ok");  // the reruns end by themselves
  testing::Finished resumed = testing::RunToEnd(
      {TrialshimBinary(), "sweep", job, "--out", out, "--resume"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  json saved = json::parse(ReadFile(out + "/trials.json"), nullptr, false);
  ASSERT_TRUE(saved.is_object()) << resumed.out;
  ASSERT_EQ(saved["trials"].size(), 4u) << resumed.out;
  for (const json& t : saved["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
  }
  for (const std::string& pid : pids) {
    EXPECT_FALSE(StillRuns(pid)) << "pid " << pid << " of the first run";
  }
}

// What survives: a trial's supervisor killed with SIGKILL by its own pid,
// with the sweep. The trainer dies with its supervisor, but a worker in a
// session of its own is nobody's to end; it keeps the trial's directory
// locked, and --resume stops (exit 1) naming it instead of training beside
// it.
TEST(SweepCommandTest, KilledSupervisorLeavesAnOrphanThatResumeRefuses) {
  TempDir dir;
  std::string job = JobFile(dir, "sweep_resume.yaml", "orphan");
  std::string out = dir.Join("out");
  testing::Child sweep({TrialshimBinary(), "sweep", job, "--out", out},
                       LogTo(dir.Join("log")));
  ASSERT_TRUE(WaitForFiles({out + "/1/started"})) << ReadFile(dir.Join("log"));
  // The trainer's parent is its supervisor.
  std::string stat = ReadFile("/proc/" + ReadFile(out + "/1/pid") + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string state;
  pid_t supervisor = 0;
  fields >> state >> supervisor;
  ASSERT_GT(supervisor, 1) << stat;
  kill(supervisor, SIGKILL);
  sweep.Signal(SIGKILL);
  EXPECT_EQ(sweep.Wait().term_signal, SIGKILL);
  EXPECT_FALSE(StillRuns(ReadFile(out + "/1/pid"))) << "the trainer";
  ASSERT_TRUE(Alive(out + "/1/orphan.pid")) << "the test needs an orphan";

  testing::Finished resumed = testing::RunToEnd(
      {TrialshimBinary(), "sweep", job, "--out", out, "--resume"});
  EXPECT_EQ(resumed.exit_code, 1) << resumed.out << resumed.err;
  EXPECT_NE(resumed.err.find(out + "/1 is in use by pid " +
                             std::to_string(sweep.pid())),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("the sweep stopped its trials"),
            std::string::npos)
      << resumed.err;
  for (int id = 1; id <= 4; ++id) {
    std::string pid = ReadFile(out + "/" + std::to_string(id) + "/orphan.pid");
    if (!pid.empty()) kill(std::stoi(pid), SIGKILL);
  }
}

// What check passes must be able to start: an argument of 131071 bytes
// (the most the kernel takes) passes check and reaches the trial whole; one
// byte more is an error of check and the sweep refuses it (exit 2) before
// any trial, where every trial used to fail with 126 "Argument list too
// long".
TEST(SweepCommandTest, WhatCheckPassesStarts) {
  for (size_t size : {131071u, 131072u}) {
    TempDir dir;
    std::string arg = "--big=" + std::string(size - 6, 'v');
    std::string text = ReadFile(kData + "/sweep_resume.yaml");
    for (size_t at; (at = text.find("@DATA@")) != std::string::npos;) {
      text.replace(at, 6, kData);
    }
    text += "      args: [" + arg + "]\n";
    std::string job = dir.Write("job.yaml", text);
    std::string out = dir.Join("out");
    testing::Finished check =
        testing::RunToEnd({TrialshimBinary(), "check", "-q", job});
    testing::Finished sweep = testing::RunToEnd(
        {TrialshimBinary(), "sweep", job, "--out", out, "--max-trials", "1"});
    if (size == 131071u) {
      EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
      EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
      json got = json::parse(ReadFile(out + "/1/received.json"), nullptr, false);
      ASSERT_TRUE(got.is_object()) << sweep.out;
      EXPECT_EQ(got["argv"][0], arg) << "the argument reached the trial whole";
      continue;
    }
    EXPECT_EQ(check.exit_code, 2) << check.out.substr(0, 1000);
    EXPECT_NE(check.out.find("args[0] is 131072 bytes; Linux's execve() "
                             "takes at most 131071"),
              std::string::npos)
        << check.out.substr(0, 1000);
    // The sweep runs check first; with --no-check it refuses all the same.
    EXPECT_EQ(sweep.exit_code, 2) << sweep.err.substr(0, 1000);
    EXPECT_NE(sweep.err.find("args[0] is 131072 bytes"), std::string::npos)
        << sweep.err.substr(0, 1000);
    testing::Finished unchecked =
        testing::RunToEnd({TrialshimBinary(), "sweep", job, "--out", out,
                           "--max-trials", "1", "--no-check"});
    EXPECT_EQ(unchecked.exit_code, 2) << unchecked.err.substr(0, 1000);
    EXPECT_NE(unchecked.err.find("workerPoolSpecs[0].containerSpec command + "
                                 "args: argument 2 is 131072 bytes; the kernel "
                                 "takes at most 131071 in one argument "
                                 "(MAX_ARG_STRLEN)"),
              std::string::npos)
        << unchecked.err.substr(0, 1000);
    EXPECT_FALSE(std::filesystem::exists(out + "/1")) << "a trial started";
  }
}

// A trial's metric file is untrusted input: a FIFO, a link to /dev/zero, a
// 2 GiB line and a 4 GiB file each end their trial with the reason in its
// row, and the sweep stays within 512 MB. Before, the FIFO blocked the sweep
// in open() for good and the others cost it gigabytes.
TEST(SweepCommandTest, HostileMetricFilesEndTheirTrialsInBoundedMemory) {
  TempDir dir;
  std::string job = JobFile(dir, "sweep_metric_faults.yaml");
  std::string out = dir.Join("out");
  testing::Child sweep(
      WithMemoryCap({TrialshimBinary(), "sweep", job, "--out", out}, 512));
  testing::Finished f = sweep.Wait(std::chrono::minutes(3));  // a hang fails
  ASSERT_FALSE(f.timed_out) << "the sweep hung\n" << f.out << f.err;
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  json saved = json::parse(ReadFile(out + "/trials.json"), nullptr, false);
  ASSERT_TRUE(saved.is_object()) << f.out;
  struct Case {
    const char* mode;
    const char* state;
    std::string reason;
  } cases[] = {
      {"fifo", "INFEASIBLE",
       "metric 'score' never reported; " + out +
           "/1/output.metrics is a FIFO, not a regular file; not read"},
      {"zeroexit", "INFEASIBLE",
       "metric 'score' never reported; " + out +
           "/2/output.metrics is a symbolic link, not a regular file; not "
           "read"},
      {"hugeline", "INFEASIBLE",
       "metric 'score' never reported; " + out +
           "/3/output.metrics is 2147483648 bytes: only its last 1048576 "
           "were read; 1 line longer than 65536 bytes skipped"},
      {"hugefile", "SUCCEEDED",
       out + "/4/output.metrics is 4294967" /* + the report line */},
  };
  ASSERT_EQ(saved["trials"].size(), std::size(cases)) << f.out;
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    const json& t = saved["trials"][i];
    EXPECT_EQ(t["parameters"]["mode"], c.mode) << "case " << c.mode;
    EXPECT_EQ(t["state"], c.state) << "case " << c.mode << ": " << t.dump();
    EXPECT_EQ(t["reason"].get<std::string>().rfind(c.reason, 0), 0u)
        << "case " << c.mode << ": " << t["reason"];
  }
  EXPECT_NE(saved["trials"][3]["reason"].get<std::string>().find(
                "only its last 1048576 were read"),
            std::string::npos)
      << "case hugefile";
  EXPECT_EQ(saved["trials"][3]["metric"], 1.0) << "case hugefile";
}

// The peak resident memory of process `pid` in MiB (VmHWM), or -1.
long PeakMiB(pid_t pid) {
  std::istringstream status(
      ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

// A running trial whose metric file is a link to /dev/zero: the sweep
// follows it without reading it, stays small, and a SIGTERM stops it.
// Before, it read /dev/zero until memory ran out (5.6 GB in 13 s when not
// capped), deaf to signals meanwhile.
TEST(SweepCommandTest, StopReachesASweepWhoseTrialLinksItsMetricFileToDevZero) {
  TempDir dir;
  std::string job = JobFile(dir, "sweep_resume.yaml", "zero");
  std::string out = dir.Join("out");
  testing::Child sweep(
      WithMemoryCap({TrialshimBinary(), "sweep", job, "--out", out}, 1000));
  ASSERT_TRUE(WaitForFiles({out + "/1/started", out + "/4/started"}))
      << sweep.Wait(std::chrono::seconds(1)).err;
  // The time it runs is what is under test, not a wait for an event: it
  // looks at the metric files every 200 ms at most, and before the fix one
  // second of this grew it by gigabytes. A look that reads nothing leaves
  // no trace to wait on.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  long peak = PeakMiB(sweep.pid());
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, 256) << "MiB at its peak";
  sweep.Signal(SIGTERM);
  testing::Finished f = sweep.Wait(std::chrono::minutes(2));
  ASSERT_FALSE(f.timed_out) << "the sweep did not stop\n" << f.out << f.err;
  EXPECT_EQ(f.code(), 143) << f.out << f.err;
  json saved = json::parse(ReadFile(out + "/trials.json"), nullptr, false);
  ASSERT_TRUE(saved.is_object()) << f.out;
  EXPECT_TRUE(saved["stopped"].get<bool>());
  EXPECT_EQ(LiveTrials(out), "");
}

// A full --out: the sweep stops at the first record it can not write, stops
// its trials and says which file and why (exit 1), instead of recording
// every trial as INFEASIBLE. The tmpfs is private to the sweep (unshare -m).
TEST(SweepCommandTest, FullOutStopsTheSweepAndItsTrials) {
  TempDir dir;
  std::string job = JobFile(dir, "sweep_resume.yaml");
  std::string out = dir.Join("out");
  testing::Finished probe = testing::RunToEnd(
      {"unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k none /mnt"});
  if (probe.exit_code != 0) {
    GTEST_SKIP() << "can not mount a private tmpfs here (needs root): "
                 << probe.err;
  }
  testing::Finished f = testing::RunToEnd(
      {"unshare", "-m", "sh", "-c",
       "mkdir -p \"$1\" && mount -t tmpfs -o size=24k none \"$1\" && shift "
       "&& exec \"$@\"",
       "sh", out, TrialshimBinary(), "sweep", job, "--out", out});
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  EXPECT_NE(f.err.find("No space left on device"), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("the sweep stopped its trials"), std::string::npos)
      << f.err;
  // Trials 3 and 4 hang until stopped: that the sweep returned at all shows
  // it stopped them (their files are in the sweep's private mount).
}

// --- The shipped specs, as a user runs them from the README ---------------

const std::string kRoot = TRIALSHIM_SOURCE_DIR;

std::string DigitsTrain() {
  return std::string(TRIALSHIM_BIN_DIR) + "/digits-train";
}

// Runs `argv` in `cwd` with `env` added; stdout and stderr come back.
testing::Finished RunIn(const std::string& cwd,
                        const std::vector<std::string>& argv,
                        const std::vector<std::string>& env = {}) {
  SubprocessOptions spawn = testing::Child::Options(env);
  spawn.cwd = cwd;
  return testing::RunToEndWith(argv, spawn);
}

// The entries of `dir`, sorted.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A project directory as digits_job.yaml expects one (build/bin/digits-train
// and examples/digits/conf, as in the repository and the image), holding
// nothing else: what a sweep leaves there shows.
std::string DigitsProject(const TempDir& dir) {
  std::string root = dir.Join("project");
  std::filesystem::create_directories(root + "/build/bin");
  std::filesystem::create_directories(root + "/examples/digits");
  std::filesystem::create_symlink(DigitsTrain(),
                                  root + "/build/bin/digits-train");
  std::filesystem::create_symlink(kRoot + "/examples/digits/conf",
                                  root + "/examples/digits/conf");
  std::filesystem::copy_file(kRoot + "/examples/vertex/digits_job.yaml",
                             root + "/digits_job.yaml");
  return root;
}

// Parallel trials of the shipped digits spec each get a run directory of
// their own (Hydra's outputs/DATE/TIME, which two trials started in the same
// second shared), and nothing but --out is written where the user stands.
TEST(LocalTuningTest, ParallelTrialsKeepApart) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  std::string root = DigitsProject(dir);
  std::vector<std::string> before = Entries(root);
  testing::Finished f = RunIn(root, {TrialshimBinary(), "sweep",
                                     "digits_job.yaml", "--max-trials", "4",
                                     "--out", "runs/digits"});
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  before.push_back("runs");
  std::sort(before.begin(), before.end());
  EXPECT_EQ(Entries(root), before) << "only --out is new where the user is";
  json record = json::parse(ReadFile(root + "/runs/digits/trials.json"));
  std::set<std::string> run_dirs;
  for (const json& t : record["trials"]) {
    std::string id = std::to_string(t["id"].get<int>());
    ASSERT_EQ(t["state"], "SUCCEEDED") << "case " << id << "\n" << f.out;
    std::string outputs = root + "/runs/digits/" + id + "/work/outputs";
    std::vector<std::string> runs;
    for (const auto& day : std::filesystem::directory_iterator(outputs)) {
      for (const auto& run : std::filesystem::directory_iterator(day)) {
        runs.push_back(run.path().string());
      }
    }
    ASSERT_EQ(runs.size(), 1u) << "case " << id;
    run_dirs.insert(runs[0]);
    // The run directory is this trial's alone: its overrides, its log.
    std::string overrides = ReadFile(runs[0] + "/.hydra/overrides.yaml");
    for (const json& arg : t["args"]) {
      std::string a = arg.get<std::string>().substr(2);  // --key=value
      std::string key = a.substr(0, a.find('='));
      EXPECT_NE(overrides.find("- " + key + "="), std::string::npos)
          << "case " << id << ": " << key << "\n" << overrides;
    }
    std::string log = ReadFile(runs[0] + "/digits-train.log");
    size_t starts = 0;
    for (size_t at = log.find("Epoch 0"); at != std::string::npos;
         at = log.find("Epoch 0", at + 1)) {
      ++starts;
    }
    EXPECT_LE(starts, 1u) << "case " << id << ": one trial per log\n" << log;
    EXPECT_TRUE(std::filesystem::exists(runs[0] + "/metrics.csv"))
        << "case " << id;
  }
  EXPECT_EQ(run_dirs.size(), 4u);
}

// The .hydra/overrides.yaml files under `dir`, by path.
std::vector<std::string> OverrideFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().filename() == "overrides.yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A Hydra sweep run as it is, without a job spec (issue 26.2): the
// template-shaped hparams_search of conf-lightning through the Bayesian
// search, and a basic-sweeper product as a grid. Each trial gets what the
// Hydra multirun would have given it: batch_size 64, not 64.0.
TEST(LocalTuningTest, HydraSweepRunsWithoutASpec) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  const std::vector<std::string> config = {
      TrialshimBinary(), "sweep",
      "--config-path",   kRoot + "/examples/digits/conf-lightning",
      "--config-name",   "config"};
  auto sweep = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = config;
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", DigitsTrain()});
    return RunIn(dir.path(), argv);
  };
  const std::vector<std::string> optuna = {"hparams_search=digits_optuna",
                                           "hydra.sweeper.n_trials=3",
                                           "hydra.sweeper.n_jobs=2",
                                           "trainer.max_epochs=1",
                                           "--out",
                                           "bayes"};
  testing::Finished f = sweep(optuna);
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  EXPECT_NE(f.out.find("leaderboard (MAXIMIZE val_acc)"), std::string::npos)
      << f.out;
  json record = json::parse(ReadFile(dir.Join("bayes/trials.json")));
  EXPECT_EQ(record["algorithm"], "ALGORITHM_UNSPECIFIED");
  EXPECT_EQ(record["seed"], 1234) << "the sampler's seed";
  ASSERT_EQ(record["trials"].size(), 3u);
  for (const json& t : record["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
  }
  std::vector<std::string> files = OverrideFiles(dir.Join("bayes"));
  ASSERT_EQ(files.size(), 3u);
  for (const std::string& file : files) {
    std::string overrides = ReadFile(file);
    EXPECT_EQ(overrides.rfind("- hparams_search=digits_optuna\n"
                              "- trainer.max_epochs=1\n",
                              0),
              0u)
        << overrides;
    bool int_batch = false;
    for (const char* b : {"32", "64", "128"}) {
      int_batch |= overrides.find("- data.batch_size=" + std::string(b) +
                                  "\n") != std::string::npos;
    }
    EXPECT_TRUE(int_batch) << overrides;
  }
  // The same command with --resume finds the sweep done.
  std::vector<std::string> again = optuna;
  again.push_back("--resume");
  testing::Finished resumed = sweep(again);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;

  testing::Finished grid =
      sweep({"data.batch_size=32,64", "trainer.max_epochs=1", "--direction",
             "maximize", "--out", "grid"});
  ASSERT_EQ(grid.exit_code, 0) << grid.out << grid.err;
  json g = json::parse(ReadFile(dir.Join("grid/trials.json")));
  EXPECT_EQ(g["algorithm"], "GRID_SEARCH");
  ASSERT_EQ(g["trials"].size(), 2u);
  std::string both;
  for (const std::string& file : OverrideFiles(dir.Join("grid"))) {
    both += ReadFile(file);
  }
  EXPECT_NE(both.find("- data.batch_size=32\n"), std::string::npos) << both;
  EXPECT_NE(both.find("- data.batch_size=64\n"), std::string::npos) << both;

  testing::Finished usage =
      RunIn(dir.path(), {TrialshimBinary(), "sweep", "a.yaml", "b.yaml"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("trialshim sweep --config-path DIR --config-name "
                           "NAME [OVERRIDE...] -- COMMAND"),
            std::string::npos)
      << usage.err;
}

// The issue's command: `trialshim sweep ... hparams_search=digits_optuna
// --parallel 4` of the template-shaped conf-lightning (run directories
// under ${hydra:runtime.cwd}/logs/train/runs/) from a project that has a
// logs/ of its own. Each trial's run directory, overrides.yaml and
// train.log are in its own <id>/work/logs/; the user's logs/ is untouched.
TEST(LocalTuningTest, HparamsSearchRunDirectoriesStayInTheirTrials) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  std::string root = dir.Join("project");
  dir.Write("project/logs/mine.log", "the user's\n");
  testing::Finished f = RunIn(
      root, {TrialshimBinary(), "sweep", "--config-path",
             kRoot + "/examples/digits/conf-lightning", "--config-name",
             "config", "hparams_search=digits_optuna",
             "hydra.sweeper.n_trials=4", "trainer.max_epochs=1", "--parallel",
             "4", "--out", "sweeps/optuna", "--", DigitsTrain()});
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  EXPECT_EQ(Entries(root), (std::vector<std::string>{"logs", "sweeps"}));
  EXPECT_EQ(Entries(root + "/logs"), (std::vector<std::string>{"mine.log"}))
      << "the user's logs/ untouched";
  json record = json::parse(ReadFile(root + "/sweeps/optuna/trials.json"));
  ASSERT_EQ(record["trials"].size(), 4u);
  for (const json& t : record["trials"]) {
    std::string id = std::to_string(t["id"].get<int>());
    EXPECT_EQ(t["state"], "SUCCEEDED") << "case " << id << "\n" << f.out;
    std::string runs = root + "/sweeps/optuna/" + id + "/work/logs/train/runs";
    std::vector<std::string> run_dirs = Entries(runs);
    ASSERT_EQ(run_dirs.size(), 1u) << "case " << id;
    std::string run = runs + "/" + run_dirs[0];
    std::string overrides = ReadFile(run + "/.hydra/overrides.yaml");
    for (const json& arg : t["args"]) {
      std::string a = arg.get<std::string>().substr(2);  // --key=value
      std::string key = a.substr(0, a.find('='));
      EXPECT_NE(overrides.find("- " + key + "="), std::string::npos)
          << "case " << id << ": " << key << "\n" << overrides;
    }
    std::string log = ReadFile(run + "/train.log");
    size_t starts = 0;
    for (size_t at = log.find("Epoch 0"); at != std::string::npos;
         at = log.find("Epoch 0", at + 1)) {
      ++starts;
    }
    EXPECT_LE(starts, 1u) << "case " << id << ": one trial per log\n" << log;
  }
}

// The image's spec (hpt.yaml: /usr/local/bin/trialshim, /app/conf,
// /app/train.py) stops before its first trial, naming the flag that maps
// the image's /app here; following it, the trials run. Its own trialshim is
// this one.
TEST(LocalTuningTest, ImageSpecRunsWithTheVolumeTheRefusalNames) {
  testing::Finished torch =
      testing::RunToEnd({"/usr/bin/python3", "-c", "import torch"});
  if (torch.exit_code != 0) GTEST_SKIP() << "no python3-torch";
  TempDir dir;
  std::string out = dir.Join("out");
  testing::Finished refused = RunIn(
      kRoot, {TrialshimBinary(), "sweep", "examples/vertex/hpt.yaml", "--out",
              out});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_FALSE(std::filesystem::exists(out + "/1")) << "no trial started";
  size_t at = refused.err.find("--volume ");
  ASSERT_NE(at, std::string::npos) << refused.err;
  std::string volume = refused.err.substr(at + 9);
  volume = volume.substr(0, volume.find(' '));
  EXPECT_EQ(volume, "examples/vertex:/app");
  // Debian's python3 has torch (the first on PATH here may not).
  std::string path = "PATH=/usr/bin:" + std::string(getenv("PATH"));
  testing::Finished ran = RunIn(
      kRoot,
      {TrialshimBinary(), "sweep", "examples/vertex/hpt.yaml", "--volume",
       volume, "--out", out, "--max-trials", "2", "--parallel", "2"},
      {path});
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  json record = json::parse(ReadFile(out + "/trials.json"));
  ASSERT_EQ(record["trials"].size(), 2u) << ran.out;
  for (const json& t : record["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
  }
}

// Check and sweep agree: check's advice, followed, gives a spec that check
// passes and the sweep runs; run from another directory, check names the
// --workdir that the sweep then takes.
TEST(LocalTuningTest, CheckAdviceRuns) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  std::string root = DigitsProject(dir);
  std::string spec = ReadFile(root + "/digits_job.yaml");
  const std::string shim =
      "command: [trialshim, --config-path, examples/digits/conf,\n"
      "                --config-name, config, --, build/bin/digits-train,\n"
      "                --config-path, examples/digits/conf, --config-name, "
      "config]";
  ASSERT_NE(spec.find(shim), std::string::npos);
  auto with_command = [&](const std::string& name, const std::string& cmd) {
    std::string text = spec;
    text.replace(text.find(shim), shim.size(), "command: " + cmd);
    std::ofstream(root + "/" + name) << text;
    return name;
  };
  auto check = [&](const std::string& cwd, std::vector<std::string> args) {
    args.insert(args.begin(), {TrialshimBinary(), "check", "--werror"});
    return RunIn(cwd, args);
  };
  int runs = 0;
  auto sweep = [&](const std::string& cwd, std::vector<std::string> args) {
    args.insert(args.begin(), {TrialshimBinary(), "sweep"});
    args.insert(args.end(), {"--max-trials", "2", "--out",
                             dir.Join("out-" + std::to_string(++runs))});
    testing::Finished f = RunIn(cwd, args);
    json record =
        json::parse(ReadFile(dir.Join("out-" + std::to_string(runs)) +
                             "/trials.json"),
                    nullptr, false);
    int succeeded = 0;
    if (record.is_object()) {
      for (const json& t : record["trials"]) succeeded += t["state"] == "SUCCEEDED";
    }
    return std::make_pair(f, succeeded);
  };

  // A trialshim app on its own: check knows it translates Vertex's
  // arguments itself, and the sweep runs it.
  std::string app = with_command("app.yaml", "[build/bin/digits-train]");
  testing::Finished checked = check(root, {app});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find("is a trialshim app"), std::string::npos)
      << checked.out;
  auto [ran, succeeded] = sweep(root, {app});
  EXPECT_EQ(succeeded, 2) << ran.out << ran.err;

  // A program that is no trialshim app gets advice with the config, and the
  // advice runs: a Python stand-in that refuses Vertex's 32.0 for an int
  // key as a dataclass schema does.
  std::string plain = with_command("plain.yaml", "[/usr/bin/python3, fit.py]");
  std::ofstream(root + "/fit.py")
      << "import os, sys\n"
         "for a in sys.argv[1:]:\n"
         "    if a.startswith('--') or a.startswith('data.batch_size=') and "
         "a.endswith('.0'):\n"
         "        sys.exit('refused: ' + a)\n"
         "os.execv('"
      << DigitsTrain() << "', ['digits-train'] + sys.argv[1:])\n";
  checked = check(root, {"--config-path", "examples/digits/conf",
                         "--config-name", "config", plain});
  EXPECT_EQ(checked.exit_code, 2) << checked.out;
  size_t at = checked.out.find("(command: [");
  ASSERT_NE(at, std::string::npos) << checked.out;
  std::string advice = checked.out.substr(at + 10);
  advice = advice.substr(0, advice.find("])") + 1);
  EXPECT_EQ(advice,
            "[trialshim, --config-path, examples/digits/conf, --config-name, "
            "config, --, /usr/bin/python3, fit.py]");
  std::string followed = with_command("followed.yaml", advice);
  checked = check(root, {followed});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  std::tie(ran, succeeded) = sweep(root, {followed});
  EXPECT_EQ(succeeded, 2) << ran.out << ran.err;

  // From another directory the relative paths are not there: check says
  // so with the --workdir that finds them, and the sweep refuses before
  // its first trial; with that --workdir both work.
  std::string elsewhere = dir.Join("elsewhere");
  std::filesystem::create_directories(elsewhere);
  std::string job = root + "/digits_job.yaml";
  checked = check(elsewhere, {job});
  EXPECT_EQ(checked.exit_code, 2) << checked.out;
  at = checked.out.find("--workdir ");
  ASSERT_NE(at, std::string::npos) << checked.out;
  std::string workdir = checked.out.substr(at + 10);
  workdir = workdir.substr(0, workdir.find(' '));
  EXPECT_EQ(workdir, root);
  std::tie(ran, succeeded) = sweep(elsewhere, {job});
  EXPECT_EQ(ran.exit_code, 2) << ran.out << ran.err;
  EXPECT_NE(ran.err.find("--workdir " + root), std::string::npos) << ran.err;
  EXPECT_EQ(succeeded, 0);
  checked = check(elsewhere, {"--workdir", workdir, job});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  std::tie(ran, succeeded) = sweep(elsewhere, {"--workdir", workdir, job});
  EXPECT_EQ(succeeded, 2) << ran.out << ran.err;
  EXPECT_EQ(Entries(elsewhere), std::vector<std::string>{})
      << "nothing is written where the user stands";
}

// --- Several metrics (a Pareto study) with the shipped trainers ----------

// The reports of a metric file as (tag, global_step) pairs, in file order:
// the tag is the key cloudml-hypertune adds besides its four.
std::vector<std::pair<std::string, std::string>> TagsAndSteps(
    const std::string& file) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(ReadFile(file));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    std::string tag = "?";
    for (const auto& [key, value] : j.items()) {
      if (key != "checkpoint_path" && key != "global_step" &&
          key != "timestamp" && key != "trial") {
        tag = key;
      }
    }
    out.emplace_back(tag, j.is_object() ? j.value("global_step", "?") : "?");
  }
  return out;
}

// Every trial of the sweep in `out` succeeded with a value for each of
// `metrics`, and its metric file holds one report per metric per epoch
// (`epochs`), in the order named, each pair at one step.
void ExpectEveryMetricReported(const std::string& out,
                               const std::vector<std::string>& metrics,
                               size_t trials, size_t epochs) {
  json record = json::parse(ReadFile(out + "/trials.json"), nullptr, false);
  ASSERT_TRUE(record.is_object()) << out;
  ASSERT_EQ(record["trials"].size(), trials) << record.dump(1);
  for (const json& t : record["trials"]) {
    const std::string id = std::to_string(t["id"].get<int64_t>());
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
    for (const std::string& m : metrics) {
      EXPECT_TRUE(t["metrics"].contains(m)) << m << " " << t.dump();
    }
    auto reports = TagsAndSteps(out + "/" + id + "/output.metrics");
    ASSERT_EQ(reports.size(), metrics.size() * epochs) << id;
    for (size_t i = 0; i < reports.size(); ++i) {
      EXPECT_EQ(reports[i].first, metrics[i % metrics.size()]) << id << " " << i;
      EXPECT_EQ(reports[i].second,
                reports[i - i % metrics.size()].second)
          << id << " " << i;
    }
  }
}

// The documented Pareto search as a Vertex job: `job` turns
// optimized_metric=[val_acc,val_loss] with two directions into two
// metricSpecs (hparams_search/digits_optuna has hypertune.monitor:
// ${optimized_metric}, so the trainer reports both); check passes it with
// --werror and the sweep measures both metrics in every trial.
TEST(LocalTuningTest, TwoMetricJobOfDigitsTrainIsCheckedAndSwept) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  testing::Finished job = RunIn(
      dir.path(),
      {TrialshimBinary(), "job", "--config-path",
       kRoot + "/examples/digits/conf-lightning", "--config-name", "config",
       "hparams_search=digits_optuna", "optimized_metric=[val_acc,val_loss]",
       "hydra.sweeper.direction=[maximize,minimize]",
       "hydra.sweeper.n_trials=2", "trainer.max_epochs=2", "--image", "img",
       "--output-dir", "gs://b/digits", "--", DigitsTrain()});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.err.find("never reported"), std::string::npos) << job.err;
  EXPECT_NE(
      job.out.find("  metrics:\n  - metricId: val_acc\n    goal: MAXIMIZE\n"
                   "  - metricId: val_loss\n    goal: MINIMIZE\n"),
      std::string::npos)
      << job.out;
  std::ofstream(dir.Join("job.yaml")) << job.out;
  testing::Finished check =
      RunIn(dir.path(), {TrialshimBinary(), "check", "--werror", "job.yaml"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  testing::Finished sweep = RunIn(
      dir.path(), {TrialshimBinary(), "sweep", "job.yaml", "--out", "out"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  ExpectEveryMetricReported(dir.Join("out"), {"val_acc", "val_loss"}, 2, 2);
  json record = json::parse(ReadFile(dir.Join("out/trials.json")));
  EXPECT_EQ(record["objectives"].size(), 2u) << record.dump(1);
  EXPECT_FALSE(record["pareto_front"].empty()) << record.dump(1);
}

// A second metric the trainer's config does not report: `job` and `check`
// warn, naming the override that reports it; followed, check passes with
// --werror and the sweep measures both, with digits-train (plain conf/:
// hypertune.monitor val_acc) and with examples/vertex/train.py
// (hypertune.tag val_acc).
TEST(LocalTuningTest, UnreportedSecondMetricWarnsAndTheFixReportsBoth) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  auto job = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        TrialshimBinary(), "job", "--config-path",
        kRoot + "/examples/digits/conf", "--config-name", "config",
        "optimizer.lr=choice(0.01,0.02)", "trainer.max_epochs=2",
        "--metric", "val_acc", "--metric", "val_loss", "--direction",
        "maximize", "--direction", "minimize", "--image", "img",
        "--output-dir", "gs://b/digits"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", DigitsTrain()});
    return RunIn(dir.path(), argv);
  };
  const std::string fix = "add 'hypertune.monitor=[val_acc,val_loss]' to "
                          "containerSpec.args";
  testing::Finished warned = job({});
  ASSERT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("metric 'val_loss' is never reported: the trainer "
                            "reports only 'val_acc' (hypertune.monitor in the "
                            "config)"),
            std::string::npos)
      << warned.err;
  EXPECT_NE(warned.err.find(fix), std::string::npos) << warned.err;
  std::ofstream(dir.Join("warned.yaml")) << warned.out;
  testing::Finished check =
      RunIn(dir.path(), {TrialshimBinary(), "check", "--werror", "warned.yaml"});
  EXPECT_NE(check.exit_code, 0) << check.out;
  EXPECT_NE(check.out.find(fix), std::string::npos) << check.out;

  // The fix, as `job` takes it: among its overrides.
  testing::Finished fixed = job({"hypertune.monitor=[val_acc,val_loss]"});
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.err.find("never reported"), std::string::npos) << fixed.err;
  std::ofstream(dir.Join("fixed.yaml")) << fixed.out;
  check = RunIn(dir.path(),
                {TrialshimBinary(), "check", "--werror", "fixed.yaml"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  testing::Finished sweep = RunIn(
      dir.path(), {TrialshimBinary(), "sweep", "fixed.yaml", "--out", "dg"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  ExpectEveryMetricReported(dir.Join("dg"), {"val_acc", "val_loss"}, 2, 2);

  // train.py: the shipped hpt.yaml with a second metric.
  testing::Finished torch =
      testing::RunToEnd({"/usr/bin/python3", "-c", "import torch"});
  if (torch.exit_code != 0) GTEST_SKIP() << "no python3-torch";
  std::string spec = ReadFile(kRoot + "/examples/vertex/hpt.yaml");
  const std::string metric = "    goal: MAXIMIZE\n";
  const std::string args = "args: [\"trainer.max_epochs=20\"]";
  ASSERT_NE(spec.find(metric), std::string::npos);
  ASSERT_NE(spec.find(args), std::string::npos);
  spec.insert(spec.find(metric) + metric.size(),
              "  - metricId: val_loss\n    goal: MINIMIZE\n");
  auto with_args = [&](const std::string& name, const std::string& a) {
    std::string text = spec;
    text.replace(text.find(args), args.size(), "args: [" + a + "]");
    std::ofstream(dir.Join(name)) << text;
    return name;
  };
  const std::string volume = kRoot + "/examples/vertex:/app";
  const std::string tag_fix =
      "add 'hypertune.tag=[val_acc,val_loss]' to containerSpec.args";
  check = RunIn(dir.path(),
                {TrialshimBinary(), "check", "--werror", "--volume", volume,
                 with_args("py.yaml", "\"trainer.max_epochs=2\"")});
  EXPECT_NE(check.exit_code, 0) << check.out;
  EXPECT_NE(check.out.find("metric 'val_loss' is never reported: the trainer "
                           "reports only 'val_acc' (hypertune.tag in the "
                           "config)"),
            std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find(tag_fix), std::string::npos) << check.out;
  const std::string py_fixed =
      with_args("py_fixed.yaml",
                "\"trainer.max_epochs=2\", \"hypertune.tag=[val_acc,val_loss]\"");
  check = RunIn(dir.path(), {TrialshimBinary(), "check", "--werror",
                             "--volume", volume, py_fixed});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  // Debian's python3 has torch (the first on PATH here may not).
  const std::string path = "PATH=/usr/bin:" + std::string(getenv("PATH"));
  sweep = RunIn(dir.path(),
                {TrialshimBinary(), "sweep", py_fixed, "--volume", volume,
                 "--max-trials", "2", "--parallel", "2", "--out", "py"},
                {path});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  ExpectEveryMetricReported(dir.Join("py"), {"val_acc", "val_loss"}, 2, 2);
}

// Both metric files of a two-metric trial (digits-train's reporter and
// train.py's stand-in) are what cloudml-hypertune writes for the same
// reports at the same moments.
TEST(AnchorsLocalTuning, TwoMetricFilesAreWhatCloudmlHypertuneWrites) {
  SKIP_WITHOUT_ANCHORS();
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  const std::string env = "CLOUD_ML_TRIAL_ID=7";
  testing::Finished digits = RunIn(
      dir.path(),
      {TrialshimBinary(), "--", DigitsTrain(), "trainer.max_epochs=2",
       "hydra.run.dir=" + dir.Join("run"),
       "hypertune.monitor=[val_acc,val_loss]"},
      {env, "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("digits.metrics")});
  ASSERT_EQ(digits.exit_code, 0) << digits.out << digits.err;
  testing::Finished py = RunIn(
      dir.path(),
      {"/usr/bin/python3", kRoot + "/examples/vertex/train.py",
       "trainer.max_epochs=2", "hypertune.tag=[val_acc,val_loss]",
       "trainer.checkpoint_dir=" + dir.Join("ck"),
       "trainer.model_dir=" + dir.Join("model")},
      {env, "CLOUD_ML_HP_METRIC_FILE=" + dir.Join("py.metrics")});
  if (py.exit_code != 0 && py.err.find("torch") != std::string::npos) {
    GTEST_SKIP() << "no python3-torch";
  }
  ASSERT_EQ(py.exit_code, 0) << py.out << py.err;
  for (const char* file : {"digits.metrics", "py.metrics"}) {
    const std::string written = ReadFile(dir.Join(file));
    json reports = json::array();
    for (const auto& [tag, step] : TagsAndSteps(dir.Join(file))) {
      (void)step;
      reports.push_back(tag);
    }
    ASSERT_EQ(reports, json({"val_acc", "val_loss", "val_acc", "val_loss"}))
        << file << "\n" << written;
    std::istringstream lines(written);
    reports = json::array();
    for (std::string line; std::getline(lines, line);) {
      json j = json::parse(line);
      const std::string tag = j.contains("val_acc") ? "val_acc" : "val_loss";
      char hex[64];
      std::snprintf(hex, sizeof hex, "%a",
                    std::stod(j[tag].get<std::string>()));
      reports.push_back(
          {{"tag", tag},
           {"value", hex},
           {"step", std::stoll(j["global_step"].get<std::string>())},
           {"checkpoint_path", j["checkpoint_path"]},
           {"timestamp", j["timestamp"]}});
    }
    json replay_job = {{"trial", "7"}, {"reports", reports}};
    std::ofstream(dir.Join("reports.json")) << replay_job.dump();
    testing::Finished replay = testing::RunAnchorsScript(
        "tests/anchors/hypertune_replay.py",
        {"hypertune", dir.Join("reports.json"), dir.Join("replayed")});
    ASSERT_EQ(replay.exit_code, 0) << replay.err;
    EXPECT_EQ(ReadFile(dir.Join("replayed")), written) << file;
  }
}

// Ctrl-C, then the command the sweep prints: the stopped trials continue
// from the checkpoints they wrote on SIGTERM (as Vertex restarts a trial
// with the same AIP_CHECKPOINT_DIR) and end as an uninterrupted sweep does.
TEST(LocalTuningTest, ResumeContinuesFromTheStoppedTrialsCheckpoints) {
  if (access(DigitsTrain().c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no digits-train (built with TRIALSHIM_WITH_TORCH=ON)";
  }
  TempDir dir;
  std::string root = DigitsProject(dir);
  // Long enough (about 25 ms an epoch) that a stop lands mid-training.
  std::string spec = ReadFile(root + "/digits_job.yaml");
  const std::string epochs = "trainer.max_epochs=8";
  ASSERT_NE(spec.find(epochs), std::string::npos);
  spec.replace(spec.find(epochs), epochs.size(), "trainer.max_epochs=80");
  std::ofstream(root + "/digits_job.yaml") << spec;
  const std::vector<std::string> sweep = {
      TrialshimBinary(), "sweep", "digits_job.yaml", "--max-trials", "2",
      "--parallel", "2"};
  std::vector<std::string> whole = sweep;
  whole.insert(whole.end(), {"--out", "whole"});
  ASSERT_EQ(RunIn(root, whole).exit_code, 0);

  std::vector<std::string> first = sweep;
  first.insert(first.end(), {"--out", "stopped"});
  SubprocessOptions spawn = testing::Child::Options();
  spawn.cwd = root;
  testing::Child run(first, spawn);
  // Stop once both trials have checkpointed an epoch.
  ASSERT_TRUE(WaitForFiles({root + "/stopped/1/checkpoints/last.ckpt",
                            root + "/stopped/2/checkpoints/last.ckpt"},
                           std::chrono::seconds(60)));
  run.Signal(SIGINT);
  testing::Finished stopped = run.Wait();
  EXPECT_EQ(stopped.exit_code, 128 + SIGINT) << stopped.out << stopped.err;
  json record = json::parse(ReadFile(root + "/stopped/trials.json"));
  for (const json& t : record["trials"]) {
    ASSERT_EQ(t["state"], "STOPPED") << "case " << t["id"] << "\n"
                                     << stopped.out;
  }
  size_t at = stopped.out.find("continue with: ");
  ASSERT_NE(at, std::string::npos) << stopped.out;
  std::string command = stopped.out.substr(at + 15);
  command = command.substr(0, command.find('\n'));
  // The trialshim that ran, as every hint names it: no PATH needed.
  EXPECT_EQ(command, TrialshimBinary() +
                         " sweep digits_job.yaml --parallel 2 --max-trials 2 "
                         "--out stopped --resume");
  testing::Finished resumed = RunIn(root, {"/bin/sh", "-c", command});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  json want = json::parse(ReadFile(root + "/whole/trials.json"));
  json got = json::parse(ReadFile(root + "/stopped/trials.json"));
  for (int i = 0; i < 2; ++i) {
    std::string id = std::to_string(i + 1);
    EXPECT_EQ(got["trials"][i]["state"], "SUCCEEDED") << "case " << id;
    EXPECT_EQ(got["trials"][i]["metric"], want["trials"][i]["metric"])
        << "case " << id << ": as if never stopped";
    std::string log = ReadFile(root + "/stopped/" + id + "/log");
    EXPECT_NE(log.find("Resumed from " + root + "/stopped/" + id +
                       "/checkpoints/"),
              std::string::npos)
        << "case " << id << "\n" << log;
  }
}

// --- A trial's working directory: nothing it writes lands elsewhere -------

// A trainer shaped like lightning-hydra-template, as a script: its run
// directory is logs/train/runs/DATE_TIME under where it stands (to the
// minute, so parallel trials meet), its overrides and log in it; it reads
// data/input.txt, writes through an absolute path into the project
// ($PROJECT/cache), changes the input and deletes stale.txt, then reports
// score = its --lr.
const char kTemplateTrainer[] = R"(set -e
run=logs/train/runs/$(date +%Y-%m-%d_%H-%M)
mkdir -p "$run"
echo "- $1" >> "$run/overrides.yaml"
cat data/input.txt >> "$run/train.log"
echo "trial $CLOUD_ML_TRIAL_ID in $PWD" >> "$run/train.log"
echo "$CLOUD_ML_TRIAL_ID" >> "$PROJECT/cache/absolute.txt"
echo changed > data/input.txt
rm -f stale.txt
lr=${1#--lr=}
echo "{\"global_step\": \"1\", \"score\": \"$lr\"}" > "$CLOUD_ML_HP_METRIC_FILE"
)";

// A project for kTemplateTrainer: the user's own logs/ and cache/ (each
// with a file), data/input.txt, stale.txt, the trainer and its job.
std::string TemplateProject(const TempDir& dir) {
  std::string root = dir.Join("project");
  dir.Write("project/logs/mine.log", "the user's\n");
  dir.Write("project/cache/mine", "the user's\n");
  dir.Write("project/data/input.txt", "in\n");
  dir.Write("project/stale.txt", "stale\n");
  dir.Write("project/train.sh", kTemplateTrainer);
  dir.Write("project/job.yaml",
            "displayName: template\n"
            "maxTrialCount: 4\n"
            "parallelTrialCount: 4\n"
            "studySpec:\n"
            "  metrics: [{metricId: score, goal: MAXIMIZE}]\n"
            "  parameters:\n"
            "  - parameterId: lr\n"
            "    discreteValueSpec: {values: [1, 2, 3, 4]}\n"
            "  algorithm: GRID_SEARCH\n"
            "trialJobSpec:\n"
            "  workerPoolSpecs:\n"
            "  - containerSpec:\n"
            "      imageUri: example/template:1\n"
            "      command: [/bin/sh, train.sh]\n"
            "      env: [{name: PROJECT, value: " + root + "}]\n");
  return root;
}

// The files under `dir` (not directories), as paths relative to it, with
// "(whiteout)" after an overlay's mark of a deleted file.
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_directory()) continue;
    std::string rel = std::filesystem::relative(e.path(), dir).string();
    out.insert(e.is_character_file() ? rel + " (whiteout)" : rel);
  }
  return out;
}

// Each trial of the template-shaped trainer, run four at once through the
// overlay (the default), has its run directory, overrides and log in its
// own <id>/work/, reads the input as the user left it, and the project
// stays as it was (the issue: three trials in one of the user's
// logs/train/runs/ directories, one overrides.yaml, one interleaved log).
// The upper directory holds only what the trial wrote.
void TemplateTrialsStayIn(bool as_root) {
  TempDir dir;
  std::string root = TemplateProject(dir);
  std::vector<std::string> argv = {TrialshimBinary(), "sweep", "job.yaml",
                                   "--out", "sweeps/template"};
  if (!as_root) {
    ASSERT_EQ(RunIn(root, {"chown", "-R", "1000:1000", dir.path()}).exit_code,
              0);
    argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=1000",
                               "--regid=1000", "--clear-groups"});
  }
  std::set<std::string> before = FilesUnder(root);
  testing::Finished f = RunIn(root, argv);
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  EXPECT_EQ(f.err.find("trialshim sweep: warning"), std::string::npos)
      << f.err;
  std::set<std::string> after = FilesUnder(root);
  for (auto it = after.begin(); it != after.end();) {
    it = it->rfind("sweeps/", 0) == 0 ? after.erase(it) : std::next(it);
  }
  EXPECT_EQ(after, before) << "only --out is new in the project";
  EXPECT_EQ(ReadFile(root + "/data/input.txt"), "in\n");
  EXPECT_EQ(ReadFile(root + "/logs/mine.log"), "the user's\n");
  for (int id = 1; id <= 4; ++id) {
    std::string work = root + "/sweeps/template/" + std::to_string(id) + "/work";
    std::string runs = work + "/logs/train/runs";
    std::vector<std::string> run_dirs = Entries(runs);
    ASSERT_EQ(run_dirs.size(), 1u) << "case " << id;
    std::string run = "logs/train/runs/" + run_dirs[0];
    EXPECT_EQ(FilesUnder(work),
              (std::set<std::string>{run + "/overrides.yaml",
                                     run + "/train.log", "cache/absolute.txt",
                                     "data/input.txt", "stale.txt (whiteout)"}))
        << "case " << id;
    EXPECT_EQ(ReadFile(work + "/" + run + "/overrides.yaml"),
              "- --lr=" + std::to_string(id) + ".0\n")
        << "case " << id << ": its own overrides";
    EXPECT_EQ(ReadFile(work + "/" + run + "/train.log"),
              "in\ntrial " + std::to_string(id) + " in " + root + "\n")
        << "case " << id << ": the input as the user left it, in the "
        << "project's own path, alone in its log";
    EXPECT_EQ(ReadFile(work + "/cache/absolute.txt"), std::to_string(id) + "\n")
        << "case " << id;
  }
}

// As root (a plain mount namespace) and as uid 1000 (a user namespace with
// the overlay's userxattr), the whole sweep run as that user.
TEST(LocalTuningTest, TemplateTrialsWriteOnlyIntoTheirOwnDirectory) {
  for (const bool as_root : {true, false}) {
    SCOPED_TRACE(as_root ? "as root" : "as uid 1000");
    if (!as_root && (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)) {
      continue;  // a user already, or no way to become one: the root case ran
    }
    TemplateTrialsStayIn(as_root);
  }
}

// --resume with another --private-workdir: the stopped trial reruns in the
// view it first ran in (its work/ is an overlay's upper directory or a farm
// of links, which the other would mix), the new trial takes the new one.
TEST(LocalTuningTest, ResumeKeepsEachTrialsWorkdirView) {
  struct Case {
    std::string first, then;
  } cases[] = {{"links", "overlay"}, {"overlay", "links"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.first + " then " + c.then);
    TempDir dir, shared;
    const std::string mark = shared.Join("stopped-once");
    std::string root = dir.Join("project");
    dir.Write("project/train.sh",
              "if [ \"$CLOUD_ML_TRIAL_ID\" = 1 ] && [ ! -e " + mark +
                  " ]; then touch " + mark +
                  "; exec sleep 600; fi\n"
                  "touch wrote\n"
                  "echo '{\"global_step\": \"1\", \"score\": \"1\"}' > "
                  "\"$CLOUD_ML_HP_METRIC_FILE\"\n");
    dir.Write("project/job.yaml",
              "maxTrialCount: 2\n"
              "studySpec:\n"
              "  metrics: [{metricId: score, goal: MAXIMIZE}]\n"
              "  parameters:\n"
              "  - parameterId: lr\n"
              "    discreteValueSpec: {values: [1, 2]}\n"
              "  algorithm: GRID_SEARCH\n"
              "trialJobSpec:\n"
              "  workerPoolSpecs:\n"
              "  - containerSpec:\n"
              "      imageUri: example/template:1\n"
              "      command: [/bin/sh, train.sh]\n");
    SubprocessOptions spawn = testing::Child::Options();
    spawn.cwd = root;
    testing::Child first({TrialshimBinary(), "sweep", "job.yaml", "--out", "o",
                          "--private-workdir", c.first},
                         spawn);
    ASSERT_TRUE(WaitForFiles({mark}));
    first.Signal(SIGTERM);
    ASSERT_EQ(first.Wait().exit_code, 128 + SIGTERM);
    testing::Finished resumed =
        RunIn(root, {TrialshimBinary(), "sweep", "job.yaml", "--out", "o",
                     "--private-workdir", c.then, "--resume"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    for (const auto& [id, view] : {std::pair{1, c.first}, {2, c.then}}) {
      std::string trial = root + "/o/" + std::to_string(id);
      EXPECT_EQ(std::filesystem::exists(trial + "/.overlay"), view == "overlay")
          << "trial " << id;
      EXPECT_EQ(std::filesystem::is_symlink(trial + "/work/train.sh"),
                view == "links")
          << "trial " << id;
      EXPECT_TRUE(std::filesystem::exists(trial + "/work/wrote"))
          << "trial " << id;
    }
  }
}

// In a forked child: refuses unshare(2) with EPERM from now on, for this
// process and what it starts, as a container's seccomp profile does. "" or
// why not.
std::string RefuseUnshare() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    return std::string("seccomp: ") + std::strerror(errno);
  }
  return "";
}

// Where the kernel refuses the overlay (a seccomp filter refusing unshare,
// as a container's may), the sweep says so once, with the reason and what
// is then shared, and runs each trial in <id>/work/ linking the project's
// entries, as --private-workdir links does without the warning; with
// --private-workdir overlay it stops before the first trial runs.
TEST(LocalTuningTest, WhereTheKernelRefusesTheOverlayTrialsRunInLinks) {
  struct Case {
    std::string name;
    std::vector<std::string> flags;
    bool refuse_unshare;
    int exit_code;
    size_t warnings;
    std::string err;  // in stderr
  };
  const std::vector<Case> cases = {
      {"links chosen", {"--private-workdir", "links"}, false, 0, 0, ""},
      {"auto where unshare is refused",
       {},
       true,
       0,
       1,
       "private overlay of @ROOT@: unshare(CLONE_NEWNS): Operation not "
       "permitted; so each trial runs in <out>/<id>/work/ instead"},
      {"overlay required where unshare is refused",
       {"--private-workdir", "overlay"},
       true,
       1,
       0,
       "cannot give '/bin/sh' a private overlay of @ROOT@: "
       "unshare(CLONE_NEWNS): Operation not permitted"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::string root = TemplateProject(dir);
    std::vector<std::string> argv = {TrialshimBinary(), "sweep", "job.yaml",
                                     "--out", "sweeps/template"};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    std::string got = testing::InChild([&]() -> std::string {
      if (c.refuse_unshare) {
        std::string why = RefuseUnshare();
        if (!why.empty()) return why;
      }
      testing::Finished f = RunIn(root, argv);
      return std::to_string(f.exit_code) + "\n" + f.err;
    });
    size_t newline = got.find('\n');
    ASSERT_NE(newline, std::string::npos) << "case " << c.name << ": " << got;
    std::string err = got.substr(newline + 1);
    EXPECT_EQ(got.substr(0, newline), std::to_string(c.exit_code))
        << "case " << c.name << "\n" << err;
    size_t warnings = 0;
    const std::string kWarning = "trialshim sweep: warning:";
    for (size_t at = err.find(kWarning); at != std::string::npos;
         at = err.find(kWarning, at + 1)) {
      ++warnings;
    }
    EXPECT_EQ(warnings, c.warnings) << "case " << c.name << "\n" << err;
    std::string want = c.err;
    if (size_t at = want.find("@ROOT@"); at != std::string::npos) {
      want.replace(at, 6, root);
    }
    EXPECT_NE(err.find(want), std::string::npos) << "case " << c.name << "\n"
                                                 << err;
    if (c.exit_code != 0) {
      EXPECT_FALSE(std::filesystem::exists(root + "/logs/train"))
          << "case " << c.name << ": no trial ran";
      continue;
    }
    // Each trial stood in its <id>/work/; logs/ is a link to the user's, so
    // the run directories are there, shared: what the warning says.
    for (int id = 1; id <= 4; ++id) {
      std::string work =
          root + "/sweeps/template/" + std::to_string(id) + "/work";
      EXPECT_TRUE(std::filesystem::is_symlink(work + "/logs"))
          << "case " << c.name << " trial " << id;
    }
    std::string log;
    for (const std::string& run : Entries(root + "/logs/train/runs")) {
      log += ReadFile(root + "/logs/train/runs/" + run + "/train.log");
    }
    for (int id = 1; id <= 4; ++id) {
      EXPECT_NE(log.find("trial " + std::to_string(id) + " in " + root +
                         "/sweeps/template/" + std::to_string(id) + "/work\n"),
                std::string::npos)
          << "case " << c.name << "\n" << log;
    }
  }
}

// A working directory of 100,000 entries: a trial starts without a step
// per entry (its upper directory holds only what it wrote, no links).
// bench/workdir_bench.sh measures the start-up cost.
TEST(LocalTuningTest, HugeWorkingDirectoryCostsNothingPerEntry) {
  TempDir dir;
  std::string root = TemplateProject(dir);
  for (int i = 0; i < 100000; ++i) {
    std::string name = root + "/e" + std::to_string(i);
    int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << name;
    close(fd);
  }
  testing::Finished f =
      RunIn(root, {TrialshimBinary(), "sweep", "job.yaml", "--out",
                   "sweeps/template", "--max-trials", "2"});
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  for (int id = 1; id <= 2; ++id) {
    std::string work = root + "/sweeps/template/" + std::to_string(id) + "/work";
    std::vector<std::string> top = Entries(work);
    EXPECT_EQ(top, (std::vector<std::string>{"cache", "data", "logs",
                                             "stale.txt"}))
        << "case " << id << ": only what the trial wrote";
  }
}

}  // namespace
}  // namespace trialshim::cli
