// Schema<T>: structured configs. Where the behaviour is OmegaConf's (the
// conversions, the defaults node), omegaconf is asked live and our result
// compared with its: the anchors' omegaconf 2.3.0 in the Anchors* tests,
// Debian's python3-omegaconf 2.2 in the others (tests/anchors/
// omegaconf_cases.py); the JSON Schema is checked with python3-jsonschema,
// a validator we did not write. Each skips when its module is not installed.
#include "trialshim/config/schema.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <re2/re2.h>
#include <string>
#include <vector>

#include "tests/testutil/omegaconf.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/override.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {
namespace {

using testing::TempDir;

// Runs `script` with /usr/bin/python3, `input` in a file as argv[1]; returns
// its stdout and stderr. *skip is set when `module` is not installed. (For
// the JSON Schema validator; OmegaConf is asked through omegaconf.h.)
std::string RunPython(const std::string& script, const std::string& input,
                      const std::string& module, bool* skip) {
  TempDir dir;
  std::string in = dir.Write("input", input);
  std::string py = dir.Write("script.py", script);
  testing::Finished f =
      testing::RunToEnd({"/usr/bin/python3", "-W", "ignore", py, in});
  std::string out = f.out + f.err;
  *skip = out.find("No module named '" + module + "'") != std::string::npos;
  return out;
}

Node Load(const std::string& yaml, const std::string& name = "c.yaml") {
  StatusOr<Node> n = LoadYamlString(yaml, name);
  EXPECT_TRUE(n.ok()) << n.status().message();
  return n.ok() ? *n : Node();
}

// ---------------------------------------------------------------------------
// Conversions: one field `v` of a type, as a dataclass with a MISSING field.

template <typename V>
struct One {
  V v{};
};

struct Outcome {
  bool ok = false;
  std::string text;  // the config as YAML, or the error
};

template <typename V>
Outcome BindOne(const Node& config) {
  Schema<One<V>> schema("C");
  schema.Field("v", &One<V>::v).Required();
  StatusOr<One<V>> bound = schema.Bind(config);
  if (!bound.ok()) {
    // OmegaConf has no file:line:col; drop ours to compare the rest.
    std::string message = bound.status().message();
    RE2::Replace(&message, R"(^c\.yaml:[0-9]+:[0-9]+: )", "");
    return {false, message};
  }
  return {true, ToYaml(schema.ToNode(*bound))};
}

const std::map<std::string, std::function<Outcome(const Node&)>>& Binders() {
  static const auto* binders =
      new std::map<std::string, std::function<Outcome(const Node&)>>{
          {"int", BindOne<int64_t>},
          {"float", BindOne<double>},
          {"bool", BindOne<bool>},
          {"str", BindOne<std::string>},
          {"Any", BindOne<Node>},
          {"Optional[int]", BindOne<std::optional<int64_t>>},
          {"Optional[float]", BindOne<std::optional<double>>},
          {"Optional[bool]", BindOne<std::optional<bool>>},
          {"Optional[str]", BindOne<std::optional<std::string>>},
          {"List[int]", BindOne<std::vector<int64_t>>},
          {"List[float]", BindOne<std::vector<double>>},
          {"List[str]", BindOne<std::vector<std::string>>},
          {"Dict[str, str]", BindOne<std::map<std::string, std::string>>},
          {"Dict[str, int]", BindOne<std::map<std::string, int64_t>>},
      };
  return *binders;
}

// How much of a refusal's message is OmegaConf's.
enum class Same {
  kAll,        // the whole message
  kFirstLine,  // the first line (its full_key names the parent's key)
  kRefusal,    // only that it refuses (its words name an internal class)
};

struct ConversionCase {
  const char* name;
  const char* type;   // the Python annotation
  const char* value;  // YAML
  Same same = Same::kAll;
  // Debian's omegaconf 2.2 words it otherwise (2.3's is ours).
  bool differs_in_2_2 = false;
};

const ConversionCase kConversions[] = {
    {"str from int", "str", "5"},
    {"str from float", "str", "1.5"},
    {"str from small float", "str", "1.0e-3"},
    {"str from nan", "str", ".nan"},
    {"str from bool", "str", "true"},
    {"str refuses a list", "str", "[1]"},
    {"str refuses null", "str", "null"},
    {"str missing", "str", "'?\?\?'"},
    {"int from text", "int", "'5'"},
    {"int from spaced text with separators", "int", "' 1_0 '"},
    {"int from hex", "int", "0x1F"},
    {"int from negative text", "int", "'-3'"},
    {"int refuses 1.0", "int", "1.0"},
    {"int refuses true", "int", "true"},
    {"int refuses '1.5'", "int", "'1.5'"},
    {"int refuses words", "int", "abc"},
    {"int refuses null", "int", "null"},
    {"int refuses a list", "int", "[1]"},
    {"int refuses a dict", "int", "{a: 1}"},
    {"int missing", "int", "'?\?\?'"},
    {"float from int", "float", "1"},
    {"float from exponent text", "float", "'1e3'"},
    {"float from spaced text", "float", "' 2 '"},
    {"float from nan text", "float", "'nan'"},
    {"float from inf text", "float", "'-inf'"},
    {"float refuses true", "float", "true"},
    {"float refuses words", "float", "x"},
    {"bool from yes", "bool", "yes"},
    {"bool from 'Y'", "bool", "'Y'"},
    {"bool from 'on'", "bool", "'on'"},
    {"bool from 'OFF'", "bool", "'OFF'"},
    {"bool from 'TRUE'", "bool", "'TRUE'"},
    {"bool from '1'", "bool", "'1'"},
    {"bool from '0'", "bool", "'0'"},
    {"bool from int 2", "bool", "2"},
    {"bool from int text '2'", "bool", "'2'"},
    {"bool from int text ' 1_0 '", "bool", "' 1_0 '"},
    {"bool from int text '-0'", "bool", "'-0'"},
    {"bool refuses a padded word", "bool", "' yes'"},
    {"bool from int 0", "bool", "0"},
    {"bool refuses a float", "bool", "1.5"},
    {"bool refuses 'maybe'", "bool", "'maybe'"},
    {"bool refuses null", "bool", "null"},
    {"Optional int takes null", "Optional[int]", "null"},
    {"Optional int converts text", "Optional[int]", "'7'"},
    {"Optional int refuses 1.5", "Optional[int]", "1.5"},
    {"Optional float takes null", "Optional[float]", "null"},
    {"Optional bool converts no", "Optional[bool]", "'no'"},
    {"Optional str from int", "Optional[str]", "5"},
    {"Any keeps a list", "Any", "[1, {a: b}]"},
    {"Any keeps null", "Any", "null"},
    {"List[int] converts items", "List[int]", "[1, '2']"},
    {"List[int] empty", "List[int]", "[]"},
    {"List[int] refuses a bad item", "List[int]", "[1, '2', x]",
     Same::kFirstLine},
    // OmegaConf: "AnyNode is not a ListConfig, list or tuple."; ours names
    // the value's type.
    {"List[int] refuses a scalar", "List[int]", "5", Same::kRefusal},
    {"List[float] from ints", "List[float]", "[1, 2.5]"},
    {"List[str] from scalars", "List[str]", "[1, 1.5, true]"},
    {"Dict[str, str] converts values", "Dict[str, str]", "{a: 1, b: true}"},
    {"Dict[str, str] refuses a list", "Dict[str, str]", "[1]", Same::kFirstLine,
     true},
    {"Dict[str, int] refuses a bad value", "Dict[str, int]", "{a: x}",
     Same::kFirstLine},
    {"Dict[str, int] converts text", "Dict[str, int]", "{a: '3'}"},
};

nlohmann::json ConversionInput() {
  nlohmann::json input = nlohmann::json::array();
  for (const ConversionCase& c : kConversions) {
    input.push_back({{"type", c.type}, {"yaml", std::string("v: ") + c.value}});
  }
  return input;
}

// Our Bind on each case against OmegaConf.merge(OmegaConf.structured(C),
// the value) as `omegaconf` answered (omegaconf_cases.py's `merge`).
void ExpectConversionsAs(const testing::OmegaConfAnswer& omegaconf,
                         bool debian) {
  for (size_t i = 0; i < std::size(kConversions); ++i) {
    const ConversionCase& c = kConversions[i];
    const nlohmann::ordered_json& want = omegaconf.results[i];
    Outcome got = Binders().at(c.type)(Load(std::string("v: ") + c.value));
    bool ok = testing::ErrorType(want).empty();
    std::string text = ok ? want["yaml"] : want["message"];
    EXPECT_EQ(got.ok, ok) << c.name << ": ours: " << got.text << "\nomegaconf "
                          << omegaconf.version << ": " << text;
    if (got.ok != ok) continue;
    if (ok || c.same == Same::kAll) {
      EXPECT_EQ(got.text, text) << c.name;
      continue;
    }
    EXPECT_NE(got.text.find("full_key: v"), std::string::npos) << c.name;
    if (c.same == Same::kFirstLine && !(c.differs_in_2_2 && debian)) {
      EXPECT_EQ(got.text.substr(0, got.text.find('\n')),
                text.substr(0, text.find('\n')))
          << c.name;
    }
  }
}

TEST(SchemaBind, ConvertsAndRefusesAsOmegaConf) {
  ASK_DEBIAN_OMEGACONF(debian, "merge", ConversionInput());
  ExpectConversionsAs(debian, true);
}

TEST(AnchorsSchemaBind, ConvertsAndRefusesAsOmegaConf) {
  ASK_ANCHORS_OMEGACONF(live, "merge", ConversionInput());
  ExpectConversionsAs(live, false);
}

// ---------------------------------------------------------------------------
// The struct of issue 15.

struct Data {
  std::string path = "data/digits.csv";
  double val_fraction = 0.2;
};

struct Train {
  int64_t batch_size = 64;
  double lr = 0.01;
  std::string optimizer = "adam";
  std::optional<int64_t> seed;
  std::vector<int64_t> hidden = {64};
  bool shuffle = true;
  Data data;
  std::map<std::string, std::string> tags;
  std::string name;
  int workers = 2;
  Node extra;
};

const Schema<Train>& TrainSchema() {
  static const Schema<Train>* schema = [] {
    Schema<Data> data("Data");
    data.Field("path", &Data::path, "CSV file");
    data.Field("val_fraction", &Data::val_fraction, "held out").Range(0.0, 1.0);
    auto* train = new Schema<Train>("Train");
    train->Field("batch_size", &Train::batch_size, "samples per step")
        .Range(1, 65536);
    train->Field("lr", &Train::lr, "learning rate").Range(0.0, 10.0);
    train->Field("optimizer", &Train::optimizer, "update rule")
        .Choices({"sgd", "adam", "adamw"});
    train->Field("seed", &Train::seed, "RNG seed; null: random");
    train->Field("hidden", &Train::hidden, "layer widths").Range(1, 4096);
    train->Field("shuffle", &Train::shuffle);
    train->Field("data", &Train::data, data, "the data set");
    train->Field("tags", &Train::tags, "free-form labels");
    train->Field("name", &Train::name, "run name").Required();
    train->Field("workers", &Train::workers, "loader threads");
    train->Field("extra", &Train::extra, "anything");
    return train;
  }();
  return *schema;
}

TEST(SchemaBind, FillsTheStructFromAConfig) {
  StatusOr<Train> t = TrainSchema().Bind(Load(
      "batch_size: '32'\nlr: 1\noptimizer: sgd\nseed: 7\nhidden: [8, '16']\n"
      "shuffle: 'off'\ndata:\n  path: x.csv\ntags: {a: 1}\nname: run\n"
      "extra: {k: [1]}\n"));
  ASSERT_OK(t);
  EXPECT_EQ(t->batch_size, 32);
  EXPECT_EQ(t->lr, 1.0);
  EXPECT_EQ(t->optimizer, "sgd");
  EXPECT_EQ(t->seed, std::optional<int64_t>(7));
  EXPECT_EQ(t->hidden, (std::vector<int64_t>{8, 16}));
  EXPECT_FALSE(t->shuffle);
  EXPECT_EQ(t->data.path, "x.csv");
  EXPECT_EQ(t->data.val_fraction, 0.2) << "an absent key keeps its default";
  EXPECT_EQ(t->tags, (std::map<std::string, std::string>{{"a", "1"}}));
  EXPECT_EQ(t->name, "run");
  EXPECT_EQ(t->workers, 2);
  EXPECT_EQ(ToJson(t->extra, -1), R"({"k": [1]})");
}

struct ErrorCase {
  const char* name;
  const char* yaml;
  const char* message;
};

// "???" in a config keeps a field's default: OmegaConf's merge keeps the
// destination where the source is missing (BaseContainer._map_merge;
// OmegaConf.merge(OmegaConf.structured(C), {"x": "???"}) keeps C's x = 5).
TEST(SchemaBind, MissingKeepsTheDefault) {
  struct {
    const char* name;
    const char* yaml;
    int64_t batch_size;
    std::vector<int64_t> hidden;
  } cases[] = {
      {"scalar", "name: r\nbatch_size: ???\n", 64, {64}},
      {"list", "name: r\nhidden: ???\n", 64, {64}},
      {"set", "name: r\nbatch_size: 8\nhidden: [2]\n", 8, {2}},
  };
  for (const auto& c : cases) {
    StatusOr<Train> t = TrainSchema().Bind(Load(c.yaml));
    ASSERT_OK(t) << "case " << c.name;
    EXPECT_EQ(t->batch_size, c.batch_size) << "case " << c.name;
    EXPECT_EQ(t->hidden, c.hidden) << "case " << c.name;
  }
}

TEST(SchemaBind, RefusesWithWhereAndWhat) {
  const ErrorCase cases[] = {
      {"unknown key with did-you-mean", "name: r\nlrr: 1\n",
       "train.yaml:2:1: Key 'lrr' not in 'Train' (did you mean 'lr'?)\n"
       "    full_key: lrr\n    object_type=Train"},
      {"unknown nested key", "name: r\ndata:\n  pth: x\n",
       "train.yaml:3:3: Key 'pth' not in 'Data' (did you mean 'path'?)\n"
       "    full_key: data.pth\n    object_type=Data"},
      {"required and absent", "lr: 0.1\n",
       "train.yaml:1:1: Missing mandatory value: name\n"
       "    full_key: name\n    object_type=Train"},
      {"required and ???", "name: ???\n",
       "train.yaml:1:7: Missing mandatory value: name\n"
       "    full_key: name\n    object_type=Train"},
      {"type error", "name: r\nbatch_size: many\n",
       "train.yaml:2:13: Value 'many' of type 'str' could not be converted to "
       "Integer\n    full_key: batch_size\n    object_type=Train"},
      {"out of range", "name: r\nbatch_size: 0\n",
       "train.yaml:2:13: Value '0' is out of range, expected 1 <= value <= "
       "65536\n    full_key: batch_size\n    object_type=Train"},
      {"float out of range", "name: r\ndata: {val_fraction: 1.5}\n",
       "train.yaml:2:22: Value '1.5' is out of range, expected 0.0 <= value <= "
       "1.0\n    full_key: data.val_fraction\n    object_type=Data"},
      {"list item out of range", "name: r\nhidden: [8, 0]\n",
       "train.yaml:2:13: Value '0' is out of range, expected 1 <= value <= "
       "4096\n    full_key: hidden[1]\n    object_type=Train"},
      {"not a choice", "name: r\noptimizer: adamm\n",
       "train.yaml:2:12: Invalid value 'adamm', expected one of [sgd, adam, "
       "adamw] (did you mean 'adam' or 'adamw'?)\n    full_key: optimizer\n"
       "    object_type=Train"},
      {"null for a non-optional field", "name: r\nlr: null\n",
       "train.yaml:2:5: Incompatible value 'None' for field of type 'float'\n"
       "    full_key: lr\n    object_type=Train"},
      {"null for a struct", "name: r\ndata: null\n",
       "train.yaml:2:7: field 'data' is not Optional\n"
       "    full_key: data\n    object_type=Train"},
      {"scalar for a struct", "name: r\ndata: 5\n",
       "train.yaml:2:7: Merge error: int is not a subclass of Data. value: 5\n"
       "    full_key: data\n    object_type=Train"},
      {"int beyond 32 bits", "name: r\nworkers: 3000000000\n",
       "train.yaml:2:10: Value '3000000000' does not fit in a 32-bit int\n"
       "    full_key: workers\n    object_type=Train"},
      {"not a map", "[1]\n",
       "train.yaml:1:1: Invalid type assigned: list is not a subclass of "
       "Train\n    full_key: \n    object_type=Train"},
  };
  for (const ErrorCase& c : cases) {
    StatusOr<Train> t = TrainSchema().Bind(Load(c.yaml, "train.yaml"));
    ASSERT_FALSE(t.ok()) << c.name;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(t.status().message(), c.message) << c.name;
  }
}

// ---------------------------------------------------------------------------
// The defaults node is what OmegaConf.structured gives the same dataclass
// (omegaconf_cases.py's `train`: Train and Data above, in Python).

TEST(SchemaToNode, IsWhatOmegaConfStructuredGives) {
  ASK_DEBIAN_OMEGACONF(debian, "train", nlohmann::json::array());
  EXPECT_EQ(ToYaml(TrainSchema().ToNode()), debian.results[0]);
}

TEST(AnchorsSchemaToNode, IsWhatOmegaConfStructuredGives) {
  ASK_ANCHORS_OMEGACONF(live, "train", nlohmann::json::array());
  EXPECT_EQ(ToYaml(TrainSchema().ToNode()), live.results[0]);
}

TEST(SchemaToNode, BindsItsOwnDefaultsOnceRequiredAreGiven) {
  Node config = TrainSchema().ToNode();
  config.Set("name", Node::String("r"));
  StatusOr<Train> t = TrainSchema().Bind(config);
  ASSERT_OK(t);
  EXPECT_EQ(ToYaml(TrainSchema().ToNode(*t)), ToYaml(config));
}

// ---------------------------------------------------------------------------
// Overrides in struct mode, before composition.

TEST(SchemaCheckOverride, ChecksKeysAndValues) {
  struct OverrideCase {
    const char* name;
    const char* override;
    const char* message;  // "" when accepted
  };
  const OverrideCase cases[] = {
      {"a field", "lr=0.1", ""},
      {"text for an int", "batch_size='32'", ""},
      {"a nested field", "data.path=x.csv", ""},
      {"a whole struct", "data={path: a, val_fraction: 0.5}", ""},
      {"a map item", "tags.team=1", ""},
      {"a list", "hidden=[1,2]", ""},
      {"an interpolation", "lr=${data.val_fraction}", ""},
      {"a new key with +", "+lrr=1", ""},
      {"++ on a field", "++lr=1", ""},
      {"delete a field", "~seed", ""},
      {"a config group", "db/engine=postgres", ""},
      {"a package", "optimizer@x=sgd", ""},
      {"hydra's own", "hydra.run.dir=out", ""},
      {"a sweep", "batch_size=1,2", ""},
      {"bad value", "batch_size=abc",
       "Error merging override batch_size=abc\nValue 'abc' of type 'str' "
       "could not be converted to Integer\n    full_key: batch_size\n"
       "    object_type=Train"},
      {"unknown key", "lrr=1",
       "Could not override 'lrr'.\nTo append to your config use +lrr=1\n"
       "Key 'lrr' not in 'Train' (did you mean 'lr'?)\n    full_key: lrr\n"
       "    object_type=Train"},
      {"unknown nested key", "data.pth=x",
       "Could not override 'data.pth'.\nTo append to your config use "
       "+data.pth=x\nKey 'pth' not in 'Data' (did you mean 'path'?)\n"
       "    full_key: data.pth\n    object_type=Data"},
      {"+ on a field", "+lr=1",
       "Could not append to config. An item is already at 'lr'.\nEither "
       "remove + prefix: 'lr=1'\nOr add a second + to add or override 'lr': "
       "'++lr=1'"},
      // Hydra takes + over a null (or "???") default; whether the config
      // set it is composition's to say (ComposeRequest::declared).
      {"+ on a null field", "+seed=1", ""},
      {"+ on a required field", "+name=x", ""},
      {"+ on a null field, typed", "+seed=x",
       "Error merging override +seed=x\nValue 'x' of type 'str' could not be "
       "converted to Integer\n    full_key: seed\n    object_type=Train"},
      {"delete an unknown key", "~sed",
       "Could not delete from config. Key 'sed' not in 'Train' (did you mean "
       "'seed'?)\n    full_key: sed\n    object_type=Train"},
      {"nested out of range", "data.val_fraction=2",
       "Error merging override data.val_fraction=2\nValue '2.0' is out of "
       "range, expected 0.0 <= value <= 1.0\n    full_key: data.val_fraction\n"
       "    object_type=Data"},
      {"not a choice", "optimizer=sgdd",
       "Error merging override optimizer=sgdd\nInvalid value 'sgdd', expected "
       "one of [sgd, adam, adamw] (did you mean 'sgd'?)\n"
       "    full_key: optimizer\n    object_type=Train"},
      {"bad list item", "hidden=[1,x]",
       "Error merging override hidden=[1,x]\nValue 'x' of type 'str' could "
       "not be converted to Integer\n    full_key: hidden[1]\n"
       "    object_type=Train"},
      {"bad map item", "tags.team=[1]",
       "Error merging override tags.team=[1]\nCannot convert 'ListConfig' to "
       "string: '[1]'\n    full_key: tags.team\n    object_type=Train"},
      {"a scalar for a struct", "data=5",
       "Error merging override data=5\nMerge error: int is not a subclass of "
       "Data. value: 5\n    full_key: data\n    object_type=Train"},
      {"a bad key in a struct value", "data={pth: a}",
       "Error merging override data={pth: a}\nKey 'pth' not in 'Data' (did "
       "you mean 'path'?)\n    full_key: data.pth\n    object_type=Data"},
      {"a bad sweep choice", "batch_size=1,x",
       "Error merging override batch_size=1,x\nValue 'x' of type 'str' could "
       "not be converted to Integer\n    full_key: batch_size\n"
       "    object_type=Train"},
  };
  for (const auto& c : cases) {
    StatusOr<Override> o = ParseOverride(c.override);
    ASSERT_OK(o) << c.name;
    Status st = TrainSchema().CheckOverride(*o);
    if (std::string(c.message).empty()) {
      EXPECT_OK(st) << c.name;
    } else {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.name;
      EXPECT_EQ(st.message(), c.message) << c.name;
    }
  }
}

// ---------------------------------------------------------------------------
// Printing.

TEST(SchemaYaml, ShowsDefaultsWithTypesDocsAndConstraints) {
  EXPECT_EQ(TrainSchema().Yaml(),
            "# Train\n"
            "batch_size: 64  # int, samples per step, range [1, 65536]\n"
            "lr: 0.01  # float, learning rate, range [0.0, 10.0]\n"
            "optimizer: adam  # str, update rule, one of [sgd, adam, adamw]\n"
            "seed: null  # Optional[int], RNG seed; null: random\n"
            "hidden: [64]  # List[int], layer widths, range [1, 4096]\n"
            "shuffle: true  # bool\n"
            "data:  # Data, the data set\n"
            "  path: data/digits.csv  # str, CSV file\n"
            "  val_fraction: 0.2  # float, held out, range [0.0, 1.0]\n"
            "tags: {}  # Dict[str, str], free-form labels\n"
            "name: ???  # str, run name, required\n"
            "workers: 2  # int, loader threads\n"
            "extra: null  # Any, anything\n");
}

TEST(SchemaJsonSchema, DescribesEachField) {
  nlohmann::json s = TrainSchema().JsonSchema();
  EXPECT_EQ(s["$schema"], "http://json-schema.org/draft-07/schema#");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], nlohmann::json::array({"name"}));
  const nlohmann::json& p = s["properties"];
  // A typed field also takes "???" or an interpolation, as a config may.
  const nlohmann::json text = {{"type", "string"},
                               {"pattern", "^[?][?][?]$|[$][{]"}};
  EXPECT_EQ(p["batch_size"],
            nlohmann::json::parse(
                R"({"anyOf": [{"type": "integer", "minimum": 1,)"
                R"( "maximum": 65536}, )" +
                text.dump() +
                R"(], "default": 64, "description": "samples per step"})"));
  EXPECT_EQ(p["optimizer"]["anyOf"][0]["enum"],
            nlohmann::json::array({"sgd", "adam", "adamw"}));
  EXPECT_EQ(p["seed"]["anyOf"][0]["type"],
            nlohmann::json::array({"integer", "null"}));
  EXPECT_EQ(p["seed"]["default"], nullptr);
  EXPECT_EQ(p["hidden"]["anyOf"][0]["items"]["anyOf"][0]["type"], "integer");
  EXPECT_EQ(p["tags"]["anyOf"][0]["additionalProperties"],
            nlohmann::json({{"type", "string"}}))
      << "a plain string needs no alternative";
  EXPECT_EQ(p["name"],
            nlohmann::json({{"type", "string"}, {"description", "run name"}}));
  EXPECT_EQ(p["data"]["properties"]["val_fraction"]["anyOf"][0]["maximum"],
            1.0);
  EXPECT_EQ(p["data"]["additionalProperties"], false);
  EXPECT_EQ(p["extra"],
            nlohmann::json({{"default", nullptr}, {"description", "anything"}}))
      << "Any takes anything";
}

constexpr char kValidate[] = R"(
import json, sys, yaml
import jsonschema
cases = json.load(open(sys.argv[1]))
v = jsonschema.Draft7Validator(cases["schema"])
jsonschema.Draft7Validator.check_schema(cases["schema"])
# Each error with the reasons each alternative of an anyOf gave, nested.
def messages(e):
    return [e.message] + [m for c in e.context for m in messages(c)]
print(json.dumps([[m for e in v.iter_errors(yaml.safe_load(d)) for m in messages(e)]
                  for d in cases["docs"]]))
)";

TEST(SchemaJsonSchema, AValidatorAcceptsGoodAndRefusesBadConfigs) {
  struct DocCase {
    const char* name;
    const char* yaml;
    const char* error;  // part of the validator's message; "" when valid
  };
  const DocCase cases[] = {
      {"good", "name: r\nbatch_size: 32\nseed: null\ndata: {path: a.csv}\n",
       ""},
      {"good, only the required key", "name: r\n", ""},
      {"good, interpolations and ???",
       "name: r\nlr: ${data.val_fraction}\nhidden: ['${x}', 2]\nseed: ???\n"
       "optimizer: ${oc.env:OPT}\n",
       ""},
      {"unknown key", "name: r\nlrr: 1\n", "'lrr' was unexpected"},
      {"nested unknown key", "name: r\ndata: {pth: x}\n",
       "'pth' was unexpected"},
      {"wrong type", "name: r\nbatch_size: many\n", "is not of type 'integer'"},
      {"out of range", "name: r\nbatch_size: 0\n",
       "less than the minimum of 1"},
      {"not a choice", "name: r\noptimizer: adamm\n", "'adamm' is not one of"},
      {"missing required", "lr: 0.1\n", "'name' is a required property"},
      {"bad list item", "name: r\nhidden: [1, x]\n",
       "is not of type 'integer'"},
      {"a str field given a list", "name: [1]\n", "is not of type 'string'"},
  };
  nlohmann::json input = {{"schema", TrainSchema().JsonSchema()},
                          {"docs", nlohmann::json::array()}};
  for (const DocCase& c : cases) input["docs"].push_back(c.yaml);
  bool skip = false;
  std::string out = RunPython(kValidate, input.dump(), "jsonschema", &skip);
  if (skip) GTEST_SKIP() << "python3-jsonschema is not installed";
  nlohmann::json got = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(got.is_array()) << out;
  ASSERT_EQ(got.size(), std::size(cases));
  for (size_t i = 0; i < got.size(); ++i) {
    std::string errors = got[i].dump();
    if (std::string(cases[i].error).empty()) {
      EXPECT_TRUE(got[i].empty()) << cases[i].name << ": " << errors;
    } else {
      EXPECT_NE(errors.find(cases[i].error), std::string::npos)
          << cases[i].name << ": " << errors;
    }
  }
}

}  // namespace
}  // namespace trialshim::config
