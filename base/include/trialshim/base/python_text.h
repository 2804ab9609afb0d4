// Text exactly as Python writes it, for files and messages that other
// programs (Hydra, OmegaConf, cloudml-hypertune, Python's json) compare
// byte for byte: repr() of a str and a JSON string as json.dumps writes it.
//
// Python's text has one home, here in base, which every library may use:
// this file; number_format.h (repr() of a float); python_number.h (int()
// and float() of a str); python_format.h (format() and str.format(), which
// checkpoint names use: text alone, so python_format_fuzz builds without
// LibTorch). Only what
// needs a config Node is in config: trialshim/config/python_text.h (str(),
// repr() and type() name of a value).
#ifndef TRIALSHIM_BASE_PYTHON_TEXT_H_
#define TRIALSHIM_BASE_PYTHON_TEXT_H_

#include <string>
#include <string_view>

namespace trialshim {

// What becomes of bytes that are not valid UTF-8 (overlong, truncated,
// surrogates, past U+10FFFF), as Python's decoder error handlers do:
enum class Utf8Errors {
  // One U+FFFD per maximal invalid subpart, as bytes.decode(errors=
  // "replace"): "\xe2\x98" (a truncated U+2603) is one U+FFFD.
  kReplace,
  // Each invalid byte b becomes the lone surrogate U+DC00+b, as
  // errors="surrogateescape", which is how Python decodes argv and file
  // names: nothing is lost, os.fsencode gives the same bytes back.
  kSurrogateEscape,
};

// The code points of UTF-8 text. Python measures and escapes text by code
// point, so its writers work on these.
std::u32string DecodeUtf8(std::string_view s,
                          Utf8Errors errors = Utf8Errors::kReplace);

// Appends code point `cp` as UTF-8. U+DC80..U+DCFF, the lone surrogates
// Utf8Errors::kSurrogateEscape makes of bytes that are not UTF-8, become
// those bytes again, as os.fsencode does.
void AppendUtf8(char32_t cp, std::string* out);

// Python's repr() of a str: single quotes unless the text holds a single
// quote and no double quote; backslash escapes for the quote, '\\', \n, \r,
// \t and other control characters (\xNN).
std::string PythonStringRepr(std::string_view s);

// Appends `s` as json.dumps writes a str with ensure_ascii=True (the
// default): everything outside ' '..'~' becomes \uXXXX (lowercase hex,
// surrogate pairs above U+FFFF), with the short escapes \" \\ \n \r \t \b
// \f. Bytes that are not valid UTF-8 are decoded as `errors` says: a
// command-line argument as Python's sys.argv holds it is kSurrogateEscape.
void AppendPythonJsonString(std::string_view s, std::string* out,
                            Utf8Errors errors = Utf8Errors::kReplace);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_PYTHON_TEXT_H_
