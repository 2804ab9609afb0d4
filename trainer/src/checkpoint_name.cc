// Lightning's checkpoint file names (FormatCheckpointName,
// CheckCheckpointFilename in callbacks.h) over Python's str.format.
#include "trialshim/trainer/callbacks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "trialshim/base/python_format.h"
#include "trialshim/base/strings.h"

namespace trialshim::trainer {

namespace {

// re.findall(r"(\{.*?)[:\}]", filename): each "{" with the shortest run up
// to a ":" or "}" that holds no newline (the regex's "." takes none).
std::vector<std::string> TemplateGroups(const std::string& name) {
  std::vector<std::string> groups;
  for (size_t at = name.find('{'); at != std::string::npos;) {
    const size_t end = name.find_first_of(":}\n", at + 1);
    if (end == std::string::npos) break;
    if (name[end] == '\n') {
      at = name.find('{', at + 1);
      continue;
    }
    groups.push_back(name.substr(at, end - at));
    at = name.find('{', end + 1);
  }
  return groups;
}

}  // namespace

StatusOr<std::string> FormatCheckpointName(const std::string& filename,
                                           const Metrics& metrics,
                                           int64_t epoch, int64_t step,
                                           bool auto_insert_metric_name,
                                           int64_t version) {
  std::string name = filename.empty() ? "{epoch}-{step}" : filename;
  std::vector<std::string> groups = TemplateGroups(name);
  // Longest first, so "{epoch" does not replace inside "{epoch_test".
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  // Lightning's epoch and step are int tensors, its metrics float ones;
  // a tensor's format() is its item()'s.
  PythonMapping values;
  for (const auto& [key, value] : metrics) {
    values[key] = PythonNumber::Float(value);
  }
  values["epoch"] = PythonNumber::Int(epoch);
  values["step"] = PythonNumber::Int(step);
  for (const std::string& group : groups) {
    const std::string key = group.substr(1);
    if (auto_insert_metric_name) name = ReplaceAll(name, group, key + "={" + key);
    name = ReplaceAll(name, group, "{0[" + key + "]");
    values.emplace(key, PythonNumber::Int(0));  // torch.tensor(0)
  }
  StatusOr<std::string> out = FormatPythonTemplate(name, values);
  if (!out.ok())
    return out.status().WithPrefix("checkpoint filename '" + filename + "'");
  // A path is a C string: Python's open() refuses the name.
  if (out->find('\0') != std::string::npos) {
    return Status::InvalidArgument("checkpoint filename '" + filename +
                                   "': the name holds a NUL character "
                                   "(embedded null byte)");
  }
  if (version > 0) *out += "-v" + std::to_string(version);
  return *out + ".ckpt";
}

Status CheckCheckpointFilename(const std::string& filename,
                               bool auto_insert_metric_name) {
  // A name besides epoch and step is a logged metric (a float) or, until
  // one is logged, Lightning's torch.tensor(0) (an int): the template is
  // good when some such choice formats (all of them for up to 8 names).
  std::vector<std::string> names;
  for (const std::string& group : TemplateGroups(filename)) {
    const std::string key = group.substr(1);
    if (key != "epoch" && key != "step") names.push_back(key);
  }
  const size_t varied = std::min<size_t>(names.size(), 8);
  Status first;
  for (uint32_t ints = 0; ints < (1u << varied); ++ints) {
    Metrics metrics;
    for (size_t k = 0; k < names.size(); ++k) {
      if (k >= varied || (ints >> k & 1) == 0) metrics[names[k]] = 0.0;
    }
    StatusOr<std::string> name =
        FormatCheckpointName(filename, metrics, 0, 0, auto_insert_metric_name);
    if (name.ok()) return Status::Ok();
    if (ints == 0) first = name.status();
  }
  return first;
}

}  // namespace trialshim::trainer
