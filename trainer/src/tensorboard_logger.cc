// TensorBoardLogger as Lightning 2.6.2 writes through torch's SummaryWriter
// (lightning/fabric/loggers/tensorboard.py, lightning/pytorch/loggers/
// tensorboard.py): the event file as TensorBoard's EventFileWriter names
// and frames it (tensorboard/summary/writer/event_file_writer.py and
// record_writer.py), scalars as torch.utils.tensorboard.summary.scalar
// (simple_value), hyperparameters as summary.hparams (torch 1.13, Debian's
// python3-torch): three summaries of the hparams plugin.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "tensorboard/compat/proto/event.pb.h"
#include "tensorboard/plugins/hparams/plugin_data.pb.h"
#include "trialshim/base/crc32c.h"
#include "trialshim/base/file.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/python_text.h"
#include "trialshim/trainer/loggers.h"
#include "trialshim/trainer/options.h"

namespace trialshim::trainer {
namespace {

using config::Node;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// EventFileWriter's _global_uid: the n of the file name, per process.
std::atomic<int64_t> next_uid{0};

// Lightning's _flatten_dict(params, "/"): nested maps, and lists of maps
// by index; other values are leaves.
void Flatten(const Node& map, const std::string& parent,
             std::vector<std::pair<std::string, Node>>* out) {
  for (const auto& [k, v] : map.AsMap()) {
    const std::string key = parent.empty() ? k : parent + "/" + k;
    bool all_maps = v.is_list();
    for (size_t i = 0; all_maps && i < v.size(); ++i) {
      all_maps = v.AsList()[i].is_map();
    }
    if (v.is_map()) {
      Flatten(v, key, out);
    } else if (all_maps) {
      for (size_t i = 0; i < v.size(); ++i) {
        Flatten(v.AsList()[i], key + "/" + std::to_string(i), out);
      }
    } else {
      out->emplace_back(key, v);
    }
  }
}

// One summary of the hparams plugin, as torch's summary.hparams makes it.
tensorboard::Summary PluginSummary(
    const std::string& tag, const tensorboard::hparams::HParamsPluginData& d) {
  tensorboard::Summary summary;
  tensorboard::Summary::Value* value = summary.add_value();
  value->set_tag(tag);
  auto* plugin = value->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name("hparams");
  plugin->set_content(d.SerializeAsString());
  return summary;
}

// torch.utils.tensorboard.summary.hparams(params, metrics): the experiment
// (hparam and metric names), the session start (the values) and the
// session end (success). A bool is an int in Python, so it is logged as
// the number 0 or 1, as torch does.
std::vector<tensorboard::Summary> HParamsSummaries(
    const std::vector<std::pair<std::string, Node>>& params,
    const std::vector<std::string>& metrics) {
  namespace hp = tensorboard::hparams;
  hp::HParamsPluginData start, experiment, end;
  for (const auto& [key, v] : params) {
    google::protobuf::Value value;
    hp::HParamInfo* info = experiment.mutable_experiment()->add_hparam_infos();
    info->set_name(key);
    if (v.is_number() || v.is_bool()) {
      value.set_number_value(v.is_bool() ? (v.AsBool() ? 1 : 0) : v.AsDouble());
      info->set_type(hp::DATA_TYPE_FLOAT64);
    } else {
      // Lightning's _sanitize_params: str() of what is not a number.
      value.set_string_value(config::PythonStr(v));
      info->set_type(hp::DATA_TYPE_STRING);
    }
    (*start.mutable_session_start_info()->mutable_hparams())[key] = value;
  }
  for (const std::string& m : metrics) {
    experiment.mutable_experiment()
        ->add_metric_infos()
        ->mutable_name()
        ->set_tag(m);
  }
  end.mutable_session_end_info()->set_status(hp::STATUS_SUCCESS);
  // Ensure each carries its oneof even when empty.
  start.mutable_session_start_info();
  experiment.mutable_experiment();
  return {PluginSummary("_hparams_/experiment", experiment),
          PluginSummary("_hparams_/session_start_info", start),
          PluginSummary("_hparams_/session_end_info", end)};
}

}  // namespace

TensorBoardLogger::TensorBoardLogger(TensorBoardLoggerOptions options)
    : DirLogger(options), tb_(std::move(options)) {}

TensorBoardLogger::~TensorBoardLogger() {
  if (file_ != nullptr) std::fclose(file_);
}

void TensorBoardLogger::set_default_save_dir(const std::string& dir) {
  const char* vertex = std::getenv("AIP_TENSORBOARD_LOG_DIR");
  DirLogger::set_default_save_dir(
      vertex != nullptr && *vertex != '\0' ? std::string(vertex) : dir);
}

std::string TensorBoardLogger::log_dir() {
  const std::string dir = DirLogger::log_dir();
  return tb_.sub_dir.empty() ? dir : PathJoin({dir, tb_.sub_dir});
}

Status TensorBoardLogger::Open() {
  if (file_ != nullptr) return Status::Ok();
  const std::string dir = log_dir();
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  char name[512];
  std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.%s.%d.%lld",
                static_cast<long long>(Now()), host, static_cast<int>(getpid()),
                static_cast<long long>(next_uid++));
  const std::string path = PathJoin({dir, name}) + tb_.filename_suffix;
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return IOErrorFor("create", path, errno);
  path_ = path;
  last_flush_ = Now();
  tensorboard::Event first;
  first.set_wall_time(Now());
  first.set_file_version("brain.Event:2");
  first.mutable_source_metadata()->set_writer(
      "trialshim.trainer.TensorBoardLogger");
  TRIALSHIM_RETURN_IF_ERROR(Write(first.SerializeAsString()));
  return Flush();
}

Status TensorBoardLogger::Write(const std::string& event) {
  std::string record(8, '\0');
  uint64_t length = event.size();
  for (int i = 0; i < 8; ++i) record[i] = static_cast<char>(length >> (8 * i));
  auto append_u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i)
      record.push_back(static_cast<char>(v >> (8 * i)));
  };
  append_u32(MaskedCrc32c(std::string_view(record.data(), 8)));
  record += event;
  append_u32(MaskedCrc32c(event));
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    return IOErrorFor("write", path_, errno);
  }
  if (++queued_ >= tb_.max_queue || Now() - last_flush_ >= tb_.flush_secs) {
    return Flush();
  }
  return Status::Ok();
}

Status TensorBoardLogger::Flush() {
  queued_ = 0;
  last_flush_ = Now();
  if (file_ != nullptr && std::fflush(file_) != 0) {
    return IOErrorFor("write", path_, errno);
  }
  return Status::Ok();
}

Status TensorBoardLogger::resume(int64_t global_step) {
  // As TensorFlow's writers mark a restart: TensorBoard drops the events
  // at and after this step that the killed run wrote to this directory.
  TRIALSHIM_RETURN_IF_ERROR(Open());
  tensorboard::Event event;
  event.set_wall_time(Now());
  event.set_step(global_step);
  event.mutable_session_log()->set_status(tensorboard::SessionLog::START);
  return Write(event.SerializeAsString());
}

Status TensorBoardLogger::log_hyperparams(const Node& params) {
  if (!params.is_null() && !params.is_map()) {
    return Status::InvalidArgument(
        std::string("TensorBoardLogger.log_hyperparams: expected a map, got ") +
        params.type_name());
  }
  if (params.is_map()) {
    for (const auto& [k, v] : params.AsMap()) hparams_.Set(k, v);
  }
  // Without a metric (Lightning's hp_metric placeholder turned off) the
  // hyperparameters go only to hparams.yaml.
  if (!tb_.default_hp_metric) return Status::Ok();
  TRIALSHIM_RETURN_IF_ERROR(log_metrics({{"hp_metric", -1}}, 0, std::nullopt));
  std::vector<std::pair<std::string, Node>> flat;
  if (params.is_map()) Flatten(params, "", &flat);
  for (const tensorboard::Summary& s : HParamsSummaries(flat, {"hp_metric"})) {
    tensorboard::Event event;
    event.set_wall_time(Now());
    *event.mutable_summary() = s;
    TRIALSHIM_RETURN_IF_ERROR(Write(event.SerializeAsString()));
  }
  return Status::Ok();
}

Status TensorBoardLogger::log_metrics(
    const std::map<std::string, double>& metrics, int64_t step,
    std::optional<int64_t> epoch) {
  TRIALSHIM_RETURN_IF_ERROR(Open());
  std::vector<std::pair<std::string, double>> rows;
  for (const auto& kv : Prefixed(metrics)) rows.push_back(kv);
  if (epoch) rows.emplace_back(EpochName(), static_cast<double>(*epoch));
  for (const auto& [tag, value] : rows) {
    tensorboard::Event event;
    event.set_wall_time(Now());
    event.set_step(step);
    tensorboard::Summary::Value* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
    TRIALSHIM_RETURN_IF_ERROR(Write(event.SerializeAsString()));
  }
  return Status::Ok();
}

Status TensorBoardLogger::save() {
  TRIALSHIM_RETURN_IF_ERROR(Flush());
  if (file_ == nullptr) return Status::Ok();
  if (fsync(fileno(file_)) != 0) return IOErrorFor("sync", path_, errno);
  // As Lightning: hparams.yaml once, when the log directory exists.
  const std::string yaml = PathJoin({log_dir(), "hparams.yaml"});
  struct stat st;
  if (stat(yaml.c_str(), &st) == 0) return Status::Ok();
  return WriteFileDurably(yaml, config::ToYaml(hparams_));
}

Status TensorBoardLogger::finalize(const std::string& status) {
  Status saved = status == "success" ? save() : Flush();
  if (file_ != nullptr && std::fclose(file_) != 0 && saved.ok()) {
    saved = IOErrorFor("close", path_, errno);
  }
  file_ = nullptr;
  return saved;
}

}  // namespace trialshim::trainer
