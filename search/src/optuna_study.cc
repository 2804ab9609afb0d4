// hydra-optuna-sweeper's study on trialshim's search engine; see
// optuna_study.h.
#include "trialshim/search/optuna_study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>

#include "trialshim/base/number_format.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/python_text.h"
#include "trialshim/search/optuna_samplers.h"
#include "trialshim/search/pareto.h"
#include "trialshim/search/search.h"

namespace trialshim::tuning {
namespace {

using config::Node;
using DKind = config::OptunaDistribution::Kind;

// The sampler's class name, type(sampler).__name__, and what trialshim
// runs for it. The name is only shown: the plugin logs it as "Sampler:
// {type(self.sampler).__name__}" in OptunaSweeperImpl.sweep
// (hydra_plugins/hydra_optuna_sweeper/_impl.py); which samplers map to
// which search is docs/hydra-sweep-to-vertex.md's table.
void ReadSampler(OptunaSweep* sweep) {
  const OptunaSweeperConfig& c = sweep->settings;
  std::string t = c.sampler_target;
  if (t.empty() && c.known_sampler) t = c.known_sampler->target;
  sweep->sampler = t.substr(t.rfind('.') + 1);
  sweep->algorithm =
      c.known_sampler ? c.known_sampler->algorithm : Algorithm::kUnspecified;
  if (c.seed) sweep->seed = static_cast<uint64_t>(*c.seed);
}

// Optuna's default study name: "no-name-" and a random UUID4, as
// InMemoryStorage.create_new_study makes it (optuna/storages/_in_memory.py:
// DEFAULT_STUDY_NAME_PREFIX + str(uuid.uuid4())). Random on every run, as
// Optuna's is; the study is never stored, so nothing needs to find it again.
std::string NoName() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;                     // version 4
  lo = (lo & ~(3ULL << 62)) | (2ULL << 62);                // RFC 4122 variant
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(hi >> 32),
                static_cast<unsigned long long>((hi >> 16) & 0xffff),
                static_cast<unsigned long long>(hi & 0xffff),
                static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return std::string("no-name-") + buf;
}

// The last k of a stepped range (int or discrete uniform): its values are
// low + k * step for k in 0..StepCount, as Optuna's samplers compute them
// (_untransform_numerical_param in optuna/_transform.py rounds to
// low + k * step). high was already lowered to such a value when the space
// was read (config/src/sweepers.cc, as Optuna's _adjust_int_uniform_high and
// _adjust_discrete_uniform_high), so the quotient is an integer up to
// rounding error.
int64_t StepCount(const config::OptunaDistribution& d) {
  return static_cast<int64_t>(std::round((d.high - d.low) / d.step));
}

bool Stepped(const config::OptunaDistribution& d) {
  return d.kind == DKind::kIntUniform || d.kind == DKind::kDiscreteUniform;
}

// Python's float() of each item the plugin iterates over: its
// OptunaSweeperImpl.sweep takes [float(ret.return_value)] for one direction
// and [float(v) for v in ret.return_value] for several, so a string counts
// as its characters and a dict as its keys. The messages are the plugin's
// ValueErrors, word for word.
StatusOr<std::vector<double>> Floats(const Node& value, size_t n) {
  std::vector<Node> items;
  if (n == 1) {
    items.push_back(value);
  } else if (value.is_list()) {
    items = value.AsList();
  } else if (value.is_string()) {
    for (char c : value.AsString()) items.push_back(Node::String({c}));
  } else if (value.is_map()) {
    for (const std::string& k : value.Keys()) items.push_back(Node::String(k));
  }
  std::vector<double> out;
  for (const Node& item : items) {
    StatusOr<double> v = config::PythonFloat(item);
    if (!v.ok()) break;
    out.push_back(*v);
  }
  if (out.size() != items.size() || (n > 1 && !value.is_list() &&
                                     !value.is_string() && !value.is_map())) {
    return Status::DataLoss(
        n == 1 ? "Return value must be float-castable. Got '" +
                     config::PythonStr(value) + "'."
               : "Return value must be a list or tuple of float-castable "
                 "values. Got '" + config::PythonStr(value) + "'.");
  }
  if (out.size() != n) {
    return Status::DataLoss(
        "The number of the values and the number of the objectives are "
        "mismatched. Expect " + std::to_string(n) + ", but actually " +
        std::to_string(out.size()) + ".");
  }
  return out;
}

std::string ValuesRepr(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    out += (i ? ", " : "") + FormatPythonFloat(values[i]);
  }
  return out + "]";
}

}  // namespace

StatusOr<OptunaSweep> ReadOptunaSweep(
    OptunaSweeperConfig settings, const std::vector<std::string>& overrides) {
  OptunaSweep sweep;
  sweep.settings = std::move(settings);
  TRIALSHIM_ASSIGN_OR_RETURN(sweep.space,
                             config::ReadOptunaSearchSpace(overrides));
  ReadSampler(&sweep);
  return sweep;
}

StatusOr<OptunaStudy> OptunaStudy::Create(OptunaSweep sweep) {
  OptunaStudy s;
  s.name_ = sweep.settings.study_name ? *sweep.settings.study_name : NoName();
  for (const std::string& d : sweep.settings.directions) {
    s.goals_.push_back(d == "minimize" ? Goal::kMinimize : Goal::kMaximize);
  }
  // Each distribution becomes a parameter of trialshim's search. The grid
  // is the plugin's (_to_grid_sampler_choices: a range without its stop),
  // searched by index. Otherwise categorical choices are searched by index
  // (values of any YAML type), stepped ranges by k (ordered, so the model
  // sees neighbours), and the rest as DOUBLE or INTEGER on a linear or log
  // scale.
  const bool grid = sweep.algorithm == Algorithm::kGridSearch;
  uint64_t points = 1;
  for (const config::OptunaParam& p : sweep.space.params) {
    const config::OptunaDistribution& d = p.distribution;
    std::vector<Node> values;
    if (grid) {
      StatusOr<std::vector<Node>> choices = config::OptunaGridChoices(d);
      if (!choices.ok()) {
        return Status::InvalidArgument(
            p.from.KeyElement() + ": " + choices.status().message() +
            " (list its values: choice(...) or range(...))");
      }
      values = std::move(choices).value();
      points *= values.size();
    } else if (d.kind == DKind::kCategorical) {
      values = d.choices;
    }
    s.values_.push_back(values);
    ParameterSpec spec;
    spec.id = p.name;
    spec.has_value_spec = true;
    if (!values.empty() || grid) {  // by index
      if (values.size() == 1) continue;  // one value is no search
      spec.type = ParameterType::kCategorical;
      for (size_t i = 0; i < values.size(); ++i) {
        spec.categorical_values.push_back(std::to_string(i));
      }
    } else if (Stepped(d)) {  // by k, ordered
      spec.type = ParameterType::kInteger;
      spec.max_value = static_cast<double>(StepCount(d));
    } else {
      spec.type = d.is_int() ? ParameterType::kInteger : ParameterType::kDouble;
      spec.min_value = d.low;
      spec.max_value = d.high;
      spec.scale = d.is_log() ? ScaleType::kLog : ScaleType::kLinear;
    }
    if (spec.type != ParameterType::kCategorical &&
        spec.min_value == spec.max_value) {
      // One value: the constant the parameter always gets.
      s.values_.back().push_back(d.is_int() ? Node::Int(static_cast<int64_t>(d.low))
                                            : Node::Double(d.low));
      continue;
    }
    s.params_.push_back(std::move(spec));
  }
  if (grid) {
    if (points == 0) {
      return Status::InvalidArgument(
          "GridSampler: a parameter has no value on the grid (the plugin "
          "enumerates a range without its stop: range(1, 2) is [1])");
    }
    // The plugin's self.n_trials = min(self.n_trials, n_trial).
    if (points < static_cast<uint64_t>(sweep.settings.n_trials)) {
      sweep.settings.n_trials = static_cast<int64_t>(points);
    }
  }
  s.sweep_ = std::move(sweep);
  return s;
}

// The plugin's log lines at the start of OptunaSweeperImpl.sweep, in its
// order; "(run as trialshim's ... search)" is ours, since the points are not
// the sampler's (docs/hydra-sweep-to-vertex.md).
std::vector<std::string> OptunaStudy::StartLines() const {
  std::vector<std::string> lines;
  if (sweep_.algorithm == Algorithm::kGridSearch) {
    lines.push_back("Updating num of trials to " +
                    std::to_string(sweep_.settings.n_trials) +
                    " due to using GridSampler.");
  }
  const char* engine = sweep_.algorithm == Algorithm::kGridSearch ? "grid"
                       : sweep_.algorithm == Algorithm::kRandomSearch
                           ? "random"
                           : "Bayesian";
  Node directions = Node::MakeList();
  for (const std::string& d : sweep_.settings.directions) {
    directions.MutableList().push_back(Node::String(d));
  }
  lines.push_back("Study name: " + name_);
  // f"{self.storage}": str() of the value, "None" when null.
  lines.push_back("Storage: " + config::PythonStr(sweep_.settings.storage));
  lines.push_back("Sampler: " + sweep_.sampler + " (run as trialshim's " +
                  engine + " search)");
  lines.push_back("Directions: " + config::PythonStr(directions));
  return lines;
}

StatusOr<Assignment> OptunaStudy::Next(int64_t trial_id) const {
  if (params_.empty()) return Assignment();
  // Grid points in order, where Optuna's GridSampler picks an unvisited one
  // at random (sample_relative in optuna/samplers/_grid.py): a rerun gives
  // each job the same point. docs/hydra-sweep-to-vertex.md lists the
  // difference.
  if (sweep_.algorithm == Algorithm::kGridSearch) {
    return GridPoint(params_, static_cast<uint64_t>(trial_id - 1));
  }
  if (sweep_.algorithm == Algorithm::kRandomSearch) {
    return RandomPoint(params_, sweep_.seed, trial_id);
  }
  // Several objectives become one as ParEGO makes them (pareto.h), with
  // weights drawn anew for each trial; a value that is not finite counts
  // as infeasible (the model needs finite values).
  std::vector<std::vector<double>> points;
  for (const Trial& t : trials_) {
    bool finite = t.complete;
    for (double v : t.values) finite = finite && std::isfinite(v);
    if (finite) points.push_back(t.values);
  }
  std::vector<double> scalar;
  if (goals_.size() > 1 && !points.empty()) {
    scalar = Scalarize(points, goals_,
                       ChebyshevWeights(goals_.size(), sweep_.seed, trial_id));
  }
  std::vector<Observation> observed;
  std::vector<Assignment> pending;
  size_t next_point = 0;
  for (const Trial& t : trials_) {
    if (!t.told) {
      pending.push_back(t.point);
      continue;
    }
    Observation o{t.point, Observation::Kind::kFailed, 0};
    bool finite = t.complete;
    for (double v : t.values) finite = finite && std::isfinite(v);
    if (finite) {
      o.kind = Observation::Kind::kSucceeded;
      o.value = goals_.size() > 1 ? scalar[next_point] : t.values[0];
      ++next_point;
    } else if (t.complete) {
      o.kind = Observation::Kind::kInfeasible;
    }
    observed.push_back(std::move(o));
  }
  BayesianSearch search(params_, goals_.size() > 1 ? Goal::kMinimize : goals_[0],
                        sweep_.seed);
  return search.Suggest(trial_id, observed, pending);
}

StatusOr<Node> OptunaStudy::Params(const Assignment& point) const {
  Node params = Node::MakeMap();
  for (size_t i = 0; i < sweep_.space.params.size(); ++i) {
    const config::OptunaParam& p = sweep_.space.params[i];
    const std::vector<Node>& values = values_[i];
    if (values.size() == 1) {
      params.Set(p.name, values[0]);
      continue;
    }
    auto v = std::find_if(point.begin(), point.end(),
                          [&](const ParameterValue& v) { return v.id == p.name; });
    if (v == point.end()) {
      return Status::Internal("the search gave no value for " + p.name);
    }
    const config::OptunaDistribution& d = p.distribution;
    if (v->type == ParameterType::kCategorical) {
      params.Set(p.name, values[std::stoul(v->text)]);
    } else if (Stepped(d)) {
      double x = d.low + std::round(v->number) * d.step;
      params.Set(p.name, d.is_int() ? Node::Int(std::llround(x)) : Node::Double(x));
    } else if (d.is_int()) {
      params.Set(p.name, Node::Int(std::llround(v->number)));
    } else {
      params.Set(p.name, Node::Double(v->number));
    }
  }
  return params;
}

// A batch of jobs, as the plugin's _configure_trials builds them: the
// suggested parameters, then the fixed ones, each "name=value".
StatusOr<std::vector<std::vector<std::string>>> OptunaStudy::Ask(int64_t n) {
  std::vector<std::vector<std::string>> jobs;
  for (int64_t k = 0; k < n; ++k) {
    Trial t;
    TRIALSHIM_ASSIGN_OR_RETURN(
        t.point, Next(static_cast<int64_t>(trials_.size()) + 1));
    TRIALSHIM_ASSIGN_OR_RETURN(t.params, Params(t.point));
    std::vector<std::string> overrides;
    for (const auto& [name, value] : t.params.AsMap()) {
      overrides.push_back(name + "=" + config::OptunaValueText(value));
    }
    for (const config::FixedParam& f : sweep_.space.fixed) {
      overrides.push_back(f.name + "=" + f.text);
    }
    trials_.push_back(std::move(t));
    jobs.push_back(std::move(overrides));
  }
  return jobs;
}

Status OptunaStudy::Tell(int64_t number, const Node& value) {
  Trial& t = trials_.at(static_cast<size_t>(number));
  t.told = true;
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<double> values,
                             Floats(value, goals_.size()));
  // study.tell refuses NaN (_check_single_value in optuna/study/
  // _optimize.py) with this message; the plugin re-raises it, which ends
  // the sweep.
  for (double v : values) {
    if (std::isnan(v)) {
      return Status::DataLoss("Trial " + std::to_string(number) +
                              " failed, because the objective function "
                              "returned nan.");
    }
  }
  t.values = std::move(values);
  t.complete = true;
  return Status::Ok();
}

StatusOr<OptunaStudy::Results> OptunaStudy::Finish() const {
  std::vector<const Trial*> complete;
  for (const Trial& t : trials_) {
    if (t.complete) complete.push_back(&t);
  }
  if (complete.empty()) {
    return Status::DataLoss("No trials are completed yet.");
  }
  Results r;
  Node out = Node::MakeMap();
  out.Set("name", Node::String("optuna"));
  if (goals_.size() == 1) {
    // study.best_trial: the first told of the best (ties keep the first:
    // InMemoryStorage._update_cache replaces it only on a strictly better
    // value).
    const Trial* best = complete[0];
    for (const Trial* t : complete) {
      double v = t->values[0], b = best->values[0];
      if (goals_[0] == Goal::kMinimize ? v < b : v > b) best = t;
    }
    out.Set("best_params", best->params);
    out.Set("best_value", Node::Double(best->values[0]));
    r.lines.push_back("Best parameters: " + config::PythonStr(best->params));
    r.lines.push_back("Best value: " + FormatPythonFloat(best->values[0]));
  } else {
    // study.best_trials: the front, in trial order, equal points all kept
    // (_get_pareto_front_trials in optuna/study/_multi_objective.py: equal
    // values do not dominate each other).
    std::vector<std::vector<double>> points;
    for (const Trial* t : complete) points.push_back(t->values);
    std::vector<int> ranks = ParetoRanks(points, goals_);
    Node solutions = Node::MakeList();
    for (size_t i = 0; i < complete.size(); ++i) {
      if (ranks[i] != 0) continue;
      Node values = Node::MakeList();
      for (double v : complete[i]->values) {
        values.MutableList().push_back(Node::Double(v));
      }
      Node solution = Node::MakeMap();
      solution.Set("params", complete[i]->params);
      solution.Set("values", values);
      solutions.MutableList().push_back(std::move(solution));
      r.lines.push_back("    Values: " + ValuesRepr(complete[i]->values) +
                        ", Params: " + config::PythonStr(complete[i]->params));
    }
    r.lines.insert(r.lines.begin(), "Number of Pareto solutions: " +
                                        std::to_string(solutions.size()));
    out.Set("solutions", std::move(solutions));
  }
  r.yaml = config::ToYaml(out);
  return r;
}

}  // namespace trialshim::tuning
