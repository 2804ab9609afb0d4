#include "trialshim/config/command_line.h"

#include <algorithm>

#include "trialshim/base/python_text.h"
#include "trialshim/base/spell.h"

namespace trialshim::config {
namespace {

// Hydra's command line is an argparse parser (get_args_parser in
// hydra/_internal/utils.py), so an app's flags must be split exactly as
// Python 3.11's argparse.py splits them: abbreviations, "-cjob", "-mr",
// "--", and a second run of overrides after a flag. The function names
// below are argparse's, to be read side by side.

// One argument as argparse classifies it before parsing: a positional ('A'),
// the "--" that ends the flags ('-'), or a flag ('O'); a flag argparse does
// not know has flag == nullptr.
struct Token {
  char kind = 'A';
  const HydraFlag* flag = nullptr;
  std::string spelling;                       // the option string matched
  std::optional<std::string> explicit_value;  // after "=" or a short flag
};

// "--cfg/-c", as argparse names an action in its errors.
std::string ActionName(const HydraFlag& f) {
  std::string name(f.long_name);
  if (!f.short_name.empty()) name += "/" + std::string(f.short_name);
  return name;
}

Status ArgumentError(const HydraFlag& f, const std::string& what) {
  return Status::InvalidArgument("argument " + ActionName(f) + ": " + what);
}

// Every option string, in the order argparse registers them: the order of
// the add_argument calls in get_args_parser, which is the order the
// "could match" list of an ambiguous abbreviation names them in.
std::vector<std::pair<std::string_view, const HydraFlag*>> OptionStrings() {
  std::vector<std::pair<std::string_view, const HydraFlag*>> out;
  for (const HydraFlag& f : HydraFlags()) {
    out.emplace_back(f.long_name, &f);
    if (!f.short_name.empty()) out.emplace_back(f.short_name, &f);
  }
  return out;
}

// argparse's _get_option_tuples: the flags `arg` abbreviates ("--con" ->
// --config-path ...) or, for a single dash, the short flag it starts with
// ("-cjob" -> -c with "job") and the flags it is a prefix of. Hydra's
// parser keeps allow_abbrev at its default, True.
std::vector<Token> Abbreviations(const std::string& arg) {
  std::vector<Token> out;
  if (arg[1] == '-') {
    size_t eq = arg.find('=');
    std::string prefix = arg.substr(0, eq);
    for (const auto& [spelling, flag] : OptionStrings()) {
      if (spelling.substr(0, prefix.size()) != prefix) continue;
      Token t{'O', flag, std::string(spelling), std::nullopt};
      if (eq != std::string::npos) t.explicit_value = arg.substr(eq + 1);
      out.push_back(std::move(t));
    }
    return out;
  }
  std::string short_prefix = arg.substr(0, 2);
  for (const auto& [spelling, flag] : OptionStrings()) {
    if (spelling == short_prefix) {
      out.push_back({'O', flag, std::string(spelling), arg.substr(2)});
    } else if (spelling.substr(0, arg.size()) == arg) {
      out.push_back({'O', flag, std::string(spelling), std::nullopt});
    }
  }
  return out;
}

bool IsNegativeNumber(const std::string& arg) {
  // argparse's _negative_number_matcher: '^-\d+$|^-\d*\.\d+$'.
  size_t dot = arg.find('.');
  auto digits = [&](size_t from, size_t to) {
    return std::all_of(arg.begin() + from, arg.begin() + to,
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot == std::string::npos) return arg.size() > 1 && digits(1, arg.size());
  return dot + 1 < arg.size() && digits(1, dot) && digits(dot + 1, arg.size());
}

// argparse's _parse_optional: an exact flag, then "flag=value", then a
// unique abbreviation (two or more: "ambiguous option", exit 2); what is
// left and starts with '-' is an unknown flag, unless it looks like a
// negative number or holds a space ("-x y" is a value, as argparse takes it).
StatusOr<Token> Classify(const std::string& arg) {
  if (arg.empty() || arg[0] != '-' || arg.size() == 1) return Token{};
  if (const HydraFlag* f = FindHydraFlag(arg)) return Token{'O', f, arg, {}};
  size_t eq = arg.find('=');
  if (eq != std::string::npos) {
    if (const HydraFlag* f = FindHydraFlag(arg.substr(0, eq))) {
      return Token{'O', f, arg.substr(0, eq), arg.substr(eq + 1)};
    }
  }
  std::vector<Token> matches = Abbreviations(arg);
  if (matches.size() > 1) {
    std::string names;
    for (const Token& t : matches) {
      names += (names.empty() ? "" : ", ") + t.spelling;
    }
    return Status::InvalidArgument("ambiguous option: " + arg +
                                   " could match " + names);
  }
  if (matches.size() == 1) return matches[0];
  // Hydra has no flag that looks like a negative number, so "-1" is a value.
  if (IsNegativeNumber(arg) || arg.find(' ') != std::string::npos) {
    return Token{};
  }
  return Token{'O', nullptr, arg, {}};
}

StatusOr<std::vector<Token>> ClassifyAll(const std::vector<std::string>& args) {
  std::vector<Token> tokens;
  bool after_dashes = false;
  for (const std::string& a : args) {
    if (after_dashes) {
      tokens.push_back(Token{});
    } else if (a == "--") {
      after_dashes = true;
      tokens.push_back(Token{'-', nullptr, a, {}});
    } else {
      TRIALSHIM_ASSIGN_OR_RETURN(Token t, Classify(a));
      tokens.push_back(std::move(t));
    }
  }
  return tokens;
}

// Stores one flag's value (argparse's take_action). A value outside the
// flag's choices is argparse's _check_value error, "invalid choice: 'x'
// (choose from 'job', 'hydra', 'all')", plus our did-you-mean; `more_cfg`
// adds the caller's own --cfg choices (an app's "schema").
Status Apply(const HydraFlag& f, const std::optional<std::string>& value,
             const std::vector<std::string>& more_cfg, HydraCommandLine* out) {
  std::vector<std::string> allowed = f.choices;
  if (f.id == HydraFlagId::kCfg) {
    allowed.insert(allowed.end(), more_cfg.begin(), more_cfg.end());
  }
  if (value && !allowed.empty() &&
      std::find(allowed.begin(), allowed.end(), *value) == allowed.end()) {
    std::string choices;
    for (const std::string& c : allowed) {
      choices += (choices.empty() ? "" : ", ") + PythonStringRepr(c);
    }
    return ArgumentError(f, "invalid choice: " + PythonStringRepr(*value) +
                                " (choose from " + choices + ")" +
                                DidYouMean(*value, allowed));
  }
  switch (f.id) {
    case HydraFlagId::kHelp:
      out->help = true;
      break;
    case HydraFlagId::kHydraHelp:
      out->hydra_help = true;
      break;
    case HydraFlagId::kVersion:
      out->version = true;
      break;
    case HydraFlagId::kCfg:
      out->cfg = value;
      break;
    case HydraFlagId::kResolve:
      out->resolve = true;
      break;
    case HydraFlagId::kPackage:
      out->package = value;
      break;
    case HydraFlagId::kRun:
      out->run = true;
      break;
    case HydraFlagId::kMultirun:
      out->multirun = true;
      break;
    case HydraFlagId::kShellCompletion:
      out->shell_completion = true;
      break;
    case HydraFlagId::kConfigPath:
      out->config_path = value;
      break;
    case HydraFlagId::kConfigName:
      out->config_name = value;
      break;
    case HydraFlagId::kConfigDir:
      out->config_dir = value;
      break;
    case HydraFlagId::kExperimentalRerun:
      out->experimental_rerun = value;
      break;
    case HydraFlagId::kInfo:
      // --info is nargs="?" with const="all": bare --info means all.
      out->info = value ? *value : "all";
      break;
  }
  return Status::Ok();
}

// argparse's consume_optional for the flag at tokens[i]; returns the index
// after it and its value. A value flag takes the next argument only if it
// was classified as a value ('A'): "-c -1" gives --cfg "-1", "-c --run"
// fails with "expected one argument". A switch given "=x" is "ignored
// explicit argument 'x'", except that short switches chain ("-mr").
StatusOr<size_t> ConsumeFlag(const std::vector<std::string>& args,
                             const std::vector<Token>& tokens, size_t i,
                             const std::vector<std::string>& more_cfg,
                             HydraCommandLine* out) {
  Token t = tokens[i];
  if (t.flag == nullptr) {
    out->unrecognized.push_back(args[i]);
    return i + 1;
  }
  for (;;) {
    const HydraFlag& f = *t.flag;
    if (!t.explicit_value) {
      bool next_is_value = i + 1 < tokens.size() && tokens[i + 1].kind == 'A';
      if (f.arity == HydraFlag::kValue && !next_is_value) {
        return ArgumentError(f, "expected one argument");
      }
      bool takes = f.arity != HydraFlag::kSwitch && next_is_value;
      std::optional<std::string> value;
      if (takes) value = args[i + 1];
      TRIALSHIM_RETURN_IF_ERROR(Apply(f, value, more_cfg, out));
      return i + 1 + (takes ? 1 : 0);
    }
    const std::string& explicit_value = *t.explicit_value;
    if (f.arity != HydraFlag::kSwitch) {
      TRIALSHIM_RETURN_IF_ERROR(Apply(f, explicit_value, more_cfg, out));
      return i + 1;
    }
    // A short switch with more after it: "-mr" is -m then -r.
    const HydraFlag* next =
        t.spelling[1] != '-' && !explicit_value.empty()
            ? FindHydraFlag("-" + explicit_value.substr(0, 1))
            : nullptr;
    if (next == nullptr) {
      return ArgumentError(
          f, "ignored explicit argument " + PythonStringRepr(explicit_value));
    }
    TRIALSHIM_RETURN_IF_ERROR(Apply(f, std::nullopt, more_cfg, out));
    // action="version" prints and exits at once: nothing after it counts.
    if (out->version) return tokens.size();
    t.flag = next;
    t.spelling = "-" + explicit_value.substr(0, 1);
    t.explicit_value = explicit_value.size() > 1
                           ? std::optional(explicit_value.substr(1))
                           : std::nullopt;
  }
}

// argparse's consume_positionals: the first run of positional arguments from
// `start` becomes the overrides (without its first "--", which _get_values
// removes; a second "--" stays an override); later runs are unrecognized,
// as the one nargs="*" positional is used up: "a=1 --cfg job b=2" leaves
// "b=2" over, which hydra.main (parse_args, hydra/main.py) refuses as
// "unrecognized arguments".
size_t ConsumePositionals(const std::vector<std::string>& args,
                          const std::vector<Token>& tokens, size_t start,
                          bool* consumed, HydraCommandLine* out) {
  size_t end = start;
  while (end < tokens.size() && tokens[end].kind != 'O') ++end;
  std::vector<std::string>& into =
      *consumed ? out->unrecognized : out->overrides;
  bool strip_dashes = !*consumed;
  for (size_t i = start; i < end; ++i) {
    if (strip_dashes && args[i] == "--") {
      strip_dashes = false;
      continue;
    }
    into.push_back(args[i]);
  }
  *consumed = true;
  return end;
}

}  // namespace

// get_args_parser's flags, their short names, choices and help texts, as
// Hydra 1.3.2 registers them (the help texts are what --hydra-help prints).
const std::vector<HydraFlag>& HydraFlags() {
  using F = HydraFlag;
  static const std::vector<HydraFlag> flags = {
      {HydraFlagId::kHelp,
       "--help",
       "-h",
       F::kSwitch,
       {},
       "Application's help"},
      {HydraFlagId::kHydraHelp,
       "--hydra-help",
       "",
       F::kSwitch,
       {},
       "Hydra's help"},
      {HydraFlagId::kVersion,
       "--version",
       "",
       F::kSwitch,
       {},
       "Show Hydra's version and exit"},
      {HydraFlagId::kCfg,
       "--cfg",
       "-c",
       F::kValue,
       {"job", "hydra", "all"},
       "Show config instead of running [job|hydra|all]"},
      {HydraFlagId::kResolve,
       "--resolve",
       "",
       F::kSwitch,
       {},
       "Used in conjunction with --cfg, resolve config interpolations before "
       "printing."},
      {HydraFlagId::kPackage,
       "--package",
       "-p",
       F::kValue,
       {},
       "Config package to show"},
      {HydraFlagId::kRun, "--run", "-r", F::kSwitch, {}, "Run a job"},
      {HydraFlagId::kMultirun,
       "--multirun",
       "-m",
       F::kSwitch,
       {},
       "Run multiple jobs with the configured launcher and sweeper"},
      {HydraFlagId::kShellCompletion,
       "--shell-completion",
       "-sc",
       F::kSwitch,
       {},
       "Install or Uninstall shell completion"},
      {HydraFlagId::kConfigPath,
       "--config-path",
       "-cp",
       F::kValue,
       {},
       "Overrides the config_path specified in hydra.main()"},
      {HydraFlagId::kConfigName,
       "--config-name",
       "-cn",
       F::kValue,
       {},
       "Overrides the config_name specified in hydra.main()"},
      {HydraFlagId::kConfigDir,
       "--config-dir",
       "-cd",
       F::kValue,
       {},
       "Adds an additional config dir to the config search path"},
      {HydraFlagId::kExperimentalRerun,
       "--experimental-rerun",
       "",
       F::kValue,
       {},
       "Rerun a job from a previous config pickle"},
      {HydraFlagId::kInfo,
       "--info",
       "-i",
       F::kOptional,
       {"all", "config", "defaults", "defaults-tree", "plugins", "searchpath"},
       "Print Hydra information "
       "[all|config|defaults|defaults-tree|plugins|searchpath]"},
  };
  return flags;
}

const HydraFlag* FindHydraFlag(std::string_view name) {
  for (const HydraFlag& f : HydraFlags()) {
    if (name == f.long_name ||
        (!f.short_name.empty() && name == f.short_name)) {
      return &f;
    }
  }
  return nullptr;
}

// argparse's _parse_known_args: flags and runs of positionals alternate.
// Every argument is classified first (so "--" ends the flags for the rest),
// then consumed left to right.
StatusOr<HydraCommandLine> ParseHydraCommandLine(
    const std::vector<std::string>& args,
    const std::vector<std::string>& more_cfg) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<Token> tokens, ClassifyAll(args));
  HydraCommandLine out;
  bool positionals_consumed = false;
  size_t i = 0;
  while (i < tokens.size() && !out.version) {
    if (tokens[i].kind == 'O') {
      TRIALSHIM_ASSIGN_OR_RETURN(i, ConsumeFlag(args, tokens, i, more_cfg, &out));
    } else {
      i = ConsumePositionals(args, tokens, i, &positionals_consumed, &out);
    }
  }
  return out;
}

}  // namespace trialshim::config
