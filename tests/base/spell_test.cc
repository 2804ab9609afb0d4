#include "trialshim/base/spell.h"

#include <gtest/gtest.h>

namespace trialshim {
namespace {

TEST(SpellTest, EditDistance) {
  struct Case {
    const char* a;
    const char* b;
    int distance;
  } cases[] = {
      {"", "", 0},     {"lr", "lr", 0},          {"lrr", "lr", 1},
      {"lr", "rl", 1}, {"kitten", "sitting", 3}, {"", "abc", 3},
      {"nmae", "name", 1}, {"ca", "abc", 3}, {"abcd", "badc", 2},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EditDistance(c.a, c.b), c.distance) << c.a << " vs " << c.b;
  }
}

TEST(SpellTest, DidYouMean) {
  struct Case {
    const char* word;
    std::vector<std::string> candidates;
    const char* expected;
  } cases[] = {
      {"lrr", {"lr", "momentum"}, " (did you mean 'lr'?)"},
      {"optimizer.lrr",
       {"optimizer.lr", "optimizer.name"},
       " (did you mean 'optimizer.lr'?)"},
      {"bach_size",
       {"batch_size", "bach_sizes", "seed"},
       " (did you mean 'batch_size' or 'bach_sizes'?)"},
      {"zzzzzz", {"lr", "momentum"}, ""},
      {"x", {}, ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DidYouMean(c.word, c.candidates), c.expected) << c.word;
  }
}

}  // namespace
}  // namespace trialshim
