// Tests for tuning/src/report_html.cc: the plots a sweep's report.html
// shows, that its size stays linear in parameters + trials, and that
// Chromium renders it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/tuning/sweep.h"

namespace trialshim::tuning {
namespace {

size_t Count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos;
       at = s.find(part, at + part.size()))
    ++n;
  return n;
}

// A sweep over p0..p<parameters-1> (p1 INTEGER, p2 CATEGORICAL, the rest
// DOUBLE in [0, 1]) minimizing "loss"; every 10th trial failed. The
// `signal` parameters follow the loss exactly (odd ones inversely), the
// others are noise, so they are the ones a ranking must pick.
SweepResult Sweep(int parameters, int trials, const std::set<int>& signal) {
  SweepResult r;
  r.job_id = "job-1";
  r.algorithm = Algorithm::kUnspecified;
  r.metric_id = "loss";
  r.goal = Goal::kMinimize;
  const std::vector<std::string> categories = {"adam", "sgd", "rmsprop"};
  for (int i = 0; i < parameters; ++i) {
    ParameterSpec p;
    p.id = "p" + std::to_string(i);
    p.type = i == 1   ? ParameterType::kInteger
             : i == 2 ? ParameterType::kCategorical
                      : ParameterType::kDouble;
    if (i == 2) p.categorical_values = categories;
    r.parameters.push_back(p);
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < trials; ++t) {
    TrialRecord rec;
    rec.id = t + 1;
    bool ok = t % 10 != 9;
    rec.state = ok ? TrialState::kSucceeded : TrialState::kFailed;
    if (ok) rec.metric = u(rng);
    if (!ok) rec.reason = "exit code 1";
    for (const ParameterSpec& p : r.parameters) {
      ParameterValue v;
      v.id = p.id;
      v.type = p.type;
      int i = std::stoi(p.id.substr(1));
      double x = ok && signal.count(i) ? *rec.metric : u(rng);
      v.number = i % 2 && signal.count(i) ? 1 - x : x;
      if (p.type == ParameterType::kInteger) v.number = 1 + int(x * 64);
      if (p.type == ParameterType::kCategorical) v.text = categories[x * 3];
      rec.parameters.push_back(v);
    }
    r.trials.push_back(rec);
  }
  return r;
}

std::string PlotTitle(const std::string& id) {
  return ">loss vs " + id + "</text>";
}

TEST(ReportHtml, PlotsTheRankedParametersAndStaysSmall) {
  const std::set<int> signal = {5, 77, 300, 999, 1234, 1500, 1998, 1999};
  struct Case {
    const char* name;
    int parameters, trials;
    std::set<int> signal;
    std::vector<std::string> want_plotted, want_unplotted, want_in_page;
    size_t want_table_rows;  // parameters listed without a plot
    size_t max_bytes;
  };
  const std::vector<Case> cases = {
      {"few_parameters_all_plotted",
       3,
       20,
       {},
       {"p0", "p1", "p2"},
       {},
       {"<th>p0</th><th>p1</th><th>p2</th>", "\np0=", "\np1=", "\np2=adam",
        "ALGORITHM_UNSPECIFIED (Bayesian optimisation)"},
       0,
       200 * 1000},
      {"many_parameters_ranked",
       2000,
       200,
       signal,
       {"p5", "p77", "p300", "p999", "p1234", "p1500", "p1998", "p1999"},
       {"p0", "p1", "p2", "p6", "p1997"},
       {"2000 parameters: plots, tooltips and leaderboard columns only for "
        "the 8",
        "1742 more parameters in trials.csv"},
       250,
       5 * 1000 * 1000},
      {"many_trials_capped",
       3,
       600,
       {},
       {"p0", "p1", "p2"},
       {},
       {"350 more trials in trials.csv"},
       0,
       2 * 1000 * 1000},
  };
  for (const Case& c : cases) {
    std::string html = ReportHtml(Sweep(c.parameters, c.trials, c.signal));
    EXPECT_LT(html.size(), c.max_bytes) << "case " << c.name;
    // The history, parallel coordinates, importance and a plot per plotted
    // parameter (these trials have no learning curves).
    EXPECT_EQ(Count(html, "<svg"), c.want_plotted.size() + 3)
        << "case " << c.name;
    EXPECT_EQ(Count(html, "<circle"),
              (c.want_plotted.size() + 1) * (c.trials - c.trials / 10))
        << "case " << c.name;
    for (const std::string& id : c.want_plotted) {
      EXPECT_NE(html.find(PlotTitle(id)), std::string::npos)
          << "case " << c.name << ": no plot of " << id;
      EXPECT_NE(html.find("<th>" + id + "</th>"), std::string::npos)
          << "case " << c.name << ": no leaderboard column for " << id;
    }
    for (const std::string& id : c.want_unplotted) {
      EXPECT_EQ(html.find(PlotTitle(id)), std::string::npos)
          << "case " << c.name << ": a plot of " << id;
    }
    EXPECT_EQ(Count(html, "<tr><td>p"), c.want_table_rows) << "case " << c.name;
    for (const std::string& part : c.want_in_page) {
      EXPECT_NE(html.find(part), std::string::npos)
          << "case " << c.name << ": no '" << part << "'";
    }
    if (c.want_unplotted.empty()) {
      EXPECT_EQ(html.find("parameters: plots"), std::string::npos)
          << "case " << c.name;
    }
  }
}

// Seven trials of a sweep over a log-scale lr, an integer width and a
// categorical optimizer, each with 20 intermediate measurements of "loss"
// (MINIMIZE); trial 4 was stopped early after 5, trial 6 failed after 8.
SweepResult CurveSweep() {
  SweepResult r;
  r.job_id = "job-2";
  r.display_name = "curves";
  r.metric_id = "loss";
  r.goal = Goal::kMinimize;
  ParameterSpec lr, width, opt;
  lr.id = "lr";
  lr.type = ParameterType::kDouble;
  lr.min_value = 1e-5;
  lr.max_value = 0.1;
  lr.scale = ScaleType::kLog;
  width.id = "width";
  width.type = ParameterType::kInteger;
  opt.id = "opt";
  opt.type = ParameterType::kCategorical;
  opt.categorical_values = {"adam", "sgd"};
  r.parameters = {lr, width, opt};
  for (int id = 1; id <= 7; ++id) {
    TrialRecord t;
    t.id = id;
    double final_loss = 0.2 + 0.1 * id;
    int steps = id == 4 ? 5 : id == 6 ? 8 : 20;
    for (int s = 1; s <= steps; ++s) {
      t.measurements.push_back({s, s * 0.5, final_loss + 2.0 / s});
    }
    t.state = id == 6 ? TrialState::kFailed : TrialState::kSucceeded;
    if (id != 6) t.metric = t.measurements.back().value;
    t.stopped_early = id == 4;
    ParameterValue v;
    v.id = "lr";
    v.type = ParameterType::kDouble;
    v.number = std::pow(10, -5 + 4 * (id - 1) / 6.0);
    t.parameters.push_back(v);
    v.id = "width";
    v.type = ParameterType::kInteger;
    v.number = 16 * id;
    t.parameters.push_back(v);
    v.id = "opt";
    v.type = ParameterType::kCategorical;
    v.text = id % 2 ? "adam" : "sgd";
    t.parameters.push_back(v);
    r.trials.push_back(t);
  }
  return r;
}

// The part of the page from `from` to the next `to`.
std::string Between(const std::string& html, const std::string& from,
                    const std::string& to) {
  size_t a = html.find(from);
  if (a == std::string::npos) return "";
  size_t b = html.find(to, a + from.size());
  return html.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

TEST(ReportHtml, SectionsOfASweepWithIntermediateMeasurements) {
  std::string html = ReportHtml(CurveSweep());
  std::string history = Between(html, "id=\"history\"", "<h2");
  std::string curves = Between(html, "id=\"curves\"", "<h2");
  std::string parallel = Between(html, "id=\"parallel\"", "<h2");
  std::string importance = Between(html, "id=\"importance\"", "<h2");
  struct Case {
    const char* name;
    const std::string& part;
    std::string want;
    size_t count;  // occurrences of `want` in `part`
  } cases[] = {
      {"history stopped point", history, "class=\"p s\"", 1},
      {"history points", history, "<circle", 6},
      {"history best so far", history, "class=\"b\"", 1},
      // Curves: one per trial with a measurement, trial 1 the best, trial
      // 4 dashed and crossed; x by global_step, ticked 0, 5, ..., 20.
      {"curves", curves, "<polyline", 7},
      {"curve of the best", curves, "class=\"c best\"><title>trial 1:", 1},
      {"curve stopped", curves, "class=\"c s\"><title>trial 4:", 1},
      {"curve stopped cross", curves, "class=\"xs\"", 1},
      {"curve x axis", curves, ">global_step</text>", 1},
      {"curve x tick", curves, ">15</text>", 1},
      // Parallel coordinates: a line per succeeded trial; a log lr axis at
      // decades, an integer width axis, the categories.
      {"parallel lines", parallel, "<path", 6},
      {"parallel log axis", parallel, ">lr (log)<title>", 1},
      {"parallel decade", parallel, ">0.001</text>", 1},
      {"parallel decade 1e-05", parallel, ">1e-05</text>", 1},
      {"parallel category", parallel, ">sgd</text>", 1},
      {"parallel metric axis", parallel, ">loss<title>", 1},
      // Importance: two bars per parameter and the method.
      {"importance bars", importance, "<rect", 6},
      {"importance method", importance, "Spearman rank correlation", 1},
      {"importance epsilon", importance, "epsilon squared</span>", 1},
      // The leaderboard and summary.
      {"leaderboard", html, "\"es\">stopped early</span></td>", 1},
      {"summary", html, "1 stopped early", 1},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(c.part.empty()) << "case " << c.name << ": no section";
    EXPECT_EQ(Count(c.part, c.want), c.count) << "case " << c.name;
  }
  // The history's x ticks (the only labels centred without a class): whole
  // trial numbers, 1-2-5 step 1 for 7 trials.
  std::vector<std::string> ticks;
  const std::string tick = "text-anchor=\"middle\">";
  for (size_t at = history.find(tick); at != std::string::npos;
       at = history.find(tick, at + 1)) {
    size_t from = at + tick.size();
    ticks.push_back(history.substr(from, history.find('<', from) - from));
  }
  EXPECT_EQ(ticks,
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7"}));
}

// A curve needs two measurements: with fewer the page says so instead.
TEST(ReportHtml, WithoutLearningCurvesSaysSo) {
  struct Case {
    const char* name;
    size_t keep;  // measurements left to each trial
  } cases[] = {{"none", 0}, {"one each", 1}};
  for (const Case& c : cases) {
    SweepResult r = CurveSweep();
    for (TrialRecord& t : r.trials) t.measurements.resize(c.keep);
    std::string html = ReportHtml(r);
    EXPECT_NE(html.find("No trial reported intermediate measurements"),
              std::string::npos)
        << "case " << c.name;
    EXPECT_EQ(Count(html, "<polyline"), 1u)
        << "case " << c.name << ": only the best-so-far line";
  }
}

// A real browser: Debian's Chromium takes a headless screenshot of the
// page, and tests/tuning/data/png_ink.py measures how much of it is drawn.
TEST(ReportHtml, RendersInChromium) {
  std::string chromium;
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(c, X_OK) == 0) chromium = c;
  }
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  testing::TempDir dir;
  std::string page = dir.Write("report.html", ReportHtml(CurveSweep()));
  std::string shot = dir.Join("shot.png");
  testing::Finished run = testing::RunToEnd(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu",
       "--user-data-dir=" + dir.Join("profile"), "--screenshot=" + shot,
       "--window-size=1100,1300", "file://" + page},
      {"HOME=" + dir.path()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  testing::Finished ink = testing::RunToEnd(
      {"/usr/bin/python3",
       std::string(TRIALSHIM_SOURCE_DIR) + "/tests/tuning/data/png_ink.py",
       shot});
  ASSERT_EQ(ink.exit_code, 0) << ink.err;
  std::istringstream in(ink.out);
  double share = 0;
  int width = 0, height = 0;
  in >> share >> width >> height;
  EXPECT_EQ(width, 1100);
  EXPECT_EQ(height, 1300);
  // The plots cover several percent of a screenshot; a blank page, an
  // error page or a page with no plots much less.
  EXPECT_GT(share, 0.03) << ink.out;
}

}  // namespace
}  // namespace trialshim::tuning
