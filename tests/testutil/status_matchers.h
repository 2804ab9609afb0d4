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

#define EXPECT_OK(expr) \
  EXPECT_TRUE(::trialshim::testing::GetStatus(expr).ok()) \
      << ::trialshim::testing::GetStatus(expr).message()
#define ASSERT_OK(expr) \
  ASSERT_TRUE(::trialshim::testing::GetStatus(expr).ok()) \
      << ::trialshim::testing::GetStatus(expr).message()

#endif  // TRIALSHIM_TESTS_TESTUTIL_STATUS_MATCHERS_H_
