// report.html: one self-contained page (inline CSS and SVG, no scripts, no
// network) so it can be opened from a sweep directory or attached anywhere:
// the optimisation history, the learning curves of the intermediate
// measurements, parallel coordinates, parameter importance, the metric
// against each parameter and the leaderboard.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "trialshim/tuning/importance.h"
#include "trialshim/tuning/sweep.h"
#include "trialshim/tuning/ticks.h"

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
// The learning-curve plot draws at most kMaxRows curves (the best ones)
// of at most kCurvePoints points each (evenly thinned), so it too stays
// linear in the trials whatever their number of measurements.
constexpr size_t kCurvePoints = 200;
// The wide plots: learning curves and parallel coordinates.
constexpr int kWide = 1060;

// Text from the job (ids, categories, notes, reasons) as HTML text or a
// double-quoted attribute value, by the HTML standard's tokenizer: '<' in
// text could open a tag, '&' start a character reference, '"' end the
// value; '>' goes too, for symmetry. Every attribute here is double-quoted,
// so a single quote needs nothing. Inline SVG is tokenized the same way.
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

// A linear or log axis mapping data onto [from, to] pixels, with nice
// ticks (ticks.h); its range is widened to the outer ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double from = 0, to = 1;
  std::vector<double> ticks;

  double T(double v) const { return log ? std::log10(v) : v; }
  double Map(double v) const {
    double a = T(lo), b = T(hi);
    if (b == a) return (from + to) / 2;
    return from + (T(v) - a) / (b - a) * (to - from);
  }
};

// An axis over the values (only the positive ones on a log axis: log10 has
// no value at 0 or below, and UNIT_LOG_SCALE needs a positive range,
// study.proto); `integers` keeps its ticks whole (trial numbers, steps).
Axis Fit(std::vector<double> v, bool log, double from, double to,
         bool integers = false) {
  Axis a;
  a.log = log;
  a.from = from;
  a.to = to;
  v.erase(std::remove_if(
              v.begin(), v.end(),
              [&](double x) { return !std::isfinite(x) || (log && !(x > 0)); }),
          v.end());
  if (v.empty()) {
    v = log ? std::vector<double>{1} : std::vector<double>{0};
  }
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  Ticks t = log ? LogTicks(*mn, *mx) : LinearTicks(*mn, *mx, 5, integers);
  if (log && t.at.size() < 2) t = LogTicks(*mn / 2, *mx * 2);
  a.lo = t.lo;
  a.hi = t.hi;
  a.ticks = t.at;
  return a;
}

// A categorical axis: category i at position i.
Axis Categories(size_t n, double from, double to) {
  Axis a;
  a.lo = -0.5;
  a.hi = n - 0.5;
  a.from = from;
  a.to = to;
  return a;
}

struct Point {
  double x, y;
  bool ok;       // succeeded (else drawn as a cross on the x axis)
  bool stopped;  // stopped early (drawn in the stopped colour)
  std::string tip;
};

// The frame, title, axis labels and tick labels of a plot.
std::string Frame(int width, int height, const std::string& title,
                  const Axis& x, const Axis& y, const std::string& x_label,
                  const std::string& y_label) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(width) + "\" height=\"" +
                  std::to_string(height) + "\" role=\"img\">";
  s += "<text x=\"" + std::to_string(width / 2) +
       "\" y=\"18\" text-anchor=\"middle\" class=\"t\">" + Escape(title) +
       "</text>";
  s += "<rect x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kTop) +
       "\" width=\"" + std::to_string(width - kLeft - kRight) + "\" height=\"" +
       std::to_string(height - kTop - kBottom) + "\" class=\"f\"/>";
  std::string top = std::to_string(kTop);
  std::string bottom = std::to_string(height - kBottom);
  for (double t : y.ticks) {
    std::string py = Px(y.Map(t));
    s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" +
         std::to_string(width - kRight) + "\" y1=\"" + py + "\" y2=\"" + py +
         "\" class=\"g\"/><text x=\"" + std::to_string(kLeft - 4) + "\" y=\"" +
         py + "\" dy=\"4\" text-anchor=\"end\">" + TickLabel(t) + "</text>";
  }
  std::string base = std::to_string(height - kBottom + 14);
  for (double t : x.ticks) {
    std::string px = Px(x.Map(t));
    s += "<line x1=\"" + px + "\" x2=\"" + px + "\" y1=\"" + top + "\" y2=\"" +
         bottom + "\" class=\"g\"/><text x=\"" + px + "\" y=\"" + base +
         "\" text-anchor=\"middle\">" + TickLabel(t) + "</text>";
  }
  s += "<text x=\"" + std::to_string((kLeft + width - kRight) / 2) + "\" y=\"" +
       std::to_string(height - 8) + "\" text-anchor=\"middle\" class=\"l\">" +
       Escape(x_label) + (x.log ? " (log)" : "") + "</text>";
  s += "<text transform=\"rotate(-90)\" x=\"" +
       std::to_string(-(kTop + height - kBottom) / 2) +
       "\" y=\"14\" text-anchor=\"middle\" class=\"l\">" + Escape(y_label) +
       "</text>";
  return s;
}

// One scatter plot, with an optional line (the best so far). Each point
// carries its tooltip as an SVG <title> child, which browsers show on
// hover: the one tooltip a page without scripts has.
struct Scatter {
  std::string title, x_label, y_label;
  std::vector<Point> points;
  bool log_x = false;
  bool integer_x = false;
  std::vector<std::string> categories;  // non-empty: x is the index
  std::vector<std::pair<double, double>> line;
};

std::string Plot(const Scatter& p) {
  std::vector<double> xs, ys;
  for (const Point& pt : p.points) {
    xs.push_back(pt.x);
    if (pt.ok) ys.push_back(pt.y);
  }
  Axis x = p.categories.empty()
               ? Fit(xs, p.log_x, kLeft, kWidth - kRight, p.integer_x)
               : Categories(p.categories.size(), kLeft, kWidth - kRight);
  Axis y = Fit(ys, false, kHeight - kBottom, kTop);
  std::string s = Frame(kWidth, kHeight, p.title, x, y, p.x_label, p.y_label);
  std::string base = std::to_string(kHeight - kBottom + 14);
  for (size_t i = 0; i < p.categories.size(); ++i) {
    s += "<text x=\"" + Px(x.Map(static_cast<double>(i))) + "\" y=\"" + base +
         "\" text-anchor=\"middle\">" + Escape(p.categories[i]) + "</text>";
  }
  if (!p.line.empty()) {
    std::string pts;
    for (const auto& [lx, ly] : p.line) {
      pts += Px(x.Map(lx)) + "," + Px(y.Map(ly)) + " ";
    }
    s += "<polyline points=\"" + pts + "\" class=\"b\"/>";
  }
  for (const Point& pt : p.points) {
    if (x.log && !(pt.x > 0)) continue;
    std::string px = Px(x.Map(pt.x));
    if (pt.ok) {
      s += "<circle cx=\"" + px + "\" cy=\"" + Px(y.Map(pt.y)) +
           "\" r=\"4\" class=\"" + (pt.stopped ? "p s" : "p") + "\"><title>" +
           Escape(pt.tip) + "</title></circle>";
    } else {
      std::string py = std::to_string(kHeight - kBottom - 6);
      s += "<text x=\"" + px + "\" y=\"" + py +
           "\" text-anchor=\"middle\" class=\"x\">&#x2715;<title>" +
           Escape(pt.tip) + "</title></text>";
    }
  }
  return s + "</svg>\n";
}

// A point's tooltip: the trial, its metric and the `shown` parameters.
std::string Tip(const TrialRecord& t, const std::string& metric,
                const std::unordered_set<std::string>& shown) {
  std::string tip =
      "trial " + std::to_string(t.id) + ": " + TrialStateName(t.state);
  if (t.stopped_early) tip += " (stopped early)";
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
         "svg{margin:8px 8px 0 0;background:#fff;overflow:visible}svg "
         "text{font-size:11px}"
         ".t{font-size:13px;font-weight:600}.l{fill:#555}"
         ".f{fill:none;stroke:#bbb}.g{stroke:#eee}"
         ".p{fill:#2b6cb0;fill-opacity:.75}.x{fill:#c53030;font-size:12px}"
         ".p.s{fill:#dd6b20}.xs{fill:#dd6b20;font-size:12px}"
         ".b{fill:none;stroke:#2f855a;stroke-width:1.5}"
         ".c{fill:none;stroke:#2b6cb0;stroke-opacity:.45;stroke-width:1.2;"
         "stroke-linecap:round}"
         ".c.s{stroke:#dd6b20;stroke-opacity:.7;stroke-dasharray:4 2}"
         ".c.best{stroke:#2f855a;stroke-opacity:1;stroke-width:2.5}"
         ".pc{fill:none;stroke-width:1.2;stroke-opacity:.7}"
         ".ax{stroke:#444}.h{paint-order:stroke;stroke:#fff;stroke-width:3px;"
         "stroke-linejoin:round}.ri{fill:#2b6cb0}.re{fill:#38a169}"
         "h2{font-size:17px;margin:28px 0 4px}p.m{color:#555;max-width:64em}"
         "table{border-collapse:collapse;margin-top:16px}"
         "td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}"
         "td.n{text-align:right;font-variant-numeric:tabular-nums}"
         ".SUCCEEDED{color:#2f855a}.FAILED{color:#c53030}"
         ".INFEASIBLE{color:#b7791f}.STOPPED,.ACTIVE{color:#718096}"
         ".STOPPING,.es{color:#dd6b20}"
         "</style></head><body>\n";
}

// The study's objectives (a result made without them has its one metric).
std::vector<Objective> Objectives(const SweepResult& r) {
  if (!r.objectives.empty()) return r.objectives;
  return {{r.metric_id, r.goal}};
}

// "MINIMIZE <b>loss</b>, MAXIMIZE <b>acc</b>" with `open` and `close`.
std::string Goals(const SweepResult& r, const std::string& open,
                  const std::string& close) {
  std::string goals;
  for (const Objective& o : Objectives(r)) {
    goals += (goals.empty() ? "" : ", ") + std::string(GoalName(o.goal)) + " " +
             open + Escape(o.id) + close;
  }
  return goals;
}

// The heading, one line of what the sweep was, and its notes.
std::string Summary(const SweepResult& r, const std::string& title) {
  int succeeded = 0, stopped_early = 0;
  for (const TrialRecord& t : r.trials) {
    succeeded += t.state == TrialState::kSucceeded;
    stopped_early += t.stopped_early;
  }
  std::string h =
      "<h1>" + Escape(title) + "</h1>\n<p>" + Goals(r, "<b>", "</b>") +
      " &middot; " + AlgorithmName(r.algorithm) +
      (r.algorithm == Algorithm::kUnspecified ? " (Bayesian optimisation)"
                                              : "") +
      " &middot; " + std::to_string(r.trials.size()) + " trials, " +
      std::to_string(succeeded) + " succeeded" +
      (stopped_early ? ", " + std::to_string(stopped_early) + " stopped early"
                     : "") +
      (r.stopped ? " &middot; stopped" : "") +
      (r.failed ? " &middot; job failed" : "") + "</p>\n";
  for (const std::string& n : r.notes) h += "<p>" + Escape(n) + "</p>\n";
  return h;
}

bool IsLog(const ParameterSpec& p) {
  return p.scale == ScaleType::kLog || p.scale == ScaleType::kReverseLog;
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

// Each parameter's importance over the succeeded trials that set it:
// |rank correlation| of its value with the metric (cheap, needs no model,
// catches the monotone effects a reader looks for first; it ranks the
// parameters) and epsilon squared (importance.h defines both).
struct Importances {
  std::vector<double> rank_correlation, epsilon_squared;
};

Importances Importance(const SweepResult& r,
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
  Importances out;
  for (size_t i = 0; i < ps.size(); ++i) {
    out.rank_correlation.push_back(AbsRankCorrelation(xs[i], ys[i]));
    out.epsilon_squared.push_back(EpsilonSquared(
        xs[i], ys[i], ps[i]->type == ParameterType::kCategorical));
  }
  return out;
}

// The parameters by importance, ties in spec order, and which of them get
// plots: the first kPlotted, shown in spec order.
struct Ranking {
  std::vector<size_t> order;       // indexes into the parameter list
  std::vector<double> importance;  // |rank correlation|
  std::vector<double> epsilon_squared;
  std::vector<const ParameterSpec*> plotted;
};

Ranking Rank(const SweepResult& r,
             const std::vector<const ParameterSpec*>& params) {
  Ranking k;
  Importances imp = Importance(r, params);
  k.importance = std::move(imp.rank_correlation);
  k.epsilon_squared = std::move(imp.epsilon_squared);
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

// The optimisation history: the metric per trial (by id), with the best
// so far as a step line.
std::string MetricPlot(const SweepResult& r, const Trials& trials) {
  std::vector<Point> per_trial;
  std::vector<std::pair<double, double>> best_line;
  std::optional<double> best;
  for (size_t i = 0; i < trials.sorted.size(); ++i) {
    const TrialRecord& t = *trials.sorted[i];
    bool ok = Ok(t);
    per_trial.push_back({static_cast<double>(t.id), ok ? *t.metric : 0, ok,
                         t.stopped_early, trials.tips[i]});
    double x = static_cast<double>(t.id);
    if (ok && (!best || (r.goal == Goal::kMinimize ? *t.metric < *best
                                                   : *t.metric > *best))) {
      // A step: level until this trial, then down (or up) to it.
      if (best) best_line.emplace_back(x, *best);
      best = t.metric;
    }
    if (best) best_line.emplace_back(x, *best);
  }
  Scatter p;
  p.title = r.metric_id + " per trial, and the best so far";
  p.x_label = "trial";
  p.y_label = r.metric_id;
  p.points = std::move(per_trial);
  p.integer_x = true;
  p.line = std::move(best_line);
  return Plot(p);
}

// Several objectives: the first two against each other, every succeeded
// trial a point, the Pareto front joined by its staircase.
std::string ParetoPlot(const SweepResult& r, const Trials& trials) {
  std::vector<int> ranks = r.ParetoRanks();
  std::vector<Point> points;
  std::vector<std::pair<double, double>> front;
  for (size_t i = 0; i < trials.sorted.size(); ++i) {
    const TrialRecord& t = *trials.sorted[i];
    if (!Ok(t) || t.values.size() < 2) continue;
    points.push_back({t.values[0], t.values[1], true, false, trials.tips[i]});
    size_t at = static_cast<size_t>(&t - r.trials.data());
    if (ranks[at] == 0) front.emplace_back(t.values[0], t.values[1]);
  }
  std::sort(front.begin(), front.end());
  // Between two front points the staircase keeps the level of the one it
  // leaves: no trial lies in the region it closes off.
  std::vector<std::pair<double, double>> stairs;
  for (size_t i = 0; i < front.size(); ++i) {
    if (i > 0) stairs.emplace_back(front[i].first, front[i - 1].second);
    stairs.push_back(front[i]);
  }
  Scatter p;
  p.title = "Pareto front: " + r.objectives[1].id + " vs " + r.objectives[0].id;
  p.x_label = r.objectives[0].id;
  p.y_label = r.objectives[1].id;
  p.points = std::move(points);
  p.line = std::move(stairs);
  return Plot(p);
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
      points.push_back(
          {X(p, v), ok ? *t.metric : 0, ok, t.stopped_early, trials.tips[i]});
    }
  }
  Scatter s;
  s.title = r.metric_id + " vs " + p.id;
  s.x_label = p.id;
  s.y_label = r.metric_id;
  s.points = std::move(points);
  s.log_x = IsLog(p) && categories.empty();
  s.integer_x = p.type == ParameterType::kInteger;
  s.categories = std::move(categories);
  return Plot(s);
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
  bool several = r.objectives.size() > 1;
  std::vector<int> ranks = r.ParetoRanks();
  std::string h = "<table><tr><th>#</th><th>trial</th><th>state</th>";
  std::vector<Objective> objectives = Objectives(r);
  for (const Objective& o : objectives) h += "<th>" + Escape(o.id) + "</th>";
  for (const ParameterSpec* p : columns) {
    column.emplace(p->id, column.size());
    h += "<th>" + Escape(p->id) + "</th>";
  }
  h += "<th>seconds</th><th>reason</th></tr>\n";
  std::vector<size_t> board = r.Leaderboard();
  int rank = 0;
  for (size_t i = 0; i < board.size() && i < kMaxRows; ++i) {
    const TrialRecord& t = r.trials[board[i]];
    bool front = several && ranks[board[i]] == 0;
    h += "<tr><td class=\"n\">" +
         (Ok(t) ? std::to_string(++rank) + (front ? "*" : "") : "") +
         "</td><td class=\"n\">" + std::to_string(t.id) + "</td><td class=\"" +
         TrialStateName(t.state) + "\">" + TrialStateName(t.state) +
         (t.stopped_early ? " <span class=\"es\">stopped early</span>" : "") +
         "</td>";
    for (size_t m = 0; m < objectives.size(); ++m) {
      std::optional<double> v = !several ? t.metric
                                : m < t.values.size()
                                    ? std::optional<double>(t.values[m])
                                    : std::nullopt;
      h += "<td class=\"n\">" + (v ? FormatNumber(*v) : "") + "</td>";
    }
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
    h += MoreRow(board.size() - kMaxRows,
                 columns.size() + objectives.size() + 5, "trials");
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

// The curves the learning-curve plot draws: trials with a finite
// measurement, best first by the leaderboard, kMaxRows at most.
std::vector<const TrialRecord*> CurveTrials(const SweepResult& r,
                                            size_t* left_out) {
  std::vector<const TrialRecord*> out;
  *left_out = 0;
  for (size_t i : r.Leaderboard()) {
    const TrialRecord& t = r.trials[i];
    bool any = std::any_of(
        t.measurements.begin(), t.measurements.end(),
        [](const Measurement& m) { return std::isfinite(m.value); });
    if (!any) continue;
    if (out.size() < kMaxRows) {
      out.push_back(&t);
    } else {
      ++*left_out;
    }
  }
  return out;
}

// Every trial's intermediate measurements against global_step (or the
// elapsed time when no trial reports distinct steps); early-stopped trials
// dashed and ending in a cross, the best trial in green. The fallback is
// for cloudml-hypertune's default: report_hyperparameter_tuning_metric
// writes global_step "0" when the trainer passes none (hypertune.py), so
// every point of such a curve would share one x.
std::string LearningCurves(const SweepResult& r) {
  size_t left_out = 0;
  std::vector<const TrialRecord*> curves = CurveTrials(r, &left_out);
  bool any_curve = std::any_of(
      curves.begin(), curves.end(),
      [](const TrialRecord* t) { return t->measurements.size() > 1; });
  if (!any_curve) {
    return "<p class=\"m\">No trial reported intermediate measurements "
           "(more than one report of the metric).</p>\n";
  }
  std::vector<double> steps, elapsed, ys;
  for (const TrialRecord* t : curves) {
    for (const Measurement& m : t->measurements) {
      if (!std::isfinite(m.value)) continue;
      steps.push_back(static_cast<double>(m.step));
      elapsed.push_back(m.elapsed_seconds);
      ys.push_back(m.value);
    }
  }
  auto [smin, smax] = std::minmax_element(steps.begin(), steps.end());
  bool by_step = *smin != *smax;
  Axis x =
      Fit(by_step ? steps : elapsed, false, kLeft, kWide - kRight, by_step);
  Axis y = Fit(ys, false, kHeight - kBottom, kTop);
  std::string s =
      Frame(kWide, kHeight, r.metric_id + " per intermediate measurement", x, y,
            by_step ? "global_step" : "seconds since the start", r.metric_id);
  const TrialRecord* best = Ok(*curves[0]) ? curves[0] : nullptr;
  // The best is drawn last, on top.
  for (auto it = curves.rbegin(); it != curves.rend(); ++it) {
    const TrialRecord& t = **it;
    size_t n = t.measurements.size();
    size_t stride = (n + kCurvePoints - 1) / kCurvePoints;
    std::string pts, end;
    int drawn = 0;
    for (size_t i = 0; i < n; ++i) {
      const Measurement& m = t.measurements[i];
      if ((i % stride != 0 && i + 1 != n) || !std::isfinite(m.value)) continue;
      std::string px =
          Px(x.Map(by_step ? static_cast<double>(m.step) : m.elapsed_seconds));
      std::string py = Px(y.Map(m.value));
      pts += px + "," + py + " ";
      end = px + "\" y=\"" + py;
      ++drawn;
    }
    // SVG's stroke-linecap: with round caps a zero-length subpath paints
    // a full circle, where a polyline of one point would paint nothing.
    if (drawn == 1) pts += pts;  // a dot: round caps on a zero-length line
    std::string cls = &t == best ? "c best" : t.stopped_early ? "c s" : "c";
    std::string tip = "trial " + std::to_string(t.id) + ": " +
                      TrialStateName(t.state) +
                      (t.stopped_early ? ", stopped early" : "") + ", " +
                      std::to_string(n) + " measurements";
    s += "<polyline points=\"" + pts + "\" class=\"" + cls + "\"><title>" +
         Escape(tip) + "</title></polyline>";
    if (t.stopped_early) {
      s += "<text x=\"" + end +
           "\" dy=\"4\" text-anchor=\"middle\" class=\"xs\">&#x2715;<title>" +
           Escape(tip) + "</title></text>";
    }
  }
  s += "</svg>\n";
  std::string legend =
      "<p class=\"m\">Blue: a trial; <span style=\"color:#2f855a\">green: "
      "the best</span>; <span class=\"es\">orange, dashed, ending in "
      "&#x2715;: stopped early</span>.";
  if (left_out) {
    legend += " The " + std::to_string(left_out) +
              " other trials with measurements are left out (trials.json "
              "has them).";
  }
  return s + legend + "</p>\n";
}

// One vertical axis of the parallel coordinates: a parameter's (log,
// integer or categorical) or the metric's.
struct Vertical {
  std::string name;
  Axis axis;
  std::vector<std::string> categories;  // a categorical axis
};

Vertical ParameterAxis(const SweepResult& r, const ParameterSpec& p,
                       double bottom, double top) {
  Vertical v;
  v.name = p.id + (IsLog(p) ? " (log)" : "");
  if (p.type == ParameterType::kCategorical) {
    v.categories = p.categorical_values;
    v.axis = Categories(v.categories.size(), bottom, top);
    return v;
  }
  std::vector<double> xs;
  for (const TrialRecord& t : r.trials) {
    for (const ParameterValue& pv : t.parameters) {
      if (pv.id == p.id) xs.push_back(pv.number);
    }
  }
  v.axis = Fit(xs, IsLog(p), bottom, top, p.type == ParameterType::kInteger);
  return v;
}

// The axis at horizontal position x: its line, name and tick labels.
std::string DrawVertical(const Vertical& v, double x, double bottom,
                         double top) {
  std::string px = Px(x);
  std::string s = "<line x1=\"" + px + "\" x2=\"" + px + "\" y1=\"" +
                  Px(bottom) + "\" y2=\"" + Px(top) + "\" class=\"ax\"/>";
  std::string name = v.name.size() > 22 ? v.name.substr(0, 21) + "…" : v.name;
  s += "<text x=\"" + px + "\" y=\"" + Px(top - 10) +
       "\" text-anchor=\"middle\" class=\"l h\">" + Escape(name) + "<title>" +
       Escape(v.name) + "</title></text>";
  auto label = [&](double at, const std::string& text) {
    std::string y = Px(v.axis.Map(at));
    s += "<line x1=\"" + Px(x - 3) + "\" x2=\"" + px + "\" y1=\"" + y +
         "\" y2=\"" + y + "\" class=\"ax\"/>";
    s += "<text x=\"" + Px(x - 5) + "\" y=\"" + y +
         "\" dy=\"4\" text-anchor=\"end\" class=\"h\">" + Escape(text) +
         "</text>";
  };
  for (size_t i = 0; i < v.categories.size(); ++i) {
    label(static_cast<double>(i), v.categories[i]);
  }
  for (double t : v.axis.ticks) label(t, TickLabel(t));
  return s;
}

// The colour of a trial by its rank among the succeeded (0 worst, 1
// best): from a pale to a dark blue.
std::string RankColour(double q) {
  auto mix = [q](int a, int b) {
    return static_cast<int>(std::lround(a + (b - a) * q));
  };
  char buf[16];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", mix(0xcb, 0x1a),
                mix(0xd5, 0x36), mix(0xe0, 0x5d));
  return buf;
}

// One polyline per succeeded trial across an axis per plotted parameter
// and one for the metric; a conditional parameter a trial does not set
// breaks its line.
std::string ParallelCoordinates(const SweepResult& r,
                                const std::vector<const ParameterSpec*>& ps) {
  const double top = kTop + 24, bottom = kHeight - kBottom;
  std::vector<Vertical> axes;
  for (const ParameterSpec* p : ps) {
    axes.push_back(ParameterAxis(r, *p, bottom, top));
  }
  std::vector<size_t> board = r.Leaderboard();
  std::vector<double> metric;
  for (size_t i : board) {
    if (Ok(r.trials[i])) metric.push_back(*r.trials[i].metric);
  }
  Vertical m;
  m.name = r.metric_id;
  m.axis = Fit(metric, false, bottom, top);
  axes.push_back(m);
  double left = kLeft + 40, right = kWide - kRight - 10;
  auto x_of = [&](size_t i) {
    return axes.size() == 1 ? (left + right) / 2
                            : left + (right - left) * i / (axes.size() - 1);
  };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(kWide) + "\" height=\"" +
                  std::to_string(kHeight) + "\" role=\"img\"><text x=\"" +
                  std::to_string(kWide / 2) +
                  "\" y=\"18\" text-anchor=\"middle\" class=\"t\">" +
                  Escape(
                      "Parallel coordinates: the succeeded trials, darker "
                      "is better") +
                  "</text>";
  // Worst first, so the best lie on top.
  for (size_t k = metric.size(); k-- > 0;) {
    const TrialRecord& t = r.trials[board[k]];
    std::string d;
    bool pen = false;
    for (size_t i = 0; i < ps.size(); ++i) {
      const ParameterValue* v = nullptr;
      for (const ParameterValue& pv : t.parameters) {
        if (pv.id == ps[i]->id) v = &pv;
      }
      if (!v || (axes[i].axis.log && !(v->number > 0))) {
        pen = false;
        continue;
      }
      d += (pen ? " L" : " M") + Px(x_of(i)) + "," +
           Px(axes[i].axis.Map(X(*ps[i], *v)));
      pen = true;
    }
    d += (pen ? " L" : " M") + Px(x_of(ps.size())) + "," +
         Px(m.axis.Map(*t.metric));
    double q = metric.size() > 1
                   ? 1 - static_cast<double>(k) / (metric.size() - 1)
                   : 1;
    s += "<path d=\"" + d.substr(1) + "\" class=\"pc\" stroke=\"" +
         RankColour(q) + "\"><title>trial " + std::to_string(t.id) + ": " +
         Escape(r.metric_id) + "=" + FormatNumber(*t.metric) +
         "</title></path>";
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    s += DrawVertical(axes[i], x_of(i), bottom, top);
  }
  return s + "</svg>\n";
}

// The plotted parameters' importance as bars: |rank correlation| and
// epsilon squared, both in [0, 1].
std::string ImportanceChart(const std::vector<const ParameterSpec*>& params,
                            const Ranking& k) {
  const int row = 26, label = 200, bar_left = label + 10, width = kWidth + 200;
  size_t rows = std::min(params.size(), kPlotted);
  int height = kTop + 20 + static_cast<int>(rows) * row + 24;
  Axis x;
  x.from = bar_left;
  x.to = width - kRight - 40;
  x.ticks = {0, 0.2, 0.4, 0.6, 0.8, 1};
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(width) + "\" height=\"" +
                  std::to_string(height) + "\" role=\"img\"><text x=\"" +
                  std::to_string(width / 2) +
                  "\" y=\"18\" text-anchor=\"middle\" class=\"t\">" +
                  "Parameter importance</text>";
  int base = kTop + 10;
  for (double t : x.ticks) {
    std::string px = Px(x.Map(t));
    s += "<line x1=\"" + px + "\" x2=\"" + px + "\" y1=\"" +
         std::to_string(base) + "\" y2=\"" + std::to_string(height - 24) +
         "\" class=\"g\"/><text x=\"" + px + "\" y=\"" +
         std::to_string(height - 10) + "\" text-anchor=\"middle\">" +
         TickLabel(t) + "</text>";
  }
  for (size_t i = 0; i < rows; ++i) {
    size_t at = k.order[i];
    int y = base + static_cast<int>(i) * row;
    std::string id = params[at]->id;
    if (id.size() > 30) id = id.substr(0, 29) + "…";
    s += "<text x=\"" + std::to_string(label) + "\" y=\"" +
         std::to_string(y + 15) + "\" text-anchor=\"end\">" + Escape(id) +
         "</text>";
    auto bar = [&](double v, int dy, const char* cls, const char* what) {
      s += "<rect x=\"" + std::to_string(bar_left) + "\" y=\"" +
           std::to_string(y + dy) + "\" width=\"" +
           Px(std::max(0.5, x.Map(v) - bar_left)) + "\" height=\"9\" class=\"" +
           cls + "\"><title>" + Escape(params[at]->id) + ": " + what + " " +
           Num(v) + "</title></rect>";
    };
    bar(k.importance[at], 3, "ri", "|rank correlation|");
    bar(k.epsilon_squared[at], 13, "re", "epsilon squared");
  }
  return s + "</svg>\n";
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
  h += "<h2 id=\"history\">Optimisation history</h2>\n<div>" +
       MetricPlot(r, trials) + "</div>\n<p class=\"m\">Each trial's " +
       Escape(r.metric_id) +
       " by trial number (orange: stopped early; crosses: no value) and the "
       "best so far (green).</p>\n";
  if (r.objectives.size() > 1) {
    std::vector<int> ranks = r.ParetoRanks();
    size_t on_front = std::count(ranks.begin(), ranks.end(), 0);
    h += "<h2 id=\"pareto\">Pareto front</h2>\n<div>" + ParetoPlot(r, trials) +
         "</div>\n<p class=\"m\">" + Goals(r, "", "") + ": " +
         std::to_string(on_front) +
         " succeeded trials no other beats on every metric (the green "
         "staircase joins them" +
         (r.objectives.size() > 2 ? "; the plot shows the first two metrics"
                                  : "") +
         "). The leaderboard lists them first, marked *.</p>\n";
  }
  h += "<h2 id=\"curves\">Learning curves</h2>\n" + LearningCurves(r);
  bool any_ok = std::any_of(r.trials.begin(), r.trials.end(), Ok);
  h += "<h2 id=\"parallel\">Parallel coordinates</h2>\n" +
       (any_ok ? ParallelCoordinates(r, k.plotted) +
                     "<p class=\"m\">One line per succeeded trial through "
                     "its parameter values" +
                     (cut ? std::string(" (the plotted parameters)") : "") +
                     " to its " + Escape(r.metric_id) +
                     "; log-scale parameters on log axes.</p>\n"
               : std::string("<p class=\"m\">No trial succeeded.</p>\n"));
  if (!params.empty()) {
    h += "<h2 id=\"importance\">Parameter importance</h2>\n" +
         ImportanceChart(params, k) +
         "<p class=\"m\">Over the succeeded trials that set the parameter. "
         "<span style=\"color:#2b6cb0\">Blue: |Spearman rank correlation| "
         "of its value with " +
         Escape(r.metric_id) +
         "</span>, which sees effects that only go one way; parameters are "
         "ranked by it. <span style=\"color:#38a169\">Green: epsilon "
         "squared</span>, the share of the variance of " +
         Escape(r.metric_id) +
         " explained by the mean per category, per value when there are at "
         "most 5, else per fifth of the trials by value, less what as many "
         "groups explain by chance; it also sees an optimum inside the "
         "range. Neither sees interactions between parameters, and both are "
         "noisy with few trials.</p>\n";
  }
  h += "<h2 id=\"parameters\">" + Escape(r.metric_id) +
       " against each parameter</h2>\n<div>";
  for (const ParameterSpec* p : k.plotted) {
    h += ParameterPlot(r, trials, *p);
  }
  h += "</div>\n<h2 id=\"trials\">Trials</h2>\n";
  h += Leaderboard(r, k.plotted);
  if (cut) h += OtherParameters(params, k);
  h += "<p>Job " + Escape(r.job_id) +
       " &middot; written by trialshim sweep</p></body></html>\n";
  return h;
}

}  // namespace trialshim::tuning
