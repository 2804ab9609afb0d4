// Test helpers for Status / StatusOr: EXPECT_OK / ASSERT_OK, and the
// matcher StatusIs(code, message_matcher) for the error a test expects:
//
//   EXPECT_THAT(Compose(request),
//               StatusIs(StatusCode::kInvalidArgument, HasSubstr("did you")))
//       << "case " << c.name;
//
// `code` may be `_` where a test checks only the message. A failure prints
// the whole status (code and message).
#ifndef TRIALSHIM_TESTS_TESTUTIL_STATUS_MATCHERS_H_
#define TRIALSHIM_TESTS_TESTUTIL_STATUS_MATCHERS_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>

#include "trialshim/base/status.h"

namespace trialshim {

// So that gtest prints a Status (and a StatusCode in a matcher's
// description) by name.
inline void PrintTo(StatusCode code, std::ostream* os) {
  const std::string name = Status(code, "").ToString();  // "IO_ERROR: "
  *os << name.substr(0, name.find(':'));
}
inline void PrintTo(const Status& status, std::ostream* os) {
  *os << status.ToString();
}
template <typename T>
void PrintTo(const StatusOr<T>& s, std::ostream* os) {
  *os << (s.ok() ? "OK (a value)" : s.status().ToString());
}

namespace testing {

inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
const Status& GetStatus(const StatusOr<T>& s) {
  return s.status();
}

// The matcher StatusIs returns; it matches a Status or any StatusOr<T>.
class StatusIsMatcher {
 public:
  StatusIsMatcher(::testing::Matcher<StatusCode> code,
                  ::testing::Matcher<const std::string&> message)
      : code_(std::move(code)), message_(std::move(message)) {}

  template <typename T>
  operator ::testing::Matcher<const T&>() const {  // NOLINT: implicit
    return ::testing::MakeMatcher(new Impl<const T&>(code_, message_));
  }

 private:
  template <typename T>
  class Impl : public ::testing::MatcherInterface<T> {
   public:
    Impl(::testing::Matcher<StatusCode> code,
         ::testing::Matcher<const std::string&> message)
        : code_(std::move(code)), message_(std::move(message)) {}

    // Nothing to explain: gtest prints the status itself (PrintTo above).
    bool MatchAndExplain(T value,
                         ::testing::MatchResultListener*) const override {
      const Status& status = GetStatus(value);
      return code_.Matches(status.code()) &&
             message_.Matches(status.message());
    }
    void DescribeTo(std::ostream* os) const override {
      *os << "is a status whose code ";
      code_.DescribeTo(os);
      *os << " and whose message ";
      message_.DescribeTo(os);
    }
    void DescribeNegationTo(std::ostream* os) const override {
      *os << "is a status whose code ";
      code_.DescribeNegationTo(os);
      *os << " or whose message ";
      message_.DescribeNegationTo(os);
    }

   private:
    ::testing::Matcher<StatusCode> code_;
    ::testing::Matcher<const std::string&> message_;
  };

  ::testing::Matcher<StatusCode> code_;
  ::testing::Matcher<const std::string&> message_;
};

// A Status or StatusOr whose code matches `code` (a StatusCode, or `_`) and
// whose message matches `message` (HasSubstr("..."), a string for equality;
// default: any).
inline StatusIsMatcher StatusIs(
    ::testing::Matcher<StatusCode> code,
    ::testing::Matcher<const std::string&> message = ::testing::_) {
  return StatusIsMatcher(std::move(code), std::move(message));
}

}  // namespace testing
}  // namespace trialshim

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
