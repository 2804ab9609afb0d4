// TrainerOptions::FromConfig and MapGcsUri: the trainer's configuration.
// The Anchors* test asks the installed Lightning 2.2.5 for its Trainer's
// arguments.
#include "trialshim/trainer/options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "trialshim/config/yaml_loader.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Not;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using config::Node;

TEST(TrainerOptionsTest, ReadsLightningNames) {
  Node trainer = Node::MakeMap({
      {"max_epochs", Node::Int(7)},
      {"max_steps", Node::Int(100)},
      {"limit_train_batches", Node::Double(0.5)},
      {"limit_val_batches", Node::Int(3)},
      {"gradient_clip_val", Node::Double(1.5)},
      {"gradient_clip_algorithm", Node::String("value")},
      {"accumulate_grad_batches", Node::Int(4)},
      {"deterministic", Node::Bool(true)},
      {"fast_dev_run", Node::Bool(true)},
      {"num_threads", Node::Int(2)},
      {"accelerator", Node::String("cpu")},
      {"on_nonfinite", Node::String("skip")},
      {"ckpt_path", Node::String("gs://b/c/last.ckpt")},
      {"seed", Node::Null()},  // null keeps the default
  });
  Node hypertune = Node::MakeMap({{"monitor", Node::String("val_acc")},
                                  {"tag", Node::String("accuracy")}});
  auto o = TrainerOptions::FromConfig(trainer, &hypertune);
  ASSERT_OK(o);
  EXPECT_EQ(o->max_epochs(), 7);
  EXPECT_EQ(o->max_steps(), 100);
  EXPECT_EQ(o->limit_train_batches().Apply(10), 5);
  EXPECT_EQ(o->limit_val_batches().Apply(10), 3);
  EXPECT_EQ(o->limit_val_batches().Apply(2), 2);
  EXPECT_EQ(o->gradient_clip_val(), 1.5);
  EXPECT_EQ(o->gradient_clip_algorithm(), "value");
  EXPECT_EQ(o->accumulate_grad_batches(), 4);
  EXPECT_TRUE(o->deterministic());
  EXPECT_EQ(o->fast_dev_run(), 1);
  EXPECT_EQ(o->num_threads(), 2);
  EXPECT_EQ(o->on_nonfinite(), "skip");
  EXPECT_EQ(o->seed(), -1);
  EXPECT_EQ(o->hypertune_monitor(), std::vector<std::string>{"val_acc"});
  EXPECT_EQ(o->hypertune_tag(), std::vector<std::string>{"accuracy"});
  EXPECT_EQ(MapGcsUri(o->ckpt_path()), "/gcs/b/c/last.ckpt");
  EXPECT_EQ(MapGcsUri("/local/x"), "/local/x");
}

TEST(TrainerOptionsTest, RejectsBadKeysAndValues) {
  struct Case {
    std::string name;
    std::string key;
    Node value;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"typo", "max_epoch", Node::Int(3),
       "unknown trainer option 'trainer.max_epoch' (did you mean 'max_epochs' "
       "or "
       "'min_epochs'?)"},
      {"typo 2", "gradient_clip", Node::Double(1),
       "(did you mean 'gradient_clip_val' or 'gradient_clip_algorithm'?)"},
      {"string for int", "max_epochs", Node::String("ten"),
       "trainer.max_epochs: expected an int, got str 'ten'"},
      {"below minimum", "accumulate_grad_batches", Node::Int(0),
       "trainer.accumulate_grad_batches: expected an int >= 1, got 0"},
      {"bad choice", "gradient_clip_algorithm", Node::String("norn"),
       "expected one of norm|value, got 'norn' (did you mean 'norm'?)"},
      {"fraction above 1", "limit_train_batches", Node::Double(1.5),
       "expected an int count >= 0 or a float fraction in [0, 1]"},
      {"negative clip", "gradient_clip_val", Node::Double(-1),
       "expected a finite number >= 0"},
  };
  for (const auto& c : cases) {
    auto o = TrainerOptions::FromConfig(Node::MakeMap({{c.key, c.value}}));
    ASSERT_FALSE(o.ok()) << "case " << c.name;
    EXPECT_THAT(o, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

// An unknown key is reported where the key is written, also when its value
// is a map (which starts on the next line).
TEST(TrainerOptionsTest, UnknownKeysAreReportedAtTheKey) {
  StatusOr<Node> cfg = config::LoadYamlString(
      "trainer:\n  max_epochs: 3\n  max_epoch:\n    n: 1\n"
      "hypertune:\n  monitor: val_acc\n  metric: x\n",
      "config.yaml");
  ASSERT_OK(cfg);
  auto o = TrainerOptions::FromConfig(*cfg->Get("trainer"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message().rfind(
                "config.yaml:3:3: unknown trainer option 'trainer.max_epoch'", 0),
            0u)
      << o.status().message();
  Node trainer = Node::MakeMap();
  o = TrainerOptions::FromConfig(trainer, cfg->Get("hypertune"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message().rfind(
                "config.yaml:7:3: unknown option 'hypertune.metric'", 0),
            0u)
      << o.status().message();
}

// hypertune.monitor and hypertune.tag: a name or a list of names (one
// report each, for a study with several metricSpecs); what else is there
// is refused at its place.
TEST(TrainerOptionsTest, HypertuneTakesAMetricOrAListOfThem) {
  struct Case {
    const char* name;
    const char* yaml;
    std::vector<std::string> monitor, tag;
    const char* error;  // "" when accepted
  } cases[] = {
      {"one", "monitor: val_acc", {"val_acc"}, {}, ""},
      {"list", "monitor: [val_acc, val_loss]", {"val_acc", "val_loss"}, {}, ""},
      {"list_with_tags",
       "monitor: [val_acc, val_loss]\ntag: [acc, loss]",
       {"val_acc", "val_loss"},
       {"acc", "loss"},
       ""},
      {"tags_not_one_each",
       "monitor: [val_acc, val_loss]\ntag: acc",
       {},
       {},
       "config.yaml:2:6: hypertune.tag: 1 tag for 2 monitored metrics: give "
       "one tag per hypertune.monitor entry, or hypertune.tag=null"},
      {"number_in_list",
       "monitor: [val_acc, 3]",
       {},
       {},
       "config.yaml:1:20: hypertune.monitor: expected a list of metric names, "
       "got int 3 in it"},
      {"twice",
       "monitor: [val_acc, val_acc]",
       {},
       {},
       "config.yaml:1:20: hypertune.monitor: 'val_acc' is listed twice"},
      {"map",
       "monitor: {a: 1}",
       {},
       {},
       "config.yaml:1:10: hypertune.monitor: expected a metric name or a list "
       "of them (hypertune.monitor=[val_acc,val_loss]), got dict"},
  };
  for (const Case& c : cases) {
    StatusOr<Node> cfg = config::LoadYamlString(c.yaml, "config.yaml");
    ASSERT_OK(cfg) << c.name;
    auto o = TrainerOptions::FromConfig(Node::MakeMap(), &*cfg);
    if (std::string(c.error).empty()) {
      ASSERT_OK(o) << c.name;
      EXPECT_EQ(o->hypertune_monitor(), c.monitor) << c.name;
      EXPECT_EQ(o->hypertune_tag(), c.tag) << c.name;
    } else {
      ASSERT_FALSE(o.ok()) << c.name;
      EXPECT_EQ(o.status().message().rfind(c.error, 0), 0u)
          << c.name << ": " << o.status().message();
    }
  }
}

// Lightning 2.6.2's Trainer.__init__ arguments
// (lightning/pytorch/trainer/trainer.py): each one is a known key, none is
// "unknown". `logger` is read by the loggers (loggers.h).
// Every name of `lightning` is a key FromConfig knows and takes as null.
void ExpectKnowsEvery(const std::vector<std::string>& lightning) {
  const auto& keys = TrainerOptions::ConfigKeys();
  for (const auto& name : lightning) {
    if (name == "logger") continue;  // the loggers' (loggers.h)
    EXPECT_NE(std::find(keys.begin(), keys.end(), name), keys.end()) << name;
    // Null is Lightning's None: every argument takes it (None for
    // check_val_every_n_epoch asks for an int val_check_interval).
    Node::Map m = {{name, Node::Null()}};
    if (name == "check_val_every_n_epoch")
      m.emplace_back("val_check_interval", Node::Int(3));
    EXPECT_OK(TrainerOptions::FromConfig(Node::MakeMap(m))) << name;
  }
}

TEST(TrainerOptionsTest, KnowsEveryLightningTrainerArgument) {
  const std::vector<std::string> lightning = {
      "accelerator", "strategy", "devices", "num_nodes", "precision",
      "callbacks", "fast_dev_run", "max_epochs", "min_epochs", "max_steps",
      "min_steps", "max_time", "limit_train_batches", "limit_val_batches",
      "limit_test_batches", "limit_predict_batches", "overfit_batches",
      "val_check_interval", "check_val_every_n_epoch", "num_sanity_val_steps",
      "log_every_n_steps", "enable_checkpointing", "enable_progress_bar",
      "enable_model_summary", "accumulate_grad_batches", "gradient_clip_val",
      "gradient_clip_algorithm", "deterministic", "benchmark",
      "inference_mode", "use_distributed_sampler", "profiler",
      "detect_anomaly", "barebones", "plugins", "sync_batchnorm",
      "reload_dataloaders_every_n_epochs", "default_root_dir",
      "enable_autolog_hparams", "model_registry", "suggest_integrations"};
  ExpectKnowsEvery(lightning);
}

// The installed Lightning's own list (2.2.5 has all but the 2.6 additions
// enable_autolog_hparams, model_registry and suggest_integrations).
TEST(AnchorsTrainerOptions, KnowsEveryArgumentOfTheInstalledTrainer) {
  SKIP_WITHOUT_ANCHORS();
  testing::Finished f = testing::RunToEnd(
      {testing::AnchorsPython(), "-c",
       "import inspect, json, lightning.pytorch as pl\n"
       "print(json.dumps(list(inspect.signature(pl.Trainer.__init__)"
       ".parameters)[1:]))"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto names = nlohmann::json::parse(f.out).get<std::vector<std::string>>();
  EXPECT_GE(names.size(), 39u) << f.out;
  ExpectKnowsEvery(names);
}

// Our defaults against Lightning's (its None resolved as Lightning resolves
// it: gradient_clip_val None is no clipping, min_epochs None is 0, ...).
TEST(TrainerOptionsTest, DefaultsAreLightnings) {
  const TrainerOptions o;
  struct Case {
    std::string name;
    std::string got;
    std::string lightning;
  };
  auto str = [](auto v) { return std::to_string(v); };
  const std::vector<Case> cases = {
      {"accelerator", o.accelerator(), "auto"},
      {"strategy", o.strategy(), "auto"},
      {"devices (auto)", str(o.devices()), "-1"},
      {"num_nodes", str(o.num_nodes()), "1"},
      {"precision", o.precision(), "32-true"},
      {"fast_dev_run", str(o.fast_dev_run()), "0"},
      {"max_epochs (None)", o.max_epochs() ? "set" : "None", "None"},
      {"min_epochs", str(o.min_epochs()), "0"},
      {"max_steps", str(o.max_steps()), "-1"},
      {"min_steps (None)", str(o.min_steps()), "-1"},
      {"max_time (None)", str(o.max_time() < 0), "1"},
      {"limit_train_batches", str(o.limit_train_batches().Apply(7)), "7"},
      {"limit_val_batches", str(o.limit_val_batches().Apply(7)), "7"},
      {"limit_test_batches", str(o.limit_test_batches().Apply(7)), "7"},
      {"check_val_every_n_epoch", str(*o.check_val_every_n_epoch()), "1"},
      {"val_check_interval", str(o.val_check_interval().Apply(7)), "7"},
      {"num_sanity_val_steps", str(o.num_sanity_val_steps()), "2"},
      {"log_every_n_steps", str(o.log_every_n_steps()), "50"},
      {"enable_checkpointing", str(o.enable_checkpointing()), "1"},
      {"enable_progress_bar", str(o.enable_progress_bar()), "1"},
      {"enable_model_summary", str(o.enable_model_summary()), "1"},
      {"accumulate_grad_batches", str(o.accumulate_grad_batches()), "1"},
      {"gradient_clip_val (None)", str(o.gradient_clip_val()), str(0.0)},
      {"gradient_clip_algorithm", o.gradient_clip_algorithm(), "norm"},
      {"deterministic", str(o.deterministic()), "0"},
      {"benchmark", str(o.benchmark()), "0"},
      {"inference_mode", str(o.inference_mode()), "1"},
      {"detect_anomaly", str(o.detect_anomaly()), "0"},
  };
  for (const auto& c : cases) EXPECT_EQ(c.got, c.lightning) << c.name;
}

// Lightning's spellings, read into our values.
TEST(TrainerOptionsTest, ReadsLightningSpellings) {
  struct Case {
    std::string name;
    std::string key;
    Node value;
    std::function<std::string(const TrainerOptions&)> read;
    std::string want;
  };
  auto precision = [](const TrainerOptions& o) { return o.precision(); };
  auto accelerator = [](const TrainerOptions& o) { return o.accelerator(); };
  auto max_time = [](const TrainerOptions& o) {
    return std::to_string(o.max_time());
  };
  auto target = [](const TrainerOptions&) { return std::string("ok"); };
  const std::vector<Case> cases = {
      {"precision int 32", "precision", Node::Int(32), precision, "32-true"},
      {"precision str 32", "precision", Node::String("32"), precision, "32-true"},
      {"precision 64", "precision", Node::Int(64), precision, "64-true"},
      {"precision 64-true", "precision", Node::String("64-true"), precision,
       "64-true"},
      {"precision bf16", "precision", Node::String("bf16"), precision,
       "bf16-mixed"},
      {"precision bf16-mixed", "precision", Node::String("bf16-mixed"),
       precision, "bf16-mixed"},
      {"precision bf16-true", "precision", Node::String("bf16-true"),
       precision, "bf16-true"},
      // Read anywhere; Setup refuses float16 on the CPU (TrainerTest).
      {"precision 16 is 16-mixed", "precision", Node::Int(16), precision,
       "16-mixed"},
      {"precision 16-true", "precision", Node::String("16-true"), precision,
       "16-true"},
      {"devices list", "devices", Node::MakeList({Node::Int(2), Node::Int(0)}),
       [](const TrainerOptions& o) {
         std::string ids;
         for (int64_t i : o.device_ids()) ids += std::to_string(i) + ",";
         return std::to_string(o.devices()) + ":" + ids;
       },
       "2:2,0,"},
      {"devices string list", "devices", Node::String("1,3"),
       [](const TrainerOptions& o) {
         return std::to_string(o.devices()) + ":" +
                std::to_string(o.device_ids().at(1));
       },
       "2:3"},
      {"devices string count", "devices", Node::String("2"),
       [](const TrainerOptions& o) {
         return std::to_string(o.devices()) + ":" +
                std::to_string(o.device_ids().size());
       },
       "2:0"},
      {"matmul precision", "float32_matmul_precision", Node::String("high"),
       [](const TrainerOptions& o) { return o.float32_matmul_precision(); },
       "high"},
      {"accelerator gpu is cuda", "accelerator", Node::String("gpu"),
       accelerator, "cuda"},
      {"accelerator cpu", "accelerator", Node::String("cpu"), accelerator,
       "cpu"},
      {"max_time DD:HH:MM:SS", "max_time", Node::String("00:12:00:00"),
       max_time, std::to_string(43200.0)},
      {"max_time days", "max_time", Node::String("01:00:00:30"), max_time,
       std::to_string(86430.0)},
      {"max_time map", "max_time",
       Node::MakeMap({{"hours", Node::Int(1)}, {"minutes", Node::Double(30)}}),
       max_time, std::to_string(5400.0)},
      {"deterministic warn", "deterministic", Node::String("warn"),
       [](const TrainerOptions& o) {
         return std::to_string(o.deterministic()) +
                std::to_string(o.deterministic_warn_only());
       },
       "11"},
      {"num_sanity_val_steps all", "num_sanity_val_steps", Node::Int(-1),
       [](const TrainerOptions& o) {
         return std::to_string(o.num_sanity_val_steps());
       },
       "-1"},
      {"max_epochs -1 (infinite)", "max_epochs", Node::Int(-1),
       [](const TrainerOptions& o) { return std::to_string(*o.max_epochs()); },
       "-1"},
      {"strategy ddp_find_unused_parameters_false", "strategy",
       Node::String("ddp_find_unused_parameters_false"),
       [](const TrainerOptions& o) { return o.strategy(); }, "ddp"},
      {"ckpt_path last", "ckpt_path", Node::String("last"),
       [](const TrainerOptions& o) { return o.ckpt_path(); }, "last"},
      {"_target_ lightning.pytorch.trainer.Trainer", "_target_",
       Node::String("lightning.pytorch.trainer.Trainer"), target, "ok"},
      {"_target_ lightning.pytorch.Trainer", "_target_",
       Node::String("lightning.pytorch.Trainer"), target, "ok"},
      {"_target_ pytorch_lightning.Trainer", "_target_",
       Node::String("pytorch_lightning.Trainer"), target, "ok"},
      {"_target_ pytorch_lightning.trainer.Trainer", "_target_",
       Node::String("pytorch_lightning.trainer.Trainer"), target, "ok"},
      {"unsupported at its default", "overfit_batches", Node::Double(0.0),
       target, "ok"},
      {"plugins empty", "plugins", Node::MakeList(), target, "ok"},
      {"val_check_interval fraction", "val_check_interval", Node::Double(0.25),
       [](const TrainerOptions& o) {
         return std::to_string(o.val_check_interval().Apply(8));
       },
       "2"},
      {"val_check_interval count", "val_check_interval", Node::Int(5),
       [](const TrainerOptions& o) {
         return std::to_string(o.val_check_interval().Apply(8));
       },
       "5"},
  };
  for (const auto& c : cases) {
    auto o = TrainerOptions::FromConfig(Node::MakeMap({{c.key, c.value}}));
    ASSERT_OK(o) << c.name;
    EXPECT_EQ(c.read(*o), c.want) << c.name;
  }
}

// What this build can not do is refused saying why, never as a typo.
TEST(TrainerOptionsTest, RefusesWhatThisBuildLacksWithTheReason) {
  struct Case {
    std::string name;
    std::string key;
    Node value;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"mps", "accelerator", Node::String("mps"),
       "trainer.accelerator=mps is not available in this build"},
      {"tpu", "accelerator", Node::String("tpu"), "not available in this build"},
      {"hpu", "accelerator", Node::String("hpu"), "not available in this build"},
      {"ipu", "accelerator", Node::String("ipu"), "not available in this build"},
      {"devices empty list", "devices", Node::MakeList({}),
       "trainer.devices: expected 'auto', -1, an int >= 1 or a list"},
      {"devices twice", "devices",
       Node::MakeList({Node::Int(1), Node::Int(1)}),
       "trainer.devices lists a device twice"},
      {"devices bad string", "devices", Node::String("0,x"),
       "a list of device indices"},
      {"matmul precision typo", "float32_matmul_precision",
       Node::String("hgh"), "did you mean 'high'"},
      {"transformer-engine", "precision", Node::String("transformer-engine"),
       "Transformer Engine"},
      {"precision typo", "precision", Node::String("33"),
       "expected one of 32-true|64-true|bf16-mixed|bf16-true|16-mixed|"
       "16-true"},
      {"overfit_batches", "overfit_batches", Node::Int(10),
       "trainer.overfit_batches is not supported by this trainer"},
      {"val_check_interval above 1", "val_check_interval", Node::Double(1.5),
       "trainer.val_check_interval: expected an int count of batches >= 1 or "
       "a float fraction of an epoch in (0, 1]"},
      {"check_val_every_n_epoch null with a fraction",
       "check_val_every_n_epoch", Node::Null(),
       "trainer.check_val_every_n_epoch=null needs an int "
       "trainer.val_check_interval"},
      {"profiler", "profiler", Node::String("simple"), "no profiler"},
      {"sync_batchnorm", "sync_batchnorm", Node::Bool(true), "SyncBatchNorm"},
      {"reload_dataloaders", "reload_dataloaders_every_n_epochs", Node::Int(1),
       "made once per fit"},
      {"use_distributed_sampler", "use_distributed_sampler", Node::Bool(false),
       "its own shard"},
      {"barebones", "barebones", Node::Bool(true), "one by one"},
      {"plugins", "plugins", Node::MakeList({Node::String("x")}),
       "Python classes"},
      {"limit_predict_batches", "limit_predict_batches", Node::Int(3),
       "no predict loop"},
      {"fsdp", "strategy", Node::String("fsdp"), "no sharded or XLA training"},
      {"ddp_spawn", "strategy", Node::String("ddp_spawn"),
       "use ddp with trainer.devices=N"},
      {"other _target_", "_target_", Node::String("my.Trainer"),
       "trainer._target_: expected Lightning's Trainer"},
      {"ckpt_path hpc", "ckpt_path", Node::String("hpc"), "SLURM"},
      {"max_time three fields", "max_time", Node::String("01:02:03"),
       "trainer.max_time: expected a duration"},
      {"max_time unit typo", "max_time", Node::MakeMap({{"hour", Node::Int(1)}}),
       "trainer.max_time.hour: not a timedelta keyword (did you mean 'hours'?)"},
      {"deterministic typo", "deterministic", Node::String("warm"),
       "expected true, false or 'warn'"},
  };
  for (const auto& c : cases) {
    auto o = TrainerOptions::FromConfig(Node::MakeMap({{c.key, c.value}}));
    ASSERT_FALSE(o.ok()) << c.name;
    EXPECT_THAT(o, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << c.name;
    if (c.key == "accelerator") {
      EXPECT_THAT(o, StatusIs(_, Not(HasSubstr("did you mean")))) << c.name;
    }
  }
}

// trainer.logger: Lightning's bool, or logger nodes kept for MakeTrainer.
TEST(TrainerOptionsTest, ReadsLoggerAsLightning) {
  const Node csv = Node::MakeMap(
      {{"_target_", Node::String("lightning.pytorch.loggers.CSVLogger")}});
  struct Case {
    const char* name;
    Node value;
    bool enabled;
    bool nodes;
    std::string error;  // "" for none
  };
  const std::vector<Case> cases = {
      {"absent or null: the default", Node::Null(), true, false, ""},
      {"false: none", Node::Bool(false), false, false, ""},
      {"an empty list: none, as Python's [] is falsy", Node::MakeList({}),
       false, false, ""},
      {"true", Node::Bool(true), true, false, ""},
      {"one logger node", csv, true, true, ""},
      {"a list of them", Node::MakeList({csv, csv}), true, true, ""},
      {"a string", Node::String("csv"), true, false,
       "trainer.logger: expected true, false, a logger node"},
      {"a list of strings", Node::MakeList({Node::String("csv")}), true, false,
       "trainer.logger: expected true, false, a logger node"},
  };
  for (const Case& c : cases) {
    auto o = TrainerOptions::FromConfig(Node::MakeMap({{"logger", c.value}}));
    if (!c.error.empty()) {
      ASSERT_FALSE(o.ok()) << c.name;
      EXPECT_THAT(o, StatusIs(_, HasSubstr(c.error))) << c.name;
      continue;
    }
    ASSERT_OK(o) << c.name;
    EXPECT_EQ(o->logger().enabled, c.enabled) << c.name;
    EXPECT_EQ(!o->logger().config.is_null(), c.nodes) << c.name;
    if (c.nodes) {
      EXPECT_EQ(o->logger().config, c.value) << c.name;
    }
  }
}

}  // namespace
}  // namespace trialshim::trainer
