#include "trialshim/base/status.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>

namespace trialshim {
namespace {

// value() of an error is a bug that stops the process with the status on
// stderr, in release builds too (an assert alone would leave undefined
// behaviour there: reading an empty std::optional).
TEST(StatusOrDeathTest, ValueOfAnErrorAbortsWithTheStatus) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  const StatusOr<std::string> error = Status::NotFound("no such key 'lr'");
  StatusOr<std::string> mutable_error = Status::IOError("disk full");
  struct Case {
    std::string name;
    std::function<void()> access;
    std::string want;  // a regex of what stderr holds
  };
  const Case cases[] = {
      {"value() const&", [&] { (void)error.value().size(); },
       "StatusOr::value\\(\\) of an error: NOT_FOUND: no such key 'lr'"},
      {"operator*", [&] { (void)(*error).size(); }, "NOT_FOUND: no such key"},
      {"operator->", [&] { (void)error->size(); }, "NOT_FOUND: no such key"},
      {"value() &", [&] { mutable_error.value() += "x"; },
       "IO_ERROR: disk full"},
      {"value() &&", [&] { (void)std::move(mutable_error).value().size(); },
       "IO_ERROR: disk full"},
  };
  for (const Case& c : cases) {
    EXPECT_DEATH(c.access(), c.want) << "case " << c.name;
  }
}

TEST(StatusOrTest, ValueOfAValue) {
  StatusOr<std::string> v = std::string("ok");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.value(), "ok");
  EXPECT_EQ(v->size(), 2u);
  EXPECT_EQ(std::move(v).value(), "ok");
}

}  // namespace
}  // namespace trialshim
