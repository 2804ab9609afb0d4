// ShellQuote: each word, pasted into sh, reaches the program as it was.
#include "trialshim/base/strings.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testutil/subprocess.h"

namespace trialshim {
namespace {

TEST(ShellQuote, ShReadsBackTheWord) {
  struct Case {
    const char* name;
    std::string word;
    std::string quoted;
  };
  const Case cases[] = {
      {"plain", "optimizer.lr=0.01", "optimizer.lr=0.01"},
      {"path", "/a/b-c_d.yaml", "/a/b-c_d.yaml"},
      {"hydra_quotes", "+act='relu,gelu'", "\"+act='relu,gelu'\""},
      {"space", "a b", "'a b'"},
      {"dollar_and_quote", "it's $HOME", "'it'\\''s $HOME'"},
      {"empty", "", "''"},
      {"glob", "*.yaml", "'*.yaml'"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ShellQuote(c.word), c.quoted) << c.name;
    testing::Finished f =
        testing::RunToEnd({"/bin/sh", "-c", "printf %s " + ShellQuote(c.word)});
    EXPECT_EQ(f.out, c.word) << c.name;
  }
}

}  // namespace
}  // namespace trialshim
