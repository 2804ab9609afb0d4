// The app entry: what @hydra.main gives a Python function, for a C++ one.
//
//   int Train(const trialshim::app::Job& job) {
//     job.log().Info("lr=" + std::to_string(job.cfg().Find("lr")->AsDouble()));
//     return 0;  // the process's exit code
//   }
//   int main(int argc, char** argv) {
//     return trialshim::app::Run(argc, argv, {"conf", "config"}, Train);
//   }
//
// Run() gives the program Hydra 1.3.2's app contract:
//  - Hydra's flags: -cp/-cn/-cd, --cfg job|hydra|all, --resolve, --package,
//    --info [all|config|searchpath], --help (the config groups and the
//    config, from hydra.help), --hydra-help, --version, -m/--multirun
//    (Hydra's basic sweeper and launcher, multirun.h in src/; also when a
//    config sets hydra.mode: MULTIRUN); with a schema, --cfg
//    schema|schema-json.
//  - A multirun whose config says hydra/sweeper: optuna (a template's
//    hparams_search) runs hydra-optuna-sweeper 1.2.0's study with
//    trialshim's search engine choosing the values (Bayesian for TPE,
//    random, grid; tuning/optuna_study.h): each job's objective is the
//    value its task gives Job::set_return_value, and
//    <hydra.sweep.dir>/optimization_results.yaml is written as the plugin
//    writes it (docs/hydra-sweep-to-vertex.md says what differs).
//  - The config composed as Hydra composes it, hydra.* overrides included
//    (hydra.run.dir, output_subdir, job.chdir, job.name, verbose,
//    job.env_set, searchpath), and Vertex's arguments (--lr=0.01) translated
//    in-process against the composed config, as `trialshim run` does.
//  - The run directory (hydra.run.dir) with .hydra/config.yaml,
//    overrides.yaml and hydra.yaml as Hydra writes them; hydra.job.env_set
//    exported; the working directory changed with hydra.job.chdir.
//  - ${hydra:...} resolvable in the config; the task gets it resolved.
//  - Logging in Hydra's layout, from hydra.job_logging (console and
//    <output_dir>/<job name>.log by default).
//  - Exit codes: 2 for a usage or config error, 1 for a runtime failure
//    (the task throwing included), else the task's own. SIGTERM, SIGINT and
//    SIGHUP keep their default dispositions until the task runs; the
//    trainer installs its own handlers during fit (checkpoint, then exit
//    128+N), other code may poll StopRequested() after InstallStopHandlers().
#ifndef TRIALSHIM_APP_APP_H_
#define TRIALSHIM_APP_APP_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trialshim/app/logging.h"
#include "trialshim/config/override.h"
#include "trialshim/config/schema.h"
#include "trialshim/config/node.h"

namespace trialshim::app {

// The task config's schema (config::Schema<T>, see SchemaOf): overrides are
// checked against it before composition (struct mode, OmegaConf's
// conversions; a key it lacks is refused even with '+', since the task binds
// the whole config to it), `--cfg schema` prints it with its docs and `--cfg
// schema-json` as a JSON Schema for editors (a YAML file that starts with
// `# yaml-language-server: $schema=<that file>` gets completion and checks).
class SchemaView {
 public:
  virtual ~SchemaView() = default;
  virtual std::string Yaml() const = 0;
  virtual std::string JsonSchema() const = 0;
  virtual Status CheckOverride(const config::Override& o) const = 0;
  // The defaults (OmegaConf.structured(T)): composition's
  // ComposeRequest::declared, so a field the YAML leaves out takes `key=v`.
  virtual config::Node Defaults() const { return config::Node(); }
};

template <typename T>
std::shared_ptr<const SchemaView> SchemaOf(config::Schema<T> schema) {
  struct View : SchemaView {
    explicit View(config::Schema<T> s) : s(std::move(s)) {}
    std::string Yaml() const override { return s.Yaml(); }
    std::string JsonSchema() const override { return s.JsonSchema().dump(2); }
    Status CheckOverride(const config::Override& o) const override {
      return s.CheckOverride(o, /*closed=*/true);
    }
    config::Node Defaults() const override { return s.ToNode(); }
    config::Schema<T> s;
  };
  return std::make_shared<View>(std::move(schema));
}

struct AppOptions {
  // Where the configs are, as @hydra.main's config_path: absolute, or
  // relative to the directory of the source file that calls Run(), else to
  // the executable's directory (an installed app keeps its configs beside
  // it). -cp/--config-path and -cd/--config-dir override it.
  std::string config_path;
  // The primary config, as @hydra.main's config_name; -cn overrides it.
  std::string config_name;
  // hydra.job.name; "" takes the executable's file name, as Hydra takes the
  // app file's.
  std::string job_name;
  // Optional: the task config's schema (see SchemaView).
  std::shared_ptr<const SchemaView> schema = nullptr;
  // Optional: a line --version prints after Hydra's, such as the LibTorch,
  // CUDA and devices a trainer was built with (trainer/accelerator.h).
  std::function<std::string()> version = nullptr;
};

// What the task gets: the run's config and where to put its files.
class Job {
 public:
  Job(config::Node cfg, config::Node hydra, std::string output_dir,
      std::vector<std::string> overrides, Logger* log)
      : cfg_(std::move(cfg)),
        hydra_(std::move(hydra)),
        output_dir_(std::move(output_dir)),
        overrides_(std::move(overrides)),
        log_(log) {}

  // The task config with every interpolation resolved (${hydra:...} too).
  const config::Node& cfg() const { return cfg_; }
  // Hydra's node as written to .hydra/hydra.yaml (unresolved).
  const config::Node& hydra() const { return hydra_; }
  // hydra.runtime.output_dir: the run directory, absolute.
  const std::string& output_dir() const { return output_dir_; }
  // The app's config directory (the main source of the search path).
  std::string config_dir() const {
    const config::Node* path = hydra_.Find("runtime.config_sources.1.path");
    return path && path->is_string() ? path->AsString() : "";
  }
  // The task overrides, after translation (.hydra/overrides.yaml).
  const std::vector<std::string>& overrides() const { return overrides_; }
  Logger& log() const { return *log_; }
  // Reports the task's failure as Hydra reports a task's exception: "Error
  // executing job with overrides: [...]" and `what` on stderr (Hydra's
  // JobReturn.return_value), whatever the logging config. A task that
  // returns a failing exit code says why here.
  void Fail(std::string_view what) const;

  // What the task returns, as a Python task function returns a value
  // (Hydra's JobReturn.return_value) besides the exit code main gets. A
  // multirun with hydra/sweeper: optuna takes it as the trial's objective:
  // a number (or what Python's float() reads), or a list of numbers, one
  // per hydra.sweeper.direction; other multiruns and runs ignore it.
  // trainer/app.h's ReturnOptimizedMetric sets it as
  // lightning-hydra-template's train.py returns its metric. Default: null.
  void set_return_value(config::Node value) const {
    return_value_ = std::move(value);
  }
  const config::Node& return_value() const { return return_value_; }

 private:
  config::Node cfg_;
  config::Node hydra_;
  std::string output_dir_;
  std::vector<std::string> overrides_;
  Logger* log_;
  // Set by the task through the const Job it is given.
  mutable config::Node return_value_;
};

using Task = std::function<int(const Job&)>;

// Runs `task` as a Hydra app would run it; returns the exit code for main.
// `caller` is the calling source file (for AppOptions::config_path).
int Run(int argc, char** argv, const AppOptions& options, const Task& task,
        const char* caller = __builtin_FILE());

// Makes SIGTERM, SIGINT and SIGHUP set a flag instead of ending the
// process, for a task that stops on its own when asked.
void InstallStopHandlers();
// The signal that asked the task to stop, or 0.
int StopRequested();

}  // namespace trialshim::app

#endif  // TRIALSHIM_APP_APP_H_
