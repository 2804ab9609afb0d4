// Test helper: a hint in a message is a promise, so a test follows it. A
// case is a shell command a user would type, the pattern that finds the
// hint in what it printed, and how the user acts on the hint (run it as it
// is, put it in place of what was wrong, append it); FollowHint runs the
// command, takes the hint, runs what the user would run next and returns
// both runs. Commands go through /bin/sh, so a hint that must be quoted for
// the shell is followed as the user pastes it.
#ifndef TRIALSHIM_TESTS_TESTUTIL_HINTS_H_
#define TRIALSHIM_TESTS_TESTUTIL_HINTS_H_

#include <regex>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "trialshim/base/strings.h"

namespace trialshim::testing {

struct HintCase {
  std::string name;
  std::string command;  // for sh -c
  // Finds the hint on stderr (stdout when absent there): its first group.
  std::string pattern;
  // How the hint is followed: kRun runs it as the next command, kReplace
  // puts it where `replaces` was in `command`, kAppend adds it at the end.
  enum Follow { kRun, kReplace, kAppend } follow = kReplace;
  std::string replaces = "";
};

struct Followed {
  Finished first;
  std::string hint;  // "" when the pattern found none
  std::string next;  // the command that follows the hint
  Finished second;
};

// Runs `c.command` with `env` ("NAME=value" added) in `cwd`, then the
// command its hint leads to.
inline Followed FollowHint(const HintCase& c, const std::string& cwd,
                           const std::vector<std::string>& env = {}) {
  auto sh = [&](const std::string& command) {
    SubprocessOptions o = Child::Options(env);
    o.cwd = cwd;
    return RunToEndWith({"/bin/sh", "-c", command}, o);
  };
  Followed f;
  f.first = sh(c.command);
  std::smatch m;
  const std::regex re(c.pattern);
  if (!std::regex_search(f.first.err, m, re) &&
      !std::regex_search(f.first.out, m, re)) {
    return f;
  }
  f.hint = m[1];
  switch (c.follow) {
    case HintCase::kRun:
      f.next = f.hint;
      break;
    case HintCase::kReplace:
      f.next = ReplaceAll(c.command, c.replaces, f.hint);
      break;
    case HintCase::kAppend:
      f.next = c.command + " " + f.hint;
      break;
  }
  f.second = sh(f.next);
  return f;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_HINTS_H_
