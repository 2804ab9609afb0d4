#include "trialshim/base/csv.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

using ::trialshim::testing::ReadFile;
using ::trialshim::testing::TempDir;

// What Python's csv.writer (default dialect) writes for each row, asked of
// the real csv module.
std::vector<std::string> PythonCsv(
    const std::vector<std::vector<std::string>>& rows) {
  TempDir dir;
  std::ofstream(dir.Join("rows.json")) << nlohmann::json(rows).dump();
  const std::string script =
      "import csv, io, json, sys\n"
      "out = []\n"
      "for row in json.load(open(sys.argv[1], encoding='utf-8')):\n"
      "    f = io.StringIO(newline='')\n"
      "    csv.writer(f).writerow(row)\n"
      "    out.append(f.getvalue())\n"
      "open(sys.argv[2], 'w', encoding='utf-8').write(json.dumps(out))\n";
  std::ofstream(dir.Join("write_rows.py")) << script;
  std::string cmd = "/usr/bin/python3 " + dir.Join("write_rows.py") + " " +
                    dir.Join("rows.json") + " " + dir.Join("out.json");
  if (std::system(cmd.c_str()) != 0) return {};
  return nlohmann::json::parse(ReadFile(dir.Join("out.json")))
      .get<std::vector<std::string>>();
}

struct Case {
  const char* name;
  std::vector<std::string> row;
};
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"plain", {"epoch", "step", "val_loss"}},
      {"numbers", {"0", "12", "0.5", "1e-05", "nan", "inf"}},
      {"comma", {"a,b", "c"}},
      {"quote", {"say \"hi\"", "\""}},
      {"newline", {"two\nlines", "cr\rhere", "crlf\r\n"}},
      {"empty fields", {"", "x", ""}},
      {"only empty", {""}},
      {"two empty", {"", ""}},
      {"no fields", {}},
      {"spaces and tabs", {" lead", "trail ", "tab\there"}},
      {"single quote and backslash", {"it's", "back\\slash"}},
      {"unicode", {"m\xc3\xa9trique", "\xe2\x98\x83,\xf0\x9f\x98\x80"}},
  };
  return cases;
}

TEST(AppendCsvRow, WritesWhatPythonsCsvWriterWrites) {
  const std::vector<Case>& cases = Cases();
  std::vector<std::vector<std::string>> rows;
  for (const Case& c : cases) rows.push_back(c.row);
  std::vector<std::string> want = PythonCsv(rows);
  ASSERT_EQ(want.size(), cases.size()) << "python3 csv did not answer";
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string got;
    AppendCsvRow(cases[i].row, &got);
    EXPECT_EQ(got, want[i]) << cases[i].name;
  }
}

// What AppendCsvRow wrote (so what csv.writer writes: the test above) reads
// back row for row, as csv.reader reads it; LF-only files too.
TEST(ParseCsv, ReadsBackWhatTheWriterWrote) {
  std::string text;
  std::vector<std::vector<std::string>> rows;
  for (const Case& c : Cases()) {
    AppendCsvRow(c.row, &text);
    rows.push_back(c.row);
  }
  StatusOr<std::vector<std::vector<std::string>>> got = ParseCsv(text);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ((*got)[i], rows[i]) << Cases()[i].name;
  }
  using Rows = std::vector<std::vector<std::string>>;
  EXPECT_EQ(*ParseCsv("a,b\n1,2"), (Rows{{"a", "b"}, {"1", "2"}}));
  EXPECT_FALSE(ParseCsv("a,\"open").ok());
}

}  // namespace
}  // namespace trialshim
