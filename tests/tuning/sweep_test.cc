// Real sweeps of scripted trainers (tests/tuning/data/trainer.py): every
// trial outcome, timeouts and SIGTERM, stop and resume, the arguments and
// environment a trial receives, the result files, and the trialshim binary.
#include "trialshim/tuning/sweep.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "tests/testutil/special_files.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::tuning {
namespace {

using json = nlohmann::json;
using testing::ReadFile;
using testing::TempDir;
namespace fs = std::filesystem;

const std::string kData =
    std::string(TRIALSHIM_SOURCE_DIR) + "/tests/tuning/data";

// Copies a job template into `dir` with @DATA@ filled in, and parses it.
JobSpec LoadTemplate(const TempDir& dir, const std::string& name) {
  std::string text = ReadFile(kData + "/" + name);
  for (size_t at; (at = text.find("@DATA@")) != std::string::npos;) {
    text.replace(at, 6, kData);
  }
  std::string path = dir.Write(name, text);
  std::vector<Diagnostic> diags;
  StatusOr<JobSpec> job = LoadJobSpecFile(path, &diags);
  EXPECT_OK(job);
  for (const Diagnostic& d : diags) ADD_FAILURE() << d.ToString();
  return job.ok() ? *job : JobSpec();
}

const TrialRecord* Trial(const SweepResult& r, int64_t id) {
  for (const TrialRecord& t : r.trials) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

json Received(const std::string& out, int64_t id) {
  return json::parse(
      ReadFile(out + "/" + std::to_string(id) + "/received.json"), nullptr,
      false);
}

TEST(SweepTest, EveryOutcome) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_modes.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  // The grid has 5 x 2 points, fewer than maxTrialCount (12).
  ASSERT_EQ(r->trials.size(), 10u);
  struct Case {
    int64_t id;
    TrialState state;
    std::string reason_has;
  } cases[] = {
      {1, TrialState::kSucceeded, ""},
      {2, TrialState::kSucceeded, ""},
      {3, TrialState::kFailed, "exit code 3: trainer: boom, giving up"},
      // The reason, not the context lines OmegaConf ends an error with.
      {4, TrialState::kFailed,
       "exit code 3: Value '32.0' of type 'float' could not be converted to "
       "Integer"},
      {5, TrialState::kInfeasible, "no file at CLOUD_ML_HP_METRIC_FILE"},
      {7, TrialState::kInfeasible, "'score' is nan"},
      {9, TrialState::kInfeasible, "the file has: val_acc"},
  };
  for (const Case& c : cases) {
    const TrialRecord* t = Trial(*r, c.id);
    ASSERT_NE(t, nullptr) << "case " << c.id;
    EXPECT_EQ(TrialStateName(t->state), std::string(TrialStateName(c.state)))
        << "case " << c.id << ": " << t->reason;
    EXPECT_NE(t->reason.find(c.reason_has), std::string::npos)
        << "case " << c.id << ": " << t->reason;
  }
  EXPECT_EQ(*Trial(*r, 2)->metric, 2.0);
  EXPECT_EQ(Trial(*r, 2)->metric_step, 10);
  EXPECT_EQ(Trial(*r, 3)->exit_code, 3);
  EXPECT_FALSE(r->failed) << "maxFailedTrialCount 0 means no limit";
  // Leaderboard: best first by the goal (MAXIMIZE), then the rest by id.
  std::vector<size_t> board = r->Leaderboard();
  EXPECT_EQ(r->trials[board[0]].id, 2);
  EXPECT_EQ(r->trials[board[1]].id, 1);
  EXPECT_EQ(r->trials[board[2]].id, 3);

  // What trial 4 (mode=fail, x=2) received: args after command + args,
  // Vertex's environment and containerSpec.env (AipDirs: the AIP_*_DIR).
  json got = Received(options.out_dir, 4);
  ASSERT_TRUE(got.is_object());
  EXPECT_EQ(got["argv"], json({"--tag=score", "--mode=fail", "--x=2"}));
  std::string trial_dir = fs::absolute(options.out_dir).string() + "/4";
  std::map<std::string, std::string> want_env = {
      {"CLOUD_ML_TRIAL_ID", "4"},
      {"CLOUD_ML_HP_METRIC_FILE", trial_dir + "/output.metrics"},
      {"JOB_ENV", "from spec"},
      {"CLOUD_ML_JOB_ID", r->job_id},
  };
  for (const auto& [k, v] : want_env) {
    EXPECT_EQ(got["env"].value(k, "<unset>"), v) << "case env " << k;
  }
  EXPECT_NE(ReadFile(trial_dir + "/log").find("boom"), std::string::npos);

  // The result files.
  json saved =
      json::parse(ReadFile(options.out_dir + "/trials.json"), nullptr, false);
  ASSERT_TRUE(saved.is_object());
  EXPECT_EQ(saved["trials"].size(), 10u);
  EXPECT_EQ(saved["trials"][1]["parameters"]["x"], 2);
  EXPECT_EQ(saved["trials"][1]["metric"], 2.0);
  std::string csv = ReadFile(options.out_dir + "/trials.csv");
  // Python's csv.writer: "\r\n" after each row.
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")),
            "trial,state,score,mode,x,seconds,exit_code,reason");
  EXPECT_NE(csv.find("\r\n2,SUCCEEDED,2,ok,2,"), std::string::npos) << csv;
  std::string html = ReadFile(options.out_dir + "/report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("score vs mode"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg\" width"), html.find("http"))
      << "no link to anything but the SVG namespace";
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// Vertex's layout under the job's baseOutputDirectory,
// <base>/<trial id>/{model,checkpoints,logs}/ (CustomJobSpec.
// base_output_directory in the v1 API), with --out as the local base; no
// baseOutputDirectory, no AIP_*_DIR, not even one from our environment.
TEST(SweepTest, AipDirs) {
  struct Case {
    const char* name;
    bool base_output_directory;
  } cases[] = {{"with baseOutputDirectory", true},
               {"without baseOutputDirectory", false}};
  for (const Case& c : cases) {
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_modes.yaml");
    if (!c.base_output_directory) job.base_output_directory.reset();
    SweepOptions options;
    options.out_dir = dir.Join("out");
    options.max_trials = 2;
    setenv("AIP_MODEL_DIR", "/leaked", 1);
    StatusOr<SweepResult> r = RunSweep(job, options);
    unsetenv("AIP_MODEL_DIR");
    ASSERT_OK(r);
    std::string trial_dir = fs::absolute(options.out_dir).string() + "/2";
    json env = Received(options.out_dir, 2)["env"];
    for (const auto& [var, sub] : std::map<std::string, std::string>{
             {"AIP_MODEL_DIR", "model"},
             {"AIP_CHECKPOINT_DIR", "checkpoints"},
             {"AIP_TENSORBOARD_LOG_DIR", "logs"}}) {
      std::string want = trial_dir + "/" + sub + "/";
      EXPECT_EQ(env.value(var, "<unset>"),
                c.base_output_directory ? want : "<unset>")
          << "case " << c.name << " " << var;
      EXPECT_EQ(fs::is_directory(want), c.base_output_directory)
          << "case " << c.name << " " << want;
    }
  }
}

// The exact text each parameter type puts on the trainer's command line:
// INTEGER as an int, DOUBLE and DISCRETE as Python's repr(float), as Vertex
// does (docs/vertex-values.md).
TEST(SweepTest, ArgumentTextPerParameterType) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_values.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  ASSERT_EQ(r->trials.size(), 1u);
  EXPECT_EQ(r->trials[0].state, TrialState::kSucceeded) << r->trials[0].reason;
  json argv = Received(options.out_dir, 1)["argv"];
  struct Case {
    const char* name;
    const char* want;
  } cases[] = {
      {"INTEGER", "--n=64"},
      {"DISCRETE integral", "--batch_size=128.0"},
      {"DISCRETE fraction", "--w=0.5"},
      {"DISCRETE small", "--eps=1e-05"},
      {"DOUBLE 1e-4", "--lr=0.0001"},
      {"DOUBLE integral", "--x=2.0"},
      {"CATEGORICAL", "--name=a,b c"},
  };
  ASSERT_EQ(argv.size(), std::size(cases)) << argv.dump();
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(argv[i], cases[i].want) << "case " << cases[i].name;
  }
}

// A trainer that reads its value with Python's int() (argparse type=int)
// fails on a DISCRETE 128 here as on Vertex, and takes an INTEGER 64.
TEST(SweepTest, IntTrainerBreaksOnDiscreteAsOnVertex) {
  struct Case {
    const char* name;
    const char* parameter;  // of sweep_values.yaml, renamed to n
    TrialState state;
    const char* reason_has;
  } cases[] = {
      {"INTEGER", "n", TrialState::kSucceeded, ""},
      {"DISCRETE", "batch_size", TrialState::kFailed,
       "exit code 1: ValueError: invalid literal for int() with base 10: "
       "'128.0'"},
  };
  setenv("TRAINER_MODE", "int", 1);
  for (const Case& c : cases) {
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_values.yaml");
    ParameterSpec n;
    for (const ParameterSpec& p : job.parameters) {
      if (p.id == c.parameter) n = p;
    }
    n.id = "n";
    job.parameters = {n};
    SweepOptions options;
    options.out_dir = dir.Join("out");
    StatusOr<SweepResult> r = RunSweep(job, options);
    ASSERT_OK(r);
    ASSERT_EQ(r->trials.size(), 1u) << "case " << c.name;
    EXPECT_EQ(TrialStateName(r->trials[0].state), TrialStateName(c.state))
        << "case " << c.name << ": " << r->trials[0].reason;
    EXPECT_NE(r->trials[0].reason.find(c.reason_has), std::string::npos)
        << "case " << c.name << ": " << r->trials[0].reason;
  }
  unsetenv("TRAINER_MODE");
}

TEST(SweepTest, MaxFailedTrialCountStopsTheJob) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_modes.yaml");
  job.parameters[0].categorical_values = {"fail"};
  job.max_failed_trial_count = 1;
  job.parallel_trial_count = 1;
  SweepOptions options;
  options.out_dir = dir.Join("out");
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  EXPECT_TRUE(r->failed);
  EXPECT_EQ(r->trials.size(), 1u) << "no trial starts after the limit";
}

// The result files go through DurableWriter: the sweep clears what a
// killed sweep left in --out, and a file that can not be replaced (here a
// directory in its place) stops it with an error that names the file and
// the reason, and leaves no temporary.
TEST(SweepTest, ResultFileWriteFailureNamesTheFile) {
  for (const char* blocked : {"trials.csv", "report.html"}) {
    SCOPED_TRACE(blocked);
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_values.yaml");
    SweepOptions options;
    options.out_dir = dir.Join("out");
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    const std::string stale = ".trials.json.tmp." + std::to_string(dead) + ".0";
    dir.Write("out/" + stale, "{");
    fs::create_directories(options.out_dir + "/" + blocked + "/x");
    StatusOr<SweepResult> r = RunSweep(job, options);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r, StatusIs(StatusCode::kIOError,
                            AllOf(HasSubstr(options.out_dir + "/" + blocked),
                                  HasSubstr(std::strerror(EISDIR)))));
    for (const auto& e : fs::directory_iterator(options.out_dir)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos)
          << e.path();
    }
    EXPECT_TRUE(
        json::parse(ReadFile(options.out_dir + "/trials.json"), nullptr, false)
            .is_object());
  }
}

TEST(SweepTest, MeasurementSelection) {
  struct Case {
    const char* name;
    MeasurementSelection selection;
    Goal goal;
    double want;
  } cases[] = {
      {"last", MeasurementSelection::kUnspecified, Goal::kMinimize, 2},
      {"best_min", MeasurementSelection::kBest, Goal::kMinimize, 1},
      {"best_max", MeasurementSelection::kBest, Goal::kMaximize, 3},
  };
  for (const Case& c : cases) {
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_random.yaml");
    job.measurement_selection = c.selection;
    job.metrics[0].goal = c.goal;
    SweepOptions options;
    options.out_dir = dir.Join("out");
    options.max_trials = 1;
    StatusOr<SweepResult> r = RunSweep(job, options);
    ASSERT_OK(r);
    ASSERT_EQ(r->trials.size(), 1u) << "case " << c.name;
    EXPECT_EQ(r->trials[0].metric.value_or(-1), c.want) << "case " << c.name;
    EXPECT_EQ(r->trials[0].reports, 3) << "case " << c.name;
  }
}

TEST(SweepTest, RandomSearchArgumentsAsVertexFormatsThem) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_random.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  options.seed = 7;
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  ASSERT_EQ(r->trials.size(), 6u);
  for (const TrialRecord& t : r->trials) {
    json want = {"--mode=multi"};
    for (const ParameterValue& v : RandomPoint(job.parameters, 7, t.id)) {
      want.push_back(v.Arg());
    }
    EXPECT_EQ(Received(options.out_dir, t.id)["argv"], want)
        << "case trial " << t.id;
    EXPECT_EQ(t.state, TrialState::kSucceeded) << "case trial " << t.id;
  }
}

TEST(SweepTest, TimeoutSendsSigtermThenSigkill) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_hang.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  options.kill_grace_seconds = 0.5;
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  ASSERT_EQ(r->trials.size(), 2u);
  // Trial 1 handles SIGTERM and exits 143; trial 2 ignores it and is killed.
  for (const TrialRecord& t : r->trials) {
    EXPECT_EQ(t.state, TrialState::kFailed) << "case trial " << t.id;
    EXPECT_NE(t.reason.find("timed out after 2s"), std::string::npos)
        << "case trial " << t.id << ": " << t.reason;
  }
  EXPECT_EQ(Trial(*r, 1)->exit_code, 143);
  EXPECT_EQ(ReadFile(options.out_dir + "/1/sigterm"), "got SIGTERM\n");
  EXPECT_EQ(Trial(*r, 2)->signal, SIGKILL);
}

// Trials that report a learning curve: the rule stops the bad one (trial 4)
// with SIGTERM, which it handles; it is recorded as Vertex records it.
TEST(SweepTest, EarlyStoppingStopsTheBadTrial) {
  struct Case {
    const char* name;
    StoppingRule rule;
    bool use_elapsed;
    std::string reason_has;
    std::string note;
  } cases[] = {
      {"median", StoppingRule::kMedian, false, "median rule at step ",
       "early stopping: median rule, trials compared at the same global_step"},
      {"median elapsed", StoppingRule::kMedian, true, "median rule after ",
       "early stopping: median rule, trials compared at the same elapsed "
       "time"},
      {"decay curve", StoppingRule::kDecayCurve, false, "decay curve at step ",
       "early stopping: decay-curve rule, trials compared at the same "
       "global_step"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_stopping.yaml");
    job.stopping = c.rule;
    job.stopping_use_elapsed = c.use_elapsed;
    SweepOptions options;
    options.out_dir = dir.Join("out");
    options.kill_grace_seconds = 5;
    StatusOr<SweepResult> r = RunSweep(job, options);
    ASSERT_OK(r);
    ASSERT_EQ(r->trials.size(), 5u) << "case " << c.name;
    EXPECT_NE(std::find(r->notes.begin(), r->notes.end(), c.note),
              r->notes.end())
        << "case " << c.name;
    for (const TrialRecord& t : r->trials) {
      bool bad = t.id == 4;
      EXPECT_EQ(t.state, TrialState::kSucceeded)
          << "case " << c.name << " trial " << t.id << ": " << t.reason;
      EXPECT_EQ(t.stopped_early, bad)
          << "case " << c.name << " trial " << t.id << ": " << t.reason;
      EXPECT_EQ(t.reports, bad ? static_cast<int>(t.measurements.size()) : 12)
          << "case " << c.name << " trial " << t.id;
      ASSERT_FALSE(t.measurements.empty()) << "case " << c.name;
      EXPECT_EQ(t.metric.value_or(-1), t.measurements.back().value)
          << "case " << c.name << " trial " << t.id << ": LAST_MEASUREMENT";
      EXPECT_EQ(
          fs::exists(options.out_dir + "/" + std::to_string(t.id) + "/sigterm"),
          bad)
          << "case " << c.name << " trial " << t.id;
    }
    const TrialRecord* bad = Trial(*r, 4);
    EXPECT_LT(bad->reports, 12) << "case " << c.name;
    EXPECT_EQ(bad->exit_code, 143) << "case " << c.name;
    EXPECT_EQ(bad->reason.rfind("stopped early: " + c.reason_has, 0), 0u)
        << "case " << c.name << ": " << bad->reason;
    json record = json::parse(ReadFile(options.out_dir + "/trials.json"));
    EXPECT_EQ(record["trials"][3]["stopped_early"], true) << "case " << c.name;
    EXPECT_EQ(record["trials"][3]["measurements"].size(),
              bad->measurements.size())
        << "case " << c.name;
    // The report draws the curves, trial 4's as stopped.
    std::string report = ReadFile(options.out_dir + "/report.html");
    EXPECT_NE(report.find("class=\"c s\"><title>trial 4: SUCCEEDED, stopped "
                          "early"),
              std::string::npos)
        << "case " << c.name;
  }
}

// A sweep that died after the rule stopped a trial finishes that trial from
// its recorded measurements on --resume instead of running it again.
TEST(SweepTest, ResumeFinishesAStoppingTrial) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_stopping.yaml");
  job.measurement_selection = MeasurementSelection::kBest;
  SweepOptions options;
  options.out_dir = dir.Join("out");
  ASSERT_OK(RunSweep(job, options));
  std::string path = options.out_dir + "/trials.json";
  json record = json::parse(ReadFile(path));
  json& t4 = record["trials"][3];
  ASSERT_EQ(t4["stopped_early"], true);
  t4["state"] = "STOPPING";
  t4["metric"] = nullptr;
  t4["measurements"] = json::array(
      {{{"step", 1}, {"elapsed_seconds", 0.1}, {"value", 0.5}},
       {{"step", 2}, {"elapsed_seconds", 0.2}, {"value", 0.7}},
       {{"step", 3}, {"elapsed_seconds", 0.3}, {"value", nullptr}}});
  std::ofstream(path) << record.dump();
  std::string runs = dir.Join("runs.log");
  setenv("RUNS_LOG", runs.c_str(), 1);
  options.resume = true;
  StatusOr<SweepResult> r = RunSweep(job, options);
  unsetenv("RUNS_LOG");
  ASSERT_OK(r);
  const TrialRecord* t = Trial(*r, 4);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->state, TrialState::kSucceeded) << t->reason;
  EXPECT_TRUE(t->stopped_early);
  EXPECT_EQ(t->metric.value_or(-1), 0.7) << "BEST_MEASUREMENT skips the NaN";
  EXPECT_EQ(t->metric_step, 2);
  EXPECT_FALSE(fs::exists(runs)) << "no trial ran again";
}

TEST(SweepTest, RecordThatIsNoRecordIsRefused) {
  struct Case {
    std::string name;
    std::string trials_json;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"not JSON", "{", "is not a trialshim sweep record"},
      {"trials not a list", R"({"trials": 5})",
       "is not a trialshim sweep record"},
      {"fingerprint not a string", R"({"trials": [], "fingerprint": 7})",
       "is not a trialshim sweep record: [json.exception.type_error.302]"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_resume.yaml");
    SweepOptions options;
    options.out_dir = dir.Join("out");
    options.resume = true;
    dir.Write("out/trials.json", c.trials_json);
    StatusOr<SweepResult> r = RunSweep(job, options);
    ASSERT_FALSE(r.ok()) << "case " << c.name;
    EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

// Every file under `dir` with its contents: what a refused resume must
// leave as it was.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && !e.is_symlink()) {
      files[e.path().string()] = ReadFile(e.path().string());
    }
  }
  return files;
}

// Counts the trials that succeeded as the sweep reports them (its
// on_progress event) and wakes a test waiting for a count.
class SucceededTrials {
 public:
  std::function<void(const SweepResult&, const TrialRecord*)> OnProgress() {
    return [this](const SweepResult&, const TrialRecord* t) {
      if (!t || t->state != TrialState::kSucceeded) return;
      std::lock_guard<std::mutex> lock(mu_);
      ++count_;
      cv_.notify_all();
    };
  }
  // True once `n` trials have succeeded, within `timeout`.
  bool WaitFor(int n, std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return count_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Runs `job` until trials 3 and 4 have started (they hang) and 1 and 2 have
// succeeded, then stops it; says whether it got that far.
struct StoppedSweep {
  StatusOr<SweepResult> result = Status(StatusCode::kInternal, "not run");
  bool started = false;    // trials 3 and 4 started
  bool succeeded = false;  // trials 1 and 2 succeeded
};
StoppedSweep RunUntilTwoSucceeded(const JobSpec& job, SweepOptions options,
                                  std::atomic<int>* stop) {
  SucceededTrials succeeded;
  options.stop = stop;
  options.on_progress = succeeded.OnProgress();
  StoppedSweep out;
  std::thread sweep([&] { out.result = RunSweep(job, options); });
  out.started = testing::WaitForFiles(
      {options.out_dir + "/3/started", options.out_dir + "/4/started"},
      std::chrono::seconds(10));
  out.succeeded = succeeded.WaitFor(2, std::chrono::seconds(10));
  *stop = 1;
  sweep.join();
  return out;
}

// A sweep stopped with trials 1 and 2 done and 3 and 4 stopped, as
// StopThenResumeRerunsOnlyUnfinishedTrials makes it.
SweepResult StopAfterTwo(const JobSpec& job, SweepOptions options) {
  std::atomic<int> stop{0};
  StoppedSweep first = RunUntilTwoSucceeded(job, options, &stop);
  EXPECT_TRUE(first.started) << "trials 3 and 4 did not start";
  EXPECT_TRUE(first.succeeded) << "trials 1 and 2 did not succeed";
  EXPECT_OK(first.result);
  return first.result.ok() ? first.result.value() : SweepResult();
}

// A record that does not match its directory costs no finished trial: the
// resume is refused (exit 2) saying what is wrong and how to go on, and
// nothing in the directory changes. Where the hint names a flag, following
// it continues the sweep.
TEST(SweepTest, ResumeRefusesARecordThatDoesNotMatchTheDirectory) {
  struct Case {
    std::string name;
    std::function<void(json*)> edit;  // null: delete trials.json
    int64_t max_trials;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"record deleted", nullptr, 0,
       "holds trial directories (1, 2, 3, 4) but no trials.json"},
      {"record empty", [](json* j) { (*j)["trials"] = json::array(); }, 0,
       "trials.json does not describe trial directory"},
      {"trial listed twice",
       [](json* j) { (*j)["trials"].push_back((*j)["trials"][0]); }, 0,
       "trials.json lists trial 1 twice"},
      {"id beyond the trials of this sweep", [](json*) {}, 3,
       "beyond the 3 trials this sweep runs; continue it with --max-trials 4"},
      {"succeeded without a number",
       [](json* j) { (*j)["trials"][0]["metric"] = "0.1"; }, 0,
       "trial 1 is SUCCEEDED without a numeric metric"},
      {"unknown state",
       [](json* j) { (*j)["trials"][1]["state"] = "DONE"; }, 0,
       "trial 2 has an unknown state 'DONE'"},
      {"values changed",
       [](json* j) { (*j)["trials"][0]["parameters"]["x"] = 2.0; }, 0,
       "trial 1's parameters are not the ones this search gives it"},
      {"id not a number", [](json* j) { (*j)["trials"][2]["id"] = "3"; }, 0,
       "trials.json holds a trial without a valid id"},
  };
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_resume.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("stopped");
  SweepResult stopped = StopAfterTwo(job, options);
  ASSERT_TRUE(stopped.stopped);
  for (const Case& c : cases) {
    std::string out = dir.Join(c.name);
    fs::copy(options.out_dir, out,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    std::string record = out + "/trials.json";
    if (c.edit) {
      json j = json::parse(ReadFile(record));
      c.edit(&j);
      std::ofstream(record) << j.dump(2);
    } else {
      fs::remove(record);
    }
    std::map<std::string, std::string> before = Snapshot(out);
    SweepOptions resume = options;
    resume.out_dir = out;
    resume.resume = true;
    resume.max_trials = c.max_trials;
    StatusOr<SweepResult> r = RunSweep(job, resume);
    ASSERT_FALSE(r.ok()) << "case " << c.name;
    EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
    EXPECT_EQ(Snapshot(out), before) << "case " << c.name;
    if (c.edit == nullptr) {  // not even without --resume
      resume.resume = false;
      EXPECT_FALSE(RunSweep(job, resume).ok()) << "case " << c.name;
      EXPECT_EQ(Snapshot(out), before) << "case " << c.name;
    }
  }
  // The --max-trials the hint names continues the sweep.
  SweepOptions hinted = options;
  hinted.out_dir = dir.Join("id beyond the trials of this sweep");
  hinted.resume = true;
  hinted.max_trials = 4;
  setenv("TRAINER_FORCE_MODE", "ok", 1);
  StatusOr<SweepResult> r = RunSweep(job, hinted);
  unsetenv("TRAINER_FORCE_MODE");
  ASSERT_OK(r);
  EXPECT_EQ(r->trials.size(), 4u);
}

// What a resume finds planted in a sweep directory is refused before the
// record is rewritten: a trial's log or lock that is a link out of --out
// (the trial's output, or the lock's rewrite, would land there), a FIFO as
// a log (the open would block, deaf to SIGTERM), trials.json that is a
// FIFO or a directory. Nothing outside changes, the record keeps every
// trial (the stopped ones too), and the error names the file and why.
TEST(SweepTest, ResumeRefusesPlantedFilesAndKeepsTheRecord) {
  struct Case {
    std::string name;
    std::string file;  // under the copy of the sweep directory
    enum { kLinkOut, kFifo, kDirectory } plant;
    StatusCode code;
    std::string want;  // after "<copy>/<file>"
  };
  const std::vector<Case> cases = {
      {"a trial's log links out of --out", "3/log", Case::kLinkOut,
       StatusCode::kIOError, ": it is a symbolic link, not a regular file"},
      {"a trial's log is a FIFO", "3/log", Case::kFifo, StatusCode::kIOError,
       ": it is a FIFO, not a regular file"},
      {"a trial's lock links out of --out", "3/.trialshim.lock",
       Case::kLinkOut, StatusCode::kIOError,
       ": it is a symbolic link, not a regular file"},
      {"trials.json is a FIFO", "trials.json", Case::kFifo,
       StatusCode::kIOError, ": it is a FIFO, not a regular file"},
      {"trials.json is a directory", "trials.json", Case::kDirectory,
       StatusCode::kIOError, ": it is a directory, not a regular file"},
  };
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_resume.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("stopped");
  SweepResult stopped = StopAfterTwo(job, options);
  ASSERT_TRUE(stopped.stopped);
  for (const Case& c : cases) {
    std::string out = dir.Join(c.name);
    fs::copy(options.out_dir, out,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    std::string outside = dir.Write("outside/" + c.name, "not the sweep's\n");
    std::string planted = out + "/" + c.file;
    fs::remove(planted);
    if (c.plant == Case::kLinkOut) {
      fs::create_symlink(outside, planted);
    } else if (c.plant == Case::kFifo) {
      ASSERT_TRUE(testing::MakeSpecial(testing::Special::kFifo, planted));
    } else {
      fs::create_directory(planted);
    }
    std::map<std::string, std::string> before = Snapshot(out);
    SweepOptions resume = options;
    resume.out_dir = out;
    resume.resume = true;
    setenv("TRAINER_FORCE_MODE", "ok", 1);
    StatusOr<SweepResult> r = RunSweep(job, resume);
    unsetenv("TRAINER_FORCE_MODE");
    EXPECT_THAT(r, StatusIs(c.code, HasSubstr(planted + c.want)))
        << "case " << c.name;
    EXPECT_EQ(Snapshot(out), before) << "case " << c.name;
    EXPECT_EQ(ReadFile(outside), "not the sweep's\n") << "case " << c.name;
  }
}

// A resume stopped before it reran the trials it took over (SIGTERM at
// once) still records them: the next --resume finds every trial directory
// described.
TEST(SweepTest, StoppedResumeKeepsTheTrialsItHasNotRerun) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_resume.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  SweepResult stopped = StopAfterTwo(job, options);
  ASSERT_TRUE(stopped.stopped);
  std::atomic<int> stop{1};
  SweepOptions resume = options;
  resume.resume = true;
  resume.stop = &stop;
  ASSERT_OK(RunSweep(job, resume));
  json record = json::parse(ReadFile(options.out_dir + "/trials.json"));
  std::set<int64_t> ids;
  for (const json& t : record["trials"]) ids.insert(t["id"].get<int64_t>());
  EXPECT_EQ(ids, (std::set<int64_t>{1, 2, 3, 4}));
  setenv("TRAINER_FORCE_MODE", "ok", 1);
  resume.stop = nullptr;
  StatusOr<SweepResult> again = RunSweep(job, resume);
  unsetenv("TRAINER_FORCE_MODE");
  ASSERT_OK(again);
  EXPECT_EQ(again->trials.size(), 4u);
}

TEST(SweepTest, StopThenResumeRerunsOnlyUnfinishedTrials) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_resume.yaml");
  std::string runs = dir.Join("runs.log");
  setenv("RUNS_LOG", runs.c_str(), 1);
  std::atomic<int> stop{0};
  SweepOptions options;
  options.out_dir = dir.Join("out");
  // Stop only once trials 1 and 2 have ended and 3 and 4 hang.
  StoppedSweep stopped = RunUntilTwoSucceeded(job, options, &stop);
  ASSERT_TRUE(stopped.started);
  ASSERT_TRUE(stopped.succeeded);
  ASSERT_OK(stopped.result);
  const SweepResult& r1 = stopped.result.value();
  options.stop = &stop;
  EXPECT_TRUE(r1.stopped);
  for (int64_t id : {3, 4}) {
    EXPECT_EQ(Trial(r1, id)->state, TrialState::kStopped) << "case " << id;
    EXPECT_EQ(ReadFile(options.out_dir + "/" + std::to_string(id) + "/sigterm"),
              "got SIGTERM\n")
        << "case " << id;
  }
  EXPECT_EQ(Trial(r1, 1)->state, TrialState::kSucceeded);

  // A second sweep into the same directory needs --resume.
  stop = 0;
  options.on_progress = nullptr;
  StatusOr<SweepResult> refused = RunSweep(job, options);
  EXPECT_THAT(refused, StatusIs(_, HasSubstr("--resume")));
  // And refuses a different search.
  options.resume = true;
  JobSpec other = job;
  other.metrics[0].id = "loss";
  EXPECT_FALSE(RunSweep(other, options).ok());

  setenv("TRAINER_FORCE_MODE", "ok", 1);
  StatusOr<SweepResult> r2 = RunSweep(job, options);
  unsetenv("TRAINER_FORCE_MODE");
  unsetenv("RUNS_LOG");
  ASSERT_OK(r2);
  EXPECT_FALSE(r2->stopped);
  ASSERT_EQ(r2->trials.size(), 4u);
  for (const TrialRecord& t : r2->trials) {
    EXPECT_EQ(t.state, TrialState::kSucceeded) << "case " << t.id;
  }
  EXPECT_EQ(r2->job_id, r1.job_id);
  EXPECT_EQ(Received(options.out_dir, 3)["argv"],
            json({"--mode=hang", "--x=1.0"}))
      << "a rerun gets the same values";
  // Trials 1 and 2 ran once; 3 and 4 twice.
  std::map<std::string, int> count;
  std::ifstream in(runs);
  for (std::string line; std::getline(in, line);) ++count[line];
  EXPECT_EQ(count, (std::map<std::string, int>{
                       {"1", 1}, {"2", 1}, {"3", 2}, {"4", 2}}));
  // A rerun continues in the directory its first run left, as Vertex
  // restarts a trial with the same AIP_CHECKPOINT_DIR; its earlier metric
  // file is kept aside.
  EXPECT_EQ(ReadFile(options.out_dir + "/3/sigterm"), "got SIGTERM\n")
      << "a rerun keeps what its first run wrote";
  EXPECT_NE(ReadFile(options.out_dir + "/3/log")
                .find("--- trialshim sweep: trial 3 started again"),
            std::string::npos);
}

// No algorithm: the Bayesian search runs real trials, two at a time, and
// finds better values than its initial design did.
TEST(SweepTest, BayesianByDefault) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_bayesian.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  options.seed = 3;
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  EXPECT_EQ(r->algorithm, Algorithm::kUnspecified);
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("Bayesian optimization"), std::string::npos)
      << r->notes[0];
  json record = json::parse(ReadFile(options.out_dir + "/trials.json"));
  EXPECT_EQ(record["algorithm"], "ALGORITHM_UNSPECIFIED");
  ASSERT_EQ(r->trials.size(), 16u);
  double design_best = HUGE_VAL, best = HUGE_VAL;
  std::set<std::string> distinct;
  for (const TrialRecord& t : r->trials) {
    ASSERT_EQ(t.state, TrialState::kSucceeded) << "case " << t.id;
    json args = record["trials"][t.id - 1]["args"];
    EXPECT_EQ(Received(options.out_dir, t.id)["argv"], args)
        << "case " << t.id << ": the recorded values are the ones run";
    distinct.insert(args.dump());
    if (t.id <= 10) design_best = std::min(design_best, *t.metric);
    best = std::min(best, *t.metric);
  }
  EXPECT_EQ(distinct.size(), 16u);
  EXPECT_LT(best, design_best);
  EXPECT_LT(best, 0.15) << "score = x + y/10, minimum 0";
}

// A resumed Bayesian sweep runs the trials it had started with the values
// recorded when they started, and continues as an uninterrupted one would.
TEST(SweepTest, BayesianResumeKeepsRecordedValues) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_bayesian.yaml");
  job.parallel_trial_count = 1;  // the same history whatever the timing
  auto args = [](const std::string& out, int64_t id) {
    return Received(out, id)["argv"].dump();
  };
  SweepOptions whole;
  whole.out_dir = dir.Join("whole");
  whole.max_trials = 14;
  ASSERT_OK(RunSweep(job, whole));

  SweepOptions part = whole;
  part.out_dir = dir.Join("part");
  part.max_trials = 12;
  ASSERT_OK(RunSweep(job, part));
  // Trial 12 (after the 10 of the design) was interrupted after it started
  // with other values.
  std::string state = part.out_dir + "/trials.json";
  json record = json::parse(ReadFile(state));
  record["trials"][11]["state"] = "STOPPED";
  record["trials"][11]["parameters"]["x"] = 0.125;
  record["trials"][11]["parameters"]["y"] = 0;
  std::ofstream(state) << record.dump(2);
  part.resume = true;
  part.max_trials = 14;
  StatusOr<SweepResult> resumed = RunSweep(job, part);
  ASSERT_OK(resumed);
  ASSERT_EQ(resumed->trials.size(), 14u);
  EXPECT_EQ(args(part.out_dir, 12), R"(["--x=0.125","--y=0"])");
  for (int64_t id = 1; id <= 11; ++id) {
    EXPECT_EQ(args(part.out_dir, id), args(whole.out_dir, id))
        << "case " << id << ": kept";
  }

  // Without the edit, a resumed sweep gets exactly the uninterrupted one's
  // values.
  SweepOptions again = whole;
  again.out_dir = dir.Join("again");
  again.max_trials = 11;
  ASSERT_OK(RunSweep(job, again));
  again.resume = true;
  again.max_trials = 14;
  ASSERT_OK(RunSweep(job, again));
  for (int64_t id = 1; id <= 14; ++id) {
    EXPECT_EQ(args(again.out_dir, id), args(whole.out_dir, id))
        << "case " << id;
  }
}

// Two metrics: every trial is measured on both at one measurement, the
// answer is their Pareto front (checked here by brute force), and the
// records, the leaderboard and the report say so; a trial that never reports
// the second metric is INFEASIBLE, as on Vertex; resume keeps the values.
TEST(SweepTest, SeveralMetricsGiveTheParetoFront) {
  TempDir dir;
  JobSpec job = LoadTemplate(dir, "sweep_pair.yaml");
  SweepOptions options;
  options.out_dir = dir.Join("out");
  options.seed = 5;
  StatusOr<SweepResult> r = RunSweep(job, options);
  ASSERT_OK(r);
  ASSERT_EQ(r->objectives.size(), 2u);
  ASSERT_EQ(r->trials.size(), 12u);
  std::vector<int> ranks = r->ParetoRanks();
  std::set<int64_t> front;
  for (size_t i = 0; i < r->trials.size(); ++i) {
    const TrialRecord& t = r->trials[i];
    ASSERT_EQ(t.state, TrialState::kSucceeded) << "case " << t.id;
    ASSERT_EQ(t.values.size(), 2u) << "case " << t.id;
    json args = Received(options.out_dir, t.id)["argv"];
    double x = std::stod(args[1].get<std::string>().substr(4));
    double y = std::stod(args[2].get<std::string>().substr(4));
    EXPECT_NEAR(t.values[0], x + y / 10, 1e-9) << "case " << t.id;
    EXPECT_NEAR(t.values[1], 1 - x + y / 10, 1e-9)
        << "case " << t.id << ": cost at score's step, not the later 5";
    bool dominated = false;
    for (const TrialRecord& o : r->trials) {
      dominated |= o.values[0] <= t.values[0] && o.values[1] <= t.values[1] &&
                   o.values != t.values;
    }
    EXPECT_EQ(ranks[i] == 0, !dominated) << "case " << t.id;
    if (!dominated) front.insert(t.id);
  }
  std::vector<size_t> board = r->Leaderboard();
  for (size_t k = 0; k < board.size(); ++k) {
    EXPECT_EQ(k < front.size(), front.count(r->trials[board[k]].id) == 1)
        << "case leaderboard " << k << ": the front first";
  }
  json record = json::parse(ReadFile(options.out_dir + "/trials.json"));
  EXPECT_EQ(record["objectives"][1]["metric_id"], "cost");
  EXPECT_EQ(record["objectives"][1]["goal"], "MINIMIZE");
  EXPECT_EQ(record["pareto_front"].get<std::set<int64_t>>(), front);
  EXPECT_EQ(record["trials"][0]["metrics"]["cost"], r->trials[0].values[1]);
  std::string csv = ReadFile(options.out_dir + "/trials.csv");
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")),
            "trial,state,score,cost,pareto_front,x,y,seconds,exit_code,reason");
  EXPECT_NE(ReportHtml(*r).find("Pareto front"), std::string::npos);

  // Resumed with more trials: the recorded values are kept as they were.
  options.resume = true;
  options.max_trials = 13;
  StatusOr<SweepResult> more = RunSweep(job, options);
  ASSERT_OK(more);
  ASSERT_EQ(more->trials.size(), 13u);
  EXPECT_EQ(Trial(*more, 3)->values, Trial(*r, 3)->values);

  JobSpec dropped = job;
  dropped.worker_pools[0].container.command.push_back("--drop=cost");
  SweepOptions drop;
  drop.out_dir = dir.Join("drop");
  drop.max_trials = 2;
  StatusOr<SweepResult> d = RunSweep(dropped, drop);
  ASSERT_OK(d);
  for (const TrialRecord& t : d->trials) {
    EXPECT_EQ(t.state, TrialState::kInfeasible) << "case drop " << t.id;
    EXPECT_EQ(t.reason, "metric 'cost' never reported") << "case drop";
  }
}

// A command that can not run here stops the sweep before its first trial
// (exit 2 from the command), naming it; nothing is started.
TEST(SweepTest, CommandThatCanNotRunHereIsRefusedBeforeTheFirstTrial) {
  struct Case {
    std::string name;
    std::vector<std::string> command;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"not in PATH", {"no-such-trainer-xyz"},
       "the command 'no-such-trainer-xyz' is not in the trial's PATH"},
      {"no such file", {"bin/no-such-trainer"},
       "the command 'bin/no-such-trainer' does not exist here"},
      {"a directory", {"/tmp"}, "is not an executable file"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    JobSpec job = LoadTemplate(dir, "sweep_modes.yaml");
    job.worker_pools[0].container.command = c.command;
    SweepOptions options;
    options.out_dir = dir.Join("out");
    StatusOr<SweepResult> r = RunSweep(job, options);
    ASSERT_FALSE(r.ok()) << "case " << c.name;
    EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
    EXPECT_FALSE(fs::exists(options.out_dir + "/1")) << "case " << c.name;
  }
}

// The example job of examples/vertex/ with the real trainer, when it is
// built (TRIALSHIM_WITH_TORCH=ON): two short trials through trialshim.
TEST(SweepTest, DigitsTrainExample) {
  std::string digits;
  for (std::string dir : {std::string(TRIALSHIM_BIN_DIR),
                          std::string(TRIALSHIM_SOURCE_DIR) + "/build/bin"}) {
    if (access((dir + "/digits-train").c_str(), X_OK) == 0) {
      digits = dir + "/digits-train";
      break;
    }
  }
  std::string shim = std::string(TRIALSHIM_BIN_DIR) + "/trialshim";
  if (digits.empty() || access(shim.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "digits-train is not built (TRIALSHIM_WITH_TORCH=OFF)";
  }
  std::vector<Diagnostic> diags;
  StatusOr<JobSpec> job = LoadJobSpecFile(
      std::string(TRIALSHIM_SOURCE_DIR) + "/examples/vertex/digits_job.yaml",
      &diags);
  ASSERT_OK(job);
  // Paths in the job are relative to the repository root.
  for (std::string& a : job->worker_pools[0].container.command) {
    if (a == "build/bin/digits-train") a = digits;
    if (a == "examples/digits/conf") {
      a = std::string(TRIALSHIM_SOURCE_DIR) + "/" + a;
    }
  }
  job->worker_pools[0].container.args = {"trainer.max_epochs=2",
                                         "trainer.enable_progress_bar=false"};
  TempDir dir;
  SweepOptions options;
  options.out_dir = dir.Join("out");
  options.max_trials = 2;
  options.self_exe = shim;
  StatusOr<SweepResult> r = RunSweep(*job, options);
  ASSERT_OK(r);
  ASSERT_EQ(r->trials.size(), 2u);
  for (const TrialRecord& t : r->trials) {
    EXPECT_EQ(t.state, TrialState::kSucceeded)
        << "case trial " << t.id << ": " << t.reason << "\n"
        << ReadFile(options.out_dir + "/" + std::to_string(t.id) + "/log");
    EXPECT_GT(t.metric.value_or(0), 0.1) << "case trial " << t.id;
    EXPECT_LE(t.metric.value_or(2), 1.0) << "case trial " << t.id;
  }
}

// The binary: a live table, a leaderboard, and SIGINT stopping cleanly.

}  // namespace
}  // namespace trialshim::tuning
