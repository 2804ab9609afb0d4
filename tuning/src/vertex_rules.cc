// Vertex's trialJobSpec rules (vertex_rules.h).
#include "trialshim/tuning/vertex_rules.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"

namespace trialshim::tuning {
namespace {

// The machine types of Vertex AI custom training, and so of a tuning job's
// trials: "Machine types" of
// https://cloud.google.com/vertex-ai/docs/training/configure-compute
// (CPU families with their documented sizes, the GPU families' A2, A3, A4
// and G2 shapes, the TPU VMs: cloud-tpu takes its TPU as acceleratorType,
// ct5lp/ct5p/ct6e carry it in the name). A family Google adds later is
// refused until it is added here: "unknown machine type" names this table.
struct Family {
  const char* prefix;
  std::vector<const char*> sizes;  // empty: the prefix is the whole name
};

const std::vector<Family>& Families() {
  static const std::vector<Family> kFamilies = {
      {"e2-standard-", {"4", "8", "16", "32"}},
      {"e2-highmem-", {"2", "4", "8", "16"}},
      {"e2-highcpu-", {"16", "32"}},
      {"n1-standard-", {"4", "8", "16", "32", "64", "96"}},
      {"n1-highmem-", {"2", "4", "8", "16", "32", "64", "96"}},
      {"n1-highcpu-", {"16", "32", "64", "96"}},
      {"n2-standard-", {"4", "8", "16", "32", "48", "64", "80"}},
      {"n2-highmem-", {"2", "4", "8", "16", "32", "48", "64", "80"}},
      {"n2-highcpu-", {"16", "32", "48", "64", "80"}},
      {"n2d-standard-",
       {"2", "4", "8", "16", "32", "48", "64", "80", "96", "128", "224"}},
      {"n2d-highmem-", {"2", "4", "8", "16", "32", "48", "64", "80", "96"}},
      {"n2d-highcpu-",
       {"2", "4", "8", "16", "32", "48", "64", "80", "96", "128", "224"}},
      {"c2-standard-", {"4", "8", "16", "30", "60"}},
      {"m1-ultramem-", {"40", "80", "160"}},
      {"m1-megamem-", {"96"}},
      {"a2-highgpu-", {"1g", "2g", "4g", "8g"}},
      {"a2-megagpu-", {"16g"}},
      {"a2-ultragpu-", {"1g", "2g", "4g", "8g"}},
      {"a3-highgpu-", {"1g", "2g", "4g", "8g"}},
      {"a3-megagpu-", {"8g"}},
      {"a3-ultragpu-", {"8g"}},
      {"a4-highgpu-", {"8g"}},
      {"a4x-highgpu-", {"4g"}},
      {"g2-standard-", {"4", "8", "12", "16", "24", "32", "48", "96"}},
      {"cloud-tpu", {}},
      {"ct5lp-hightpu-", {"1t", "4t", "8t"}},
      {"ct5p-hightpu-", {"4t"}},
      {"ct6e-standard-", {"1t", "4t", "8t"}},
  };
  return kFamilies;
}

// MachineSpec.acceleratorType's values (vertex-ai/docs/reference/rest/v1/
// MachineSpec#AcceleratorType), ACCELERATOR_TYPE_UNSPECIFIED left out: it
// is no accelerator, which leaving the field out says.
const std::vector<std::string>& AcceleratorTypes() {
  static const std::vector<std::string> kTypes = {"NVIDIA_TESLA_K80",
                                                  "NVIDIA_TESLA_P100",
                                                  "NVIDIA_TESLA_V100",
                                                  "NVIDIA_TESLA_P4",
                                                  "NVIDIA_TESLA_T4",
                                                  "NVIDIA_TESLA_A100",
                                                  "NVIDIA_A100_80GB",
                                                  "NVIDIA_L4",
                                                  "NVIDIA_H100_80GB",
                                                  "NVIDIA_H100_MEGA_80GB",
                                                  "NVIDIA_H200_141GB",
                                                  "NVIDIA_B200",
                                                  "NVIDIA_GB200",
                                                  "TPU_V2",
                                                  "TPU_V3",
                                                  "TPU_V4_POD",
                                                  "TPU_V5_LITEPOD"};
  return kTypes;
}

// The GPUs of the accelerator-optimized families, per Compute Engine's
// "GPU machine types" (cloud.google.com/compute/docs/gpus): a family's GPU
// model is attached to every size, as many as the size's "Ng" says (G2's
// sizes carry no count: the table's column).
struct GpuFamily {
  const char* prefix;
  const char* type;
  std::vector<std::pair<const char*, int>> counts;  // empty: from "Ng"
};

const std::vector<GpuFamily>& GpuFamilies() {
  static const std::vector<GpuFamily> kGpus = {
      {"a2-highgpu-", "NVIDIA_TESLA_A100", {}},
      {"a2-megagpu-", "NVIDIA_TESLA_A100", {}},
      {"a2-ultragpu-", "NVIDIA_A100_80GB", {}},
      {"a3-highgpu-", "NVIDIA_H100_80GB", {}},
      {"a3-megagpu-", "NVIDIA_H100_MEGA_80GB", {}},
      {"a3-ultragpu-", "NVIDIA_H200_141GB", {}},
      {"a4-highgpu-", "NVIDIA_B200", {}},
      {"a4x-highgpu-", "NVIDIA_GB200", {}},
      {"g2-standard-",
       "NVIDIA_L4",
       {{"4", 1},
        {"8", 1},
        {"12", 1},
        {"16", 1},
        {"24", 2},
        {"32", 1},
        {"48", 4},
        {"96", 8}}},
  };
  return kGpus;
}

// The GPUs N1 machines take, in the counts Compute Engine attaches
// ("GPU machine types", N1 general-purpose); K80 has reached its end of
// support and Vertex's enum marks it deprecated.
struct Attachable {
  const char* type;
  std::vector<int64_t> counts;
};

const std::vector<Attachable>& N1Gpus() {
  static const std::vector<Attachable> kN1 = {
      {"NVIDIA_TESLA_T4", {1, 2, 4}},
      {"NVIDIA_TESLA_V100", {1, 2, 4, 8}},
      {"NVIDIA_TESLA_P100", {1, 2, 4}},
      {"NVIDIA_TESLA_P4", {1, 2, 4}},
  };
  return kN1;
}

// What N1 takes: `a` in the table above.
Status CheckN1Accelerator(std::string_view machine_type, const Accelerator& a) {
  const std::vector<Attachable>& n1 = N1Gpus();
  auto gpu = std::find_if(n1.begin(), n1.end(), [&](const Attachable& g) {
    return a.type == g.type;
  });
  if (gpu == n1.end()) {
    std::vector<std::string> types;
    for (const Attachable& g : n1) types.push_back(g.type);
    return Status::InvalidArgument(
        std::string(machine_type) + " takes no " + a.type +
        ": N1 machines take " + JoinStrings(types, ", ") +
        " (cloud.google.com/compute/docs/gpus); the other GPUs come with "
        "their own machine types (a2-, a3-, a4-, g2-)");
  }
  if (std::count(gpu->counts.begin(), gpu->counts.end(), a.count)) {
    return Status::Ok();
  }
  std::vector<std::string> counts;
  for (int64_t c : gpu->counts) counts.push_back(std::to_string(c));
  return Status::InvalidArgument(std::string(machine_type) + " takes " +
                                 JoinStrings(counts, ", ") + " " + a.type +
                                 ", not " + std::to_string(a.count));
}

}  // namespace

std::optional<Accelerator> AttachedAccelerator(std::string_view machine_type) {
  for (const GpuFamily& f : GpuFamilies()) {
    if (!StartsWith(machine_type, f.prefix)) continue;
    std::string_view size = machine_type.substr(std::strlen(f.prefix));
    for (const auto& [name, count] : f.counts) {
      if (size == name) return Accelerator{f.type, count};
    }
    if (f.counts.empty() && !size.empty() && size.back() == 'g') {
      return Accelerator{f.type, std::atoi(std::string(size).c_str())};
    }
  }
  return std::nullopt;
}

Status CheckAccelerator(std::string_view machine_type, const Accelerator& a) {
  const std::vector<std::string>& types = AcceleratorTypes();
  if (std::find(types.begin(), types.end(), a.type) == types.end()) {
    return Status::InvalidArgument(
        "unknown acceleratorType '" + a.type + "'" + DidYouMean(a.type, types) +
        ": Vertex's AcceleratorType names a GPU or TPU, e.g. NVIDIA_TESLA_T4 "
        "(vertex-ai/docs/reference/rest/v1/MachineSpec)");
  }
  if (a.type == "NVIDIA_TESLA_K80") {
    return Status::InvalidArgument(
        "NVIDIA_TESLA_K80 has reached its end of support "
        "(cloud.google.com/compute/docs/eol/k80-eol): take NVIDIA_TESLA_T4");
  }
  if (a.count < 1) {
    return Status::InvalidArgument("acceleratorCount " +
                                   std::to_string(a.count) + " with " + a.type +
                                   ": give at least 1");
  }
  if (std::optional<Accelerator> attached = AttachedAccelerator(machine_type)) {
    // MachineSpec.acceleratorCount: "for machine with N GPUs" it may be 1
    // to N (Vertex then co-schedules replicas on one VM).
    if (a.type == attached->type && a.count <= attached->count) {
      return Status::Ok();
    }
    return Status::InvalidArgument(
        std::string(machine_type) + " comes with " +
        std::to_string(attached->count) + " " + attached->type + ", not " +
        std::to_string(a.count) + " " + a.type + ": give acceleratorType " +
        attached->type + " and acceleratorCount " +
        std::to_string(attached->count));
  }
  const bool tpu = StartsWith(a.type, "TPU_");
  if (machine_type == "cloud-tpu") {
    // configure-compute, TPUs: cloud-tpu with TPU_V2 or TPU_V3, count 8.
    if ((a.type == "TPU_V2" || a.type == "TPU_V3") && a.count == 8) {
      return Status::Ok();
    }
    return Status::InvalidArgument(
        "cloud-tpu takes acceleratorType TPU_V2 or TPU_V3 with "
        "acceleratorCount 8, not " +
        std::to_string(a.count) + " " + a.type);
  }
  if (StartsWith(machine_type, "ct")) {  // the TPU in the name: ct5lp, ...
    if (tpu) return Status::Ok();
    return Status::InvalidArgument(std::string(machine_type) +
                                   " is a TPU VM: it takes no " + a.type);
  }
  if (StartsWith(machine_type, "n1-") && !tpu) {
    return CheckN1Accelerator(machine_type, a);
  }
  return Status::InvalidArgument(
      std::string(machine_type) + " takes no accelerator: " + a.type +
      " needs an N1 machine type (n1-standard-4 with NVIDIA_TESLA_T4, ...) "
      "or the accelerator's own (a2-, a3-, a4-, g2-, cloud-tpu)");
}

std::vector<std::string> VertexMachineTypes() {
  std::vector<std::string> out;
  for (const Family& f : Families()) {
    if (f.sizes.empty()) out.push_back(f.prefix);
    for (const char* s : f.sizes) out.push_back(std::string(f.prefix) + s);
  }
  return out;
}

Status CheckMachineType(std::string_view machine_type) {
  std::vector<std::string> known = VertexMachineTypes();
  if (std::find(known.begin(), known.end(), machine_type) != known.end()) {
    return Status::Ok();
  }
  std::string sizes;
  for (const Family& f : Families()) {
    if (f.sizes.empty() || !StartsWith(machine_type, f.prefix)) continue;
    for (const char* s : f.sizes) {
      sizes += (sizes.empty() ? "" : ", ") + std::string(f.prefix) + s;
    }
  }
  return Status::InvalidArgument(
      "unknown machine type '" + std::string(machine_type) + "'" +
      DidYouMean(machine_type, known) +
      (sizes.empty() ? ": Vertex's custom training takes e2-, n1-, n2-, "
                       "n2d-, c2-, m1-, a2-, a3-, a4-, g2- and TPU machine "
                       "types (cloud.google.com/vertex-ai/docs/training/"
                       "configure-compute)"
                     : ": that family's sizes are " + sizes));
}

Status CheckOutputUriPrefix(std::string_view uri) {
  constexpr std::string_view kScheme = "gs://";
  std::string_view bucket =
      StartsWith(uri, kScheme) ? uri.substr(kScheme.size()) : "";
  bucket = bucket.substr(0, bucket.find('/'));
  if (!bucket.empty()) return Status::Ok();
  return Status::InvalidArgument(
      "'" + std::string(uri) +
      "' is not a Cloud Storage URI: Vertex takes gs://BUCKET/PATH there "
      "(each trial's AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and "
      "AIP_TENSORBOARD_LOG_DIR go under it; a trial reads it as "
      "/gcs/BUCKET/PATH)");
}

}  // namespace trialshim::tuning
