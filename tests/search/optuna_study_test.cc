// hydra-optuna-sweeper's study on trialshim's engine: the sweep read from a
// composed config, the trials' overrides, what a return value may be, and
// the results as the plugin writes them. (tests/app/multirun_test.cc
// compares whole multiruns with the real plugin.)
#include "trialshim/search/optuna_study.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "trialshim/base/number_format.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::tuning {
namespace {

using config::Node;

const std::string kTrees = std::string(TRIALSHIM_TEST_DATA_DIR) + "/hydra_app/trees/";

// The sweep of a tree's multirun, its parameters from hydra.sweeper.params
// and `overrides` (the sweep overrides too, as a multirun gives them).
StatusOr<OptunaSweep> Read(const std::string& tree,
                           const std::vector<std::string>& overrides) {
  config::ComposeRequest r;
  r.config_path = kTrees + tree;
  r.config_name = "config";
  r.mode = config::ComposeMode::kMultirun;
  r.overrides = overrides;
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult master, config::Compose(r));
  TRIALSHIM_ASSIGN_OR_RETURN(OptunaSweeperConfig settings,
                             ReadOptunaSweeperConfig(master, "a trialshim app"));
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> sweep,
                             config::SweeperParamsOverrides(settings.params));
  for (const std::string& o : overrides) {
    if (o.rfind("hydra", 0) != 0) sweep.push_back(o);
  }
  return ReadOptunaSweep(std::move(settings), sweep);
}

StatusOr<OptunaStudy> Study(const std::string& tree,
                            const std::vector<std::string>& overrides) {
  TRIALSHIM_ASSIGN_OR_RETURN(OptunaSweep sweep, Read(tree, overrides));
  return OptunaStudy::Create(std::move(sweep));
}

TEST(OptunaStudyTest, ReadsTheSweeperAsThePluginDoes) {
  StatusOr<OptunaSweep> s = Read("optuna_tpe", {"hydra.sweeper.n_jobs=3"});
  ASSERT_OK(s);
  EXPECT_EQ(s->settings.n_trials, 5);
  EXPECT_EQ(s->settings.n_jobs, 3);
  EXPECT_EQ(s->settings.directions, std::vector<std::string>{"minimize"});
  EXPECT_EQ(s->sampler, "TPESampler");
  EXPECT_EQ(s->algorithm, Algorithm::kUnspecified);
  EXPECT_EQ(s->seed, 1234u);
  EXPECT_FALSE(s->settings.study_name.has_value());
  EXPECT_TRUE(s->settings.storage.is_null());
  ASSERT_EQ(s->space.params.size(), 5u);
  EXPECT_EQ(s->space.params[0].name, "lr");

  struct Case {
    std::string name;
    std::vector<std::string> overrides;
    std::string sampler;
    Algorithm algorithm;
  };
  const std::vector<Case> samplers = {
      {"random", {"hydra/sweeper/sampler=random"}, "RandomSampler",
       Algorithm::kRandomSearch},
      {"qmc is random", {"hydra/sweeper/sampler=qmc"}, "QMCSampler",
       Algorithm::kRandomSearch},
      {"nsgaii is Bayesian", {"hydra/sweeper/sampler=nsgaii"},
       "NSGAIISampler", Algorithm::kUnspecified},
  };
  for (const Case& c : samplers) {
    StatusOr<OptunaSweep> r = Read("optuna_tpe", c.overrides);
    ASSERT_OK(r) << "case " << c.name;
    EXPECT_EQ(r->sampler, c.sampler) << "case " << c.name;
    EXPECT_EQ(r->algorithm, c.algorithm) << "case " << c.name;
  }
  StatusOr<OptunaSweep> grid = Read("optuna_grid", {});
  ASSERT_OK(grid);
  EXPECT_EQ(grid->sampler, "GridSampler");
  EXPECT_EQ(grid->algorithm, Algorithm::kGridSearch);
}

TEST(OptunaStudyTest, RefusesWhatThePluginRefusesNamingTheKey) {
  struct Case {
    std::string name;
    std::vector<std::string> overrides;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"direction misspelt", {"hydra.sweeper.direction=minimise"},
       "hydra.sweeper.direction: 'minimise' is not a direction: expected "
       "minimize or maximize (did you mean 'minimize'?)"},
      {"a direction in a list", {"hydra.sweeper.direction=[minimize,up]"},
       "'up' is not a direction"},
      {"n_jobs 0 (the plugin loops for ever)", {"hydra.sweeper.n_jobs=0"},
       "hydra.sweeper.n_jobs must be an int >= 1, got 0"},
      {"n_trials 0", {"hydra.sweeper.n_trials=0"},
       "hydra.sweeper.n_trials must be an int >= 1, got 0"},
      {"Python code", {"hydra.sweeper.custom_search_space=m.extend"},
       "hydra.sweeper.custom_search_space: the search space is extended by "
       "Python code"},
      {"a glob", {"+g=glob(*)"}, "glob"},
  };
  for (const Case& c : cases) {
    StatusOr<OptunaSweep> r = Read("optuna_tpe", c.overrides);
    ASSERT_FALSE(r.ok()) << "case " << c.name;
    EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
  // The GridSampler can not enumerate an interval.
  StatusOr<OptunaStudy> grid = Study("optuna_grid", {"+z=interval(0,1)"});
  ASSERT_FALSE(grid.ok());
  EXPECT_THAT(grid, StatusIs(_, HasSubstr("+z: ValueError: GridSampler only "
                                          "supports discrete distributions. "
                                          "(list its values: choice(...) or "
                                          "range(...))")));
}

// The plugin's grid (a range without its stop), every point once, then the
// fixed overrides; n_trials lowered to the grid.
TEST(OptunaStudyTest, GridAsksEveryPointOfThePluginsGrid) {
  StatusOr<OptunaStudy> s =
      Study("optuna_grid", {"y=choice(5,7)", "db=mysql,pg", "name=b"});
  ASSERT_OK(s);
  EXPECT_EQ(s->n_trials(), 12);
  EXPECT_EQ(s->StartLines()[0],
            "Updating num of trials to 12 due to using GridSampler.");
  StatusOr<std::vector<std::vector<std::string>>> jobs = s->Ask(12);
  ASSERT_OK(jobs);
  std::set<std::vector<std::string>> seen(jobs->begin(), jobs->end());
  EXPECT_EQ(seen.size(), 12u);
  for (const char* x : {"x=1", "x=2", "x=3"}) {
    for (const char* y : {"y=5", "y=7"}) {
      for (const char* db : {"db=mysql", "db=pg"}) {
        EXPECT_EQ(seen.count({x, y, db, "name=b"}), 1u) << x << " " << y << " " << db;
      }
    }
  }
}

// Each value as Python's str() writes the value Optuna picked, for every
// kind of distribution, within it; the same seed, the same trials.
TEST(OptunaStudyTest, ValuesLieInTheirDistributionsWrittenAsPythonWrites) {
  for (const char* sampler : {"tpe", "random"}) {
    StatusOr<OptunaStudy> s = Study(
        "optuna_tpe", {std::string("hydra/sweeper/sampler=") + sampler,
                       "+flag=choice(true)", "+f=range(0.5,2,0.5)",
                       "+big=int(interval(0,1000000000000))"});
    ASSERT_OK(s) << sampler;
    for (int64_t trial = 0; trial < 8; ++trial) {
      StatusOr<std::vector<std::vector<std::string>>> jobs = s->Ask(1);
      ASSERT_OK(jobs);
      std::map<std::string, std::string> v;
      for (const std::string& o : (*jobs)[0]) {
        v[o.substr(0, o.find('='))] = o.substr(o.find('=') + 1);
      }
      const std::string where = std::string(sampler) + " trial " +
                                std::to_string(trial) + ": " +
                                v["lr"] + " " + v["units"] + " " + v["+f"];
      double lr = std::stod(v["lr"]);
      EXPECT_TRUE(lr >= 1e-4 && lr <= 0.1) << where;
      EXPECT_EQ(FormatPythonFloat(lr), v["lr"]) << where;
      int64_t units = std::stoll(v["units"]);
      EXPECT_TRUE(units >= 8 && units <= 64) << where;
      EXPECT_EQ(std::to_string(units), v["units"]) << where;
      EXPECT_TRUE(v["act"] == "relu" || v["act"] == "gelu") << where;
      EXPECT_TRUE(v["batch"] == "16" || v["batch"] == "32" ||
                  v["batch"] == "48" || v["batch"] == "64")
          << where;
      EXPECT_EQ(v["+flag"], "True") << where;  // Python's str(True)
      EXPECT_TRUE(v["+f"] == "0.5" || v["+f"] == "1.0" || v["+f"] == "1.5" ||
                  v["+f"] == "2.0")
          << where;
      // 1e12 values, none listed.
      const int64_t big = std::stoll(v["+big"]);
      EXPECT_TRUE(big >= 0 && big <= 1000000000000) << where;
      EXPECT_OK(s->Tell(trial, Node::Double(lr)));
    }
  }
  StatusOr<OptunaStudy> a = Study("optuna_tpe", {});
  StatusOr<OptunaStudy> b = Study("optuna_tpe", {});
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(*a->Ask(2), *b->Ask(2));
}

TEST(OptunaStudyTest, ReturnValuesAsOptunaReadsThem) {
  struct Case {
    std::string name;
    std::string direction;
    Node value;
    std::string error;  // "" when told
  };
  const Node list = Node::MakeList({Node::Int(1), Node::String("2.5")});
  const std::vector<Case> cases = {
      {"an int", "minimize", Node::Int(3), ""},
      {"text float() reads", "minimize", Node::String(" 1_0.5 "), ""},
      {"a bool", "minimize", Node::Bool(true), ""},
      {"inf", "minimize", Node::Double(HUGE_VAL), ""},
      {"None", "minimize", Node::Null(),
       "Return value must be float-castable. Got 'None'."},
      {"text", "minimize", Node::String("abc"),
       "Return value must be float-castable. Got 'abc'."},
      {"a list for one direction", "minimize", list,
       "Return value must be float-castable. Got '[1, '2.5']'."},
      {"nan", "minimize", Node::Double(std::nan("")),
       "Trial 0 failed, because the objective function returned nan."},
      {"a list for two", "[minimize,maximize]", list, ""},
      {"text is iterated", "[minimize,maximize]", Node::String("12"), ""},
      {"a number for two", "[minimize,maximize]", Node::Int(1),
       "Return value must be a list or tuple of float-castable values. Got "
       "'1'."},
      {"three for two", "[minimize,maximize]",
       Node::MakeList({Node::Int(1), Node::Int(2), Node::Int(3)}),
       "The number of the values and the number of the objectives are "
       "mismatched. Expect 2, but actually 3."},
  };
  for (const Case& c : cases) {
    StatusOr<OptunaStudy> s =
        Study("optuna_tpe", {"hydra.sweeper.direction=" + c.direction});
    ASSERT_OK(s) << "case " << c.name;
    ASSERT_OK(s->Ask(1)) << "case " << c.name;
    Status told = s->Tell(0, c.value);
    if (c.error.empty()) {
      EXPECT_OK(told) << "case " << c.name;
    } else {
      EXPECT_EQ(told.code(), StatusCode::kDataLoss) << "case " << c.name;
      EXPECT_EQ(told.message(), c.error) << "case " << c.name;
    }
  }
}

// study.best_trial: the first of the best; study.best_trials: the front in
// trial order, equal points all kept; and the lines logged.
TEST(OptunaStudyTest, ResultsAsThePluginWritesThem) {
  struct Case {
    std::string name;
    std::string direction;
    std::vector<Node> values;  // per trial of optuna_grid's x=1,2,3
    std::string yaml;
    std::vector<std::string> lines;
  };
  auto two = [](double a, double b) {
    return Node::MakeList({Node::Double(a), Node::Double(b)});
  };
  const std::vector<Case> cases = {
      {"minimize, ties keep the first", "minimize",
       {Node::Double(0.5), Node::Double(0.25), Node::Double(0.25)},
       "name: optuna\nbest_params:\n  x: 2\nbest_value: 0.25\n",
       {"Best parameters: {'x': 2}", "Best value: 0.25"}},
      {"maximize", "maximize", {Node::Int(1), Node::Int(3), Node::Int(2)},
       "name: optuna\nbest_params:\n  x: 2\nbest_value: 3.0\n",
       {"Best parameters: {'x': 2}", "Best value: 3.0"}},
      {"a front", "[minimize,maximize]",
       {two(1, 1), two(2, 3), two(2, 3)},
       "name: optuna\nsolutions:\n"
       "- params:\n    x: 1\n  values:\n  - 1.0\n  - 1.0\n"
       "- params:\n    x: 2\n  values:\n  - 2.0\n  - 3.0\n"
       "- params:\n    x: 3\n  values:\n  - 2.0\n  - 3.0\n",
       {"Number of Pareto solutions: 3",
        "    Values: [1.0, 1.0], Params: {'x': 1}",
        "    Values: [2.0, 3.0], Params: {'x': 2}",
        "    Values: [2.0, 3.0], Params: {'x': 3}"}},
      {"a dominated trial left out", "[minimize,minimize]",
       {two(1, 1), two(2, 3), two(0, 2)},
       "name: optuna\nsolutions:\n"
       "- params:\n    x: 1\n  values:\n  - 1.0\n  - 1.0\n"
       "- params:\n    x: 3\n  values:\n  - 0.0\n  - 2.0\n",
       {"Number of Pareto solutions: 2",
        "    Values: [1.0, 1.0], Params: {'x': 1}",
        "    Values: [0.0, 2.0], Params: {'x': 3}"}},
  };
  for (const Case& c : cases) {
    StatusOr<OptunaStudy> s =
        Study("optuna_grid", {"hydra.sweeper.direction=" + c.direction});
    ASSERT_OK(s) << "case " << c.name;
    StatusOr<std::vector<std::vector<std::string>>> jobs = s->Ask(3);
    ASSERT_OK(jobs) << "case " << c.name;
    // The grid's order is trialshim's (odometer); tell by x.
    for (int64_t i = 0; i < 3; ++i) {
      const int x = (*jobs)[static_cast<size_t>(i)][0][2] - '1';
      ASSERT_OK(s->Tell(i, c.values[static_cast<size_t>(x)])) << "case " << c.name;
    }
    StatusOr<OptunaStudy::Results> r = s->Finish();
    ASSERT_OK(r) << "case " << c.name;
    EXPECT_EQ(r->yaml, c.yaml) << "case " << c.name;
    EXPECT_EQ(r->lines, c.lines) << "case " << c.name;
  }
  StatusOr<OptunaStudy> none = Study("optuna_grid", {});
  ASSERT_OK(none);
  EXPECT_EQ(none->Finish().status().message(), "No trials are completed yet.");
}

TEST(OptunaStudyTest, StudyNameAsOptunaMakesOne) {
  StatusOr<OptunaStudy> named =
      Study("optuna_grid", {"hydra.sweeper.study_name=digits"});
  ASSERT_OK(named);
  EXPECT_EQ(named->name(), "digits");
  StatusOr<OptunaStudy> a = Study("optuna_grid", {});
  StatusOr<OptunaStudy> b = Study("optuna_grid", {});
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(a->name().size(), std::string("no-name-").size() + 36) << a->name();
  EXPECT_EQ(a->name().rfind("no-name-", 0), 0u) << a->name();
  EXPECT_NE(a->name(), b->name());
  EXPECT_EQ(a->StartLines()[1], "Study name: " + a->name());
}

}  // namespace
}  // namespace trialshim::tuning
