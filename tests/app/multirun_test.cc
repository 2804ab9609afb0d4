// Multiruns of trialshim::app::Run (app/src/multirun.cc) against real Hydra
// 1.3.2: each case of tests/data/hydra_app/multirun.json (made by
// multirun.py there) is a multirun of a Python @hydra.main app; app_task runs
// the same command line and must print and leave the same bytes: the
// launcher's lines and each job's output, multirun.yaml, and each job's
// directory with its .hydra files and log. Where Hydra fails, trialshim
// must fail too, naming what the case says, having run the same jobs.
//
// With hydra/sweeper: optuna, against hydra-optuna-sweeper 1.2.0
// (optuna_multirun.json, made by optuna_multirun.py there): a trialshim app
// runs the plugin's study with trialshim's search engine. With the
// GridSampler the jobs are the plugin's, in another order: the same set of
// job directories (each with its overrides.yaml, config.yaml, hydra.yaml
// and log, up to its number), the same lines printed (each job's block,
// up to its number and place) and the same optimization_results.yaml
// (solutions in any order). With other samplers the values differ on
// purpose: the same lines and files, each job's parameters in the
// plugin's order and in the distributions declared, and the results those
// of the best job. The Anchors* suites run both generators again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "trialshim/base/lock.h"
#include "tests/testutil/hydra_app.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// The files Hydra would write: not the sweep directory's lock, which is
// trialshim's own (base/lock.h).
std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != kLockFileName) {
      out.push_back(fs::relative(e.path(), dir).string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<Json>& Cases() {
  static const std::vector<Json> cases =
      testing::LoadHydraAppCases("multirun.json");
  return cases;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const Json& c : Cases()) names.push_back(c["name"].get<std::string>());
  return names;
}

const Json& Named(const std::vector<Json>& cases, const std::string& name) {
  return *std::find_if(cases.begin(), cases.end(),
                       [&](const Json& j) { return j["name"] == name; });
}

std::string TreeOf(const Json& c) {
  return testing::kHydraAppDir + "/trees/" + c["tree"].get<std::string>();
}

// Case `c`'s command line run by app_task in `cwd`: where Hydra failed it
// fails, saying what the case says; else it succeeds.
void RunCase(const Json& c, const std::string& cwd, testing::Finished* r) {
  *r = testing::RunTask(TreeOf(c), c["args"].get<std::vector<std::string>>(),
                        cwd);
  if (c["exit_code"].get<int>() == 0) {
    ASSERT_EQ(r->exit_code, 0) << r->err;
    return;
  }
  EXPECT_NE(r->exit_code, 0) << r->out;
  for (const Json& say : c["says"]) {
    EXPECT_NE(r->err.find(say.get<std::string>()), std::string::npos)
        << "says " << say << "\n" << r->err;
  }
}

// The start both drivers share: case `c` run (RunCase) in a directory of
// its own, each failure after it traced to the case's name. The caller
// returns when HasFatalFailure().
struct CaseRun {
  explicit CaseRun(const Json& c)
      : trace(__FILE__, __LINE__, c["name"].get<std::string>()),
        cwd(fs::canonical(tmp.path()).string()),
        tree(TreeOf(c)),
        failed(c["exit_code"].get<int>() != 0) {
    RunCase(c, cwd, &r);
  }

  ::testing::ScopedTrace trace;
  testing::TempDir tmp;
  const std::string cwd;   // tmp, as Hydra's paths name it
  const std::string tree;  // the case's config tree
  const bool failed;       // Hydra failed the case
  testing::Finished r;     // what app_task did
};

void ExpectMultirunLikeHydra(const Json& c) {
  const CaseRun run(c);
  if (::testing::Test::HasFatalFailure()) return;
  const std::string& cwd = run.cwd;
  const std::string& tree = run.tree;
  const testing::Finished& r = run.r;
  const bool failed = run.failed;
  if (!failed) {
    EXPECT_EQ(testing::Normalize(r.out, tree, cwd), c["stdout"].get<std::string>());
  }
  std::vector<std::string> written;
  for (const std::string& f : FilesUnder(cwd)) {
    written.push_back(testing::Normalize(f, tree, cwd));
  }
  std::vector<std::string> expected;
  for (const auto& [file, text] : c["files"].items()) {
    expected.push_back(file);
    std::string path = file;
    for (const std::string& w : FilesUnder(cwd)) {
      if (testing::Normalize(w, tree, cwd) == file) path = w;
    }
    EXPECT_EQ(testing::Normalize(testing::ReadFile(cwd + "/" + path), tree, cwd),
              text.get<std::string>())
        << file;
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(written, expected);
}

// Parameterized by name: a case's JSON is too long to print.
class MultirunLikeHydra : public ::testing::TestWithParam<std::string> {};

TEST_P(MultirunLikeHydra, PrintsAndWritesWhatHydraDoes) {
  ExpectMultirunLikeHydra(Named(Cases(), GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Cases, MultirunLikeHydra,
                         ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// ---- hydra-optuna-sweeper.

const std::vector<Json>& OptunaCases() {
  static const std::vector<Json> cases =
      testing::LoadHydraAppCases("optuna_multirun.json");
  return cases;
}

// A multirun's output up to the jobs' numbers and order: the lines outside
// the jobs (a job's block, from its "#N : ..." line to the next line of
// Hydra's, stands as "<job>"), each job's block, and each job's files
// (its directory's, as "file:\ntext" in one string, the number written
// as #), and the other files.
struct Canonical {
  std::vector<std::string> lines;
  std::vector<std::string> blocks;  // sorted
  std::vector<std::string> jobs;    // sorted
  std::map<std::string, std::string> files;
};

std::string WithoutNumber(std::string s, const std::string& n) {
  s = std::regex_replace(s, std::regex("(sw/)" + n + "\\b"), "$1#");
  s = std::regex_replace(s, std::regex("(\n    id: ')" + n + "'"), "$1#'");
  s = std::regex_replace(s, std::regex("(\n    num: )" + n + "\n"), "$1#\n");
  return s;
}

// The solutions of a multi-objective optimization_results.yaml, sorted.
std::string SortedSolutions(const std::string& yaml) {
  size_t at = yaml.find("solutions:\n");
  if (at == std::string::npos) return yaml;
  at += 11;
  std::vector<std::string> items;
  std::istringstream in(yaml.substr(at));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("- ", 0) == 0 || items.empty()) items.emplace_back();
    items.back() += line + "\n";
  }
  std::sort(items.begin(), items.end());
  std::string out = yaml.substr(0, at);
  for (const std::string& item : items) out += item;
  return out;
}

Canonical CanonicalOf(const std::string& stdout_text,
                      const std::map<std::string, std::string>& files,
                      bool with_logs) {
  Canonical c;
  std::istringstream in(stdout_text);
  std::string* block = nullptr;
  for (std::string line; std::getline(in, line);) {
    bool hydra = line.find("][HYDRA] ") != std::string::npos;
    if (hydra && line.find("][HYDRA] \t#") != std::string::npos) {
      c.lines.push_back("<job>");
      c.blocks.push_back(std::regex_replace(line, std::regex("#\\d+ :"), "#:") +
                         "\n");
      block = &c.blocks.back();
    } else if (hydra || block == nullptr) {
      c.lines.push_back(line);
      block = nullptr;
    } else {
      *block += line + "\n";
    }
  }
  // The Pareto front is logged in trial order.
  auto values = [](const std::string& l) {
    return l.find("][HYDRA]     Values: ") != std::string::npos;
  };
  for (auto it = c.lines.begin(); it != c.lines.end();) {
    auto end = std::find_if_not(it, c.lines.end(), values);
    std::sort(it, end);
    it = end == it ? it + 1 : end;
  }
  std::sort(c.blocks.begin(), c.blocks.end());
  std::map<std::string, std::string> jobs;
  std::smatch m;
  for (const auto& [file, text] : files) {
    if (!std::regex_match(file, m, std::regex("sw/(\\d+)/(.*)"))) {
      c.files[file] = SortedSolutions(text);
      continue;
    }
    if (!with_logs && file.size() > 4 && file.substr(file.size() - 4) == ".log")
      continue;
    jobs[m[1]] += m[2].str() + ":\n" + WithoutNumber(text, m[1]);
  }
  for (const auto& [n, text] : jobs) c.jobs.push_back(text);
  std::sort(c.jobs.begin(), c.jobs.end());
  return c;
}

// What a trialshim app's study prints where the plugin's name is random
// or its sampler is not what chose the values.
std::string AsThePluginPrints(std::string out) {
  out = std::regex_replace(
      out, std::regex("no-name-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                      "[89ab][0-9a-f]{3}-[0-9a-f]{12}"),
      "no-name-<uuid>");
  return std::regex_replace(
      out, std::regex("(\\]\\[HYDRA\\] Sampler: \\w+) \\(run as trialshim's "
                      "(grid|random|Bayesian) search\\)"),
      "$1");
}

// The value of `key` in an override list ("- key=value" lines).
std::map<std::string, std::string> Overrides(const std::string& yaml) {
  std::map<std::string, std::string> out;
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (line.rfind("- ", 0) == 0 && eq != std::string::npos) {
      out[line.substr(2, eq - 2)] = line.substr(eq + 1);
    }
  }
  return out;
}

// Other samplers: tests/data/hydra_app/trees/optuna_tpe's distributions.
void ExpectInTheDistributions(const std::map<std::string, std::string>& o) {
  const double lr = std::stod(o.at("lr")), dropout = std::stod(o.at("dropout"));
  const long units = std::stol(o.at("units")), batch = std::stol(o.at("batch"));
  EXPECT_TRUE(lr >= 1e-4 && lr <= 0.1) << o.at("lr");
  EXPECT_TRUE(units >= 8 && units <= 64 &&
              o.at("units") == std::to_string(units))
      << o.at("units");
  EXPECT_TRUE(dropout >= 0 && dropout <= 0.5 &&
              o.at("dropout").find('.') != std::string::npos)
      << o.at("dropout");
  EXPECT_TRUE(o.at("act") == "relu" || o.at("act") == "gelu") << o.at("act");
  EXPECT_TRUE(batch % 16 == 0 && batch >= 16 && batch <= 64) << o.at("batch");
}

// The parameters in order, without their values.
std::string Keys(const std::string& overrides_yaml) {
  return std::regex_replace(overrides_yaml, std::regex("=.*"), "=");
}

void ExpectOptunaLikeThePlugin(const Json& c) {
  const CaseRun run(c);
  if (::testing::Test::HasFatalFailure()) return;
  const std::string name = c["name"].get<std::string>();
  const std::string& cwd = run.cwd;
  const std::string& tree = run.tree;
  const testing::Finished& r = run.r;
  const bool failed = run.failed;
  // The plugin's errors end Hydra with 1, and so do the task's.
  EXPECT_EQ(r.exit_code, failed ? 1 : 0) << r.err;
  if (!failed) {
    EXPECT_NE(r.out.find(" (run as trialshim's "), std::string::npos) << r.out;
  }
  std::map<std::string, std::string> ours, theirs;
  for (const std::string& f : FilesUnder(cwd)) {
    ours[testing::Normalize(f, tree, cwd)] = testing::Normalize(
        testing::ReadFile(cwd + "/" + f), tree, cwd);
  }
  for (const auto& [file, text] : c["files"].items()) {
    theirs[file] = text.get<std::string>();
  }
  Canonical want = CanonicalOf(c["stdout"].get<std::string>(), theirs, !failed);
  Canonical got = CanonicalOf(
      AsThePluginPrints(testing::Normalize(r.out, tree, cwd)), ours, !failed);
  if (name.rfind("grid", 0) == 0 || failed) {
    EXPECT_EQ(got.jobs, want.jobs);
    EXPECT_EQ(got.files, want.files);
    if (!failed) {
      EXPECT_EQ(got.lines, want.lines);
      EXPECT_EQ(got.blocks, want.blocks);
    }
    return;
  }
  // Other values: each job has the plugin's parameters, in its order, in
  // the distributions; the best job is the results'.
  ASSERT_EQ(got.jobs.size(), want.jobs.size());
  const std::string keys = Keys(theirs.at("sw/0/.hydra/overrides.yaml"));
  std::string best;
  double best_lr = 1;
  for (size_t i = 0; i < got.jobs.size(); ++i) {
    const std::string dir = "sw/" + std::to_string(i) + "/";
    const std::string overrides = ours.at(dir + ".hydra/overrides.yaml");
    EXPECT_EQ(Keys(overrides), keys) << dir;
    std::map<std::string, std::string> o = Overrides(overrides);
    ExpectInTheDistributions(o);
    EXPECT_NE(ours.at(dir + ".hydra/config.yaml").find("lr: " + o["lr"] + "\n"),
              std::string::npos);
    if (std::stod(o["lr"]) < best_lr) {
      best_lr = std::stod(o["lr"]);
      best = "name: optuna\nbest_params:\n";
      for (const char* k : {"lr", "units", "dropout", "act", "batch"}) {
        best += std::string("  ") + k + ": " + o[k] + "\n";
      }
      best += "best_value: " + o["lr"] + "\n";
    }
  }
  EXPECT_EQ(ours.at("sw/optimization_results.yaml"), best);
  auto without_values = [](std::vector<std::string> lines) {
    for (std::string& l : lines) {
      l = std::regex_replace(l, std::regex("(Best (parameters|value): ).*"),
                             "$1");
    }
    return lines;
  };
  EXPECT_EQ(without_values(got.lines), without_values(want.lines));
  std::vector<std::string> files, their_files;
  for (const auto& f : ours) files.push_back(f.first);
  for (const auto& f : theirs) their_files.push_back(f.first);
  EXPECT_EQ(files, their_files);
}

class OptunaMultirunLikeThePlugin
    : public ::testing::TestWithParam<std::string> {};

TEST_P(OptunaMultirunLikeThePlugin, PrintsAndWritesWhatThePluginDoes) {
  ExpectOptunaLikeThePlugin(Named(OptunaCases(), GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OptunaMultirunLikeThePlugin, ::testing::ValuesIn([] {
      std::vector<std::string> names;
      for (const Json& c : OptunaCases()) names.push_back(c["name"]);
      return names;
    }()),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param;
    });

// What a C++ task adds to Hydra's rules: its exit code. A failed job lets
// the rest of its batch run, then the multirun ends with its code; a job
// stopped by a signal (the trainer checkpoints and exits 128+N) ends it at
// once. Also what is not here: other sweepers and launchers.
TEST(Multirun, ExitCodesAndWhatIsRefused) {
  struct Case {
    const char* name;
    std::string tree;
    std::vector<std::string> args;
    int exit_code;
    std::vector<std::string> jobs_run;  // the job directories made
    std::vector<std::string> in_err;
  };
  const std::string sweep = "hydra.sweep.dir=sw";
  const std::vector<Case> cases = {
      {"failed jobs end it after the batch", "basic",
       {"-m", sweep, "port=1", "+exit_code=0,3,4"}, 3, {"0", "1", "2"},
       {"job #1 with overrides ['port=1', '+exit_code=3'] exited with code 3",
        "job #2 with overrides ['port=1', '+exit_code=4'] exited with code 4"}},
      {"next batch not started", "basic",
       {"-m", sweep, "hydra.sweeper.max_batch_size=1", "port=1",
        "+exit_code=5,0"},
       5, {"0"}, {"job #0"}},
      {"a stopped job ends it at once", "basic",
       {"-m", sweep, "port=1", "+exit_code=0,143,0"}, 143, {"0", "1"},
       {"job #1"}},
      {"mode RUN overridden by -m", "basic",
       {"-m", sweep, "hydra.mode=RUN", "port=1,2"}, 0, {"0", "1"},
       {"warning: running with --multirun, overriding with "
        "`hydra.mode=MULTIRUN`"}},
      // The plugin's error, then what gives a trialshim task's value.
      {"optuna sweeper and a task that returns nothing", "optuna_search",
       {"-m", sweep, "hparams_search=optuna"}, 1, {"0"},
       {"job #0 with overrides ['lr=",
        "Return value must be float-castable. Got 'None'.",
        "Job::set_return_value"}},
      {"that hint followed", "optuna_search",
       {"-m", sweep, "hparams_search=optuna", "hydra.sweeper.n_trials=2",
        "+objective=${lr}"}, 0, {"0", "1"}, {}},
      {"another sweeper", "basic",
       {"-m", sweep, "hydra.sweeper._target_=x.AxSweeper", "port=1"}, 2, {},
       {"(x.AxSweeper): a trialshim app's multirun has Hydra's basic sweeper "
        "and hydra-optuna-sweeper's study"}},
      {"another launcher", "basic",
       {"-m", sweep, "hydra/launcher=joblib", "port=1"}, 2, {},
       {"hydra/launcher=joblib", "one after another"}},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    const std::string cwd = fs::canonical(tmp.path()).string();
    testing::Finished r = testing::RunTask(
        testing::kHydraAppDir + "/trees/" + c.tree, c.args, cwd);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << "\n" << r.err;
    std::vector<std::string> made;
    if (fs::is_directory(cwd + "/sw")) {
      for (const auto& e : fs::directory_iterator(cwd + "/sw")) {
        if (e.is_directory()) made.push_back(e.path().filename().string());
      }
    }
    std::sort(made.begin(), made.end());
    EXPECT_EQ(made, c.jobs_run) << c.name;
    for (const std::string& say : c.in_err) {
      EXPECT_NE(r.err.find(say), std::string::npos) << c.name << "\n" << r.err;
    }
  }
}

// A second multirun into a sweep directory that a running one holds is
// refused, exit 1 as a second `trialshim sweep` on one --out, naming the
// first; it runs no job. Once the first ends, the directory is free.
TEST(Multirun, SecondMultirunIntoARunningOnesSweepDirIsRefused) {
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  const std::string fifo = cwd + "/hold";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string basic = testing::kHydraAppDir + "/trees/basic";
  SubprocessOptions o = testing::Child::Options();
  o.cwd = cwd;
  testing::Child first({testing::kAppTask, "-cp", basic, "-m",
                        "hydra.sweep.dir=sw", "port=1", "+wait_for=" + fifo},
                       o);
  // Its job runs (so the sweep directory is locked) until we write.
  ASSERT_TRUE(first.WaitForOutput("waiting on " + fifo)) << first.out();
  struct Case {
    const char* name;
    std::string tree;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"basic sweeper", basic, {"-m", "hydra.sweep.dir=sw", "port=2,3"}},
      {"the same overrides", basic, {"-m", "hydra.sweep.dir=sw", "port=1"}},
      {"optuna sweeper", testing::kHydraAppDir + "/trees/optuna_search",
       {"-m", "hydra.sweep.dir=sw", "hparams_search=optuna",
        "+objective=${lr}"}},
  };
  for (const Case& c : cases) {
    testing::Finished second = testing::RunTask(c.tree, c.args, cwd);
    EXPECT_EQ(second.exit_code, 1) << c.name << "\n" << second.err;
    EXPECT_NE(second.err.find("error: " + cwd + "/sw is in use by pid " +
                              std::to_string(first.pid()) + " ("),
              std::string::npos)
        << c.name << "\n" << second.err;
    EXPECT_EQ(second.out.find("Launching"), std::string::npos)
        << c.name << "\n" << second.out;
  }
  std::ofstream(fifo) << "go\n";
  testing::Finished done = first.Wait();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  std::vector<std::string> made;
  for (const auto& e : fs::directory_iterator(cwd + "/sw")) {
    if (e.is_directory()) made.push_back(e.path().filename().string());
  }
  EXPECT_EQ(made, std::vector<std::string>{"0"}) << "only the first's job";
  // Released with the first: the same multirun runs now.
  testing::Finished again =
      testing::RunTask(basic, {"-m", "hydra.sweep.dir=sw", "port=2"}, cwd);
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST(MultirunData, AllCasesLoaded) {
  EXPECT_GE(Cases().size(), 26u);
  EXPECT_GE(OptunaCases().size(), 9u);
}

// Real Hydra runs every multirun again (multirun.py, optuna_multirun.py):
// it must print and write what the recordings say, and app_task what
// Hydra and the plugin do now.
TEST(AnchorsMultirunLikeHydra, RealHydraRunsTheRecordedMultiruns) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir live;
  for (const char* script : {"multirun", "optuna_multirun"}) {
    const std::string file = std::string(script) + ".json";
    testing::Finished gen = testing::RunAnchorsScript(
        "tests/data/hydra_app/" + file.substr(0, file.size() - 5) + ".py",
        {"--out", live.path()});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    EXPECT_EQ(testing::FirstDifference(testing::kHydraAppDir + "/" + file,
                                       live.Join(file)),
              "")
        << "real Hydra no longer does what " << file << " says: run "
        << "tests/data/hydra_app/" << script << ".py (its header says how)";
  }
  std::vector<Json> basic =
      testing::LoadHydraAppCases("multirun.json", live.path());
  EXPECT_EQ(basic.size(), Cases().size());
  for (const Json& c : basic) ExpectMultirunLikeHydra(c);
  std::vector<Json> optuna =
      testing::LoadHydraAppCases("optuna_multirun.json", live.path());
  EXPECT_EQ(optuna.size(), OptunaCases().size());
  for (const Json& c : optuna) ExpectOptunaLikeThePlugin(c);
}

}  // namespace
}  // namespace trialshim
