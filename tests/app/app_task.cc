// The task tests/app/app_test.cc runs through trialshim::app::Run: what
// tests/data/hydra_app/generate.py's Python app does under @hydra.main (log
// "hello" and "careful" through the logger "app", print the resolved
// config), plus ways to fail (fail: <message>, exit_code: N), to show
// its environment (print_env: NAME, print_cwd: true) and to stay running
// until a test lets it go (wait_for: FIFO, "waiting on FIFO" printed, then
// a line read from it); it returns the
// config's `objective` (for the Optuna sweeper's multiruns), as the Python
// app of tests/data/hydra_app/optuna_multirun.py returns cfg.objective.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "trialshim/app/app.h"
#include "trialshim/config/emit.h"

namespace {

int Task(const trialshim::app::Job& job) {
  job.log().Debug("details");
  job.log().Info("hello");
  job.log().Warning("careful");
  if (const auto* fail = job.cfg().Find("fail"); fail && fail->is_string()) {
    throw std::runtime_error(fail->AsString());
  }
  if (const auto* name = job.cfg().Find("print_env"); name && name->is_string()) {
    const char* value = std::getenv(name->AsString().c_str());
    std::cout << "env " << (value ? value : "<unset>") << "\n";
  }
  if (job.cfg().Find("print_cwd")) {
    std::cout << "cwd " << std::filesystem::current_path().string() << "\n";
  }
  std::cout << trialshim::config::ToYaml(job.cfg()) << std::flush;
  if (const auto* fifo = job.cfg().Find("wait_for"); fifo && fifo->is_string()) {
    std::cout << "waiting on " << fifo->AsString() << std::endl;
    std::ifstream in(fifo->AsString());
    std::string line;
    std::getline(in, line);
  }
  if (const auto* objective = job.cfg().Find("objective")) {
    job.set_return_value(*objective);
  }
  const auto* code = job.cfg().Find("exit_code");
  return code && code->is_int() ? static_cast<int>(code->AsInt()) : 0;
}

}  // namespace

// The schema of tests/data/hydra_app/trees/basic, given when
// APP_TASK_SCHEMA is set; tests/anchors/hydra_schema.py has it as a
// dataclass. `note` and `retries` are fields the YAML leaves out.
struct Basic {
  trialshim::config::Node db;
  std::string name;
  int64_t port = 0;
  std::string url;
  std::optional<std::string> note;
  int64_t retries = 3;
};

int main(int argc, char** argv) {
  trialshim::app::AppOptions options{"", "config", "app"};
  if (std::getenv("APP_TASK_SCHEMA") != nullptr) {
    trialshim::config::Schema<Basic> basic("Basic");
    basic.Field("db", &Basic::db, "the database");
    basic.Field("name", &Basic::name, "the app's name");
    basic.Field("port", &Basic::port, "its port").Range(1, 65535).Required();
    basic.Field("url", &Basic::url, "where it answers");
    basic.Field("note", &Basic::note, "a note, or null");
    basic.Field("retries", &Basic::retries, "how often it tries again");
    options.schema = trialshim::app::SchemaOf(basic);
  }
  return trialshim::app::Run(argc, argv, options, Task);
}
