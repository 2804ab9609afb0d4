// HypertuneReporter against cloudml-hypertune, byte for byte. The expected
// lines were produced by Debian's /usr/bin/python3 running json.dumps(d,
// sort_keys=True) on the dict hypertune.py builds:
//   {'timestamp': ts, 'trial': str(trial), tag: str(float(v)),
//    'global_step': str(int(step) if step else 0), 'checkpoint_path': ckpt}
// The Anchors* test has cloudml-hypertune's own HyperTune write the same
// reports with the same timestamps (tests/anchors/hypertune_replay.py).
#include "trialshim/hypertune/hypertune.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/fault.h"
#include "tests/testutil/special_files.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::hypertune {
namespace {

using ::trialshim::testing::ListDir;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::TempDir;

struct LineCase {
  const char* name;
  std::string tag;
  double value;
  int64_t step;
  std::string checkpoint;
  std::string trial;
  double timestamp;
  std::string expected;
};

const std::vector<LineCase>& LineCases() {
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  static const std::vector<LineCase> cases = {
      {"reference_example_1", "val_loss", 0.0123, 1000, "", "1",
       1525851440.123456,
       R"({"checkpoint_path": "", "global_step": "1000", "timestamp": 1525851440.123456, "trial": "1", "val_loss": "0.0123"})"},
      {"reference_example_2_default_tag", "", 1e-05, 0, "gs://b/ckpt/", "0",
       1700000000.5,
       R"({"checkpoint_path": "gs://b/ckpt/", "global_step": "0", "timestamp": 1700000000.5, "training/hptuning/metric": "1e-05", "trial": "0"})"},
      {"tag_sorts_first", "accuracy", 0.987, 5, "", "0", 1700000000.25,
       R"({"accuracy": "0.987", "checkpoint_path": "", "global_step": "5", "timestamp": 1700000000.25, "trial": "0"})"},
      {"integral_float_gets_dot_zero", "loss", 123.0, 1, "", "0", 1.0,
       R"({"checkpoint_path": "", "global_step": "1", "loss": "123.0", "timestamp": 1.0, "trial": "0"})"},
      {"exponent_at_1e16", "loss", 1e16, 2, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "2", "loss": "1e+16", "timestamp": 1700000000.0, "trial": "0"})"},
      {"no_exponent_at_1e-4", "loss", 0.0001, 3, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "3", "loss": "0.0001", "timestamp": 1700000000.0, "trial": "0"})"},
      {"large_integral", "loss", 123456.0, 3, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "3", "loss": "123456.0", "timestamp": 1700000000.0, "trial": "0"})"},
      {"nan", "loss", kNan, 3, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "3", "loss": "nan", "timestamp": 1700000000.0, "trial": "0"})"},
      {"inf", "loss", kInf, 3, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "3", "loss": "inf", "timestamp": 1700000000.0, "trial": "0"})"},
      {"minus_inf", "loss", -kInf, 3, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "3", "loss": "-inf", "timestamp": 1700000000.0, "trial": "0"})"},
      {"minus_zero", "loss", -0.0, 3, "", "0", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "3", "loss": "-0.0", "timestamp": 1700000000.0, "trial": "0"})"},
      {"tag_sorts_last_negative_step", "zeta", 0.1, -7, "", "12", 1700000000.0,
       R"({"checkpoint_path": "", "global_step": "-7", "timestamp": 1700000000.0, "trial": "12", "zeta": "0.1"})"},
      {"uppercase_sorts_before_lowercase", "Aardvark", 0.1, 1, "", "3",
       1700000000.0,
       R"({"Aardvark": "0.1", "checkpoint_path": "", "global_step": "1", "timestamp": 1700000000.0, "trial": "3"})"},
      {"non_ascii_escaped_with_surrogates", "m\xc3\xa9trique", 0.5, 1,
       "/tmp/\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80", "0", 1700000000.0,
       R"({"checkpoint_path": "/tmp/\u00e9 \u2603 \ud83d\ude00", "global_step": "1", "m\u00e9trique": "0.5", "timestamp": 1700000000.0, "trial": "0"})"},
      {"control_and_quote_escapes", "a\"b\\c", 0.5, 1,
       "line\nbreak\ttab\x01\x7f", "0", 1700000000.0,
       R"({"a\"b\\c": "0.5", "checkpoint_path": "line\nbreak\ttab\u0001\u007f", "global_step": "1", "timestamp": 1700000000.0, "trial": "0"})"},
      {"tag_named_trial_overwrites_trial", "trial", 0.5, 1, "", "9",
       1700000000.0,
       R"({"checkpoint_path": "", "global_step": "1", "timestamp": 1700000000.0, "trial": "0.5"})"},
      {"tag_named_global_step_is_overwritten", "global_step", 0.5, 42, "", "9",
       1700000000.0,
       R"({"checkpoint_path": "", "global_step": "42", "timestamp": 1700000000.0, "trial": "9"})"},
      {"default_tag_spelled_out", "training/hptuning/metric", 2.5e-7, 10, "",
       "0", 1699999999.999999,
       R"({"checkpoint_path": "", "global_step": "10", "timestamp": 1699999999.999999, "training/hptuning/metric": "2.5e-07", "trial": "0"})"},
  };
  return cases;
}

TEST(HypertuneFormatLine, MatchesPythonJsonDumps) {
  for (const LineCase& c : LineCases()) {
    EXPECT_EQ(HypertuneReporter::FormatLine(c.tag, c.value, c.step,
                                            c.checkpoint, c.trial, c.timestamp),
              c.expected)
        << "case " << c.name;
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(HypertuneReporter, KeepsTheLast100ReportsAndRewritesTheFile) {
  TempDir tmp;
  // Nested directories that do not exist yet are created.
  std::string path = tmp.Join("a/b/output.metrics");
  HypertuneReporter reporter(path, "7");
  for (int i = 0; i < 200; ++i) {
    ASSERT_OK(reporter.Report("val_loss", 1.0 / (i + 1), i));
    if (i == 0) {
      ASSERT_EQ(Lines(ReadFile(path)).size(), 1u);
    }
  }
  std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 100u);
  EXPECT_NE(lines.front().find(R"("global_step": "100")"), std::string::npos)
      << lines.front();
  EXPECT_NE(lines.back().find(R"("global_step": "199")"), std::string::npos)
      << lines.back();
  EXPECT_NE(lines.back().find(R"("trial": "7")"), std::string::npos);
  EXPECT_NE(lines.back().find(R"("val_loss": "0.005")"), std::string::npos)
      << lines.back();
  // The temporary files were all renamed away.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.Join("a/b"))) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// One report for tests/anchors/hypertune_replay.py: the value exactly, as
// float.hex() text.
nlohmann::json Replayed(std::string_view tag, double value, int64_t step,
                        std::string_view checkpoint, double timestamp) {
  char hex[64];
  std::snprintf(hex, sizeof hex, "%a", value);
  return {{"tag", tag},
          {"value", hex},
          {"step", step},
          {"checkpoint_path", checkpoint},
          {"timestamp", timestamp}};
}

// What cloudml-hypertune's HyperTune writes for `reports` of trial `trial`.
std::string CloudmlHypertuneWrites(const std::string& trial,
                                   const nlohmann::json& reports) {
  TempDir dir;
  nlohmann::json job = {{"trial", trial}, {"reports", reports}};
  testing::Finished f = testing::RunAnchorsScript(
      "tests/anchors/hypertune_replay.py",
      {"hypertune", dir.Write("reports.json", job.dump()),
       dir.Join("output.metrics")});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  return ReadFile(dir.Join("output.metrics"));
}

TEST(AnchorsHypertune, WritesWhatCloudmlHypertuneWrites) {
  SKIP_WITHOUT_ANCHORS();
  for (const LineCase& c : LineCases()) {
    EXPECT_EQ(
        CloudmlHypertuneWrites(
            c.trial, nlohmann::json::array({Replayed(
                         c.tag, c.value, c.step, c.checkpoint, c.timestamp)})),
        HypertuneReporter::FormatLine(c.tag, c.value, c.step, c.checkpoint,
                                      c.trial, c.timestamp) +
            "\n")
        << "case " << c.name;
  }
  // A whole file: 200 reports, the last 100 kept, at the times ours made.
  TempDir tmp;
  HypertuneReporter reporter(tmp.Join("output.metrics"), "7");
  nlohmann::json reports = nlohmann::json::array();
  for (int i = 0; i < 200; ++i) {
    ASSERT_OK(reporter.Report("val_loss", 1.0 / (i + 1), i));
    reports.push_back(Replayed("val_loss", 1.0 / (i + 1), i, "", 0));
  }
  std::vector<std::string> ours = Lines(ReadFile(reporter.path()));
  ASSERT_EQ(ours.size(), 100u);
  for (size_t i = 0; i < ours.size(); ++i) {
    reports[100 + i]["timestamp"] = nlohmann::json::parse(ours[i])["timestamp"];
  }
  EXPECT_EQ(CloudmlHypertuneWrites("7", reports), ReadFile(reporter.path()));
}

// A step given as text (what a trainer printed) is written as
// cloudml-hypertune 0.1.0.dev6 writes report_hyperparameter_tuning_metric(
// ..., global_step=text): str(int(text) if text else 0), any size; where
// its int() raises ValueError, nothing is written. Each expectation is what
// that package wrote (or raised) for the same text.
TEST(HypertuneReporter, StepTextIsWrittenAsCloudmlHypertuneWritesIt) {
  struct Case {
    std::string step;
    std::string want;  // the global_step written, or the error
  };
  const std::vector<Case> cases = {
      {"", "0"},
      {"0", "0"},
      {"12", "12"},
      {" 12 ", "12"},
      {"+12", "12"},
      {"-7", "-7"},
      {"1_000", "1000"},
      {"007", "7"},
      {"\t42\n", "42"},
      {"99999999999999999999", "99999999999999999999"},
      {"12abc",
       "error: global_step: invalid literal for int() with base 10: "
       "'12abc'"},
      {"1.5",
       "error: global_step: invalid literal for int() with base 10: "
       "'1.5'"},
      {" ", "error: global_step: invalid literal for int() with base 10: ' '"},
      {"_1",
       "error: global_step: invalid literal for int() with base 10: "
       "'_1'"},
      {"1__0",
       "error: global_step: invalid literal for int() with base 10: "
       "'1__0'"},
      {"0x10",
       "error: global_step: invalid literal for int() with base 10: "
       "'0x10'"},
      {"1e3",
       "error: global_step: invalid literal for int() with base 10: "
       "'1e3'"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    const std::string path = tmp.Join("output.metrics");
    HypertuneReporter reporter(path, "0");
    Status st = reporter.ReportStepText("loss", 0.5, c.step);
    if (c.want.rfind("error: ", 0) == 0) {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << "case " << c.step;
      EXPECT_EQ("error: " + st.message(), c.want) << "case " << c.step;
      EXPECT_FALSE(std::filesystem::exists(path)) << "case " << c.step;
      continue;
    }
    ASSERT_OK(st) << "case " << c.step;
    const std::string line = ReadFile(path);
    EXPECT_NE(line.find("\"global_step\": \"" + c.want + "\""),
              std::string::npos)
        << "case " << c.step << ": " << line;
  }
}

TEST(HypertuneReporter, TimestampIsNowAsAPythonFloat) {
  TempDir tmp;
  std::string path = tmp.Join("m");
  HypertuneReporter reporter(path, "0");
  double before = static_cast<double>(time(nullptr));
  ASSERT_OK(reporter.Report("t", 1));
  std::string line = ReadFile(path);
  size_t at = line.find("\"timestamp\": ");
  ASSERT_NE(at, std::string::npos) << line;
  double ts = std::strtod(line.c_str() + at + 13, nullptr);
  EXPECT_GE(ts, before - 1);
  EXPECT_LE(ts, before + 60);
}

TEST(HypertuneReporter, NewReporterStartsAFreshFile) {
  TempDir tmp;
  std::string path = tmp.Join("m");
  {
    HypertuneReporter first(path, "0");
    ASSERT_OK(first.Report("t", 1));
    ASSERT_OK(first.Report("t", 2));
  }
  HypertuneReporter second(path, "0");
  ASSERT_OK(second.Report("t", 3));
  std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(R"("t": "3.0")"), std::string::npos) << lines[0];
}

TEST(HypertuneReporter, FromEnvironment) {
  struct Case {
    const char* name;
    const char* file;   // null: unset
    const char* trial;  // null: unset
    std::string want_path;
    std::string want_trial;
  };
  const std::vector<Case> cases = {
      {"defaults", nullptr, nullptr, kDefaultMetricPath, "0"},
      {"both_set", "/x/y.metrics", "12", "/x/y.metrics", "12"},
      {"empty_trial_kept", nullptr, "", kDefaultMetricPath, ""},
  };
  for (const Case& c : cases) {
    if (c.file) {
      setenv("CLOUD_ML_HP_METRIC_FILE", c.file, 1);
    } else {
      unsetenv("CLOUD_ML_HP_METRIC_FILE");
    }
    if (c.trial) {
      setenv("CLOUD_ML_TRIAL_ID", c.trial, 1);
    } else {
      unsetenv("CLOUD_ML_TRIAL_ID");
    }
    HypertuneReporter r = HypertuneReporter::FromEnvironment();
    EXPECT_EQ(r.path(), c.want_path) << "case " << c.name;
    EXPECT_EQ(r.trial_id(), c.want_trial) << "case " << c.name;
  }
  unsetenv("CLOUD_ML_HP_METRIC_FILE");
  unsetenv("CLOUD_ML_TRIAL_ID");
}

// CLOUD_ML_HP_METRIC_FILE naming what is not a regular file: written into
// as cloudml-hypertune's open(path, 'w') writes into it, never replaced by
// a file (a durable rename over /dev/null would turn the device into a
// file, for everyone, as root); what would block a trainer for ever (a FIFO
// nobody reads) or can not be written is refused, naming it. The node stays
// what it was in every case. Device nodes are made with mknod in the test's
// own directory; /dev is never touched.
TEST(HypertuneReporter, MetricFileThatIsNotARegularFileIsWrittenIntoNotReplaced) {
  using testing::Special;
  struct Case {
    const char* name;
    Special special;
    bool through_link;
    std::string want;  // "" for OK, else the error after "cannot write <path>"
  } cases[] = {
      {"null device", Special::kNullDevice, false, ""},
      {"link to a null device", Special::kNullDevice, true, ""},
      {"full device", Special::kFullDevice, false,
       ": No space left on device"},
      {"FIFO nobody reads", Special::kFifo, false,
       ": it is a FIFO that no process reads, or a socket (a trainer would "
       "wait there for ever)"},
      {"socket", Special::kSocket, false,
       ": it is a FIFO that no process reads, or a socket (a trainer would "
       "wait there for ever)"},
      {"directory", Special::kDirectory, false, ": Is a directory"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::string node = dir.Join("node");
    ASSERT_TRUE(testing::MakeSpecial(c.special, node)) << c.name;
    std::string path = node;
    if (c.through_link) {
      path = dir.Join("output.metrics");
      ASSERT_EQ(symlink(node.c_str(), path.c_str()), 0) << c.name;
    }
    mode_t before = testing::TypeAt(path);
    mode_t node_before = testing::TypeAt(node);
    HypertuneReporter reporter(path, "1");
    Status st = reporter.Report("loss", 0.5, 1);
    if (c.want.empty()) {
      EXPECT_OK(st) << c.name;
    } else {
      EXPECT_THAT(st, StatusIs(StatusCode::kIOError, "cannot write " + path +
                                                         c.want))
          << c.name;
    }
    EXPECT_EQ(testing::TypeAt(path), before) << c.name;
    EXPECT_EQ(testing::TypeAt(node), node_before) << c.name;
    std::set<std::string> want_names = {"node"};
    if (c.through_link) want_names.insert("output.metrics");
    EXPECT_EQ(ListDir(dir.path()), want_names) << c.name << ": no temporary";
  }
}

// A FIFO with a reader gets the report, as Python's open('w') gives it.
TEST(HypertuneReporter, MetricFileThatIsAReadFifoGetsTheReport) {
  TempDir dir;
  std::string fifo = dir.Join("output.metrics");
  ASSERT_TRUE(testing::MakeSpecial(testing::Special::kFifo, fifo));
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  HypertuneReporter reporter(fifo, "1");
  ASSERT_OK(reporter.Report("loss", 0.5, 1));
  char buf[512];
  ssize_t n = read(reader, buf, sizeof buf);
  close(reader);
  ASSERT_GT(n, 0);
  std::string line(buf, static_cast<size_t>(n));
  EXPECT_NE(line.find("\"loss\": \"0.5\""), std::string::npos) << line;
  EXPECT_EQ(testing::TypeAt(fifo), static_cast<mode_t>(S_IFIFO));
}

// A link to a regular file: the file is replaced durably, the link stays.
TEST(HypertuneReporter, MetricFileLinkedToAFileKeepsTheLink) {
  TempDir dir;
  std::string target = dir.Write("real/output.metrics", "old\n");
  std::string link = dir.Join("output.metrics");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  HypertuneReporter reporter(link, "1");
  ASSERT_OK(reporter.Report("loss", 0.5, 1));
  EXPECT_EQ(testing::TypeAt(link), static_cast<mode_t>(S_IFLNK));
  EXPECT_NE(ReadFile(target).find("\"loss\": \"0.5\""), std::string::npos);
}

TEST(HypertuneReporter, UnwritablePathIsAnIOError) {
  TempDir tmp;
  std::string file = tmp.Write("plain", "x");
  HypertuneReporter reporter(file + "/sub/output.metrics", "0");
  Status s = reporter.Report("t", 1);
  EXPECT_THAT(s, StatusIs(StatusCode::kIOError, HasSubstr("plain")));
}

// The metric file goes through DurableWriter: a write that fails (a full
// disk, a parent that is a file) names the file and the reason and leaves
// the last good file, and no temporary, behind.
TEST(HypertuneReporter, FailedWriteKeepsTheOldFileAndNoTemporary) {
  testing::ExpectFailedWriteKeepsTheOldFile(
      "output.metrics", 512, [](const std::string& path, int version) {
        // Version 1 holds a second line, over 1000 bytes long.
        return HypertuneReporter(path, "0").Report(
            "t", version, version, std::string(1000 * version, 'x'));
      });
}

TEST(HypertuneReporter, ConcurrentProcessesCreateTheSameDirectories) {
  TempDir tmp;
  std::string dir = tmp.Join("x/y/z");
  constexpr int kProcs = 8;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    // A fork, not testing::Child: each process runs the reporter itself.
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      HypertuneReporter r(dir + "/m" + std::to_string(p % 2), "0");
      bool ok = true;
      for (int i = 0; i < 20; ++i) ok = ok && r.Report("t", i, i).ok();
      _exit(ok ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  // Whoever renamed last, each file is whole: 20 complete lines.
  for (int f = 0; f < 2; ++f) {
    std::vector<std::string> lines =
        Lines(ReadFile(dir + "/m" + std::to_string(f)));
    ASSERT_EQ(lines.size(), 20u) << "file m" << f;
    EXPECT_NE(lines.back().find(R"("global_step": "19")"), std::string::npos);
  }
}

// What `trialshim sweep` reads back from a trial's metric file, which the
// trial may have filled with anything.
TEST(ReadMetricFile, ReadsReportsAndSkipsWhatIsNotOne) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::string name;
    std::string text;
    std::vector<std::pair<double, int64_t>> want;  // value, global_step
    std::vector<std::string> other_tags = {};
  };
  const std::string written =
      HypertuneReporter::FormatLine("accuracy", 0.25, 12, "", "3", 1.5);
  const std::vector<Case> cases = {
      {"as cloudml-hypertune writes it", written + "\n", {{0.25, 12}}},
      {"several, in file order",
       R"({"accuracy": "0.5", "global_step": "1"})"
       "\n"
       R"({"accuracy": "0.75", "global_step": "2"})",
       {{0.5, 1}, {0.75, 2}}},
      {"numbers instead of strings",
       R"({"accuracy": 0.5, "global_step": 7})",
       {{0.5, 7}}},
      {"value that is not a number", R"({"accuracy": "high"})", {{nan, 0}}},
      {"nan as Python writes it", R"({"accuracy": "nan"})", {{nan, 0}}},
      {"float step beyond int64",
       R"({"accuracy": "1", "global_step": 1e300})",
       {{1, 0}}},
      {"unsigned step beyond int64",
       R"({"accuracy": "1", "global_step": 18446744073709551615})",
       {{1, 0}}},
      // A string is read as Python's int() reads it (cloudml-hypertune
      // writes str(int(step))): beyond int64 or not an int, no step.
      {"string step beyond int64",
       R"({"accuracy": "1", "global_step": "99999999999999999999"})",
       {{1, 0}}},
      {"string step with junk",
       R"({"accuracy": "1", "global_step": "12abc"})",
       {{1, 0}}},
      {"string step as int() reads it",
       R"({"accuracy": "1", "global_step": " -1_000 "})",
       {{1, -1000}}},
      {"garbage lines skipped",
       "not json\n[1, 2]\n\x80\xff\n" + written,
       {{0.25, 12}}},
      {"other tags listed",
       R"({"loss": "0.1", "timestamp": 1, "trial": "0"})"
       "\n"
       R"({"val_acc": "0.9"})",
       {},
       {"loss", "val_acc"}},
  };
  TempDir dir;
  for (const Case& c : cases) {
    const std::string path = dir.Write("m/" + c.name, c.text);
    MetricFile got = ReadMetricFile(path, "accuracy");
    EXPECT_TRUE(got.exists) << "case " << c.name;
    ASSERT_EQ(got.reports.size(), c.want.size()) << "case " << c.name;
    for (size_t i = 0; i < c.want.size(); ++i) {
      const double want = c.want[i].first, value = got.reports[i].value;
      EXPECT_TRUE(std::isnan(want) ? std::isnan(value) : value == want)
          << "case " << c.name << ", report " << i << ": " << value;
      EXPECT_EQ(got.reports[i].global_step, c.want[i].second)
          << "case " << c.name << ", report " << i;
    }
    EXPECT_EQ(got.other_tags, c.other_tags) << "case " << c.name;
  }
  EXPECT_FALSE(ReadMetricFile(dir.Join("none"), "accuracy").exists)
      << "case missing file";
}

// A metric file the trial made hostile costs at most the limits: only a
// regular file is read, only its end, and long lines are skipped; what was
// refused or left out is said in `problem`.
TEST(ReadMetricFile, HostileFilesAreReadWithinTheLimits) {
  TempDir dir;
  const std::string report =
      HypertuneReporter::FormatLine("accuracy", 0.5, 3, "", "1", 1.5);
  ASSERT_EQ(mkfifo(dir.Join("fifo").c_str(), 0644), 0);
  ASSERT_EQ(symlink("/dev/zero", dir.Join("zero").c_str()), 0);
  MetricFileLimits limits;
  limits.max_bytes = 4096;
  limits.max_line = 1024;
  struct Case {
    std::string name;
    std::string path;
    size_t reports;
    std::string problem;
  } cases[] = {
      {"FIFO", dir.Join("fifo"), 0,
       dir.Join("fifo") + " is a FIFO, not a regular file; not read"},
      {"link to /dev/zero", dir.Join("zero"), 0,
       dir.Join("zero") + " is a symbolic link, not a regular file; not read"},
      {"a line longer than max_line between reports",
       dir.Write("long", report + "\n" + std::string(2000, 'x') + "\n" +
                             report + "\n"),
       2, dir.Join("long") + ": 1 line longer than 1024 bytes skipped"},
      {"a file longer than max_bytes: the reports at its end",
       dir.Write("big", std::string(10000, 'x') + "\n" + report + "\n"), 1,
       dir.Join("big") + " is " + std::to_string(10002 + report.size()) +
           " bytes: only its last 4096 were read"},
      {"one line longer than max_bytes",
       dir.Write("oneline", std::string(10000, 'x')), 0,
       dir.Join("oneline") +
           " is 10000 bytes: only its last 4096 were read; 1 line longer "
           "than 1024 bytes skipped"},
      {"read whole", dir.Write("fine", report + "\n"), 1, ""},
  };
  for (const Case& c : cases) {
    MetricFile got = ReadMetricFile(c.path, "accuracy", limits);
    EXPECT_TRUE(got.exists) << "case " << c.name;
    EXPECT_EQ(got.reports.size(), c.reports) << "case " << c.name;
    EXPECT_EQ(got.problem, c.problem) << "case " << c.name;
  }
}

// Other tags are listed for the INFEASIBLE reason: 20 at most, each cut to
// 100 bytes, however many a file holds.
TEST(ReadMetricFile, OtherTagsAreBounded) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    text += "{\"" + std::string(i == 0 ? 300 : 1, 'k') + std::to_string(i) +
            "\": \"1\"}\n";
  }
  MetricFile got = ReadMetricFile(dir.Write("tags", text), "accuracy");
  ASSERT_EQ(got.other_tags.size(), 20u);
  EXPECT_EQ(got.other_tags[0], std::string(100, 'k') + "...");
  EXPECT_EQ(got.other_tags[1], "k1");
}

// The timestamp is what `trialshim sweep` measures elapsed time from.
TEST(ReadMetricFile, Timestamps) {
  struct Case {
    std::string name;
    std::string text;
    double want;
  } cases[] = {
      {"as cloudml-hypertune writes it",
       HypertuneReporter::FormatLine("accuracy", 0.25, 12, "", "3", 1.5), 1.5},
      {"none", R"({"accuracy": "0.5"})", 0},
      {"not a number", R"({"accuracy": "0.5", "timestamp": "soon"})", 0},
  };
  TempDir dir;
  for (const Case& c : cases) {
    std::string path = dir.Write("ts.metrics", c.text + "\n");
    MetricFile got = ReadMetricFile(path, "accuracy");
    ASSERT_EQ(got.reports.size(), 1u) << "case " << c.name;
    EXPECT_EQ(got.reports[0].timestamp, c.want) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::hypertune
