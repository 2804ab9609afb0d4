// report.html: one self-contained page (inline CSS and SVG, no scripts, no
// network) so it can be opened from a sweep directory or attached anywhere.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "trialshim/tuning/sweep.h"

namespace trialshim::tuning {
namespace {

constexpr int kWidth = 520, kHeight = 300;
constexpr int kLeft = 64, kRight = 16, kTop = 28, kBottom = 44;
// The page must stay linear in parameters + trials: a plot per parameter
// with every parameter in each point's tooltip, and a leaderboard column per
// parameter, made 10,000 parameters a 2.5 GB page. So only the kPlotted
// most important parameters get plots, tooltips and leaderboard columns;
// tables stop at kMaxRows rows (trials.csv has everything).
constexpr size_t kPlotted = 8;
constexpr size_t kMaxRows = 250;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// A linear or log axis mapping data onto [from, to] pixels.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double from = 0, to = 1;

  double T(double v) const { return log ? std::log10(v) : v; }
  double Map(double v) const {
    double a = T(lo), b = T(hi);
    if (b == a) return (from + to) / 2;
    return from + (T(v) - a) / (b - a) * (to - from);
  }
  std::vector<double> Ticks() const {
    std::vector<double> out;
    for (int i = 0; i <= 4; ++i) {
      double t = T(lo) + (T(hi) - T(lo)) * i / 4.0;
      out.push_back(log ? std::pow(10, t) : t);
    }
    return out;
  }
};

Axis Fit(std::vector<double> v, bool log, double from, double to) {
  Axis a;
  a.log = log;
  a.from = from;
  a.to = to;
  if (log)
    v.erase(
        std::remove_if(v.begin(), v.end(), [](double x) { return !(x > 0); }),
        v.end());
  if (v.empty()) return a;
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  a.lo = *mn;
  a.hi = *mx;
  if (a.lo == a.hi) {  // one value: give it room
    a.lo = log ? a.lo / 2 : a.lo - 0.5;
    a.hi = log ? a.hi * 2 : a.hi + 0.5;
  }
  return a;
}

struct Point {
  double x, y;
  bool ok;  // succeeded (else drawn as a cross on the x axis)
  std::string tip;
};

// One scatter plot. `categories` non-empty makes x categorical (x = index).
std::string Plot(const std::string& title, const std::string& x_label,
                 const std::string& y_label, const std::vector<Point>& points,
                 bool log_x, const std::vector<std::string>& categories,
                 const std::vector<std::pair<double, double>>& line) {
  std::vector<double> xs, ys;
  for (const Point& p : points) {
    xs.push_back(p.x);
    if (p.ok) ys.push_back(p.y);
  }
  Axis x = Fit(xs, log_x, kLeft, kWidth - kRight);
  if (!categories.empty()) {
    x.lo = -0.5;
    x.hi = categories.size() - 0.5;
    x.log = false;
  }
  Axis y = Fit(ys, false, kHeight - kBottom, kTop);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(kWidth) + "\" height=\"" +
                  std::to_string(kHeight) + "\" role=\"img\">";
  s += "<text x=\"" + std::to_string(kWidth / 2) +
       "\" y=\"18\" text-anchor=\"middle\" class=\"t\">" + Escape(title) +
       "</text>";
  s += "<rect x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kTop) +
       "\" width=\"" + std::to_string(kWidth - kLeft - kRight) +
       "\" height=\"" + std::to_string(kHeight - kTop - kBottom) +
       "\" class=\"f\"/>";
  for (double t : y.Ticks()) {
    std::string py = Px(y.Map(t));
    s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" +
         std::to_string(kWidth - kRight) + "\" y1=\"" + py + "\" y2=\"" + py +
         "\" class=\"g\"/><text x=\"" + std::to_string(kLeft - 4) + "\" y=\"" +
         py + "\" dy=\"4\" text-anchor=\"end\">" + Num(t) + "</text>";
  }
  std::string base = std::to_string(kHeight - kBottom + 14);
  if (categories.empty()) {
    for (double t : x.Ticks()) {
      s += "<text x=\"" + Px(x.Map(t)) + "\" y=\"" + base +
           "\" text-anchor=\"middle\">" + Num(t) + "</text>";
    }
  } else {
    for (size_t i = 0; i < categories.size(); ++i) {
      s += "<text x=\"" + Px(x.Map(static_cast<double>(i))) + "\" y=\"" + base +
           "\" text-anchor=\"middle\">" + Escape(categories[i]) + "</text>";
    }
  }
  s += "<text x=\"" + std::to_string((kLeft + kWidth - kRight) / 2) +
       "\" y=\"" + std::to_string(kHeight - 8) +
       "\" text-anchor=\"middle\" class=\"l\">" + Escape(x_label) +
       (log_x ? " (log)" : "") + "</text>";
  s += "<text transform=\"rotate(-90)\" x=\"" +
       std::to_string(-(kTop + kHeight - kBottom) / 2) +
       "\" y=\"14\" text-anchor=\"middle\" class=\"l\">" + Escape(y_label) +
       "</text>";
  if (!line.empty()) {
    std::string pts;
    for (const auto& [lx, ly] : line) {
      pts += Px(x.Map(lx)) + "," + Px(y.Map(ly)) + " ";
    }
    s += "<polyline points=\"" + pts + "\" class=\"b\"/>";
  }
  for (const Point& p : points) {
    if (log_x && !(p.x > 0)) continue;
    std::string px = Px(x.Map(p.x));
    if (p.ok) {
      s += "<circle cx=\"" + px + "\" cy=\"" + Px(y.Map(p.y)) +
           "\" r=\"4\" class=\"p\"><title>" + Escape(p.tip) +
           "</title></circle>";
    } else {
      std::string py = std::to_string(kHeight - kBottom - 6);
      s += "<text x=\"" + px + "\" y=\"" + py +
           "\" text-anchor=\"middle\" class=\"x\">&#x2715;<title>" +
           Escape(p.tip) + "</title></text>";
    }
  }
  return s + "</svg>\n";
}

// A point's tooltip: the trial, its metric and the `shown` parameters.
std::string Tip(const TrialRecord& t, const std::string& metric,
                const std::unordered_set<std::string>& shown) {
  std::string tip =
      "trial " + std::to_string(t.id) + ": " + TrialStateName(t.state);
  if (t.metric) tip += ", " + metric + "=" + FormatNumber(*t.metric);
  for (const ParameterValue& v : t.parameters) {
    if (shown.count(v.id)) tip += "\n" + v.id + "=" + v.Format();
  }
  if (!t.reason.empty()) tip += "\n" + t.reason;
  return tip;
}

void Collect(const ParameterSpec& p, std::vector<const ParameterSpec*>* out) {
  out->push_back(&p);
  for (const ConditionalParameterSpec& c : p.conditionals) {
    Collect(c.parameter, out);
  }
}

// The page up to <body>: the title and the style sheet.
std::string Head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<title>" +
         Escape(title) +
         "</title><style>"
         "body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
         "svg{margin:8px 8px 0 0;background:#fff}svg text{font-size:11px}"
         ".t{font-size:13px;font-weight:600}.l{fill:#555}"
         ".f{fill:none;stroke:#bbb}.g{stroke:#eee}"
         ".p{fill:#2b6cb0;fill-opacity:.75}.x{fill:#c53030;font-size:12px}"
         ".b{fill:none;stroke:#2f855a;stroke-width:1.5}"
         "table{border-collapse:collapse;margin-top:16px}"
         "td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}"
         "td.n{text-align:right;font-variant-numeric:tabular-nums}"
         ".SUCCEEDED{color:#2f855a}.FAILED{color:#c53030}"
         ".INFEASIBLE{color:#b7791f}.STOPPED,.ACTIVE{color:#718096}"
         "</style></head><body>\n";
}

// The heading, one line of what the sweep was, and its notes.
std::string Summary(const SweepResult& r, const std::string& title) {
  int succeeded = 0;
  for (const TrialRecord& t : r.trials) {
    succeeded += t.state == TrialState::kSucceeded;
  }
  std::string h = "<h1>" + Escape(title) + "</h1>\n<p>" + GoalName(r.goal) +
                  " <b>" + Escape(r.metric_id) + "</b> &middot; " +
                  AlgorithmName(r.algorithm) + " &middot; " +
                  std::to_string(r.trials.size()) + " trials, " +
                  std::to_string(succeeded) + " succeeded" +
                  (r.stopped ? " &middot; stopped" : "") +
                  (r.failed ? " &middot; job failed" : "") + "</p>\n";
  for (const std::string& n : r.notes) h += "<p>" + Escape(n) + "</p>\n";
  return h;
}

bool Ok(const TrialRecord& t) {
  return t.state == TrialState::kSucceeded && t.metric.has_value();
}

// Where a value sits on its parameter's x axis: categories by their index
// in the spec.
double X(const ParameterSpec& p, const ParameterValue& v) {
  if (p.type != ParameterType::kCategorical) return v.number;
  const std::vector<std::string>& c = p.categorical_values;
  return static_cast<double>(std::find(c.begin(), c.end(), v.text) - c.begin());
}

// Ranks from 0, ties sharing their mean rank (Spearman's convention).
std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return rank;
}

// |Spearman's rho| of the pairs; 0 where it is undefined (under 3 pairs,
// or one side constant).
double AbsRankCorrelation(const std::vector<double>& xs,
                          const std::vector<double>& ys) {
  if (xs.size() < 3) return 0;
  std::vector<double> a = Ranks(xs), b = Ranks(ys);
  double mean = (a.size() - 1) / 2.0;  // ties keep the mean rank
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - mean) * (b[i] - mean);
    aa += (a[i] - mean) * (a[i] - mean);
    bb += (b[i] - mean) * (b[i] - mean);
  }
  if (aa == 0 || bb == 0) return 0;
  return std::fabs(ab / std::sqrt(aa * bb));
}

// Each parameter's importance: |rank correlation| of its value with the
// metric over the succeeded trials that set it. Cheap, needs no model, and
// catches the monotone effects a reader looks for first.
std::vector<double> Importance(const SweepResult& r,
                               const std::vector<const ParameterSpec*>& ps) {
  std::unordered_map<std::string, size_t> column;
  for (size_t i = 0; i < ps.size(); ++i) column.emplace(ps[i]->id, i);
  std::vector<std::vector<double>> xs(ps.size()), ys(ps.size());
  for (const TrialRecord& t : r.trials) {
    if (!Ok(t) || !std::isfinite(*t.metric)) continue;
    for (const ParameterValue& v : t.parameters) {
      auto it = column.find(v.id);
      if (it == column.end()) continue;
      double x = X(*ps[it->second], v);
      if (!std::isfinite(x)) continue;
      xs[it->second].push_back(x);
      ys[it->second].push_back(*t.metric);
    }
  }
  std::vector<double> out;
  for (size_t i = 0; i < ps.size(); ++i) {
    out.push_back(AbsRankCorrelation(xs[i], ys[i]));
  }
  return out;
}

// The parameters by importance, ties in spec order, and which of them get
// plots: the first kPlotted, shown in spec order.
struct Ranking {
  std::vector<size_t> order;  // indexes into the parameter list
  std::vector<double> importance;
  std::vector<const ParameterSpec*> plotted;
};

Ranking Rank(const SweepResult& r,
             const std::vector<const ParameterSpec*>& params) {
  Ranking k;
  k.importance = Importance(r, params);
  for (size_t i = 0; i < params.size(); ++i) k.order.push_back(i);
  std::stable_sort(k.order.begin(), k.order.end(), [&](size_t a, size_t b) {
    return k.importance[a] > k.importance[b];
  });
  std::vector<bool> plot(params.size(), false);
  for (size_t i = 0; i < params.size() && i < kPlotted; ++i) {
    plot[k.order[i]] = true;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (plot[i]) k.plotted.push_back(params[i]);
  }
  return k;
}

// The trials by id, each with its tooltip (computed once: every plot
// shows it).
struct Trials {
  std::vector<const TrialRecord*> sorted;
  std::vector<std::string> tips;
};

Trials SortTrials(const SweepResult& r,
                  const std::vector<const ParameterSpec*>& plotted) {
  Trials t;
  for (const TrialRecord& rec : r.trials) t.sorted.push_back(&rec);
  std::sort(
      t.sorted.begin(), t.sorted.end(),
      [](const TrialRecord* a, const TrialRecord* b) { return a->id < b->id; });
  std::unordered_set<std::string> shown;
  for (const ParameterSpec* p : plotted) shown.insert(p->id);
  for (const TrialRecord* rec : t.sorted) {
    t.tips.push_back(Tip(*rec, r.metric_id, shown));
  }
  return t;
}

// The metric per trial (by id), with the best so far.
std::string MetricPlot(const SweepResult& r, const Trials& trials) {
  std::vector<Point> per_trial;
  std::vector<std::pair<double, double>> best_line;
  std::optional<double> best;
  for (size_t i = 0; i < trials.sorted.size(); ++i) {
    const TrialRecord& t = *trials.sorted[i];
    bool ok = Ok(t);
    per_trial.push_back(
        {static_cast<double>(t.id), ok ? *t.metric : 0, ok, trials.tips[i]});
    if (ok) {
      if (!best ||
          (r.goal == Goal::kMinimize ? *t.metric < *best : *t.metric > *best)) {
        best = t.metric;
      }
    }
    if (best) best_line.emplace_back(static_cast<double>(t.id), *best);
  }
  return Plot(r.metric_id + " per trial", "trial", r.metric_id, per_trial,
              false, {}, best_line);
}

// The metric against one parameter (categories on their own x positions).
std::string ParameterPlot(const SweepResult& r, const Trials& trials,
                          const ParameterSpec& p) {
  std::vector<std::string> categories;
  if (p.type == ParameterType::kCategorical) categories = p.categorical_values;
  std::vector<Point> points;
  for (size_t i = 0; i < trials.sorted.size(); ++i) {
    const TrialRecord& t = *trials.sorted[i];
    for (const ParameterValue& v : t.parameters) {
      if (v.id != p.id) continue;
      bool ok = Ok(t);
      points.push_back({X(p, v), ok ? *t.metric : 0, ok, trials.tips[i]});
    }
  }
  bool log_x = p.scale == ScaleType::kLog || p.scale == ScaleType::kReverseLog;
  return Plot(r.metric_id + " vs " + p.id, p.id, r.metric_id, points,
              log_x && categories.empty(), categories, {});
}

// The row that says how many a table left out.
std::string MoreRow(size_t more, size_t columns, const std::string& what) {
  return "<tr><td colspan=\"" + std::to_string(columns) + "\">" +
         std::to_string(more) + " more " + what + " in trials.csv</td></tr>\n";
}

// The trials, best first, with the plotted parameters; kMaxRows at most.
std::string Leaderboard(const SweepResult& r,
                        const std::vector<const ParameterSpec*>& columns) {
  std::unordered_map<std::string, size_t> column;
  std::string h = "<table><tr><th>#</th><th>trial</th><th>state</th><th>" +
                  Escape(r.metric_id) + "</th>";
  for (const ParameterSpec* p : columns) {
    column.emplace(p->id, column.size());
    h += "<th>" + Escape(p->id) + "</th>";
  }
  h += "<th>seconds</th><th>reason</th></tr>\n";
  std::vector<size_t> board = r.Leaderboard();
  int rank = 0;
  for (size_t i = 0; i < board.size() && i < kMaxRows; ++i) {
    const TrialRecord& t = r.trials[board[i]];
    h += "<tr><td class=\"n\">" + (Ok(t) ? std::to_string(++rank) : "") +
         "</td><td class=\"n\">" + std::to_string(t.id) + "</td><td class=\"" +
         TrialStateName(t.state) + "\">" + TrialStateName(t.state) +
         "</td><td class=\"n\">" + (t.metric ? FormatNumber(*t.metric) : "") +
         "</td>";
    std::vector<std::string> cells(columns.size());
    for (const ParameterValue& pv : t.parameters) {
      auto it = column.find(pv.id);
      if (it != column.end()) cells[it->second] = pv.Format();
    }
    for (const std::string& v : cells) h += "<td>" + Escape(v) + "</td>";
    char secs[32];
    std::snprintf(secs, sizeof(secs), "%.1f", t.seconds);
    h += std::string("<td class=\"n\">") + secs + "</td><td>" +
         Escape(t.reason) + "</td></tr>\n";
  }
  if (board.size() > kMaxRows) {
    h += MoreRow(board.size() - kMaxRows, columns.size() + 6, "trials");
  }
  return h + "</table>\n";
}

// Why some parameters have no plot, and which have.
std::string LeftOutNote(const SweepResult& r,
                        const std::vector<const ParameterSpec*>& params,
                        const Ranking& k) {
  std::string plotted;
  for (size_t i = 0; i < k.plotted.size(); ++i) {
    const ParameterSpec* p = params[k.order[i]];
    plotted += (i ? ", " : "") + Escape(p->id) + " (" +
               Num(k.importance[k.order[i]]) + ")";
  }
  return "<p>" + std::to_string(params.size()) +
         " parameters: plots, tooltips and leaderboard columns only for the " +
         std::to_string(k.plotted.size()) +
         " with the largest |rank correlation| with " + Escape(r.metric_id) +
         " over the succeeded trials (ties in spec order), to keep this page "
         "small: " +
         plotted +
         ". The others are listed below; all values are in "
         "trials.csv.</p>\n";
}

// The parameters without plots, by importance; kMaxRows at most.
std::string OtherParameters(const std::vector<const ParameterSpec*>& params,
                            const Ranking& k) {
  std::string h =
      "<table><tr><th>parameter</th><th>type</th>"
      "<th>|rank correlation|</th></tr>\n";
  size_t rest = params.size() - k.plotted.size();
  for (size_t i = 0; i < rest && i < kMaxRows; ++i) {
    size_t at = k.order[k.plotted.size() + i];
    h += "<tr><td>" + Escape(params[at]->id) + "</td><td>" +
         ParameterTypeName(params[at]->type) + "</td><td class=\"n\">" +
         Num(k.importance[at]) + "</td></tr>\n";
  }
  if (rest > kMaxRows) h += MoreRow(rest - kMaxRows, 3, "parameters");
  return h + "</table>\n";
}

}  // namespace

std::string ReportHtml(const SweepResult& r) {
  std::string title =
      r.display_name.empty() ? "trialshim sweep" : r.display_name;
  std::vector<const ParameterSpec*> params;
  for (const ParameterSpec& p : r.parameters) Collect(p, &params);
  Ranking k = Rank(r, params);
  Trials trials = SortTrials(r, k.plotted);
  bool cut = k.plotted.size() < params.size();

  std::string h = Head(title) + Summary(r, title);
  if (cut) h += LeftOutNote(r, params, k);
  h += "<div>" + MetricPlot(r, trials);
  for (const ParameterSpec* p : k.plotted) {
    h += ParameterPlot(r, trials, *p);
  }
  h += "</div>\n";
  h += Leaderboard(r, k.plotted);
  if (cut) h += OtherParameters(params, k);
  h += "<p>Job " + Escape(r.job_id) +
       " &middot; written by trialshim sweep</p></body></html>\n";
  return h;
}

}  // namespace trialshim::tuning
