// The GPUs `trialshim env` names, read from a /proc tree laid out as the
// NVIDIA driver lays out its own (and from none).
#include "trialshim/shim/gpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/testutil/temp_dir.h"

namespace trialshim::shim {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(GpusTest, ReadsWhatTheDriverLists) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> files;
    const char* visible;
    std::string want;
  };
  const std::string info =
      "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 16\nBus Type: \t PCIe\n";
  const std::vector<Case> cases = {
      {"no driver", {}, nullptr,
       "# GPUs: none (no NVIDIA driver lists one in /proc/driver/nvidia/gpus)\n"},
      {"two GPUs in bus order",
       {{"driver/nvidia/version",
         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu "
         "Oct 2 2025\nGCC version:  gcc 12\n"},
        {"driver/nvidia/gpus/0000:1a:00.0/information",
         "Model: \t\t NVIDIA H200\n"},
        {"driver/nvidia/gpus/0000:05:00.0/information", info}},
       "1",
       "# GPUs: 2 (NVIDIA driver 580.159.04): 0 NVIDIA H100 80GB HBM3, 1 "
       "NVIDIA H200\n# CUDA_VISIBLE_DEVICES=1\n"},
  };
  for (const auto& c : cases) {
    testing::TempDir dir;
    for (const auto& [path, text] : c.files) Write(dir.Join(path), text);
    const std::string got = GpuComment(ReadGpus(dir.path()), c.visible);
    EXPECT_EQ(got.substr(0, c.want.size()), c.want) << c.name;
    EXPECT_NE(got.find("digits-train --version"), std::string::npos) << c.name;
  }
}

}  // namespace
}  // namespace trialshim::shim
