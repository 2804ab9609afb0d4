// IsTrialshimApp: a program built on app::Run, told by its ELF section.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testutil/temp_dir.h"
#include "trialshim/translate/translate.h"

namespace trialshim::translate {
namespace {

using testing::TempDir;

TEST(AppMarkerTest, IsTrialshimApp) {
  TempDir dir;
  std::string bin = TRIALSHIM_BIN_DIR;
  std::string elf = testing::ReadFile(bin + "/trialshim");
  struct Case {
    std::string name, path;
    bool want;
  };
  const std::vector<Case> cases = {
      {"an app::Run program", bin + "/app_task", true},
      {"trialshim itself", bin + "/trialshim", false},
      {"a script", dir.Write("x.py", "print(1)\n"), false},
      {"a cut ELF file", dir.Write("cut", elf.substr(0, 100)), false},
      {"a directory", dir.path(), false},
      {"missing", dir.Join("none"), false},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(IsTrialshimApp(k.path), k.want) << "case " << k.name;
  }
}

}  // namespace
}  // namespace trialshim::translate
