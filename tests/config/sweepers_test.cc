// The sweepers' reading of sweeps against what Hydra 1.3.2's basic sweeper
// and hydra-optuna-sweeper 1.2.0 do: every case of
// tests/data/optuna_sweeper/cases.json (recorded by running them,
// generate.py there), plus the parts of a sweep the parser keeps. The
// Anchors suite runs the recorder again and requires the same recording.
#include "trialshim/config/sweepers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/optuna_sweeper.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/yaml_loader.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

using Json = nlohmann::json;
using testing::OptunaSweeperCases;
using testing::ToJsonValue;

// A shuffled sweep's distribution with its choices sorted, as recorded.
Json Sorted(Json j) {
  Json& choices = j["attributes"]["choices"];
  std::vector<Json> items(choices.begin(), choices.end());
  std::sort(items.begin(), items.end(),
            [](const Json& a, const Json& b) { return a.dump() < b.dump(); });
  choices = items;
  return j;
}

void ExpectRefused(const Status& s, const Json& c, const std::string& name) {
  EXPECT_FALSE(s.ok()) << name << ": the plugin says " << c["error"];
  for (const Json& says : c["says"]) {
    EXPECT_THAT(s, StatusIs(_, HasSubstr(says.get<std::string>()))) << name;
  }
}

TEST(OptunaSweepTest, DistributionsAsThePluginReadsThem) {
  std::vector<Json> cases = OptunaSweeperCases("distributions");
  ASSERT_GE(cases.size(), 40u);
  for (const Json& c : cases) {
    const std::string text = c["override"];
    StatusOr<OptunaSearchSpace> space = ReadOptunaSearchSpace({text});
    if (c.contains("error")) {
      ExpectRefused(space.status(), c, text);
      continue;
    }
    ASSERT_OK(space.status()) << text;
    ASSERT_EQ(space->params.size(), 1u) << text;
    if (c.value("unordered", false)) {  // JSON without NaN or Infinity
      EXPECT_EQ(Sorted(Json::parse(space->params[0].distribution.ToJson())),
                Json::parse(c["json"].get<std::string>()))
          << text;
    } else {
      EXPECT_EQ(space->params[0].distribution.ToJson(), c["json"]) << text;
    }
    std::vector<std::string> want;
    for (const Json& w : c["warnings"]) {
      want.push_back(space->params[0].name + ": " + w.get<std::string>());
    }
    EXPECT_EQ(space->warnings, want) << text;
  }
}

// A zero step is refused by the grammar, as Hydra's range() refuses it, and
// an infinite bound as a range that can not be enumerated; a negative float
// step, which Optuna 2.10 takes, is refused on purpose
// (docs/hydra-differences.md).
TEST(OptunaSweepTest, RangesWithoutAUsefulStepAreRefused) {
  struct {
    const char* name;
    const char* text;
    const char* says;
  } cases[] = {
      {"negative step", "key=range(0.0, 1.0, -0.5)",
       "a discrete range needs a positive step, got step=-0.5 (Optuna 2.10 "
       "takes it"},
      {"zero step", "key=range(0.0, 1.0, 0.0)",
       "HydraException: Invalid range values (start:0.0, stop:1.0, "
       "step:0.0)"},
      {"infinite bound", "key=range(0.0, inf, 0.5)",
       "its bounds must be finite"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(ReadOptunaSearchSpace({c.text}).status(),
                StatusIs(_, HasSubstr(c.says)))
        << "case " << c.name;
  }
}

TEST(OptunaSweepTest, SearchSpacesAsThePluginBuildsThem) {
  std::vector<Json> cases = OptunaSweeperCases("search_spaces");
  ASSERT_GE(cases.size(), 8u);
  for (const Json& c : cases) {
    std::vector<std::string> overrides = c["overrides"];
    std::string name = c["overrides"].dump();
    StatusOr<OptunaSearchSpace> space = ReadOptunaSearchSpace(overrides);
    ASSERT_OK(space.status()) << name;
    Json params = Json::array(), fixed = Json::array();
    for (const OptunaParam& p : space->params) {
      params.push_back({p.name, p.distribution.ToJson()});
    }
    for (const FixedParam& f : space->fixed) fixed.push_back({f.name, f.text});
    EXPECT_EQ(params, c["params"]) << name;
    EXPECT_EQ(fixed, c["fixed"]) << name;
  }
}

TEST(OptunaSweepTest, GridChoicesAsThePluginEnumeratesThem) {
  std::vector<Json> cases = OptunaSweeperCases("grid");
  ASSERT_GE(cases.size(), 6u);
  for (const Json& c : cases) {
    const std::string text = c["override"];
    StatusOr<Override> o = ParseOverride(text);
    ASSERT_OK(o.status()) << text;
    StatusOr<OptunaDistribution> d = OptunaDistributionOf(*o);
    ASSERT_OK(d.status()) << text;
    StatusOr<std::vector<Node>> choices = OptunaGridChoices(*d);
    if (c.contains("error")) {
      ExpectRefused(choices.status(), c, text);
      continue;
    }
    ASSERT_OK(choices.status()) << text;
    Json got = Json::array();
    for (const Node& v : *choices) got.push_back(ToJsonValue(v));
    EXPECT_EQ(got.dump(), c["choices"].dump()) << text;
  }
}

// Extreme ranges, where the plugin itself would run out of memory or
// round: integer bounds beyond 2^53 are refused (they are held as doubles,
// and 2^63 cast back to int64 is undefined), bounds that are not finite are
// refused, and a grid is counted before a value is made, refused beyond the
// 100,000 values a range() sweep enumerates.
TEST(OptunaSweepTest, ExtremeRangesAreCountedOrRefused) {
  struct Case {
    std::string override_text;
    std::string refused;  // the distribution's refusal, or ""
    std::string grid;     // the grid's refusal, or its size
  } cases[] = {
      {"x=int(interval(0, 1e10))", "",
       "GridSampler: the grid of this distribution has 10000000000 values, "
       "more than the 100000 a sweep enumerates"},
      {"x=range(0, 9223372036854775807, 4611686018427387904)",
       "the bound 9223372036854775807 is beyond +-2^53 (9007199254740992)",
       ""},
      {"x=range(-9007199254740993, 0, 9007199254740993)",
       "the bound -9007199254740993 is beyond +-2^53", ""},
      {"x=int(interval(0, 1e17))",
       "the bound 100000000000000000 is beyond +-2^53", ""},
      {"x=interval(0, 9223372036854775807)", "", "GridSampler only supports"},
      {"x=interval(0, inf)", "interval(...) needs finite bounds, got inf", ""},
      {"x=interval(nan, 1.0)", "interval(...) needs finite bounds, got nan",
       ""},
      {"x=range(0, 100000)", "", "100000"},
      {"x=range(0, 9007199254740992, 9007199254740992)", "", "1"},
  };
  for (const Case& c : cases) {
    StatusOr<Override> o = ParseOverride(c.override_text);
    ASSERT_OK(o.status()) << c.override_text;
    StatusOr<OptunaDistribution> d = OptunaDistributionOf(*o);
    if (!c.refused.empty()) {
      EXPECT_THAT(d, StatusIs(StatusCode::kInvalidArgument,
                              HasSubstr(c.refused)))
          << c.override_text;
      continue;
    }
    ASSERT_OK(d.status()) << c.override_text;
    StatusOr<std::vector<Node>> choices = OptunaGridChoices(*d);
    if (choices.ok()) {
      EXPECT_EQ(std::to_string(choices->size()), c.grid) << c.override_text;
    } else {
      EXPECT_THAT(choices, StatusIs(StatusCode::kInvalidArgument,
                                    HasSubstr(c.grid)))
          << c.override_text;
    }
  }
  // range(0.0, 1e12, 0.5) as the sweeper's params give it (an override
  // refuses to enumerate it already): its grid is counted, not made.
  OptunaDistribution d;
  d.kind = OptunaDistribution::Kind::kDiscreteUniform;
  d.low = 0;
  d.high = 1e12;
  d.step = 0.5;
  EXPECT_THAT(OptunaGridChoices(d),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("GridSampler: the grid of this distribution "
                                 "has 2000000000000.0 values, more than the "
                                 "100000 a sweep enumerates")));
}

TEST(BasicSweepTest, JobsAsTheBasicSweeperSplitsThem) {
  std::vector<Json> cases = OptunaSweeperCases("basic");
  ASSERT_GE(cases.size(), 9u);
  for (const Json& c : cases) {
    std::vector<std::string> overrides = c["overrides"];
    std::string name = c["overrides"].dump();
    std::optional<ConfigRepository> repo;
    if (!c["tree"].is_null()) {
      StatusOr<ConfigRepository> opened =
          ConfigRepository::Open(testing::kOptunaSweeperDir + "/trees/" +
                                 c["tree"].get<std::string>());
      ASSERT_OK(opened.status());
      repo = *opened;
    }
    StatusOr<std::vector<BasicSweepAxis>> axes =
        ReadBasicSweep(overrides, repo ? &*repo : nullptr);
    if (c.contains("error")) {
      ExpectRefused(axes.status(), c, name);
      continue;
    }
    ASSERT_OK(axes.status()) << name;
    EXPECT_EQ(Json(BasicSweepJobs(*axes)), c["jobs"]) << name;
  }
}

TEST(BasicSweepTest, GlobNeedsTheGroups) {
  StatusOr<std::vector<BasicSweepAxis>> axes =
      ReadBasicSweep({"db=glob(*)"}, nullptr);
  EXPECT_FALSE(axes.ok());
  EXPECT_THAT(axes, StatusIs(_, HasSubstr("glob() needs the config's groups")));
}

// What the parser keeps of a sweep, which the sweepers read.
// The text each job gets for a value, as Hydra 1.3.2's
// Override.sweep_string_iterator / get_value_element_as_str returned it
// for the same overrides (recorded in the anchors environment): a single
// value's Override::value_text, a sweep's SweepItem texts.
TEST(BasicSweepTest, ValueTextsAsHydraWritesThem) {
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
    StatusOr<std::vector<BasicSweepAxis>> axes =
        ReadBasicSweep({c.override}, nullptr);
    ASSERT_OK(axes) << c.override;
    ASSERT_EQ(axes->size(), 1u) << c.override;
    EXPECT_EQ((*axes)[0].texts, c.want) << c.override;
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

// hydra.sweeper.params first, then the command line's overrides, into the
// cartesian product in Hydra's order.
TEST(BasicSweepTest, CartesianProductInHydrasOrder) {
  testing::TempDir dir;
  dir.Write("conf/db/mysql.yaml", "a: 1\n");
  dir.Write("conf/db/pg.yaml", "a: 2\n");
  dir.Write("conf/db/sqlite.yaml", "a: 3\n");
  dir.Write("conf/db/my model.yaml", "a: 4\n");
  dir.Write("conf/db/x,y.yaml", "a: 5\n");
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
      {"first list slowest",
       "null",
       {"a=1,2", "b=x,y"},
       "[a=1 b=x][a=1 b=y][a=2 b=x][a=2 b=y]"},
      {"params first",
       "{lr: '0.1,0.2', n: 3}",
       {"b=x"},
       "[lr=0.1 n=3 b=x][lr=0.2 n=3 b=x]"},
      {"a later override keeps the first place",
       "{lr: '0.1,0.2'}",
       {"b=x,y", "lr=0.5"},
       "[lr=0.5 b=x][lr=0.5 b=y]"},
      {"prefixes are other keys",
       "null",
       {"+a=1", "a=2", "~c"},
       "[+a=1 a=2 ~c=null]"},
      {"package is part of the key",
       "null",
       {"db@x=mysql", "db=pg,sqlite"},
       "[db@x=mysql db=pg][db@x=mysql db=sqlite]"},
      {"glob of the group's options",
       "null",
       {"db=glob(*,exclude=my*)"},
       "[db=pg][db=sqlite][db=x\\,y]"},
      // Hydra hands "my model" on as it is; "x,y" as it is would be a
      // sweep in the job, which Hydra refuses ("Ambiguous value").
      {"glob names as they read back",
       "null",
       {"db=glob([my m*,x*])"},
       "[db=my model][db=x\\,y]"},
      {"glob matching nothing: no job", "null", {"db=glob(z*)", "a=1"}, ""},
      {"range and choice",
       "null",
       {"a=range(1,3)", "b=choice(p,q)"},
       "[a=1 b=p][a=1 b=q][a=2 b=p][a=2 b=q]"},
  };
  for (const Case& c : cases) {
    StatusOr<Node> params = LoadYamlString(c.params, "params.yaml");
    ASSERT_OK(params) << c.name;
    StatusOr<std::vector<std::string>> all = SweeperParamsOverrides(*params);
    ASSERT_OK(all) << c.name;
    all->insert(all->end(), c.overrides.begin(), c.overrides.end());
    StatusOr<std::vector<BasicSweepAxis>> axes =
        ReadBasicSweep(*all, &*repo, &*params);
    ASSERT_OK(axes) << c.name;
    EXPECT_EQ(Jobs(BasicSweepJobs(*axes)), c.want) << c.name;
  }
}

// interval() is refused, saying where to list values instead: on the
// command line, or in the config file that sets the param.
TEST(BasicSweepTest, IntervalRefusedWithWhereToListValues) {
  StatusOr<std::vector<BasicSweepAxis>> axes =
      ReadBasicSweep({"n=interval(1, 4)"}, nullptr);
  ASSERT_FALSE(axes.ok());
  EXPECT_EQ(axes.status().message(),
            "BasicSweeper does not support sweep type : INTERVAL_SWEEP "
            "('n=interval(1, 4)': interval() is for sweepers that sample, such "
            "as Optuna's); the basic sweeper runs listed values, such as "
            "n=1,4, and hydra/sweeper=optuna samples the interval");
  testing::TempDir dir;
  StatusOr<Node> params = LoadYamlString("lr: interval(0.0001, 0.1)\n",
                                         dir.Join("search.yaml"));
  ASSERT_OK(params);
  StatusOr<std::vector<std::string>> all = SweeperParamsOverrides(*params);
  ASSERT_OK(all);
  axes = ReadBasicSweep(*all, nullptr, &*params);
  ASSERT_FALSE(axes.ok());
  EXPECT_THAT(
      axes,
      StatusIs(
          _,
          HasSubstr("such as 0.0001,0.1 where hydra.sweeper.params sets lr (" +
                    dir.Join("search.yaml") + ":1:5)")));
}

TEST(BasicSweepTest, SplitIntoBatchesOfAtMostMaxBatchSize) {
  std::vector<std::vector<std::string>> jobs = {{"a=1"}, {"a=2"}, {"a=3"}};
  EXPECT_EQ(SplitIntoBatches(jobs, std::nullopt).size(), 1u);
  EXPECT_EQ(SplitIntoBatches(jobs, -1).size(), 1u);
  auto batches = SplitIntoBatches(jobs, 2);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<std::vector<std::string>>{{"a=3"}}));
  EXPECT_EQ(SplitIntoBatches({}, std::nullopt).size(), 1u);  // Hydra's [[]]
}

TEST(SweepDetailTest, ParserKeepsTheSweepsParts) {
  struct Case {
    std::string name, text;
    std::vector<std::string> tags;
    bool shuffle;
    std::vector<std::string> texts;  // items' Transformer.str
    std::vector<bool> primitive;
    std::string bounds;  // as JSON, with their types
  };
  const std::vector<Case> cases = {
      {"interval makes floats",
       "k=interval(1, 5)",
       {},
       false,
       {},
       {},
       "[1.0,5.0]"},
      {"int() makes ints",
       "k=int(interval(1.5, 5.5))",
       {},
       false,
       {},
       {},
       "[1,5]"},
      {"tags sorted",
       "k=tag(log, b, interval(1, 2))",
       {"b", "log"},
       false,
       {},
       {},
       "[1.0,2.0]"},
      {"a range's bounds and values",
       "k=range(0, 10, 3)",
       {},
       false,
       {"0", "3", "6", "9"},
       {true, true, true, true},
       "[0,10,3]"},
      {"a float range",
       "k=range(0, 0.3, 0.1)",
       {},
       false,
       {"0.0", "0.1", "0.2"},
       {true, true, true},
       "[0,0.3,0.1]"},
      {"simple form: quoted, escaped",
       "k=a,'b c',d\\,e",
       {},
       false,
       {"a", "'b c'", "d\\,e"},
       {true, false, true},
       "[]"},
      {"choice() unquotes its arguments",
       "k=choice('b c', [1, 2])",
       {},
       false,
       {"b\\ c", "[1,2]"},
       {true, false},
       "[]"},
      {"shuffle", "k=shuffle(1, 2)", {}, true, {}, {}, "[]"},
  };
  for (const Case& c : cases) {
    StatusOr<Override> o = ParseOverride(c.text);
    ASSERT_OK(o.status()) << c.name;
    EXPECT_EQ(o->sweep.tags, c.tags) << c.name;
    EXPECT_EQ(o->sweep.shuffle, c.shuffle) << c.name;
    Json bounds = Json::array();
    for (const Node& b : o->sweep.bounds) bounds.push_back(ToJsonValue(b));
    EXPECT_EQ(bounds.dump(), c.bounds) << c.name;
    if (c.shuffle) continue;  // items in random order
    std::vector<std::string> texts;
    std::vector<bool> primitive;
    for (const SweepItem& item : o->sweep.items) {
      texts.push_back(item.text);
      primitive.push_back(item.primitive);
    }
    EXPECT_EQ(texts, c.texts) << c.name;
    EXPECT_EQ(primitive, c.primitive) << c.name;
  }
}

TEST(SweeperParamsTest, EntriesAsOverrides) {
  Node params = Node::MakeMap({{"lr", Node::String("interval(0.1, 1)")},
                               {"batch_size", Node::Int(32)},
                               {"fast", Node::Bool(true)},
                               {"wd", Node::Double(0.5)}});
  StatusOr<std::vector<std::string>> out = SweeperParamsOverrides(params);
  ASSERT_OK(out.status());
  EXPECT_EQ(*out,
            (std::vector<std::string>{"lr=interval(0.1, 1)", "batch_size=32",
                                      "fast=True", "wd=0.5"}));
  EXPECT_TRUE(SweeperParamsOverrides(Node::Null())->empty());
  for (const Node& bad :
       {Node::MakeMap({{"model", Node::MakeMap({{"lr", Node::Int(1)}})}}),
        Node::MakeMap({{"layers", Node::MakeList({Node::Int(1)})}}),
        Node::MakeMap({{"x", Node::Null()}})}) {
    StatusOr<std::vector<std::string>> refused = SweeperParamsOverrides(bad);
    ASSERT_FALSE(refused.ok()) << bad.AsMap()[0].first;
    EXPECT_THAT(refused, StatusIs(_, HasSubstr("hydra.sweeper.params." +
                                               bad.AsMap()[0].first)));
  }
}

// The recording is what the plugin does now: generate.py run again with
// the anchors' Python writes the committed bytes.
TEST(AnchorsOptunaSweeper, RecordingIsWhatTheSweepersDoNow) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/data/optuna_sweeper/generate.py",
                                {"--out", dir.Join("live.json")});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(testing::ReadFile(dir.Join("live.json")),
            testing::ReadFile(testing::kOptunaSweeperDir + "/cases.json"))
      << "regenerate with: build/anchors/bin/python "
         "tests/data/optuna_sweeper/generate.py";
}

}  // namespace
}  // namespace trialshim::config
