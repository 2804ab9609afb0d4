// Tests for tuning/src/report_html.cc: the plots a sweep's report.html
// shows, and that its size stays linear in parameters + trials.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

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
       {"<th>p0</th><th>p1</th><th>p2</th>", "\np0=", "\np1=", "\np2=adam"},
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
    EXPECT_EQ(Count(html, "<svg"), c.want_plotted.size() + 1)
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

}  // namespace
}  // namespace trialshim::tuning
