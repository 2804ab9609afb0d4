// The record of a sweep: trials.json and trials.csv written, and
// trials.json read back for --resume. See sweep_record.h.
#include "sweep_record.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "trialshim/base/csv.h"
#include "trialshim/base/file.h"
#include "trialshim/base/strings.h"

namespace trialshim::tuning {
namespace {

// The largest trials.json --resume reads: ample for a sweep of a hundred
// thousand trials with their reports, and a bound on what a damaged or
// replaced file costs.
constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 30;

using json = nlohmann::json;

// A parameter's value in trials.json. Vertex returns every number as a
// double (Trial.Parameter.value is a google.protobuf.Value in study.proto;
// docs/vertex-values.md), but an INTEGER is written as a JSON int here so
// that --resume reads back exactly the value the trial was given.
json ValueJson(const ParameterValue& v) {
  if (v.type == ParameterType::kCategorical) return v.text;
  if (v.type == ParameterType::kInteger) {
    return static_cast<int64_t>(v.number);
  }
  return v.number;
}

// A trial's measurements in trials.json: {step, elapsed_seconds, value},
// value null when it was not finite (JSON has no NaN). The fields are
// study.proto's Measurement (step_count, elapsed_duration, the metric's
// value), which the early-stopping rules and the final measurement read.
json MeasurementsJson(const std::vector<Measurement>& ms) {
  json out = json::array();
  for (const Measurement& m : ms) {
    out.push_back(
        {{"step", m.step},
         {"elapsed_seconds", m.elapsed_seconds},
         {"value", std::isfinite(m.value) ? json(m.value) : json(nullptr)}});
  }
  return out;
}

// What MeasurementsJson wrote; entries of the wrong shape are skipped.
std::vector<Measurement> MeasurementsFromJson(const json& trial) {
  std::vector<Measurement> out;
  auto it = trial.find("measurements");
  if (it == trial.end() || !it->is_array()) return out;
  for (const json& m : *it) {
    if (!m.is_object()) continue;
    auto step = m.find("step");
    auto elapsed = m.find("elapsed_seconds");
    auto value = m.find("value");
    if (step == m.end() || !step->is_number_integer() ||
        (step->is_number_unsigned() &&
         step->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) ||
        elapsed == m.end() || !elapsed->is_number() || value == m.end()) {
      continue;
    }
    out.push_back({step->get<int64_t>(), elapsed->get<double>(),
                   value->is_number() ? value->get<double>() : NAN});
  }
  return out;
}

// Indices into r.trials by id.
std::vector<size_t> ById(const SweepResult& r) {
  std::vector<size_t> order(r.trials.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.trials[a].id < r.trials[b].id;
  });
  return order;
}

}  // namespace

namespace internal {

// What makes a record the same search: --resume refuses another, since its
// trials were chosen for another space, metric or algorithm.
std::string Fingerprint(const SweepResult& r) {
  // The seed matters only to the random and Bayesian searches.
  std::string f =
      r.metric_id + "|" + GoalName(r.goal) + "|" + AlgorithmName(r.algorithm) +
      "|" +
      (r.algorithm == Algorithm::kGridSearch ? std::string("-")
                                             : std::to_string(r.seed));
  std::function<void(const ParameterSpec&)> add = [&](const ParameterSpec& p) {
    f += "|" + p.id + ":" + ParameterTypeName(p.type) + ":" +
         ScaleTypeName(p.scale) + ":" + FormatNumber(p.min_value) + ":" +
         FormatNumber(p.max_value);
    for (double d : p.discrete_values) f += "," + FormatNumber(d);
    for (const std::string& s : p.categorical_values) f += "," + s;
    for (const ConditionalParameterSpec& c : p.conditionals) {
      f += "{";
      add(c.parameter);
      f += "}";
    }
  };
  for (const ParameterSpec& p : r.parameters) add(p);
  // The other objectives (a single metric's fingerprint is as it was).
  for (size_t i = 1; i < r.objectives.size(); ++i) {
    f += "|+" + r.objectives[i].id + ":" + GoalName(r.objectives[i].goal);
  }
  return f;
}

// The names SignalName writes ("SIG" + sigabbrev_np) for the signals a
// trial dies of in practice; any other reads back as 0, no signal.
int SignalNumber(const std::string& name) {
  static const std::pair<const char*, int> kSignals[] = {
      {"SIGHUP", SIGHUP},   {"SIGINT", SIGINT},   {"SIGQUIT", SIGQUIT},
      {"SIGILL", SIGILL},   {"SIGABRT", SIGABRT}, {"SIGFPE", SIGFPE},
      {"SIGKILL", SIGKILL}, {"SIGSEGV", SIGSEGV}, {"SIGPIPE", SIGPIPE},
      {"SIGALRM", SIGALRM}, {"SIGTERM", SIGTERM}, {"SIGBUS", SIGBUS}};
  for (const auto& [n, s] : kSignals) {
    if (name == n) return s;
  }
  return 0;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}


namespace {

int64_t Integer(const json& t, const char* key, int64_t fallback) {
  auto it = t.find(key);
  if (it == t.end() || !it->is_number_integer() ||
      (it->is_number_unsigned() &&
       it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
    return fallback;
  }
  return it->get<int64_t>();
}

// A trial's "parameters", checked against the spec: every active parameter
// present with a value of its type and range. Only the parameters its
// parent's value activates (ConditionalParameterSpec in study.proto) are
// required, as a trial is given only those.
StatusOr<Assignment> RecordedValues(const json& trial,
                                    const std::vector<ParameterSpec>& spec) {
  auto it = trial.find("parameters");
  if (it == trial.end() || !it->is_object()) {
    return Status::DataLoss("a trial without parameters");
  }
  Assignment out;
  std::function<Status(const ParameterSpec&)> add =
      [&](const ParameterSpec& p) -> Status {
    auto v = it->find(p.id);
    if (v == it->end()) {
      return Status::DataLoss("no value for '" + p.id + "'");
    }
    ParameterValue value{p.id, p.type, 0, ""};
    if (p.type == ParameterType::kCategorical) {
      if (!v->is_string()) return Status::DataLoss(p.id + " is no string");
      value.text = v->get<std::string>();
      const auto& cats = p.categorical_values;
      if (std::find(cats.begin(), cats.end(), value.text) == cats.end()) {
        return Status::DataLoss(p.id + ": unknown category");
      }
    } else {
      if (!v->is_number()) return Status::DataLoss(p.id + " is no number");
      value.number = v->get<double>();
      bool ok =
          p.type == ParameterType::kDiscrete
              ? std::find(p.discrete_values.begin(), p.discrete_values.end(),
                          value.number) != p.discrete_values.end()
              : value.number >= p.min_value && value.number <= p.max_value &&
                    (p.type != ParameterType::kInteger ||
                     value.number == std::round(value.number));
      if (!ok) return Status::DataLoss(p.id + ": value out of range");
    }
    out.push_back(value);
    for (const ConditionalParameterSpec& c : p.conditionals) {
      if (Activates(c, value)) TRIALSHIM_RETURN_IF_ERROR(add(c.parameter));
    }
    return Status::Ok();
  };
  for (const ParameterSpec& p : spec) TRIALSHIM_RETURN_IF_ERROR(add(p));
  return out;
}

// A SUCCEEDED trial's finite "metric", and with several objectives its
// "metrics": a number for each, the first equal to "metric". A trial
// without its final measurement is INFEASIBLE, as Vertex makes it
// (Trial.State.INFEASIBLE in study.proto), so a SUCCEEDED one without a
// metric is a damaged record.
Status RecordedMetrics(const json& t, const std::string& name,
                       const SweepResult& shape, TrialRecord* r) {
  if (t.contains("metric") && t["metric"].is_number()) {
    r->metric = t["metric"].get<double>();
  }
  if (r->state != TrialState::kSucceeded) return Status::Ok();
  if (!r->metric || !std::isfinite(*r->metric)) {
    return Status::DataLoss(name + " is SUCCEEDED without a numeric metric");
  }
  if (shape.objectives.size() < 2) return Status::Ok();
  auto it = t.find("metrics");
  for (const Objective& o : shape.objectives) {
    if (it == t.end() || !it->is_object() || !it->contains(o.id) ||
        !(*it)[o.id].is_number()) {
      return Status::DataLoss(name + " is SUCCEEDED without a numeric '" +
                              o.id + "'");
    }
    r->values.push_back((*it)[o.id].get<double>());
  }
  if (r->values[0] != *r->metric) {
    return Status::DataLoss(name + "'s metrics disagree with its metric");
  }
  return Status::Ok();
}

// Vertex's Trial.State names where they exist (ACTIVE, STOPPING, SUCCEEDED,
// INFEASIBLE in study.proto); PENDING, FAILED and STOPPED are the sweep's
// own (sweep.h).
StatusOr<TrialState> RecordedState(const json& t, const std::string& name) {
  std::string state = t.value("state", "");
  for (TrialState s :
       {TrialState::kPending, TrialState::kActive, TrialState::kSucceeded,
        TrialState::kInfeasible, TrialState::kFailed, TrialState::kStopped,
        TrialState::kStopping}) {
    if (state == TrialStateName(s)) return s;
  }
  return Status::DataLoss(name + " has an unknown state '" + state + "'");
}

// One entry of trials.json's "trials".
StatusOr<TrialRecord> ReadTrial(const json& t, const SweepResult& shape) {
  if (!t.is_object()) {
    return Status::DataLoss("trials.json holds a trial that is not an object");
  }
  TrialRecord r;
  r.id = Integer(t, "id", 0);
  if (r.id < 1) {
    return Status::DataLoss("trials.json holds a trial without a valid id");
  }
  std::string name = "trial " + std::to_string(r.id);
  TRIALSHIM_ASSIGN_OR_RETURN(r.state, RecordedState(t, name));
  StatusOr<Assignment> values = RecordedValues(t, shape.parameters);
  if (!values.ok()) {
    return Status::DataLoss(name + "'s parameters: " +
                            values.status().message());
  }
  r.parameters = *values;
  r.measurements = MeasurementsFromJson(t);
  r.seconds = t.value("seconds", 0.0);
  TRIALSHIM_RETURN_IF_ERROR(RecordedMetrics(t, name, shape, &r));
  r.metric_step = Integer(t, "metric_step", 0);
  r.reports = static_cast<int>(Integer(t, "reports", 0));
  r.exit_code = static_cast<int>(Integer(t, "exit_code", -1));
  r.signal = SignalNumber(t.value("signal", ""));
  r.start_time = t.value("start_time", 0.0);
  r.reason = t.value("reason", "");
  r.stopped_early = t.value("stopped_early", false);
  return r;
}

}  // namespace

StatusOr<Record> ReadRecord(const std::string& path, const SweepResult& shape) {
  // As every input (base/file.h): a FIFO or a directory in its place is
  // refused, naming it, rather than blocking or throwing from a stream.
  TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                             ReadInputFile(path, kMaxRecordBytes));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("trials") || !j["trials"].is_array()) {
    return Status::DataLoss(path + " is not a trialshim sweep record");
  }
  Record record;
  try {
    if (j.value("fingerprint", "") != Fingerprint(shape)) {
      return Status::InvalidArgument(
          "a sweep of a different search (parameters, metric, algorithm or "
          "seed changed)");
    }
    record.job_id = j.value("job_id", "");
    if (j.contains("command")) {
      if (!j["command"].is_array()) {
        return Status::DataLoss(path + "'s command is not a list");
      }
      std::vector<std::string> command;
      for (const json& w : j["command"]) {
        if (!w.is_string()) {
          return Status::DataLoss(path + "'s command holds a non-string");
        }
        command.push_back(w.get<std::string>());
      }
      record.command = std::move(command);
    }
    std::set<int64_t> ids;
    for (const json& t : j["trials"]) {
      TRIALSHIM_ASSIGN_OR_RETURN(TrialRecord r, ReadTrial(t, shape));
      if (!ids.insert(r.id).second) {
        return Status::DataLoss("trials.json lists trial " +
                                std::to_string(r.id) + " twice");
      }
      record.trials.push_back(std::move(r));
    }
  } catch (const json::exception& e) {
    return Status::DataLoss(path + " is not a trialshim sweep record: " +
                            e.what());
  }
  return record;
}

}  // namespace internal

using internal::Fingerprint;
using internal::SignalName;

// trials.json, in trial id order: what --resume reads back, and "args", the
// argv tokens the trial was given, as Vertex writes them (search.h,
// ParameterValue::Arg).
std::string TrialsJson(const SweepResult& r) {
  json trials = json::array();
  json front = json::array();
  std::vector<int> ranks = r.ParetoRanks();
  for (size_t index : ById(r)) {
    const TrialRecord& t = r.trials[index];
    json params = json::object();
    for (const ParameterValue& v : t.parameters) params[v.id] = ValueJson(v);
    json j = {{"id", t.id},
              {"state", TrialStateName(t.state)},
              {"parameters", params},
              {"args", json::array()},
              {"metric", t.metric ? json(*t.metric) : json(nullptr)},
              {"metric_step", t.metric_step},
              {"reports", t.reports},
              {"exit_code", t.exit_code},
              {"signal", t.signal ? SignalName(t.signal) : ""},
              {"start_time", t.start_time},
              {"seconds", t.seconds},
              {"reason", t.reason},
              {"stopped_early", t.stopped_early},
              {"measurements", MeasurementsJson(t.measurements)}};
    for (const ParameterValue& v : t.parameters) j["args"].push_back(v.Arg());
    if (r.objectives.size() > 1) {
      json values = json::object();
      for (size_t i = 0; i < t.values.size(); ++i) {
        values[r.objectives[i].id] = t.values[i];
      }
      j["metrics"] = values;
      j["pareto_front"] = ranks[index] == 0;
      if (ranks[index] == 0) front.push_back(t.id);
    }
    trials.push_back(j);
  }
  json out = {{"job_id", r.job_id},
              {"display_name", r.display_name},
              {"metric_id", r.metric_id},
              {"goal", GoalName(r.goal)},
              {"algorithm", AlgorithmName(r.algorithm)},
              {"seed", r.seed},
              {"fingerprint", Fingerprint(r)},
              {"command", r.command},
              {"stopped", r.stopped},
              {"failed", r.failed},
              {"notes", r.notes},
              {"trials", trials}};
  if (r.objectives.size() > 1) {
    json objectives = json::array();
    for (const Objective& o : r.objectives) {
      objectives.push_back({{"metric_id", o.id}, {"goal", GoalName(o.goal)}});
    }
    out["objectives"] = objectives;
    out["pareto_front"] = front;
  }
  return out.dump(2) + "\n";
}

std::string TrialsCsv(const SweepResult& r) {
  std::vector<std::string> ids;
  std::function<void(const ParameterSpec&)> add = [&](const ParameterSpec& p) {
    ids.push_back(p.id);
    for (const ConditionalParameterSpec& c : p.conditionals) add(c.parameter);
  };
  for (const ParameterSpec& p : r.parameters) add(p);
  // Every objective's column (one, metric_id, for a single metric), and
  // with several whether the trial is on the Pareto front.
  bool several = r.objectives.size() > 1;
  std::vector<std::string> row = {"trial", "state"};
  if (several) {
    for (const Objective& o : r.objectives) row.push_back(o.id);
    row.push_back("pareto_front");
  } else {
    row.push_back(r.metric_id);
  }
  row.insert(row.end(), ids.begin(), ids.end());
  for (const char* c : {"seconds", "exit_code", "reason"}) row.push_back(c);
  std::string out;
  AppendCsvRow(row, &out);
  std::vector<int> ranks = r.ParetoRanks();
  for (size_t index : ById(r)) {
    const TrialRecord& t = r.trials[index];
    row = {std::to_string(t.id), TrialStateName(t.state)};
    if (several) {
      for (size_t i = 0; i < r.objectives.size(); ++i) {
        row.push_back(i < t.values.size() ? FormatNumber(t.values[i]) : "");
      }
      row.push_back(ranks[index] == 0 ? "true" : "");
    } else {
      row.push_back(t.metric ? FormatNumber(*t.metric) : "");
    }
    for (const std::string& id : ids) {
      row.emplace_back();
      for (const ParameterValue& v : t.parameters) {
        if (v.id == id) row.back() = v.Format();
      }
    }
    char secs[32];
    std::snprintf(secs, sizeof(secs), "%.3f", t.seconds);
    row.push_back(secs);
    row.push_back(t.exit_code >= 0 ? std::to_string(t.exit_code) : "");
    row.push_back(t.reason);
    AppendCsvRow(row, &out);
  }
  return out;
}

}  // namespace trialshim::tuning
