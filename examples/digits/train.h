// The digits example's task, free of LibTorch headers so that main.cc
// compiles in a second.
#ifndef TRIALSHIM_EXAMPLES_DIGITS_TRAIN_H_
#define TRIALSHIM_EXAMPLES_DIGITS_TRAIN_H_

#include <memory>

#include "trialshim/app/app.h"

namespace trialshim::digits {

// Trains with the composed config: 0 when done, 2 for a config error, 1 for
// a runtime failure, 128+N after SIGTERM/SIGINT/SIGHUP (checkpoint written;
// a restart resumes).
int Train(const app::Job& job);

// The config's top level, for app::Run (a mistyped key is refused before
// anything runs; --cfg schema prints it).
std::shared_ptr<const app::SchemaView> ConfigSchema();

}  // namespace trialshim::digits

#endif  // TRIALSHIM_EXAMPLES_DIGITS_TRAIN_H_
