#include "trialshim/config/basic_sweeper.h"

#include <fnmatch.h>

#include <utility>

#include "trialshim/base/strings.h"
#include "trialshim/config/override.h"
#include "trialshim/config/python_text.h"

namespace trialshim::config {
namespace {

// Python's fnmatch.fnmatch (no escapes; '*' crosses '/').
bool Matches(const std::string& name, const std::vector<std::string>& globs) {
  for (const std::string& g : globs) {
    if (fnmatch(g.c_str(), name.c_str(), FNM_NOESCAPE) == 0) return true;
  }
  return false;
}

// Hydra's Override.get_key_element: "+db@src", "~a".
std::string KeyElement(const Override& o) {
  const char* prefix = o.type == OverrideType::kDelete     ? "~"
                       : o.type == OverrideType::kAdd      ? "+"
                       : o.type == OverrideType::kForceAdd ? "++"
                                                           : "";
  return prefix + o.KeyWithPackage();
}

// One key's overrides: the sweep's values, or its one value. `param`: the
// hydra.sweeper.params entry it came from, if it did.
StatusOr<std::vector<std::string>> Values(const Override& o,
                                          const ConfigRepository& repo,
                                          const Node* param) {
  const std::string head = KeyElement(o) + "=";
  std::vector<std::string> out;
  switch (o.value_kind) {
    case ValueKind::kIntervalSweep: {
      // Integral ends as ints, which an int key takes and a float key
      // converts.
      std::vector<std::string> ends = o.element_texts;
      for (std::string& e : ends) {
        if (e.size() > 2 && e.compare(e.size() - 2, 2, ".0") == 0) {
          e.resize(e.size() - 2);
        }
      }
      const std::string list = JoinStrings(ends, ",");
      return Status::InvalidArgument(
          "BasicSweeper does not support sweep type : INTERVAL_SWEEP ('" +
          o.input +
          "': interval() is for sweepers that sample, such as Optuna's); "
          "the basic sweeper runs listed values, such as " +
          (param == nullptr
               ? head + list
               : list + " where hydra.sweeper.params sets " +
                     o.KeyWithPackage() +
                     (param->mark().known() ? " (" + param->mark().ToString() +
                                                  ")"
                                            : std::string())));
    }
    case ValueKind::kGlob:
      for (const std::string& option : repo.GroupOptions(o.key_or_group)) {
        if (Matches(option, o.glob_include) &&
            !Matches(option, o.glob_exclude)) {
          out.push_back(head + option);
        }
      }
      return out;
    default:
      for (const std::string& text : o.element_texts) out.push_back(head + text);
      return out;
  }
}

}  // namespace

StatusOr<std::vector<std::vector<std::string>>> BasicSweepJobs(
    const Node& params, const std::vector<std::string>& overrides,
    const ConfigRepository& repo) {
  // "key=value" for each param (str() of its value, as the sweeper's
  // Dict[str, str] holds it), then the overrides.
  std::vector<std::pair<std::string, const Node*>> all;
  if (params.is_map()) {
    for (const auto& [key, value] : params.AsMap()) {
      all.emplace_back(key + "=" + PythonStr(value), &value);
    }
  }
  for (const std::string& o : overrides) all.emplace_back(o, nullptr);
  // OrderedDict: a key keeps its first place, its last list.
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;
  for (const auto& [text, param] : all) {
    TRIALSHIM_ASSIGN_OR_RETURN(Override o, ParseOverride(text));
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> values,
                               Values(o, repo, param));
    const std::string key = KeyElement(o);
    bool found = false;
    for (auto& [k, v] : lists) {
      if (k == key) {
        v = values;
        found = true;
      }
    }
    if (!found) lists.emplace_back(key, std::move(values));
  }
  // itertools.product: the last list varies fastest.
  std::vector<std::vector<std::string>> jobs = {{}};
  for (const auto& [key, values] : lists) {
    std::vector<std::vector<std::string>> next;
    for (const std::vector<std::string>& job : jobs) {
      for (const std::string& v : values) {
        next.push_back(job);
        next.back().push_back(v);
      }
    }
    jobs = std::move(next);
  }
  return jobs;
}

std::vector<std::vector<std::vector<std::string>>> SplitIntoBatches(
    std::vector<std::vector<std::string>> jobs,
    std::optional<int64_t> max_batch_size) {
  if (!max_batch_size || *max_batch_size <= 0) return {std::move(jobs)};
  const size_t n = static_cast<size_t>(*max_batch_size);
  std::vector<std::vector<std::vector<std::string>>> batches;
  for (size_t i = 0; i < jobs.size(); i += n) {
    batches.emplace_back(jobs.begin() + i,
                         jobs.begin() + std::min(jobs.size(), i + n));
  }
  return batches;
}

}  // namespace trialshim::config
