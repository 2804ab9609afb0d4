// The Status assertions evaluate their argument once, also on failure, and
// print the code and message of the failed status.
#include "tests/testutil/status_matchers.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace trialshim::testing {
namespace {

int calls = 0;
Status FailOnce() {
  ++calls;
  return Status::IOError("cannot write /x: No space left on device");
}
StatusOr<int> Seven() {
  ++calls;
  return 7;
}

TEST(StatusMatchers, FailingExpectEvaluatesOnceAndSaysWhy) {
  calls = 0;
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(FailOnce()) << "extra",
                          "FailOnce() is IO_ERROR: cannot write /x: No space "
                          "left on device\nextra");
  EXPECT_EQ(calls, 1);
}

void AssertFails() { ASSERT_OK(FailOnce()); }

TEST(StatusMatchers, FailingAssertEvaluatesOnceAndReturns) {
  calls = 0;
  EXPECT_FATAL_FAILURE(AssertFails(), "FailOnce() is IO_ERROR");
  EXPECT_EQ(calls, 1);
}

TEST(StatusMatchers, PassingStatusOrEvaluatesOnce) {
  calls = 0;
  ASSERT_OK(Seven());
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace trialshim::testing
