// ConvertScalar: OmegaConf 2.3's conversion of a value merged into a typed
// field (as Hydra merges a config into its schema). The expectations are
// what omegaconf gives for a dataclass field of that type; the Anchors* test
// asks the anchors' omegaconf 2.3.0 again, and schema_test.cc asks it for the
// same rules through Schema<T>. The cases here pin the edges of the rules
// themselves.
#include "trialshim/config/typed_value.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testutil/omegaconf.h"
#include "trialshim/config/emit.h"

namespace trialshim::config {
namespace {

struct Case {
  const char* name;
  Node value;
  ScalarKind kind;
  const char* want;  // the result as JSON, or "" for an error
  const char* message = "";
  // Refused here, taken by OmegaConf (its ints have no bound; ours are 64
  // bits, as the C++ structs that hold them).
  bool ours = false;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"str from int", Node::Int(7), ScalarKind::kStr, R"("7")"},
      {"str from float", Node::Double(1e-3), ScalarKind::kStr, R"("0.001")"},
      {"str from bool", Node::Bool(false), ScalarKind::kStr, R"("False")"},
      {"str refuses a dict", Node::MakeMap(), ScalarKind::kStr, "",
       "Cannot convert 'DictConfig' to string: '{}'"},
      {"int from text with separators", Node::String(" -1_000\n"),
       ScalarKind::kInt, "-1000"},
      {"int refuses a float", Node::Double(2.0), ScalarKind::kInt, "",
       "Value '2.0' of type 'float' could not be converted to Integer"},
      {"int refuses a bool", Node::Bool(true), ScalarKind::kInt, "",
       "Value 'True' of type 'bool' could not be converted to Integer"},
      {"int beyond 64 bits", Node::String("99999999999999999999"),
       ScalarKind::kInt, "",
       "Value '99999999999999999999' does not fit in a 64-bit int", true},
      {"float from int", Node::Int(3), ScalarKind::kFloat, "3.0"},
      {"float from text", Node::String("1_0.5"), ScalarKind::kFloat, "10.5"},
      {"float refuses hex text", Node::String("0x10"), ScalarKind::kFloat, "",
       "Value '0x10' of type 'str' could not be converted to Float"},
      {"bool from 'Off'", Node::String("Off"), ScalarKind::kBool, "false"},
      {"bool from a negative int", Node::Int(-1), ScalarKind::kBool, "true"},
      {"bool from int text '2'", Node::String("2"), ScalarKind::kBool, "true"},
      {"bool from int text '-0_0'", Node::String(" -0_0"), ScalarKind::kBool,
       "false"},
      {"bool refuses a padded word", Node::String(" yes"), ScalarKind::kBool,
       "", "Value ' yes' is not a valid bool (type str)"},
      {"null refused", Node::Null(), ScalarKind::kFloat, "",
       "Incompatible value 'None' for field of type 'float'"},
  };
  return *cases;
}

TEST(ConvertScalar, ConvertsAndRefusesAsOmegaConf) {
  for (const Case& c : Cases()) {
    StatusOr<Node> got = ConvertScalar(c.value, c.kind);
    if (std::string(c.want).empty()) {
      ASSERT_FALSE(got.ok()) << c.name;
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.name;
      EXPECT_EQ(got.status().message(), c.message) << c.name;
    } else {
      ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().message();
      EXPECT_EQ(ToJson(*got, -1), c.want) << c.name;
    }
  }
}

// The table through omegaconf 2.3.0: each value merged into a dataclass
// field of the kind.
TEST(AnchorsConvertScalar, OmegaConfConvertsTheTableSo) {
  nlohmann::json input = nlohmann::json::array();
  for (const Case& c : Cases()) {
    input.push_back({{"type", ScalarKindName(c.kind)},
                     {"yaml", "v: " + ToJson(c.value, -1)}});
  }
  ASK_ANCHORS_OMEGACONF(live, "merge", input);
  for (size_t i = 0; i < Cases().size(); ++i) {
    const Case& c = Cases()[i];
    const nlohmann::ordered_json& r = live.results[i];
    if (c.ours) {
      EXPECT_EQ(testing::ErrorType(r), "")
          << c.name << ": " << testing::Outcome(r);
    } else if (*c.want != '\0') {
      EXPECT_EQ(r.value("json", ""), c.want)
          << c.name << ": " << testing::Outcome(r);
    } else {
      EXPECT_EQ(testing::FirstLine(r), c.message)
          << c.name << ": " << testing::Outcome(r);
    }
  }
}

TEST(ConvertScalar, KeepsTheMark) {
  Node v = Node::String("5");
  v.set_mark(Mark{nullptr, 3, 4});
  StatusOr<Node> got = ConvertScalar(v, ScalarKind::kInt);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->mark().ToString(), "3:4");
}

}  // namespace
}  // namespace trialshim::config
