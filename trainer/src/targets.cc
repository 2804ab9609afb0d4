#include "trialshim/trainer/targets.h"

#include <torch/optim.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "trialshim/trainer/callbacks.h"
#include "trialshim/trainer/loggers.h"
#include "trialshim/trainer/optim.h"
#include "trialshim/trainer/scheduler.h"

namespace trialshim::trainer {
namespace {

using config::Arguments;
using config::Node;

// A keyword of the Python class this trainer does not implement: accepted
// at `value` (Python's default, shown as `text`) or null.
struct Fixed {
  const char* name;
  Node value;
  const char* text;
};

Status CheckFixed(const Arguments& a, const std::string& cls,
                  const std::vector<Fixed>& fixed) {
  for (const Fixed& f : fixed) {
    const config::Value* v = a.Find(f.name);
    if (v == nullptr) continue;
    if (v->kind() == config::Value::Kind::kNode &&
        (v->node().is_null() || v->node() == f.value ||
         (f.value.is_number() && v->node().is_number() &&
          v->node().AsDouble() == f.value.AsDouble()))) {
      continue;
    }
    const config::Mark& m =
        v->kind() == config::Value::Kind::kNode ? v->node().mark() : a.mark;
    return Status::InvalidArgument(
        (m.known() ? m.ToString() + ": " : "") + a.KeyOf(f.name) + ": " + cls +
        "'s '" + f.name + "' is not supported by this trainer; only " +
        "its default (" + f.text + ") or null is accepted");
  }
  return Status::Ok();
}

std::vector<std::string> Names(std::vector<std::string> supported,
                               const std::vector<Fixed>& fixed) {
  for (const Fixed& f : fixed) supported.push_back(f.name);
  return supported;
}

std::vector<std::string> NamesOf(const std::vector<Fixed>& fixed) {
  return Names({}, fixed);
}

// ---- optimizers -----------------------------------------------------------

struct OptimizerTarget {
  const char* cls;                  // "Adam"
  const char* module;               // "adam" (torch.optim.adam.Adam)
  const char* name;                 // MakeOptimizer's name
  double default_lr;                // 0: none (lr required)
  std::vector<std::string> params;  // in PyTorch's positional order
  std::vector<Fixed> fixed;
};

std::vector<OptimizerTarget> Optimizers() {
  const Node f = Node::Bool(false), none;
  const std::vector<Fixed> common = {{"foreach", none, "None"},
                                     {"maximize", f, "False"},
                                     {"differentiable", f, "False"}};
  std::vector<Fixed> adam = common;
  adam.push_back({"capturable", f, "False"});
  adam.push_back({"fused", none, "None"});
  return {
      {"SGD",
       "sgd",
       "sgd",
       0,
       {"params", "lr", "momentum", "dampening", "weight_decay", "nesterov"},
       common},
      {"Adam",
       "adam",
       "adam",
       1e-3,
       {"params", "lr", "betas", "eps", "weight_decay", "amsgrad"},
       adam},
      {"AdamW",
       "adamw",
       "adamw",
       1e-3,
       {"params", "lr", "betas", "eps", "weight_decay", "amsgrad"},
       adam},
      {"RMSprop",
       "rmsprop",
       "rmsprop",
       1e-2,
       {"params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered"},
       common},
      {"Adagrad",
       "adagrad",
       "adagrad",
       1e-2,
       {"params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value",
        "eps"},
       common},
  };
}

Status RegisterOptimizer(config::Registry* r, const OptimizerTarget& t) {
  const std::string python = std::string("torch.optim.") + t.cls;
  auto factory = [t, python](const Arguments& a)
      -> StatusOr<std::shared_ptr<torch::optim::Optimizer>> {
    TRIALSHIM_RETURN_IF_ERROR(CheckFixed(a, python, t.fixed));
    TRIALSHIM_ASSIGN_OR_RETURN(auto params,
                               a.Get<std::vector<torch::Tensor>>("params"));
    std::vector<std::string> skip = NamesOf(t.fixed);
    skip.push_back("params");
    TRIALSHIM_ASSIGN_OR_RETURN(Node node, a.NodeMap(skip));
    node.Set("name", Node::String(t.name));
    const Node* lr = node.Get("lr");
    if ((lr == nullptr || lr->is_null()) && t.default_lr > 0) {
      node.Set("lr", Node::Double(t.default_lr));
    }
    return MakeOptimizer(node, *params, a.key.empty() ? "optimizer" : a.key);
  };
  return r->Register<torch::optim::Optimizer>(
      std::string("torch::optim::") + t.cls, factory,
      {"PyTorch's " + python + " (LibTorch's)",
       Names(t.params, t.fixed),
       {python, "torch.optim." + std::string(t.module) + "." + t.cls}});
}

// ---- schedulers -----------------------------------------------------------

// Keeps the optimizer alive as long as the scheduler that writes into it.
std::shared_ptr<LrScheduler> Owning(
    std::shared_ptr<torch::optim::Optimizer> optimizer,
    std::shared_ptr<LrScheduler> scheduler) {
  struct Both {
    std::shared_ptr<torch::optim::Optimizer> optimizer;
    std::shared_ptr<LrScheduler> scheduler;
  };
  auto both = std::make_shared<Both>(Both{std::move(optimizer), scheduler});
  return std::shared_ptr<LrScheduler>(both, scheduler.get());
}

struct SchedulerTarget {
  const char* cls;     // PyTorch's class
  const char* native;  // trialshim::trainer::<native>
  const char* name;    // MakeScheduler's name
  // PyTorch's keyword -> MakeScheduler's key ("T_max" -> "total").
  std::vector<std::pair<std::string, std::string>> keys;
  std::vector<Fixed> fixed;
  // PyTorch's keywords in its positional order, where the fixed ones sit
  // among the keys (empty: optimizer, the keys, then the fixed).
  std::vector<std::string> order = {};
};

std::vector<SchedulerTarget> Schedulers() {
  const Node f = Node::Bool(false);
  const std::vector<Fixed> common = {{"last_epoch", Node::Int(-1), "-1"},
                                     {"verbose", f, "False"}};
  std::vector<Fixed> plateau = {
      {"threshold_mode", Node::String("rel"), "'rel'"},
      {"eps", Node::Double(1e-8), "1e-08"},
      {"verbose", f, "False"}};
  return {
      {"StepLR",
       "StepLr",
       "step",
       {{"step_size", "step_size"}, {"gamma", "gamma"}},
       common},
      {"ExponentialLR",
       "ExponentialLr",
       "exponential",
       {{"gamma", "gamma"}},
       common},
      {"CosineAnnealingLR",
       "CosineWarmupLr",
       "cosine",
       {{"T_max", "total"}, {"eta_min", "eta_min"}},
       common},
      {"ReduceLROnPlateau",
       "ReduceLrOnPlateau",
       "plateau",
       {{"mode", "mode"},
        {"factor", "factor"},
        {"patience", "patience"},
        {"threshold", "threshold"},
        {"cooldown", "cooldown"},
        {"min_lr", "min_lr"}},
       plateau,
       {"optimizer", "mode", "factor", "patience", "threshold",
        "threshold_mode", "cooldown", "min_lr", "eps", "verbose"}},
  };
}

// CosineAnnealingLR's absolute eta_min as our factor of the base lr.
Status EtaMinToFactor(const Arguments& a, torch::optim::Optimizer& optimizer,
                      Node* node) {
  const Node* eta = node->Get("eta_min");
  if (eta == nullptr) return Status::Ok();
  double eta_min = 0;
  TRIALSHIM_RETURN_IF_ERROR(a.Double("eta_min", &eta_min));
  node->Erase("eta_min");
  if (eta_min == 0) return Status::Ok();
  std::vector<double> lrs = GetLearningRates(optimizer);
  if (lrs.empty() || std::any_of(lrs.begin(), lrs.end(),
                                 [&](double lr) { return lr != lrs[0]; })) {
    return Status::InvalidArgument(
        a.KeyOf("eta_min") +
        ": a nonzero eta_min needs every param group at one learning rate");
  }
  node->Set("min_lr_factor", Node::Double(eta_min / lrs[0]));
  return Status::Ok();
}

Status RegisterScheduler(config::Registry* r, const SchedulerTarget& t) {
  const std::string python = std::string("torch.optim.lr_scheduler.") + t.cls;
  std::vector<std::string> params = {"optimizer"};
  for (const auto& [py, ours] : t.keys) params.push_back(py);
  auto factory =
      [t,
       python](const Arguments& a) -> StatusOr<std::shared_ptr<LrScheduler>> {
    TRIALSHIM_RETURN_IF_ERROR(CheckFixed(a, python, t.fixed));
    TRIALSHIM_ASSIGN_OR_RETURN(auto optimizer,
                               a.Get<torch::optim::Optimizer>("optimizer"));
    std::vector<std::string> skip = NamesOf(t.fixed);
    skip.push_back("optimizer");
    TRIALSHIM_ASSIGN_OR_RETURN(Node plain, a.NodeMap(skip));
    Node node = Node::MakeMap({{"name", Node::String(t.name)}});
    for (const auto& [py, ours] : t.keys) {
      if (const Node* v = plain.Get(py)) node.Set(ours, *v);
    }
    if (std::string(t.name) == "cosine") {
      if (node.Get("total") == nullptr) {
        return Status::InvalidArgument("missing required argument 'T_max'");
      }
      TRIALSHIM_RETURN_IF_ERROR(EtaMinToFactor(a, *optimizer, &node));
    }
    TRIALSHIM_ASSIGN_OR_RETURN(SchedulerConfig made,
                               MakeScheduler(node, *optimizer, -1, -1));
    return Owning(optimizer, made.scheduler);
  };
  return r->Register<LrScheduler>(
      std::string("trialshim::trainer::") + t.native, factory,
      {"PyTorch's " + python,
       t.order.empty() ? Names(params, t.fixed) : t.order,
       {python}});
}

// trainer/scheduler.h's own schedulers (warmup, stepping interval, the run's
// length from the trainer) as one target; it makes a SchedulerConfig, which
// configure_optimizers returns as it is.
Status RegisterNativeScheduler(config::Registry* r) {
  auto factory = [](const config::Arguments& a)
      -> StatusOr<std::shared_ptr<SchedulerConfig>> {
    TRIALSHIM_ASSIGN_OR_RETURN(auto optimizer,
                               a.Get<torch::optim::Optimizer>("optimizer"));
    int64_t total_epochs = -1, total_steps = -1;
    TRIALSHIM_RETURN_IF_ERROR(a.Int("total_epochs", &total_epochs));
    TRIALSHIM_RETURN_IF_ERROR(a.Int("total_steps", &total_steps));
    TRIALSHIM_ASSIGN_OR_RETURN(
        Node node, a.NodeMap({"optimizer", "total_epochs", "total_steps"}));
    TRIALSHIM_ASSIGN_OR_RETURN(
        SchedulerConfig made,
        MakeScheduler(node, *optimizer, total_epochs, total_steps));
    made.scheduler = Owning(optimizer, made.scheduler);
    return std::make_shared<SchedulerConfig>(std::move(made));
  };
  return r->Register<SchedulerConfig>(
      "trialshim::trainer::Scheduler", factory,
      {"trainer/scheduler.h's schedulers: name, interval, warmup, ...",
       {"optimizer", "total_epochs", "total_steps", "name", "interval",
        "step_size", "gamma", "warmup", "warmup_start_factor", "min_lr_factor",
        "monitor", "mode", "factor", "patience", "threshold", "cooldown",
        "min_lr"},
       {"trialshim.trainer.Scheduler"}});
}

// ---- callbacks ------------------------------------------------------------

struct CallbackTarget {
  const char* native;   // trialshim::trainer::<native>
  const char* section;  // CallbacksFromConfig's key
  // Lightning's (class, module) pairs this target answers to.
  std::vector<std::pair<std::string, std::string>> classes;
  std::vector<std::string> params;
  std::vector<Fixed> fixed;
};

std::vector<CallbackTarget> Callbacks() {
  const Node f = Node::Bool(false), none;
  return {
      {"ModelCheckpoint",
       "model_checkpoint",
       {{"ModelCheckpoint", "model_checkpoint"}},
       {"dirpath", "filename", "monitor", "verbose", "save_last", "save_top_k",
        "save_weights_only", "mode", "auto_insert_metric_name",
        "every_n_train_steps", "train_time_interval", "every_n_epochs",
        "save_on_train_epoch_end", "enable_version_counter"},
       {}},
      {"EarlyStopping",
       "early_stopping",
       {{"EarlyStopping", "early_stopping"}},
       {"monitor", "min_delta", "patience", "verbose", "mode", "strict",
        "check_finite", "stopping_threshold", "divergence_threshold",
        "check_on_train_epoch_end", "log_rank_zero_only"},
       {}},
      {"LearningRateMonitor",
       "lr_monitor",
       {{"LearningRateMonitor", "lr_monitor"}},
       {"logging_interval", "log_momentum", "log_weight_decay"},
       {}},
      {"DeviceStatsMonitor",
       "device_stats",
       {{"DeviceStatsMonitor", "device_stats_monitor"}},
       {"cpu_stats"},
       {}},
      {"ModelSummary",
       "model_summary",
       {{"ModelSummary", "model_summary"},
        {"RichModelSummary", "rich_model_summary"}},
       {"max_depth"},
       {}},
      {"ProgressBar",
       "progress_bar",
       {{"TQDMProgressBar", "progress.tqdm_progress"},
        {"RichProgressBar", "progress.rich_progress"}},
       {"refresh_rate"},
       {{"process_position", Node::Int(0), "0"},
        {"leave", f, "False"},
        {"theme", none, "None"},
        {"console_kwargs", none, "None"}}},
  };
}

Status RegisterCallback(config::Registry* r, const CallbackTarget& t) {
  std::vector<std::string> aliases;
  for (const auto& [cls, module] : t.classes) {
    for (const char* package : {"lightning.pytorch", "pytorch_lightning"}) {
      aliases.push_back(std::string(package) + ".callbacks." + cls);
      aliases.push_back(std::string(package) + ".callbacks." + module + "." +
                        cls);
    }
  }
  const std::string cls = "Lightning's " + t.classes[0].first;
  auto factory =
      [t, cls](const Arguments& a) -> StatusOr<std::shared_ptr<Callback>> {
    TRIALSHIM_RETURN_IF_ERROR(CheckFixed(a, cls, t.fixed));
    TRIALSHIM_ASSIGN_OR_RETURN(Node options, a.NodeMap(NamesOf(t.fixed)));
    TRIALSHIM_ASSIGN_OR_RETURN(
        auto made,
        CallbacksFromConfig(Node::MakeMap({{t.section, std::move(options)}})));
    return made.at(0);
  };
  return r->Register<Callback>(std::string("trialshim::trainer::") + t.native,
                               factory,
                               {cls + " (trialshim's " + t.native + ")",
                                Names(t.params, t.fixed), aliases});
}

}  // namespace

Status RegisterTrainerTargets(config::Registry* registry) {
  for (const OptimizerTarget& t : Optimizers()) {
    TRIALSHIM_RETURN_IF_ERROR(RegisterOptimizer(registry, t));
  }
  for (const SchedulerTarget& t : Schedulers()) {
    TRIALSHIM_RETURN_IF_ERROR(RegisterScheduler(registry, t));
  }
  TRIALSHIM_RETURN_IF_ERROR(RegisterNativeScheduler(registry));
  for (const CallbackTarget& t : Callbacks()) {
    TRIALSHIM_RETURN_IF_ERROR(RegisterCallback(registry, t));
  }
  return RegisterLoggerTargets(registry);
}

}  // namespace trialshim::trainer
