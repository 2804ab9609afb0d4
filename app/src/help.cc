#include "help.h"

#include <algorithm>

#include "trialshim/base/strings.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/interpolation.h"

namespace trialshim::app::internal {
namespace {

bool IsHydraGroup(const std::string& g) {
  return g == "hydra" || StartsWith(g, "hydra/");
}

// Hydra's format_config_groups: "group: a, b" for each group with options.
std::string ConfigGroups(const config::ConfigRepository& repo, bool hydra) {
  std::string out;
  for (const std::string& group : repo.Groups()) {
    if (IsHydraGroup(group) != hydra) continue;
    std::vector<std::string> options = repo.GroupOptions(group);
    if (options.empty()) continue;
    out += group + ": " + JoinStrings(options, ", ") + "\n";
  }
  return out;
}

// Python's string.Template.substitute for the names Hydra passes.
std::string Substitute(std::string text,
                       const std::vector<std::pair<std::string, std::string>>&
                           values) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    bool replaced = false;
    for (const auto& [name, value] : values) {
      if (text.compare(i + 1, name.size(), name) == 0) {
        out += value;
        i += name.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += '$';
  }
  return out;
}

// The template at `key` of Hydra's node, resolved against it.
StatusOr<std::string> Template(const config::ComposeResult& composed,
                               const std::string& key) {
  config::Node root = config::Node::MakeMap({{"hydra", composed.hydra}});
  config::ResolveOptions options;
  options.keep_missing = true;
  options.hydra = &composed.hydra;
  TRIALSHIM_ASSIGN_OR_RETURN(config::Node text,
                             config::ResolvePath(root, "hydra." + key));
  if (!text.is_string()) {
    return Status::InvalidArgument("hydra." + key + " is not a string");
  }
  return text.AsString();
}

// argparse's "--flag,-f : help" lines, as Hydra's format_args_help.
std::string FlagsHelp() {
  std::string out;
  for (const config::HydraFlag& f : config::HydraFlags()) {
    std::string names(f.long_name);
    if (!f.short_name.empty()) names += "," + std::string(f.short_name);
    out += names + " : " + std::string(f.help) + "\n";
  }
  return out + "Overrides : Any key=value arguments to override config values "
               "(use dots for.nested=overrides)\n";
}

std::string Table(const std::string& title,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (size_t i = 0; i < row.size(); ++i) {
      s += " " + row[i] + std::string(width[i] - row[i].size(), ' ') + " |";
    }
    return s + "\n";
  };
  std::string out = "\n" + title + "\n" + std::string(title.size(), '*') + "\n";
  std::string header = line(rows[0]);
  out += header + std::string(header.size() - 1, '-') + "\n";
  for (size_t i = 1; i < rows.size(); ++i) out += line(rows[i]);
  return out + std::string(header.size() - 1, '-') + "\n";
}

}  // namespace

StatusOr<std::string> AppHelp(const config::ComposeResult& composed,
                              bool resolve) {
  const config::ConfigRepository& repo = composed.repository;
  TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                             Template(composed, "help.template"));
  config::Node cfg = composed.config;
  if (resolve) {
    config::ResolveOptions options;
    options.keep_missing = true;
    options.hydra = &composed.hydra;
    TRIALSHIM_ASSIGN_OR_RETURN(cfg, config::ResolveAll(cfg, options));
  }
  return Substitute(text, {{"FLAGS_HELP", FlagsHelp()},
                           {"HYDRA_CONFIG_GROUPS", ConfigGroups(repo, true)},
                           {"APP_CONFIG_GROUPS", ConfigGroups(repo, false)},
                           {"CONFIG", config::ToYaml(cfg)}}) +
         "\n";
}

StatusOr<std::string> HydraHelp(const config::ComposeResult& composed) {
  const config::ConfigRepository& repo = composed.repository;
  TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                             Template(composed, "hydra_help.template"));
  config::Node hydra = config::ConfigView(composed, "hydra");
  return Substitute(text, {{"FLAGS_HELP", FlagsHelp()},
                           {"HYDRA_CONFIG_GROUPS", ConfigGroups(repo, true)},
                           {"APP_CONFIG_GROUPS", ConfigGroups(repo, false)},
                           {"CONFIG", config::ToYaml(hydra)}}) +
         "\n";
}

StatusOr<std::string> Info(const std::string& what,
                           const config::ComposeResult& composed) {
  std::string out;
  if (what == "searchpath" || what == "all") {
    std::vector<std::vector<std::string>> rows = {{"Provider", "Search path"}};
    for (const config::ConfigSource& s : composed.repository.Sources()) {
      rows.push_back({s.provider, s.scheme + "://" + s.path});
    }
    out += Table("Config search path", rows);
  }
  if (what == "config" || what == "all") {
    out += "\nConfig\n******\n" + config::ToYaml(composed.config) + "\n";
  }
  if (out.empty()) {
    return Status::InvalidArgument("--info " + what +
                                   " is not shown by trialshim apps (they show "
                                   "all, config and searchpath)");
  }
  return out;
}

}  // namespace trialshim::app::internal
