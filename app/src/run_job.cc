#include "run_job.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "help.h"
#include "run_dir.h"
#include "trialshim/base/python_text.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/python_text.h"

namespace trialshim::app::internal {
namespace {

namespace fs = std::filesystem;

// What run_job reads of Hydra's node, each key resolved on its own as
// Python reads it lazily, and where Python reads it: the logging configs and
// verbose from the whole config (a log file name may name ${task_name}, as
// lightning-hydra-template's does), chdir and env_set from HydraConfig's copy
// of the node alone. run.dir and sweep.dir may name task keys too, which that
// copy could not resolve (JobDir reads them).
struct JobHydra {
  config::Node chdir, env_set, hydra_logging, job_logging, verbose, job_name;
};

StatusOr<JobHydra> ReadJobHydra(const config::ComposeResult& composed,
                                NowCache* now) {
  using config::HydraScope;
  JobHydra out;
  const std::tuple<const char*, HydraScope, config::Node*> keys[] = {
      {"job.chdir", HydraScope::kHydraOnly, &out.chdir},
      {"job.env_set", HydraScope::kHydraOnly, &out.env_set},
      {"job.name", HydraScope::kHydraOnly, &out.job_name},
      {"hydra_logging", HydraScope::kWholeConfig, &out.hydra_logging},
      {"job_logging", HydraScope::kWholeConfig, &out.job_logging},
      {"verbose", HydraScope::kWholeConfig, &out.verbose}};
  for (const auto& [key, scope, node] : keys) {
    // hydra.job.num and the like stay "???" in a run.
    TRIALSHIM_ASSIGN_OR_RETURN(
        *node, config::ResolveHydra(composed, key, true, scope, now));
  }
  return out;
}

// hydra.job.env_set and hydra.job.chdir for the task's time, as Hydra's
// env_override and run_job's finally undo them.
class JobEnvironment {
 public:
  JobEnvironment() = default;
  JobEnvironment(const JobEnvironment&) = delete;
  JobEnvironment& operator=(const JobEnvironment&) = delete;
  ~JobEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    if (!old_cwd_.empty() && ::chdir(old_cwd_.c_str()) != 0) {
      // The directory the app started in is gone; nothing else to do.
    }
  }

  Status Enter(const JobHydra& hydra, const std::string& output_dir) {
    if (hydra.chdir.is_bool() && hydra.chdir.AsBool()) {
      std::error_code ec;
      old_cwd_ = fs::current_path(ec).string();
      if (::chdir(output_dir.c_str()) != 0) {
        return Status::IOError("cannot change directory to " + output_dir);
      }
    }
    for (const auto& [key, value] : hydra.env_set.AsMap()) {
      const char* old = std::getenv(key.c_str());
      saved_.emplace_back(key, old ? std::optional<std::string>(old)
                                   : std::nullopt);
      setenv(key.c_str(), value.AsString().c_str(), 1);
    }
    return Status::Ok();
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
  std::string old_cwd_;
};

}  // namespace

std::string PythonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", " : "") + PythonStringRepr(items[i]);
  }
  return out + "]";
}

StatusOr<config::ComposeResult> ComposeJob(config::ComposeRequest request) {
  TRIALSHIM_ASSIGN_OR_RETURN(config::ComposeResult composed,
                             config::Compose(request));
  std::vector<std::string> notes;
  const config::Node* choices = composed.hydra.Find("runtime.choices");
  for (const std::string group : {"hydra/hydra_logging", "hydra/job_logging"}) {
    const config::Node* choice = choices ? choices->Get(group) : nullptr;
    if (choice && choice->is_string() && choice->AsString() == "colorlog") {
      request.overrides.push_back(group + "=default");
      notes.push_back(group + "=colorlog is the Python hydra-colorlog plugin; "
                      "logging as " + group + "=default does");
    }
  }
  if (notes.empty()) return composed;
  TRIALSHIM_ASSIGN_OR_RETURN(composed, config::Compose(request));
  composed.warnings.insert(composed.warnings.end(), notes.begin(), notes.end());
  return composed;
}

StatusOr<std::string> JobDir(const config::ComposeResult& composed,
                             const std::string& key,
                             const std::string& subdir_key, NowCache* now) {
  using config::HydraScope;
  TRIALSHIM_ASSIGN_OR_RETURN(
      config::Node dir,
      config::ResolveHydra(composed, key, false, HydraScope::kWholeConfig,
                           now));
  if (!dir.is_string() || dir.AsString().empty()) {
    return Status::InvalidArgument("hydra." + key + " must be a path");
  }
  fs::path path = dir.AsString();
  if (!subdir_key.empty()) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        config::Node sub,
        config::ResolveHydra(composed, subdir_key, false,
                             HydraScope::kWholeConfig, now));
    path /= config::PythonStr(sub);  // str(): ${hydra.job.num} is an int
  }
  std::error_code ec;
  return fs::absolute(path, ec).lexically_normal().string();
}

Status LogHydraDebug(const config::ComposeResult& composed, NowCache* now) {
  const char* const kHydraLogger = "hydra._internal.hydra";
  TRIALSHIM_ASSIGN_OR_RETURN(JobHydra hydra, ReadJobHydra(composed, now));
  if (!IsVerbose(hydra.verbose, kHydraLogger)) return Status::Ok();
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::unique_ptr<Logger> log,
      Logger::FromConfig(hydra.hydra_logging, config::Node(),
                         config::Node::Bool(true), kHydraLogger));
  for (const std::string& m : AllInfo(composed)) log->Debug(m);
  return Status::Ok();
}

StatusOr<int> RunJob(config::ComposeResult composed,
                     const std::string& output_dir, NowCache* now,
                     const Task& task, config::Node* return_value) {
  composed.hydra.FindMutable("runtime")->Set("output_dir",
                                             config::Node::String(output_dir));
  config::ResolveOptions under_hydra;
  under_hydra.hydra = &composed.hydra;
  under_hydra.now = now;
  TRIALSHIM_ASSIGN_OR_RETURN(config::Node cfg,
                             config::ResolveAll(composed.config, under_hydra));
  TRIALSHIM_ASSIGN_OR_RETURN(JobHydra hydra, ReadJobHydra(composed, now));
  const config::Node* subdir = composed.hydra.Get("output_subdir");
  std::vector<std::string> task_overrides;
  for (const config::Node& o : composed.hydra.Find("overrides.task")->AsList()) {
    task_overrides.push_back(o.AsString());
  }
  TRIALSHIM_RETURN_IF_ERROR(CreateRunDir(
      output_dir,
      subdir && subdir->is_string() ? std::optional(subdir->AsString())
                                    : std::nullopt,
      composed.config, composed.hydra, task_overrides));
  JobEnvironment environment;
  TRIALSHIM_RETURN_IF_ERROR(environment.Enter(hydra, output_dir));
  TRIALSHIM_ASSIGN_OR_RETURN(
      std::unique_ptr<Logger> log,
      Logger::FromConfig(hydra.hydra_logging, hydra.job_logging, hydra.verbose,
                         hydra.job_name.AsString()));
  for (const std::string& w : composed.warnings) log->Warning(w);
  Job job(std::move(cfg), composed.hydra, output_dir, task_overrides,
          log.get());
  try {
    int code = task(job);
    if (return_value) *return_value = job.return_value();
    return code;
  } catch (const std::exception& e) {
    job.Fail(e.what());
    return 1;
  }
}

}  // namespace trialshim::app::internal

namespace trialshim::app {

// Hydra's JobReturn.return_value writes this to stderr, not to a log, then
// run_and_report prints the traceback; `what` stands for it.
void Job::Fail(std::string_view what) const {
  std::cout.flush();
  std::cerr << "Error executing job with overrides: "
            << internal::PythonList(overrides_) << "\n"
            << what << "\n"
            << std::flush;
}

}  // namespace trialshim::app
