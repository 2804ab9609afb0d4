#include "run_dir.h"

#include "trialshim/base/file.h"
#include "trialshim/config/emit.h"

namespace trialshim::app::internal {

Status CreateRunDir(const std::string& output_dir,
                    const std::optional<std::string>& output_subdir,
                    const config::Node& task_config,
                    const config::Node& hydra,
                    const std::vector<std::string>& task_overrides) {
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(output_dir));
  // What a killed run was writing here (metrics.csv, the model).
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(output_dir).status());
  if (!output_subdir) return Status::Ok();
  const std::string sub = output_dir + "/" + *output_subdir;
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(sub));
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(sub).status());
  TRIALSHIM_RETURN_IF_ERROR(
      WriteFileDurably(sub + "/config.yaml", config::ToYaml(task_config)));
  TRIALSHIM_RETURN_IF_ERROR(WriteFileDurably(
      sub + "/hydra.yaml",
      config::ToYaml(config::Node::MakeMap({{"hydra", hydra}}))));
  config::Node::List items;
  for (const auto& o : task_overrides) items.push_back(config::Node::String(o));
  return WriteFileDurably(sub + "/overrides.yaml",
                          config::ToYaml(config::Node::MakeList(items)));
}

}  // namespace trialshim::app::internal
