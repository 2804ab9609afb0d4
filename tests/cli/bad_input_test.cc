// Bad input, class by class, through the real `trialshim` binary: for each
// class the exact exit code and the key phrases of the message (what went
// wrong, where, what to do). Nothing may crash, hang or print an "internal
// error". The limits asserted here are the ones docs/limits.md documents.
//
// NUL bytes can not reach trialshim through argv or the environment: both
// are arrays of C strings, so execve() ends every item at its first NUL.
// NUL is tested where it can occur: in YAML files (raw and as the "\0"
// escape) and in CLUSTER_SPEC as the JSON escape "\u0000".
//
// Cases under BadInputFindings reproduce the findings of the fuzzers and
// of this table (tests/fuzz/README.md, "Findings"), named by number; they
// assert the fixed behaviour.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testutil/special_files.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

using testing::Finished;
using testing::RunToEnd;
using testing::TempDir;
using testing::TrialshimBinary;
using testing::WithMemoryCap;

std::string ArgvDump() {
  return std::string(TRIALSHIM_BIN_DIR) + "/trialshim_argv_dump";
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// The config tree every case works on:
//   <dir>/outside.yaml        a config outside the config dir ("secret")
//   <dir>/conf/config.yaml    defaults: [db: mysql, _self_], lr, name
//   <dir>/conf/db/mysql.yaml
//   <dir>/conf/<case>.yaml    one primary config per YAML case
class Tree {
 public:
  Tree() {
    std::filesystem::permissions(dir_.path(),
                                 std::filesystem::perms::owner_all |
                                     std::filesystem::perms::group_read |
                                     std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_read |
                                     std::filesystem::perms::others_exec);
    dir_.Write("outside.yaml", "secret: leaked\n");
    Conf("config", "defaults:\n  - db: mysql\n  - _self_\nlr: 0.1\nname: x\n");
    dir_.Write("conf/db/mysql.yaml", "host: h\n");
  }
  std::string conf() const { return dir_.Join("conf"); }
  std::string path(const std::string& rel) const { return dir_.Join(rel); }
  void Conf(const std::string& name, const std::string& text) const {
    dir_.Write("conf/" + name + ".yaml", text);
  }
  // argv of `trialshim compose` on config `name`, plus `extra`.
  std::vector<std::string> Compose(const std::string& name,
                                   std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv = {TrialshimBinary(), "compose",
                                     "--config-path",   conf(),
                                     "--config-name",   name};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

 private:
  TempDir dir_;
};

struct Case {
  std::string name;
  // Writes what the case needs into the tree.
  std::function<void(const Tree&)> setup;
  std::function<std::vector<std::string>(const Tree&)> argv;
  std::vector<std::string> env;  // "NAME=value"
  int exit_code;
  std::vector<std::string> stderr_has;
  std::vector<std::string> stdout_has = {};
  std::vector<std::string> stdout_lacks = {};
};

const auto kNoSetup = [](const Tree&) {};

void RunTable(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    Tree tree;
    c.setup(tree);
    Finished f = RunToEnd(c.argv(tree), c.env);
    EXPECT_EQ(f.term_signal, 0) << "case " << c.name << ": killed by signal "
                                << f.term_signal << "\nstderr: " << f.err;
    EXPECT_EQ(f.exit_code, c.exit_code)
        << "case " << c.name << "\nstderr: " << f.err.substr(0, 2000);
    EXPECT_EQ(f.err.find("internal error"), std::string::npos)
        << "case " << c.name << ": " << f.err;
    for (const std::string& phrase : c.stderr_has) {
      EXPECT_NE(f.err.find(phrase), std::string::npos)
          << "case " << c.name << ": stderr lacks \"" << phrase
          << "\"\nstderr: " << f.err.substr(0, 2000);
    }
    for (const std::string& phrase : c.stdout_has) {
      EXPECT_NE(f.out.find(phrase), std::string::npos)
          << "case " << c.name << ": stdout lacks \"" << phrase
          << "\"\nstdout: " << f.out.substr(0, 2000);
    }
    for (const std::string& phrase : c.stdout_lacks) {
      EXPECT_EQ(f.out.find(phrase), std::string::npos)
          << "case " << c.name << ": stdout has \"" << phrase << "\"";
    }
  }
}

// 9 levels of 9 aliases: 9^9 nodes once expanded, from 300 bytes.
const char kAliasBomb[] =
    "a: &a [x,x,x,x,x,x,x,x,x]\n"
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";

std::string ClusterSpec(const std::string& host, const std::string& type) {
  return "CLUSTER_SPEC={\"cluster\":{\"workerpool0\":[\"" + host +
         "\"]},\"task\":{\"type\":\"" + type + "\",\"index\":0}}";
}

TEST(BadInput, Table) {
  const std::vector<Case> cases = {
      // argv
      {"empty argv",
       kNoSetup,
       [](const Tree&) { return std::vector<std::string>{TrialshimBinary()}; },
       {},
       2,
       {"no COMMAND given", "usage: trialshim", "--help"}},
      {"only --",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "--"};
       },
       {},
       2,
       {"no COMMAND given", "usage: trialshim"}},
      {"empty key",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "translate", "--",
                                         "--=1"};
       },
       {},
       2,
       {"argument '--=1'", "empty key after '--'"}},
      {"key with a space",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "translate", "--",
                                         "--a b=1"};
       },
       {},
       2,
       {"argument '--a b=1'", "not a valid Hydra key", "optimizer.lr"}},
      // invalid UTF-8: the shim quotes it so Hydra reads it back byte for
      // byte; as a bare override it is refused with the quoting advice.
      // (In files: F5 under BadInputFindings.)
      {"invalid UTF-8 trial value",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "translate", "--",
                                         "--lr=\xff\xfe"};
       },
       {},
       0,
       {},
       {"lr='\xff\xfe'\n"}},
      {"invalid UTF-8 bare override",
       kNoSetup,
       [](const Tree& t) { return t.Compose("config", {"lr=\xff\xfe"}); },
       {},
       2,
       {"non-ASCII character", "at column 4", "quote the value"}},
      // NUL
      {"NUL escape in a YAML string",
       [](const Tree& t) { t.Conf("nul", "a: \"x\\0y\"\n"); },
       [](const Tree& t) { return t.Compose("nul"); },
       {},
       0,
       {},
       {"a: \"x\\0y\""}},
      {"raw NUL byte in a YAML file",
       [](const Tree& t) { t.Conf("nul", std::string("a: 1\nb: x\0y\n", 12)); },
       [](const Tree& t) { return t.Compose("nul"); },
       {},
       2,
       {"nul.yaml:2:5", "non-printable character U+0000 (NUL)",
        "double-quoted string"}},
      {"NUL escape in CLUSTER_SPEC task.type",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "env"};
       },
       {ClusterSpec("h:2222", "workerpool0\\u0000x")},
       2,
       {"CLUSTER_SPEC: task.type", "unknown pool",
        "did you mean 'workerpool0'"}},
      {"raw control character in CLUSTER_SPEC",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "env"};
       },
       {ClusterSpec("h\x01:2222", "workerpool0")},
       2,
       {"CLUSTER_SPEC: not valid JSON", "byte 30", "must be escaped"}},
      // files
      {"1 MiB value in a YAML file",
       [](const Tree& t) {
         t.Conf("big", "a: " + std::string(1 << 20, 'v') + "\n");
       },
       [](const Tree& t) { return t.Compose("big"); },
       {},
       0,
       {},
       {"a: " + std::string(1 << 20, 'v') + "\n"}},
      {"config file over 64 MiB",
       [](const Tree& t) {
         t.Conf("huge", "a: " + std::string(64 << 20, 'v') + "\n");
       },
       [](const Tree& t) { return t.Compose("huge"); },
       {},
       2,
       {"huge.yaml: 67108868 bytes, more than the 67108864 allowed",
        "max_file_bytes"}},
      {"directory as --config-path",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{
             TrialshimBinary(),          "compose",       "--config-path",
             t.path("conf/config.yaml"), "--config-name", "config"};
       },
       {},
       2,
       {"config.yaml' is not a directory"}},
      {"missing --config-path",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "compose",
                                         "--config-path",   t.path("nope"),
                                         "--config-name",   "config"};
       },
       {},
       2,
       {"nope' does not exist"}},
      {"directory as the primary config",
       [](const Tree& t) {
         std::filesystem::create_directory(t.path("conf/dirc.yaml"));
       },
       [](const Tree& t) { return t.Compose("dirc"); },
       {},
       2,
       {"Cannot find primary config 'dirc'", "Available primary configs",
        "config"}},
      {"directory as the job spec",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "check",
                                         t.path("conf/db")};
       },
       {},
       2,
       {"is a directory, not a file", "conf/db"}},
      {"directory as --map-file",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{
             TrialshimBinary(), "translate", "--map-file",
             t.path("conf/db"), "--",        "--a=1"};
       },
       {},
       1,
       {"can not read config file", "conf/db'",
        "it is a directory, not a regular file"}},
      {"directory as COMMAND",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "--",
                                         t.path("conf"), "--a=1"};
       },
       {},
       126,
       {"cannot run", "conf'", "Permission denied"}},
      {"missing COMMAND",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "--",
                                         t.path("nope"), "--a=1"};
       },
       {},
       127,
       {"cannot run", "nope'", "No such file or directory"}},
      {"symlink loop as the primary config",
       [](const Tree& t) {
         std::filesystem::create_symlink("l2.yaml", t.path("conf/l1.yaml"));
         std::filesystem::create_symlink("l1.yaml", t.path("conf/l2.yaml"));
       },
       [](const Tree& t) { return t.Compose("l1"); },
       {},
       2,
       {"Cannot find primary config 'l1'", "Config search path"}},
      {"symlink loop among groups does not stop composition",
       [](const Tree& t) {
         std::filesystem::create_directory(t.path("conf/loop"));
         std::filesystem::create_directory_symlink("../loop",
                                                   t.path("conf/loop/self"));
       },
       [](const Tree& t) { return t.Compose("config"); },
       {},
       0,
       {},
       {"host: h"}},
      {"option through a symlink loop",
       [](const Tree& t) {
         std::filesystem::create_directory(t.path("conf/loop"));
         std::filesystem::create_directory_symlink("../loop",
                                                   t.path("conf/loop/self"));
       },
       [](const Tree& t) {
         return t.Compose("config", {"+loop/self/self/self=x"});
       },
       {},
       2,
       {"Could not find 'loop/self/self/self/x'", "+loop/self/self/self=x"}},
      // path traversal
      {"group option with .. from a trial argument",
       kNoSetup,
       [](const Tree& t) {
         return std::vector<std::string>{
             TrialshimBinary(), "--config-path",
             t.conf(),          "--config-name",
             "config",          "--",
             ArgvDump(),        "--db=../../outside"};
       },
       {},
       2,
       {"argument '--db=../../outside'",
        "'../../outside' is not an option of config group 'db'",
        "available options: mysql"}},
      {"group option with one ..",
       kNoSetup,
       [](const Tree& t) { return t.Compose("config", {"db=../outside"}); },
       {},
       2,
       {"invalid option '../outside' for config group 'db'",
        "'..' path segment", "not file paths"}},
      // YAML bounds
      {"YAML alias bomb",
       [](const Tree& t) { t.Conf("bomb", kAliasBomb); },
       [](const Tree& t) { return t.Compose("bomb"); },
       {},
       2,
       {"bomb.yaml:7:8", "more than 1000000 nodes after expanding aliases",
        "max_nodes"}},
      // The root map is a level: "a: " and 128 lists make 129.
      {"YAML nested 129 levels",
       [](const Tree& t) {
         t.Conf("deep", "a: " + Repeat("[", 128) + Repeat("]", 128) + "\n");
       },
       [](const Tree& t) { return t.Compose("deep"); },
       {},
       2,
       {"deep.yaml:1:131", "nesting deeper than 128 levels", "max_depth"}},
      {"YAML nested 128 levels is fine",
       [](const Tree& t) {
         t.Conf("deep", "a: " + Repeat("[", 127) + Repeat("]", 127) + "\n");
       },
       [](const Tree& t) { return t.Compose("deep"); },
       {},
       0,
       {},
       {"a:"}},
      {"YAML nested 100000 deep",
       [](const Tree& t) {
         t.Conf("deep",
                "a: " + Repeat("[", 100000) + Repeat("]", 100000) + "\n");
       },
       [](const Tree& t) { return t.Compose("deep"); },
       {},
       2,
       {"nesting deeper than 128 levels"}},
      // interpolation
      {"interpolation cycle",
       [](const Tree& t) { t.Conf("cyc", "a: ${b}\nb: ${a}\n"); },
       [](const Tree& t) { return t.Compose("cyc", {"--resolve"}); },
       {},
       2,
       {"cyc.yaml:2:4", "Recursive interpolation detected: a -> b -> a"}},
      {"interpolation chain of 300 links",
       [](const Tree& t) {
         std::string text;
         for (int i = 0; i < 300; ++i) {
           text += "a" + std::to_string(i) + ": ${a" + std::to_string(i + 1) +
                   "}\n";
         }
         t.Conf("chain", text + "a300: 1\n");
       },
       [](const Tree& t) { return t.Compose("chain", {"--resolve"}); },
       {},
       2,
       {"interpolation chain longer than 256 links", "a0 -> a1 -> a2"}},
      {"interpolations nested 65 deep",
       [](const Tree& t) {
         t.Conf("nest",
                "a: " + Repeat("${", 65) + "x" + Repeat("}", 65) + "\n");
       },
       [](const Tree& t) { return t.Compose("nest", {"--resolve"}); },
       {},
       2,
       {"nest.yaml:1:4", "nested more than 64 levels"}},
      {"unknown resolver",
       [](const Tree& t) { t.Conf("res", "a: ${nope:1}\n"); },
       [](const Tree& t) { return t.Compose("res", {"--resolve"}); },
       {},
       2,
       {"res.yaml:1:4", "Unsupported interpolation type nope",
        "known resolvers: hydra, now, oc.create, oc.decode"}},
      {"misspelled resolver",
       [](const Tree& t) { t.Conf("res", "a: ${oc.envv:HOME}\n"); },
       [](const Tree& t) { return t.Compose("res", {"--resolve"}); },
       {},
       2,
       {"Unsupported interpolation type oc.envv", "oc.env"}},
  };
  RunTable(cases);
}

// 100k arguments (F10: the translator's duplicate check was quadratic,
// ~50 s here; now ~0.3 s). execve() allows ARG_MAX bytes (2 MiB with
// the default 8 MiB stack) for argv and envp together, each item costing its
// bytes, a NUL and an 8-byte pointer. 100k bare flags of 4 to 6 bytes take ~1.5
// MB.
// Inputs that are not regular files (issue 34): a FIFO named as a job
// spec, a --map-file or a config file of the tree would block open() for
// ever, a device would be read without end. Each is refused at once, exit 1
// (an I/O failure), naming the file and what it is. Integer flags take an
// integer their type holds, or exit 2 naming the flag.
TEST(BadInput, InputsThatAreNotRegularFilesAndIntegersThatDoNotFit) {
  auto fifo = [](const std::string& rel) {
    return [rel](const Tree& t) {
      std::filesystem::remove(t.path(rel));
      ASSERT_TRUE(testing::MakeSpecial(testing::Special::kFifo, t.path(rel)));
    };
  };
  auto zero = [](const std::string& rel) {
    return [rel](const Tree& t) {
      ASSERT_TRUE(
          testing::MakeSpecial(testing::Special::kZeroDevice, t.path(rel)));
    };
  };
  const std::string not_regular = ": it is a FIFO, not a regular file";
  RunTable({
      {"FIFO as check's job spec", fifo("job.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "check",
                                         t.path("job.yaml")};
       },
       {},
       1,
       {"job.yaml'" + not_regular}},
      {"zero device as check's job spec", zero("job.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "check",
                                         t.path("job.yaml")};
       },
       {},
       1,
       {"job.yaml': it is a character device, not a regular file"}},
      {"FIFO as sweep's job spec", fifo("job.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "sweep",
                                         t.path("job.yaml"), "--out",
                                         t.path("out")};
       },
       {},
       1,
       {"job.yaml'" + not_regular}},
      {"FIFO as --map-file", fifo("map.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{
             TrialshimBinary(), "translate", "--map-file",
             t.path("map.yaml"), "--",       "--a=1"};
       },
       {},
       1,
       {"map.yaml'" + not_regular}},
      // A config tree lists only regular files, as Hydra's os.path.isfile
      // does: a FIFO there is no option, never opened.
      {"FIFO as a config file of the tree", fifo("conf/db/mysql.yaml"),
       [](const Tree& t) { return t.Compose("config"); },
       {},
       2,
       {"In 'config': Could not find 'db/mysql'"}},
      {"FIFO as the primary config", fifo("conf/config.yaml"),
       [](const Tree& t) { return t.Compose("config"); },
       {},
       2,
       {"Cannot find primary config 'config'"}},
      {"--max-trials 1e20", fifo("job.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "sweep",
                                         t.path("job.yaml"), "--max-trials",
                                         "1e20"};
       },
       {},
       2,
       {"--max-trials", "expected an integer in [-9223372036854775808, "
                        "9223372036854775807], got '1e20'"}},
      {"--max-trials beyond int64", fifo("job.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "sweep",
                                         t.path("job.yaml"), "--max-trials",
                                         "99999999999999999999"};
       },
       {},
       2,
       {"--max-trials", "got '99999999999999999999' (out of range)"}},
      {"--seed 1e23", fifo("job.yaml"),
       [](const Tree& t) {
         return std::vector<std::string>{TrialshimBinary(), "sweep",
                                         t.path("job.yaml"), "--seed", "1e23"};
       },
       {},
       2,
       {"--seed", "expected an integer in [0, 18446744073709551615], got "
                  "'1e23'"}},
  });
}

TEST(BadInput, HundredThousandArguments) {
  const int n = 100000;
  std::vector<std::string> argv = {TrialshimBinary(), "--", ArgvDump()};
  for (int i = 0; i < n; ++i) argv.push_back("--k" + std::to_string(i));
  Finished f = RunToEnd(argv);
  ASSERT_EQ(f.exit_code, 0) << "case 100k arguments: " << f.err;
  nlohmann::json got = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_TRUE(got.is_array())
      << "case 100k arguments: " << f.out.substr(0, 200);
  ASSERT_EQ(got.size(), static_cast<size_t>(n)) << "case 100k arguments";
  EXPECT_EQ(got[0], "k0=true") << "case 100k arguments";
  EXPECT_EQ(got[n - 1], "k" + std::to_string(n - 1) + "=true")
      << "case 100k arguments";
}

// One argv item can hold at most MAX_ARG_STRLEN (128 KiB) bytes with its
// NUL, so a 1 MiB trial value can not reach any program; the largest one
// that can must come through whole, quoted as Hydra needs.
TEST(BadInput, LargestArgument) {
  std::string value = Repeat("a,", (128 * 1024 - 1 - 5) / 2);
  Finished f = RunToEnd({TrialshimBinary(), "--", ArgvDump(), "--lr=" + value});
  ASSERT_EQ(f.exit_code, 0) << "case 128 KiB argument: " << f.err;
  nlohmann::json got = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_TRUE(got.is_array() && got.size() == 1)
      << "case 128 KiB argument: " << f.out.substr(0, 200);
  EXPECT_EQ(got[0], "lr='" + value + "'") << "case 128 KiB argument";
}

// Unreadable by permission: root reads anything, so as root the binary is
// run as nobody (setpriv), which is what a locked-down container is.
TEST(BadInput, UnreadableFile) {
  Tree tree;
  tree.Conf("locked", "a: 1\n");
  std::filesystem::permissions(tree.path("conf/locked.yaml"),
                               std::filesystem::perms::none);
  std::vector<std::string> argv = tree.Compose("locked");
  if (geteuid() == 0) {
    if (access("/usr/bin/setpriv", X_OK) != 0) {
      GTEST_SKIP() << "running as root without setpriv";
    }
    argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=65534",
                               "--regid=65534", "--clear-groups"});
  }
  Finished f = RunToEnd(argv);
  EXPECT_EQ(f.exit_code, 1) << "case unreadable file: " << f.err;
  EXPECT_NE(f.err.find("can not read config file"), std::string::npos)
      << "case unreadable file: " << f.err;
  EXPECT_NE(f.err.find("locked.yaml': Permission denied"), std::string::npos)
      << "case unreadable file: " << f.err;
}

TEST(BadInputFindings, Table) {
  const std::vector<Case> cases = {
      // F1: keys the translator accepted that Hydra's grammar refuses; the
      // trial then failed inside Hydra instead of with trialshim's message.
      {"F1 leading-zero index in a key",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "translate", "--",
                                         "--a.02=1"};
       },
       {},
       2,
       {"argument '--a.02=1'", "not a valid Hydra key"}},
      {"F1 '$' in a group path",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "translate", "--",
                                         "--a/$b=1"};
       },
       {},
       2,
       {"argument '--a/$b=1'", "not a valid Hydra key"}},
      // F2: composition read configs outside the config directory.
      {"F2 group option with ../.. on the command line",
       kNoSetup,
       [](const Tree& t) { return t.Compose("config", {"db=../../outside"}); },
       {},
       2,
       {"invalid option '../../outside'", "'..' path segment"},
       {},
       {"secret"}},
      {"F2 group option with ../.. in a package override",
       kNoSetup,
       [](const Tree& t) {
         return t.Compose("config", {"+db@x=../../outside"});
       },
       {},
       2,
       {"invalid option '../../outside'", "'..' path segment"},
       {},
       {"secret"}},
      {"F2 group option with ../.. in the defaults list",
       [](const Tree& t) {
         t.Conf("trav", "defaults:\n  - db: ../../outside\n");
       },
       [](const Tree& t) { return t.Compose("trav"); },
       {},
       2,
       {"In 'trav.yaml'", "invalid option '../../outside'",
        "'..' path segment"},
       {},
       {"secret"}},
      {"F2 primary config name with ..",
       kNoSetup,
       [](const Tree& t) { return t.Compose("../outside"); },
       {},
       2,
       {"Invalid config name '../outside'", "'..' path segment"},
       {},
       {"secret"}},
      // F3: a number out of double's range escaped the JSON parser as an
      // exception (main printed "internal error", exit 1).
      {"F3 CLUSTER_SPEC number overflow",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "env"};
       },
       {"CLUSTER_SPEC={\"cluster\": 1e999}"},
       2,
       {"CLUSTER_SPEC: unsupported JSON", "number overflow"}},
      // F5: invalid UTF-8 in a YAML file was silently replaced by U+FFFD.
      {"F5 invalid UTF-8 in a YAML file",
       [](const Tree& t) { t.Conf("utf", "a: 1\nb: \xff\xfe\n"); },
       [](const Tree& t) { return t.Compose("utf"); },
       {},
       2,
       {"utf.yaml:2:4", "invalid UTF-8 byte 0xff"},
       {},
       {"\xef\xbf\xbd"}},
      // F6: a read error (EIO) escaped LoadYamlFile as an exception.
      {"F6 config file that fails to read (EIO)",
       [](const Tree& t) {
         std::filesystem::create_symlink("/proc/self/mem",
                                         t.path("conf/mem.yaml"));
       },
       [](const Tree& t) { return t.Compose("mem"); },
       {},
       1,
       {"can not read config file", "mem.yaml': Input/output error"}},
      // F7: "\u0000" in the primary's host was cut at the NUL by setenv.
      {"F7 NUL escape in CLUSTER_SPEC host",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{TrialshimBinary(), "env"};
       },
       {ClusterSpec("h\\u0000x:2222", "workerpool0")},
       2,
       {"CLUSTER_SPEC: cluster.workerpool0[0]", "control character",
        "expected \"host:port\""}},
      // F8: the override parser recursed once per bracket: 10000 levels
      // (20 KB, one argv item) overflowed the stack. Now refused past 128
      // levels; as a trial value (which Hydra could not read either) the
      // shim passes it on as a quoted string.
      {"F8 override nested 10000 deep",
       kNoSetup,
       [](const Tree& t) {
         return t.Compose("config",
                          {"lr=" + Repeat("[", 10000) + Repeat("]", 10000)});
       },
       {},
       2,
       {"Error parsing override", "nesting deeper than 128 levels"}},
      {"F8 trial value nested 10000 deep",
       kNoSetup,
       [](const Tree&) {
         return std::vector<std::string>{
             TrialshimBinary(), "--", ArgvDump(),
             "--lr=" + Repeat("{a:", 10000) + "1" + Repeat("}", 10000)};
       },
       {},
       0,
       {},
       {"[\"lr='{a:{a:{a:"}},
      // F9: string interpolation grew exponentially (40^6 bytes from a 1 KB
      // file). Capped at 2 GB here in case it comes back.
      {"F9 interpolation string bomb",
       [](const Tree& t) {
         std::string text = "a: x\n";
         for (char k = 'b'; k <= 'g'; ++k) {
           text += std::string(1, k) + ": " +
                   Repeat("${" + std::string(1, k - 1) + "}", 40) + "\n";
         }
         t.Conf("ibomb", text);
       },
       [](const Tree& t) {
         return WithMemoryCap(t.Compose("ibomb", {"--resolve"}));
       },
       {},
       2,
       {"ibomb.yaml:6:4", "the value of 'f' resolves to a string",
        "67108864 (64 MiB) allowed"}},
      // F11: a defaults list that included itself recursed until the
      // stack overflowed (SIGSEGV).
      {"F11 primary config that includes itself",
       [](const Tree& t) { t.Conf("self", "defaults:\n  - self\n"); },
       [](const Tree& t) { return t.Compose("self"); },
       {},
       2,
       {"In 'self.yaml'", "includes 'self' inside itself: self -> self"}},
      {"F11 group option that includes itself",
       [](const Tree& t) {
         t.Conf("cyc", "defaults:\n  - db: loop\n");
         t.Conf("db/loop", "defaults:\n  - /db: loop\nx: 1\n");
       },
       [](const Tree& t) { return t.Compose("cyc"); },
       {},
       2,
       {"In 'db/loop.yaml'",
        "includes 'db/loop' inside itself: db/loop -> db/loop"}},
  };
  RunTable(cases);
}

}  // namespace
}  // namespace trialshim
