// TrainerOptions::FromConfig and MapGcsUri: the trainer's configuration.
#include "trialshim/trainer/options.h"

#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"

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
  EXPECT_EQ(o->hypertune_monitor(), "val_acc");
  EXPECT_EQ(o->hypertune_tag(), "accuracy");
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
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name;
    EXPECT_NE(o.status().message().find(c.want), std::string::npos)
        << "case " << c.name << ": " << o.status().message();
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
      EXPECT_NE(o.status().message().find(c.error), std::string::npos)
          << c.name << ": " << o.status().message();
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
