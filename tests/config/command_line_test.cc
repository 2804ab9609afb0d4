// Tests of ParseHydraCommandLine against Hydra 1.3.2's own argparse parser.
//
// The table below was generated, not written: a script outside the
// repository copied get_args_parser() from Hydra 1.3.2's
// hydra/_internal/utils.py (help texts left out), ran parse_known_args on
// each case's arguments under /usr/bin/python3 (Python 3.11.2, Debian 12)
// and printed what argparse returned in the form Describe() below writes:
// the flags set, in the table's order, then overrides=[...] and
// unrecognized=[...] (argparse's extras); "version" when argparse exited 0
// on --version; "error: MSG" with the message argparse printed before
// exiting 2. To add a case, run the same parser on it and paste its output:
// the Anchors* test runs Hydra's own get_args_parser() (the anchors
// environment, tests/anchors/hydra_argparse.py) on every case of the table.
#include "trialshim/config/command_line.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::config {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : ", ") + items[i];
  }
  return "[" + out + "]";
}

std::string Describe(const StatusOr<HydraCommandLine>& parsed) {
  if (!parsed.ok()) return "error: " + parsed.status().message();
  const HydraCommandLine& c = *parsed;
  if (c.version) return "version";
  std::vector<std::string> parts;
  auto flag = [&](const char* name, bool set) {
    if (set) parts.push_back(name);
  };
  auto value = [&](const char* name, const std::optional<std::string>& v) {
    if (v) parts.push_back(std::string(name) + "=" + *v);
  };
  flag("help", c.help);
  flag("hydra_help", c.hydra_help);
  value("cfg", c.cfg);
  flag("resolve", c.resolve);
  value("package", c.package);
  flag("run", c.run);
  flag("multirun", c.multirun);
  flag("shell_completion", c.shell_completion);
  value("config_path", c.config_path);
  value("config_name", c.config_name);
  value("config_dir", c.config_dir);
  value("experimental_rerun", c.experimental_rerun);
  value("info", c.info);
  if (!c.overrides.empty()) parts.push_back("overrides=" + Join(c.overrides));
  if (!c.unrecognized.empty()) {
    parts.push_back("unrecognized=" + Join(c.unrecognized));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

struct ArgparseCase {
  const char* name;
  std::vector<std::string> args;
  const char* want;
};

const std::vector<ArgparseCase>& ArgparseCases() {
  static const std::vector<ArgparseCase> cases = {
      {"empty", {}, ""},
      {"overrides_only", {"a=1", "+b=2", "~c"}, "overrides=[a=1, +b=2, ~c]"},
      {"config_path_and_name",
       {"--config-path", "conf", "--config-name", "cfg"},
       "config_path=conf config_name=cfg"},
      {"short_spellings",
       {"-cp", "conf", "-cn", "cfg", "-cd", "extra"},
       "config_path=conf config_name=cfg config_dir=extra"},
      {"equals_values",
       {"--config-path=conf", "-cn=cfg", "--cfg=job"},
       "cfg=job config_path=conf config_name=cfg"},
      {"short_flag_with_attached_value", {"-cjob"}, "cfg=job"},
      {"short_attached_not_a_choice",
       {"-cpconf"},
       "error: argument --cfg/-c: invalid choice: 'pconf' (choose from 'job', "
       "'hydra', 'all')"},
      {"cfg_choices", {"--cfg", "hydra", "--resolve"}, "cfg=hydra resolve"},
      {"cfg_invalid_choice",
       {"--cfg", "bogus"},
       "error: argument --cfg/-c: invalid choice: 'bogus' (choose from 'job', "
       "'hydra', 'all')"},
      {"cfg_missing_value",
       {"--cfg"},
       "error: argument --cfg/-c: expected one argument"},
      {"cfg_followed_by_flag",
       {"--cfg", "--resolve"},
       "error: argument --cfg/-c: expected one argument"},
      {"package",
       {"--cfg", "job", "-p", "db", "a=1"},
       "cfg=job package=db overrides=[a=1]"},
      {"info_bare", {"--info"}, "info=all"},
      {"info_with_choice", {"--info", "defaults-tree"}, "info=defaults-tree"},
      {"info_takes_an_override",
       {"--info", "a=1"},
       "error: argument --info/-i: invalid choice: 'a=1' (choose from 'all', "
       "'config', 'defaults', 'defaults-tree', 'plugins', 'searchpath')"},
      {"info_before_flag", {"-i", "--multirun"}, "multirun info=all"},
      {"multirun_and_run", {"-m", "-r", "a=1"}, "run multirun overrides=[a=1]"},
      {"bundled_short_switches", {"-mr"}, "run multirun"},
      {"bundled_short_unknown",
       {"-mx"},
       "error: argument --multirun/-m: ignored explicit argument 'x'"},
      {"switch_with_value",
       {"--resolve=yes"},
       "error: argument --resolve: ignored explicit argument 'yes'"},
      {"switch_with_empty_value",
       {"--multirun="},
       "error: argument --multirun/-m: ignored explicit argument ''"},
      {"help_flags", {"-h", "--hydra-help"}, "help hydra_help"},
      {"shell_completion", {"-sc", "--shell-completion"}, "shell_completion"},
      {"short_prefix_of_sc", {"-s"}, "shell_completion"},
      {"long_prefix", {"--multi", "--res", "--he"}, "help resolve multirun"},
      {"ambiguous_prefix_with_value",
       {"--conf=x"},
       "error: ambiguous option: --conf=x could match --config-path, "
       "--config-name, --config-dir"},
      {"long_prefix_unique",
       {"--config-n", "cfg", "--hydra", "--ver"},
       "version"},
      {"ambiguous_prefix",
       {"--config", "x"},
       "error: ambiguous option: --config could match --config-path, "
       "--config-name, --config-dir"},
      {"ambiguous_h",
       {"--h"},
       "error: ambiguous option: --h could match --help, --hydra-help"},
      {"experimental_rerun",
       {"--experimental-rerun", "cfg.pickle"},
       "experimental_rerun=cfg.pickle"},
      {"version_stops", {"a=1", "--version", "--cfg", "bogus"}, "version"},
      {"error_before_version",
       {"--cfg", "bogus", "--version"},
       "error: argument --cfg/-c: invalid choice: 'bogus' (choose from 'job', "
       "'hydra', 'all')"},
      {"overrides_then_flag",
       {"a=1", "b=2", "--multirun"},
       "multirun overrides=[a=1, b=2]"},
      {"flag_then_overrides",
       {"--multirun", "a=1", "b=2"},
       "multirun overrides=[a=1, b=2]"},
      {"overrides_split_by_flag",
       {"a=1", "--multirun", "b=2"},
       "multirun overrides=[a=1] unrecognized=[b=2]"},
      {"vertex_style_arguments",
       {"--lr=0.1", "--optimizer.name=adam", "a=1"},
       "overrides=[a=1] unrecognized=[--lr=0.1, --optimizer.name=adam]"},
      {"unknown_flag_with_separate_value",
       {"--lr", "0.1", "a=1"},
       "overrides=[0.1, a=1] unrecognized=[--lr]"},
      {"unknown_short_flag",
       {"-x", "a=1"},
       "overrides=[a=1] unrecognized=[-x]"},
      {"negative_number_is_positional",
       {"-1", "-0.5", "a=1"},
       "overrides=[-1, -0.5, a=1]"},
      {"dash_alone_is_positional", {"-", "a=1"}, "overrides=[-, a=1]"},
      {"space_makes_positional", {"-a b", "c=1"}, "overrides=[-a b, c=1]"},
      {"double_dash_ends_flags",
       {"a=1", "--", "--cfg", "job"},
       "overrides=[a=1, --cfg, job]"},
      {"double_dash_first",
       {"--", "--multirun", "x=1"},
       "overrides=[--multirun, x=1]"},
      {"second_double_dash_kept",
       {"--", "a=1", "--", "b=2"},
       "overrides=[a=1, --, b=2]"},
      {"double_dash_after_flag",
       {"-m", "--", "a=1"},
       "multirun overrides=[a=1]"},
      {"double_dash_after_overrides",
       {"a=1", "-m", "--", "b=2"},
       "multirun overrides=[a=1] unrecognized=[--, b=2]"},
      {"last_value_wins", {"-cn", "a", "--config-name", "b"}, "config_name=b"},
      {"value_may_look_like_override", {"--package", "x=1"}, "package=x=1"},
      {"value_may_not_be_flag",
       {"--package", "--run"},
       "error: argument --package/-p: expected one argument"},
      {"quote_in_invalid_choice",
       {"--cfg", "it's"},
       "error: argument --cfg/-c: invalid choice: \"it's\" (choose from 'job', "
       "'hydra', 'all')"},
      {"empty_argument", {"", "a=1"}, "overrides=[, a=1]"},
  };
  return cases;
}

TEST(CommandLineTest, MatchesHydraArgparse) {
  for (const ArgparseCase& c : ArgparseCases()) {
    EXPECT_EQ(Describe(ParseHydraCommandLine(c.args)), c.want) << c.name;
  }
}

// Hydra 1.3.2's get_args_parser() itself, on every case of the table.
TEST(AnchorsCommandLine, HydrasOwnParserMakesTheTable) {
  SKIP_WITHOUT_ANCHORS();
  nlohmann::json args = nlohmann::json::array();
  for (const ArgparseCase& c : ArgparseCases()) args.push_back(c.args);
  testing::TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/hydra_argparse.py",
                                {dir.Write("cases.json", args.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json live = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(live.size(), ArgparseCases().size()) << f.out;
  for (size_t i = 0; i < live.size(); ++i) {
    const ArgparseCase& c = ArgparseCases()[i];
    EXPECT_EQ(live[i].get<std::string>(), c.want)
        << c.name << ": Hydra's parser now says otherwise than the table";
    EXPECT_EQ(Describe(ParseHydraCommandLine(c.args)), live[i]) << c.name;
  }
}

// Beyond argparse: a did-you-mean for an invalid choice, and the --cfg
// values a caller takes itself (an app's schema views).
TEST(CommandLineTest, ChoicesSayWhatWasMeant) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::vector<std::string> more_cfg;
    const char* want;
  };
  const Case cases[] = {
      {"did_you_mean",
       {"--cfg", "jobb"},
       {},
       "error: argument --cfg/-c: invalid choice: 'jobb' (choose from 'job', "
       "'hydra', 'all') (did you mean 'job'?)"},
      {"more_choices_listed",
       {"--cfg", "schem"},
       {"schema", "schema-json"},
       "error: argument --cfg/-c: invalid choice: 'schem' (choose from 'job', "
       "'hydra', 'all', 'schema', 'schema-json') (did you mean 'schema'?)"},
      {"more_choices_taken", {"-c", "schema"}, {"schema"}, "cfg=schema"},
      {"more_choices_only_for_cfg",
       {"--info", "schema"},
       {"schema"},
       "error: argument --info/-i: invalid choice: 'schema' (choose from "
       "'all', 'config', 'defaults', 'defaults-tree', 'plugins', "
       "'searchpath')"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Describe(ParseHydraCommandLine(c.args, c.more_cfg)), c.want)
        << c.name;
  }
}

TEST(CommandLineTest, FindsFlagsByEitherSpelling) {
  struct Case {
    const char* name;
    HydraFlagId want;
  };
  const Case cases[] = {
      {"--config-path", HydraFlagId::kConfigPath},
      {"-cp", HydraFlagId::kConfigPath},
      {"--cfg", HydraFlagId::kCfg},
      {"-c", HydraFlagId::kCfg},
      {"--info", HydraFlagId::kInfo},
      {"--experimental-rerun", HydraFlagId::kExperimentalRerun},
  };
  for (const Case& c : cases) {
    const HydraFlag* f = FindHydraFlag(c.name);
    ASSERT_NE(f, nullptr) << c.name;
    EXPECT_EQ(f->id, c.want) << c.name;
  }
  // Only exact spellings: abbreviations are the parser's business.
  for (const char* name : {"--conf", "cfg", "-x", "--", ""}) {
    EXPECT_EQ(FindHydraFlag(name), nullptr) << name;
  }
}

}  // namespace
}  // namespace trialshim::config
