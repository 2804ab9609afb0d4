// Checkpoint files: a trained model, its optimizer and the RNG round-trip
// exactly, every optimizer the Trainer makes round-trips exactly, and a
// table of damaged files, each a real checkpoint with one thing wrong, is
// refused with the status and words the Trainer relies on.
#include "trialshim/trainer/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "tests/trainer/digits_fixture.h"
#include "tests/trainer/scripted_module.h"
#include "trialshim/trainer/optim.h"
#include "trialshim/trainer/trainer.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::trainer {
namespace {

using digits_fixture::AdamConfig;
using digits_fixture::DigitsData;
using digits_fixture::DigitsModel;
using nlohmann::json;
using scripted::CapturedLog;
using scripted::Quiet;
using testing::ReadFile;
using testing::TempDir;

config::Node Optimizer(const std::string& yaml_like_name,
                       std::vector<std::pair<std::string, config::Node>> more) {
  std::vector<std::pair<std::string, config::Node>> fields = {
      {"name", config::Node::String(yaml_like_name)},
      {"lr", config::Node::Double(0.05)}};
  for (auto& f : more) fields.push_back(std::move(f));
  return config::Node::MakeMap(std::move(fields));
}

// A small model and one of the Trainer's optimizers, after `steps` steps on
// a fixed batch.
struct Training {
  torch::nn::Sequential model;
  std::shared_ptr<torch::optim::Optimizer> optimizer;

  Training(const config::Node& optimizer_config, uint64_t seed, int steps) {
    torch::manual_seed(seed);
    model = torch::nn::Sequential(torch::nn::Linear(4, 3), torch::nn::ReLU(),
                                  torch::nn::Linear(3, 2));
    auto made = MakeOptimizer(optimizer_config, model->parameters());
    EXPECT_TRUE(made.ok()) << made.status().message();
    optimizer = *made;
    for (int i = 0; i < steps; ++i) Step();
  }
  void Step() {
    torch::manual_seed(7);  // same batch every time
    optimizer->zero_grad();
    model->forward(torch::randn({5, 4})).pow(2).sum().backward();
    optimizer->step();
  }
  std::vector<torch::Tensor> Params() {
    std::vector<torch::Tensor> out;
    for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
    return out;
  }
};

TEST(CheckpointTest, RoundTripRestoresModelOptimizerAndRng) {
  TempDir dir;
  CapturedLog log;
  auto dm = DigitsData();
  auto model = DigitsModel(3);
  Trainer trainer(Quiet(dir.path(), log).max_epochs(1).seed(5));
  ASSERT_OK(trainer.fit(*model, dm));
  const std::string path = dir.Join("checkpoints/last.ckpt");
  ASSERT_TRUE(std::filesystem::exists(path)) << log.out.str();

  // Write our own checkpoint of the trained state, then draw from the RNG.
  auto opt = MakeOptimizer(AdamConfig(0.003), model->parameters());
  ASSERT_OK(opt);
  auto batch = dm.train_dataloader()->batch(0);
  auto step = [&](digits::DigitsModule& m, torch::optim::Optimizer& o) {
    o.zero_grad();
    torch::nn::functional::cross_entropy(m.forward(batch.input), batch.target)
        .backward();
    o.step();
  };
  model->eval();        // no dropout: the steps below are comparable
  step(*model, **opt);  // gives Adam some state
  const std::string mine = dir.Join("mine.ckpt");
  ASSERT_OK(WriteCheckpoint(mine, *model, opt->get(), {{"epoch", 1}}));
  torch::Tensor draw = torch::rand({8});
  step(*model, **opt);
  std::vector<torch::Tensor> want;
  for (const auto& p : model->parameters()) want.push_back(p.detach().clone());

  auto other = DigitsModel(99);
  other->eval();
  auto other_opt = MakeOptimizer(AdamConfig(0.003), other->parameters());
  ASSERT_OK(other_opt);
  auto opened = OpenCheckpoint(mine);
  ASSERT_OK(opened);
  EXPECT_EQ(opened->state["epoch"], 1);
  ASSERT_OK(RestoreCheckpoint(*opened, *other, other_opt->get()));
  EXPECT_TRUE(torch::equal(torch::rand({8}), draw)) << "case rng";
  step(*other, **other_opt);
  auto got = other->parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::equal(got[i], want[i]))
        << "case model+optimizer, tensor " << i;
  }

  // A different architecture is refused before anything is copied.
  torch::manual_seed(1);
  auto wide =
      std::make_shared<digits::DigitsModule>(std::vector<int64_t>{32}, 0.0);
  auto before = wide->parameters()[0].clone();
  auto reopened = OpenCheckpoint(mine);
  ASSERT_OK(reopened);
  Status st = RestoreCheckpoint(*reopened, *wide, nullptr);
  EXPECT_THAT(
      st,
      StatusIs(StatusCode::kInvalidArgument,
               HasSubstr("[64, 64] F32 there and [32, 64] F32 in the model")))
      << "case mismatch";
  EXPECT_TRUE(torch::equal(before, wide->parameters()[0]))
      << "case mismatch untouched";
}

TEST(CheckpointTest, EveryOptimizerRoundTripsExactly) {
  using N = config::Node;
  const std::vector<std::pair<std::string, config::Node>> cases = {
      {"sgd", Optimizer("sgd", {})},
      {"sgd momentum nesterov",
       Optimizer("sgd",
                 {{"momentum", N::Double(0.9)}, {"nesterov", N::Bool(true)}})},
      {"adam", Optimizer("adam", {})},
      {"adam amsgrad", Optimizer("adam", {{"amsgrad", N::Bool(true)}})},
      {"adamw", Optimizer("adamw", {})},
      {"rmsprop centered momentum",
       Optimizer("rmsprop",
                 {{"momentum", N::Double(0.5)}, {"centered", N::Bool(true)}})},
      {"adagrad", Optimizer("adagrad", {})},
  };
  for (const auto& [name, optimizer_config] : cases) {
    TempDir dir;
    const std::string path = dir.Join("a.ckpt");
    Training trained(optimizer_config, 1, 3);
    trained.optimizer->param_groups()[0].options().set_lr(0.02);  // a schedule
    ASSERT_TRUE(WriteCheckpoint(path, *trained.model, trained.optimizer.get(),
                                {{"epoch", 3}})
                    .ok())
        << "case " << name;
    torch::Tensor draw = torch::rand({4});
    trained.Step();

    Training fresh(optimizer_config, 2, 0);
    auto opened = OpenCheckpoint(path);
    ASSERT_TRUE(opened.ok())
        << "case " << name << ": " << opened.status().message();
    EXPECT_EQ(opened->state, json({{"epoch", 3}})) << "case " << name;
    Status restored =
        RestoreCheckpoint(*opened, *fresh.model, fresh.optimizer.get());
    ASSERT_TRUE(restored.ok()) << "case " << name << ": " << restored.message();
    EXPECT_TRUE(torch::equal(torch::rand({4}), draw))
        << "case " << name << ": rng";
    EXPECT_EQ(fresh.optimizer->param_groups()[0].options().get_lr(), 0.02)
        << "case " << name << ": lr";
    fresh.Step();
    auto want = trained.Params(), got = fresh.Params();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(torch::equal(want[i], got[i]))
          << "case " << name << ": parameter " << i
          << " differs after the step that follows the restore";
    }
  }
}

// The parts of a checkpoint file, to damage one at a time.
struct Parts {
  json header;
  std::string data;

  static Parts Read(const std::string& path) {
    std::string file = ReadFile(path);
    uint64_t n = 0;
    std::memcpy(&n, file.data(), sizeof n);
    return {json::parse(file.substr(8, n)), file.substr(8 + n)};
  }
  std::string Bytes() const {
    std::string text = header.dump();
    uint64_t n = text.size();
    return std::string(reinterpret_cast<const char*>(&n), sizeof n) + text +
           data;
  }
  json& Meta() { return header["__metadata__"]; }
};

TEST(CheckpointTest, DamagedFilesAreRefusedNamingWhatIsWrong) {
  TempDir dir;
  const std::string good = dir.Join("good.ckpt");
  const config::Node adam = Optimizer("adam", {});
  {
    Training run(adam, 1, 1);
    ASSERT_TRUE(
        WriteCheckpoint(good, *run.model, run.optimizer.get(), {{"epoch", 1}})
            .ok());
  }
  const std::string good_bytes = ReadFile(good);
  struct Case {
    std::string name;
    std::function<std::string()> bytes;
    StatusCode code;
    std::string want;  // in the message, after the file's name
    bool at_restore = false;
  };
  auto edit = [&](std::function<void(Parts&)> f) {
    return [&, f] {
      Parts p = Parts::Read(good);
      f(p);
      return p.Bytes();
    };
  };
  auto constant = [](std::string s) { return [s] { return s; }; };
  const std::vector<Case> cases = {
      {"empty file", constant(""), StatusCode::kDataLoss,
       "is truncated or corrupt: it is 0 bytes, shorter than the 8-byte "
       "header length"},
      {"cut in the header", [&] { return good_bytes.substr(0, 40); },
       StatusCode::kDataLoss, "header length"},
      {"cut in the data",
       [&] { return good_bytes.substr(0, good_bytes.size() - 100); },
       StatusCode::kDataLoss, "is truncated or corrupt: tensor"},
      {"garbage", constant("not a checkpoint at all"), StatusCode::kDataLoss,
       "is truncated or corrupt: its header length"},
      {"header not JSON", edit([](Parts& p) { p.header = json("x"); }),
       StatusCode::kDataLoss, "its header is not a JSON object"},
      {"not ours", edit([](Parts& p) { p.Meta()["format"] = "pt"; }),
       StatusCode::kDataLoss, "is not a trialshim checkpoint"},
      {"old version", edit([](Parts& p) { p.Meta()["version"] = "1"; }),
       StatusCode::kDataLoss, "has format version \"1\", expected \"2\""},
      {"state not JSON", edit([](Parts& p) { p.Meta()["state"] = "{"; }),
       StatusCode::kDataLoss, "its metadata 'state' is not JSON"},
      {"flipped data bit",
       edit([](Parts& p) { p.data[3] = static_cast<char>(p.data[3] ^ 4); }),
       StatusCode::kDataLoss, "its data has CRC-32"},
      {"unknown dtype",
       edit([](Parts& p) { p.header["model/0.bias"]["dtype"] = "F8"; }),
       StatusCode::kDataLoss,
       "tensor 'model/0.bias' has dtype \"F8\", expected one of F32"},
      {"shape larger than its bytes",
       edit([](Parts& p) { p.header["model/0.bias"]["shape"] = {4}; }),
       StatusCode::kDataLoss, "(16 bytes) but has 12 bytes of data"},
      {"negative size",
       edit([](Parts& p) { p.header["model/0.bias"]["shape"] = {-3}; }),
       StatusCode::kDataLoss, "expected sizes >= 0"},
      {"overlapping tensors", edit([](Parts& p) {
         p.header["model/0.bias"]["data_offsets"] =
             p.header["model/0.weight"]["data_offsets"];
         p.header["model/0.bias"]["shape"] =
             p.header["model/0.weight"]["shape"];
       }),
       StatusCode::kDataLoss, "tensors must not overlap or leave gaps"},
      {"offsets past the data", edit([](Parts& p) {
         p.header["rng/cpu"]["data_offsets"][1] = p.data.size() + 8;
       }),
       StatusCode::kDataLoss, "outside the"},
      {"trailing bytes", edit([](Parts& p) { p.data += "xx"; }),
       StatusCode::kDataLoss, "its tensors cover"},
      {"model tensor missing", edit([](Parts& p) {
         p.header.erase("model/2.bias");
         p.Meta()["crc32"] = "ignored";
       }),
       StatusCode::kDataLoss, "tensors must not overlap or leave gaps"},
      {"optimizer of another type", edit([](Parts& p) {
         json o = json::parse(p.Meta()["optimizer"].get<std::string>());
         o["type"] = "sgd";
         p.Meta()["optimizer"] = o.dump();
       }),
       StatusCode::kInvalidArgument,
       "its optimizer state is for \"sgd\", the run uses 'adam'", true},
      {"optimizer for fewer parameters", edit([](Parts& p) {
         json o = json::parse(p.Meta()["optimizer"].get<std::string>());
         o["steps"].erase(0);
         p.Meta()["optimizer"] = o.dump();
       }),
       StatusCode::kInvalidArgument,
       "its optimizer state is for 3 parameters in 1 groups, the optimizer "
       "has 4 in 1",
       true},
      {"negative optimizer step", edit([](Parts& p) {
         json o = json::parse(p.Meta()["optimizer"].get<std::string>());
         o["steps"][0] = -5;
         p.Meta()["optimizer"] = o.dump();
       }),
       StatusCode::kInvalidArgument, "is not a step count", true},
  };
  for (const Case& c : cases) {
    const std::string path = dir.Join("bad.ckpt");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << c.bytes();
    Training run(adam, 2, 0);
    const auto before = run.Params();
    Status status = Status::Ok();
    auto opened = OpenCheckpoint(path);
    if (c.at_restore) {
      ASSERT_TRUE(opened.ok())
          << "case " << c.name << ": " << opened.status().message();
      status = RestoreCheckpoint(*opened, *run.model, run.optimizer.get());
    } else {
      status = opened.status();
    }
    EXPECT_EQ(status.code(), c.code)
        << "case " << c.name << ": " << status.message();
    EXPECT_EQ(status.message().rfind("checkpoint " + path, 0), 0u)
        << "case " << c.name << ": " << status.message();
    EXPECT_THAT(status, StatusIs(_, HasSubstr(c.want))) << "case " << c.name;
    const auto after = run.Params();
    for (size_t i = 0; i < before.size(); ++i) {
      EXPECT_TRUE(torch::equal(before[i], after[i]))
          << "case " << c.name << ": the model changed";
    }
  }
}

// A checkpoint that can not be written is an IOError naming the file and
// the reason; the checkpoint it was to replace stays whole, and no
// temporary is left behind.
TEST(CheckpointTest, WriteFailureKeepsTheOldFileAndNoTemporary) {
  Training t(Optimizer("adam", {}), 1, 1);
  testing::ExpectFailedWriteKeepsTheOldFile(
      "last.ckpt", 512, [&](const std::string& path, int version) {
        if (version == 1) t.Step();
        return WriteCheckpoint(path, *t.model, t.optimizer.get(), {});
      });
}

TEST(CheckpointTest, AmsgradNeedsItsFieldAndTheModelMustMatch) {
  TempDir dir;
  const std::string path = dir.Join("plain_adam.ckpt");
  Training plain(Optimizer("adam", {}), 1, 2);
  ASSERT_TRUE(
      WriteCheckpoint(path, *plain.model, plain.optimizer.get(), json::object())
          .ok());
  auto opened = OpenCheckpoint(path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();

  Training amsgrad(Optimizer("adam", {{"amsgrad", config::Node::Bool(true)}}),
                   2, 0);
  Status st =
      RestoreCheckpoint(*opened, *amsgrad.model, amsgrad.optimizer.get());
  EXPECT_THAT(st,
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("has no 'optimizer/0/max_exp_avg_sq', which "
                                 "the optimizer's options need")))
      << "case amsgrad";

  torch::nn::Sequential other(torch::nn::Linear(4, 5), torch::nn::ReLU(),
                              torch::nn::Linear(5, 2));
  st = RestoreCheckpoint(*opened, *other, nullptr);
  EXPECT_THAT(
      st, StatusIs(StatusCode::kInvalidArgument,
                   HasSubstr("'0.weight' is [3, 4] F32 there and [5, 4] F32 "
                             "in the model")))
      << "case other model";
}

// Only a regular file is read as a checkpoint: a FIFO (no writer: the open
// must not block), a device behind a link, a directory, a link out of the
// directory are each DataLoss naming the file and what it is, and
// FindNonRegularCheckpoints lists exactly those among *.ckpt. A relative
// link that stays in the directory (save_last="link"'s last.ckpt) is the
// trainer's own and reads; an absolute one only with follow_symlinks.
TEST(CheckpointTest, OnlyRegularFilesAreReadAndNothingBlocks) {
  namespace fs = std::filesystem;
  TempDir dir;
  Training t(Optimizer("sgd", {}), 1, 1);
  const std::string good = dir.Join("good.ckpt");
  ASSERT_OK(WriteCheckpoint(good, *t.model, t.optimizer.get(),
                            json{{"epoch", 1}}));
  ASSERT_EQ(mkfifo(dir.Join("fifo.ckpt").c_str(), 0600), 0)
      << std::strerror(errno);
  fs::create_symlink("/dev/zero", dir.Join("zero.ckpt"));
  fs::create_directories(dir.Join("dir.ckpt"));
  fs::create_symlink(good, dir.Join("absolute.ckpt"));
  fs::create_symlink("good.ckpt", dir.Join("last.ckpt"));
  fs::create_symlink("../elsewhere.ckpt", dir.Join("up.ckpt"));
  ASSERT_EQ(mkfifo(dir.Join("fifo.txt").c_str(), 0600), 0);  // not *.ckpt

  struct Case {
    std::string file;
    bool follow;
    std::string kind;  // "" reads
  };
  const std::vector<Case> cases = {
      {"fifo.ckpt", false, "a FIFO"},
      {"fifo.ckpt", true, "a FIFO"},
      {"zero.ckpt", false, "a symbolic link to /dev/zero"},
      {"zero.ckpt", true, "a character device"},
      {"dir.ckpt", false, "a directory"},
      {"absolute.ckpt", false, "a symbolic link to " + good},
      {"absolute.ckpt", true, ""},
      {"last.ckpt", false, ""},
      {"good.ckpt", false, ""},
  };
  for (const Case& c : cases) {
    const std::string path = dir.Join(c.file);
    CheckpointReadOptions options;
    options.follow_symlinks = c.follow;
    auto opened = OpenCheckpoint(path, options);
    const std::string name = c.file + (c.follow ? " followed" : "");
    if (c.kind.empty()) {
      EXPECT_OK(opened) << name;
      continue;
    }
    EXPECT_THAT(opened, StatusIs(StatusCode::kDataLoss,
                                 HasSubstr("checkpoint " + path + " is " +
                                           c.kind + ", not a regular file")))
        << name;
  }

  auto odd = FindNonRegularCheckpoints(dir.path());
  ASSERT_OK(odd);
  std::vector<std::string> found;
  for (const NotACheckpoint& f : *odd) {
    found.push_back(fs::path(f.path).filename().string() + ": " + f.kind);
  }
  EXPECT_EQ(found, (std::vector<std::string>{
                       "absolute.ckpt: a symbolic link to " + good,
                       "dir.ckpt: a directory",
                       "fifo.ckpt: a FIFO",
                       "up.ckpt: a symbolic link to ../elsewhere.ckpt",
                       "zero.ckpt: a symbolic link to /dev/zero"}));
  std::set<std::string> listed;
  for (const std::string& p : ListCheckpoints(dir.path())) {
    listed.insert(fs::path(p).filename().string());
  }
  EXPECT_EQ(listed, (std::set<std::string>{"good.ckpt", "last.ckpt"}));
  EXPECT_OK(FindNonRegularCheckpoints(dir.Join("absent")));
  EXPECT_THAT(FindNonRegularCheckpoints(good),
              StatusIs(StatusCode::kIOError, HasSubstr(good)));
}

}  // namespace
}  // namespace trialshim::trainer
