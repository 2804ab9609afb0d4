// The loggers' _target_s (logger_targets.cc): Lightning's class paths and
// keywords, as lightning-hydra-template's logger/csv.yaml and
// logger/tensorboard.yaml write them, and the refusals.
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/trainer/loggers.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using config::Node;

StatusOr<std::shared_ptr<Logger>> Make(const std::string& yaml) {
  config::Registry r;
  EXPECT_OK(RegisterLoggerTargets(&r));
  StatusOr<Node> cfg =
      config::LoadYamlString("logger:\n" + yaml, "logger.yaml");
  EXPECT_OK(cfg);
  if (!cfg.ok()) return cfg.status();
  return r.InstantiateAs<Logger>(*cfg, "logger");
}

TEST(LoggerTargetsTest, LightningClassPathsAndKeywords) {
  struct Case {
    const char* name;
    const char* yaml;
    bool tensorboard;
    std::string want_dir;
  };
  const Case cases[] = {
      {"template csv.yaml",
       "  _target_: lightning.pytorch.loggers.csv_logs.CSVLogger\n"
       "  save_dir: /out\n  name: csv/\n  prefix: ''\n",
       false, "/out/csv/version_0"},
      {"template tensorboard.yaml",
       "  _target_: lightning.pytorch.loggers.tensorboard.TensorBoardLogger\n"
       "  save_dir: /out/tensorboard/\n  name: null\n  log_graph: false\n"
       "  default_hp_metric: true\n  prefix: ''\n",
       true, "/out/tensorboard/version_0"},
      {"pytorch_lightning alias, version number, flush",
       "  _target_: pytorch_lightning.loggers.CSVLogger\n  save_dir: /o\n"
       "  version: 7\n  flush_logs_every_n_steps: 10\n",
       false, "/o/lightning_logs/version_7"},
      {"positional save_dir, version string, SummaryWriter keywords",
       "  _target_: lightning.pytorch.loggers.TensorBoardLogger\n"
       "  _args_: [/o]\n  version: run\n  sub_dir: s\n  max_queue: 1\n"
       "  flush_secs: 5\n  filename_suffix: .x\n",
       true, "/o/lightning_logs/run/s"},
      {"native name, gs:// save_dir",
       "  _target_: trialshim::trainer::CsvLogger\n  save_dir: gs://b/logs\n"
       "  version: 0\n",
       false, "/gcs/b/logs/lightning_logs/version_0"},
  };
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<Logger>> made = Make(c.yaml);
    ASSERT_OK(made) << c.name;
    EXPECT_EQ(dynamic_cast<TensorBoardLogger*>(made->get()) != nullptr,
              c.tensorboard)
        << c.name;
    EXPECT_EQ((*made)->log_dir(), c.want_dir) << c.name;
  }
}

TEST(LoggerTargetsTest, RefusesWhatItCanNotDo) {
  struct Case {
    const char* name;
    const char* yaml;
    std::vector<std::string> want;  // in the message
  };
  const Case cases[] = {
      {"typo",
       "  _target_: lightning.pytorch.loggers.CSVLogger\n  save_dri: /o\n",
       {"save_dri", "did you mean 'save_dir'?"}},
      {"a SummaryWriter keyword we do not honour",
       "  _target_: lightning.pytorch.loggers.TensorBoardLogger\n"
       "  purge_step: 3\n",
       {"purge_step"}},
      {"log_graph",
       "  _target_: lightning.pytorch.loggers.TensorBoardLogger\n"
       "  log_graph: true\n",
       {"log_graph: true is not supported", "set log_graph: false"}},
      {"version of another type",
       "  _target_: lightning.pytorch.loggers.CSVLogger\n  version: [1]\n",
       {"CSVLogger.version: expected an int, a str or null, got list"}},
      {"flush of 0",
       "  _target_: lightning.pytorch.loggers.CSVLogger\n"
       "  flush_logs_every_n_steps: 0\n",
       {"flush_logs_every_n_steps"}},
  };
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<Logger>> made = Make(c.yaml);
    ASSERT_FALSE(made.ok()) << c.name;
    EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument) << c.name;
    for (const std::string& w : c.want) {
      EXPECT_THAT(made, StatusIs(_, HasSubstr(w))) << c.name;
    }
  }
}

}  // namespace
}  // namespace trialshim::trainer
