// Hydra's own node (config/src/hydra_conf.cc) through Compose: HydraConf's
// field types with OmegaConf 2.3's rules for a config merged into them, as
// Hydra composes. Each expectation is what omegaconf printed for the same
// node merged into a dataclass field of that type (str, int,
// Optional[bool], List[str], Dict[str, str], Dict[str, Any]); the Anchors*
// test merges each into Hydra 1.3.2's own HydraConf with omegaconf 2.3.0,
// and the whole-node behaviour is checked against real Hydra in
// tests/cli/compose_command_test.cc.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testutil/omegaconf.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/render.h"
#include "trialshim/config/yaml_loader.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

struct Case {
  const char* name;
  const char* yaml;  // a hydra: node
  // "": the node is the primary config's `hydra:`; else the value at this
  // key is given as an override ("+a.b" adds a key).
  const char* key;
  // What the composed hydra: node holds (Hydra's defaults fill the rest)
  // as JSON, or "" for an error.
  const char* want;
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
      {"bool from 2", "job: {chdir: 2}", "job.chdir",
       R"({"job":{"chdir":true}})"},
      {"bool not from float", "job: {chdir: 0.0}", "job.chdir", "",
       "Value '0.0' is not a valid bool (type float)"},
      {"optional bool null", "job: {chdir: null}", "job.chdir",
       R"({"job":{"chdir":null}})"},
      // (Not searchpath: its items are search paths, which compose refuses
      // as such before the types are checked.)
      {"list items to str",
       "job: {config: {override_dirname: {exclude_keys: [1, true]}}}", "",
       R"({"job":{"config":{"override_dirname":{"exclude_keys":["1","True"]}}}})"},
      {"list not from int",
       "job: {config: {override_dirname: {exclude_keys: 5}}}",
       "job.config.override_dirname.exclude_keys", "",
       "int is not a ListConfig, list or tuple",
       "AnyNode is not a ListConfig, list or tuple"},
      {"list not null", "searchpath: null", "searchpath", "",
       "field 'hydra.searchpath' is not Optional"},
      {"dict values to str", "job: {env_set: {X: 1}}", "",
       R"({"job":{"env_set":{"X":"1"}}})"},
      {"added dict item to str", "job: {env_set: {X: 1}}", "+job.env_set.X",
       R"({"job":{"env_set":{"X":"1"}}})"},
      {"dict not from int", "job: {env_set: 5}", "job.env_set", "",
       "Cannot assign int to Dict[str, str]"},
      {"any dict not null", "hydra_logging: null", "hydra_logging", "",
       "field 'hydra.hydra_logging' is not Optional"},
      // A list for a dict field is refused by the merge, before the types
      // are checked: for Dict[str, Any] Hydra's words differ.
      {"any dict not a list", "hydra_logging: [1]", "hydra_logging", "",
       "cannot merge a list into the dict at 'hydra.hydra_logging' "
       "(OmegaConf: Cannot merge DictConfig with ListConfig)",
       "Invalid type assigned: list is not a subclass of Dict[str, Any]. "
       "value: [1]"},
      {"str dict not a list", "job: {env_set: [1]}", "job.env_set", "",
       "cannot merge a list into the dict at 'hydra.job.env_set' "
       "(OmegaConf: Cannot merge DictConfig with ListConfig)",
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
      // RunMode is an Enum: EnumNode.validate_and_convert_to_enum takes a
      // member's name, "RunMode.<name>" or a member's value (not a bool),
      // and keeps the member, which prints as its name.
      {"run mode by class and name", "mode: RunMode.MULTIRUN", "",
       R"({"mode":"MULTIRUN"})"},
      {"run mode by class and name override", "mode: RunMode.RUN", "mode",
       R"({"mode":"RUN"})"},
      {"run mode by value", "mode: 1", "", R"({"mode":"RUN"})"},
      {"run mode by value override", "mode: 2", "mode",
       R"({"mode":"MULTIRUN"})"},
      {"run mode null", "mode: null", "mode", R"({"mode":null})"},
      {"run mode value not a member", "mode: 3", "mode", "",
       "Invalid value '3', expected one of [RUN, MULTIRUN]"},
      {"run mode value as text", "mode: '1'", "", "",
       "Invalid value '1', expected one of [RUN, MULTIRUN]"},
      {"run mode not a bool", "mode: true", "", "",
       "Invalid value 'True', expected one of [RUN, MULTIRUN]"},
      {"run mode name is exact", "mode: run", "mode", "",
       "Invalid value 'run', expected one of [RUN, MULTIRUN]"},
      {"run mode only its own class", "mode: Mode.RUN", "", "",
       "Invalid value 'Mode.RUN', expected one of [RUN, MULTIRUN]"},
      {"run mode class alone", "mode: RunMode.", "", "",
       "Invalid value 'RunMode.', expected one of [RUN, MULTIRUN]"},
      {"run mode not a float", "mode: 1.0", "mode", "",
       "Value 1.0 (float) is not a valid input for <enum 'RunMode'>"},
      {"run mode not a list", "mode: [1]", "", "",
       "Value [1] (ListConfig) is not a valid input for <enum 'RunMode'>"},
      // An override's list is a Python list to OmegaConf; a merge's a node.
      {"run mode not a list override", "mode: [1]", "mode", "",
       "Value [1] (list) is not a valid input for <enum 'RunMode'>",
       "Value [1] (ListConfig) is not a valid input for <enum 'RunMode'>"},
      {"run mode not a dict", "mode: {a: 1}", "", "",
       "Value {'a': 1} (DictConfig) is not a valid input for <enum 'RunMode'>"},
      {"run mode interpolation kept", "mode: '${x}'", "", R"({"mode":"${x}"})"},
  };
  return *cases;
}

// `got` holds every key of `want` with its value.
void ExpectHolds(const nlohmann::json& got, const nlohmann::json& want,
                 const std::string& name) {
  if (!want.is_object()) {
    EXPECT_EQ(got, want) << name;
    return;
  }
  for (const auto& [key, value] : want.items()) {
    ASSERT_TRUE(got.contains(key)) << name << ": no " << key;
    ExpectHolds(got[key], value, name);
  }
}

// Composes <dir>/conf/config.yaml, which holds `yaml` as its `hydra:`, or
// with `key` ("a.b", or "+a.b" to add it) the value there as the override
// hydra.<key>=<value>.
StatusOr<ComposeResult> ComposeWithHydra(const testing::TempDir& dir,
                                         const std::string& yaml,
                                         const std::string& key = "") {
  ComposeRequest request;
  request.config_path = dir.Join("conf");
  request.config_name = "config";
  if (!key.empty()) {
    StatusOr<Node> node = LoadYamlString(yaml, "hydra.yaml");
    if (!node.ok()) return node.status();
    const bool add = key[0] == '+';
    const std::string path = key.substr(add ? 1 : 0);
    const Node* value = node->Find(path);
    if (value == nullptr) return Status::Internal("no " + path);
    request.overrides = {std::string(add ? "+" : "") + "hydra." + path + "=" +
                         RenderValue(*value)};
    dir.Write("conf/config.yaml", "{}\n");
    return Compose(request);
  }
  std::string text = "hydra:\n";
  for (size_t at = 0; at < yaml.size();) {
    size_t eol = yaml.find('\n', at);
    if (eol == std::string::npos) eol = yaml.size();
    text += "  " + yaml.substr(at, eol - at) + "\n";
    at = eol + 1;
  }
  dir.Write("conf/config.yaml", text);
  return Compose(request);
}

TEST(HydraNode, ConvertsAndRefusesAsOmegaConf) {
  for (const Case& c : Cases()) {
    testing::TempDir dir;
    StatusOr<ComposeResult> got = ComposeWithHydra(dir, c.yaml, c.key);
    if (*c.want == '\0') {
      EXPECT_THAT(got, StatusIs(_, HasSubstr(c.message))) << c.name;
      continue;
    }
    ASSERT_OK(got) << c.name;
    ExpectHolds(nlohmann::json::parse(ToJson(got->hydra, -1)),
                nlohmann::json::parse(c.want), c.name);
  }
}

// The table through Hydra 1.3.2's HydraConf and omegaconf 2.3.0: each
// case's node merged into its `hydra` node, as Hydra composes.
TEST(AnchorsHydraNode, HydraConfConvertsAndRefusesTheTableSo) {
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

TEST(HydraNode, ErrorsSayWhereAndWhichKey) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"bad value at the value", "job:\n  num: abc\n",
       "conf/config.yaml:3:10: Value 'abc' of type 'str' could "
       "not be converted to Integer\n    full_key: hydra.job.num"},
      // An unknown key at the key, not at its value (for a map, the line
      // after).
      {"unknown key at the key", "job:\n  chdir: true\n  nmae: x\n",
       "conf/config.yaml:4:5: Key 'nmae' not in 'JobConf' (did "
       "you mean 'name'?)\n    full_key: hydra.job.nmae"},
      {"unknown key with a map value", "jobs:\n  name: x\n",
       "conf/config.yaml:2:3: Key 'jobs' not in 'HydraConf' "
       "(did you mean 'job'?)\n    full_key: hydra.jobs"},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    EXPECT_THAT(ComposeWithHydra(dir, c.yaml),
                StatusIs(StatusCode::kInvalidArgument, dir.Join(c.message)))
        << c.name;
  }
}

}  // namespace
}  // namespace trialshim::config
