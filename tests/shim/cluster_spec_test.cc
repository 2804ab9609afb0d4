// CLUSTER_SPEC / TF_CONFIG parsing, the variables derived from them, and the
// `trialshim env` command run as a real process.
#include "trialshim/shim/cluster_spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::shim {
namespace {

using Env = std::map<std::string, std::string>;

EnvLookup Lookup(const Env& env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

std::map<std::string, std::string> AsMap(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  return {pairs.begin(), pairs.end()};
}

constexpr char kPools[] =
    R"({"cluster":{"workerpool0":["cmle-training-workerpool0-ab-0:2222"],
        "workerpool1":["w-0:2222","w-1:2222","w-2:2222"],
        "workerpool2":["rs-0:2222"],"workerpool3":["ev-0:2222"]},
        "environment":"cloud","task":{"type":"%TYPE%","index":%INDEX%,
        "trial":"7"},"job":{}})";

std::string Pools(const std::string& type, int index) {
  std::string s = kPools;
  s.replace(s.find("%TYPE%"), 6, type);
  s.replace(s.find("%INDEX%"), 7, std::to_string(index));
  return s;
}

TEST(DistributedEnvironmentTest, ValidShapes) {
  const std::string tf_chief =
      R"({"cluster":{"chief":["10.0.0.2:2222"],"worker":["10.0.0.3:2222",
      "10.0.0.4:2222"],"ps":["10.0.0.5:2222"]},"task":{"type":"%T","index":%I},
      "environment":"cloud"})";
  auto tf = [&](const std::string& type, int index) {
    std::string s = tf_chief;
    s.replace(s.find("%T"), 2, type);
    s.replace(s.find("%I"), 2, std::to_string(index));
    return s;
  };
  struct Case {
    std::string name;
    Env env;
    Env want;  // exactly the exported variables
  };
  const Env primary_vars = {{"MASTER_ADDR", "cmle-training-workerpool0-ab-0"},
                            {"MASTER_PORT", "2222"},
                            {"WORLD_SIZE", "4"}};
  auto with = [](Env base, Env more) {
    for (auto& [k, v] : more) base[k] = v;
    return base;
  };
  const std::vector<Case> cases = {
      {"absent", {}, {}},
      {"empty CLUSTER_SPEC", {{"CLUSTER_SPEC", ""}}, {}},
      {"workerpool0 is rank 0",
       {{"CLUSTER_SPEC", Pools("workerpool0", 0)}},
       with(primary_vars, {{"RANK", "0"}, {"NODE_RANK", "0"}, {"TRIALSHIM_ROLE", "primary"}})},
      {"workerpool1 index 0 is rank 1",
       {{"CLUSTER_SPEC", Pools("workerpool1", 0)}},
       with(primary_vars, {{"RANK", "1"}, {"NODE_RANK", "1"}, {"TRIALSHIM_ROLE", "worker"}})},
      {"workerpool1 index 2 is rank 3",
       {{"CLUSTER_SPEC", Pools("workerpool1", 2)}},
       with(primary_vars, {{"RANK", "3"}, {"NODE_RANK", "3"}, {"TRIALSHIM_ROLE", "worker"}})},
      {"reduction server gets a role only",
       {{"CLUSTER_SPEC", Pools("workerpool2", 0)}},
       {{"TRIALSHIM_ROLE", "reduction_server"}}},
      {"evaluator gets a role only",
       {{"CLUSTER_SPEC", Pools("workerpool3", 0)}},
       {{"TRIALSHIM_ROLE", "evaluator"}}},
      {"single replica",
       {{"CLUSTER_SPEC",
         R"({"cluster":{"workerpool0":["h:2222"]},"task":{"type":"workerpool0","index":0,"trial":""}})"}},
       {{"MASTER_ADDR", "h"},
        {"MASTER_PORT", "2222"},
        {"WORLD_SIZE", "1"},
        {"RANK", "0"},
        {"NODE_RANK", "0"},
        {"TRIALSHIM_ROLE", "primary"}}},
      {"chief/worker in CLUSTER_SPEC, worker 1 is rank 2",
       {{"CLUSTER_SPEC", tf("worker", 1)}},
       {{"MASTER_ADDR", "10.0.0.2"},
        {"MASTER_PORT", "2222"},
        {"WORLD_SIZE", "3"},
        {"RANK", "2"},
        {"NODE_RANK", "2"},
        {"TRIALSHIM_ROLE", "worker"}}},
      {"TF_CONFIG when CLUSTER_SPEC is absent",
       {{"TF_CONFIG", tf("chief", 0)}},
       {{"MASTER_ADDR", "10.0.0.2"},
        {"MASTER_PORT", "2222"},
        {"WORLD_SIZE", "3"},
        {"RANK", "0"},
        {"NODE_RANK", "0"},
        {"TRIALSHIM_ROLE", "primary"}}},
      {"CLUSTER_SPEC wins over TF_CONFIG",
       {{"CLUSTER_SPEC", Pools("workerpool1", 1)}, {"TF_CONFIG", "garbage"}},
       with(primary_vars, {{"RANK", "2"}, {"NODE_RANK", "2"}, {"TRIALSHIM_ROLE", "worker"}})},
      {"TF_CONFIG ps gets a role only",
       {{"TF_CONFIG", tf("ps", 0)}},
       {{"TRIALSHIM_ROLE", "reduction_server"}}},
      {"TF_CONFIG evaluator is not in cluster",
       {{"TF_CONFIG", tf("evaluator", 0)}},
       {{"TRIALSHIM_ROLE", "evaluator"}}},
      {"legacy master",
       {{"TF_CONFIG",
         R"({"cluster":{"master":["m:3333"],"worker":["w:3333"]},"task":{"type":"master","index":0}})"}},
       {{"MASTER_ADDR", "m"},
        {"MASTER_PORT", "3333"},
        {"WORLD_SIZE", "2"},
        {"RANK", "0"},
        {"NODE_RANK", "0"},
        {"TRIALSHIM_ROLE", "primary"}}},
      {"IPv6 primary, index omitted",
       {{"CLUSTER_SPEC",
         R"({"cluster":{"workerpool0":["[fd00::1]:2222"]},"task":{"type":"workerpool0"}})"}},
       {{"MASTER_ADDR", "fd00::1"},
        {"MASTER_PORT", "2222"},
        {"WORLD_SIZE", "1"},
        {"RANK", "0"},
        {"NODE_RANK", "0"},
        {"TRIALSHIM_ROLE", "primary"}}},
      {"already set variables are kept",
       {{"CLUSTER_SPEC", Pools("workerpool1", 0)},
        {"MASTER_PORT", "29500"},
        {"RANK", "5"}},
       {{"MASTER_ADDR", "cmle-training-workerpool0-ab-0"},
        {"WORLD_SIZE", "4"},
        {"NODE_RANK", "1"},
        {"TRIALSHIM_ROLE", "worker"}}},
  };
  for (const Case& c : cases) {
    auto got = DistributedEnvironment(Lookup(c.env));
    ASSERT_OK(got) << "case " << c.name;
    EXPECT_EQ(AsMap(*got), c.want) << "case " << c.name;
  }
}

TEST(DistributedEnvironmentTest, MalformedSpecsNameTheField) {
  struct Case {
    std::string name;
    std::string var;
    std::string json;
    std::string want;  // substring of the message
  };
  const std::vector<Case> cases = {
      {"not JSON", "CLUSTER_SPEC", "{cluster", "CLUSTER_SPEC: not valid JSON"},
      {"not an object", "CLUSTER_SPEC", "[1]",
       "CLUSTER_SPEC: expected a JSON object"},
      {"no cluster", "CLUSTER_SPEC", R"({"task":{"type":"workerpool0"}})",
       "CLUSTER_SPEC: cluster: missing"},
      {"cluster not an object", "CLUSTER_SPEC",
       R"({"cluster":[],"task":{"type":"workerpool0"}})",
       "CLUSTER_SPEC: cluster: expected an object"},
      {"no task", "TF_CONFIG", R"({"cluster":{"chief":["h:1"]}})",
       "TF_CONFIG: task: missing"},
      {"task not an object", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":"workerpool0"})",
       "CLUSTER_SPEC: task: expected an object"},
      {"no task.type", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"index":0}})",
       "CLUSTER_SPEC: task.type: missing"},
      {"task.type not a string", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"type":0}})",
       "CLUSTER_SPEC: task.type: expected a string"},
      {"unknown task.type with suggestion", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"type":"workerpool9"}})",
       "task.type: unknown pool \"workerpool9\""},
      {"task.index negative", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"type":"workerpool0","index":-1}})",
       "CLUSTER_SPEC: task.index: expected a non-negative integer, got -1"},
      {"task.index a string", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"type":"workerpool0","index":"0"}})",
       "task.index: expected a non-negative integer, got \"0\""},
      {"task.index out of range", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"],"workerpool1":["w:1"]},"task":{"type":"workerpool1","index":1}})",
       "task.index: 1 is out of range: cluster.workerpool1 has 1 address(es)"},
      {"task pool absent from cluster", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"type":"workerpool1","index":0}})",
       "task.type: \"workerpool1\" is not a pool of cluster"},
      {"task.trial an object", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"]},"task":{"type":"workerpool0","trial":{}}})",
       "task.trial: expected a string"},
      {"no primary pool", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool1":["w:1"]},"task":{"type":"workerpool1"}})",
       "cluster.workerpool0: missing"},
      {"no chief", "TF_CONFIG",
       R"({"cluster":{"worker":["w:1"]},"task":{"type":"worker"}})",
       "TF_CONFIG: cluster.chief: missing"},
      {"two primaries", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["a:1","b:1"]},"task":{"type":"workerpool0"}})",
       "cluster.workerpool0: expected exactly one address"},
      {"pool not a list", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":"h:1"},"task":{"type":"workerpool0"}})",
       "cluster.workerpool0: expected a list"},
      {"worker address not a string", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"],"workerpool1":[7]},"task":{"type":"workerpool0"}})",
       "cluster.workerpool1[0]: expected a \"host:port\" string, got 7"},
      {"other pool malformed", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"],"workerpool2":{}},"task":{"type":"workerpool0"}})",
       "cluster.workerpool2: expected a list"},
      {"primary without port", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h"]},"task":{"type":"workerpool0"}})",
       "cluster.workerpool0[0]: no port in \"h\""},
      {"primary port not a number", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:ab"]},"task":{"type":"workerpool0"}})",
       "cluster.workerpool0[0]: port is not a number"},
      {"primary port out of range", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:70000"]},"task":{"type":"workerpool0"}})",
       "port out of range"},
      {"primary empty host", "TF_CONFIG",
       R"({"cluster":{"chief":[":22"]},"task":{"type":"chief"}})",
       "TF_CONFIG: cluster.chief[0]: empty host"},
      // Valid JSON that nlohmann can not hold (out_of_range, not parse_error).
      {"number beyond double", "CLUSTER_SPEC", R"({"cluster": 1e999})",
       "CLUSTER_SPEC: unsupported JSON"},
      {"index beyond double", "TF_CONFIG",
       R"({"cluster":{"chief":["h:1"]},"task":{"type":"chief","index":-1e999}})",
       "TF_CONFIG: unsupported JSON"},
      // Control characters: setenv() would cut a host at a NUL.
      {"NUL in primary host", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h\u0000x:2222"]},"task":{"type":"workerpool0"}})",
       "CLUSTER_SPEC: cluster.workerpool0[0]: control character "
       "\"\\u0000\""},
      {"newline in worker port", "TF_CONFIG",
       R"({"cluster":{"chief":["h:1"],"worker":["w:1\n"]},"task":{"type":"chief"}})",
       "TF_CONFIG: cluster.worker[0]: control character \"\\n\""},
      {"tab in chief host", "TF_CONFIG",
       R"({"cluster":{"chief":["h\tx:1"]},"task":{"type":"chief"}})",
       "TF_CONFIG: cluster.chief[0]: control character \"\\t\""},
      {"DEL in other pool", "CLUSTER_SPEC",
       R"({"cluster":{"workerpool0":["h:1"],"workerpool2":["r\u007f:1"]},"task":{"type":"workerpool0"}})",
       "CLUSTER_SPEC: cluster.workerpool2[0]: control character"},
  };
  for (const Case& c : cases) {
    auto got = DistributedEnvironment(Lookup({{c.var, c.json}}));
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

TEST(DistributedEnvironmentTest, UnknownTypeSuggestsNearest) {
  auto got = ParseClusterSpec(
      R"({"cluster":{"chief":["h:1"]},"task":{"type":"chiefs"}})", "TF_CONFIG");
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got, StatusIs(_, HasSubstr("did you mean 'chief'")));
}

TEST(DistributedEnvironmentTest, ParseKeepsTaskDetails) {
  auto got = ParseClusterSpec(Pools("workerpool1", 1), "CLUSTER_SPEC");
  ASSERT_OK(got);
  EXPECT_EQ(got->trial, "7");
  EXPECT_EQ(got->primary_field, "cluster.workerpool0[0]");
  EXPECT_EQ(got->role, ClusterRole::kWorker);
  EXPECT_EQ(got->rank, 2);
}

// Runs bin/trialshim env with exactly `env`; returns exit code, fills out/err.
int RunEnvCommand(const std::vector<std::string>& args, const Env& env,
                  std::string* out, std::string* err) {
  std::vector<std::string> argv = {TRIALSHIM_BIN_DIR "/trialshim", "env"};
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions options = testing::Child::Options();
  options.env.emplace();
  for (auto& [k, v] : env) options.env->push_back(k + "=" + v);
  testing::Finished f = testing::RunToEndWith(argv, options);
  *out = f.out;
  *err = f.err;
  return f.code();
}

TEST(EnvCommandTest, PrintsExportsAndReasons) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    Env env;
    int want_code;
    std::vector<std::string> want_out;  // substrings of stdout
    std::string want_err;               // substring of stderr
  };
  const std::vector<Case> cases = {
      {"no spec", {}, {}, 0, {"# no CLUSTER_SPEC or TF_CONFIG"}, ""},
      {"worker",
       {},
       {{"CLUSTER_SPEC", Pools("workerpool1", 0)}},
       0,
       {"export TRIALSHIM_ROLE=worker  # task workerpool1[0] of CLUSTER_SPEC\n",
        "export MASTER_ADDR=cmle-training-workerpool0-ab-0  # host of the "
        "primary, cluster.workerpool0[0] of CLUSTER_SPEC\n",
        "export MASTER_PORT=2222  #",
        "export WORLD_SIZE=4  # 1 primary + 3 worker(s)\n",
        "export RANK=1  # task workerpool1[0] of CLUSTER_SPEC: workers follow "
        "the primary, rank = index + 1\n"},
       ""},
      {"kept variable",
       {},
       {{"CLUSTER_SPEC", Pools("workerpool0", 0)}, {"RANK", "it's"}},
       0,
       {"# RANK=\"it's\" kept: already set"},
       ""},
      {"malformed is exit 2",
       {},
       {{"CLUSTER_SPEC", R"({"cluster":{},"task":{"type":"workerpool0"}})"}},
       2,
       {},
       "trialshim env: error: CLUSTER_SPEC: cluster.workerpool0: missing"},
      {"bad format is a usage error", {"--format", "xml"}, {}, 2, {}, "xml"},
  };
  for (const Case& c : cases) {
    std::string out, err;
    int code = RunEnvCommand(c.args, c.env, &out, &err);
    EXPECT_EQ(code, c.want_code) << "case " << c.name << "\n" << out << err;
    for (const std::string& w : c.want_out) {
      EXPECT_NE(out.find(w), std::string::npos)
          << "case " << c.name << ": want " << w << " in\n"
          << out;
    }
    EXPECT_NE(err.find(c.want_err), std::string::npos)
        << "case " << c.name << ": " << err;
    // PyTorch Lightning takes LOCAL_RANK as "launched by torchrun" and then
    // never starts its own processes: a replica must not get it.
    EXPECT_EQ(out.find("LOCAL_RANK"), std::string::npos)
        << "case " << c.name << ": " << out;
  }
}

TEST(EnvCommandTest, JsonFormat) {
  std::string out, err;
  int code = RunEnvCommand({"--format", "json"},
                           {{"TF_CONFIG", R"({"cluster":{"chief":["c:2"]},
                             "task":{"type":"chief"}})"},
                            {"WORLD_SIZE", "8"}},
                           &out, &err);
  ASSERT_EQ(code, 0) << err;
  nlohmann::json doc = nlohmann::json::parse(out);
  std::map<std::string, std::pair<std::string, bool>> got;
  for (const auto& e : doc) {
    got[e["name"]] = {e["value"].get<std::string>(), e["exported"].get<bool>()};
  }
  EXPECT_EQ(got["MASTER_ADDR"], std::make_pair(std::string("c"), true));
  EXPECT_EQ(got["WORLD_SIZE"], std::make_pair(std::string("8"), false));
  EXPECT_EQ(got["RANK"], std::make_pair(std::string("0"), true));
}

}  // namespace
}  // namespace trialshim::shim
