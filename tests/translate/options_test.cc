// Tests of trialshim's option table (translate/options.h).
#include "trialshim/translate/options.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

namespace trialshim::translate {
namespace {

// GetOption indexes the table by id, so the table must be in id order.
TEST(OptionsTest, TableIsInIdOrder) {
  for (size_t i = 0; i < Options().size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(Options()[i].id), i) << Options()[i].names;
  }
  EXPECT_EQ(&GetOption(OptionId::kDisplayName), &Options().back());
}

// A spelling names one option per command, or CLI11 would refuse it.
TEST(OptionsTest, SpellingsAreUniquePerCommand) {
  for (Command c :
       {kRun, kTranslate, kLaunch, kCheck, kSweep, kCompose, kEnv, kJob}) {
    std::set<std::string> seen;
    for (const std::string& s : OptionSpellings(c)) {
      EXPECT_TRUE(seen.insert(s).second) << "command " << c << ": " << s;
    }
  }
}

TEST(OptionsTest, FindsBySpellingAndCommand) {
  struct Case {
    const char* name;
    const char* spelling;
    Command command;
    const Option* want;
  };
  const Case cases[] = {
      {"run_map", "--map", kRun, &GetOption(OptionId::kMap)},
      {"launch_shares_translate_flags", "--map", kLaunch,
       &GetOption(OptionId::kMap)},
      {"torchrun_spelling", "--nproc_per_node", kLaunch,
       &GetOption(OptionId::kNprocPerNode)},
      {"short_spelling", "-q", kCheck, &GetOption(OptionId::kQuiet)},
      {"same_name_other_command", "--config-path", kCheck,
       &GetOption(OptionId::kCheckConfigPath)},
      {"same_name_per_command", "--grace", kSweep,
       &GetOption(OptionId::kSweepGrace)},
      {"not_for_this_command", "--explain", kRun, nullptr},
      {"no_abbreviations", "--metric", kRun, nullptr},
      {"no_value_in_spelling", "--map=a=b", kRun, nullptr},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FindOption(c.spelling, c.command), c.want) << c.name;
  }
}

}  // namespace
}  // namespace trialshim::translate
