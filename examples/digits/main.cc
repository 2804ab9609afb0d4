// digits-train: an MLP on the UCI handwritten digits, a Hydra app in C++.
// Hydra's command line and Vertex's --key=value arguments both work:
//
//   digits-train optimizer=sgd optimizer.lr=0.1 trainer.max_epochs=5
//   digits-train --optimizer.lr=0.01 --data.batch_size=32   (a Vertex trial)
#include "digits.h"
#include "trialshim/trainer/accelerator.h"

int main(int argc, char** argv) {
  // The config path is relative to the executable: share/ beside bin/, as
  // installed and as the build tree mirrors it (CMakeLists.txt). The schema
  // refuses a mistyped top-level key before anything runs.
  // --version also names the LibTorch, its CUDA and the devices it sees.
  namespace ts = trialshim;
  return ts::app::Run(argc, argv,
                      {"../share/trialshim/examples/digits/conf", "config",
                       "digits-train", ts::app::SchemaOf(ts::trainer::TrainConfigSchema()),
                       [] { return ts::trainer::BuildInfoText(ts::trainer::DescribeBuild()); }},
                      ts::digits::Train);
}
