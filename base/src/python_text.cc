#include "trialshim/base/python_text.h"

#include <cstdio>

namespace trialshim {

namespace {

// The length of the well-formed UTF-8 sequence at s[i] and its code point,
// or, when there is none, 0 and in *bad the length of the maximal subpart
// (the lead byte and the continuation bytes that fit it): what Python's
// decoder reports as one error (Unicode 6.0 "best practice", table 3-7).
size_t NextSequence(std::string_view s, size_t i, char32_t* cp, size_t* bad) {
  const unsigned char c = s[i];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // no overlong forms
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;  // nothing past U+10FFFF
  }
  *bad = 1;
  if (n == 0) return 0;
  char32_t value = c & (0xff >> (n + 1));
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return 0;
    unsigned char cc = s[i + k];
    if (cc < (k == 1 ? lo : 0x80) || cc > (k == 1 ? hi : 0xbf)) return 0;
    value = (value << 6) | (cc & 0x3f);
    *bad = k + 1;
  }
  *cp = value;
  return n;
}

}  // namespace

std::u32string DecodeUtf8(std::string_view s, Utf8Errors errors) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    size_t bad = 0;
    size_t n = NextSequence(s, i, &cp, &bad);
    if (n > 0) {
      out += cp;
      i += n;
    } else if (errors == Utf8Errors::kReplace) {
      out += U'\xfffd';
      i += bad;
    } else {
      for (size_t k = 0; k < bad; ++k) {
        out += static_cast<char32_t>(0xdc00 + static_cast<unsigned char>(s[i + k]));
      }
      i += bad;
    }
  }
  return out;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp >= 0xdc80 && cp <= 0xdcff) {
    *out += static_cast<char>(cp - 0xdc00);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xc0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xe0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::string PythonStringRepr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  static const char kHex[] = "0123456789abcdef";
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

void AppendPythonJsonString(std::string_view s, std::string* out,
                            Utf8Errors errors) {
  *out += '"';
  for (char32_t c : DecodeUtf8(s, errors)) {
    switch (c) {
      case U'"':
        *out += "\\\"";
        break;
      case U'\\':
        *out += "\\\\";
        break;
      case U'\n':
        *out += "\\n";
        break;
      case U'\r':
        *out += "\\r";
        break;
      case U'\t':
        *out += "\\t";
        break;
      case U'\b':
        *out += "\\b";
        break;
      case U'\f':
        *out += "\\f";
        break;
      default: {
        char buf[16];
        if (c >= 0x20 && c <= 0x7e) {
          *out += static_cast<char>(c);
        } else if (c < 0x10000) {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          *out += buf;
        } else {
          unsigned v = static_cast<unsigned>(c) - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (v >> 10),
                        0xdc00 + (v & 0x3ff));
          *out += buf;
        }
      }
    }
  }
  *out += '"';
}

}  // namespace trialshim
