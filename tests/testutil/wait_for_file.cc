// Test helper: `trialshim_wait_for_file PATH` returns once file PATH has
// something in it (exit 0), or after 20 s (exit 1). A shell script under
// test waits with it for what another process writes (inotify, as the
// suites' WaitForFile), instead of polling with sleep.
#include <sys/stat.h>

#include <iostream>

#include "tests/testutil/subprocess.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: trialshim_wait_for_file PATH\n";
    return 2;
  }
  bool written = trialshim::testing::WaitForFileEvent(
      argv[1], std::chrono::seconds(20), [](const std::string& path) {
        struct stat st;
        return stat(path.c_str(), &st) == 0 && st.st_size > 0;
      });
  return written ? 0 : 1;
}
