#include "trialshim/base/python_text.h"

#include <gtest/gtest.h>

#include <string>
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
      {"truncated", "\xe2\x98", R"("\ufffd\ufffd")"},
      {"slash is kept", "a/b", R"("a/b")"},
  };
  for (const Case& c : cases) {
    std::string out = "x";
    AppendPythonJsonString(c.in, &out);
    EXPECT_EQ(out, "x" + c.want) << c.name;
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

}  // namespace
}  // namespace trialshim
