// MakeTrainer (app.cc): the loggers of a job's config, from a top-level
// `logger:` map (lightning-hydra-template's logger/ group) or from
// trainer.logger, instantiated through the registry; TrainConfigSchema, the
// top level of such a config.
#include "trialshim/trainer/app.h"

#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/trainer/targets.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

StatusOr<std::unique_ptr<Trainer>> Make(const std::string& yaml) {
  auto log = app::Logger::FromConfig(config::Node(), config::Node(),
                                     config::Node(), "test");
  EXPECT_OK(log);
  auto cfg = config::LoadYamlString(yaml, "config.yaml");
  EXPECT_OK(cfg);
  if (!cfg.ok() || !log.ok()) return Status::Internal("setup");
  static std::unique_ptr<app::Logger> keep;  // outlives the trainer's sink
  keep = std::move(*log);
  app::Job job(*cfg, config::Node(), "/run", {}, keep.get());
  config::Registry registry;
  EXPECT_OK(RegisterTrainerTargets(&registry));
  return MakeTrainer(job, registry);
}

// "csv,tensorboard": the kinds of the trainer's loggers, in order.
std::string Kinds(const Trainer& t) {
  std::string out;
  for (const auto& l : t.loggers()) {
    out += out.empty() ? "" : ",";
    out += dynamic_cast<TensorBoardLogger*>(l.get()) ? "tensorboard" : "csv";
  }
  return out;
}

TEST(MakeTrainerTest, LoggersFromTheConfig) {
  const std::string csv =
      "{_target_: lightning.pytorch.loggers.CSVLogger, save_dir: /l}";
  const std::string tb =
      "{_target_: lightning.pytorch.loggers.TensorBoardLogger, save_dir: /l}";
  struct Case {
    const char* name;
    std::string yaml;
    std::string want;
  };
  const Case cases[] = {
      {"none given: the default", "trainer: {max_epochs: 1}\n", "csv"},
      {"template logger/ group, null entries skipped",
       "logger:\n  csv: " + csv + "\n  tensorboard: " + tb +
           "\n  wandb: null\n",
       "csv,tensorboard"},
      {"one logger node at the top", "logger: " + tb + "\n", "tensorboard"},
      {"empty logger map: none (the template passes logger=[])", "logger: {}\n",
       ""},
      {"trainer.logger node", "trainer:\n  logger: " + tb + "\n",
       "tensorboard"},
      {"trainer.logger list", "trainer:\n  logger: [" + tb + ", " + csv + "]\n",
       "tensorboard,csv"},
      {"trainer.logger false", "trainer: {logger: false}\n", ""},
      {"logger: wins over trainer.logger",
       "trainer: {logger: false}\nlogger:\n  csv: " + csv + "\n", "csv"},
  };
  for (const Case& c : cases) {
    auto t = Make(c.yaml);
    ASSERT_OK(t) << c.name;
    EXPECT_EQ(Kinds(**t), c.want) << c.name;
  }
  // Known before fit, as Lightning's trainer.log_dir: the default logger
  // writes into the run directory.
  auto t = Make("trainer: {max_epochs: 1}\n");
  ASSERT_OK(t);
  EXPECT_EQ((*t)->logger()->log_dir(), "/run/");
}

TEST(MakeTrainerTest, BadLoggerConfigs) {
  struct Case {
    const char* name;
    std::string yaml;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"typo in a keyword",
       "logger:\n  csv: {_target_: lightning.pytorch.loggers.CSVLogger, nmae: "
       "x}\n",
       {"nmae", "did you mean 'name'?"}},
      {"unknown class",
       "logger:\n  w: {_target_: lightning.pytorch.loggers.WandbLogger}\n",
       {"lightning.pytorch.loggers.WandbLogger"}},
      {"not a node",
       "logger: csv\n",
       {"logger: expected a logger node or a map of them"}},
      {"trainer.logger of another type",
       "trainer: {logger: 3}\n",
       {"trainer.logger: expected true, false"}},
  };
  for (const Case& c : cases) {
    auto t = Make(c.yaml);
    ASSERT_FALSE(t.ok()) << c.name;
    for (const std::string& w : c.want) {
      EXPECT_THAT(t, StatusIs(_, HasSubstr(w))) << c.name;
    }
  }
}

// lightning-hydra-template's configs/train.yaml top level binds; a typo or
// a missing group is refused as OmegaConf refuses it for a dataclass.
TEST(TrainConfigSchemaTest, BindsTheTemplatesTopLevel) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string error;  // "": binds
  };
  const std::string groups = "data: {_target_: d}\nmodel: {_target_: m}\n";
  const std::vector<Case> cases = {
      {"the template's keys",
       groups + "task_name: train\ntags: [dev]\ntrain: true\ntest: true\n"
                "ckpt_path: null\nseed: 12345\nextras: {print_config: true}\n"
                "paths: {output_dir: /o}\ncallbacks: {}\nlogger: null\n"
                "trainer: {max_epochs: 3}\noptimized_metric: val/acc_best\n",
       ""},
      {"seed null", groups + "seed: null\n", ""},
      {"a typo", groups + "loger: {}\n",
       "Key 'loger' not in 'TrainConfig' (did you mean 'logger'?)"},
      {"no model", "data: {_target_: d}\n", "model"},
      {"seed a string", groups + "seed: abc\n", "seed"},
  };
  for (const Case& c : cases) {
    auto cfg = config::LoadYamlString(c.yaml, "config.yaml");
    ASSERT_OK(cfg) << c.name;
    auto bound = TrainConfigSchema().Bind(*cfg);
    if (c.error.empty()) {
      EXPECT_OK(bound) << c.name;
      continue;
    }
    ASSERT_FALSE(bound.ok()) << c.name;
    EXPECT_THAT(bound, StatusIs(_, HasSubstr(c.error))) << c.name;
  }
}

}  // namespace
}  // namespace trialshim::trainer
