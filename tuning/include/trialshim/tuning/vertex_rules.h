// Vertex AI's rules on a tuning job's trialJobSpec that a spec can break
// before it is submitted, shared by `trialshim job` (which refuses to write
// such a spec) and `trialshim check` (which reports it where it is):
//
//  - machineSpec.machineType is one of the machine types Vertex's custom
//    training takes (the table in vertex_rules.cc, with its source);
//  - baseOutputDirectory.outputUriPrefix is a Cloud Storage URI
//    (gs://BUCKET[/PATH]): GcsDestination.outputUriPrefix, "Google Cloud
//    Storage URI to output directory";
//  - workerPoolSpecs[0], the primary, has replicaCount 1; more replicas of a
//    distributed trial are workers in workerPoolSpecs[1] ("use your first
//    worker pool to configure your primary replica, and set the replica
//    count to 1", vertex-ai/docs/training/distributed-training);
//  - machineSpec.acceleratorType/acceleratorCount is a pair the machine type
//    takes: the GPUs an accelerator-optimized type (A2, A3, A4, G2) comes
//    with, at most their number; on N1 the GPUs Compute Engine attaches
//    there, in the counts it allows; nothing on the other CPU families
//    (the tables in vertex_rules.cc, with their sources).
//
// Library code: nothing is printed.
#ifndef TRIALSHIM_TUNING_VERTEX_RULES_H_
#define TRIALSHIM_TUNING_VERTEX_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::tuning {

// The replicas workerPoolSpecs[0] must have.
constexpr int64_t kPrimaryReplicas = 1;

// Ok for a machine type Vertex's custom training takes; else
// InvalidArgument "unknown machine type 'X' (did you mean 'Y'?): ...".
Status CheckMachineType(std::string_view machine_type);

// Every machine type of the table, in its order.
std::vector<std::string> VertexMachineTypes();

// machineSpec's accelerators: MachineSpec.acceleratorType (an
// AcceleratorType enum name) and acceleratorCount.
struct Accelerator {
  std::string type;
  int64_t count = 0;
};

// The GPUs an accelerator-optimized machine type comes with (a2-highgpu-4g:
// 4 NVIDIA_TESLA_A100); nullopt for the others (n1-standard-4 and the TPU
// VMs included).
std::optional<Accelerator> AttachedAccelerator(std::string_view machine_type);

// Ok when `machine_type` takes `accelerator`; else InvalidArgument naming
// what it takes ("did you mean" for a mistyped type). `machine_type` is one
// CheckMachineType accepts.
Status CheckAccelerator(std::string_view machine_type,
                        const Accelerator& accelerator);

// Ok for "gs://BUCKET" or "gs://BUCKET/PATH"; else InvalidArgument saying
// what Vertex expects.
Status CheckOutputUriPrefix(std::string_view uri);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_VERTEX_RULES_H_
