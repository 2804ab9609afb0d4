// ConfigCache: a config file read once per composition, its `# @package`
// header and its `defaults` list taken apart from its content.
#include <string>
#include <string_view>

#include "defaults_entry.h"
#include "defaults_list.h"
#include "hydra_conf.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/python_text.h"

namespace trialshim::config::internal {
namespace {

// `# @package X` from the leading `# @key value` comment lines of the first
// 512 bytes, as Hydra's ConfigSource._get_header_dict reads them.
StatusOr<std::optional<std::string>> PackageHeader(std::string_view head,
                                                   const std::string& file) {
  std::string text(head.substr(0, 512));
  std::optional<std::string> package;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find_first_of("\r\n", pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;  // blank lines are skipped
    line = line.substr(b, line.find_last_not_of(" \t") + 1 - b);
    if (line[0] != '#') break;
    size_t at = line.find_first_not_of("# \t");
    if (at == std::string::npos || line[at] != '@') break;
    std::vector<std::string> words;
    for (size_t i = at; i < line.size();) {
      size_t j = line.find(' ', i);
      if (j == std::string::npos) j = line.size();
      if (j > i) words.push_back(line.substr(i, j - i));
      i = j + 1;
    }
    if (words.size() != 2) {
      return Status::InvalidArgument(
          file + ": " +
          (words.size() < 2 ? "expected a header of the form '# @KEY VALUE'"
                            : "too many components in header") +
          ", got '" + line.substr(at) + "'");
    }
    if (words[0] == "@package") package = words[1];
  }
  return package;
}

}  // namespace

// Hydra's ConfigRepository.load_config behind its CachingConfigRepository
// (hydra/_internal/config_repository.py): Hydra loads a file twice per
// node (update_package_header, then the tree) and relies on the cache;
// so do we. _extract_defaults_list takes `defaults` out of the content.
StatusOr<const LoadedConfig*> ConfigCache::Load(
    const std::string& config_path) {
  auto it = cache_.find(config_path);
  if (it != cache_.end()) return it->second.get();
  // The builder refuses such names with context; this guards other callers.
  if (std::string why = defaults::PathEscape(config_path, false);
      !why.empty()) {
    return Status::InvalidArgument("Invalid config path '" + config_path +
                                   "': it has " + why +
                                   "; configs are named by their path inside "
                                   "the config directory");
  }
  if (!repo_.ConfigExists(config_path)) {
    cache_.emplace(config_path, nullptr);
    return static_cast<const LoadedConfig*>(nullptr);
  }
  auto loaded = std::make_unique<LoadedConfig>();
  std::string file = repo_.FindFile(config_path);
  const BuiltinConfig* builtin = FindBuiltinConfig(config_path);
  if (builtin != nullptr && builtin->structured && !file.empty()) {
    // Hydra's structured configs come after the app's directories in its
    // search path: the app's file wins, matched against the schema.
    if (config_path == "hydra/config") {
      return Status::InvalidArgument(
          "'hydra/config' is validated against ConfigStore schema with the "
          "same name, and the automatically matched schema contains a "
          "defaults list: Hydra 1.2+ refuses this. Rename " +
          file +
          " (see https://hydra.cc/docs/1.2/upgrades/1.0_to_1.1/"
          "automatic_schema_matching)");
    }
    builtin = nullptr;
  }
  if (builtin != nullptr) {
    file = "pkg://hydra.conf/" + config_path + ".yaml";
    TRIALSHIM_ASSIGN_OR_RETURN(loaded->package_header,
                               PackageHeader(builtin->yaml, file));
    TRIALSHIM_ASSIGN_OR_RETURN(loaded->config,
                               LoadYamlString(builtin->yaml, file, limits_));
  } else {
    // Read once (ReadConfigText: a FIFO or a device in the tree is refused,
    // not waited on), for the header and the YAML both.
    TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                               ReadConfigText(file, limits_));
    TRIALSHIM_ASSIGN_OR_RETURN(
        loaded->package_header,
        PackageHeader(std::string_view(text).substr(0, 512), file));
    TRIALSHIM_ASSIGN_OR_RETURN(loaded->config,
                               LoadYamlString(text, file, limits_));
    // OmegaConf refuses bad interpolation syntax as it creates the config.
    TRIALSHIM_RETURN_IF_ERROR(CheckInterpolationSyntax(loaded->config));
  }
  if (loaded->config.is_null()) loaded->config = Node::MakeMap();
  loaded->defaults = Node::MakeList();
  if (loaded->config.is_map()) {
    if (const Node* d = loaded->config.Get("defaults")) {
      if (!d->is_list()) {
        return Status::InvalidArgument(
            "Invalid defaults list in '" + config_path +
            "', defaults must be a list (got " +
            // Hydra's _extract_defaults_list says "mapping" for a DictConfig.
            (d->is_map() ? std::string("mapping") : PythonTypeName(*d)) + ")" +
            (d->mark().known() ? " at " + d->mark().ToString() : ""));
      }
      loaded->defaults = *d;
      loaded->config.Erase("defaults");
    }
  } else if (!loaded->config.is_list()) {
    return Status::InvalidArgument(file + ": a config file must hold a " +
                                   "mapping, not a " +
                                   loaded->config.type_name());
  }
  const LoadedConfig* out = loaded.get();
  cache_.emplace(config_path, std::move(loaded));
  return out;
}

}  // namespace trialshim::config::internal
