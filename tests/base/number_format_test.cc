#include "trialshim/base/number_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace trialshim {
namespace {

// Expected strings are what CPython 3.11 prints for repr(float(x)).
TEST(NumberFormatTest, MatchesPythonRepr) {
  struct Case {
    double value;
    const char* repr;
  } cases[] = {
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {123.0, "123.0"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1.5e-7, "1.5e-07"},
      {123456.0, "123456.0"},
      {0.987, "0.987"},
      {1.0 / 3, "0.3333333333333333"},
      {2e-05, "2e-05"},
      {1e22, "1e+22"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {5e-324, "5e-324"},
      {-2.5, "-2.5"},
      {12345678901234567890.0, "1.2345678901234567e+19"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::nan(""), "nan"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatPythonFloat(c.value), c.repr) << "case " << c.repr;
  }
}

}  // namespace
}  // namespace trialshim
