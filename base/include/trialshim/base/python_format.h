// Python's format() of an int or a float, and str.format() over a mapping of
// names to such numbers, byte for byte as CPython 3.11 writes them: what
// Lightning's checkpoint names are made of ("{epoch:03d}", "{val_loss:.2f}").
//
// The whole format-spec mini-language is read as CPython reads it
// ([[fill]align][sign][z][#][0][width][,|_][.precision][type]; a fill of any
// code point), and str.format's fields as its parser reads them ("{{",
// "{0[name]:spec}", nested "{...}" in a spec, two levels deep). Text is
// UTF-8; bytes that are not are kept as Python's surrogateescape keeps them.
// What Python refuses is InvalidArgument with the message of its exception
// ("Unknown format code 'q' for object of type 'int'", "KeyError: 'lr'").
//
// Limits, where CPython would rather run out of memory: a width or a
// precision above kMaxPythonFormatWidth is refused (CPython builds such
// text, a gigabyte for "{:1000000000}", or raises MemoryError), after every
// check Python makes itself ("Too many decimal digits in format string"
// beyond 2**63-1, "precision too big" for a float beyond 2**31-1). Fields
// Python would answer with a repr of an object trialshim does not have are
// refused by name: conversions ("!r"), attributes ("{0.real}") and the
// mapping itself ("{0}").
#ifndef TRIALSHIM_BASE_PYTHON_FORMAT_H_
#define TRIALSHIM_BASE_PYTHON_FORMAT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "trialshim/base/status.h"

namespace trialshim {

// No text a caller of these functions builds (file names, log lines) is
// longer than a path (Linux's PATH_MAX), so no width or precision need be.
inline constexpr int64_t kMaxPythonFormatWidth = 4096;

// A Python int (here at most 64 bits) or float.
struct PythonNumber {
  static PythonNumber Int(int64_t v) { return {true, v, 0}; }
  static PythonNumber Float(double v) { return {false, 0, v}; }
  bool is_int = false;
  int64_t i = 0;
  double d = 0;
};

// format(value, spec): "" is str(value).
StatusOr<std::string> FormatPythonNumber(const PythonNumber& value,
                                         std::string_view spec);

// format_string.format(mapping): the fields name the mapping as argument 0
// ("{0[val_loss]:.2f}", or "{[val_loss]}" with automatic numbering); an
// index of digits is an int key, which a mapping of str keys never holds.
using PythonMapping = std::map<std::string, PythonNumber, std::less<>>;
StatusOr<std::string> FormatPythonTemplate(std::string_view format_string,
                                           const PythonMapping& mapping);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_PYTHON_FORMAT_H_
