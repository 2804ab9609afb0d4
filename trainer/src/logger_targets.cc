// The loggers' `_target_`s, with the keyword names and defaults of
// Lightning 2.6.2's CSVLogger and TensorBoardLogger (and of torch's
// SummaryWriter for the TensorBoardLogger's **kwargs that we honour).
#include "trialshim/config/schema.h"
#include "trialshim/trainer/loggers.h"

namespace trialshim::trainer {
namespace {

using config::Node;
using config::Schema;

// Both loggers' keywords; each Args struct declares its own members (a
// Schema binds members of the struct itself, not of a base).
#define TRIALSHIM_LOGGER_DIR_ARGS                     \
  std::optional<std::string> save_dir;                \
  std::optional<std::string> name = "lightning_logs"; \
  Node version;                                       \
  std::string prefix

// The keywords both loggers take, in Lightning's positional order (prefix
// comes later in TensorBoardLogger's signature: declared by the caller).
template <typename T>
void DirFields(Schema<T>* s) {
  s->Field("save_dir", &T::save_dir,
           "the directory of name/version/; null: the trainer's "
           "default_root_dir");
  s->Field("name", &T::name, "experiment directory; null or '': none");
  s->Field("version", &T::version,
           "int N: version_N; str: that directory; null: the next free "
           "version_N");
}

template <typename T>
StatusOr<LoggerDirOptions> DirOptions(const T& a, const std::string& cls) {
  LoggerDirOptions o;
  o.save_dir = a.save_dir.value_or("");
  o.name = a.name.value_or("");
  o.prefix = a.prefix;
  if (a.version.is_int()) {
    o.version = a.version.AsInt();
  } else if (a.version.is_string()) {
    o.version = a.version.AsString();
  } else if (!a.version.is_null()) {
    const std::string at =
        a.version.mark().known() ? a.version.mark().ToString() + ": " : "";
    return Status::InvalidArgument(at + cls +
                                   ".version: expected an int, a str or "
                                   "null, got " +
                                   a.version.type_name());
  }
  return o;
}

struct CsvArgs {
  TRIALSHIM_LOGGER_DIR_ARGS;
  int64_t flush_logs_every_n_steps = 100;
};

struct TensorBoardArgs {
  TRIALSHIM_LOGGER_DIR_ARGS;
  bool log_graph = false;
  bool default_hp_metric = true;
  std::optional<std::string> sub_dir;
  int64_t max_queue = 10;
  double flush_secs = 120;
  std::string filename_suffix;
};

#undef TRIALSHIM_LOGGER_DIR_ARGS

std::vector<std::string> Aliases(const std::string& cls,
                                 const std::string& module) {
  std::vector<std::string> out;
  for (const char* package : {"lightning.pytorch", "pytorch_lightning"}) {
    out.push_back(std::string(package) + ".loggers." + cls);
    out.push_back(std::string(package) + ".loggers." + module + "." + cls);
  }
  return out;
}

Status RegisterCsv(config::Registry* r) {
  Schema<CsvArgs> s("CSVLogger");
  DirFields(&s);
  s.Field("prefix", &CsvArgs::prefix, "put before every metric name with '-'");
  s.Field("flush_logs_every_n_steps", &CsvArgs::flush_logs_every_n_steps,
          "write metrics.csv every n steps (also at every epoch end)")
      .Range(1, 1e18);
  std::function<StatusOr<std::shared_ptr<Logger>>(const CsvArgs&)> make =
      [](const CsvArgs& a) -> StatusOr<std::shared_ptr<Logger>> {
    TRIALSHIM_ASSIGN_OR_RETURN(LoggerDirOptions dir,
                               DirOptions(a, "CSVLogger"));
    CsvLoggerOptions o;
    static_cast<LoggerDirOptions&>(o) = dir;
    o.flush_logs_every_n_steps = a.flush_logs_every_n_steps;
    return std::shared_ptr<Logger>(std::make_shared<CsvLogger>(o));
  };
  return r->Register<Logger, CsvArgs>(
      "trialshim::trainer::CsvLogger", s, make,
      "Lightning's CSVLogger: save_dir/name/version/metrics.csv and "
      "hparams.yaml",
      Aliases("CSVLogger", "csv_logs"));
}

Status RegisterTensorBoard(config::Registry* r) {
  Schema<TensorBoardArgs> s("TensorBoardLogger");
  DirFields(&s);
  s.Field("log_graph", &TensorBoardArgs::log_graph,
          "not supported: only false");
  s.Field("default_hp_metric", &TensorBoardArgs::default_hp_metric,
          "log hp_metric=-1 with the hyperparameters");
  s.Field("prefix", &TensorBoardArgs::prefix,
          "put before every metric name with '-'");
  s.Field("sub_dir", &TensorBoardArgs::sub_dir,
          "a directory under save_dir/name/version for the event file");
  s.Field("max_queue", &TensorBoardArgs::max_queue,
          "SummaryWriter's: flush after this many events")
      .Range(1, 1e9);
  s.Field("flush_secs", &TensorBoardArgs::flush_secs,
          "SummaryWriter's: flush after this many seconds")
      .Range(0, 1e9);
  s.Field("filename_suffix", &TensorBoardArgs::filename_suffix,
          "SummaryWriter's: appended to the event file's name");
  std::function<StatusOr<std::shared_ptr<Logger>>(const TensorBoardArgs&)>
      make = [](const TensorBoardArgs& a) -> StatusOr<std::shared_ptr<Logger>> {
    if (a.log_graph) {
      return Status::InvalidArgument(
          "TensorBoardLogger.log_graph: true is not supported by this "
          "trainer (it would trace the module into a TensorBoard GraphDef, "
          "which LibTorch does not write); set log_graph: false");
    }
    TRIALSHIM_ASSIGN_OR_RETURN(LoggerDirOptions dir,
                               DirOptions(a, "TensorBoardLogger"));
    TensorBoardLoggerOptions o;
    static_cast<LoggerDirOptions&>(o) = dir;
    o.default_hp_metric = a.default_hp_metric;
    o.sub_dir = a.sub_dir.value_or("");
    o.max_queue = a.max_queue;
    o.flush_secs = a.flush_secs;
    o.filename_suffix = a.filename_suffix;
    return std::shared_ptr<Logger>(std::make_shared<TensorBoardLogger>(o));
  };
  return r->Register<Logger, TensorBoardArgs>(
      "trialshim::trainer::TensorBoardLogger", s, make,
      "Lightning's TensorBoardLogger: save_dir/name/version/"
      "events.out.tfevents.* and hparams.yaml",
      Aliases("TensorBoardLogger", "tensorboard"));
}

// Lightning's other loggers (lightning-hydra-template's logger/ group has
// them) send runs to a service through its Python client: refused saying
// so, never as unknown.
Status RefuseServiceLoggers(config::Registry* r) {
  struct Service {
    const char* cls;
    const char* module;
    const char* service;
  };
  const Service services[] = {{"WandbLogger", "wandb", "Weights & Biases"},
                              {"MLFlowLogger", "mlflow", "MLflow"},
                              {"CometLogger", "comet", "Comet"},
                              {"NeptuneLogger", "neptune", "Neptune"}};
  const std::string use =
      " is not supported by this trainer: it logs through a Python client; "
      "use CSVLogger or TensorBoardLogger (Vertex AI TensorBoard reads its "
      "event files)";
  for (const Service& s : services) {
    TRIALSHIM_RETURN_IF_ERROR(r->Refuse(Aliases(s.cls, s.module),
                                        std::string(s.cls) + " (" + s.service +
                                            ")" + use));
  }
  return r->Refuse({"aim.pytorch_lightning.AimLogger"}, "AimLogger (Aim)" + use);
}

}  // namespace

Status RegisterLoggerTargets(config::Registry* registry) {
  TRIALSHIM_RETURN_IF_ERROR(RegisterCsv(registry));
  TRIALSHIM_RETURN_IF_ERROR(RegisterTensorBoard(registry));
  return RefuseServiceLoggers(registry);
}

}  // namespace trialshim::trainer
