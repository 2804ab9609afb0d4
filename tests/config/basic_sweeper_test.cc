// The basic sweeper's jobs (config/basic_sweeper.h) and the value texts it
// writes into them (Override::element_texts). The texts are what Hydra 1.3.2's
// Override.sweep_string_iterator / get_value_element_as_str returned for
// the same overrides (run in the anchors environment); whole multiruns are
// compared with real Hydra in tests/app/multirun_test.cc.
#include "trialshim/config/basic_sweeper.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/override.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {
namespace {

TEST(ElementTexts, AsHydraWritesThem) {
  struct Case {
    const char* override;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"a=1_000", {"1000"}},
      {"a=1.50", {"1.5"}},
      {"a=true", {"True"}},
      {"a=null", {"null"}},
      {"a='x y'", {"'x y'"}},
      {"a=\"it's\"", {"\"it's\""}},
      {"a='a\\\\'", {"'a\\\\'"}},
      {"a='a\\\\\\'b'", {"'a\\\\\\'b'"}},
      {"a=a\\,b", {"a\\,b"}},
      {"a=[1, 'x y', {k: v}]", {"[1,'x y',{k:v}]"}},
      {"a=1e-5", {"1e-05"}},
      {"a=inf", {"inf"}},
      {"a=-0.0", {"-0.0"}},
      {"a=${x}", {"$\\{x\\}"}},
      {"a=1,'b',[c]", {"1", "'b'", "[c]"}},
      {"a=range(0,1,0.25)", {"0.0", "0.25", "0.5", "0.75"}},
      {"a=choice(true, 'q', [1])", {"True", "q", "[1]"}},
      {"a=range(3)", {"0", "1", "2"}},
      {"a=\\ lead", {"\\ lead"}},
      {"~a", {"null"}},
  };
  for (const Case& c : cases) {
    StatusOr<Override> o = ParseOverride(c.override);
    ASSERT_OK(o) << c.override;
    EXPECT_EQ(o->element_texts, c.want) << c.override;
  }
}

std::string Jobs(const std::vector<std::vector<std::string>>& jobs) {
  std::string out;
  for (const auto& job : jobs) {
    out += "[";
    for (size_t i = 0; i < job.size(); ++i) out += (i ? " " : "") + job[i];
    out += "]";
  }
  return out;
}

TEST(BasicSweepJobs, CartesianProductInHydrasOrder) {
  testing::TempDir dir;
  dir.Write("conf/db/mysql.yaml", "a: 1\n");
  dir.Write("conf/db/pg.yaml", "a: 2\n");
  dir.Write("conf/db/sqlite.yaml", "a: 3\n");
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(dir.Join("conf"));
  ASSERT_OK(repo);
  struct Case {
    const char* name;
    std::string params;  // YAML of hydra.sweeper.params
    std::vector<std::string> overrides;
    std::string want;
  };
  const Case cases[] = {
      {"nothing: one job", "null", {}, "[]"},
      {"first list slowest", "null", {"a=1,2", "b=x,y"},
       "[a=1 b=x][a=1 b=y][a=2 b=x][a=2 b=y]"},
      {"params first", "{lr: '0.1,0.2', n: 3}", {"b=x"},
       "[lr=0.1 n=3 b=x][lr=0.2 n=3 b=x]"},
      {"a later override keeps the first place", "{lr: '0.1,0.2'}",
       {"b=x,y", "lr=0.5"}, "[lr=0.5 b=x][lr=0.5 b=y]"},
      {"prefixes are other keys", "null", {"+a=1", "a=2", "~c"},
       "[+a=1 a=2 ~c=null]"},
      {"package is part of the key", "null", {"db@x=mysql", "db=pg,sqlite"},
       "[db@x=mysql db=pg][db@x=mysql db=sqlite]"},
      {"glob of the group's options", "null", {"db=glob(*,exclude=my*)"},
       "[db=pg][db=sqlite]"},
      {"glob matching nothing: no job", "null", {"db=glob(x*)", "a=1"}, ""},
      {"range and choice", "null", {"a=range(1,3)", "b=choice(p,q)"},
       "[a=1 b=p][a=1 b=q][a=2 b=p][a=2 b=q]"},
  };
  for (const Case& c : cases) {
    StatusOr<Node> params = LoadYamlString(c.params, "params.yaml");
    ASSERT_OK(params) << c.name;
    StatusOr<std::vector<std::vector<std::string>>> jobs =
        BasicSweepJobs(*params, c.overrides, *repo);
    ASSERT_OK(jobs) << c.name;
    EXPECT_EQ(Jobs(*jobs), c.want) << c.name;
  }
}

// interval() is refused, saying where to list values instead: on the
// command line, or in the config file that sets the param.
TEST(BasicSweepJobs, IntervalRefusedWithWhereToListValues) {
  testing::TempDir dir;
  StatusOr<ConfigRepository> repo = ConfigRepository::Open(dir.path());
  ASSERT_OK(repo);
  StatusOr<std::vector<std::vector<std::string>>> jobs =
      BasicSweepJobs(Node(), {"n=interval(1, 4)"}, *repo);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().message(),
            "BasicSweeper does not support sweep type : INTERVAL_SWEEP "
            "('n=interval(1, 4)': interval() is for sweepers that sample, such "
            "as Optuna's); the basic sweeper runs listed values, such as "
            "n=1,4");
  StatusOr<Node> params = LoadYamlString(
      "lr: interval(0.0001, 0.1)\n", dir.Join("search.yaml"));
  ASSERT_OK(params);
  jobs = BasicSweepJobs(*params, {}, *repo);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find(
                "such as 0.0001,0.1 where hydra.sweeper.params sets lr (" +
                dir.Join("search.yaml") + ":1:5)"),
            std::string::npos)
      << jobs.status().message();
}

TEST(SplitIntoBatches, AtMostMaxBatchSize) {
  std::vector<std::vector<std::string>> jobs = {{"a=1"}, {"a=2"}, {"a=3"}};
  EXPECT_EQ(SplitIntoBatches(jobs, std::nullopt).size(), 1u);
  EXPECT_EQ(SplitIntoBatches(jobs, -1).size(), 1u);
  auto batches = SplitIntoBatches(jobs, 2);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<std::vector<std::string>>{{"a=3"}}));
  EXPECT_EQ(SplitIntoBatches({}, std::nullopt).size(), 1u);  // Hydra's [[]]
}

}  // namespace
}  // namespace trialshim::config
