// What the checks of `trialshim check` share (private to the tuning
// library): CheckerBase, which collects diagnostics and finds the spec's
// paths here, and the three passes check.cc runs in order, one concept each:
// the spec's own rules (check_spec.cc, its parameters' in
// check_parameters.cc), the container command as trialshim would run it
// (check_container.cc) and the parameters against the composed config
// (check_config.cc).
#ifndef TRIALSHIM_TUNING_SRC_CHECK_INTERNAL_H_
#define TRIALSHIM_TUNING_SRC_CHECK_INTERNAL_H_

#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/search/search.h"
#include "trialshim/translate/translate.h"
#include "trialshim/tuning/check.h"
#include "trialshim/tuning/container.h"
#include "trialshim/tuning/job_spec.h"

namespace trialshim::tuning::internal {

class CheckerBase {
 public:
  CheckerBase(const JobSpec& job, const CheckOptions& options,
              std::vector<Diagnostic>* diags)
      : job_(job),
        options_(options),
        diags_(diags),
        container_(options.workdir, options.volumes),
        near_(std::filesystem::path(job.file).parent_path().string()) {}

 protected:
  using Mark = config::Mark;

  void Error(const Mark& m, std::string msg) {
    diags_->push_back({Diagnostic::Severity::kError, Pick(m), std::move(msg)});
  }
  void Warning(const Mark& m, std::string msg) {
    diags_->push_back(
        {Diagnostic::Severity::kWarning, Pick(m), std::move(msg)});
  }
  void Note(const Mark& m, std::string msg) {
    diags_->push_back({Diagnostic::Severity::kNote, Pick(m), std::move(msg)});
  }
  // What a local run can not find: it fails every trial there (an error
  // for the sweep), while on Vertex the image may have it (a warning).
  void Missing(const Mark& m, std::string msg) {
    if (options_.local_run) {
      Error(m, std::move(msg));
    } else {
      Warning(m, std::move(msg) +
                     " (a local `trialshim sweep` refuses this; the image "
                     "may have it)");
    }
  }
  // Falls back to the document's mark so every line names the file.
  Mark Pick(const Mark& m) const { return m.known() ? m : job_.mark; }

  // `path` as the trial names it, on this machine (container.h), when it
  // exists there as a directory (or file); else "".
  std::string FindPath(const std::string& path, bool dir) const {
    std::string host = container_.HostPath(path);
    std::error_code ec;
    bool ok = dir ? std::filesystem::is_directory(host, ec)
                  : std::filesystem::is_regular_file(host, ec);
    return ok ? host : "";
  }

  // " : FLAG finds it" for a path the trial needs that is not here.
  std::string Fix(const std::string& path) const {
    std::string fix = container_.SuggestFix(path, near_);
    return fix.empty() ? "" : ": " + fix + " finds it";
  }

  // metric_id and parameter_id "must not contain whitespaces" (study.proto).
  // A parameterId also becomes the trial's --<id>=<value> argument.
  void CheckId(const std::string& id, const Mark& m, const char* what) {
    if (id.empty()) {
      Error(m, std::string(what) + " is empty");
      return;
    }
    for (char c : id) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        Error(m, std::string(what) + " '" + id +
                     "' contains whitespace, which Vertex forbids");
        return;
      }
    }
  }

  // Sample values of `p` as Vertex would pass them.
  static std::vector<std::string> Samples(const ParameterSpec& p) {
    std::vector<std::string> out;
    ParameterValue v{p.id, p.type, 0, ""};
    switch (p.type) {
      case ParameterType::kDouble:
      case ParameterType::kInteger:
        for (double x : {p.min_value, p.max_value}) {
          v.number = x;
          out.push_back(v.Format());
        }
        break;
      case ParameterType::kDiscrete:
        for (double x : p.discrete_values) {
          v.number = x;
          out.push_back(v.Format());
        }
        break;
      case ParameterType::kCategorical:
        out = p.categorical_values;
        break;
    }
    return out;
  }

  const JobSpec& job_;
  const CheckOptions& options_;
  std::vector<Diagnostic>* diags_;
  Container container_;  // where the spec's paths are here
  std::string near_;     // the job file's directory, for Container::SuggestFix
};

// What the container runs, split the way trialshim would see it.
struct Launch {
  bool through_trialshim = false;
  // trialshim itself has the config, so it casts Vertex's 128.0 to 128
  // for int keys.
  bool shim_has_config = false;
  std::string config_path, config_name;
  config::Mark config_mark;
  translate::TranslateOptions translate;
  std::string map_file;
  std::string metric_tag;
  bool scrapes = false;
  std::vector<std::string> overrides;  // the trainer's Hydra overrides
  size_t program = 0;  // the trainer's index in the command + args
  std::string program_file;  // where it is here; "" when it is not
  std::string program_name;  // as the command names it
  config::Mark program_mark;
  // The trainer's own arguments name its config (-cp, -cn or -cd), and it
  // runs -m (--multirun).
  bool trainer_names_config = false;
  bool trainer_multirun = false;
  // It runs Python: a @hydra.main, whose config check can not see.
  bool runs_python = false;
};

// The spec's own rules: counts, metrics, parameters, algorithm, outputs.
void CheckSpecRules(const JobSpec& job, const CheckOptions& options,
                    std::vector<Diagnostic>* diagnostics);

// The study's parameters (ids, value specs, conditions) and how the
// algorithm searches them; part of CheckSpecRules.
void CheckParameterRules(const JobSpec& job, const CheckOptions& options,
                         std::vector<Diagnostic>* diagnostics);

// The container command: what it runs, trialshim's options in it, the
// trainer's arguments as Hydra reads them. The launch it reads, or nullopt
// when there is no command to read.
std::optional<Launch> CheckContainer(const JobSpec& job,
                                     const CheckOptions& options,
                                     std::vector<Diagnostic>* diagnostics);

// Every parameterId against the config the launch names (or CheckOptions'),
// and the metric the trainer reports against the metricId.
void CheckAgainstConfig(const JobSpec& job, const CheckOptions& options,
                        const Launch& launch,
                        std::vector<Diagnostic>* diagnostics);

}  // namespace trialshim::tuning::internal

#endif  // TRIALSHIM_TUNING_SRC_CHECK_INTERNAL_H_
