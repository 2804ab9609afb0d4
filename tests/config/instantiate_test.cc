#include "trialshim/config/instantiate.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {
namespace {

// What rec.Rec records: its positional and keyword arguments.
struct Rec {
  std::vector<Value> args;
  Kwargs kwargs;
};

std::string Repr(const Value& v);

// Python's repr of a config value.
std::string Repr(const Node& n) {
  switch (n.type()) {
    case Node::Type::kNull:
      return "None";
    case Node::Type::kBool:
      return n.AsBool() ? "True" : "False";
    case Node::Type::kInt:
      return std::to_string(n.AsInt());
    case Node::Type::kDouble: {
      std::string s = std::to_string(n.AsDouble());
      while (s.back() == '0') s.pop_back();
      return s.back() == '.' ? s + "0" : s;
    }
    case Node::Type::kString:
      return "'" + n.AsString() + "'";
    case Node::Type::kList: {
      std::string out = "[";
      for (const Node& i : n.AsList()) {
        out += (out.size() > 1 ? ", " : "") + Repr(i);
      }
      return out + "]";
    }
    case Node::Type::kMap: {
      std::string out = "{";
      for (const auto& [k, v] : n.AsMap()) {
        out += (out.size() > 1 ? ", '" : "'") + k + "': " + Repr(v);
      }
      return out + "}";
    }
  }
  return "?";
}

std::string Repr(const std::vector<Value>& args, const Kwargs& kwargs) {
  std::string out = "args=[";
  for (size_t i = 0; i < args.size(); ++i) {
    out += (i ? ", " : "") + Repr(args[i]);
  }
  out += "], kwargs={";
  for (size_t i = 0; i < kwargs.size(); ++i) {
    out += (i ? ", '" : "'") + kwargs[i].first + "': " + Repr(kwargs[i].second);
  }
  return out + "}";
}

// Rec as the recording class prints itself; a Partial as
// "partial(Rec, args=[..], kw={..})" (the test script's own format).
std::string Repr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNode:
      return Repr(v.node());
    case Value::Kind::kList: {
      std::string out = "[";
      for (const Value& i : v.list()) {
        out += (out.size() > 1 ? ", " : "") + Repr(i);
      }
      return out + "]";
    }
    case Value::Kind::kMap: {
      std::string out = "{";
      for (const auto& [k, i] : v.map()) {
        out += (out.size() > 1 ? ", '" : "'") + k + "': " + Repr(i);
      }
      return out + "}";
    }
    case Value::Kind::kObject:
      break;
  }
  if (auto r = v.object().As<Rec>())
    return "Rec(" + Repr(r->args, r->kwargs) + ")";
  if (auto p = v.object().As<Partial>()) {
    std::string kw = Repr(p->bound().args, p->bound().kwargs);
    kw.replace(kw.find("kwargs="), 7, "kw=");
    return "partial(Rec, " + kw + ")";
  }
  return "<" + v.object().type_name() + ">";
}

// rec.Rec takes anything; rec.Strict(a, b=2) lists its keywords; rec.fail
// raises.
Registry TestRegistry() {
  Registry r;
  EXPECT_OK(
      r.Register<Rec>("rec.Rec",
                      [](const Arguments& a) -> StatusOr<std::shared_ptr<Rec>> {
                        return std::make_shared<Rec>(Rec{a.args, a.kwargs});
                      },
                      {"records its arguments", {}, {"rec.alias.Recorder"}}));
  EXPECT_OK(
      r.Register<Rec>("rec.Strict",
                      [](const Arguments& a) -> StatusOr<std::shared_ptr<Rec>> {
                        if (a.Find("a") == nullptr) {
                          return Status::InvalidArgument(
                              "missing 1 required positional argument: 'a'");
                        }
                        return std::make_shared<Rec>(Rec{a.args, a.kwargs});
                      },
                      {"a and b", {"a", "b"}, {}}));
  EXPECT_OK(
      r.Register<Rec>("rec.fail",
                      [](const Arguments&) -> StatusOr<std::shared_ptr<Rec>> {
                        return Status::InvalidArgument("boom");
                      },
                      {}));
  return r;
}

Node Yaml(const std::string& text) {
  StatusOr<Node> n = LoadYamlString(text, "t.yaml");
  EXPECT_OK(n);
  return n.ok() ? *n : Node();
}

// The expectations are what hydra.utils.instantiate of Hydra 1.3.2 makes of
// the same configs (AnchorsInstantiate below asks it on every CI run), with
// classes that record their arguments: rec.Rec(*args, **kwargs) and
// rec.Strict(a, b=2). Partials are printed as
// "partial(Rec, args=[..], kw={..})", nested ones too.
struct MatchCase {
  const char* name;
  const char* yaml;
  Kwargs kwargs;
  std::vector<Value> args;
  const char* want;
};

const std::vector<MatchCase>& MatchCases() {
  static const auto* cases = new std::vector<MatchCase>{
      {"plain",
       "{_target_: rec.Rec, a: 1, b: x}",
       {},
       {},
       "Rec(args=[], kwargs={'a': 1, 'b': 'x'})"},
      {"alias",
       "{_target_: rec.alias.Recorder, a: 1}",
       {},
       {},
       "Rec(args=[], kwargs={'a': 1})"},
      {"nested",
       "{_target_: rec.Rec, a: {_target_: rec.Rec, x: 1}}",
       {},
       {},
       "Rec(args=[], kwargs={'a': Rec(args=[], kwargs={'x': 1})})"},
      {"nested_in_list",
       "{_target_: rec.Rec, l: [1, {_target_: rec.Rec, y: 2}]}",
       {},
       {},
       "Rec(args=[], kwargs={'l': [1, Rec(args=[], kwargs={'y': 2})]})"},
      {"nested_in_plain_map",
       "{_target_: rec.Rec, m: {k: {_target_: rec.Rec, z: 3}, j: 4}}",
       {},
       {},
       "Rec(args=[], kwargs={'m': {'k': Rec(args=[], kwargs={'z': 3}), "
       "'j': 4}})"},
      {"args",
       "{_target_: rec.Rec, _args_: [1, {_target_: rec.Rec, q: 1}], k: 2}",
       {},
       {},
       "Rec(args=[1, Rec(args=[], kwargs={'q': 1})], kwargs={'k': 2})"},
      {"args_overridden_by_call",
       "{_target_: rec.Rec, _args_: [1, 2]}",
       {},
       {Value(Node::Int(9))},
       "Rec(args=[9], kwargs={})"},
      {"partial",
       "{_target_: rec.Rec, _partial_: true, lr: 0.1}",
       {},
       {},
       "partial(Rec, args=[], kw={'lr': 0.1})"},
      {"partial_missing_skipped",
       "{_target_: rec.Rec, _partial_: true, lr: '?\?\?'}",
       {},
       {},
       "partial(Rec, args=[], kw={})"},
      {"nested_partial",
       "{_target_: rec.Rec, opt: {_target_: rec.Rec, _partial_: true, lr: 1}}",
       {},
       {},
       "Rec(args=[], kwargs={'opt': partial(Rec, args=[], kw={'lr': 1})})"},
      {"recursive_false",
       "{_target_: rec.Rec, _recursive_: false, a: {_target_: rec.Rec, x: 1}}",
       {},
       {},
       "Rec(args=[], kwargs={'a': {'_target_': 'rec.Rec', 'x': 1}})"},
      {"recursive_false_below",
       "{_target_: rec.Rec, a: {_target_: rec.Rec, _recursive_: false, "
       "b: {_target_: rec.Rec}}}",
       {},
       {},
       "Rec(args=[], kwargs={'a': Rec(args=[], kwargs={'b': {'_target_': "
       "'rec.Rec'}})})"},
      {"recursive_kwarg",
       "{_target_: rec.Rec, a: {_target_: rec.Rec, x: 1}}",
       {{"_recursive_", Node::Bool(false)}},
       {},
       "Rec(args=[], kwargs={'a': {'_target_': 'rec.Rec', 'x': 1}})"},
      {"kwargs_override",
       "{_target_: rec.Rec, a: 1}",
       {{"a", Node::Int(2)}, {"extra", Node::Int(3)}},
       {},
       "Rec(args=[], kwargs={'a': 2, 'extra': 3})"},
      {"kwarg_target",
       "{_target_: rec.Rec}",
       {{"a", Yaml("{_target_: rec.Rec, k: 1}")}},
       {},
       "Rec(args=[], kwargs={'a': Rec(args=[], kwargs={'k': 1})})"},
      {"partial_kwarg",
       "{_target_: rec.Rec, a: 1}",
       {{"_partial_", Node::Bool(true)}},
       {},
       "partial(Rec, args=[], kw={'a': 1})"},
      {"convert_all_ignored",
       "{_target_: rec.Rec, _convert_: all, a: {b: 1}}",
       {},
       {},
       "Rec(args=[], kwargs={'a': {'b': 1}})"},
      {"null_value",
       "{_target_: rec.Rec, a: null}",
       {},
       {},
       "Rec(args=[], kwargs={'a': None})"},
      {"partial_holds_nested_objects",
       "{_target_: rec.Rec, _partial_: true, a: {_target_: rec.Rec, b: 1}}",
       {},
       {},
       "partial(Rec, args=[], kw={'a': Rec(args=[], kwargs={'b': 1})})"},
      {"positional_binds_to_names",
       "{_target_: rec.Strict, _args_: [1]}",
       {},
       {},
       "Rec(args=[], kwargs={'a': 1})"},
  };
  return *cases;
}

TEST(InstantiateTest, MatchesHydra) {
  const Registry registry = TestRegistry();
  for (const MatchCase& c : MatchCases()) {
    StatusOr<Object> o =
        registry.Instantiate(Yaml(c.yaml), "", c.kwargs, c.args);
    ASSERT_OK(o) << c.name;
    EXPECT_EQ(Repr(Value(*o)), c.want) << c.name;
  }
}

// Hydra's top-level dict and list (no _target_ at the top) give containers
// with the targets inside instantiated.
struct TreeCase {
  const char* name;
  const char* yaml;
  const char* want;
};

// The last, a scalar, is ours: Hydra's instantiate refuses a top level that
// is not a map or list ("Cannot instantiate config of type int").
const std::vector<TreeCase>& TreeCases() {
  static const auto* cases = new std::vector<TreeCase>{
      {"no_target_map", "{a: {_target_: rec.Rec, x: 1}, b: 2}",
       "{'a': Rec(args=[], kwargs={'x': 1}), 'b': 2}"},
      {"list_top", "[{_target_: rec.Rec, x: 1}, 2]",
       "[Rec(args=[], kwargs={'x': 1}), 2]"},
      {"plain_map_stays_a_node", "{a: 1}", "{'a': 1}"},
      {"scalar", "5", "5"},
  };
  return *cases;
}

TEST(InstantiateTest, TreeMatchesHydra) {
  const Registry registry = TestRegistry();
  for (const TreeCase& c : TreeCases()) {
    Node node = c.yaml == std::string("5") ? Node::Int(5) : Yaml(c.yaml);
    StatusOr<Value> v = registry.InstantiateTree(node);
    ASSERT_OK(v) << c.name;
    EXPECT_EQ(Repr(*v), c.want) << c.name;
  }
}

TEST(InstantiateTest, PartialCallAddsArguments) {
  // Hydra: instantiate(...)(5, lr=0.5, params='P') on
  // {_target_: rec.Rec, _partial_: true, lr: 0.1, b: 1} gave
  // Rec(args=[5], kwargs={'lr': 0.5, 'b': 1, 'params': 'P'}).
  const Registry registry = TestRegistry();
  StatusOr<std::shared_ptr<Partial>> p = registry.InstantiateAs<Partial>(
      Yaml("{_target_: rec.Rec, _partial_: true, lr: 0.1, b: 1}"));
  ASSERT_OK(p);
  StatusOr<std::shared_ptr<Rec>> r = (*p)->CallAs<Rec>(
      {{"lr", Node::Double(0.5)}, {"params", Node::String("P")}},
      {Value(Node::Int(5))});
  ASSERT_OK(r);
  EXPECT_EQ("Rec(" + Repr((*r)->args, (*r)->kwargs) + ")",
            "Rec(args=[5], kwargs={'lr': 0.5, 'b': 1, 'params': 'P'})");
  // The bound arguments stay as they were.
  EXPECT_EQ(Repr(Value(Object::Make(*p))),
            "partial(Rec, args=[], kw={'lr': 0.1, 'b': 1})");
}

TEST(InstantiateTest, InterpolationsResolveAgainstTheConfig) {
  // Hydra: instantiate(cfg.m) of {p: 3, m: {_target_: rec.Rec, a: '${p}'}}
  // gave Rec(args=[], kwargs={'a': 3}).
  const Registry registry = TestRegistry();
  StatusOr<Object> o = registry.Instantiate(
      Yaml("{p: 3, m: {_target_: rec.Rec, a: '${p}'}}"), "m");
  ASSERT_OK(o);
  EXPECT_EQ(Repr(Value(*o)), "Rec(args=[], kwargs={'a': 3})");
}

// Errors: Hydra's wording (observed in the same runs) with our location.
struct ErrorCase {
  const char* name;
  const char* yaml;
  const char* key;
  StatusCode code;
  const char* want;
};

const std::vector<ErrorCase>& ErrorCases() {
  static const auto* cases = new std::vector<ErrorCase>{
      {"unknown_target", "m:\n  _target_: rec.Recc\n", "m",
       StatusCode::kNotFound,
       "t.yaml:2:13: Error locating target 'rec.Recc': nothing is registered "
       "under that name (did you mean 'rec.Rec'?); registered targets: "
       "rec.Rec, rec.Strict, rec.fail\nfull_key: m"},
      {"unknown_nested_target",
       "m:\n  _target_: rec.Rec\n  n: {_target_: nope.X}\n", "m",
       StatusCode::kNotFound,
       "t.yaml:3:17: Error locating target 'nope.X': nothing is registered "
       "under that name; registered targets: rec.Rec, rec.Strict, "
       "rec.fail\nfull_key: m.n"},
      {"target_not_str", "{_target_: 5}", "", StatusCode::kInvalidArgument,
       "t.yaml:1:12: Expected a callable target, got '5' of type 'int'"},
      {"partial_not_bool", "{_target_: rec.Rec, _partial_: yes_please}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:32: Instantiation: _partial_ flag must be a bool, got str"},
      {"recursive_not_bool", "{_target_: rec.Rec, _recursive_: 1}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:34: Instantiation: _recursive_ flag must be a bool, got int"},
      {"convert_unknown", "{_target_: rec.Rec, _convert_: al}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:32: Instantiation: _convert_ must be none, partial, object or "
       "all, got 'al' (did you mean 'all'?)"},
      {"args_not_list", "{_target_: rec.Rec, _args_: 5}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:29: Error in collecting args and kwargs for 'rec.Rec':\n"
       "Unsupported _args_ type: 'int'. value: '5'"},
      {"missing_not_partial", "{_target_: rec.Rec, lr: '?\?\?'}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:25: Missing mandatory value: lr\nfull_key: lr"},
      {"nested_missing_in_partial",
       "{_target_: rec.Rec, _partial_: true, a: {_target_: rec.Rec, b: "
       "'?\?\?'}}",
       "", StatusCode::kInvalidArgument,
       "t.yaml:1:64: Missing mandatory value: a.b\nfull_key: a.b"},
      {"bad_kwarg", "m:\n  _target_: rec.Strict\n  a: 1\n  bb: 2\n", "m",
       StatusCode::kInvalidArgument,
       "t.yaml:4:3: Error in call to target 'rec.Strict':\ngot an unexpected "
       "keyword argument 'bb' (did you mean 'b'?); rec.Strict accepts: a, "
       "b\nfull_key: m"},
      {"bad_kwarg_in_partial", "{_target_: rec.Strict, _partial_: true, c: 1}",
       "", StatusCode::kInvalidArgument,
       "t.yaml:1:41: Error in call to target 'rec.Strict':\ngot an unexpected "
       "keyword argument 'c' (did you mean 'a' or 'b'?); rec.Strict accepts: "
       "a, b"},
      {"missing_arg", "{_target_: rec.Strict, b: 1}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:12: Error in call to target 'rec.Strict':\nmissing 1 "
       "required positional argument: 'a'"},
      {"pos_and_kw", "{_target_: rec.Strict, _args_: [1], a: 2}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:12: Error in call to target 'rec.Strict':\ngot multiple "
       "values for argument 'a'"},
      {"too_many_positional", "{_target_: rec.Strict, _args_: [1, 2, 3]}", "",
       StatusCode::kInvalidArgument,
       "t.yaml:1:12: Error in call to target 'rec.Strict':\ntakes 2 "
       "positional arguments but 3 were given"},
      {"factory_fails", "f:\n  _target_: rec.fail\n", "f",
       StatusCode::kInvalidArgument,
       "t.yaml:2:13: Error in call to target 'rec.fail':\nboom\nfull_key: f"},
      {"nested_error_full_key",
       "m:\n  _target_: rec.Rec\n  a:\n    _target_: rec.Strict\n    c: 1\n",
       "m", StatusCode::kInvalidArgument,
       "t.yaml:5:5: Error in call to target 'rec.Strict':\ngot an unexpected "
       "keyword argument 'c' (did you mean 'a' or 'b'?); rec.Strict accepts: "
       "a, b\nfull_key: m.a"},
      {"after_interpolation", "p: 3\nm:\n  _target_: rec.Strict\n  c: ${p}\n",
       "m", StatusCode::kInvalidArgument,
       "t.yaml:4:3: Error in call to target 'rec.Strict':\ngot an unexpected "
       "keyword argument 'c' (did you mean 'a' or 'b'?); rec.Strict accepts: "
       "a, "
       "b\nfull_key: m"},
      {"no_target", "m: {a: 1}", "m", StatusCode::kInvalidArgument,
       "t.yaml:1:4: Cannot instantiate 'm': expected a map with '_target_', "
       "got a map without it"},
      {"scalar", "m: 3", "m", StatusCode::kInvalidArgument,
       "t.yaml:1:4: Cannot instantiate 'm': expected a map with '_target_', "
       "got int"},
      {"no_such_key", "m: 3", "model", StatusCode::kNotFound,
       "instantiate: no key 'model' in the config"},
  };
  return *cases;
}

TEST(InstantiateTest, ErrorsSayWhereWhatAndTheFullKey) {
  const Registry registry = TestRegistry();
  for (const ErrorCase& c : ErrorCases()) {
    StatusOr<Object> o = registry.Instantiate(Yaml(c.yaml), c.key);
    ASSERT_FALSE(o.ok()) << c.name;
    EXPECT_EQ(o.status().code(), c.code) << c.name;
    EXPECT_EQ(o.status().message(), c.want) << c.name;
  }
}

// --- The same cases through Hydra 1.3.2's own instantiate (the anchors,
// tests/anchors/hydra_instantiate.py, with Python classes of the same
// names): what it makes must be what the tables say, and what we refuse it
// must refuse too, but where a case says otherwise.

nlohmann::json Json(const Value& v) {
  return nlohmann::json::parse(ToJson(v.node(), -1));
}

nlohmann::json HydraCase(const std::string& yaml, const std::string& key,
                         const Kwargs& kwargs = {},
                         const std::vector<Value>& args = {}) {
  nlohmann::json c = {{"yaml", yaml},
                      {"key", key},
                      {"args", nlohmann::json::array()},
                      {"kwargs", nlohmann::json::object()}};
  for (const Value& a : args) c["args"].push_back(Json(a));
  for (const auto& [k, v] : kwargs) c["kwargs"][k] = Json(v);
  return c;
}

TEST(AnchorsInstantiate, HydraMakesWhatTheTablesSay) {
  SKIP_WITHOUT_ANCHORS();
  // What Hydra does where we refuse on purpose: a map without _target_ asked
  // for as an object (Hydra gives the map back), a partial's keywords
  // (Hydra binds them only when the partial is called) and an unknown
  // _convert_ (Hydra ignores it).
  const std::map<std::string, std::string> hydra_takes = {
      {"no_target", "{'a': 1}"},
      {"bad_kwarg_in_partial", "partial(Rec, args=[], kw={'c': 1})"},
      {"convert_unknown", "Rec(args=[], kwargs={})"},
  };
  std::vector<std::pair<std::string, std::string>> want;  // name, outcome
  nlohmann::json input = nlohmann::json::array();
  for (const MatchCase& c : MatchCases()) {
    input.push_back(HydraCase(c.yaml, "", c.kwargs, c.args));
    want.emplace_back(c.name, c.want);
  }
  for (const TreeCase& c : TreeCases()) {
    if (std::string(c.name) == "scalar") continue;  // ours (TreeCases)
    input.push_back(HydraCase(c.yaml, ""));
    want.emplace_back(c.name, c.want);
  }
  nlohmann::json call =
      HydraCase("{_target_: rec.Rec, _partial_: true, lr: 0.1, b: 1}", "");
  call["call"] = {{"args", {5}}, {"kwargs", {{"lr", 0.5}, {"params", "P"}}}};
  input.push_back(call);
  want.emplace_back("partial called",
                    "Rec(args=[5], kwargs={'lr': 0.5, 'b': 1, 'params': 'P'})");
  input.push_back(HydraCase("{p: 3, m: {_target_: rec.Rec, a: '${p}'}}", "m"));
  want.emplace_back("interpolation", "Rec(args=[], kwargs={'a': 3})");
  for (const ErrorCase& c : ErrorCases()) {
    input.push_back(HydraCase(c.yaml, c.key));
    auto takes = hydra_takes.find(c.name);
    want.emplace_back(c.name,
                      takes == hydra_takes.end() ? "ERROR" : takes->second);
  }
  testing::TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/hydra_instantiate.py",
                                {dir.Write("cases.json", input.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json got = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(got.size(), want.size()) << f.out;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string hydra = got[i];
    if (want[i].second == "ERROR") {
      EXPECT_EQ(hydra.rfind("ERROR ", 0), 0u)
          << want[i].first << ": Hydra makes " << hydra;
    } else {
      EXPECT_EQ(hydra, want[i].second) << want[i].first;
    }
  }
}

TEST(InstantiateTest, TypedAccessSaysWhatWasMade) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* want;
  } cases[] = {
      {"other_type", "m:\n  _target_: rec.Rec\n",
       "t.yaml:2:13: target 'rec.Rec' makes a trialshim::config::(anonymous "
       "namespace)::"
       "Rec, not a int\nfull_key: m"},
      {"partial", "m:\n  _target_: rec.Rec\n  _partial_: true\n",
       "t.yaml:2:13: target 'rec.Rec' makes a trialshim::config::Partial, not "
       "a int (it has _partial_: true: call the Partial with the remaining "
       "arguments, or drop _partial_)\nfull_key: m"},
  };
  const Registry registry = TestRegistry();
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<int>> o =
        registry.InstantiateAs<int>(Yaml(c.yaml), "m");
    ASSERT_FALSE(o.ok()) << c.name;
    EXPECT_EQ(o.status().message(), c.want) << c.name;
  }
}

TEST(InstantiateTest, ArgumentReads) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* want;  // "" when the reads succeed
  } cases[] = {
      {"all_ok", "{_target_: rec.Rec, d: 1, i: 2, b: true, s: x}", ""},
      {"null_keeps_default", "{_target_: rec.Rec, d: null}", ""},
      {"float_as_str", "{_target_: rec.Rec, d: x}",
       "t.yaml:1:27: m.d: expected a float, got str 'x'"},
      {"int_as_float", "{_target_: rec.Rec, i: 1.5}",
       "t.yaml:1:27: m.i: expected an int, got float '1.500000'"},
      {"bool_as_int", "{_target_: rec.Rec, b: 1}",
       "t.yaml:1:27: m.b: expected a bool, got int '1'"},
      {"str_as_list", "{_target_: rec.Rec, s: [1]}",
       "t.yaml:1:27: m.s: expected a str, got list"},
  };
  Registry registry;
  ASSERT_OK(registry.Register<Rec>(
      "rec.Rec", [](const Arguments& a) -> StatusOr<std::shared_ptr<Rec>> {
        double d = 0;
        int64_t i = 0;
        bool b = false;
        std::string s;
        TRIALSHIM_RETURN_IF_ERROR(a.Double("d", &d));
        TRIALSHIM_RETURN_IF_ERROR(a.Int("i", &i));
        TRIALSHIM_RETURN_IF_ERROR(a.Bool("b", &b));
        TRIALSHIM_RETURN_IF_ERROR(a.String("s", &s));
        return Status::InvalidArgument(std::to_string(d) + " " +
                                       std::to_string(i) + " " +
                                       (b ? "true" : "false") + " " + s);
      }));
  for (const Case& c : cases) {
    StatusOr<Object> o =
        registry.Instantiate(Yaml(std::string("m: ") + c.yaml), "m");
    ASSERT_FALSE(o.ok()) << c.name;
    const std::string& msg = o.status().message();
    if (*c.want == '\0') {
      // The factory reports what it read.
      EXPECT_NE(msg.find("Error in call to target 'rec.Rec':\n"),
                std::string::npos)
          << c.name << ": " << msg;
    } else {
      EXPECT_EQ(msg, "t.yaml:1:15: Error in call to target 'rec.Rec':\n" +
                         std::string(c.want) + "\nfull_key: m")
          << c.name;
    }
  }
}

TEST(InstantiateTest, ObjectArguments) {
  struct Case {
    const char* name;
    Kwargs kwargs;
    const char* want;
  } cases[] = {
      {"given", {{"n", Value::Of(7)}}, "7"},
      {"missing", {}, "missing required argument 'n' (a int)"},
      {"wrong_object",
       {{"n", Value::Of(std::string("x"))}},
       "m.n: expected an object int, got an object std::__cxx11::basic_string<"
       "char, std::char_traits<char>, std::allocator<char> >"},
      {"plain_value",
       {{"n", Node::Int(7)}},
       "m.n: expected an object int, got a config int"},
  };
  Registry registry;
  ASSERT_OK(registry.Register<int>(
      "Get", [](const Arguments& a) -> StatusOr<std::shared_ptr<int>> {
        return a.Get<int>("n");
      }));
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<int>> o =
        registry.InstantiateAs<int>(Yaml("m: {_target_: Get}"), "m", c.kwargs);
    if (std::string(c.want) == "7") {
      ASSERT_OK(o) << c.name;
      EXPECT_EQ(**o, 7) << c.name;
    } else {
      ASSERT_FALSE(o.ok()) << c.name;
      EXPECT_EQ(o.status().message(),
                "t.yaml:1:15: Error in call to target "
                "'Get':\n" +
                    std::string(c.want) + "\nfull_key: m")
          << c.name;
    }
  }
}

TEST(InstantiateTest, RegisterRefusesTakenNames) {
  struct Case {
    const char* name;
    const char* target;
    std::vector<std::string> aliases;
    const char* want;
  } cases[] = {
      {"target",
       "rec.Rec",
       {},
       "instantiate: target 'rec.Rec' is already registered"},
      {"alias_of_other",
       "x.New",
       {"rec.alias.Recorder"},
       "instantiate: target 'rec.alias.Recorder' is already registered"},
  };
  Registry registry = TestRegistry();
  for (const Case& c : cases) {
    Status s = registry.Register(
        c.target, [](const Arguments&) -> StatusOr<Object> { return Object(); },
        {"", {}, c.aliases});
    EXPECT_EQ(s.message(), c.want) << c.name;
  }
  EXPECT_EQ(registry.Targets(),
            (std::vector<std::string>{"rec.Rec", "rec.Strict", "rec.fail"}));
  ASSERT_NE(registry.Find("rec.alias.Recorder"), nullptr);
  EXPECT_EQ(registry.Find("rec.alias.Recorder")->doc, "records its arguments");
  EXPECT_EQ(registry.Find("rec.nope"), nullptr);
}

// A refused name says why, at the node, and is never listed as a target;
// names already taken either way are refused.
TEST(InstantiateTest, RefusedTargetsSayWhy) {
  Registry registry = TestRegistry();
  ASSERT_OK(registry.Refuse({"svc.Logger", "svc.logs.Logger"},
                            "Logger needs a Python client"));
  struct Case {
    const char* name;
    std::vector<std::string> names;
    const char* want;
  } taken[] = {
      {"a target", {"rec.Rec"}, "instantiate: target 'rec.Rec' is already registered"},
      {"a refused name", {"x.Y", "svc.Logger"},
       "instantiate: target 'svc.Logger' is already registered"},
  };
  for (const Case& c : taken) {
    EXPECT_EQ(registry.Refuse(c.names, "why").message(), c.want) << c.name;
  }
  StatusOr<Object> made = registry.Instantiate(
      *LoadYamlString("l:\n  _target_: svc.logs.Logger\n  project: p\n", "c.yaml"),
      "l");
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(made.status().message(),
            "c.yaml:2:13: Error locating target 'svc.logs.Logger': Logger "
            "needs a Python client\nfull_key: l");
  EXPECT_EQ(registry.Targets(),
            (std::vector<std::string>{"rec.Rec", "rec.Strict", "rec.fail"}));
  EXPECT_OK(registry.Refuse({"x.Y"}, "why")) << "nothing taken by the failures";
}

}  // namespace
}  // namespace trialshim::config
