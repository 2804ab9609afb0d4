// Builders of studySpec parameters for the search tests (search, bayesian),
// as ParseJobSpec would make them, and the argv text of an assignment.
#ifndef TRIALSHIM_TESTS_TESTUTIL_PARAMETERS_H_
#define TRIALSHIM_TESTS_TESTUTIL_PARAMETERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/search/search.h"
#include "trialshim/search/study_spec.h"

namespace trialshim::testing {

inline tuning::ParameterSpec Double(
    const std::string& id, double min, double max,
    tuning::ScaleType scale = tuning::ScaleType::kLinear) {
  tuning::ParameterSpec p;
  p.id = id;
  p.type = tuning::ParameterType::kDouble;
  p.has_value_spec = true;
  p.min_value = min;
  p.max_value = max;
  p.scale = scale;
  return p;
}

inline tuning::ParameterSpec Integer(
    const std::string& id, int64_t min, int64_t max,
    tuning::ScaleType scale = tuning::ScaleType::kLinear) {
  tuning::ParameterSpec p =
      Double(id, static_cast<double>(min), static_cast<double>(max), scale);
  p.type = tuning::ParameterType::kInteger;
  return p;
}

inline tuning::ParameterSpec Discrete(const std::string& id,
                                      std::vector<double> values) {
  tuning::ParameterSpec p;
  p.id = id;
  p.type = tuning::ParameterType::kDiscrete;
  p.has_value_spec = true;
  p.discrete_values = std::move(values);
  return p;
}

inline tuning::ParameterSpec Categorical(const std::string& id,
                                         std::vector<std::string> values) {
  tuning::ParameterSpec p;
  p.id = id;
  p.type = tuning::ParameterType::kCategorical;
  p.has_value_spec = true;
  p.categorical_values = std::move(values);
  return p;
}

// Adds `child` to `parent`, active when the parent is one of `categories`.
inline tuning::ParameterSpec WithChild(tuning::ParameterSpec parent,
                                       std::vector<std::string> categories,
                                       tuning::ParameterSpec child) {
  tuning::ConditionalParameterSpec c;
  c.parent_categorical_values = std::move(categories);
  c.parameter = std::move(child);
  parent.conditionals.push_back(std::move(c));
  return parent;
}

// "--a=1 --b=x": the arguments a trial with these values receives.
inline std::string Args(const tuning::Assignment& a) {
  std::string s;
  for (const tuning::ParameterValue& v : a) {
    s += (s.empty() ? "" : " ") + v.Arg();
  }
  return s;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_PARAMETERS_H_
