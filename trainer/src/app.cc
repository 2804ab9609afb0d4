#include "trialshim/trainer/app.h"

#include "trialshim/base/number_format.h"
#include "trialshim/config/python_text.h"
#include "trialshim/trainer/scheduler.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <c10/util/Exception.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <string>

namespace trialshim::trainer {
namespace {

class AppSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppSink(app::Logger* log) : log_(log) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    app::Level level = app::Level::kInfo;
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        level = app::Level::kDebug;
        break;
      case spdlog::level::warn:
        level = app::Level::kWarning;
        break;
      case spdlog::level::err:
      case spdlog::level::critical:
        level = app::Level::kError;
        break;
      default:
        break;
    }
    log_->Log(level, std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  app::Logger* log_;
};

// The loggers of `key` ("trainer.logger": one logger node or a list of
// them; "logger": a map of named logger nodes, null ones skipped, as
// lightning-hydra-template's instantiate_loggers reads it).
StatusOr<std::vector<std::shared_ptr<Logger>>> MakeLoggers(
    const config::Node& cfg, const std::string& key,
    const config::Registry& registry) {
  std::vector<std::shared_ptr<Logger>> out;
  const config::Node* node = cfg.Find(key);
  if (node == nullptr || node->is_null()) return out;
  if (node->is_map() && node->Get("_target_") != nullptr) {
    TRIALSHIM_ASSIGN_OR_RETURN(auto logger,
                               registry.InstantiateAs<Logger>(cfg, key));
    out.push_back(logger);
    return out;
  }
  if (!node->is_map() && !node->is_list()) {
    return Status::InvalidArgument(
        (node->mark().known() ? node->mark().ToString() + ": " : "") + key +
        ": expected a logger node or a map of them, got " + node->type_name());
  }
  for (size_t i = 0; i < node->size(); ++i) {
    const bool map = node->is_map();
    const config::Node& item =
        map ? node->AsMap()[i].second : node->AsList()[i];
    if (item.is_null()) continue;
    const std::string at =
        key + "." + (map ? node->AsMap()[i].first : std::to_string(i));
    TRIALSHIM_ASSIGN_OR_RETURN(auto logger,
                               registry.InstantiateAs<Logger>(cfg, at));
    out.push_back(logger);
  }
  return out;
}

}  // namespace

std::shared_ptr<spdlog::logger> SpdlogFor(app::Logger* log) {
  auto logger =
      std::make_shared<spdlog::logger>("app", std::make_shared<AppSink>(log));
  logger->set_level(spdlog::level::trace);  // the app's Logger filters
  return logger;
}

const config::Schema<TrainConfig>& TrainConfigSchema() {
  static const auto* schema = [] {
    auto* s = new config::Schema<TrainConfig>("TrainConfig");
    using C = TrainConfig;
    s->Field("seed", &C::seed, "seeds the parameters (and what uses ${seed})");
    s->Field("data", &C::data, "the DataModule's _target_").Required();
    s->Field("model", &C::model, "the Module's _target_").Required();
    s->Field("optimizer", &C::optimizer, "a torch.optim partial");
    s->Field("scheduler", &C::scheduler, "a scheduler partial, or null");
    s->Field("trainer", &C::trainer, "the Trainer's options (options.h)");
    s->Field("callbacks", &C::callbacks, "name: callback _target_ or null");
    s->Field("logger", &C::logger, "name: logger _target_ or null");
    s->Field("hypertune", &C::hypertune, "what is reported to Vertex");
    s->Field("paths", &C::paths, "the template's paths (output_dir, ...)");
    s->Field("task_name", &C::task_name, "the template's run name");
    s->Field("tags", &C::tags, "the template's tags");
    s->Field("train", &C::train, "the template's switch for fit");
    s->Field("test", &C::test, "the template's switch for test");
    s->Field("ckpt_path", &C::ckpt_path, "interpolated into trainer.ckpt_path");
    s->Field("extras", &C::extras, "the template's utilities");
    s->Field("optimized_metric", &C::optimized_metric,
             "the template's hparams_search metric");
    return s;
  }();
  return *schema;
}

namespace {

// Lightning's _hydra_subprocess_cmd: the other ranks of trainer.devices
// run this job's overrides (not a multirun's whole command line) in its
// run directory, without writing .hydra/ again, each logging to a file
// named after its job name.
std::function<std::vector<std::string>(int64_t)> LaunchCommandOf(
    const app::Job& job) {
  std::vector<std::string> base = {"/proc/self/exe"};
  std::error_code error;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) base[0] = exe.string();
  if (!job.config_dir().empty()) {
    base.insert(base.end(), {"--config-path", job.config_dir()});
  }
  const config::Node* name = job.hydra().Find("job.config_name");
  if (name != nullptr && name->is_string()) {
    base.insert(base.end(), {"--config-name", name->AsString()});
  }
  base.insert(base.end(), job.overrides().begin(), job.overrides().end());
  base.push_back("hydra.run.dir=" + job.output_dir());
  base.push_back("hydra.output_subdir=null");
  return [base](int64_t local_rank) {
    std::vector<std::string> argv = base;
    argv.push_back("hydra.job.name=train_ddp_process_" +
                   std::to_string(local_rank));
    return argv;
  };
}

}  // namespace

StatusOr<std::unique_ptr<Trainer>> MakeTrainer(const app::Job& job,
                                               const config::Registry& registry) {
  const config::Node& cfg = job.cfg();
  const config::Node none;
  const config::Node* trainer = cfg.Get("trainer");
  TRIALSHIM_ASSIGN_OR_RETURN(
      TrainerOptions options,
      TrainerOptions::FromConfig(trainer ? *trainer : none, cfg.Get("hypertune")));
  if (options.default_root_dir().empty()) options.default_root_dir(job.output_dir());
  options.launch_command(LaunchCommandOf(job));
  options.console(SpdlogFor(&job.log()));
  // The job's settings define the run: a checkpoint of other settings in
  // the checkpoint directory is another run's, never resumed.
  options.run_config(cfg);
  // A top-level `logger:` map wins over trainer.logger, as the template's
  // Trainer(logger=...) keyword does.
  const bool top =
      cfg.Get("logger") != nullptr && !cfg.Get("logger")->is_null();
  if (top || !options.logger().config.is_null()) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        std::vector<std::shared_ptr<Logger>> loggers,
        MakeLoggers(cfg, top ? "logger" : "trainer.logger", registry));
    LoggerOption option(!loggers.empty());
    option.loggers = std::move(loggers);
    options.logger(option);
  }
  auto made = std::make_unique<Trainer>(options);
  // The top-level `callbacks:` map (lightning-hydra-template's), then
  // Lightning's Trainer(callbacks=[...]) as trainer.callbacks (list or map).
  for (const std::string key : {"callbacks", "trainer.callbacks"}) {
    const config::Node* callbacks = cfg.Find(key);
    if (callbacks == nullptr || !(callbacks->is_map() || callbacks->is_list()))
      continue;
    for (size_t i = 0; i < callbacks->size(); ++i) {
      const bool is_map = callbacks->is_map();
      const config::Node& node =
          is_map ? callbacks->AsMap()[i].second : callbacks->AsList()[i];
      if (node.is_null()) continue;
      const std::string name =
          is_map ? callbacks->AsMap()[i].first : std::to_string(i);
      TRIALSHIM_ASSIGN_OR_RETURN(
          auto callback, registry.InstantiateAs<Callback>(cfg, key + "." + name));
      made->add_callback(callback);
    }
  }
  return made;
}

StatusOr<OptimizerPartials> OptimizerPartials::FromConfig(
    const config::Node& cfg, const config::Registry& registry) {
  OptimizerPartials out;
  TRIALSHIM_ASSIGN_OR_RETURN(
      auto optimizer, registry.InstantiateAs<config::Partial>(cfg, "optimizer"));
  out.optimizer = *optimizer;
  const config::Node* scheduler = cfg.Get("scheduler");
  if (scheduler && !scheduler->is_null()) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        auto made, registry.InstantiateAs<config::Partial>(cfg, "scheduler"));
    out.scheduler = *made;
  }
  return out;
}

StatusOr<OptimizerConfig> OptimizerPartials::Configure(const Module& module) const {
  OptimizerConfig out;
  TRIALSHIM_ASSIGN_OR_RETURN(out.optimizer,
                             optimizer.CallAs<torch::optim::Optimizer>(
                                 {{"params", config::Value::Of(module.parameters())}}));
  if (!scheduler) return out;
  const Trainer* trainer = module.trainer();
  TRIALSHIM_ASSIGN_OR_RETURN(
      auto made,
      scheduler->CallAs<SchedulerConfig>(
          {{"optimizer", out.optimizer},
           {"total_epochs",
            config::Node::Int(trainer ? trainer->options().max_epochs().value_or(-1) : -1)},
           {"total_steps",
            config::Node::Int(trainer ? trainer->estimated_stepping_batches() : -1)}}));
  out.scheduler = *made;
  return out;
}

namespace {

// lightning-hydra-template's get_metric_value for one name.
StatusOr<double> MetricValue(const app::Job& job, const Trainer& trainer,
                             const std::string& metric) {
  auto it = trainer.callback_metrics().find(metric);
  if (it == trainer.callback_metrics().end()) {
    return Status::InvalidArgument(
        "Metric value not found! <metric_name=" + metric +
        ">\nMake sure metric name logged in LightningModule is correct!\n"
        "Make sure `optimized_metric` name in `hparams_search` config is "
        "correct!");
  }
  job.log().Info("Retrieved metric value! <" + metric + "=" +
                 FormatPythonFloat(it->second) + ">");
  return it->second;
}

}  // namespace

Status ReturnOptimizedMetric(const app::Job& job, const Trainer& trainer) {
  const config::Node* name = job.cfg().Get("optimized_metric");
  if (name == nullptr || name->is_null() ||
      (name->is_string() && name->AsString().empty())) {
    return Status::Ok();
  }
  if (!name->is_list()) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        double value, MetricValue(job, trainer, config::PythonStr(*name)));
    job.set_return_value(config::Node::Double(value));
    return Status::Ok();
  }
  // Several objectives (hydra.sweeper.direction a list): the Optuna
  // sweeper takes a list of values in the order of the directions. The
  // template's get_metric_value takes one name and fails on a list (it
  // looks the ListConfig up as a key); here each name is looked up in turn.
  config::Node::List values;
  for (const config::Node& item : name->AsList()) {
    TRIALSHIM_ASSIGN_OR_RETURN(
        double value, MetricValue(job, trainer, config::PythonStr(item)));
    values.push_back(config::Node::Double(value));
  }
  job.set_return_value(config::Node::MakeList(std::move(values)));
  return Status::Ok();
}

int ExitCodeOf(const app::Job& job, const std::function<Status()>& fit) {
  Status st;
  try {
    st = fit();
  } catch (const c10::Error& e) {
    st = Status::Internal(e.what_without_backtrace());
  }
  if (st.code() == StatusCode::kCancelled) {
    job.log().Warning(st.message());
    return 128 + StopSignal();  // as a process the signal killed
  }
  // As Hydra reports the exception a Lightning fit raises: on stderr,
  // whatever the logging config (hydra/job_logging=disabled too).
  if (!st.ok()) job.Fail(st.message());
  return ExitCodeFor(st);
}

}  // namespace trialshim::trainer
