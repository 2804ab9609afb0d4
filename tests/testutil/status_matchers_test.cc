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

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(StatusIs, MatchesCodeAndMessage) {
  const Status full = Status::IOError("cannot write /x: No space left");
  const StatusOr<int> failed = Status::NotFound("no such file 'a.yaml'");
  EXPECT_THAT(full, StatusIs(StatusCode::kIOError, HasSubstr("No space")));
  EXPECT_THAT(full, StatusIs(_, HasSubstr("/x")));
  EXPECT_THAT(full, StatusIs(StatusCode::kIOError));
  EXPECT_THAT(failed, StatusIs(StatusCode::kNotFound, HasSubstr("a.yaml")));
  EXPECT_THAT(full, Not(StatusIs(StatusCode::kNotFound, HasSubstr("/x"))));
  EXPECT_THAT(full, Not(StatusIs(StatusCode::kIOError, HasSubstr("/y"))));
  EXPECT_THAT(Status::Ok(), Not(StatusIs(_, HasSubstr("x"))));
  EXPECT_THAT(StatusOr<int>(7), Not(StatusIs(StatusCode::kIOError)));
}

TEST(StatusIs, FailureShowsTheWholeStatus) {
  EXPECT_NONFATAL_FAILURE(
      EXPECT_THAT(FailOnce(),
                  StatusIs(StatusCode::kIOError, HasSubstr("quota")))
          << "case full disk",
      "Actual: IO_ERROR: cannot write /x: No space left on device");
  EXPECT_NONFATAL_FAILURE(
      EXPECT_THAT(Seven(), StatusIs(StatusCode::kNotFound)) << "case seven",
      "whose code is equal to NOT_FOUND and whose message is anything\n"
      "  Actual: OK (a value)\ncase seven");
}

}  // namespace
}  // namespace trialshim::testing
