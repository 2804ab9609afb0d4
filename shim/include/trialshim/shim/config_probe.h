// Asking a Hydra app for its config. trialshim translates Vertex's
// arguments against a config it composes itself (--config-path), but a
// Python app may type its config with dataclasses in Hydra's ConfigStore
// (`batch_size: int = 32`), which only the app can compose: from YAML files
// alone 32.0 stays a float. `trialshim --config-from-command -- COMMAND ARG...`
// asks the app instead: it runs COMMAND with the arguments that are not
// Vertex's and `--cfg all` once before the trial (a Hydra app prints its
// composed config and exits without running its task), reads the YAML, and
// translates against it as against --config-path's config; the app's
// config directory (the `main` entry of hydra.runtime.config_sources) gives
// the groups and their options, and a group switched by a trial's argument
// asks the app again with it. It costs one start of the app (a Python
// program: a second or two) per trial, and it is opt-in: a program that is
// not a Hydra app would not print a config but start training.
#ifndef TRIALSHIM_SHIM_CONFIG_PROBE_H_
#define TRIALSHIM_SHIM_CONFIG_PROBE_H_

#include <chrono>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/compose.h"

namespace trialshim::shim {

// How long the app may take to print its config, by default: a Python app
// that imports torch on a cold container takes tens of seconds, one that
// takes minutes is waiting for something (a GPU, a lock, a prompt) and
// would otherwise hold a paid trial until Vertex's own timeout. The cli
// reads kConfigProbeTimeoutVariable (seconds) to change it.
inline constexpr std::chrono::milliseconds kConfigProbeTimeout{120000};
inline constexpr char kConfigProbeTimeoutVariable[] =
    "TRIALSHIM_CONFIG_PROBE_TIMEOUT";

// Runs `command` + ["--cfg", "all"] (stdout captured, stderr ours) and
// reads what it prints: ComposeResult's config, hydra, choices (from
// hydra.runtime.choices) and repository (the main config directory, when
// the app has one). The app runs contained (base/subprocess.h) and at most
// `timeout`: then it is killed with all it started, IOError "... did not
// finish within N s; it was killed". InvalidArgument when the program
// exits non-zero or prints no config (with its exit code and what it
// printed), NotFound when it can not be run.
StatusOr<config::ComposeResult> ConfigFromCommand(
    const std::vector<std::string>& command,
    std::chrono::milliseconds timeout = kConfigProbeTimeout);

}  // namespace trialshim::shim

#endif  // TRIALSHIM_SHIM_CONFIG_PROBE_H_
