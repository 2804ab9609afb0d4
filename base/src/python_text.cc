#include "trialshim/base/python_text.h"

#include <cstdio>

namespace trialshim {

std::u32string DecodeUtf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    int n = c < 0x80         ? 1
            : (c >> 5) == 6  ? 2
            : (c >> 4) == 14 ? 3
            : (c >> 3) == 30 ? 4
                             : 0;
    char32_t cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 7;
    bool ok = n > 0 && i + n <= s.size();
    for (int k = 1; ok && k < n; ++k) {
      unsigned char cc = s[i + k];
      ok = (cc >> 6) == 2;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (!ok || cp > 0x10ffff || (n == 3 && cp < 0x800) ||
        (n == 2 && cp < 0x80) || (n == 4 && cp < 0x10000)) {
      out += U'\xfffd';
      ++i;
      continue;
    }
    out += cp;
    i += n;
  }
  return out;
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

void AppendPythonJsonString(std::string_view s, std::string* out) {
  *out += '"';
  for (char32_t c : DecodeUtf8(s)) {
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
