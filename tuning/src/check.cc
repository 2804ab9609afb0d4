// The rules of `trialshim check`; see check.h for the list.
#include "trialshim/tuning/check.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "check_internal.h"
#include "trialshim/tuning/job_spec.h"

namespace trialshim::tuning {
namespace {

// YAML errors arrive as "file:line:col: message"; keep the location.
Diagnostic FromLoadError(const std::string& path, const Status& status) {
  Diagnostic d{Diagnostic::Severity::kError, {}, status.message()};
  const std::string& msg = status.message();
  if (msg.rfind(path + ":", 0) == 0) {
    int line = 0, col = 0;
    size_t used = 0;
    std::string rest = msg.substr(path.size() + 1);
    if (std::sscanf(rest.c_str(), "%d:%d: %zn", &line, &col, &used) >= 2 &&
        used > 0) {
      d.mark.file = std::make_shared<const std::string>(path);
      d.mark.line = line;
      d.mark.column = col;
      d.message = rest.substr(used);
    }
  }
  return d;
}

}  // namespace

void CheckJobSpec(const JobSpec& job, const CheckOptions& options,
                  std::vector<Diagnostic>* diagnostics) {
  internal::CheckSpecRules(job, options, diagnostics);
  std::optional<internal::Launch> launch =
      internal::CheckContainer(job, options, diagnostics);
  if (launch) internal::CheckAgainstConfig(job, options, *launch, diagnostics);
}

StatusOr<std::vector<Diagnostic>> CheckJobFile(const std::string& path,
                                               const CheckOptions& options) {
  std::vector<Diagnostic> diags;
  StatusOr<JobSpec> job = LoadJobSpecFile(path, &diags);
  if (!job.ok()) {
    if (job.status().code() != StatusCode::kInvalidArgument) {
      return job.status();
    }
    diags.push_back(FromLoadError(path, job.status()));
    return diags;
  }
  CheckJobSpec(*job, options, &diags);
  std::stable_sort(diags.begin(), diags.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.mark.line, a.mark.column) <
                            std::tie(b.mark.line, b.mark.column);
                   });
  return diags;
}

}  // namespace trialshim::tuning
