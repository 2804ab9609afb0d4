// Check: finds what would make a tuning job fail, or waste its money, before
// it is submitted. Backs `trialshim check`.
//
// Rules on the job spec alone: counts >= 1 and parallelTrialCount <=
// maxTrialCount; at least one metric and one parameter, ids unique and
// without whitespace and not one of Hydra's flags (--cfg=0.1 would reach
// Hydra as its --cfg); DOUBLE and INTEGER ranges with min < max; log scales
// strictly positive; DISCRETE values finite, increasing, at least 1e-10
// apart and at most 1000; CATEGORICAL values present, unique and without a
// scaleType; GRID_SEARCH only over INTEGER, DISCRETE and CATEGORICAL (and a
// warning when the grid is smaller or larger than maxTrialCount); a
// baseOutputDirectory (a warning: without it Vertex sets no AIP_*_DIR) that
// is a gs:// URI; known machine types and one replica in workerPoolSpecs[0]
// (vertex_rules.h); no
// tensorboard without a serviceAccount (Vertex refuses it); a container
// command that can run here, as `trialshim sweep` would run it
// (container.h: the command, the trainer trialshim starts and a Python
// trainer's script exist under --workdir/--volume; a warning, or an error
// with CheckOptions::local_run), and that goes through trialshim unless it
// is a trialshim app (else Vertex's "--id=value" reaches Hydra
// untranslated; the advice names the config when one is known) with options the
// binary accepts (shim/options.h: an unknown one is an error with
// did-you-mean) and a "--" before the trainer; the trainer's arguments as
// Hydra 1.3.2 reads them (config/command_line.h), with no Hydra flag after
// an override (Hydra would then refuse the trial's appended arguments).
//
// With a config (from CheckOptions, else trialshim's --config-path and
// --config-name, else Hydra's in the trainer's arguments, composed with the
// Hydra overrides in those arguments): every parameterId must resolve to a
// config key or group through translate::Translate (with the job's --map and
// --add-unknown options), with a compatible type (INTEGER -> int or float
// key, DOUBLE -> float key, DISCRETE -> float key or int key with integral
// values, CATEGORICAL -> string key or group option, or values that read as
// the key's type); a DISCRETE parameter on an int key is a warning unless
// the container's trialshim has --config-path and --config-name (Vertex
// sends 128.0, which only a config-aware trialshim turns into 128);
// categorical values that Hydra would misread are noted with the quoted form
// the shim passes. The metric: the trainer's hypertune.tag (else
// hypertune.monitor), or the shim's --metric-tag, must equal the metricId,
// or every trial would be INFEASIBLE. Each trial must run one job: the
// config composed with the args, and again with a trial's translated
// values, must not set hydra.mode MULTIRUN (nor the args have -m) and must
// compose. A trainer behind a config-aware trialshim that names no config
// of its own composes one check can not see: a warning (a trialshim app:
// add --config-path and --config-name after it) or a note (Python).
//
// Library code: nothing is printed; the caller prints the diagnostics.
#ifndef TRIALSHIM_TUNING_CHECK_H_
#define TRIALSHIM_TUNING_CHECK_H_

#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/tuning/container.h"
#include "trialshim/tuning/job_spec.h"

namespace trialshim::tuning {

struct CheckOptions {
  // Config directory and primary config name, overriding what the
  // container's arguments say. Default: empty (use the container's).
  std::string config_path;
  std::string config_name;
  // Where the container's paths are here, as `trialshim sweep` finds them
  // (container.h): the directory relative paths mean (default: empty, the
  // current directory) and the --volume mappings (default: none).
  std::string workdir;
  std::vector<Volume> volumes;
  // Checking for `trialshim sweep`: what the trial needs and is not here
  // (the command, a Python script, the config directory) is an error, not
  // a warning. Default: false.
  bool local_run = false;
};

// Appends to *diagnostics every problem of `job` (already parsed).
void CheckJobSpec(const JobSpec& job, const CheckOptions& options,
                  std::vector<Diagnostic>* diagnostics);

// Loads `path`, parses and checks it. The diagnostics are sorted by
// location. NotFound/IOError when the file can not be read; YAML syntax
// errors become one error diagnostic.
StatusOr<std::vector<Diagnostic>> CheckJobFile(const std::string& path,
                                               const CheckOptions& options);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_CHECK_H_
