#include "trialshim/trainer/options.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "trialshim/base/spell.h"

namespace trialshim::trainer {
namespace {

using config::Node;

std::string Where(const Node& n) {
  std::string at = n.mark().ToString();
  return at.empty() ? "" : at + ": ";
}

// Where the key of `value` is written, for errors about the key.
std::string WhereKey(const Node& value) {
  std::string at = value.KeyOrValueMark().ToString();
  return at.empty() ? "" : at + ": ";
}

std::string Describe(const Node& n) {
  if (n.is_string()) return std::string("str '") + n.AsString() + "'";
  if (n.is_bool()) return n.AsBool() ? "bool true" : "bool false";
  if (n.is_int()) return "int " + std::to_string(n.AsInt());
  if (n.is_double()) return "float " + std::to_string(n.AsDouble());
  return n.type_name();
}

Status TypeError(const Node& n, const std::string& key,
                 const std::string& expected) {
  return Status::InvalidArgument(Where(n) + "trainer." + key + ": expected " +
                                 expected + ", got " + Describe(n));
}

Status ReadInt(const Node& n, const std::string& key, int64_t min,
               int64_t* out) {
  if (!n.is_int()) return TypeError(n, key, "an int");
  if (n.AsInt() < min) {
    return Status::InvalidArgument(
        Where(n) + "trainer." + key + ": expected an int >= " +
        std::to_string(min) + ", got " + std::to_string(n.AsInt()));
  }
  *out = n.AsInt();
  return Status::Ok();
}

Status ReadBool(const Node& n, const std::string& key, bool* out) {
  if (!n.is_bool()) return TypeError(n, key, "a bool (true or false)");
  *out = n.AsBool();
  return Status::Ok();
}

Status ReadDouble(const Node& n, const std::string& key, double* out) {
  if (!n.is_number() || !std::isfinite(n.AsDouble()) || n.AsDouble() < 0) {
    return TypeError(n, key, "a finite number >= 0");
  }
  *out = n.AsDouble();
  return Status::Ok();
}

Status ReadString(const Node& n, const std::string& key, std::string* out) {
  if (!n.is_string()) return TypeError(n, key, "a string");
  *out = n.AsString();
  return Status::Ok();
}

Status ReadChoice(const Node& n, const std::string& key,
                  const std::vector<std::string>& choices, std::string* out) {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
  if (!n.is_string()) return TypeError(n, key, "one of " + list);
  if (std::find(choices.begin(), choices.end(), n.AsString()) ==
      choices.end()) {
    return Status::InvalidArgument(
        Where(n) + "trainer." + key + ": expected one of " + list + ", got '" +
        n.AsString() + "'" + DidYouMean(n.AsString(), choices));
  }
  *out = n.AsString();
  return Status::Ok();
}

// Lightning's convention: an int is a count of batches, a float a fraction.
Status ReadLimit(const Node& n, const std::string& key, BatchLimit* out) {
  if (n.is_int() && n.AsInt() >= 0) {
    *out = BatchLimit::Count(n.AsInt());
    return Status::Ok();
  }
  if (n.is_double() && n.AsDouble() >= 0 && n.AsDouble() <= 1) {
    *out = BatchLimit::Fraction(n.AsDouble());
    return Status::Ok();
  }
  return TypeError(n, key, "an int count >= 0 or a float fraction in [0, 1]");
}

}  // namespace

// Lightning's max_time (lightning/pytorch/callbacks/timer.py): the
// string is days:hours:minutes:seconds; the map is timedelta's keywords.
Status ParseDuration(const Node& n, const std::string& key, double* seconds) {
  auto bad = [&](const Node& at, const std::string& what) {
    return Status::InvalidArgument(
        Where(at) + key + ": expected " + what + ", got " + Describe(at));
  };
  const std::string expected =
      "a duration: \"DD:HH:MM:SS\" or a map of weeks, days, hours, "
      "minutes, seconds, milliseconds, microseconds";
  if (n.is_string()) {
    std::vector<double> parts;
    const std::string& s = n.AsString();
    for (size_t start = 0;;) {
      size_t colon = s.find(':', start);
      std::string part = s.substr(start, colon - start);
      if (part.empty() || part.size() > 9 ||
          part.find_first_not_of("0123456789") != std::string::npos) {
        return bad(n, expected);
      }
      parts.push_back(std::stod(part));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (parts.size() != 4) return bad(n, expected);
    *seconds = ((parts[0] * 24 + parts[1]) * 60 + parts[2]) * 60 + parts[3];
    return Status::Ok();
  }
  if (!n.is_map()) return bad(n, expected);
  static const std::vector<std::pair<std::string, double>> kUnits = {
      {"weeks", 604800}, {"days", 86400},       {"hours", 3600},
      {"minutes", 60},   {"seconds", 1},        {"milliseconds", 1e-3},
      {"microseconds", 1e-6}};
  std::vector<std::string> names;
  for (const auto& unit : kUnits) names.push_back(unit.first);
  double total = 0;
  for (const auto& [unit, value] : n.AsMap()) {
    auto it =
        std::find_if(kUnits.begin(), kUnits.end(),
                     [&unit = unit](const auto& u) { return u.first == unit; });
    if (it == kUnits.end()) {
      return Status::InvalidArgument(Where(value) + key + "." + unit +
                                     ": not a timedelta keyword" +
                                     DidYouMean(unit, names));
    }
    if (!value.is_number() || !std::isfinite(value.AsDouble())) {
      return bad(value, "a number");
    }
    total += value.AsDouble() * it->second;
  }
  if (total < 0) return bad(n, "a duration >= 0");
  *seconds = total;
  return Status::Ok();
}

namespace {

// Lightning's precision spellings (lightning/fabric/connector.py
// _PRECISION_INPUT) to the unified names; what this build can not run is
// refused with the reason.
Status ReadPrecision(const Node& n, std::string* out) {
  std::string p = n.is_int() ? std::to_string(n.AsInt())
                             : (n.is_string() ? n.AsString() : "");
  if (p == "32") p = "32-true";
  if (p == "64") p = "64-true";
  if (p == "16") p = "16-mixed";
  if (p == "bf16") p = "bf16-mixed";
  // 16-mixed and 16-true need CUDA; Setup refuses them on the CPU, as
  // Lightning does, once the device is known.
  if (p == "32-true" || p == "64-true" || p == "bf16-true" ||
      p == "bf16-mixed" || p == "16-mixed" || p == "16-true") {
    *out = p;
    return Status::Ok();
  }
  if (p.rfind("transformer-engine", 0) == 0) {
    return Status::InvalidArgument(
        Where(n) + "trainer.precision=" + p +
        " is not supported by this trainer: NVIDIA Transformer Engine is a "
        "Python library");
  }
  return TypeError(n, "precision",
                   "one of 32-true|64-true|bf16-mixed|bf16-true|16-mixed|"
                   "16-true (or 32, 64, 16, bf16)");
}

// Lightning's accelerators: cpu, cuda (gpu), auto; the others exist in
// Lightning but not in this build, which is not a typo to correct.
Status ReadAccelerator(const Node& n, std::string* out) {
  if (n.is_string()) {
    const std::string& a = n.AsString();
    if (a == "gpu" || a == "cuda") {
      *out = "cuda";
      return Status::Ok();
    }
    if (a == "mps" || a == "tpu" || a == "hpu" || a == "ipu" || a == "xla") {
      return Status::InvalidArgument(
          Where(n) + "trainer.accelerator=" + a +
          " is not available in this build: LibTorch runs on cpu, or cuda "
          "(gpu) when built with it");
    }
  }
  return ReadChoice(n, "accelerator", {"auto", "cpu", "gpu", "cuda"}, out);
}

Status ReadStrategy(const Node& n, std::string* out) {
  if (n.is_string()) {
    const std::string& s = n.AsString();
    // Lightning's "ddp" is DDP with find_unused_parameters=False.
    if (s == "ddp_find_unused_parameters_false") {
      *out = "ddp";
      return Status::Ok();
    }
    const char* why = nullptr;
    if (s == "ddp_spawn" || s == "ddp_fork" || s == "ddp_notebook" ||
        s == "ddp_spawn_find_unused_parameters_false") {
      why = "a C++ program can not spawn or fork itself as Python does: use "
            "ddp with trainer.devices=N, and the trainer starts its N "
            "processes as Lightning's ddp does";
    } else if (s == "ddp_find_unused_parameters_true") {
      why = "every parameter must get a gradient in every step; use ddp";
    } else if (s == "dp") {
      why = "DataParallel is gone from Lightning 2.x; use ddp";
    } else if (s.rfind("fsdp", 0) == 0 || s.rfind("deepspeed", 0) == 0 ||
               s == "xla" || s.rfind("xla_", 0) == 0) {
      why = "LibTorch 1.13's C++ API has no sharded or XLA training";
    }
    if (why != nullptr) {
      return Status::InvalidArgument(Where(n) + "trainer.strategy=" + s +
                                     " is not supported by this trainer: " +
                                     why);
    }
  }
  return ReadChoice(n, "strategy", {"auto", "ddp", "single_device"}, out);
}

// A Lightning Trainer argument this trainer does not implement: accepted at
// its default (or null), refused otherwise with the reason.
struct Unsupported {
  const char* name;
  Node value;        // Lightning's default
  const char* text;  // as Lightning writes it
  const char* why;
};

const std::vector<Unsupported>& UnsupportedKeys() {
  static const auto* keys = new std::vector<Unsupported>{
      {"overfit_batches", Node::Int(0), "0.0",
       "the loaders have no fixed unshuffled order to reuse for validation; "
       "use limit_train_batches and limit_val_batches"},
      {"limit_predict_batches", Node::Double(1.0), "1.0",
       "the trainer has no predict loop"},
      {"use_distributed_sampler", Node::Bool(true), "True",
       "under ddp each rank always reads its own shard (Loader::set_shard)"},
      {"sync_batchnorm", Node::Bool(false), "False",
       "LibTorch 1.13's C++ API has no SyncBatchNorm"},
      {"reload_dataloaders_every_n_epochs", Node::Int(0), "0",
       "the DataModule's loaders are made once per fit"},
      {"barebones", Node::Bool(false), "False",
       "turn off what you do not want one by one (enable_checkpointing, "
       "enable_progress_bar, enable_model_summary, ...)"},
      {"profiler", Node(), "None",
       "the trainer has no profiler; use perf or LibTorch's autograd "
       "profiler in your steps"},
      {"plugins", Node(), "None", "plugins are Python classes"},
      {"enable_autolog_hparams", Node::Bool(true), "True",
       "the loggers always write the config's hyperparameters"},
      {"model_registry", Node(), "None",
       "Lightning's model registry is a Python service"},
  };
  return *keys;
}

Status CheckUnsupported(const Unsupported& u, const Node& n) {
  if (n.is_null() || n == u.value ||
      (u.value.is_number() && n.is_number() &&
       n.AsDouble() == u.value.AsDouble()) ||
      (n.is_list() && n.size() == 0 && u.value.is_null())) {
    return Status::Ok();
  }
  return Status::InvalidArgument(
      Where(n) + "trainer." + u.name + " is not supported by this trainer (" +
      u.why + "); only its default (" + u.text + ") or null is accepted");
}

// Lightning's Trainer class paths a `trainer:` node may name.
bool IsTrainerTarget(const std::string& target) {
  for (const char* package : {"lightning.pytorch", "pytorch_lightning"}) {
    for (const char* cls : {".Trainer", ".trainer.Trainer",
                            ".trainer.trainer.Trainer"}) {
      if (target == std::string(package) + cls) return true;
    }
  }
  return false;
}

// Readers of the keys that are more than a type check.
Status MaxTimeKey(const Node& n, TrainerOptions* o) {
  double v = 0;
  TRIALSHIM_RETURN_IF_ERROR(ParseDuration(n, "trainer.max_time", &v));
  o->max_time(v);
  return Status::Ok();
}

Status CheckValKey(const Node& n, TrainerOptions* o) {
  int64_t v = 0;
  TRIALSHIM_RETURN_IF_ERROR(ReadInt(n, "check_val_every_n_epoch", 1, &v));
  o->check_val_every_n_epoch(v);
  return Status::Ok();
}

// Lightning 2.6 also takes a duration; batches are what this trainer
// counts.
Status ValCheckIntervalKey(const Node& n, TrainerOptions* o) {
  if (n.is_int() && n.AsInt() >= 1) {
    o->val_check_interval(BatchLimit::Count(n.AsInt()));
  } else if (n.is_double() && n.AsDouble() > 0 && n.AsDouble() <= 1) {
    o->val_check_interval(BatchLimit::Fraction(n.AsDouble()));
  } else {
    return TypeError(n, "val_check_interval",
                     "an int count of batches >= 1 or a float fraction of "
                     "an epoch in (0, 1]");
  }
  return Status::Ok();
}

Status PrecisionKey(const Node& n, TrainerOptions* o) {
  std::string v;
  TRIALSHIM_RETURN_IF_ERROR(ReadPrecision(n, &v));
  o->precision(v);
  return Status::Ok();
}

Status DeterministicKey(const Node& n, TrainerOptions* o) {
  if (n.is_string() && n.AsString() == "warn") {
    o->deterministic(true).deterministic_warn_only(true);
    return Status::Ok();
  }
  if (!n.is_bool()) {
    return TypeError(n, "deterministic", "true, false or 'warn'");
  }
  o->deterministic(n.AsBool()).deterministic_warn_only(false);
  return Status::Ok();
}

// Instantiated by MakeTrainer (app.h), which has the registry.
Status CallbacksKey(const Node& n, TrainerOptions*) {
  if (n.is_list() || n.is_map()) return Status::Ok();
  return TypeError(n, "callbacks", "a list or map of callback nodes");
}

// Lightning only prints a tip with it.
Status SuggestIntegrationsKey(const Node& n, TrainerOptions*) {
  bool v = false;
  return ReadBool(n, "suggest_integrations", &v);
}

// Lightning's devices: "auto", -1 (all), a count, or a list of device
// indices ([0, 2]; Lightning's "0,2" string too).
Status DevicesKey(const Node& n, TrainerOptions* o) {
  const char* expected = "'auto', -1, an int >= 1 or a list of device indices";
  if (n.is_string() && n.AsString() == "auto") {
    o->devices(-1);
    return Status::Ok();
  }
  std::vector<int64_t> ids;
  if (n.is_list() && n.size() > 0) {
    for (const Node& i : n.AsList()) {
      if (!i.is_int() || i.AsInt() < 0) return TypeError(n, "devices", expected);
      ids.push_back(i.AsInt());
    }
  } else if (n.is_string() && n.AsString().find(',') != std::string::npos) {
    // "0,2" lists devices; a string without a comma is a count, as in
    // Lightning's _normalize_parse_gpu_string_input.
    std::string text = n.AsString();
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      std::string part = text.substr(start, comma == std::string::npos
                                                ? std::string::npos
                                                : comma - start);
      char* end = nullptr;
      long v = std::strtol(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || v < 0) {
        return TypeError(n, "devices", expected);
      }
      ids.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    int64_t count = 0;
    if (n.is_int()) {
      count = n.AsInt();
    } else if (n.is_string()) {
      char* end = nullptr;
      count = std::strtoll(n.AsString().c_str(), &end, 10);
      if (n.AsString().empty() || *end != '\0') count = 0;
    }
    if (count < 1 && count != -1) return TypeError(n, "devices", expected);
    o->devices(count);
    return Status::Ok();
  }
  std::vector<int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return Status::InvalidArgument(Where(n) +
                                   "trainer.devices lists a device twice");
  }
  o->device_ids(ids);
  o->devices(static_cast<int64_t>(ids.size()));
  return Status::Ok();
}

Status AcceleratorKey(const Node& n, TrainerOptions* o) {
  std::string v;
  TRIALSHIM_RETURN_IF_ERROR(ReadAccelerator(n, &v));
  o->accelerator(v);
  return Status::Ok();
}

Status StrategyKey(const Node& n, TrainerOptions* o) {
  std::string v;
  TRIALSHIM_RETURN_IF_ERROR(ReadStrategy(n, &v));
  o->strategy(v);
  return Status::Ok();
}

Status TargetKey(const Node& n, TrainerOptions*) {
  if (n.is_string() && IsTrainerTarget(n.AsString())) return Status::Ok();
  return TypeError(n, "_target_",
                   "Lightning's Trainer (lightning.pytorch.Trainer, "
                   "pytorch_lightning.Trainer, or their .trainer.Trainer "
                   "spellings)");
}

// Lightning's logger: a bool, or logger nodes for MakeTrainer to
// instantiate (one map with `_target_`, or a list of them).
Status ReadLogger(const Node& n, TrainerOptions* o) {
  if (n.is_bool() || (n.is_list() && n.size() == 0)) {
    o->logger(n.is_bool() && n.AsBool());  // Lightning: [] is falsy
    return Status::Ok();
  }
  bool nodes = n.is_map() || n.is_list();
  for (size_t i = 0; nodes && n.is_list() && i < n.size(); ++i) {
    nodes = n.AsList()[i].is_map();
  }
  if (!nodes) {
    return TypeError(n, "logger",
                     "true, false, a logger node (_target_: "
                     "lightning.pytorch.loggers.CSVLogger) or a list of them");
  }
  LoggerOption option;
  option.config = n;
  o->logger(option);
  return Status::Ok();
}

using Reader = std::function<Status(const Node&, TrainerOptions*)>;

// The table of accepted keys; ConfigKeys() and the did-you-mean come from it.
// Over 100 lines because it is one table, one entry per trainer.* key: cut
// in parts, a key's reader would be harder to find.
const std::vector<std::pair<std::string, Reader>>& Readers() {
  static const auto* readers = new std::vector<std::pair<std::string, Reader>>{
#define INT_KEY(name, min)                                   \
  {                                                          \
#name, [](const Node& n, TrainerOptions* o) {              \
     int64_t v = 0;                                             \
     TRIALSHIM_RETURN_IF_ERROR(ReadInt(n, #name, min, &v));   \
     o->name(v);                                              \
     return Status::Ok();                                     \
   } \
  }
#define BOOL_KEY(name)                                       \
  {                                                          \
#name, [](const Node& n, TrainerOptions* o) {              \
     bool v = false;                                               \
     TRIALSHIM_RETURN_IF_ERROR(ReadBool(n, #name, &v));       \
     o->name(v);                                              \
     return Status::Ok();                                     \
   } \
  }
#define STRING_KEY(name)                                     \
  {                                                          \
#name, [](const Node& n, TrainerOptions* o) {              \
     std::string v;                                           \
     TRIALSHIM_RETURN_IF_ERROR(ReadString(n, #name, &v));     \
     o->name(v);                                              \
     return Status::Ok();                                     \
   } \
  }
#define CHOICE_KEY(name, ...)                                       \
  {                                                                 \
#name, [](const Node& n, TrainerOptions* o) {                     \
     std::string v;                                                  \
     TRIALSHIM_RETURN_IF_ERROR(ReadChoice(n, #name, __VA_ARGS__, &v)); \
     o->name(v);                                                     \
     return Status::Ok();                                            \
   } \
  }
#define LIMIT_KEY(name)                                      \
  {                                                          \
#name, [](const Node& n, TrainerOptions* o) {              \
     BatchLimit v;                                            \
     TRIALSHIM_RETURN_IF_ERROR(ReadLimit(n, #name, &v));      \
     o->name(v);                                              \
     return Status::Ok();                                     \
   } \
  }
      INT_KEY(max_epochs, -1),
      INT_KEY(max_steps, -1),
      INT_KEY(min_epochs, 0),
      INT_KEY(min_steps, 0),
      {"max_time", MaxTimeKey},
      {"check_val_every_n_epoch", CheckValKey},
      {"val_check_interval", ValCheckIntervalKey},
      LIMIT_KEY(limit_train_batches),
      LIMIT_KEY(limit_val_batches),
      LIMIT_KEY(limit_test_batches),
      {"precision", PrecisionKey},
      {"gradient_clip_val",
       [](const Node& n, TrainerOptions* o) {
         double v = 0;
         TRIALSHIM_RETURN_IF_ERROR(ReadDouble(n, "gradient_clip_val", &v));
         o->gradient_clip_val(v);
         return Status::Ok();
       }},
      CHOICE_KEY(gradient_clip_algorithm, {"norm", "value"}),
      INT_KEY(accumulate_grad_batches, 1),
      {"deterministic", DeterministicKey},
      BOOL_KEY(benchmark),
      BOOL_KEY(inference_mode),
      BOOL_KEY(detect_anomaly),
      {"fast_dev_run",
       [](const Node& n, TrainerOptions* o) {
         // Lightning takes true (one batch) or a count.
         if (n.is_bool()) {
           o->fast_dev_run(n.AsBool() ? 1 : 0);
           return Status::Ok();
         }
         int64_t v = 0;
         TRIALSHIM_RETURN_IF_ERROR(ReadInt(n, "fast_dev_run", 0, &v));
         o->fast_dev_run(v);
         return Status::Ok();
       }},
      INT_KEY(num_sanity_val_steps, -1),
      INT_KEY(log_every_n_steps, 1),
      BOOL_KEY(enable_progress_bar),
      BOOL_KEY(enable_checkpointing),
      BOOL_KEY(enable_model_summary),
      {"callbacks", CallbacksKey},
      {"suggest_integrations", SuggestIntegrationsKey},
      STRING_KEY(default_root_dir),
      INT_KEY(seed, -1),
      INT_KEY(num_threads, 0),
      {"accelerator", AcceleratorKey},
      CHOICE_KEY(on_nonfinite, {"error", "skip"}),
      STRING_KEY(ckpt_path),
      STRING_KEY(checkpoint_dir),
      STRING_KEY(model_dir),
      {"strategy", StrategyKey},
      INT_KEY(num_nodes, 1),
      {"devices", DevicesKey},
      CHOICE_KEY(float32_matmul_precision, {"highest", "high", "medium"}),
      {"_target_", TargetKey},
      {"logger", ReadLogger},
#undef INT_KEY
#undef BOOL_KEY
#undef STRING_KEY
#undef CHOICE_KEY
#undef LIMIT_KEY
  };
  return *readers;
}

// Spelling first; else keys the word starts ("gradient_clip" ->
// gradient_clip_val, gradient_clip_algorithm), too far for edit distance.
std::string Suggest(const std::string& key,
                    const std::vector<std::string>& keys) {
  std::string typo = DidYouMean(key, keys);
  if (!typo.empty() || key.size() < 4) return typo;
  std::vector<std::string> prefixed;
  for (const auto& k : keys) {
    if (k.compare(0, key.size(), key) == 0) prefixed.push_back(k);
  }
  if (prefixed.empty() || prefixed.size() > 3) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < prefixed.size(); ++i) {
    out += (i == 0 ? "'" : (i + 1 == prefixed.size() ? " or '" : ", '")) +
           prefixed[i] + "'";
  }
  return out + "?)";
}

}  // namespace

int64_t BatchLimit::Apply(int64_t available) const {
  if (!is_fraction) return std::min(count, available);
  return static_cast<int64_t>(std::floor(fraction * available));
}

TrainerOptions::TrainerOptions() : console_(spdlog::default_logger()) {}

const std::vector<std::string>& TrainerOptions::ConfigKeys() {
  static const auto* keys = [] {
    auto* k = new std::vector<std::string>;
    for (const auto& [name, reader] : Readers()) k->push_back(name);
    for (const Unsupported& u : UnsupportedKeys()) k->push_back(u.name);
    return k;
  }();
  return *keys;
}

namespace {

// hypertune.monitor / hypertune.tag: a metric name, or a list of them (one
// report each, for a study with several metricSpecs).
StatusOr<std::vector<std::string>> MetricNames(const Node& value,
                                               const std::string& key) {
  std::vector<std::string> names;
  if (value.is_string()) {
    if (!value.AsString().empty()) names.push_back(value.AsString());
    return names;
  }
  if (value.is_list()) {
    for (const Node& item : value.AsList()) {
      if (!item.is_string() || item.AsString().empty()) {
        return Status::InvalidArgument(
            Where(item) + key + ": expected a list of metric names, got " +
            Describe(item) + " in it");
      }
      if (std::find(names.begin(), names.end(), item.AsString()) !=
          names.end()) {
        return Status::InvalidArgument(Where(item) + key + ": '" +
                                       item.AsString() + "' is listed twice");
      }
      names.push_back(item.AsString());
    }
    return names;
  }
  return Status::InvalidArgument(
      Where(value) + key + ": expected a metric name or a list of them " +
      "(" + key + "=[val_acc,val_loss]), got " + Describe(value));
}

}  // namespace

StatusOr<TrainerOptions> TrainerOptions::FromConfig(const Node& trainer,
                                                    const Node* hypertune) {
  TrainerOptions options;
  if (!trainer.is_null() && !trainer.is_map()) {
    return Status::InvalidArgument(
        Where(trainer) + "trainer: expected a map, got " + trainer.type_name());
  }
  for (const auto& [key, value] : trainer.AsMap()) {
    const auto& readers = Readers();
    auto it =
        std::find_if(readers.begin(), readers.end(),
                     [&key = key](const auto& r) { return r.first == key; });
    auto unsupported = std::find_if(
        UnsupportedKeys().begin(), UnsupportedKeys().end(),
        [&key = key](const Unsupported& u) { return u.name == key; });
    if (unsupported != UnsupportedKeys().end()) {
      TRIALSHIM_RETURN_IF_ERROR(CheckUnsupported(*unsupported, value));
      continue;
    }
    if (it == readers.end()) {
      return Status::InvalidArgument(WhereKey(value) +
                                     "unknown trainer option 'trainer." + key +
                                     "'" + Suggest(key, ConfigKeys()));
    }
    if (value.is_null()) {
      // Lightning's check_val_every_n_epoch=None means something.
      if (key == "check_val_every_n_epoch") options.check_val_every_n_epoch({});
      continue;  // null keeps the default
    }
    TRIALSHIM_RETURN_IF_ERROR(it->second(value, &options));
  }
  if (!options.check_val_every_n_epoch() &&
      options.val_check_interval().is_fraction) {
    return Status::InvalidArgument(
        "trainer.check_val_every_n_epoch=null needs an int "
        "trainer.val_check_interval (validation every that many batches "
        "across epochs), as in Lightning");
  }
  if (options.ckpt_path() == "hpc") {
    return Status::InvalidArgument(
        "trainer.ckpt_path=hpc is not supported by this trainer (it is "
        "Lightning's SLURM requeue checkpoint); use last, best, null or a "
        "path");
  }
  if (hypertune != nullptr && !hypertune->is_null()) {
    if (!hypertune->is_map()) {
      return Status::InvalidArgument(Where(*hypertune) +
                                     "hypertune: expected a map, got " +
                                     hypertune->type_name());
    }
    static const std::vector<std::string> kKeys = {"monitor", "tag"};
    for (const auto& [key, value] : hypertune->AsMap()) {
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
        return Status::InvalidArgument(WhereKey(value) +
                                       "unknown option 'hypertune." + key +
                                       "'" + DidYouMean(key, kKeys));
      }
      if (value.is_null()) continue;
      TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> names,
                                 MetricNames(value, "hypertune." + key));
      if (key == "monitor") options.hypertune_monitor(names);
      if (key == "tag") options.hypertune_tag(names);
    }
    const size_t monitors = options.hypertune_monitor().size();
    const size_t tags = options.hypertune_tag().size();
    if (tags != 0 && tags != monitors) {
      return Status::InvalidArgument(
          Where(*hypertune->Get("tag")) + "hypertune.tag: " +
          std::to_string(tags) + " tag" + (tags == 1 ? "" : "s") + " for " +
          std::to_string(monitors) + " monitored metric" +
          (monitors == 1 ? "" : "s") +
          ": give one tag per hypertune.monitor entry, or hypertune.tag=null "
          "to report each under its own name");
    }
  }
  return options;
}

std::string MapGcsUri(const std::string& path) {
  static const std::string kPrefix = "gs://";
  if (path.compare(0, kPrefix.size(), kPrefix) == 0) {
    return "/gcs/" + path.substr(kPrefix.size());
  }
  return path;
}

}  // namespace trialshim::trainer
