// Tests of ParseOverride / ParseOverrideValue against Hydra 1.3.2: the
// reference test vectors by name, every case Hydra's own parser produced in
// tests/data/override_grammar/hydra_cases.json, the error format (column and
// caret) and the places where trialshim deliberately differs. With the
// anchors (Anchors*), every input parsed by Hydra's parser now.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/base/number_format.h"
#include "trialshim/config/override.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

using nlohmann::json;

Node S(const char* s) { return Node::String(s); }
Node I(int64_t i) { return Node::Int(i); }
Node F(double d) { return Node::Double(d); }
Node B(bool b) { return Node::Bool(b); }
Node L(Node::List items) { return Node::MakeList(std::move(items)); }
Node M(Node::Map entries) { return Node::MakeMap(std::move(entries)); }

// The typed JSON form hydra_cases.json uses.
json Typed(const Node& n) {
  switch (n.type()) {
    case Node::Type::kNull:
      return {{"t", "null"}};
    case Node::Type::kBool:
      return {{"t", "bool"}, {"v", n.AsBool()}};
    case Node::Type::kInt:
      return {{"t", "int"}, {"v", std::to_string(n.AsInt())}};
    case Node::Type::kDouble:
      return {{"t", "float"}, {"v", FormatPythonFloat(n.AsDouble())}};
    case Node::Type::kString:
      return {{"t", "str"}, {"v", n.AsString()}};
    case Node::Type::kList: {
      json a = json::array();
      for (const Node& x : n.AsList()) a.push_back(Typed(x));
      return {{"t", "list"}, {"v", a}};
    }
    case Node::Type::kMap: {
      json a = json::array();
      for (const auto& [k, v] : n.AsMap())
        a.push_back(json::array({k, Typed(v)}));
      return {{"t", "dict"}, {"v", a}};
    }
  }
  return {};
}

const char* TypeName(OverrideType t) {
  switch (t) {
    case OverrideType::kChange:
      return "CHANGE";
    case OverrideType::kAdd:
      return "ADD";
    case OverrideType::kForceAdd:
      return "FORCE_ADD";
    case OverrideType::kDelete:
      return "DEL";
  }
  return "?";
}

const char* KindName(ValueKind k) {
  switch (k) {
    case ValueKind::kElement:
      return "ELEMENT";
    case ValueKind::kSimpleChoiceSweep:
      return "SIMPLE_CHOICE_SWEEP";
    case ValueKind::kChoiceSweep:
      return "CHOICE_SWEEP";
    case ValueKind::kRangeSweep:
      return "RANGE_SWEEP";
    case ValueKind::kIntervalSweep:
      return "INTERVAL_SWEEP";
    case ValueKind::kGlob:
      return "GLOB_CHOICE_SWEEP";
  }
  return "?";
}

const std::string kGrammar =
    std::string(TRIALSHIM_TEST_DATA_DIR) + "/override_grammar";

// ParseOverride on every case of <dir>/hydra_cases.json makes what Hydra
// made of it, or refuses where Hydra (or the README's rules) refused.
void ExpectParsesLikeHydra(const std::string& dir) {
  std::ifstream in(dir + "/hydra_cases.json");
  ASSERT_TRUE(in) << "missing " << dir << "/hydra_cases.json";
  json cases = json::parse(in);
  ASSERT_GT(cases.size(), 2000u);
  int parsed = 0, refused = 0;
  for (size_t n = 0; n < cases.size(); ++n) {
    const json& c = cases[n];
    const std::string input = c["input"];
    const std::string name = "#" + std::to_string(n) + " " + input;
    StatusOr<Override> got = ParseOverride(input);
    if (c.contains("error")) {
      ++refused;
      ASSERT_FALSE(got.ok())
          << "case " << name << ": Hydra refused it: " << c["error"];
      const std::string& msg = got.status().message();
      EXPECT_NE(msg.find(c["contains"].get<std::string>()), std::string::npos)
          << "case " << name << "\n  ours:  " << msg
          << "\n  Hydra: " << c["error"];
      continue;
    }
    ++parsed;
    ASSERT_TRUE(got.ok()) << "case " << name << ": " << got.status().message();
    EXPECT_EQ(TypeName(got->type), c["type"].get<std::string>())
        << "case " << name;
    EXPECT_EQ(got->key_or_group, c["key"].get<std::string>())
        << "case " << name;
    if (c["package"].is_null()) {
      EXPECT_FALSE(got->package.has_value()) << "case " << name;
    } else {
      EXPECT_EQ(got->package.value_or("<none>"),
                c["package"].get<std::string>())
          << "case " << name;
    }
    if (c["value_type"].is_null()) {
      EXPECT_FALSE(got->value.has_value()) << "case " << name;
      continue;
    }
    EXPECT_EQ(KindName(got->value_kind), c["value_type"].get<std::string>())
        << "case " << name;
    ASSERT_TRUE(got->value.has_value()) << "case " << name;
    if (!c["value"].is_null()) {
      EXPECT_EQ(Typed(*got->value), c["value"]) << "case " << name;
    }
    EXPECT_EQ(got->input, input) << "case " << name;
  }
  EXPECT_GT(parsed, 500);
  EXPECT_GT(refused, 500);
}

TEST(OverrideParserTest, EveryCaseHydraProduced) {
  ExpectParsesLikeHydra(kGrammar);
}

// Hydra's parser reads every input again (generate.py): it must make what
// hydra_cases.json says, and ParseOverride what Hydra makes now.
TEST(AnchorsOverrideParser, RealHydraParsesTheRecordedInputs) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir live;
  testing::Finished gen = testing::RunAnchorsScript(
      "tests/data/override_grammar/generate.py", {"--out", live.path()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(testing::FirstDifference(kGrammar + "/hydra_cases.json",
                                     live.Join("hydra_cases.json")),
            "")
      << "Hydra's parser no longer makes what hydra_cases.json says: run "
         "tests/data/override_grammar/generate.py (its header says how)";
  ExpectParsesLikeHydra(live.path());
}

struct ValueCase {
  const char* name;
  const char* value;  // after "key="
  Node want;
};

// hydra-behaviour.md section 2, rows with an element result.
TEST(OverrideParserTest, ReferenceVectors) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<ValueCase> cases = {
      {"plain", "value", S("value")},
      {"quoted_commas", "'1,2,3'", S("1,2,3")},
      {"quoted_unicode", "'שלום'", S("שלום")},
      {"str_dash_int", "value-123", S("value-123")},
      {"str_dash_float", "value-1.0", S("value-1.0")},
      {"str_dash_bool", "value-true", S("value-true")},
      {"empty", "", S("")},
      {"quoted_spaces", "'foo , bar'", S("foo , bar")},
      {"str_of_list", "str([1,2])", L({S("1"), S("2")})},
      {"int_underscore", "10_0", I(100)},
      {"bad_underscores", "1___0___", S("1___0___")},
      {"float_underscore", "3.1_4", F(3.14)},
      {"float_exp", "1e-05", F(1e-05)},
      {"float_neg_exp", "-10e1", F(-100.0)},
      {"inf", "inf", F(inf)},
      {"INF", "INF", F(inf)},
      {"neg_inf", "-inf", F(-inf)},
      {"plus_inf", "+inf", F(inf)},
      {"bool_mixed", "trUe", B(true)},
      {"bool_upper", "FALSE", B(false)},
      {"null", "null", Node::Null()},
      {"int_then_id", "10abc", S("10abc")},
      {"float_then_id", "0.foo", S("0.foo")},
      {"dotted", "list.0.bar", S("list.0.bar")},
      {"unquoted_chars", "/-\\+.$%*@?|", S("/-\\+.$%*@?|")},
      {"windows_path", "c:\\foo\\a-b.txt", S("c:\\foo\\a-b.txt")},
      {"esc_comma", "a\\,b", S("a,b")},
      {"esc_colon", "a\\:b", S("a:b")},
      {"esc_equal", "a\\=b", S("a=b")},
      {"esc_space", "\\ ab", S(" ab")},
      {"esc_backslash", "ab\\\\", S("ab\\")},
      {"esc_parens", "f\\(a\\, b\\)", S("f(a, b)")},
      {"esc_braces", "$\\{foo.bar\\}", S("${foo.bar}")},
      {"inner_ws_kept", "a b c\t-\t1 2 3", S("a b c\t-\t1 2 3")},
      {"outer_ws_trimmed", " abc-123 ", S("abc-123")},
      {"interpolation_comma", "${foo:1,2,3}", S("${foo:1,2,3}")},
      {"quoted_escaped_quote", "'foo \\'bar'", S("foo 'bar")},
      {"quoted_backslashes_kept", "'foo\\\\bar'", S("foo\\\\bar")},
      {"quoted_trailing_backslash", "'foo bar\\\\'", S("foo bar\\")},
      {"quoted_dollar", "'a \\${b}'", S("a \\${b}")},
      {"quoted_null", "'null'", S("null")},
      {"quoted_int", "'100'", S("100")},
      {"quoted_bool", "'true'", S("true")},
      {"dict_typed_keys", "{123: 1, -1: 3}", M({{"123", I(1)}, {"-1", I(3)}})},
      {"dict_float_keys", "{3.14: 0, 1e3: 1}",
       M({{"3.14", I(0)}, {"1000.0", I(1)}})},
      {"dict_bool_key", "{true: 1}", M({{"true", I(1)}})},
      {"dict_ws_key", "{white spaces: 1}", M({{"white spaces", I(1)}})},
      {"trim_tab", " \tvalue \t", S("value")},
      {"inner_ws", "value \t 123", S("value \t 123")},
      {"int_of_float", "int(10.0)", I(10)},
      {"str_of_float", "str(10.0)", S("10.0")},
      {"bool_of_float", "bool(10.0)", B(true)},
      {"str_of_exp", "str(1e6)", S("1000000.0")},
      {"sort_list_reverse", "sort([2,3,1],reverse=true)",
       L({I(3), I(2), I(1)})},
      {"leading_zero", "01", S("01")},
      {"True", "True", B(true)},
      {"yes", "yes", S("yes")},
      {"None", "None", S("None")},
      {"escaped_equals", "epoch\\=999.ckpt", S("epoch=999.ckpt")},
      {"gs_uri", "gs://b/p.txt", S("gs://b/p.txt")},
      {"colon", "a:b", S("a:b")},
      {"email", "user@x.com", S("user@x.com")},
      {"choice_key_name", "reverse", S("reverse")},
  };
  for (const ValueCase& c : cases) {
    StatusOr<Override> o = ParseOverride(std::string("key=") + c.value);
    ASSERT_TRUE(o.ok()) << "case " << c.name << ": " << o.status().message();
    EXPECT_EQ(o->value_kind, ValueKind::kElement) << "case " << c.name;
    ASSERT_TRUE(o->value.has_value()) << "case " << c.name;
    EXPECT_EQ(*o->value, c.want)
        << "case " << c.name << ": got " << Typed(*o->value);
    StatusOr<Node> v = ParseOverrideValue(c.value);
    ASSERT_TRUE(v.ok()) << "case " << c.name << ": " << v.status().message();
    EXPECT_EQ(*v, c.want) << "case " << c.name;
  }
}

TEST(OverrideParserTest, NanIsAFloat) {
  for (const char* text : {"nan", "NaN", "-nan", "float(nan)"}) {
    StatusOr<Node> v = ParseOverrideValue(text);
    ASSERT_TRUE(v.ok()) << "case " << text;
    ASSERT_TRUE(v->is_double()) << "case " << text;
    EXPECT_TRUE(std::isnan(v->AsDouble())) << "case " << text;
  }
}

struct FormCase {
  const char* name;
  const char* input;
  OverrideType type;
  const char* key;
  std::optional<std::string> package;
  std::optional<Node> value;
  ValueKind kind;
};

TEST(OverrideParserTest, FormsKeysAndSweeps) {
  const std::vector<FormCase> cases = {
      {"change",
       "key=value",
       OverrideType::kChange,
       "key",
       {},
       S("value"),
       ValueKind::kElement},
      {"add",
       "+key=value",
       OverrideType::kAdd,
       "key",
       {},
       S("value"),
       ValueKind::kElement},
      {"force_add",
       "++key=value",
       OverrideType::kForceAdd,
       "key",
       {},
       S("value"),
       ValueKind::kElement},
      {"delete",
       "~x",
       OverrideType::kDelete,
       "x",
       {},
       std::nullopt,
       ValueKind::kElement},
      {"delete_if",
       "~x=10",
       OverrideType::kDelete,
       "x",
       {},
       I(10),
       ValueKind::kElement},
      {"delete_empty",
       "~x=",
       OverrideType::kDelete,
       "x",
       {},
       S(""),
       ValueKind::kElement},
      {"dash_key",
       "a-b=1",
       OverrideType::kChange,
       "a-b",
       {},
       I(1),
       ValueKind::kElement},
      {"dollar_key",
       "$a=1",
       OverrideType::kChange,
       "$a",
       {},
       I(1),
       ValueKind::kElement},
      {"dot_path",
       "a.0.b=1",
       OverrideType::kChange,
       "a.0.b",
       {},
       I(1),
       ValueKind::kElement},
      {"group_path",
       "hydra/launcher=x",
       OverrideType::kChange,
       "hydra/launcher",
       {},
       S("x"),
       ValueKind::kElement},
      {"group_pkg", "group@pkg.sub=x", OverrideType::kChange, "group",
       "pkg.sub", S("x"), ValueKind::kElement},
      {"group_global", "group@_global_=x", OverrideType::kChange, "group",
       "_global_", S("x"), ValueKind::kElement},
      {"group_empty_pkg", "group@=x", OverrideType::kChange, "group", "",
       S("x"), ValueKind::kElement},
      {"name_pkg", "key@_name_=value", OverrideType::kChange, "key", "_name_",
       S("value"), ValueKind::kElement},
      {"empty_key",
       "=1",
       OverrideType::kChange,
       "",
       {},
       I(1),
       ValueKind::kElement},
      {"numeric_dot_path",
       "1.2=x",
       OverrideType::kChange,
       "1.2",
       {},
       S("x"),
       ValueKind::kElement},
      {"simple_sweep",
       "key=1,2,3",
       OverrideType::kChange,
       "key",
       {},
       L({I(1), I(2), I(3)}),
       ValueKind::kSimpleChoiceSweep},
      {"sweep_ws",
       "key=1 ,  2,\t\t3",
       OverrideType::kChange,
       "key",
       {},
       L({I(1), I(2), I(3)}),
       ValueKind::kSimpleChoiceSweep},
      {"choice",
       "key=choice(1)",
       OverrideType::kChange,
       "key",
       {},
       L({I(1)}),
       ValueKind::kChoiceSweep},
      {"choice_ws",
       "key=choice\t(  1\t\t )",
       OverrideType::kChange,
       "key",
       {},
       L({I(1)}),
       ValueKind::kChoiceSweep},
      {"list_sweep",
       "key=[1,2],[3,4]",
       OverrideType::kChange,
       "key",
       {},
       L({L({I(1), I(2)}), L({I(3), I(4)})}),
       ValueKind::kSimpleChoiceSweep},
      {"range",
       "key=range(0,2)",
       OverrideType::kChange,
       "key",
       {},
       L({I(0), I(1)}),
       ValueKind::kRangeSweep},
      {"range_step",
       "key=range(1,5,2)",
       OverrideType::kChange,
       "key",
       {},
       L({I(1), I(3)}),
       ValueKind::kRangeSweep},
      {"range_float",
       "key=range(10.0, 11.0)",
       OverrideType::kChange,
       "key",
       {},
       L({F(10.0)}),
       ValueKind::kRangeSweep},
      {"range_stop_only",
       "key=range(3)",
       OverrideType::kChange,
       "key",
       {},
       L({I(0), I(1), I(2)}),
       ValueKind::kRangeSweep},
      {"range_negative",
       "key=range(-10)",
       OverrideType::kChange,
       "key",
       {},
       L({}),
       ValueKind::kRangeSweep},
      // Hydra's Decimal arithmetic (28 digits), not double sums.
      {"range_decimal",
       "key=range(0,0.35,0.1)",
       OverrideType::kChange,
       "key",
       {},
       L({F(0.0), F(0.1), F(0.2), F(0.3)}),
       ValueKind::kRangeSweep},
      {"interval",
       "key=interval(0,1)",
       OverrideType::kChange,
       "key",
       {},
       Node::Null(),
       ValueKind::kIntervalSweep},
      {"tagged",
       "key=tag(a,b,choice([1,2],[3,4]))",
       OverrideType::kChange,
       "key",
       {},
       L({L({I(1), I(2)}), L({I(3), I(4)})}),
       ValueKind::kChoiceSweep},
      {"sort_sweep",
       "key=sort(3,2,1)",
       OverrideType::kChange,
       "key",
       {},
       L({I(1), I(2), I(3)}),
       ValueKind::kSimpleChoiceSweep},
      {"glob",
       "key=glob(a*,exclude=ab)",
       OverrideType::kChange,
       "key",
       {},
       Node::Null(),
       ValueKind::kGlob},
      {"interpolation_not_sweep",
       "key=${oc.env:HOME,/tmp}",
       OverrideType::kChange,
       "key",
       {},
       S("${oc.env:HOME,/tmp}"),
       ValueKind::kElement},
  };
  for (const FormCase& c : cases) {
    StatusOr<Override> o = ParseOverride(c.input);
    ASSERT_TRUE(o.ok()) << "case " << c.name << ": " << o.status().message();
    EXPECT_EQ(o->type, c.type) << "case " << c.name;
    EXPECT_EQ(o->key_or_group, c.key) << "case " << c.name;
    EXPECT_EQ(o->package, c.package) << "case " << c.name;
    EXPECT_EQ(o->value_kind, c.kind) << "case " << c.name;
    EXPECT_EQ(o->is_sweep(), c.kind != ValueKind::kElement)
        << "case " << c.name;
    EXPECT_EQ(o->value, c.value) << "case " << c.name;
    EXPECT_EQ(o->input, c.input) << "case " << c.name;
  }
}

TEST(OverrideParserTest, KeyWithPackage) {
  struct Case {
    const char* input;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{{"db=x", "db"},
                                         {"db@src=x", "db@src"},
                                         {"db@=x", "db@"},
                                         {"a/b@_global_=x", "a/b@_global_"}}) {
    StatusOr<Override> o = ParseOverride(c.input);
    ASSERT_TRUE(o.ok()) << "case " << c.input;
    EXPECT_EQ(o->KeyWithPackage(), c.want) << "case " << c.input;
  }
}

struct ErrorCase {
  const char* name;
  const char* input;
  std::vector<std::string> contains;
  int caret_column;  // 1-based column of the '^'
};

TEST(OverrideParserTest, ErrorsSayWhatAndWhereAndWhatWasExpected) {
  const std::vector<ErrorCase> cases = {
      {"illegal_char",
       "key=a#b",
       {"Error parsing override 'key=a#b': illegal character '#' at column 6",
        "LexerNoViableAltException", "quote the value: key='a#b'"},
       6},
      {"second_equal",
       "key=epoch=999.ckpt",
       {"mismatched input '=' expecting <EOF> at column 10",
        "quote the value: key='epoch=999.ckpt'"},
       10},
      {"missing_equal",
       "k",
       {"missing EQUAL at '<EOF>'", "expected '=' after the key"},
       2},
      {"trailing_junk",
       "key=[]aa",
       {"extraneous input 'aa' expecting <EOF>"},
       7},
      {"unterminated_quote",
       "key='a\\'",
       {"unterminated quoted string at column 5", "must be doubled"},
       5},
      {"non_ascii",
       "key=日本",
       {"non-ASCII character '日' at column 5", "key='日本'"},
       5},
      {"trailing_comma",
       "key=a,",
       {"mismatched input '<EOF>'", "a,b is a sweep"},
       7},
      {"leading_comma", "key=,a", {"extraneous input ','"}, 5},
      {"list_trailing_comma",
       "key=[1,]",
       {"no viable alternative at input '[1,]'"},
       8},
      {"quoted_dict_key",
       "key={'a':1}",
       {"no viable alternative at input '{'a''", "keys can not be quoted"},
       6},
      {"nested_braces",
       "key=${a:{b:c}}",
       {"extraneous input '}' expecting <EOF>"},
       14},
      {"key_space", "a b=1", {"illegal space in the key at column 2"}, 2},
      {"double_dash", "--lr=1", {"no leading '--'"}, 1},
      {"two_prefixes", "+~k=1", {"extraneous input '~'", "only one prefix"}, 2},
      {"group_dot", "a/b.c=x", {"mismatched input 'b.c' expecting ID"}, 3},
      {"two_packages", "a@b@c=1", {"mismatched input '@' expecting EQUAL"}, 4},
      {"unknown_function",
       "key=chioce(a,b)",
       {"HydraException while evaluating 'chioce(a,b)': Unknown function "
        "'chioce'",
        "did you mean 'choice'?", "available: bool,choice,float"},
       5},
      {"cast_overflow",
       "key=int(inf)",
       {"OverflowError while evaluating 'int(inf)': cannot convert float "
        "infinity to integer"},
       5},
      {"bad_bool",
       "key=bool('10')",
       {"ValueError while evaluating 'bool('10')': Cannot cast '10' to bool"},
       5},
      {"unorderable",
       "key=sort(3,2,str(1))",
       {"TypeError while evaluating 'sort(3,2,str(1))': '<' not supported "
        "between "
        "instances of 'str' and 'int'"},
       5},
      {"positional_after_kw",
       "key=f(a=1,2)",
       {"positional argument follows keyword argument"},
       11},
      {"empty_choice", "key=choice()", {"empty choice is not legal"}, 5},
  };
  for (const ErrorCase& c : cases) {
    StatusOr<Override> o = ParseOverride(c.input);
    ASSERT_FALSE(o.ok()) << "case " << c.name;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    const std::string& msg = o.status().message();
    for (const std::string& want : c.contains) {
      EXPECT_NE(msg.find(want), std::string::npos)
          << "case " << c.name << ": wanted '" << want << "' in:\n"
          << msg;
    }
    // Line 2 is the override, line 3 the caret under the column.
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl; (nl = msg.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      lines.push_back(msg.substr(start, nl - start));
    }
    lines.push_back(msg.substr(start));
    ASSERT_GE(lines.size(), 4u) << "case " << c.name << ":\n" << msg;
    EXPECT_EQ(lines[1], "  " + std::string(c.input)) << "case " << c.name;
    EXPECT_EQ(lines[2], std::string(c.caret_column + 1, ' ') + "^")
        << "case " << c.name;
    EXPECT_NE(lines.back().find("override_grammar"), std::string::npos)
        << "case " << c.name;
  }
}

// Every nesting level recurses; 10,000 of them (one 20 KB argv item) used
// to overflow the stack. 128 levels parse, one more is refused clearly.
TEST(OverrideParserTest, NestingIsBoundedAt128Levels) {
  auto nest = [](const std::string& open, const std::string& inner,
                 const std::string& close, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += inner;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  struct Case {
    std::string name;
    std::string value;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"128 lists", nest("[", "", "]", 128), true},
      {"128 dicts", nest("{a:", "1", "}", 128), true},
      {"128 calls", nest("str(", "1", ")", 128), true},
      {"129 lists", nest("[", "", "]", 129), false},
      {"129 dicts", nest("{a:", "1", "}", 129), false},
      {"129 calls", nest("str(", "1", ")", 129), false},
      {"10000 lists", nest("[", "", "]", 10000), false},
      {"10000 dicts", nest("{a:", "1", "}", 10000), false},
      {"10000 mixed", nest("[{a:f(", "1", ")}]", 3334), false},
      {"10000 unclosed", std::string(10000, '['), false},
  };
  for (const Case& c : cases) {
    StatusOr<Override> o = ParseOverride("lr=" + c.value);
    if (c.ok) {
      EXPECT_TRUE(o.ok()) << "case " << c.name << ": "
                          << o.status().message().substr(0, 300);
      continue;
    }
    ASSERT_FALSE(o.ok()) << "case " << c.name;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    const std::string& msg = o.status().message();
    EXPECT_NE(msg.find("Error parsing override"), std::string::npos)
        << "case " << c.name;
    EXPECT_NE(msg.find("nesting deeper than 128 levels"), std::string::npos)
        << "case " << c.name << ": " << msg.substr(0, 300);
    // Whole, or (over 1 KiB) around the error.
    EXPECT_NE(msg.find(c.value.size() + 3 > 1024 ? "\n  ..." : "\n  lr="),
              std::string::npos)
        << "case " << c.name << ": the override is shown";
    EXPECT_NE(msg.find('^'), std::string::npos)
        << "case " << c.name << ": a caret points at the level";
  }
  // The caret points at the 129th opening bracket: column 4 + 128.
  StatusOr<Node> v = ParseOverrideValue(nest("[", "", "]", 129));
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v, StatusIs(_, HasSubstr("at column 129")));
}

// A long override (a trial value can be 128 KiB) is not echoed whole: the
// message gives the reason first and shows a window around the error, so it
// stays short however long the input. Up to 1 KiB, the whole input is
// echoed as Hydra does.
TEST(OverrideParserTest, LongInputGivesAShortMessageReasonFirst) {
  const std::string x(100000, 'x');
  struct Case {
    std::string name;
    std::string input;
    bool value_only;     // ParseOverrideValue, else ParseOverride
    std::string reason;  // on the first line
    std::string window;  // the input around the caret
  };
  const std::vector<Case> cases = {
      {"nested 50000 deep", "lr=" + std::string(50000, '[') + std::string(50000, ']'),
       false,
       "Error parsing override: nesting deeper than 128 levels of lists, "
       "dicts and function calls at column 132; expected a flatter value (in "
       "an override of 100003 bytes)",
       "\n  ..." + std::string(80, '[') + "...\n  " + std::string(43, ' ') +
           "^"},
      {"unterminated quote", "lr='" + x, false,
       "Error parsing override: unterminated quoted string at column 4",
       "\n  lr='" + std::string(40 - 1, 'x') + "...\n     ^"},
      {"second '='", "lr=" + x + "=y", false,
       "Error parsing override: ", "=y"},
      {"sweep as a single value", x + ",y", true,
       "Ambiguous value '" + std::string(60, 'x') +
           "... (100002 bytes)': it is a sweep, but a single value was "
           "expected",
       "2. To use it as string, quote the value\n"},
  };
  for (const Case& c : cases) {
    Status st = c.value_only ? ParseOverrideValue(c.input).status()
                             : ParseOverride(c.input).status();
    ASSERT_FALSE(st.ok()) << "case " << c.name;
    const std::string& msg = st.message();
    EXPECT_LT(msg.size(), 1000u) << "case " << c.name << ": " << msg.substr(0, 2000);
    EXPECT_EQ(msg.substr(0, msg.find('\n')).rfind(c.reason, 0), 0u)
        << "case " << c.name << ": " << msg.substr(0, 1000);
    EXPECT_NE(msg.find(c.window), std::string::npos)
        << "case " << c.name << ": " << msg.substr(0, 1000);
  }
  // At 1 KiB the input is still echoed whole, as Hydra does.
  const std::string edge = "lr=" + std::string(1020, 'x') + "=";
  Status st = ParseOverride(edge).status();
  EXPECT_EQ(st.message().rfind("Error parsing override '" + edge + "': ", 0), 0u)
      << st.message();
}

TEST(OverrideParserTest, ValueErrorsAndSweepsRefusedAsSingleValues) {
  struct Case {
    const char* name;
    const char* value;
    const char* contains;
  };
  for (const Case& c : std::vector<Case>{
           {"simple_sweep", "a,b",
            "To use it as string, quote the value: 'a,b'"},
           {"choice", "choice(1,2)", "--multirun"},
           {"range", "range(3)", "it is a sweep"},
           {"equal_in_value", "x=", "Error parsing override value 'x='"},
           {"lexer", "a;b", "quote the value: 'a;b'"},
       }) {
    StatusOr<Node> v = ParseOverrideValue(c.value);
    ASSERT_FALSE(v.ok()) << "case " << c.name;
    EXPECT_THAT(v, StatusIs(_, HasSubstr(c.contains))) << "case " << c.name;
  }
  // Blanks only read as "" (as "key= " does).
  for (const char* blank : {"", " ", "\t "}) {
    StatusOr<Node> v = ParseOverrideValue(blank);
    ASSERT_TRUE(v.ok()) << "case '" << blank << "'";
    EXPECT_EQ(*v, S("")) << "case '" << blank << "'";
  }
}

// Issue 14.2: a value that is not valid interpolation syntax is refused as
// Hydra refuses it when merging the override ("Error merging override ...",
// OmegaConf's GrammarParseError, full_key); cases checked with Hydra 1.3.2.
struct GrammarCase {
  const char* input;
  const char* full_key;  // nullptr: accepted
};

const std::vector<GrammarCase>& GrammarCases() {
  static const auto* cases = new std::vector<GrammarCase>{
      {"a='${x'", "a"},        {"a=${foo bar}", "a"},
      {"+db='${x'", "db"},     {"++a.b=\"${a:'x}\"", "a.b"},
      {"a=[1,'${x']", "a[1]"}, {"a=str(${x y})", "a"},
      {"a={b:${.}}", "a.b"},   {"a=${x}", nullptr},
      {"a='\\${x'", nullptr},  // escaped: the text "${x"
      {"~a='${x'", nullptr},   // a deletion's value is only compared
      {"a=1,'${x'", nullptr},  // a sweep: refused as one elsewhere
  };
  return *cases;
}

TEST(OverrideParserTest, ValueThatIsNotAnInterpolationIsRefused) {
  for (const GrammarCase& c : GrammarCases()) {
    StatusOr<Override> o = ParseOverride(c.input);
    if (c.full_key == nullptr) {
      EXPECT_OK(o) << "case " << c.input;
      continue;
    }
    ASSERT_FALSE(o.ok()) << "case " << c.input;
    const std::string& msg = o.status().message();
    EXPECT_EQ(msg.rfind("Error merging override " + std::string(c.input) +
                            "\nGrammarParseError: ",
                        0),
              0u)
        << "case " << c.input << ": " << msg;
    EXPECT_NE(msg.find("\n    full_key: " + std::string(c.full_key)),
              std::string::npos)
        << "case " << c.input << ": " << msg;
  }
  StatusOr<Override> o = ParseOverride("a='${x'");
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message(),
            "Error merging override a='${x'\n"
            "GrammarParseError: unterminated interpolation '${x', expected "
            "'}' (column 4)\n"
            "    ${x\n"
            "       ^\n"
            "    full_key: a");
}

// Hydra 1.3.2 merging the same overrides into {a: {b: 1}}: a refused value
// fails there with OmegaConf's GrammarParseError at the same key; of
// the accepted, a plain or escaped value merges, and a deletion's value or a
// sweep fails for another reason (a value that does not match, a sweep).
TEST(AnchorsOverrideParser, HydraRefusesTheValuesWhenMerging) {
  SKIP_WITHOUT_ANCHORS();
  nlohmann::json inputs = nlohmann::json::array();
  for (const GrammarCase& c : GrammarCases()) inputs.push_back(c.input);
  testing::TempDir dir;
  testing::Finished f = testing::RunAnchorsScript(
      "tests/anchors/hydra_overrides.py",
      {"--apply", dir.Write("inputs.json", inputs.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json live = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(live.size(), GrammarCases().size()) << f.out;
  for (size_t i = 0; i < live.size(); ++i) {
    const GrammarCase& c = GrammarCases()[i];
    const std::string cause = live[i].is_object() ? live[i]["cause"] : "";
    const bool grammar = cause.rfind("GrammarParseError: ", 0) == 0;
    EXPECT_EQ(grammar, c.full_key != nullptr) << c.input << ": " << live[i];
    if (c.full_key != nullptr) {
      EXPECT_EQ(live[i]["error"],
                "Error merging override " + std::string(c.input));
      // Hydra names the key within the value it made (a list's "[1]"); we
      // name it within the config ("a[1]").
      const size_t at = cause.find("full_key: ");
      ASSERT_NE(at, std::string::npos) << c.input << ": " << cause;
      const std::string key =
          cause.substr(at + 10, cause.find('\n', at) - at - 10);
      const std::string ours = c.full_key;
      EXPECT_EQ(ours.substr(ours.size() - std::min(ours.size(), key.size())),
                key)
          << c.input << ": " << cause;
    }
  }
}

// Where trialshim refuses at parse time what Hydra accepts and fails on later.
TEST(OverrideParserTest, DeliberateDifferences) {
  struct Case {
    const char* name;
    const char* input;
    const char* contains;
  };
  for (const Case& c : std::vector<Case>{
           {"null_dict_key", "key={null: 1}", "a dict key can not be null"},
           {"int_over_64_bits", "key=9223372036854775808",
            "does not fit in 64 bits"},
           {"int_under_64_bits", "key=-9223372036854775809",
            "does not fit in 64 bits"},
           {"nested_choice", "key=choice(1,choice(2))",
            "nesting choices is not supported"},
           {"sweep_in_sweep", "key=choice(a,b),c",
            "nesting sweeps is not supported"},
           {"sweep_in_dict", "key={a:sort(2,1)}",
            "nesting sweeps is not supported"},
           {"infinite_range", "key=range(0,inf)", "bounds must be finite"},
           {"huge_range", "key=range(1000000)", "has more than 100000 values"},
           // Refused before stepping (the fuzzer's 10-second hang limit).
           {"huge_float_range",
            "key=sort(range(0,15,0.00000000000000000000000019052750066164"
            "04910),reverse=true)",
            "has more than 100000 values"},
           {"float_range_one_over", "key=range(0,10000.1,0.1)",
            "has more than 100000 values"},
           {"zero_step", "key=range(1,2,0)", "range() arg 3 must not be zero"},
       }) {
    StatusOr<Override> o = ParseOverride(c.input);
    ASSERT_FALSE(o.ok()) << "case " << c.name;
    EXPECT_THAT(o, StatusIs(_, HasSubstr(c.contains))) << "case " << c.name;
  }
  // The extremes themselves fit.
  StatusOr<Node> max = ParseOverrideValue("9223372036854775807");
  StatusOr<Node> min = ParseOverrideValue("-9223372036854775808");
  ASSERT_TRUE(max.ok() && min.ok());
  EXPECT_EQ(*max, I(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(*min, I(std::numeric_limits<int64_t>::min()));
}

TEST(OverrideParserTest, DictKeysAreTheTextJsonDumpsWrites) {
  struct Case {
    const char* name;
    const char* value;
    Node want;
  };
  const std::vector<Case> cases = {
      {"int", "{1: a}", M({{"1", S("a")}})},
      {"float", "{1e3: a}", M({{"1000.0", S("a")}})},
      {"inf", "{inf: a, -inf: b}",
       M({{"Infinity", S("a")}, {"-Infinity", S("b")}})},
      {"bool", "{TRUE: a}", M({{"true", S("a")}})},
      // Python dict keys: 1 == 1.0 == True, the first spelling stays.
      {"collision", "{1: a, true: b, 1.0: c}", M({{"1", S("c")}})},
      {"repeat", "{a: 1, b: 2, a: 3}", M({{"a", I(3)}, {"b", I(2)}})},
      {"escaped", "{a\\:b: 1, \\ c: 2}", M({{"a:b", I(1)}, {" c", I(2)}})},
  };
  for (const Case& c : cases) {
    StatusOr<Node> v = ParseOverrideValue(c.value);
    ASSERT_TRUE(v.ok()) << "case " << c.name << ": " << v.status().message();
    EXPECT_EQ(*v, c.want) << "case " << c.name << ": got " << Typed(*v);
  }
}

TEST(OverrideParserTest, ShuffleIsAPermutation) {
  StatusOr<Node> v = ParseOverrideValue("shuffle([1,2,3,4,5,6,7,8])");
  ASSERT_TRUE(v.ok()) << v.status().message();
  std::multiset<int64_t> seen;
  for (const Node& n : v->AsList()) seen.insert(n.AsInt());
  EXPECT_EQ(seen, (std::multiset<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  StatusOr<Override> o = ParseOverride("k=shuffle(a,b,c)");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->value_kind, ValueKind::kSimpleChoiceSweep);
  EXPECT_EQ(o->value->size(), 3u);
}

}  // namespace
}  // namespace trialshim::config
