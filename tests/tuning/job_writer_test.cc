// The job writer: Hydra sweeps (lightning-hydra-template's hparams_search,
// conf-lightning's, command-line sweeps, the basic sweeper's grid, the
// Optuna samplers) as Vertex job specs. Every spec it writes reads back and
// passes `trialshim check` with no warning; what Vertex can not express is
// refused naming the key; and a trial of the spec gets what Hydra's
// multirun gave each job, config for config (the multiruns recorded by
// tests/data/optuna_sweeper/generate.py with real Hydra and
// hydra-optuna-sweeper 1.2.0).
#include "trialshim/tuning/job_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/optuna_sweeper.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/override.h"
#include "trialshim/config/render.h"
#include "trialshim/search/search.h"
#include "trialshim/translate/translate.h"
#include "trialshim/tuning/check.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::tuning {
namespace {

using Json = nlohmann::json;
using testing::TempDir;

const std::string kSource = TRIALSHIM_SOURCE_DIR;
const std::string kLightning = kSource + "/examples/digits/conf-lightning";
const std::string kTemplate =
    testing::kOptunaSweeperDir + "/trees/template/configs";
const std::string kCompose = testing::kOptunaSweeperDir + "/trees/compose";
// A trialshim app (app::Run), standing in for digits-train.
const std::string kApp = std::string(TRIALSHIM_BIN_DIR) + "/app_task";
const std::string kDump =
    std::string(TRIALSHIM_BIN_DIR) + "/trialshim_argv_dump";
const std::vector<std::string> kTemplateTrainer = {
    "python3", testing::kOptunaSweeperDir + "/trees/template/src/train.py"};

HydraSweepRequest Request(const std::string& dir, const std::string& name,
                          std::vector<std::string> overrides,
                          std::vector<std::string> command) {
  HydraSweepRequest r;
  r.config_path = dir;
  r.config_name = name;
  r.overrides = std::move(overrides);
  r.command = std::move(command);
  r.image_uri = "us-docker.pkg.dev/p/r/trainer:1";
  r.output_dir = "gs://bucket/sweep";
  return r;
}

// A parameter as "id TYPE values [SCALE]", for tables.
std::string Describe(const ParameterSpec& p) {
  std::string s = p.id + " " + ParameterTypeName(p.type);
  switch (p.type) {
    case ParameterType::kDouble:
    case ParameterType::kInteger:
      s += " [" + FormatNumber(p.min_value) + ", " + FormatNumber(p.max_value) +
           "]";
      break;
    case ParameterType::kDiscrete:
      for (double v : p.discrete_values) s += " " + FormatNumber(v);
      break;
    case ParameterType::kCategorical:
      for (const std::string& v : p.categorical_values) s += " " + v;
      break;
  }
  if (p.scale != ScaleType::kUnspecified) {
    s += std::string(" ") + ScaleTypeName(p.scale);
  }
  return s;
}

struct Written {
  std::vector<std::string> params;
  std::string algorithm;
  int64_t trials = 0, parallel = 0;
  std::vector<std::string> metrics;  // "id GOAL"
  std::vector<std::string> command, args;
};

Written Summary(const JobSpec& spec) {
  Written w;
  for (const ParameterSpec& p : spec.parameters)
    w.params.push_back(Describe(p));
  w.algorithm = AlgorithmName(spec.algorithm);
  w.trials = spec.MaxTrials();
  w.parallel = spec.ParallelTrials();
  for (const MetricSpec& m : spec.metrics) {
    w.metrics.push_back(m.id + " " + GoalName(m.goal));
  }
  w.command = spec.worker_pools.at(0).container.command;
  w.args = spec.worker_pools.at(0).container.args;
  return w;
}

struct Case {
  std::string name;
  HydraSweepRequest request;
  Written want;
  std::vector<std::string> warnings;  // substrings, in order
};

std::vector<std::string> Shim(const std::string& dir, const std::string& name,
                              std::vector<std::string> command,
                              bool add_unknown = false) {
  std::vector<std::string> out = {"trialshim", "--config-path", dir,
                                  "--config-name", name};
  if (add_unknown) out.push_back("--add-unknown");
  out.push_back("--");
  out.insert(out.end(), command.begin(), command.end());
  return out;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  // conf-lightning's hparams_search: the template's shape for digits-train,
  // a trialshim app, which gets the config path too.
  cases.push_back(
      {"digits_optuna",
       Request(kLightning, "config", {"hparams_search=digits_optuna"}, {kApp}),
       {{"optimizer.lr DOUBLE [1e-04, 0.1] UNIT_LINEAR_SCALE",
         "data.batch_size DISCRETE 32 64 128",
         "model.dropout DOUBLE [0, 0.5] UNIT_LINEAR_SCALE"},
        "ALGORITHM_UNSPECIFIED",
        20,
        1,
        {"val_acc MAXIMIZE"},
        Shim(kLightning, "config",
             {kApp, "--config-path", kLightning, "--config-name", "config"}),
        {"hparams_search=digits_optuna", "hydra.mode=RUN"}},
       {}});
  // lightning-hydra-template's own hparams_search/mnist_optuna.yaml.
  cases.push_back(
      {"template_mnist_optuna",
       Request(kTemplate, "train",
               {"hparams_search=mnist_optuna", "experiment=example"},
               kTemplateTrainer),
       {{"model.optimizer.lr DOUBLE [1e-04, 0.1] UNIT_LINEAR_SCALE",
         "data.batch_size DISCRETE 32 64 128 256",
         "model.net.lin1_size DISCRETE 64 128 256",
         "model.net.lin2_size DISCRETE 64 128 256",
         "model.net.lin3_size DISCRETE 32 64 128 256"},
        "ALGORITHM_UNSPECIFIED",
        20,
        1,
        {"val/acc_best MAXIMIZE"},
        Shim(kTemplate, "train", kTemplateTrainer),
        {"hparams_search=mnist_optuna", "experiment=example",
         "hydra.mode=RUN"}},
       {}});
  // A sweep on the command line: range's stop included (Optuna's high),
  // tag(log, ...) a log scale, a fixed group choice and value for every
  // trial; Hydra's own overrides but the sweeper's reach the trials.
  cases.push_back(
      {"command_line_sweep",
       Request(kLightning, "config",
               {"hydra/sweeper=optuna", "hydra/sweeper/sampler=random",
                "hydra.sweeper.n_trials=5", "hydra.sweeper.n_jobs=3",
                "hydra.sweeper.direction=maximize", "hydra.job.chdir=true",
                "optimizer.lr=tag(log, interval(1e-4, 1e-1))",
                "data.batch_size=range(16, 64, 16)",
                "model.dropout=choice(0.0, 0.25)", "scheduler=cosine",
                "trainer.max_epochs=3", "trainer.min_epochs=range(1,4)",
                "seed=tag(log, int(interval(1, 1000)))"},
               {kApp}),
       {{"optimizer.lr DOUBLE [1e-04, 0.1] UNIT_LOG_SCALE",
         "data.batch_size DISCRETE 16 32 48 64",
         "model.dropout DISCRETE 0 0.25",
         "trainer.min_epochs INTEGER [1, 4] UNIT_LINEAR_SCALE",
         "seed INTEGER [1, 1000] UNIT_LOG_SCALE"},
        "RANDOM_SEARCH",
        5,
        3,
        {"val_acc MAXIMIZE"},
        Shim(kLightning, "config",
             {kApp, "--config-path", kLightning, "--config-name", "config"}),
        {"hydra.job.chdir=true", "scheduler=cosine", "trainer.max_epochs=3"}},
       {}});
  // Hydra's basic sweeper: the cartesian product, a grid.
  HydraSweepRequest basic =
      Request(kLightning, "config",
              {"data.batch_size=32,64", "optimizer.lr=0.01,0.1",
               "logger=csv,tensorboard", "trainer.max_epochs=2"},
              {kApp});
  basic.directions = {"maximize"};
  cases.push_back(
      {"basic_grid",
       basic,
       {{"data.batch_size DISCRETE 32 64", "optimizer.lr DISCRETE 0.01 0.1",
         "logger CATEGORICAL csv tensorboard"},
        "GRID_SEARCH",
        8,
        1,
        {"val_acc MAXIMIZE"},
        Shim(kLightning, "config",
             {kApp, "--config-path", kLightning, "--config-name", "config"}),
        {"trainer.max_epochs=2"}},
       {}});
  // Optuna's GridSampler: its values leave out a range's high; the trials
  // are at most the grid.
  cases.push_back(
      {"optuna_grid",
       Request(kLightning, "config",
               {"hydra/sweeper=optuna", "hydra/sweeper/sampler=grid",
                "hydra.sweeper.direction=maximize",
                "data.batch_size=range(32, 128, 32)", "optimizer=choice(adam)",
                "model.dropout=range(0, 0.5, 0.25)"},
               {kApp}),
       {{"data.batch_size DISCRETE 32 64 96", "optimizer CATEGORICAL adam",
         "model.dropout DISCRETE 0 0.25"},
        "GRID_SEARCH",
        6,
        2,
        {"val_acc MAXIMIZE"},
        Shim(kLightning, "config",
             {kApp, "--config-path", kLightning, "--config-name", "config"}),
        {}},
       {}});
  // The sweeper's options and params in a file, a group swept, a fixed
  // param, two objectives named on the command line, a key added.
  HydraSweepRequest file = Request(kCompose, "params", {"name=x"}, {kDump});
  file.metrics = {"loss", "acc"};
  cases.push_back({"params_in_a_file",
                   file,
                   {{"lr DOUBLE [1e-04, 0.1] UNIT_LOG_SCALE",
                     "db CATEGORICAL mysql postgres"},
                    "RANDOM_SEARCH",
                    5,
                    1,
                    {"loss MINIMIZE", "acc MAXIMIZE"},
                    Shim(kCompose, "params",
                         {kDump, "--config-path", kCompose, "--config-name",
                          "params"}),
                    {"batch_size=32", "name=x"}},
                   {}});
  // A key the sweep adds: trialshim's --add-unknown adds it on the trial,
  // which check (and so the writer) points out, as it would a typo.
  HydraSweepRequest added = Request(
      kCompose, "config",
      {"+extra=choice(1, 2)", "hydra.sweeper.direction=maximize"}, {kDump});
  added.metrics = {"acc"};
  cases.push_back({"added_key",
                   added,
                   {{"extra CATEGORICAL 1 2"},
                    "ALGORITHM_UNSPECIFIED",
                    20,
                    2,
                    {"acc MAXIMIZE"},
                    Shim(kCompose, "config",
                         {kDump, "--config-path", kCompose, "--config-name",
                          "config"},
                         /*add_unknown=*/true),
                    {}},
                   {"parameter 'extra' is not in the config; trialshim adds it "
                    "as +extra"}});
  // A metric and direction from the command line; strings and bools as
  // categorical values Hydra reads back as they were.
  HydraSweepRequest named = Request(
      kLightning, "config",
      {"hydra/sweeper=optuna", "trainer.deterministic=choice(true, false)",
       "task_name=choice(a, 'b c', 'd,e')", "optimizer.lr=interval(0.001, 0.1)",
       "hypertune.monitor=val_loss"},
      {kApp});
  named.metrics = {"val_loss"};
  named.directions = {"minimize"};
  cases.push_back(
      {"named_metric",
       named,
       {{"trainer.deterministic CATEGORICAL true false",
         "task_name CATEGORICAL a b c d,e",
         "optimizer.lr DOUBLE [0.001, 0.1] UNIT_LINEAR_SCALE"},
        "ALGORITHM_UNSPECIFIED",
        20,
        2,
        {"val_loss MINIMIZE"},
        Shim(kLightning, "config",
             {kApp, "--config-path", kLightning, "--config-name", "config"}),
        {"hypertune.monitor=val_loss"}},
       {}});
  // A sampler Vertex does not have, with a Python-object option: a note and
  // a warning naming the key.
  cases.push_back(
      {"nsgaii",
       Request(kLightning, "config",
               {"hydra/sweeper=optuna", "hydra/sweeper/sampler=nsgaii",
                "hydra.sweeper.sampler.constraints_func=my.constraints",
                "hydra.sweeper.direction=maximize",
                "optimizer.lr=interval(0.001, 0.1)"},
               {kApp}),
       {{"optimizer.lr DOUBLE [0.001, 0.1] UNIT_LINEAR_SCALE"},
        "ALGORITHM_UNSPECIFIED",
        20,
        2,
        {"val_acc MAXIMIZE"},
        Shim(kLightning, "config",
             {kApp, "--config-path", kLightning, "--config-name", "config"}),
        {}},
       {"hydra.sweeper.sampler.constraints_func is a Python object"}});
  return cases;
}

TEST(JobWriterTest, WritesTheSweepAsAJob) {
  for (const Case& c : Cases()) {
    StatusOr<HydraSweepJob> job = HydraSweepToJob(c.request);
    ASSERT_OK(job.status()) << c.name;
    Written got = Summary(job->spec);
    EXPECT_EQ(got.params, c.want.params) << c.name;
    EXPECT_EQ(got.algorithm, c.want.algorithm) << c.name;
    EXPECT_EQ(got.trials, c.want.trials) << c.name;
    EXPECT_EQ(got.parallel, c.want.parallel) << c.name;
    EXPECT_EQ(got.metrics, c.want.metrics) << c.name;
    EXPECT_EQ(got.command, c.want.command) << c.name;
    EXPECT_EQ(got.args, c.want.args) << c.name;
    ASSERT_EQ(job->warnings.size(), c.warnings.size())
        << c.name << ": " << (job->warnings.empty() ? "" : job->warnings[0]);
    for (size_t i = 0; i < c.warnings.size(); ++i) {
      EXPECT_NE(job->warnings[i].find(c.warnings[i]), std::string::npos)
          << c.name << ": " << job->warnings[i];
    }
  }
}

// The YAML reads back as the spec it was written from, and `trialshim
// check` finds nothing to warn about, over every case.
TEST(JobWriterTest, CheckAcceptsEverySpecItWrites) {
  TempDir dir;
  for (const Case& c : Cases()) {
    StatusOr<HydraSweepJob> job = HydraSweepToJob(c.request);
    ASSERT_OK(job.status()) << c.name;
    std::string file =
        dir.Write(c.name + ".yaml", JobSpecYaml(job->spec, job->notes));
    std::vector<Diagnostic> parse;
    StatusOr<JobSpec> back = LoadJobSpecFile(file, &parse);
    ASSERT_OK(back.status()) << c.name;
    EXPECT_TRUE(parse.empty()) << c.name << ": " << parse[0].ToString();
    Written a = Summary(job->spec), b = Summary(*back);
    EXPECT_EQ(a.params, b.params) << c.name;
    EXPECT_EQ(a.command, b.command) << c.name;
    EXPECT_EQ(a.args, b.args) << c.name;
    EXPECT_EQ(a.metrics, b.metrics) << c.name;
    EXPECT_EQ(back->worker_pools[0].container.image_uri, c.request.image_uri);
    EXPECT_EQ(back->worker_pools[0].machine_type, "n1-standard-4");
    EXPECT_EQ(back->base_output_directory, c.request.output_dir);
    // No error, and no warning the writer did not already give.
    StatusOr<std::vector<Diagnostic>> checked = CheckJobFile(file, {});
    ASSERT_OK(checked.status()) << c.name;
    for (const Diagnostic& d : *checked) {
      if (d.severity == Diagnostic::Severity::kNote) continue;
      EXPECT_EQ(d.severity, Diagnostic::Severity::kWarning)
          << c.name << ": " << d.ToString();
      EXPECT_NE(
          std::find(job->warnings.begin(), job->warnings.end(), d.message),
          job->warnings.end())
          << c.name << ": " << d.ToString();
    }
  }
}

TEST(JobWriterTest, RefusesWhatVertexCanNotExpress) {
  struct Bad {
    std::string name;
    HydraSweepRequest request;
    std::vector<std::string> says;
  };
  auto optuna = [](std::vector<std::string> overrides) {
    overrides.insert(overrides.begin(), "hydra/sweeper=optuna");
    return Request(kLightning, "config", overrides, {kApp});
  };
  HydraSweepRequest two = optuna({"hydra.sweeper.direction=[minimize,maximize]",
                                  "optimizer.lr=interval(0.1, 1)"});
  HydraSweepRequest typo = optuna({"optimizer.lr=interval(0.1, 1)"});
  typo.directions = {"maximise"};
  HydraSweepRequest no_metric = Request(
      kCompose, "config",
      {"lr=interval(0.1, 1)", "hydra.sweeper.direction=minimize"}, {kDump});
  std::vector<Bad> bad = {
      {"a sweep over list values",
       optuna({"model.hidden=choice([64],[128])"}),
       {"'model.hidden'", "list"}},
      {"a sweep over dict values",
       optuna({"+extra=choice({a: 1},{b: 2})"}),
       {"'extra'", "dict"}},
      {"a sweep of a deletion",
       optuna({"~trainer.min_epochs=choice(1,2)"}),
       {"'~trainer.min_epochs'", "deletion"}},
      {"a group with a package",
       optuna({"logger@x=choice(csv,tensorboard)"}),
       {"'logger@x'", "package"}},
      {"Hydra's own config",
       optuna({"hydra.job.name=a,b"}),
       {"Sweeping over Hydra's configuration"}},
      {"a glob for Optuna",
       optuna({"logger=glob(*)"}),
       {"logger=glob(*)", "glob()"}},
      {"an interval for the basic sweeper",
       Request(kLightning, "config", {"optimizer.lr=interval(0.1, 1)"}, {kApp}),
       {"'optimizer.lr=interval(0.1, 1)'", "INTERVAL_SWEEP", "optuna"}},
      {"Python code for the search space",
       optuna({"hydra.sweeper.custom_search_space=my.space",
               "optimizer.lr=interval(0.1, 1)"}),
       {"hydra.sweeper.custom_search_space", "Python"}},
      {"the deprecated search_space",
       optuna({"hydra.sweeper.search_space={lr: {type: float, low: 0, high: "
               "1}}"}),
       {"hydra.sweeper.search_space", "hydra.sweeper.params"}},
      {"two objectives, one metric",
       two,
       {"2 objectives", "1 metric", "--metric"}},
      {"a misspelt direction", typo, {"maximise", "did you mean 'maximize'"}},
      {"no metric", no_metric, {"no metric", "--metric NAME"}},
      {"too many values",
       optuna({"data.batch_size=range(0, 5000, 2)"}),
       {"'data.batch_size'", "at most 1000"}},
      {"nothing to tune",
       optuna({"trainer.max_epochs=3"}),
       {"nothing to tune"}},
      {"a sweeper trialshim does not read",
       Request(kLightning, "config",
               {"hydra/sweeper=nevergrad", "optimizer.lr=0.1,0.2"}, {kApp}),
       {"hydra/sweeper=nevergrad", "optuna"}},
      {"check's own errors: a group as a number",
       optuna({"logger=range(1, 3)"}),
       {"'logger'", "CATEGORICAL"}},
  };
  for (const Bad& b : bad) {
    StatusOr<HydraSweepJob> job = HydraSweepToJob(b.request);
    ASSERT_FALSE(job.ok()) << b.name;
    EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument) << b.name;
    for (const std::string& s : b.says) {
      EXPECT_THAT(job, StatusIs(_, HasSubstr(s))) << b.name;
    }
  }
}

// Floats for a key the config holds as an int: Hydra passes them to an
// untyped key (hydra-optuna-sweeper's own example sweeps
// range(-5.5, 5.5, step=0.5) over `x: 1`), so the job is written, with a
// warning before any paid trial that names the spelling for ints.
TEST(JobWriterTest, FloatsForAnIntKeyAreAWarning) {
  auto optuna = [](std::vector<std::string> overrides) {
    overrides.insert(overrides.begin(), {"hydra/sweeper=optuna",
                                         "hydra.sweeper.direction=maximize"});
    return Request(kLightning, "config", overrides, {kApp});
  };
  const struct {
    const char* name;
    HydraSweepRequest request;
    std::vector<std::string> says;
  } cases[] = {
      {"interval", optuna({"data.batch_size=interval(16, 128)"}),
       {"data.batch_size", "an int", "int(interval(16, 128))"}},
      {"a float range", optuna({"data.batch_size=range(16, 20, step=0.5)"}),
       {"data.batch_size", "an int in the config", "value 16.5, a float"}},
  };
  for (const auto& c : cases) {
    StatusOr<HydraSweepJob> job = HydraSweepToJob(c.request);
    ASSERT_OK(job.status()) << c.name;
    std::string warnings;
    for (const std::string& w : job->warnings) warnings += w + "\n";
    for (const std::string& says : c.says) {
      EXPECT_NE(warnings.find(says), std::string::npos)
          << c.name << ": " << says << "\n" << warnings;
    }
  }
}

// Each refusal's advice, followed, writes a job.
TEST(JobWriterTest, TheAdviceWorks) {
  auto optuna = [](std::vector<std::string> overrides) {
    overrides.insert(overrides.begin(), {"hydra/sweeper=optuna",
                                         "hydra.sweeper.direction=maximize"});
    return Request(kLightning, "config", overrides, {kApp});
  };
  HydraSweepRequest metric = Request(
      kCompose, "config",
      {"lr=interval(0.1, 1)", "hydra.sweeper.direction=minimize"}, {kDump});
  metric.metrics = {"loss"};
  HydraSweepRequest two = Request(
      kCompose, "config",
      {"hydra.sweeper.direction=[minimize,maximize]", "lr=interval(0.1, 1)"},
      {kDump});
  two.metrics = {"loss", "acc"};
  HydraSweepRequest basic =
      Request(kLightning, "config", {"data.batch_size=32,64"}, {kApp});
  basic.directions = {"maximize"};
  const std::vector<std::pair<std::string, HydraSweepRequest>> followed = {
      {"--metric NAME", metric},
      {"one metric per objective", two},
      {"int(interval(16, 128))",
       optuna({"data.batch_size=int(interval(16, 128))"})},
      {"a larger step", optuna({"data.batch_size=range(0, 5000, 10)"})},
      {"choice(...) for a glob", optuna({"logger=choice(csv, tensorboard)"})},
      {"hydra/sweeper=optuna for an interval",
       optuna({"optimizer.lr=interval(0.1, 1)"})},
      {"--direction for the basic sweeper", basic},
  };
  for (const auto& [advice, request] : followed) {
    StatusOr<HydraSweepJob> job = HydraSweepToJob(request);
    ASSERT_OK(job.status()) << advice;
    EXPECT_TRUE(job->warnings.empty()) << advice << ": " << job->warnings[0];
  }
}

TEST(JobWriterTest, NotesWhatVertexDoesDifferently) {
  StatusOr<HydraSweepJob> job =
      HydraSweepToJob(Request(kLightning, "config",
                              {"hparams_search=digits_optuna",
                               "hydra.sweeper.sampler.n_startup_trials=5",
                               "hydra.sweeper.study_name=s"},
                              {kApp}));
  ASSERT_OK(job.status());
  std::string notes;
  for (const std::string& n : job->notes) notes += n + "\n";
  for (const char* says :
       {"Vertex has no TPE", "seed=1234", "n_startup_trials=5",
        "hydra.sweeper.study_name=s", "a failed trial stops"}) {
    EXPECT_NE(notes.find(says), std::string::npos) << says << "\n" << notes;
  }
  EXPECT_EQ(notes.find("n_ei_candidates"), std::string::npos)
      << "a sampler default is no note\n"
      << notes;
  EXPECT_EQ(job->seed, 1234u);
  EXPECT_EQ(job->spec.display_name, "s");
  std::string yaml = JobSpecYaml(job->spec, job->notes);
  EXPECT_EQ(yaml.rfind("# Vertex has no TPE", 0), std::string::npos);
  EXPECT_NE(yaml.find("\n# a failed trial stops"), std::string::npos) << yaml;
}

// ---- A trial gets what Hydra's multirun gave each job.

// The Vertex argument for the value Hydra gave a job (`text`, after
// "key="), as Vertex writes it for the spec's parameter.
std::string VertexArg(const ParameterSpec& p, const std::string& text) {
  StatusOr<config::Node> v = config::ParseOverrideValue(text);
  ParameterValue value{p.id, p.type, 0, ""};
  if (p.type == ParameterType::kCategorical) {
    value.text = v.ok() && !v->is_string() ? config::RenderValue(*v)
                                           : (v.ok() ? v->AsString() : text);
    EXPECT_NE(std::find(p.categorical_values.begin(),
                        p.categorical_values.end(), value.text),
              p.categorical_values.end())
        << p.id << ": " << value.text << " is not one of the spec's values";
  } else {
    value.number = v->AsDouble();
    if (p.type == ParameterType::kDiscrete) {
      EXPECT_NE(std::find(p.discrete_values.begin(), p.discrete_values.end(),
                          value.number),
                p.discrete_values.end())
          << p.id << ": " << text << " is not one of the spec's values";
    } else {
      EXPECT_GE(value.number, p.min_value) << p.id;
      EXPECT_LE(value.number, p.max_value) << p.id;
    }
  }
  return value.Arg();
}

// The task config a trial of `job` composes for Vertex's `vertex` arguments:
// trialshim translates them against the config (as in the container
// command), after the container's args.
StatusOr<config::Node> TrialConfig(const JobSpec& job,
                                   const HydraSweepRequest& r,
                                   const std::vector<std::string>& vertex) {
  config::ComposeRequest request;
  request.config_path = r.config_path;
  request.config_name = r.config_name;
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult base,
                             config::Compose(request));
  translate::TranslateOptions options;
  options.config = &base;
  options.repository = &base.repository;
  const std::vector<std::string>& command =
      job.worker_pools[0].container.command;
  options.add_unknown = std::find(command.begin(), command.end(),
                                  "--add-unknown") != command.end();
  options.recompose = [request](const std::vector<std::string>& groups) {
    config::ComposeRequest with = request;
    with.overrides = groups;
    return config::Compose(with);
  };
  std::vector<std::string> args = job.worker_pools[0].container.args;
  args.insert(args.end(), vertex.begin(), vertex.end());
  TRIALSHIM_ASSIGN_OR_RETURN(request.overrides,
                             translate::TranslateToArgv(args, options));
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult trial,
                             config::Compose(request));
  return trial.config;
}

TEST(JobWriterTest, TrialsGetWhatHydrasJobsGot) {
  std::vector<Json> runs = testing::OptunaSweeperCases("trials");
  ASSERT_GE(runs.size(), 4u);
  int jobs = 0;
  for (const Json& run : runs) {
    const std::string name = run["name"];
    HydraSweepRequest r =
        Request(kSource + "/" + run["config_dir"].get<std::string>(),
                run["config_name"], run["args"], {kApp});
    r.directions = {"maximize"};  // the basic sweeper has none
    StatusOr<HydraSweepJob> job = HydraSweepToJob(r);
    ASSERT_OK(job.status()) << name;
    for (const Json& hydra_job : run["jobs"]) {
      std::vector<std::string> vertex;
      for (const Json& o : hydra_job["overrides"]) {
        std::string text = o;
        size_t eq = text.find('=');
        for (const ParameterSpec& p : job->spec.parameters) {
          if (text.substr(0, eq) == p.id) {
            vertex.push_back(VertexArg(p, text.substr(eq + 1)));
          }
        }
      }
      ASSERT_EQ(vertex.size(), job->spec.parameters.size())
          << name << ": every parameter has a value in "
          << hydra_job["overrides"];
      StatusOr<config::Node> config = TrialConfig(job->spec, r, vertex);
      ASSERT_OK(config.status()) << name;
      // dump(): 64 and 64.0 differ there.
      EXPECT_EQ(testing::ToJsonValue(*config).dump(),
                hydra_job["config"].dump())
          << name << " with " << hydra_job["overrides"];
      ++jobs;
    }
  }
  EXPECT_GE(jobs, 20);
}

}  // namespace
}  // namespace trialshim::tuning
