// Number formatting that matches Python, byte for byte.
//
// Hydra, OmegaConf and cloudml-hypertune print floats with Python's repr():
// the shortest digits that round-trip, ".0" on integral values, exponent
// form below 1e-4 or from 1e16 on ("1e-05", "1e+16"), and "inf", "-inf",
// "nan". Every place trialshim prints a float for a human or for another
// program goes through here. (Reading Python's number text:
// python_number.h.)
#ifndef TRIALSHIM_BASE_NUMBER_FORMAT_H_
#define TRIALSHIM_BASE_NUMBER_FORMAT_H_

#include <string>

namespace trialshim {

// Python's repr(float(v)): "0.1", "1e-05", "123.0", "1e+16", "nan", "inf".
std::string FormatPythonFloat(double v);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_NUMBER_FORMAT_H_
