// What makes a checkpoint this run's (trainer/src/run_identity.h): which
// keys may differ on a resume, and how a difference is told.
#include "trainer/src/run_identity.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trialshim/config/yaml_loader.h"

namespace trialshim::trainer::internal {
namespace {

using nlohmann::json;

TEST(RunIdentityTest, WhatMayDifferOnAResume) {
  struct Case {
    const char* key;
    bool may_differ;
  };
  const std::vector<Case> cases = {
      {"trainer.max_epochs", true},
      {"trainer.max_steps", true},
      {"trainer.max_time", true},
      {"trainer.ckpt_path", true},
      {"ckpt_path", true},
      {"trainer.default_root_dir", true},
      {"paths.output_dir", true},
      {"hypertune.tag", true},
      {"logger.csv.save_dir", true},
      {"callbacks.model_checkpoint.dirpath", true},
      {"callbacks.early_stopping.patience", true},
      {"trainer.callbacks.0._target_", true},
      {"trainer.enable_progress_bar", true},
      {"trainer.accelerator", true},
      {"trainer.devices", true},
      {"tags.0", true},
      {"optimizer.lr", false},
      {"model.dropout", false},
      {"data.batch_size", false},
      {"seed", false},
      {"trainer.seed", false},
      {"trainer.precision", false},
      {"trainer.accumulate_grad_batches", false},
      {"trainer.max_epochs_extra", false},  // a segment, not a prefix
      {"scheduler.warmup", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MayDifferOnResume(c.key), c.may_differ) << "case " << c.key;
  }
}

config::Node Yaml(const std::string& text) {
  auto node = config::LoadYamlString(text, "test.yaml");
  EXPECT_TRUE(node.ok()) << node.status().message();
  return node.ok() ? *node : config::Node();
}

TEST(RunIdentityTest, DifferencesAreToldKeyByKeyAndBounded) {
  const std::string base =
      "seed: 42\noptimizer: {lr: 0.01}\nmodel: {dropout: 0.1}\n"
      "trainer: {max_epochs: 10}\n";
  struct Case {
    const char* name;
    std::string theirs;  // the checkpoint's run's config
    int their_world;
    std::string ours;
    std::string want;  // "" for the same run
  };
  const std::vector<Case> cases = {
      {"same run", base, 1, base, ""},
      {"longer run", base, 1,
       "seed: 42\noptimizer: {lr: 0.01}\nmodel: {dropout: 0.1}\n"
       "trainer: {max_epochs: 30, enable_progress_bar: false}\n",
       ""},
      {"other lr and seed", base, 1,
       "seed: 7\noptimizer: {lr: 0.02}\nmodel: {dropout: 0.1}\n",
       "its settings differ: optimizer.lr: 0.01 there, 0.02 here; seed: 42 "
       "there, 7 here"},
      {"a key added", base, 1, base + "scheduler: {name: cosine}\n",
       "its settings differ: scheduler.name: absent there, \"cosine\" here"},
      {"other world size", base, 2, base,
       "its settings differ: world size: 2 there, 1 here"},
      {"many", "a: 1\nb: 1\nc: 1\nd: 1\ne: 1\nf: 1\n", 1,
       "a: 2\nb: 2\nc: 2\nd: 2\ne: 2\nf: 2\n",
       "its settings differ: a: 1 there, 2 here; b: 1 there, 2 here; c: 1 "
       "there, 2 here; d: 1 there, 2 here; and 2 more"},
      {"a long value cut", "s: short\n", 1, "s: " + std::string(100, 'x') + "\n",
       "its settings differ: s: \"short\" there, \"" + std::string(76, 'x') +
           "... here"},
  };
  for (const Case& c : cases) {
    json state = {{"run", RunIdentity(Yaml(c.theirs), c.their_world)}};
    EXPECT_EQ(RunDifferences(state, RunIdentity(Yaml(c.ours), 1)), c.want)
        << "case " << c.name;
  }
  // The run directory inside a value: a restarted trial's new run
  // directory is the same run; another directory is not.
  const config::Node moved_there = Yaml("export: /out/2026-01-01/a/model.onnx\n");
  const config::Node moved_here = Yaml("export: /out/2026-01-02/a/model.onnx\n");
  const json there = {{"run", RunIdentity(moved_there, 1, "/out/2026-01-01/a/")}};
  EXPECT_EQ(RunDifferences(there, RunIdentity(moved_here, 1, "/out/2026-01-02/a")),
            "");
  EXPECT_EQ(RunDifferences(there, RunIdentity(moved_here, 1, "/elsewhere")),
            "its settings differ: export: \"${run_dir}/model.onnx\" there, "
            "\"/out/2026-01-02/a/model.onnx\" here");
  EXPECT_EQ(RunDifferences(there, RunIdentity(moved_there, 1, "/")),
            "its settings differ: export: \"${run_dir}/model.onnx\" there, "
            "\"/out/2026-01-01/a/model.onnx\" here")
      << "'/' is no run directory";
  // A checkpoint that records no run can not be shown to be ours.
  for (const json& state : {json::object(), json{{"run", nullptr}},
                            json{{"run", {{"world_size", 1}}}}}) {
    EXPECT_NE(RunDifferences(state, RunIdentity(Yaml(base), 1))
                  .find("it does not record the settings it was trained with"),
              std::string::npos)
        << "case " << state.dump();
  }
}

}  // namespace
}  // namespace trialshim::trainer::internal
