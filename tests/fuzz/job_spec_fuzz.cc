// Fuzzes the job spec parser and the job checks behind `trialshim check`
// and `trialshim sweep`: the input is a HyperparameterTuningJob YAML file.
// Parsing records problems as diagnostics; it must never crash, and every
// diagnostic must say something.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "trialshim/config/yaml_loader.h"
#include "trialshim/tuning/check.h"
#include "trialshim/tuning/job_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialshim;
  std::string_view text = fuzz::AsView(data, size);
  config::LoadLimits limits;
  limits.max_nodes = 20000;
  StatusOr<config::Node> root =
      config::LoadYamlString(text, "job.yaml", limits);
  if (!root.ok()) return 0;
  std::vector<tuning::Diagnostic> diags;
  tuning::JobSpec job = tuning::ParseJobSpec(*root, &diags);
  // The config is always the conformance tree "train", whatever the
  // container's --config-path says, so no other file is ever read and the
  // config-aware checks run on every input.
  tuning::CheckOptions options;
  options.config_path = std::string(TRIALSHIM_SOURCE_DIR) +
                        "/tests/data/conformance/compose/trees/train";
  options.config_name = "config";
  tuning::CheckJobSpec(job, options, &diags);
  for (const tuning::Diagnostic& d : diags) {
    if (d.message.empty()) __builtin_trap();
    (void)d.ToString();
  }
  (void)tuning::ParseDurationSeconds(std::string(text.substr(0, 64)));
  return 0;
}
