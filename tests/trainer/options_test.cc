// TrainerOptions::FromConfig, MapGcsUri, MetricStore and MetricsCsv: the
// parts of the trainer that need no LibTorch.
#include "trialshim/trainer/options.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/trainer/metrics.h"

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

TEST(MetricStoreTest, FollowsLightningAggregation) {
  MetricStore store;
  store.BeginStep(Stage::kTrain, 2);
  store.Log("loss", 1.0, {});
  store.Log("acc", 0.5, LogOptions().OnEpoch(true));
  store.BeginStep(Stage::kTrain, 6);
  store.Log("loss", 3.0, {});
  store.Log("acc", 1.0, LogOptions().OnEpoch(true));
  EXPECT_EQ(store.step_values(),
            (std::map<std::string, double>{{"acc_step", 1.0}, {"loss", 3.0}}));
  // Epoch means are weighted by batch size: (0.5*2 + 1*6) / 8.
  EXPECT_EQ(store.EpochValues(Stage::kTrain),
            (std::map<std::string, double>{{"acc_epoch", 0.875}}));
  store.BeginStep(Stage::kValidate, 4);
  store.Log("val_loss", 2.0, {});
  EXPECT_TRUE(store.step_values().empty());
  EXPECT_EQ(store.EpochValues(Stage::kValidate),
            (std::map<std::string, double>{{"val_loss", 2.0}}));

  MetricStore restored;
  ASSERT_OK(restored.LoadState(store.State()));
  EXPECT_EQ(restored.EpochValues(Stage::kTrain),
            store.EpochValues(Stage::kTrain));
}

TEST(MetricsCsvTest, WritesWhatCsvLoggerWrites) {
  testing::TempDir dir;
  MetricsCsv csv(dir.Join("metrics.csv"));
  csv.Add(0, 49, {{"train_loss", 0.25}});
  csv.Add(0, 99, {{"val_loss", 1e-05}, {"val_acc", 0.9}});
  csv.Add(1, 149, {{"train_loss", 2.0}, {"lr-Adam", 0.001}});
  ASSERT_OK(csv.Flush());
  // Lightning: csv.DictWriter over the sorted union of keys ("\r\n" after
  // each row), floats as Python's str(float).
  EXPECT_EQ(testing::ReadFile(dir.Join("metrics.csv")),
            "epoch,lr-Adam,step,train_loss,val_acc,val_loss\r\n"
            "0,,49,0.25,,\r\n"
            "0,,99,,0.9,1e-05\r\n"
            "1,0.001,149,2.0,,\r\n");
}

// A metrics.csv that can not be written is an IOError naming the file and
// the reason, and the last good file stays, with no temporary beside it.
TEST(MetricsCsvTest, WriteFailureKeepsTheOldFileAndNoTemporary) {
  struct Case {
    const char* name;
    std::string target;  // relative to the test's directory
    rlim_t size_limit;   // 0: none
    int reason;
  };
  const Case cases[] = {
      {"file size limit (as a full disk)", "metrics.csv", 40, EFBIG},
      {"parent is a regular file", "file/metrics.csv", 0, ENOTDIR},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testing::TempDir dir;
    dir.Write("file", "f");
    MetricsCsv csv(dir.Join(c.target));
    csv.Add(0, 9, {{"train_loss", 0.5}});
    std::set<std::string> want = {"file"};
    std::string before;
    if (c.size_limit > 0) {
      ASSERT_OK(csv.Flush());
      before = testing::ReadFile(csv.path());
      want.insert(c.target);
    }
    for (int step = 19; step < 200; step += 10) {
      csv.Add(0, step, {{"train_loss", 0.25}});
    }
    Status s;
    {
      testing::FileSizeLimit limit(c.size_limit ? c.size_limit : RLIM_INFINITY);
      s = csv.Flush();
    }
    EXPECT_EQ(s.code(), StatusCode::kIOError);
    EXPECT_NE(s.message().find(c.size_limit ? csv.path() : dir.Join("file")),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(std::strerror(c.reason)), std::string::npos)
        << s.message();
    EXPECT_EQ(testing::ReadFile(csv.path()), before);
    EXPECT_EQ(testing::ListDir(dir.path()), want);
  }
}

}  // namespace
}  // namespace trialshim::trainer
