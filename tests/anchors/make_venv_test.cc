// tests/anchors/: what `make anchors` does where PyPI is out of reach (says
// what it needs, leaves nothing half-built) and how check_env.py judges an
// interpreter against the pins. Needs no PyPI: Debian's /usr/bin/python3
// stands for the environment.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

const std::string kAnchors =
    std::string(TRIALSHIM_SOURCE_DIR) + "/tests/anchors";

TEST(MakeVenv, SaysWhatItNeedsWherePypiIsOutOfReach) {
  testing::TempDir dir;
  const std::string venv = dir.Join("anchors");
  // Nothing listens on port 9 of this machine: pip's connection is refused.
  testing::Finished f =
      testing::RunToEnd({kAnchors + "/make_venv.sh", venv},
                        {"PIP_INDEX_URL=http://127.0.0.1:9/simple"});
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  for (const std::string& says :
       {"anchors: could not install the anchors into " + venv,
        std::string(
            "hydra-core 1.3.2, omegaconf 2.3.0, hydra-optuna-sweeper 1.2.0"),
        std::string("lightning 2.2.5"),
        std::string("The package index is http://127.0.0.1:9/simple"),
        std::string("set PIP_INDEX_URL to a mirror"),
        std::string("No matching distribution found for hydra-core==1.3.2"),
        std::string("(network: Connection refused)"),
        std::string("make test runs everything else without them")}) {
    EXPECT_NE(f.err.find(says), std::string::npos)
        << "should say: " << says << "\n"
        << f.err;
  }
  EXPECT_FALSE(std::filesystem::exists(venv)) << "half-built venv left behind";
}

TEST(CheckEnv, JudgesAnInterpreterAgainstThePins) {
  // Debian's python3-omegaconf, at whatever version it has.
  testing::Finished v = testing::RunToEnd(
      {"/usr/bin/python3", "-c",
       "import importlib.metadata as m; print(m.version('omegaconf'), end='')"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  const std::string debian = v.out;
  struct Case {
    const char* name;
    std::string requirements;
    int exit_code;
    std::string says;  // on stderr
  } cases[] = {
      {"pins met", "# a comment\nomegaconf==" + debian + "  # trailing\n", 0,
       ""},
      {"other version", "omegaconf==99.0\n", 1,
       "anchors: omegaconf is " + debian + ", <req> pins 99.0"},
      {"not installed", "no-such-dist==1.0\n", 1,
       "anchors: no-such-dist 1.0 is not installed"},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    const std::string req = dir.Write("requirements.txt", c.requirements);
    testing::Finished f = testing::RunToEnd(
        {"/usr/bin/python3", kAnchors + "/check_env.py", "--quick", req});
    EXPECT_EQ(f.exit_code, c.exit_code) << c.name << "\n" << f.err;
    std::string says = c.says;
    if (size_t at = says.find("<req>"); at != std::string::npos) {
      says.replace(at, 5, req);
    }
    EXPECT_NE(f.err.find(says), std::string::npos) << c.name << "\n" << f.err;
  }
}

}  // namespace
}  // namespace trialshim
