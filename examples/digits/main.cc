// digits-train: an MLP on the UCI handwritten digits, a Hydra app in C++.
// Hydra's command line and Vertex's --key=value arguments both work:
//
//   digits-train optimizer=sgd optimizer.lr=0.1 trainer.max_epochs=5
//   digits-train --optimizer.lr=0.01 --data.batch_size=32   (a Vertex trial)
#include <filesystem>
#include <string>

#include "digits.h"

int main(int argc, char** argv) {
  // Installed: share/trialshim/examples/digits/conf beside bin/; else the
  // source tree's.
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string conf = (exe.parent_path() / "../share/trialshim/examples/digits/conf")
                         .lexically_normal();
  if (!std::filesystem::is_directory(conf, ec)) {
    conf = TRIALSHIM_DIGITS_SOURCE_DIR "/conf";
  }
  return trialshim::app::Run(
      argc, argv,
      {conf, "config", "digits-train", trialshim::digits::ConfigSchema()},
      trialshim::digits::Train);
}
