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
      INT_KEY(check_val_every_n_epoch, 1),
      LIMIT_KEY(limit_train_batches),
      LIMIT_KEY(limit_val_batches),
      {"gradient_clip_val",
       [](const Node& n, TrainerOptions* o) {
         double v = 0;
         TRIALSHIM_RETURN_IF_ERROR(ReadDouble(n, "gradient_clip_val", &v));
         o->gradient_clip_val(v);
         return Status::Ok();
       }},
      CHOICE_KEY(gradient_clip_algorithm, {"norm", "value"}),
      INT_KEY(accumulate_grad_batches, 1),
      BOOL_KEY(deterministic),
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
      INT_KEY(num_sanity_val_steps, 0),
      INT_KEY(log_every_n_steps, 1),
      BOOL_KEY(enable_progress_bar),
      BOOL_KEY(enable_checkpointing),
      STRING_KEY(default_root_dir),
      INT_KEY(seed, -1),
      INT_KEY(num_threads, 0),
      CHOICE_KEY(accelerator, {"auto", "cpu", "cuda"}),
      CHOICE_KEY(on_nonfinite, {"error", "skip"}),
      STRING_KEY(ckpt_path),
      STRING_KEY(checkpoint_dir),
      STRING_KEY(model_dir),
      CHOICE_KEY(strategy, {"auto", "ddp", "single_device"}),
      {"devices",
       [](const Node& n, TrainerOptions* o) {
         // Lightning takes "auto", -1 (all) or a count.
         if (n.is_string() && n.AsString() == "auto") {
           o->devices(-1);
           return Status::Ok();
         }
         if (!n.is_int() || (n.AsInt() < 1 && n.AsInt() != -1)) {
           return TypeError(n, "devices", "'auto', -1 or an int >= 1");
         }
         o->devices(n.AsInt());
         return Status::Ok();
       }},
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
    return k;
  }();
  return *keys;
}

StatusOr<TrainerOptions> TrainerOptions::FromConfig(const Node& trainer,
                                                    const Node* hypertune) {
  TrainerOptions options;
  if (!trainer.is_null() && !trainer.is_map()) {
    return Status::InvalidArgument(
        Where(trainer) + "trainer: expected a map, got " + trainer.type_name());
  }
  for (const auto& [key, value] : trainer.AsMap()) {
    const auto& readers = Readers();
    auto it = std::find_if(readers.begin(), readers.end(),
                           [&](const auto& r) { return r.first == key; });
    if (it == readers.end()) {
      return Status::InvalidArgument(Where(value) +
                                     "unknown trainer option 'trainer." + key +
                                     "'" + Suggest(key, ConfigKeys()));
    }
    if (value.is_null()) continue;  // null keeps the default
    TRIALSHIM_RETURN_IF_ERROR(it->second(value, &options));
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
        return Status::InvalidArgument(Where(value) +
                                       "unknown option 'hypertune." + key +
                                       "'" + DidYouMean(key, kKeys));
      }
      if (value.is_null()) continue;
      if (!value.is_string()) {
        return Status::InvalidArgument(Where(value) + "hypertune." + key +
                                       ": expected a string, got " +
                                       Describe(value));
      }
      if (key == "monitor") options.hypertune_monitor(value.AsString());
      if (key == "tag") options.hypertune_tag(value.AsString());
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
