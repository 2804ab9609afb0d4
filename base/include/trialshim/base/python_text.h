// Text exactly as Python writes it, for files and messages that other
// programs (Hydra, OmegaConf, cloudml-hypertune, Python's json) compare
// byte for byte: repr() of a str and a JSON string as json.dumps writes it.
// Number text is in number_format.h.
#ifndef TRIALSHIM_BASE_PYTHON_TEXT_H_
#define TRIALSHIM_BASE_PYTHON_TEXT_H_

#include <string>
#include <string_view>

namespace trialshim {

// The code points of UTF-8 text; bytes that are not valid UTF-8 (overlong,
// truncated, past U+10FFFF) become U+FFFD one byte at a time. Python
// measures and escapes text by code point, so its writers work on these.
std::u32string DecodeUtf8(std::string_view s);

// Python's repr() of a str: single quotes unless the text holds a single
// quote and no double quote; backslash escapes for the quote, '\\', \n, \r,
// \t and other control characters (\xNN).
std::string PythonStringRepr(std::string_view s);

// Appends `s` as json.dumps writes a str with ensure_ascii=True (the
// default): everything outside ' '..'~' becomes \uXXXX (lowercase hex,
// surrogate pairs above U+FFFF), with the short escapes \" \\ \n \r \t \b
// \f. Bytes that are not valid UTF-8 (a Python str can not hold them)
// become U+FFFD.
void AppendPythonJsonString(std::string_view s, std::string* out);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_PYTHON_TEXT_H_
