// digits-train: an MLP on the UCI handwritten digits, a Hydra app in C++.
// Hydra's command line and Vertex's --key=value arguments both work:
//
//   digits-train optimizer=sgd optimizer.lr=0.1 trainer.max_epochs=5
//   digits-train --optimizer.lr=0.01 --data.batch_size=32   (a Vertex trial)
#include "digits.h"

int main(int argc, char** argv) {
  // Relative to the executable: share/ beside bin/, as installed and as the
  // build tree mirrors it (CMakeLists.txt).
  return trialshim::app::Run(argc, argv,
                             {"../share/trialshim/examples/digits/conf", "config",
                              "digits-train", trialshim::digits::ConfigSchema()},
                             trialshim::digits::Train);
}
