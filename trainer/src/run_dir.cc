#include "trialshim/trainer/run_dir.h"

#include <filesystem>

#include "trialshim/base/file.h"
#include "trialshim/config/emit.h"

namespace trialshim::trainer {

std::string DefaultRunDir(std::time_t now) {
  std::tm local{};
  localtime_r(&now, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "outputs/%Y-%m-%d/%H-%M-%S", &local);
  return buf;
}

Status CreateRunDir(const std::string& dir, const config::Node& config,
                    const std::vector<std::string>& overrides,
                    const std::string& hydra_subdir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::IOError("can not create the run directory " + dir + ": " +
                           ec.message());
  }
  // What a killed run was writing here (metrics.csv, the model).
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(dir).status());
  if (hydra_subdir.empty()) return Status::Ok();
  const std::string sub = dir + "/" + hydra_subdir;
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(sub));
  TRIALSHIM_RETURN_IF_ERROR(RemoveStaleTemporaries(sub).status());
  TRIALSHIM_RETURN_IF_ERROR(
      WriteFileDurably(sub + "/config.yaml", config::ToYaml(config)));
  config::Node::List items;
  for (const auto& o : overrides) items.push_back(config::Node::String(o));
  return WriteFileDurably(sub + "/overrides.yaml",
                          config::ToYaml(config::Node::MakeList(items)));
}

}  // namespace trialshim::trainer
