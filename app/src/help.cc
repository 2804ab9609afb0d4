#include "help.h"

#include <algorithm>

#include "trialshim/base/strings.h"
#include "trialshim/config/command_line.h"
#include "trialshim/config/emit.h"
#include "trialshim/config/override.h"

namespace trialshim::app::internal {
namespace {

// Hydra's format_config_groups: "group: a, b" for each group with options.
std::string ConfigGroups(const config::ConfigRepository& repo, bool hydra) {
  std::string out;
  for (const std::string& group : repo.Groups()) {
    if (config::IsHydraKey(group) != hydra) continue;
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

// The template at `key` of Hydra's node, resolved.
StatusOr<std::string> Template(const config::ComposeResult& composed,
                               const std::string& key) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      config::Node text,
      config::ResolveHydra(composed, key, true, config::HydraScope::kWholeConfig));
  if (!text.is_string()) {
    return Status::InvalidArgument("hydra." + key + " is not a string");
  }
  return text.AsString();
}

// argparse's "--flag,-f : help" lines, as Hydra's format_args_help.
std::string FlagsHelp() {
  std::string out;
  for (const config::HydraFlag& f : config::HydraFlags()) {
    if (!Supported(f.id)) continue;
    std::string names(f.long_name);
    if (!f.short_name.empty()) names += "," + std::string(f.short_name);
    out += names + " : " + std::string(f.help) + "\n";
  }
  return out + "Overrides : Any key=value arguments to override config values "
               "(use dots for.nested=overrides)\n";
}

// Hydra's _log_header: the text, then as many `filler`s.
std::string Header(const std::string& text, char filler) {
  return text + "\n" + std::string(text.size(), filler) + "\n";
}

std::string Pad(const std::string& s, size_t width) {
  return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
}

// "| a | b |" rows under a dashed header, as Hydra's info tables; Hydra's
// defaults list ends its header with "| " (`open_header`).
std::string Table(const std::vector<std::vector<std::string>>& rows,
                  bool open_header) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (size_t i = 0; i < row.size(); ++i) s += " " + Pad(row[i], width[i]) + " |";
    return s;
  };
  std::string header = line(rows[0]) + (open_header ? " " : "");
  std::string out = Header(header, '-');
  for (size_t i = 1; i < rows.size(); ++i) out += line(rows[i]) + "\n";
  return out + std::string(header.size(), '-') + "\n";
}

// What Plugins.discover() finds in a bare Hydra 1.3.2, in its order: the
// config sources, launcher and sweeper an app has built in, and the shell
// completions (Hydra's, listed as Hydra lists them; an app refuses
// --shell-completion).
std::string Plugins() {
  std::string out = Header("Installed Hydra Plugins", '*');
  const std::pair<std::string, std::vector<std::string>> kinds[] = {
      {"ConfigSource",
       {"FileConfigSource", "ImportlibResourcesConfigSource",
        "StructuredConfigSource"}},
      {"CompletionPlugin", {"BashCompletion", "FishCompletion", "ZshCompletion"}},
      {"Launcher", {"BasicLauncher"}},
      {"Sweeper", {"BasicSweeper"}}};
  for (const auto& [kind, names] : kinds) {
    out += "\t" + kind + ":\n\t" + std::string(kind.size() + 1, '-') + "\n";
    for (const std::string& name : names) out += "\t\t" + name + "\n";
  }
  return out;
}

std::string SearchPath(const config::ComposeResult& composed) {
  std::vector<std::vector<std::string>> rows = {{"Provider", "Search path"}};
  for (const config::ConfigSource& s : composed.repository.Sources()) {
    rows.push_back({s.provider, s.scheme + "://" + s.path});
  }
  return "\n" + Header("Config search path", '*') + Table(rows, false);
}

std::string DefaultsTree(const config::ComposeResult& composed) {
  std::string out = "\n" + Header("Defaults Tree", '*');
  for (const std::string& line : composed.defaults_tree) out += line + "\n";
  return out;
}

std::string DefaultsList(const config::ComposeResult& composed) {
  std::vector<std::vector<std::string>> rows = {
      {"Config path", "Package", "_self_", "Parent"}};
  for (const auto& d : composed.defaults_list) {
    rows.push_back(
        {d.config_path, d.package, d.is_self ? "True" : "False", d.parent});
  }
  return "\n" + Header("Defaults List", '*') + Table(rows, true);
}

}  // namespace

bool Supported(config::HydraFlagId id) {
  using config::HydraFlagId;
  return id != HydraFlagId::kShellCompletion &&
         id != HydraFlagId::kExperimentalRerun;
}

StatusOr<std::string> AppHelp(const config::ComposeResult& composed,
                              bool resolve) {
  const config::ConfigRepository& repo = composed.repository;
  TRIALSHIM_ASSIGN_OR_RETURN(std::string text,
                             Template(composed, "help.template"));
  config::Node cfg = composed.config;
  if (resolve) {
    TRIALSHIM_ASSIGN_OR_RETURN(cfg, config::ResolveShown(cfg, composed));
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

std::vector<std::string> AllInfo(const config::ComposeResult& composed) {
  std::string head = Header("Hydra 1.3.2", '=') + Plugins() +
                     SearchPath(composed) + DefaultsTree(composed) +
                     DefaultsList(composed) + Header("Config", '*');
  std::vector<std::string> messages;
  for (size_t at = 0, end; (end = head.find('\n', at)) != std::string::npos;
       at = end + 1) {
    messages.push_back(head.substr(at, end - at));
  }
  messages.push_back(config::ToYaml(composed.config));
  return messages;
}

StatusOr<std::string> Info(const std::string& what,
                           const config::ComposeResult& composed) {
  if (what == "searchpath") return SearchPath(composed);
  if (what == "defaults") return DefaultsList(composed);
  if (what == "defaults-tree") return DefaultsTree(composed);
  if (what == "plugins") return Plugins();
  if (what == "config") {
    return SearchPath(composed) + DefaultsTree(composed) +
           DefaultsList(composed) + Header("Config", '*') +
           config::ToYaml(composed.config) + "\n";
  }
  if (what == "all") return JoinStrings(AllInfo(composed), "\n") + "\n";
  return Status::InvalidArgument(
      "Info usage: --info [all|config|defaults|defaults-tree|plugins|searchpath]");
}

}  // namespace trialshim::app::internal
