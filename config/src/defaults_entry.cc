// ParseDefaultsList: a config's `defaults` node read into Hydra's
// ConfigDefault and GroupDefault entries (defaults_entry.h).
#include "defaults_entry.h"

#include "trialshim/config/python_text.h"
#include "typed_value.h"

namespace trialshim::config::internal::defaults {

// Hydra 1.3.2 does not find such names ("Could not find 'db/../out'");
// we read files by path and would load the file outside, so they are
// refused first, saying why (tests/fuzz/README.md, F2).
std::string PathEscape(std::string_view name, bool allow_leading_slash) {
  if (name.find('\\') != std::string_view::npos) return "a backslash";
  if (!allow_leading_slash && StartsWith(name, "/")) return "an absolute path";
  for (size_t i = 0; i <= name.size();) {
    size_t slash = name.find('/', i);
    if (slash == std::string_view::npos) slash = name.size();
    if (name.substr(i, slash - i) == "..") return "a '..' path segment";
    i = slash + 1;
  }
  return "";
}

std::string OptionLines(const std::vector<std::string>& options) {
  std::string out;
  for (const std::string& o : options) {
    if (!out.empty()) out += "\n";
    out += "\t" + o;
  }
  return out;
}

// Hydra's ConfigRepository._create_defaults_list
// (hydra/_internal/config_repository.py). A string is a ConfigDefault
// `path[@pkg]`; a one-key mapping is a GroupDefault
// `[optional] [override] group[@pkg]: option`, whose option may be null or
// a list. `@pkg:pkg2` is Hydra 1.0's package rename: _split_group still
// splits it and 1.1 on ignores the second half, so we drop it too.
StatusOr<std::vector<Default>> ParseDefaultsList(const Node& list,
                                                 const std::string& where) {
  std::vector<Default> out;
  for (const Node& item : list.AsList()) {
    Default d;
    std::string in = "In '" + where + "': ";
    if (item.is_string()) {
      std::string s = item.AsString();
      size_t at = s.find('@');
      d.path = s.substr(0, at);
      if (at != std::string::npos) {
        std::string pkg = s.substr(at + 1);
        d.package = pkg.substr(0, pkg.find(':'));
      }
      if (d.IsSelf() && d.package) {
        return Status::InvalidArgument(in + "'" + s +
                                       "': _self_@PACKAGE is not supported");
      }
    } else if (item.is_map()) {
      if (item.size() != 1) {
        return Status::InvalidArgument(
            in + (item.size() == 0
                      ? std::string("missing group name in a defaults item")
                      : "too many keys in defaults item {" +
                            JoinStrings(item.Keys(), ", ") +
                            "}: each item is one 'group: option'"));
      }
      const auto& [key, value] = item.AsMap()[0];
      d.is_group = true;
      size_t at = key.find('@');
      std::string head = key.substr(0, at);
      if (at != std::string::npos) {
        std::string pkg = key.substr(at + 1);
        d.package = pkg.substr(0, pkg.find(':'));
      }
      // "optional override db": keywords, then the group. As Hydra's
      // _extract_keywords_from_config_group, the keywords end at the first
      // other word, which is ignored with those after it.
      std::vector<std::string> words;
      for (size_t i = 0;;) {
        size_t sp = head.find(' ', i);
        words.push_back(head.substr(i, sp - i));
        if (sp == std::string::npos) break;
        i = sp + 1;
      }
      d.group = words.back();
      for (size_t i = 0; i + 1 < words.size(); ++i) {
        if (words[i] == "optional") {
          d.optional = true;
        } else if (words[i] == "override") {
          d.is_override = true;
        } else {
          break;
        }
      }
      if (d.group.empty()) {
        return Status::InvalidArgument(in + "missing group name in '" + key +
                                       "'");
      }
      // null keeps the group in the list with no choice: a placeholder the
      // command line may fill; nothing is merged for it.
      if (value.is_null()) {
        d.name.reset();
      } else if (value.is_string()) {
        d.name = value.AsString();
      } else if (value.is_list()) {
        d.is_options = true;
        for (const Node& v : value.AsList()) {
          if (!v.is_string()) {
            return Status::InvalidArgument(
                in + "unsupported item value in defaults '" + key + "': " +
                PythonTypeName(v) + ", nested list items must be strings");
          }
          d.options.push_back(v.AsString());
        }
      } else {
        return Status::InvalidArgument(
            in + "unsupported item value in defaults '" + key +
            "': " + PythonTypeName(value) +
            ". Supported: string or list (quote an option name that YAML "
            "reads as a number or bool)");
      }
    } else {
      return Status::InvalidArgument(
          in + "unsupported type in defaults: " + OmegaTypeName(item) +
          " (expected 'group: option' or a path)");
    }
    // `@_here_` is the parent's own package (the __post_init__ of
    // ConfigDefault and GroupDefault in hydra/core/default_element.py).
    if (d.package && *d.package == "_here_") d.package = "";
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace trialshim::config::internal::defaults
