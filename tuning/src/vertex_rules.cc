// Vertex's trialJobSpec rules (vertex_rules.h).
#include "trialshim/tuning/vertex_rules.h"

#include <algorithm>

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

}  // namespace

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
