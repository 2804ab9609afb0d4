// Python's int() and float() of a str, parsed in one place. Hydra's casts
// (int(x), float(x) in an override), OmegaConf (its typed nodes convert a
// str with int()/float(); its YAML dumper quotes a str either would read)
// and cloudml-hypertune (str(int(global_step))) all read numbers so; the
// config engine's override grammar, typed values and emitter, and the
// hypertune library call these.
//
// The limits, one set for every caller:
//  - Python's grammar (PEP 515 underscores included): whitespace around
//    the number, one sign; int(): digits with single underscores between
//    them; float(): digits with an optional fraction and exponent, or
//    "inf", "infinity", "nan" in any case.
//  - ASCII only: the whitespace " \t\n\v\f\r" and the digits 0-9. Python
//    also reads other Unicode digits ("\u0661\u0662" is 12) and Unicode
//    whitespace ("1\u00a0"); trialshim refuses them. (\x1c-\x1f, which
//    str.strip() removes, int() and float() refuse, as here.)
//  - int(): at most 4300 digits (Python 3.11's
//    sys.int_info.default_max_str_digits), refused with Python's message.
//    ParsePythonInt further needs a 64-bit value, as config Nodes hold.
//  - float(): no limit on digits; beyond the double range it is inf (or
//    0.0 below it), as Python's float() rounds.
// Errors are Python's ValueError messages, without the "ValueError: ".
#ifndef TRIALSHIM_BASE_PYTHON_NUMBER_H_
#define TRIALSHIM_BASE_PYTHON_NUMBER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trialshim/base/status.h"

namespace trialshim {

// str(int(text)): the canonical digits of an integer of any size
// ("-0012" -> "-12", "1_000" -> "1000", " 7\n" -> "7"). InvalidArgument
// with Python's message ("invalid literal for int() with base 10:
// '12abc'", the repr cut after 200 characters, as "%.200R").
StatusOr<std::string> PythonIntText(std::string_view text);

// int(text) as a 64-bit int; nullopt for a value int() reads that does
// not fit in 64 bits (each caller says what that means for it).
// InvalidArgument as PythonIntText.
StatusOr<std::optional<int64_t>> ParsePythonInt(std::string_view text);

// float(text). InvalidArgument with Python's message ("could not convert
// string to float: 'abc'").
StatusOr<double> ParsePythonFloat(std::string_view text);

// Whether int(text) / float(text) return a value (any size of int).
bool PythonIntAccepts(std::string_view text);
bool PythonFloatAccepts(std::string_view text);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_PYTHON_NUMBER_H_
