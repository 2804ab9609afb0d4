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
    EXPECT_NE(s.message().find(says.get<std::string>()), std::string::npos)
        << name << ": " << s.message() << "\nshould mention " << says;
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
  EXPECT_NE(axes.status().message().find("glob() needs the config's groups"),
            std::string::npos)
      << axes.status().message();
}

// What the parser keeps of a sweep, which the sweepers read.
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
    EXPECT_NE(refused.status().message().find("hydra.sweeper.params." +
                                              bad.AsMap()[0].first),
              std::string::npos)
        << refused.status().message();
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
