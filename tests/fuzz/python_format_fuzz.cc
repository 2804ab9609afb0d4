// Fuzzes Python's format-spec mini-language and str.format
// (base/python_format.h), which a checkpoint filename from a config goes
// through. The first byte picks what the rest is: even, a spec formatting
// one of kValues ((byte / 2) % 8); odd, a format string over kMapping.
// Beyond "no crash": every error has a message, no result is longer than
// the width limit allows, and a spec formats the same alone as inside a
// field ("{0[v]:spec}").
#include <cstdint>
#include <limits>
#include <string>

#include "fuzz_util.h"
#include "trialshim/base/python_format.h"

namespace {

using trialshim::PythonMapping;
using trialshim::PythonNumber;

const PythonNumber kValues[8] = {
    PythonNumber::Int(0),
    PythonNumber::Int(42),
    PythonNumber::Int(-1234567),
    PythonNumber::Int(std::numeric_limits<int64_t>::min()),
    PythonNumber::Float(0.25),
    PythonNumber::Float(-0.0),
    PythonNumber::Float(1e300),
    PythonNumber::Float(std::numeric_limits<double>::quiet_NaN()),
};

const PythonMapping& Mapping() {
  static const PythonMapping m = {{"epoch", PythonNumber::Int(3)},
                                  {"step", PythonNumber::Int(42)},
                                  {"val_loss", PythonNumber::Float(0.25)},
                                  {"val/acc", PythonNumber::Float(0.875)},
                                  {"w", PythonNumber::Int(5)},
                                  {"{", PythonNumber::Int(0)}};
  return m;
}

// The longest text one number may become: a width of fill characters of
// four bytes each, or 309 integer digits, their separators, the point and
// the longest precision.
constexpr size_t kMaxNumberText = 4 * trialshim::kMaxPythonFormatWidth + 512;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialshim;
  if (size == 0) return 0;
  const std::string rest(fuzz::AsView(data + 1, size - 1));
  if (data[0] % 2 == 0) {
    const PythonNumber& value = kValues[(data[0] / 2) % 8];
    StatusOr<std::string> alone = FormatPythonNumber(value, rest);
    if (!alone.ok()) {
      if (alone.status().message().empty()) __builtin_trap();
    } else if (alone->size() > kMaxNumberText) {
      __builtin_trap();
    }
    if (rest.find_first_of("{}") != std::string::npos) return 0;
    StatusOr<std::string> in_field =
        FormatPythonTemplate("{0[v]:" + rest + "}", {{"v", value}});
    if (alone.ok() != in_field.ok()) __builtin_trap();
    if (alone.ok() ? *alone != *in_field
                   : alone.status().message() != in_field.status().message()) {
      __builtin_trap();
    }
    return 0;
  }
  StatusOr<std::string> text = FormatPythonTemplate(rest, Mapping());
  if (!text.ok() && text.status().message().empty()) __builtin_trap();
  // Each field is at least two bytes ("{}") and at most one number.
  if (text.ok() && text->size() > rest.size() * (kMaxNumberText / 2 + 1)) {
    __builtin_trap();
  }
  return 0;
}
