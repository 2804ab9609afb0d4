#include "trialshim/base/python_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace trialshim {
namespace {

TEST(AppendPythonJsonString, EscapesAsJsonDumps) {
  struct Case {
    const char* name;
    std::string in;
    std::string want;  // json.dumps(in)
  };
  const std::vector<Case> cases = {
      {"plain", "val_loss", R"("val_loss")"},
      {"short escapes", "\"\\\n\r\t\b\f", R"("\"\\\n\r\t\b\f")"},
      {"other controls and DEL", std::string("\x01\x1f\x7f", 3),
       R"("\u0001\u001f\u007f")"},
      {"NUL", std::string("a\0b", 3), R"("a\u0000b")"},
      {"BMP", "\xc3\xa9\xe2\x98\x83", R"("\u00e9\u2603")"},
      {"astral as surrogates", "\xf0\x9f\x98\x80", R"("\ud83d\ude00")"},
      {"invalid UTF-8", std::string("a\xff") + "b", R"("a\ufffdb")"},
      {"overlong", "\xc0\xaf", R"("\ufffd\ufffd")"},
      {"truncated: one maximal subpart", "\xe2\x98", R"("\ufffd")"},
      {"slash is kept", "a/b", R"("a/b")"},
  };
  for (const Case& c : cases) {
    std::string out = "x";
    AppendPythonJsonString(c.in, &out);
    EXPECT_EQ(out, "x" + c.want) << c.name;
  }
}

// Python itself decides: for each byte string, json.dumps of its decoding
// with errors="replace" and with "surrogateescape" (how sys.argv holds a
// command-line argument), as /usr/bin/python3 prints them.
TEST(AppendPythonJsonString, InvalidUtf8AsPythonDecodesIt) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"lone continuation", std::string("a\x80") + "b"},
      {"invalid lead bytes", "\xc0\xc1\xf5\xff"},
      {"overlong 2-byte", "\xc0\xaf"},
      {"overlong 3-byte", "\xe0\x80\xaf"},
      {"truncated 3-byte then ASCII", "\xe2\x98x"},
      {"truncated 3-byte then a whole one", "\xe6\x97\xe6\x97\xa5"},
      {"truncated 4-byte at the end", "\xf0\x9f\x98"},
      {"encoded surrogate", "\xed\xa0\x80"},
      {"past U+10FFFF", "\xf4\x90\x80\x80"},
      {"valid mix", "\xc3\xa9\xf0\x9f\x98\x80"},
  };
  for (const auto& [name, bytes] : cases) {
    std::string hex;
    for (unsigned char c : bytes) {
      static const char kHex[] = "0123456789abcdef";
      hex += kHex[c >> 4];
      hex += kHex[c & 15];
    }
    std::string cmd =
        "/usr/bin/python3 -c 'import json,sys; d=bytes.fromhex(sys.argv[1]); "
        "print(json.dumps(d.decode(\"utf-8\",\"replace\"))); "
        "print(json.dumps(d.decode(\"utf-8\",\"surrogateescape\")))' " +
        hex;
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string python;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) python += buf;
    ASSERT_EQ(pclose(p), 0) << name;
    std::string ours;
    AppendPythonJsonString(bytes, &ours, Utf8Errors::kReplace);
    ours += "\n";
    AppendPythonJsonString(bytes, &ours, Utf8Errors::kSurrogateEscape);
    ours += "\n";
    EXPECT_EQ(ours, python) << name;
  }
}

TEST(PythonStringRepr, QuotesAsRepr) {
  struct Case {
    const char* name;
    std::string in;
    std::string want;  // repr(in)
  };
  const std::vector<Case> cases = {
      {"plain", "abc", "'abc'"},
      {"single quote", "it's", R"("it's")"},
      {"both quotes", "it's \"x\"", R"('it\'s "x"')"},
      {"controls", "a\nb\tc\x01", R"('a\nb\tc\x01')"},
      {"backslash", "a\\b", R"('a\\b')"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PythonStringRepr(c.in), c.want) << c.name;
  }
}

// AppendUtf8 undoes DecodeUtf8: with surrogateescape, any bytes come back
// as they were (os.fsencode(os.fsdecode(b)) == b).
TEST(AppendUtf8, UndoesDecodeUtf8) {
  struct Case {
    std::string name;
    std::string bytes;
  } cases[] = {
      {"ascii", "epoch=3"},
      {"two to four bytes", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"a lone continuation byte", "a\x80z"},
      {"a truncated sequence", "\xe2\x82"},
      {"an encoded surrogate", "\xed\xa0\x80"},
      {"past U+10FFFF", "\xf4\x90\x80\x80"},
      {"NUL", std::string("a\0b", 3)},
  };
  for (const Case& c : cases) {
    std::string back;
    for (char32_t cp : DecodeUtf8(c.bytes, Utf8Errors::kSurrogateEscape))
      AppendUtf8(cp, &back);
    EXPECT_EQ(back, c.bytes) << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim
