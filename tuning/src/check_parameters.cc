// The study's parameters and the algorithm that searches them: the rules
// of study.proto's ParameterSpec, its value specs and conditions, and
// Algorithm (check.h lists them). A parameter Vertex would refuse, or one
// whose child can never be active, costs no paid trial here.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include "check_internal.h"
#include "trialshim/base/spell.h"
#include "trialshim/config/command_line.h"
#include "trialshim/search/search.h"

namespace trialshim::tuning::internal {
namespace {

class ParameterChecker : public CheckerBase {
 public:
  using CheckerBase::CheckerBase;

  void Run() {
    CheckParameters();
    CheckAlgorithm();
  }

 private:
  void CheckParameters() {
    if (job_.parameters.empty()) {
      Error(
          job_.parameters_mark.known() ? job_.parameters_mark : job_.study_mark,
          "studySpec has no parameters");
    }
    std::set<std::string> seen;
    for (const ParameterSpec& p : job_.parameters) CheckParameter(p, &seen);
  }

  void CheckParameter(const ParameterSpec& p, std::set<std::string>* seen) {
    CheckId(p.id, p.id_mark, "parameterId");
    if (!p.id.empty() && !seen->insert(p.id).second) {
      Error(p.id_mark, "duplicate parameterId '" + p.id + "'");
    }
    CheckNotHydraFlag(p);
    // ParameterSpec.ScaleType: for UNIT_LOG_SCALE and UNIT_REVERSE_LOG_SCALE
    // "the entire feasible space must be strictly positive".
    bool log = p.scale == ScaleType::kLog || p.scale == ScaleType::kReverseLog;
    const std::string name = "'" + p.id + "'";
    if (p.has_value_spec) switch (p.type) {
        case ParameterType::kDouble:
        case ParameterType::kInteger:
          // Without both bounds the parser has already said what is wrong.
          if (p.min_mark.known() && p.max_mark.known() &&
              !(p.min_value < p.max_value)) {
            Error(p.max_mark.known() ? p.max_mark : p.value_spec_mark,
                  "parameter " + name + ": minValue (" +
                      FormatNumber(p.min_value) +
                      ") must be less than maxValue (" +
                      FormatNumber(p.max_value) + ")");
          }
          if (log && p.min_value <= 0) {
            Error(p.min_mark.known() ? p.min_mark : p.scale_mark,
                  "parameter " + name + ": " + ScaleTypeName(p.scale) +
                      " needs a strictly positive range, but minValue is " +
                      FormatNumber(p.min_value));
          }
          break;
        case ParameterType::kDiscrete:
          CheckDiscrete(p, log);
          break;
        case ParameterType::kCategorical:
          CheckCategorical(p);
          break;
      }
    for (const ConditionalParameterSpec& c : p.conditionals) {
      CheckConditional(p, c);
      CheckParameter(c.parameter, seen);
    }
  }

  // trialshim passes Hydra's own flags through untouched (translate.h), so
  // a parameterId that is one of them reaches Hydra as that flag.
  void CheckNotHydraFlag(const ParameterSpec& p) {
    if (config::FindHydraFlag("--" + p.id) == nullptr) return;
    std::vector<std::string> samples = Samples(p);
    Error(p.id_mark,
          "parameterId '" + p.id +
              "' is one of Hydra's flags: the trial "
              "argument --" +
              p.id + "=" + (samples.empty() ? "..." : samples[0]) +
              " would be read by Hydra as its --" + p.id +
              " flag, not as an override; rename the parameter (e.g. "
              "'model." +
              p.id + "', or '" + p.id + "_' with --map " + p.id + "_=" + p.id +
              " in the trialshim command)");
  }

  // DiscreteValueSpec.values (study.proto): "in increasing order and at
  // least 1e-10 apart" and "not more than 1,000 values".
  void CheckDiscrete(const ParameterSpec& p, bool log) {
    const std::string name = "'" + p.id + "'";
    const auto& v = p.discrete_values;
    if (v.empty()) {
      Error(p.value_spec_mark, "parameter " + name + " has no values");
    }
    if (v.size() > 1000) {
      Error(p.value_spec_mark, "parameter " + name + " has " +
                                   std::to_string(v.size()) +
                                   " discrete values; at most 1000 allowed");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const Mark& m =
          i < p.value_marks.size() ? p.value_marks[i] : p.value_spec_mark;
      if (!std::isfinite(v[i])) continue;  // the parser reported it
      if (log && v[i] <= 0) {
        Error(m, "parameter " + name + ": " + ScaleTypeName(p.scale) +
                     " needs strictly positive values, got " +
                     FormatNumber(v[i]));
      }
      if (i > 0 && std::isfinite(v[i - 1])) {
        if (v[i] <= v[i - 1]) {
          Error(m, "parameter " + name +
                       ": discrete values must be increasing, but " +
                       FormatNumber(v[i]) + " follows " +
                       FormatNumber(v[i - 1]));
        } else if (v[i] - v[i - 1] < kDiscreteEpsilon) {
          Error(m, "parameter " + name +
                       ": discrete values must be at least 1e-10 apart (" +
                       FormatNumber(v[i - 1]) + " and " + FormatNumber(v[i]) +
                       ")");
        }
      }
    }
  }

  void CheckCategorical(const ParameterSpec& p) {
    const std::string name = "'" + p.id + "'";
    if (p.categorical_values.empty()) {
      Error(p.value_spec_mark, "parameter " + name + " has no values");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < p.categorical_values.size(); ++i) {
      const Mark& m =
          i < p.value_marks.size() ? p.value_marks[i] : p.value_spec_mark;
      if (!seen.insert(p.categorical_values[i]).second) {
        Error(m, "parameter " + name + ": duplicate value '" +
                     p.categorical_values[i] + "'");
      }
    }
    // ParameterSpec.scale_type: "Leave unset for CATEGORICAL parameters."
    if (p.scale != ScaleType::kUnspecified) {
      Error(p.scale_mark, "parameter " + name +
                              ": scaleType must be unset for CATEGORICAL "
                              "parameters");
    }
  }

  // ConditionalParameterSpec (study.proto): each parent_value_condition
  // matches a parent of its own type, and its values are the parent's:
  // IntValueCondition's "must lie in integer_value_spec",
  // DiscreteValueCondition's and CategoricalValueCondition's "must exist in"
  // the parent's value spec (a DISCRETE one within kDiscreteEpsilon, as
  // they are matched). A value outside would never activate the child.
  void CheckConditional(const ParameterSpec& parent,
                        const ConditionalParameterSpec& c) {
    auto mismatch = [&](const char* field, ParameterType want) {
      Error(c.mark, std::string(field) + " needs a " + ParameterTypeName(want) +
                        " parent, but '" + parent.id + "' is " +
                        ParameterTypeName(parent.type));
    };
    if (!c.parent_int_values.empty()) {
      if (parent.type != ParameterType::kInteger) {
        mismatch("parentIntValues", ParameterType::kInteger);
      } else {
        CheckParentInts(parent, c);
      }
    }
    if (!c.parent_discrete_values.empty()) {
      if (parent.type != ParameterType::kDiscrete) {
        mismatch("parentDiscreteValues", ParameterType::kDiscrete);
      } else {
        CheckParentDiscretes(parent, c);
      }
    }
    if (!c.parent_categorical_values.empty()) {
      if (parent.type != ParameterType::kCategorical) {
        mismatch("parentCategoricalValues", ParameterType::kCategorical);
      } else {
        for (const std::string& v : c.parent_categorical_values) {
          if (std::find(parent.categorical_values.begin(),
                        parent.categorical_values.end(),
                        v) == parent.categorical_values.end()) {
            Error(c.mark, "parentCategoricalValues: '" + v +
                              "' is not a value of '" + parent.id + "'" +
                              DidYouMean(v, parent.categorical_values));
          }
        }
      }
    }
  }

  void CheckParentInts(const ParameterSpec& parent,
                       const ConditionalParameterSpec& c) {
    if (!parent.has_value_spec || !(parent.min_value <= parent.max_value)) {
      return;  // reported
    }
    for (int64_t v : c.parent_int_values) {
      const auto d = static_cast<double>(v);
      if (d < parent.min_value || d > parent.max_value) {
        Error(c.mark, "parentIntValues: " + std::to_string(v) +
                          " is outside the range of '" + parent.id + "' (" +
                          FormatNumber(parent.min_value) + " to " +
                          FormatNumber(parent.max_value) +
                          "), so the child would never be active");
      }
    }
  }

  void CheckParentDiscretes(const ParameterSpec& parent,
                            const ConditionalParameterSpec& c) {
    const std::vector<double>& values = parent.discrete_values;
    if (values.empty()) return;  // reported
    for (double v : c.parent_discrete_values) {
      auto nearest = std::min_element(
          values.begin(), values.end(), [v](double a, double b) {
            return std::fabs(a - v) < std::fabs(b - v);
          });
      if (std::fabs(*nearest - v) <= kDiscreteEpsilon) continue;
      Error(c.mark, "parentDiscreteValues: " + FormatNumber(v) +
                        " is not a value of '" + parent.id +
                        "' (did you mean " + FormatNumber(*nearest) + "?)");
    }
  }

  void CheckAlgorithm() {
    if (job_.algorithm == Algorithm::kUnspecified) {
      Note(job_.algorithm_mark,
           "ALGORITHM_UNSPECIFIED is Bayesian optimization on Vertex; "
           "`trialshim sweep` runs its own (Gaussian process, a "
           "confidence bound in a trust region), so its trials are not "
           "Vertex's");
    }
    if (job_.algorithm != Algorithm::kGridSearch) return;
    // study.proto, Algorithm.GRID_SEARCH: "all parameters must be INTEGER,
    // CATEGORICAL, or DISCRETE".
    bool gridable = true;
    // Conditional children are part of the grid (search.h), so they too
    // must be countable.
    std::function<void(const ParameterSpec&)> check =
        [&](const ParameterSpec& p) {
          if (p.has_value_spec && p.type == ParameterType::kDouble) {
            gridable = false;
            Error(p.id_mark,
                  "GRID_SEARCH needs INTEGER, DISCRETE or CATEGORICAL "
                  "parameters; '" +
                      p.id +
                      "' is DOUBLE (use discreteValueSpec, or RANDOM_SEARCH)");
          }
          for (const ConditionalParameterSpec& c : p.conditionals) {
            check(c.parameter);
          }
        };
    for (const ParameterSpec& p : job_.parameters) check(p);
    if (!gridable) return;
    StatusOr<uint64_t> size = GridSize(job_.parameters);
    if (!size.ok()) return;
    int64_t max = job_.MaxTrials();
    if (*size < static_cast<uint64_t>(max)) {
      Warning(job_.max_trial_mark,
              "the grid has " + std::to_string(*size) +
                  " points but maxTrialCount is " + std::to_string(max) +
                  "; Vertex may repeat points, `trialshim sweep` stops at " +
                  std::to_string(*size));
    } else if (*size > static_cast<uint64_t>(max)) {
      Warning(job_.max_trial_mark, "the grid has " + std::to_string(*size) +
                                       " points but maxTrialCount is " +
                                       std::to_string(max) +
                                       "; only part of the grid will be tried");
    }
  }
};

}  // namespace

void CheckParameterRules(const JobSpec& job, const CheckOptions& options,
                         std::vector<Diagnostic>* diagnostics) {
  ParameterChecker(job, options, diagnostics).Run();
}

}  // namespace trialshim::tuning::internal
