// CheckHydraNode: HydraConf's field types with OmegaConf 2.3's rules for a
// config merged into them, as Hydra composes. Each expectation is what
// omegaconf printed for the same node merged into a dataclass field of that
// type (str, int, Optional[bool], List[str], Dict[str, str], Dict[str,
// Any]); the Anchors* test merges each into Hydra 1.3.2's own HydraConf with
// omegaconf 2.3.0, and the whole-node behaviour is checked against real
// Hydra in tests/cli/compose_command_test.cc.
#include "config/src/hydra_conf.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testutil/omegaconf.h"
#include "tests/testutil/status_matchers.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config::internal {
namespace {

struct Case {
  const char* name;
  const char* yaml;     // a hydra: node
  const char* key;      // what is checked
  const char* want;     // the node afterwards as JSON, or "" for an error
  const char* message = "";  // part of the error
  // What OmegaConf's merge says instead, where our words differ on purpose
  // (it names its internal node classes, or says "merge" for a wrong type).
  const char* omegaconf = nullptr;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"str from int", "job: {name: 7}", "job.name", R"({"job":{"name":"7"}})"},
      {"str from bool", "job: {name: true}", "job.name",
       R"({"job":{"name":"True"}})"},
      {"str from float", "job: {name: 1.5}", "job.name",
       R"({"job":{"name":"1.5"}})"},
      {"str not null", "job: {name: null}", "job.name", "",
       "Incompatible value 'None' for field of type 'str'"},
      {"int not null", "job: {num: null}", "job.num", "",
       "Incompatible value 'None' for field of type 'int'"},
      {"struct not null", "job: null", "job", "",
       "field 'hydra.job' is not Optional"},
      {"str not a list", "job: {name: [1]}", "job.name", "",
       "Cannot convert 'ListConfig' to string: '[1]'"},
      {"int from text", "job: {num: '5'}", "job.num", R"({"job":{"num":5}})"},
      {"int not from float", "job: {num: 1.0}", "job.num", "",
       "Value '1.0' of type 'float' could not be converted to Integer"},
      {"int not from bool", "job: {num: true}", "job.num", "",
       "Value 'True' of type 'bool' could not be converted to Integer"},
      {"int not from float text", "job: {num: '1.5'}", "job.num", "",
       "Value '1.5' of type 'str' could not be converted to Integer"},
      {"bool from yes", "job: {chdir: 'yes'}", "job.chdir",
       R"({"job":{"chdir":true}})"},
      {"bool from Off", "job: {chdir: 'Off'}", "job.chdir",
       R"({"job":{"chdir":false}})"},
      {"bool from 2", "job: {chdir: 2}", "job.chdir", R"({"job":{"chdir":true}})"},
      {"bool not from float", "job: {chdir: 0.0}", "job.chdir", "",
       "Value '0.0' is not a valid bool (type float)"},
      {"optional bool null", "job: {chdir: null}", "job.chdir",
       R"({"job":{"chdir":null}})"},
      {"list items to str", "searchpath: [1, true]", "searchpath",
       R"({"searchpath":["1","True"]})"},
      {"list not from int", "searchpath: 5", "searchpath", "",
       "int is not a ListConfig, list or tuple",
       "AnyNode is not a ListConfig, list or tuple"},
      {"list not null", "searchpath: null", "searchpath", "",
       "field 'hydra.searchpath' is not Optional"},
      {"dict values to str", "job: {env_set: {X: 1}}", "job.env_set",
       R"({"job":{"env_set":{"X":"1"}}})"},
      {"added dict item to str", "job: {env_set: {X: 1}}", "job.env_set.X",
       R"({"job":{"env_set":{"X":"1"}}})"},
      {"dict not from int", "job: {env_set: 5}", "job.env_set", "",
       "Cannot assign int to Dict[str, str]"},
      {"any dict not null", "hydra_logging: null", "hydra_logging", "",
       "field 'hydra.hydra_logging' is not Optional"},
      {"any dict not a list", "hydra_logging: [1]", "hydra_logging", "",
       "Invalid type assigned: list is not a subclass of Dict[str, Any]. "
       "value: [1]"},
      {"str dict not a list", "job: {env_set: [1]}", "job.env_set", "",
       "Invalid type assigned: list is not a subclass of Dict[str, str]. "
       "value: [1]",
       "Cannot merge DictConfig with ListConfig"},
      {"interpolation kept", "job: {num: '${x}'}", "job.num",
       R"({"job":{"num":"${x}"}})"},
      {"missing kept", "job: {num: '?\?\?'}", "job.num",
       R"({"job":{"num":"???"}})"},
      {"unknown key with did-you-mean", "jobs: {name: x}", "", "",
       "Key 'jobs' not in 'HydraConf' (did you mean 'job'?)"},
      {"unknown nested key", "job: {nmae: x}", "", "",
       "Key 'nmae' not in 'JobConf' (did you mean 'name'?)"},
      {"struct not a scalar", "job: 3", "", "",
       "int is not a subclass of JobConf"},
      {"any takes anything", "verbose: [a, b]", "", R"({"verbose":["a","b"]})"},
      {"run mode", "mode: MULTIRUN", "", R"({"mode":"MULTIRUN"})"},
      {"run mode refused", "mode: SOMETIMES", "", "",
       "Invalid value 'SOMETIMES', expected one of [RUN, MULTIRUN]"},
  };
  return *cases;
}

TEST(CheckHydraNode, ConvertsAndRefusesAsOmegaConf) {
  for (const Case& c : Cases()) {
    StatusOr<Node> node = LoadYamlString(c.yaml, "hydra.yaml");
    ASSERT_OK(node) << c.name;
    Status st = CheckHydraNode(&*node, c.key, "");
    if (*c.want == '\0') {
      EXPECT_FALSE(st.ok()) << c.name << ": accepted " << ToJson(*node, -1);
      EXPECT_NE(st.message().find(c.message), std::string::npos)
          << c.name << ": " << st.message();
      continue;
    }
    EXPECT_OK(st) << c.name;
    EXPECT_EQ(nlohmann::json::parse(ToJson(*node, -1)),
              nlohmann::json::parse(c.want))
        << c.name;
  }
}

// The table through Hydra 1.3.2's HydraConf and omegaconf 2.3.0: each
// case's node merged into its `hydra` node, as Hydra composes.
TEST(AnchorsCheckHydraNode, HydraConfConvertsAndRefusesTheTableSo) {
  nlohmann::json input = nlohmann::json::array();
  for (const Case& c : Cases()) input.push_back(c.yaml);
  ASK_ANCHORS_OMEGACONF(live, "hydra", input);
  for (size_t i = 0; i < Cases().size(); ++i) {
    const Case& c = Cases()[i];
    const nlohmann::ordered_json& r = live.results[i];
    if (*c.want != '\0') {
      ASSERT_TRUE(r.contains("json")) << c.name << ": " << testing::Outcome(r);
      EXPECT_EQ(nlohmann::json::parse(r["json"].get<std::string>()),
                nlohmann::json::parse(c.want))
          << c.name;
      continue;
    }
    const std::string says =
        c.omegaconf ? c.omegaconf : testing::WithoutDidYouMean(c.message);
    EXPECT_NE(testing::FirstLine(r).find(says), std::string::npos)
        << c.name << ": " << testing::Outcome(r);
  }
}

TEST(CheckHydraNode, ErrorsSayWhereAndWhichKey) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"bad value at the value", "job:\n  num: abc\n",
       "In 'config': conf/config.yaml:2:8: Value 'abc' of type 'str' could "
       "not be converted to Integer\n    full_key: hydra.job.num"},
      // An unknown key at the key, not at its value (for a map, the line
      // after).
      {"unknown key at the key", "job:\n  chdir: true\n  nmae: x\n",
       "In 'config': conf/config.yaml:3:3: Key 'nmae' not in 'JobConf' (did "
       "you mean 'name'?)\n    full_key: hydra.job.nmae"},
      {"unknown key with a map value", "jobs:\n  name: x\n",
       "In 'config': conf/config.yaml:1:1: Key 'jobs' not in 'HydraConf' "
       "(did you mean 'job'?)\n    full_key: hydra.jobs"},
  };
  for (const Case& c : cases) {
    StatusOr<Node> node = LoadYamlString(c.yaml, "conf/config.yaml");
    ASSERT_OK(node);
    Status st = CheckHydraNode(&*node, "", "In 'config': ");
    EXPECT_EQ(st.message(), c.message) << c.name;
  }
}

}  // namespace
}  // namespace trialshim::config::internal
