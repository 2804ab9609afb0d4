// Test helpers for Status / StatusOr.
#ifndef TRIALSHIM_TESTS_TESTUTIL_STATUS_MATCHERS_H_
#define TRIALSHIM_TESTS_TESTUTIL_STATUS_MATCHERS_H_

#include <gtest/gtest.h>

#include "trialshim/base/status.h"

namespace trialshim::testing {

inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
const Status& GetStatus(const StatusOr<T>& s) {
  return s.status();
}

}  // namespace trialshim::testing

// Each evaluates `expr` once (a failing ASSERT_OK(trainer.fit(...)) must not
// train again to print its message) and accepts `<< more` like any gtest
// assertion.
#define TRIALSHIM_EXPECT_OK_IMPL_(expr, fail)                          \
  GTEST_AMBIGUOUS_ELSE_BLOCKER_                                        \
  if (const ::trialshim::Status trialshim_status_ =                     \
          ::trialshim::testing::GetStatus(expr);                        \
      trialshim_status_.ok())                                           \
    ;                                                                   \
  else                                                                  \
    fail() << #expr << " is " << trialshim_status_.ToString() << "\n"
#define EXPECT_OK(expr) TRIALSHIM_EXPECT_OK_IMPL_(expr, ADD_FAILURE)
#define ASSERT_OK(expr) TRIALSHIM_EXPECT_OK_IMPL_(expr, GTEST_FAIL)

#endif  // TRIALSHIM_TESTS_TESTUTIL_STATUS_MATCHERS_H_
