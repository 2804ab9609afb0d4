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
//    count to 1", vertex-ai/docs/training/distributed-training).
//
// Library code: nothing is printed.
#ifndef TRIALSHIM_TUNING_VERTEX_RULES_H_
#define TRIALSHIM_TUNING_VERTEX_RULES_H_

#include <cstdint>
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

// Ok for "gs://BUCKET" or "gs://BUCKET/PATH"; else InvalidArgument saying
// what Vertex expects.
Status CheckOutputUriPrefix(std::string_view uri);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_VERTEX_RULES_H_
