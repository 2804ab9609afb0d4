// trialshim::app::Run against real Hydra: each run in
// tests/data/hydra_app/runs.json is what a Python @hydra.main app printed and
// left in its run directory (generate.py there); app_task runs the same
// command line through Run() and must print and write the same bytes. The
// --cfg cases of cases.json are checked the same way, and the rest of the
// app contract (exit codes, Vertex arguments, -m) by name. With the anchors
// (Anchors*), both against what real Hydra prints and writes now.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/hints.h"
#include "tests/testutil/hydra_app.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/base/strings.h"

namespace trialshim {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

const std::string& kDir = testing::kHydraAppDir;
const std::string& kTask = testing::kAppTask;
using testing::Normalize;
using testing::RunTask;

std::vector<Json> Load(const std::string& file) {
  return testing::LoadHydraAppCases(file);
}

// --info tables are padded to the longest path, which depends on where the
// tree is checked out: compare them with runs of padding collapsed (spaces
// before a '|', and rules of dashes, also in hydra.verbose's log lines).
std::string Unpadded(const std::string& s) {
  std::string out;
  std::istringstream lines(s);
  for (std::string line; std::getline(lines, line);) {
    // A rule, bare or after a log prefix ("[<asctime>][HYDRA] ---").
    size_t last = line.find_last_not_of('-');
    size_t start = last == std::string::npos ? 0 : last + 1;
    if (line.size() - start >= 3 &&
        (start == 0 || line.compare(0, start, "[<asctime>][HYDRA] ") == 0)) {
      line = line.substr(0, start) + "---";
    }
    std::string squeezed;
    for (size_t i = 0; i < line.size(); ++i) {
      size_t end = line.find_first_not_of(' ', i);
      if (line[i] == ' ' && end != std::string::npos && end - i >= 2 &&
          line[end] == '|') {
        squeezed += ' ';
        i = end - 1;
        continue;
      }
      squeezed += line[i];
    }
    out += squeezed + "\n";
  }
  if (!s.empty() && s.back() != '\n') out.pop_back();  // as it ended
  return out;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// app_task run on case `c`'s command line prints (stdout and stderr) and
// writes what the Python app did under Hydra.
void ExpectRunLikeHydra(const Json& c) {
  SCOPED_TRACE("run " + c["name"].get<std::string>());
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  const std::string tree = kDir + "/trees/" + c["tree"].get<std::string>();
  testing::Finished r =
      RunTask(tree, c["args"].get<std::vector<std::string>>(), cwd);
  ASSERT_EQ(r.exit_code, c["exit_code"].get<int>()) << r.err;
  EXPECT_EQ(Unpadded(Normalize(r.out, tree, cwd)),
            Unpadded(c["stdout"].get<std::string>()));
  EXPECT_EQ(Normalize(r.err, tree, cwd), c["stderr"].get<std::string>());
  std::vector<std::string> written;
  for (const auto& e : fs::recursive_directory_iterator(cwd)) {
    if (e.is_regular_file()) {
      written.push_back(fs::relative(e.path(), cwd).string());
    }
  }
  std::vector<std::string> expected;
  for (const auto& [file, text] : c["files"].items()) {
    expected.push_back(file);
    EXPECT_EQ(Normalize(Read(cwd + "/" + file), tree, cwd),
              text.get<std::string>())
        << file;
  }
  std::sort(written.begin(), written.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(written, expected);
}

class RunLikeHydra : public ::testing::TestWithParam<Json> {};

TEST_P(RunLikeHydra, PrintsAndWritesWhatHydraDoes) {
  ExpectRunLikeHydra(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Runs, RunLikeHydra,
                         ::testing::ValuesIn(Load("runs.json")),
                         [](const ::testing::TestParamInfo<Json>& info) {
                           return info.param["name"].get<std::string>();
                         });

// The app's --cfg prints what `trialshim compose` prints; both must equal
// Hydra's (tests/cli/compose_command_test.cc holds the full table).
void ExpectCfgLikeHydra(const Json& c) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  const std::string tree = kDir + "/trees/" + c["tree"].get<std::string>();
  std::vector<std::string> args;
  for (const Json& a : c["args"]) {
    args.push_back(ReplaceAll(a.get<std::string>(), "<tree>", tree));
  }
  testing::Finished r = RunTask(tree, args, cwd);
  if (c["exit_code"].get<int>() != 0) {
    EXPECT_EQ(r.exit_code, 2) << r.out;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReplaceAll(ReplaceAll(r.out, tree, "<tree>"), cwd, "<cwd>"),
            c["stdout"].get<std::string>());
}

class CfgLikeHydra : public ::testing::TestWithParam<Json> {};

TEST_P(CfgLikeHydra, PrintsWhatHydraPrints) { ExpectCfgLikeHydra(GetParam()); }

// The --cfg cases of a cases.json (the app's own config name).
std::vector<Json> CfgCases(const std::vector<Json>& all = Load("cases.json")) {
  std::vector<Json> out;
  for (const Json& c : all) {
    const auto& args = c["args"];
    if (std::find(args.begin(), args.end(), "--cfg") != args.end() &&
        std::find(args.begin(), args.end(), "--config-name") == args.end()) {
      out.push_back(c);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, CfgLikeHydra, ::testing::ValuesIn(CfgCases()),
                         [](const ::testing::TestParamInfo<Json>& info) {
                           return info.param["name"].get<std::string>();
                         });

// The rest of the contract, where Hydra has nothing to compare with.
TEST(AppRun, ExitCodesVertexArgumentsAndTheRunDirectory) {
  const std::string tree = kDir + "/trees/basic";
  struct Case {
    const char* name;
    std::vector<std::string> args;
    int exit_code;
    std::string in_out;  // stdout must hold this
    std::string in_err;  // stderr must hold this
  } cases[] = {
      {"vertex arguments translated",
       {"--port=5432", "--db=pg"},
       0,
       "port: 5432\n",
       ""},
      {"vertex value keeps its type",
       {"--port=8080", "--name=007"},
       0,
       "name: '007'\n",
       ""},
      {"task exit code", {"port=1", "+exit_code=3"}, 3, "", ""},
      {"task throws",
       {"port=1", "+fail=boom"},
       1,
       "",
       "Error executing job with overrides: ['port=1', '+fail=boom']\nboom\n"},
      {"config error",
       {"prot=1"},
       2,
       "",
       "app: error: Could not override 'prot'"},
      {"missing value", {}, 2, "", "Missing mandatory value: port"},
      {"multirun", {"port=1,2", "-m"}, 0, "Launching 2 jobs locally", ""},
      {"one command only",
       {"port=1", "-m", "--cfg", "job"},
       2,
       "",
       "Only one of --run, --multirun, --cfg"},
      {"unknown flag", {"port=1", "--bogus"}, 2, "", "--bogus"},
      {"env_set exported",
       {"port=1", "+hydra.job.env_set.X=7", "+print_env=X"},
       0,
       "env 7\n",
       ""},
      {"chdir",
       {"port=1", "hydra.job.chdir=true", "+print_cwd=true"},
       0,
       "/run\n",
       ""},
      {"version", {"--version"}, 0, "Hydra 1.3.2", ""},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    const std::string cwd = fs::canonical(tmp.path()).string();
    std::vector<std::string> args = {"hydra.run.dir=run"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    testing::Finished r = RunTask(tree, args, cwd);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(c.in_out), std::string::npos) << c.name << "\n" << r.out;
    EXPECT_NE(r.err.find(c.in_err), std::string::npos) << c.name << "\n" << r.err;
  }
}

TEST(AppRun, VertexArgumentsAreTheOverridesOfTheRun) {
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  testing::Finished r =
      RunTask(kDir + "/trees/basic",
              {"hydra.run.dir=run", "--port=5432", "--db=pg"}, cwd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Read(cwd + "/run/.hydra/overrides.yaml"), "- port=5432\n- db=pg\n");
}

// The colorlog plugin's options (lightning-hydra-template sets both) log as
// Hydra's default configs, with the app's own settings on top: the log file
// named after ${task_name}, in a run directory named after it.
TEST(AppRun, ColorlogLogsAsTheDefaultWithTheAppsSettings) {
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  testing::Finished r = RunTask(kDir + "/trees/colorlog", {"task_name=eval"}, cwd);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* group : {"hydra/hydra_logging", "hydra/job_logging"}) {
    EXPECT_NE(r.out.find(std::string("[app][WARNING] - ") + group +
                         "=colorlog is the Python hydra-colorlog plugin; "
                         "logging as " + group + "=default does"),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find("[app][INFO] - hello\n"), std::string::npos) << r.out;
  const std::string log = Read(cwd + "/logs/eval/eval.log");
  EXPECT_NE(log.find("[app][INFO] - hello\n"), std::string::npos) << log;
  EXPECT_NE(log.find("[app][WARNING] - careful\n"), std::string::npos) << log;
}

// With a schema (app_task's Basic): overrides checked before composition,
// and the schema printed for people and for editors.
TEST(AppRun, SchemaChecksOverridesAndPrints) {
  const std::string tree = kDir + "/trees/basic";
  struct Case {
    const char* name;
    std::vector<std::string> args;
    int exit_code;
    std::string in_out;
    std::string in_err;
  } cases[] = {
      {"yaml view", {"--cfg", "schema"}, 0,
       "port: ???  # int, its port, required, range [1, 65535]", ""},
      {"json schema", {"--cfg=schema-json"}, 0, "\"port\": {", ""},
      {"typed override", {"port=abc"}, 2, "",
       "Value 'abc' of type 'str' could not be converted to Integer"},
      {"out of range", {"port=70000"}, 2, "", "65535"},
      {"unknown key", {"prot=1"}, 2, "", "(did you mean 'port'?)"},
      {"group override passes", {"db=pg", "port=1"}, 0, "host: pg", ""},
      {"vertex argument checked", {"--port=x"}, 2, "", "could not be converted"},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    std::vector<std::string> args = {"hydra.run.dir=run"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    testing::Finished r = RunTask(tree, args, fs::canonical(tmp.path()).string(),
                                  {"APP_TASK_SCHEMA=1"});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(c.in_out), std::string::npos) << c.name << "\n" << r.out;
    EXPECT_NE(r.err.find(c.in_err), std::string::npos) << c.name << "\n" << r.err;
  }
  testing::TempDir tmp;
  testing::Finished r = RunTask(tree, {"--cfg", "schema-json"},
                                fs::canonical(tmp.path()).string(),
                                {"APP_TASK_SCHEMA=1"});
  Json schema = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(schema.is_object()) << r.out;
  // An int in range, or "???" / an interpolation (a config may hold those).
  EXPECT_EQ(schema["properties"]["port"]["anyOf"][0]["maximum"], 65535) << r.out;
}

// Fields of the schema that the YAML leaves out (app_task's `note`, null by
// default, and `retries`, 3) are there for an override with their default,
// as in Hydra's schema pattern: `k=v` sets them, and `+k=v` only where the
// default is null. AnchorsSchemaLikeHydra runs the same in real Hydra.
struct SchemaCase {
  const char* name;
  std::vector<std::string> overrides;
  const char* key;  // whose value the run shows ("" where it is refused)
  std::string shown;
};
const std::vector<SchemaCase>& SchemaCases() {
  static const std::vector<SchemaCase> cases = {
      {"set a null field", {"note=hi"}, "note", "note: hi"},
      {"add over a null field", {"+note=hi"}, "note", "note: hi"},
      {"force a null field", {"++note=hi"}, "note", "note: hi"},
      {"set a field with a default", {"retries=5"}, "retries", "retries: 5"},
      {"force a field with a default", {"++retries=5"}, "retries",
       "retries: 5"},
      {"add over a default", {"+retries=5"}, "", ""},
      {"typed", {"retries=x"}, "", ""},
      {"delete a null field", {"~note"}, "", ""},
  };
  return cases;
}

testing::Finished RunSchemaCase(const SchemaCase& c, const std::string& cwd) {
  std::vector<std::string> args = {"--cfg", "job", "port=1"};
  args.insert(args.end(), c.overrides.begin(), c.overrides.end());
  return RunTask(kDir + "/trees/basic", args, cwd, {"APP_TASK_SCHEMA=1"});
}

TEST(AppRun, SchemaFieldsTheYamlLeavesOutTakeOverrides) {
  for (const SchemaCase& c : SchemaCases()) {
    testing::TempDir tmp;
    testing::Finished r = RunSchemaCase(c, fs::canonical(tmp.path()).string());
    EXPECT_EQ(r.exit_code, *c.key ? 0 : 2) << c.name << "\n" << r.err;
    EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.name << "\n"
                                                      << r.out;
  }
}

TEST(AnchorsSchemaLikeHydra, SchemaFieldsTheYamlLeavesOut) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir tmp;
  Json requests = Json::array();
  for (const SchemaCase& c : SchemaCases()) {
    Json overrides = {"port=1"};
    for (const std::string& o : c.overrides) overrides.push_back(o);
    requests.push_back(overrides);
  }
  const std::string file = tmp.Join("requests.json");
  std::ofstream(file) << requests.dump();
  testing::Finished hydra = testing::RunAnchorsScript(
      "tests/anchors/hydra_schema.py", {kDir + "/trees/basic", file});
  ASSERT_EQ(hydra.exit_code, 0) << hydra.err;
  Json got = Json::parse(hydra.out);
  ASSERT_EQ(got.size(), SchemaCases().size()) << hydra.out;
  for (size_t i = 0; i < got.size(); ++i) {
    const SchemaCase& c = SchemaCases()[i];
    testing::Finished r =
        RunSchemaCase(c, fs::canonical(tmp.path()).string());
    if (got[i].contains("error")) {
      EXPECT_EQ(r.exit_code, 2) << c.name << ": Hydra refused it:\n"
                                << got[i]["error"] << "\n" << r.out;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << c.name << ": Hydra took it\n" << r.err;
    const Json& v = got[i]["config"][c.key];
    std::string line = std::string(c.key) + ": " +
                       (v.is_string() ? v.get<std::string>() : v.dump());
    EXPECT_NE(r.out.find(line + "\n"), std::string::npos)
        << c.name << ": Hydra has " << line << "\n" << r.out;
  }
}

// Every hint the app gives, followed as a user follows it: the command
// the hint leads to runs. The task is app_task on trees/basic (db: mysql|pg,
// port); "schema" runs it with its schema (APP_TASK_SCHEMA).
TEST(AppHints, EachHintLeadsToACommandThatWorks) {
  using testing::HintCase;
  const std::string task = "$TASK -cp $TREE hydra.run.dir=run ";
  struct Case {
    HintCase hint;
    bool schema = false;
  };
  const std::vector<Case> cases = {
      // --add-unknown is trialshim's: the app says what to run instead.
      {{"add_unknown_to_an_app",
        task + "--add-unknown --act=relu,gelu port=1",
        "run: (.*)", HintCase::kRun}},
      {{"unknown_key_as_the_quoted_override",
        task + "--act=relu,gelu port=1",
        "pass the Hydra override (.*)", HintCase::kReplace,
        "--act=relu,gelu"}},
      {{"misspelt_group", task + "dbb=pg port=1",
        "config group 'db': (\\S+)\\?\\)", HintCase::kReplace, "dbb=pg"}},
      {{"misspelt_group_vertex_style", task + "--dbb=pg port=1",
        "config group 'db': (\\S+)\\?\\)", HintCase::kReplace, "--dbb=pg"}},
      {{"misspelt_group_with_a_schema", task + "dbb=pg port=1",
        "config group 'db': (\\S+)\\?\\)", HintCase::kReplace, "dbb=pg"},
       true},
      {{"add_over_a_schema_default", task + "port=1 +retries=5",
        "Either remove \\+ prefix: '(\\S+)'", HintCase::kReplace,
        "+retries=5"},
       true},
      {{"add_over_a_schema_default_forced", task + "port=1 +retries=5",
        "Or add a second \\+ to add or override 'retries': '(\\S+)'",
        HintCase::kReplace, "+retries=5"},
       true},
      {{"cfg_choice", "$TASK -cp $TREE --cfg jobb port=1",
        "did you mean '([^']+)'", HintCase::kReplace, "jobb"}},
      {{"cfg_choice_of_a_schema", "$TASK -cp $TREE --cfg schem",
        "did you mean '([^']+)'", HintCase::kReplace, "schem"},
       true},
      {{"sweep_without_multirun", task + "port=1,2",
        "add (--multirun) to your command line", HintCase::kAppend}},
      {{"sweep_as_a_string", task + "port=1 name=a,b",
        "quote the value: (\\S+)", HintCase::kReplace, "name=a,b"}},
      {{"sweep_as_a_list", task + "port=1 +l=a,b",
        "as a list, use (\\S+)", HintCase::kReplace, "+l=a,b"}},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    std::vector<std::string> env = {"TASK=" + kTask,
                                    "TREE=" + kDir + "/trees/basic"};
    if (c.schema) env.push_back("APP_TASK_SCHEMA=1");
    testing::Followed f = testing::FollowHint(
        c.hint, fs::canonical(tmp.path()).string(), env);
    const std::string& name = c.hint.name;
    EXPECT_EQ(f.first.exit_code, 2) << name << "\n" << f.first.err;
    ASSERT_FALSE(f.hint.empty()) << name << ": no hint in\n" << f.first.err;
    EXPECT_EQ(f.second.exit_code, 0)
        << name << ": the hint " << f.hint << " led to " << f.next << "\n"
        << f.second.err;
  }
}

// Where no override could add a key (a schema binds the whole config), the
// app offers none: the message names the schema.
TEST(AppHints, NoHintWhereNothingWouldWork) {
  const std::string tree = kDir + "/trees/basic";
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::string in_err;
  } cases[] = {
      {"vertex_key", {"--act=relu", "port=1"}, "key 'act' is not in the config\n"},
      {"added_key", {"+act=relu", "port=1"},
       "Could not add 'act': Key 'act' not in 'Basic'"},
      {"add_unknown", {"--add-unknown", "--act=relu", "port=1"},
       "Could not add 'act': Key 'act' not in 'Basic'"},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    testing::Finished r = RunTask(tree, c.args, fs::canonical(tmp.path()).string(),
                                  {"APP_TASK_SCHEMA=1"});
    EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << r.err;
    EXPECT_NE(r.err.find(c.in_err), std::string::npos) << c.name << "\n" << r.err;
  }
}

// --hydra-help lists the flags an app takes: each one listed runs.
TEST(AppHints, EveryFlagHydraHelpListsWorks) {
  const std::string tree = kDir + "/trees/basic";
  testing::TempDir tmp;
  const std::string cwd = fs::canonical(tmp.path()).string();
  testing::Finished help = RunTask(tree, {"--hydra-help"}, cwd);
  ASSERT_EQ(help.exit_code, 0) << help.err;
  // How each flag is used; a flag listed but missing here fails the test.
  const std::vector<std::pair<std::string, std::vector<std::string>>> uses = {
      {"--help", {"--help"}},
      {"--hydra-help", {"--hydra-help"}},
      {"--version", {"--version"}},
      {"--cfg", {"--cfg", "job", "port=1"}},
      {"--resolve", {"--cfg", "job", "--resolve", "port=1"}},
      {"--package", {"--cfg", "job", "--package", "db"}},
      {"--run", {"--run", "hydra.run.dir=run", "port=1"}},
      {"--multirun", {"--multirun", "hydra.sweep.dir=sw", "port=1,2"}},
      {"--config-path", {"--config-path", tree, "--cfg", "job"}},
      {"--config-name", {"--config-name", "config", "--cfg", "job"}},
      {"--config-dir", {"--config-dir", tree, "--cfg", "job"}},
      {"--info", {"--info", "searchpath"}},
  };
  size_t listed = 0;
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("--", 0) != 0) continue;
    ++listed;
    std::string flag = line.substr(0, line.find_first_of(", "));
    auto use = std::find_if(uses.begin(), uses.end(),
                            [&](const auto& u) { return u.first == flag; });
    ASSERT_NE(use, uses.end()) << "--hydra-help lists " << flag
                               << ", which this test does not know";
    testing::Finished r = RunTask(tree, use->second, cwd);
    EXPECT_EQ(r.exit_code, 0) << flag << "\n" << r.err;
  }
  EXPECT_EQ(listed, uses.size()) << help.out;
}

TEST(AppRunData, AllCasesLoaded) {
  EXPECT_GE(Load("runs.json").size(), 31u);
  EXPECT_GE(CfgCases().size(), 20u);
}

// Real Hydra runs every app again (generate.py): it must print and write what
// runs.json and cases.json recorded, and app_task what Hydra does now.
TEST(AnchorsRunLikeHydra, RealHydraRunsTheRecordedApps) {
  SKIP_WITHOUT_ANCHORS();
  testing::TempDir live;
  testing::Finished gen = testing::RunAnchorsScript(
      "tests/data/hydra_app/generate.py", {"--out", live.path()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  for (const char* file : {"runs.json", "cases.json"}) {
    EXPECT_EQ(testing::FirstDifference(kDir + "/" + file, live.Join(file)), "")
        << "real Hydra no longer does what " << file << " says: run "
        << "tests/data/hydra_app/generate.py (its header says how)";
  }
  std::vector<Json> runs = testing::LoadHydraAppCases("runs.json", live.path());
  EXPECT_EQ(runs.size(), Load("runs.json").size());
  for (const Json& c : runs) ExpectRunLikeHydra(c);
  std::vector<Json> cfg =
      CfgCases(testing::LoadHydraAppCases("cases.json", live.path()));
  EXPECT_EQ(cfg.size(), CfgCases().size());
  for (const Json& c : cfg) ExpectCfgLikeHydra(c);
}

}  // namespace
}  // namespace trialshim
