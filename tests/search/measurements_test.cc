// Tests for search/src/measurements.cc: the final measurement as
// measurementSelectionType picks it, and a metric file followed while a
// trainer rewrites it (the 100-report window, torn writes, no timestamps).
#include "trialshim/search/measurements.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/hypertune/hypertune.h"

namespace trialshim::tuning {
namespace {

using testing::TempDir;

TEST(MeasurementsTest, SelectMeasurement) {
  const std::vector<Measurement> ms = {
      {1, 1, 0.5}, {2, 2, 0.9}, {3, 3, NAN}, {4, 4, 0.7}};
  struct Case {
    const char* name;
    std::vector<Measurement> measurements;
    MeasurementSelection selection;
    Goal goal;
    std::optional<int64_t> want_step;
  } cases[] = {
      {"last", ms, MeasurementSelection::kLast, Goal::kMaximize, 4},
      {"unspecified is last", ms, MeasurementSelection::kUnspecified,
       Goal::kMinimize, 4},
      {"best max", ms, MeasurementSelection::kBest, Goal::kMaximize, 2},
      {"best min", ms, MeasurementSelection::kBest, Goal::kMinimize, 1},
      {"best of none finite",
       {{1, 1, NAN}},
       MeasurementSelection::kBest,
       Goal::kMaximize,
       std::nullopt},
      {"last may be nan",
       {{1, 1, 1}, {2, 2, NAN}},
       MeasurementSelection::kLast,
       Goal::kMaximize,
       2},
      {"none", {}, MeasurementSelection::kLast, Goal::kMaximize, std::nullopt},
  };
  for (const Case& c : cases) {
    std::optional<Measurement> got =
        SelectMeasurement(c.measurements, c.selection, c.goal);
    ASSERT_EQ(got.has_value(), c.want_step.has_value()) << "case " << c.name;
    if (got) {
      EXPECT_EQ(got->step, *c.want_step) << "case " << c.name;
    }
  }
}

// The steps a log holds.
std::vector<int64_t> StepsOf(const MeasurementLog& log) {
  std::vector<int64_t> out;
  for (const Measurement& m : log.measurements()) out.push_back(m.step);
  return out;
}

// A trainer reporting through HypertuneReporter, which keeps the last 100
// reports: followed every 30 reports, the log still has all 130.
TEST(MeasurementsTest, KeepsWhatTheWindowDrops) {
  TempDir dir;
  std::string path = dir.Join("output.metrics");
  hypertune::HypertuneReporter reporter(path, "1");
  MeasurementLog log(path, "loss", 0);
  EXPECT_FALSE(log.Update()) << "no file yet";
  EXPECT_FALSE(log.exists());
  for (int step = 1; step <= 130; ++step) {
    ASSERT_OK(reporter.Report("loss", 1.0 / step, step));
    if (step % 30 == 0) {
      EXPECT_TRUE(log.Update()) << "case step " << step;
    }
  }
  EXPECT_TRUE(log.Update());
  EXPECT_FALSE(log.Update()) << "unchanged file";
  std::vector<int64_t> want;
  for (int step = 1; step <= 130; ++step) want.push_back(step);
  EXPECT_EQ(StepsOf(log), want);
  EXPECT_TRUE(log.exists());
  EXPECT_GT(log.measurements()[0].elapsed_seconds, 1e9)
      << "measured from start_time 0";
}

std::string Line(int64_t step, double value, double timestamp) {
  std::string ts =
      timestamp > 0 ? "\"timestamp\": " + std::to_string(timestamp) + ", " : "";
  return "{\"global_step\": \"" + std::to_string(step) + "\", " + ts +
         "\"loss\": \"" + std::to_string(value) + "\"}\n";
}

// The trial may replace its metric file with anything: what was read stays,
// a FIFO or a link is not opened in a way that blocks or reads on, and
// problem() says why.
TEST(MeasurementsTest, AFileReplacedByAFifoOrALinkKeepsWhatWasRead) {
  for (const char* kind : {"fifo", "link"}) {
    TempDir dir;
    std::string path = dir.Join("output.metrics");
    MeasurementLog log(path, "loss", 50);
    std::ofstream(path) << Line(1, 1, 100);
    ASSERT_TRUE(log.Update(/*force=*/true)) << "case " << kind;
    ASSERT_EQ(unlink(path.c_str()), 0);
    if (std::string(kind) == "fifo") {
      ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
    } else {
      ASSERT_EQ(symlink("/dev/zero", path.c_str()), 0);
    }
    EXPECT_FALSE(log.Update(/*force=*/true)) << "case " << kind;
    EXPECT_EQ(StepsOf(log), std::vector<int64_t>{1}) << "case " << kind;
    EXPECT_TRUE(log.exists()) << "case " << kind;
    EXPECT_NE(log.problem().find(", not a regular file; not read"),
              std::string::npos)
        << "case " << kind << ": " << log.problem();
  }
}

// What a reader can find in a file written in place, one call after the
// other: each case is the file's contents at successive Update()s and the
// steps the log holds after each.
TEST(MeasurementsTest, FileStates) {
  struct Case {
    const char* name;
    std::vector<std::string> contents;
    std::vector<std::vector<int64_t>> want;
  } cases[] = {
      {"appended",
       {Line(1, 1, 100), Line(1, 1, 100) + Line(2, 0.5, 101)},
       {{1}, {1, 2}}},
      {"torn last line",
       {Line(1, 1, 100) + Line(2, 0.5, 101).substr(0, 20),
        Line(1, 1, 100) + Line(2, 0.5, 101)},
       {{1}, {1, 2}}},
      {"cut short mid-rewrite",
       {Line(1, 1, 100) + Line(2, 0.5, 101), "",
        Line(1, 1, 100) + Line(2, 0.5, 101) + Line(3, 0.2, 102)},
       {{1, 2}, {1, 2}, {1, 2, 3}}},
      {"window moved past the last one",
       {Line(1, 1, 100), Line(3, 0.2, 102) + Line(4, 0.1, 103)},
       {{1}, {1, 3, 4}}},
      {"the same value again",
       {Line(1, 1, 100), Line(1, 1, 100) + Line(1, 1, 101)},
       {{1}, {1, 1}}},
      {"no timestamps",
       {Line(1, 1, 0), Line(1, 1, 0) + Line(2, 0.5, 0),
        Line(2, 0.5, 0).substr(0, 9), Line(5, 0.5, 0) + Line(6, 0.5, 0)},
       {{1}, {1, 2}, {1, 2}, {5, 6}}},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::string path = dir.Join("output.metrics");
    MeasurementLog log(path, "loss", 50);
    for (size_t i = 0; i < c.contents.size(); ++i) {
      std::ofstream(path, std::ios::trunc) << c.contents[i];
      log.Update(/*force=*/true);
      EXPECT_EQ(StepsOf(log), c.want[i]) << "case " << c.name << " read " << i;
    }
    if (!log.measurements().empty() &&
        c.contents[0].find("timestamp") != std::string::npos) {
      EXPECT_EQ(log.measurements()[0].elapsed_seconds, 50)
          << "case " << c.name << ": timestamp - start_time";
    }
  }
}

}  // namespace
}  // namespace trialshim::tuning
