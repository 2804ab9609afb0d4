// Number formatting that matches Python, byte for byte.
//
// Hydra, OmegaConf and cloudml-hypertune print floats with Python's repr():
// the shortest digits that round-trip, ".0" on integral values, exponent
// form below 1e-4 or from 1e16 on ("1e-05", "1e+16"), and "inf", "-inf",
// "nan". Every place trialshim prints a float for a human or for another
// program goes through here.
#ifndef TRIALSHIM_BASE_NUMBER_FORMAT_H_
#define TRIALSHIM_BASE_NUMBER_FORMAT_H_

#include <string>
#include <string_view>

#include "trialshim/base/status.h"

namespace trialshim {

// Python's repr(float(v)): "0.1", "1e-05", "123.0", "1e+16", "nan", "inf".
std::string FormatPythonFloat(double v);

// Python's str(int(text)) for a str: the canonical digits of an integer of
// any size ("-0012" -> "-12", "1_000" -> "1000", " 7\n" -> "7"). Like int(),
// it takes whitespace around the number, a sign, and single underscores
// between digits; unlike it, only ASCII digits and whitespace (int() also
// reads "\u0661\u0662" as 12). More than 4300 digits are refused, as
// Python 3.11's int() refuses them. InvalidArgument with Python's message
// ("invalid literal for int() with base 10: '12abc'") otherwise.
StatusOr<std::string> PythonIntText(std::string_view text);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_NUMBER_FORMAT_H_
