// Tests for ToYaml / ToJson: the bytes must be exactly what OmegaConf 2.3's
// to_yaml and Python's json.dumps print. Each case's expectations were
// produced by running (omegaconf 2.2.2 and 2.3.0 print the same):
//   cfg = OmegaConf.create(yaml.load(input, Loader=get_yaml_loader()))
//   OmegaConf.to_yaml(cfg)
//   json.dumps(OmegaConf.to_container(cfg), indent=2) and json.dumps(...)
// and the Anchors* test runs them again with the anchors' omegaconf 2.3.0.
#include "trialshim/config/emit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/testutil/omegaconf.h"
#include "tests/testutil/status_matchers.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::config {
namespace {

struct EmitCase {
  std::string name;
  std::string input;  // YAML, loaded with LoadYamlString
  std::string yaml;   // OmegaConf.to_yaml
  std::string json2;  // json.dumps(indent=2)
  std::string json1;  // json.dumps()
};

const std::vector<EmitCase>& EmitCases() {
  static const auto* cases = new std::vector<EmitCase>{
      {"empty map", "{}", "{}\n", "{}", "{}"},
      {"empty list", "[]", "[]\n", "[]", "[]"},
      {"flat scalars", "a: 1\nb: 1.5\nc: true\nd: null\ne: hello\n",
       "a: 1\nb: 1.5\nc: true\nd: null\ne: hello\n",
       "{\n  \"a\": 1,\n  \"b\": 1.5,\n  \"c\": true,\n  \"d\": null,\n  "
       "\"e\": \"hello\"\n}",
       "{\"a\": 1, \"b\": 1.5, \"c\": true, \"d\": null, \"e\": \"hello\"}"},
      {"nested maps", "a:\n  b:\n    c: 1\n  d: 2\n",
       "a:\n  b:\n    c: 1\n  d: 2\n",
       "{\n  \"a\": {\n    \"b\": {\n      \"c\": 1\n    },\n    \"d\": 2\n  "
       "}\n}",
       "{\"a\": {\"b\": {\"c\": 1}, \"d\": 2}}"},
      {"list in map is indentless", "a: [1, 2]\n", "a:\n- 1\n- 2\n",
       "{\n  \"a\": [\n    1,\n    2\n  ]\n}", "{\"a\": [1, 2]}"},
      {"list of lists", "- [1, 2]\n- [3, [4]]\n",
       "- - 1\n  - 2\n- - 3\n  - - 4\n",
       "[\n  [\n    1,\n    2\n  ],\n  [\n    3,\n    [\n      4\n    ]\n  "
       "]\n]",
       "[[1, 2], [3, [4]]]"},
      {"maps in list", "l:\n- {a: 1, b: 2}\n- {c: 3}\n",
       "l:\n- a: 1\n  b: 2\n- c: 3\n",
       "{\n  \"l\": [\n    {\n      \"a\": 1,\n      \"b\": 2\n    },\n    {\n "
       "     \"c\": 3\n    }\n  ]\n}",
       "{\"l\": [{\"a\": 1, \"b\": 2}, {\"c\": 3}]}"},
      {"empty children", "a: {}\nb: []\nc: [{}, []]\n",
       "a: {}\nb: []\nc:\n- {}\n- []\n",
       "{\n  \"a\": {},\n  \"b\": [],\n  \"c\": [\n    {},\n    []\n  ]\n}",
       "{\"a\": {}, \"b\": [], \"c\": [{}, []]}"},
      {"top-level list", "- x\n- 1\n", "- x\n- 1\n", "[\n  \"x\",\n  1\n]",
       "[\"x\", 1]"},
      {"floats",
       "a: 0.1\nb: 1e-05\nc: 1.0e+16\nd: 123456789.0\ne: -0.0\nf: 1.0\ng: "
       "2.5e-300\nh: 1e300\n",
       "a: 0.1\nb: 1.0e-05\nc: 1.0e+16\nd: 123456789.0\ne: -0.0\nf: 1.0\ng: "
       "2.5e-300\nh: 1.0e+300\n",
       "{\n  \"a\": 0.1,\n  \"b\": 1e-05,\n  \"c\": 1e+16,\n  \"d\": "
       "123456789.0,\n  \"e\": -0.0,\n  \"f\": 1.0,\n  \"g\": 2.5e-300,\n  "
       "\"h\": 1e+300\n}",
       "{\"a\": 0.1, \"b\": 1e-05, \"c\": 1e+16, \"d\": 123456789.0, \"e\": "
       "-0.0, \"f\": 1.0, \"g\": 2.5e-300, \"h\": 1e+300}"},
      {"non-finite floats", "a: .inf\nb: -.inf\nc: .nan\n",
       "a: .inf\nb: -.inf\nc: .nan\n",
       "{\n  \"a\": Infinity,\n  \"b\": -Infinity,\n  \"c\": NaN\n}",
       "{\"a\": Infinity, \"b\": -Infinity, \"c\": NaN}"},
      {"ints", "a: 0\nb: -7\nc: 9223372036854775807\nd: -9223372036854775808\n",
       "a: 0\nb: -7\nc: 9223372036854775807\nd: -9223372036854775808\n",
       "{\n  \"a\": 0,\n  \"b\": -7,\n  \"c\": 9223372036854775807,\n  \"d\": "
       "-9223372036854775808\n}",
       "{\"a\": 0, \"b\": -7, \"c\": 9223372036854775807, \"d\": "
       "-9223372036854775808}"},
      {"strings that look like ints",
       "a: '1'\nb: '010'\nc: '0x10'\nd: '1_000'\ne: ' 1 '\nf: '+1'\ng: '-0'\n",
       "a: '1'\nb: '010'\nc: '0x10'\nd: '1_000'\ne: ' 1 '\nf: '+1'\ng: '-0'\n",
       "{\n  \"a\": \"1\",\n  \"b\": \"010\",\n  \"c\": \"0x10\",\n  \"d\": "
       "\"1_000\",\n  \"e\": \" 1 \",\n  \"f\": \"+1\",\n  \"g\": \"-0\"\n}",
       "{\"a\": \"1\", \"b\": \"010\", \"c\": \"0x10\", \"d\": \"1_000\", "
       "\"e\": \" 1 \", \"f\": \"+1\", \"g\": \"-0\"}"},
      {"strings that look like floats",
       "a: '1e-3'\nb: '1.5'\nc: 'inf'\nd: 'nan'\ne: '.inf'\nf: 'Infinity'\ng: "
       "'1.'\nh: '.5'\ni: '1_0.5'\n",
       "a: '1e-3'\nb: '1.5'\nc: 'inf'\nd: 'nan'\ne: '.inf'\nf: 'Infinity'\ng: "
       "'1.'\nh: '.5'\ni: '1_0.5'\n",
       "{\n  \"a\": \"1e-3\",\n  \"b\": \"1.5\",\n  \"c\": \"inf\",\n  \"d\": "
       "\"nan\",\n  \"e\": \".inf\",\n  \"f\": \"Infinity\",\n  \"g\": "
       "\"1.\",\n  \"h\": \".5\",\n  \"i\": \"1_0.5\"\n}",
       "{\"a\": \"1e-3\", \"b\": \"1.5\", \"c\": \"inf\", \"d\": \"nan\", "
       "\"e\": \".inf\", \"f\": \"Infinity\", \"g\": \"1.\", \"h\": \".5\", "
       "\"i\": \"1_0.5\"}"},
      {"strings that look like bools",
       "a: 'true'\nb: 'yes'\nc: 'y'\nd: 'N'\ne: 'off'\nf: 'True'\ng: 'tRUE'\n",
       "a: 'true'\nb: 'yes'\nc: 'y'\nd: 'N'\ne: 'off'\nf: 'True'\ng: tRUE\n",
       "{\n  \"a\": \"true\",\n  \"b\": \"yes\",\n  \"c\": \"y\",\n  \"d\": "
       "\"N\",\n  \"e\": \"off\",\n  \"f\": \"True\",\n  \"g\": \"tRUE\"\n}",
       "{\"a\": \"true\", \"b\": \"yes\", \"c\": \"y\", \"d\": \"N\", \"e\": "
       "\"off\", \"f\": \"True\", \"g\": \"tRUE\"}"},
      {"strings that look like null",
       "a: 'null'\nb: '~'\nc: ''\nd: 'None'\ne: 'NULL'\n",
       "a: 'null'\nb: '~'\nc: ''\nd: None\ne: 'NULL'\n",
       "{\n  \"a\": \"null\",\n  \"b\": \"~\",\n  \"c\": \"\",\n  \"d\": "
       "\"None\",\n  \"e\": \"NULL\"\n}",
       "{\"a\": \"null\", \"b\": \"~\", \"c\": \"\", \"d\": \"None\", \"e\": "
       "\"NULL\"}"},
      {"timestamps quoted",
       "a: '2001-12-14'\nb: 2001-12-14\nc: '2001-12-14 21:59:43.10 -5'\n",
       "a: '2001-12-14'\nb: '2001-12-14'\nc: '2001-12-14 21:59:43.10 -5'\n",
       "{\n  \"a\": \"2001-12-14\",\n  \"b\": \"2001-12-14\",\n  \"c\": "
       "\"2001-12-14 21:59:43.10 -5\"\n}",
       "{\"a\": \"2001-12-14\", \"b\": \"2001-12-14\", \"c\": \"2001-12-14 "
       "21:59:43.10 -5\"}"},
      {"underscores: strings for omegaconf 2.3, plain",
       "a: '1_e3'\nb: '._5'\nc: 1_e3\n", "a: 1_e3\nb: ._5\nc: 1_e3\n",
       "{\n  \"a\": \"1_e3\",\n  \"b\": \"._5\",\n  \"c\": \"1_e3\"\n}",
       "{\"a\": \"1_e3\", \"b\": \"._5\", \"c\": \"1_e3\"}"},
      {"sexagesimal", "a: '1:30'\nb: '0:30'\nc: '1:30.5'\n",
       "a: '1:30'\nb: 0:30\nc: '1:30.5'\n",
       "{\n  \"a\": \"1:30\",\n  \"b\": \"0:30\",\n  \"c\": \"1:30.5\"\n}",
       "{\"a\": \"1:30\", \"b\": \"0:30\", \"c\": \"1:30.5\"}"},
      {"indicators",
       "a: '- x'\nb: '-x'\nc: '[x]'\nd: '{x}'\ne: '#x'\nf: 'a #b'\ng: "
       "'a#b'\nh: 'a: b'\ni: 'a:b'\nj: 'a:'\nk: '?'\nl: '? x'\nm: '?x'\nn: "
       "'&x'\no: '*x'\np: '!x'\nq: '|x'\nr: '>x'\ns: \"'x\"\nt: '\"x'\nu: "
       "'%x'\nv: '@x'\nw: '`x'\nx: ','\ny: 'a,b'\nz: '---'\naa: '...x'\nab: "
       "'<<'\nac: '='\nad: ':'\nae: 'a=b'\n",
       "a: '- x'\nb: -x\nc: '[x]'\nd: '{x}'\ne: '#x'\nf: 'a #b'\ng: a#b\nh: "
       "'a: b'\ni: a:b\nj: 'a:'\nk: '?'\nl: '? x'\nm: ?x\n'n': '&x'\no: "
       "'*x'\np: '!x'\nq: '|x'\nr: '>x'\ns: '''x'\nt: '\"x'\nu: '%x'\nv: "
       "'@x'\nw: '`x'\nx: ','\n'y': a,b\nz: '---'\naa: '...x'\nab: '<<'\nac: "
       "'='\nad: ':'\nae: a=b\n",
       "{\n  \"a\": \"- x\",\n  \"b\": \"-x\",\n  \"c\": \"[x]\",\n  \"d\": "
       "\"{x}\",\n  \"e\": \"#x\",\n  \"f\": \"a #b\",\n  \"g\": \"a#b\",\n  "
       "\"h\": \"a: b\",\n  \"i\": \"a:b\",\n  \"j\": \"a:\",\n  \"k\": "
       "\"?\",\n  \"l\": \"? x\",\n  \"m\": \"?x\",\n  \"n\": \"&x\",\n  "
       "\"o\": \"*x\",\n  \"p\": \"!x\",\n  \"q\": \"|x\",\n  \"r\": \">x\",\n "
       " \"s\": \"'x\",\n  \"t\": \"\\\"x\",\n  \"u\": \"%x\",\n  \"v\": "
       "\"@x\",\n  \"w\": \"`x\",\n  \"x\": \",\",\n  \"y\": \"a,b\",\n  "
       "\"z\": \"---\",\n  \"aa\": \"...x\",\n  \"ab\": \"<<\",\n  \"ac\": "
       "\"=\",\n  \"ad\": \":\",\n  \"ae\": \"a=b\"\n}",
       "{\"a\": \"- x\", \"b\": \"-x\", \"c\": \"[x]\", \"d\": \"{x}\", \"e\": "
       "\"#x\", \"f\": \"a #b\", \"g\": \"a#b\", \"h\": \"a: b\", \"i\": "
       "\"a:b\", \"j\": \"a:\", \"k\": \"?\", \"l\": \"? x\", \"m\": \"?x\", "
       "\"n\": \"&x\", \"o\": \"*x\", \"p\": \"!x\", \"q\": \"|x\", \"r\": "
       "\">x\", \"s\": \"'x\", \"t\": \"\\\"x\", \"u\": \"%x\", \"v\": \"@x\", "
       "\"w\": \"`x\", \"x\": \",\", \"y\": \"a,b\", \"z\": \"---\", \"aa\": "
       "\"...x\", \"ab\": \"<<\", \"ac\": \"=\", \"ad\": \":\", \"ae\": "
       "\"a=b\"}"},
      {"spaces", "a: ' lead'\nb: 'trail '\nc: 'in side'\nd: ' '\ne: 'a  b'\n",
       "a: ' lead'\nb: 'trail '\nc: in side\nd: ' '\ne: a  b\n",
       "{\n  \"a\": \" lead\",\n  \"b\": \"trail \",\n  \"c\": \"in side\",\n  "
       "\"d\": \" \",\n  \"e\": \"a  b\"\n}",
       "{\"a\": \" lead\", \"b\": \"trail \", \"c\": \"in side\", \"d\": \" "
       "\", \"e\": \"a  b\"}"},
      {"interpolations and missing",
       "a: ${b.c}\nb: x_${a}\nc: ???\nd: \\${esc}\ne: ${oc.env:HOME,/tmp}\n",
       "a: ${b.c}\nb: x_${a}\nc: ???\nd: \\${esc}\ne: ${oc.env:HOME,/tmp}\n",
       "{\n  \"a\": \"${b.c}\",\n  \"b\": \"x_${a}\",\n  \"c\": \"???\",\n  "
       "\"d\": \"\\\\${esc}\",\n  \"e\": \"${oc.env:HOME,/tmp}\"\n}",
       "{\"a\": \"${b.c}\", \"b\": \"x_${a}\", \"c\": \"???\", \"d\": "
       "\"\\\\${esc}\", \"e\": \"${oc.env:HOME,/tmp}\"}"},
      {"multi-line",
       "a: \"line1\\nline2\"\nb: \"trailing\\n\"\nc: \"\\nleading\"\nd: \"a "
       "\\nb\"\ne: \"a\\n b\"\nf: \"x\\n\\ny\"\n",
       "a: 'line1\n\n  line2'\nb: 'trailing\n\n  '\nc: '\n\n  leading'\nd: \"a "
       "\\nb\"\ne: \"a\\n b\"\nf: 'x\n\n\n  y'\n",
       "{\n  \"a\": \"line1\\nline2\",\n  \"b\": \"trailing\\n\",\n  \"c\": "
       "\"\\nleading\",\n  \"d\": \"a \\nb\",\n  \"e\": \"a\\n b\",\n  \"f\": "
       "\"x\\n\\ny\"\n}",
       "{\"a\": \"line1\\nline2\", \"b\": \"trailing\\n\", \"c\": "
       "\"\\nleading\", \"d\": \"a \\nb\", \"e\": \"a\\n b\", \"f\": "
       "\"x\\n\\ny\"}"},
      {"control characters",
       "a: \"tab\\there\"\nb: \"bell\\a\"\nc: \"cr\\r\"\nd: \"nul\\0\"\ne: "
       "\"del\\x7f\"\nf: \"esc\\e\"\ng: \"bom\\ufeff\"\nh: \"nbsp\\u00a0x\"\n",
       "a: \"tab\\there\"\nb: \"bell\\a\"\nc: \"cr\\r\"\nd: \"nul\\0\"\ne: "
       "\"del\\x7F\"\nf: \"esc\\e\"\ng: \"bom\\uFEFF\"\nh: nbsp\302\240x\n",
       "{\n  \"a\": \"tab\\there\",\n  \"b\": \"bell\\u0007\",\n  \"c\": "
       "\"cr\\r\",\n  \"d\": \"nul\\u0000\",\n  \"e\": \"del\\u007f\",\n  "
       "\"f\": \"esc\\u001b\",\n  \"g\": \"bom\\ufeff\",\n  \"h\": "
       "\"nbsp\\u00a0x\"\n}",
       "{\"a\": \"tab\\there\", \"b\": \"bell\\u0007\", \"c\": \"cr\\r\", "
       "\"d\": \"nul\\u0000\", \"e\": \"del\\u007f\", \"f\": \"esc\\u001b\", "
       "\"g\": \"bom\\ufeff\", \"h\": \"nbsp\\u00a0x\"}"},
      {"unicode",
       "a: \346\227\245\346\234\254\nb: \303\251\nc: \"\\U0001F600\"\nd: "
       "\"\\u2028\"\ne: \"\\x85\"\n",
       "a: \346\227\245\346\234\254\nb: \303\251\nc: \360\237\230\200\nd: "
       "'\342\200\250  '\ne: '\302\205  '\n",
       "{\n  \"a\": \"\\u65e5\\u672c\",\n  \"b\": \"\\u00e9\",\n  \"c\": "
       "\"\\ud83d\\ude00\",\n  \"d\": \"\\u2028\",\n  \"e\": \"\\u0085\"\n}",
       "{\"a\": \"\\u65e5\\u672c\", \"b\": \"\\u00e9\", \"c\": "
       "\"\\ud83d\\ude00\", \"d\": \"\\u2028\", \"e\": \"\\u0085\"}"},
      {"quotes in strings",
       "a: \"it's\"\nb: 'say \"hi\"'\nc: \"back\\\\slash\"\n",
       "a: it's\nb: say \"hi\"\nc: back\\slash\n",
       "{\n  \"a\": \"it's\",\n  \"b\": \"say \\\"hi\\\"\",\n  \"c\": "
       "\"back\\\\slash\"\n}",
       "{\"a\": \"it's\", \"b\": \"say \\\"hi\\\"\", \"c\": "
       "\"back\\\\slash\"}"},
      {"long plain wraps",
       "a: word word word word word word word word word word word word word "
       "word word word word word word word word word word word word word word "
       "word word word end\n",
       "a: word word word word word word word word word word word word word "
       "word word word\n  word word word word word word word word word word "
       "word word word word end\n",
       "{\n  \"a\": \"word word word word word word word word word word word "
       "word word word word word word word word word word word word word word "
       "word word word word word end\"\n}",
       "{\"a\": \"word word word word word word word word word word word word "
       "word word word word word word word word word word word word word word "
       "word word word word end\"}"},
      {"long single-quoted wraps",
       "a: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx '\n",
       "a: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n  "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx '\n",
       "{\n  \"a\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \"\n}",
       "{\"a\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \"}"},
      {"long double-quoted wraps",
       "a: "
       "\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyy"
       "yyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyy"
       "yyyyyyyyyyyyyyyyyyyyyy\\t\"\n",
       "a: "
       "\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyy"
       "yyyyyyyyyyyyyyyyyyyyyyyyyyy\\t\\\n  "
       "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\t\"\n",
       "{\n  \"a\": "
       "\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyy"
       "yyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyy"
       "yyyyyyyyyyyyyyyyyyyyyy\\t\"\n}",
       "{\"a\": "
       "\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyy"
       "yyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\tyyyyyyyy"
       "yyyyyyyyyyyyyyyyyyyyyy\\t\"}"},
      {"long key is complex",
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: "
       "1\njjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj"
       "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj: 2\n",
       "? "
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: "
       "1\njjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj"
       "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj: 2\n",
       "{\n  "
       "\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 1,\n  "
       "\"jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj"
       "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj\": 2\n}",
       "{\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 1, "
       "\"jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj"
       "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj\": 2}"},
      {"empty key", "'': 1\n", "? ''\n: 1\n", "{\n  \"\": 1\n}", "{\"\": 1}"},
      {"multi-line key", "\"a\\nb\": 1\n", "? 'a\n\n  b'\n: 1\n",
       "{\n  \"a\\nb\": 1\n}", "{\"a\\nb\": 1}"},
      {"keys needing quotes",
       "'1': a\n'true': b\n'a b': c\n'a: b': d\n'-': e\n",
       "'1': a\n'true': b\na b: c\n'a: b': d\n'-': e\n",
       "{\n  \"1\": \"a\",\n  \"true\": \"b\",\n  \"a b\": \"c\",\n  \"a: b\": "
       "\"d\",\n  \"-\": \"e\"\n}",
       "{\"1\": \"a\", \"true\": \"b\", \"a b\": \"c\", \"a: b\": \"d\", "
       "\"-\": \"e\"}"},
      {"deep list in map in list",
       "- a:\n  - b:\n    - 1\n    - 2\n    c: {}\n",
       "- a:\n  - b:\n    - 1\n    - 2\n    c: {}\n",
       "[\n  {\n    \"a\": [\n      {\n        \"b\": [\n          1,\n        "
       "  2\n        ],\n        \"c\": {}\n      }\n    ]\n  }\n]",
       "[{\"a\": [{\"b\": [1, 2], \"c\": {}}]}]"},
      {"top scalar-like strings in list", "- 'null'\n- null\n- '3'\n- 3\n",
       "- 'null'\n- null\n- '3'\n- 3\n",
       "[\n  \"null\",\n  null,\n  \"3\",\n  3\n]",
       "[\"null\", null, \"3\", 3]"},
  };
  return *cases;
}

TEST(EmitTest, MatchesOmegaConfAndPythonJson) {
  ASSERT_GE(EmitCases().size(), 30u);
  for (const EmitCase& c : EmitCases()) {
    auto node = LoadYamlString(c.input, "t.yaml");
    ASSERT_OK(node) << "case " << c.name;
    EXPECT_EQ(ToYaml(*node), c.yaml) << "case " << c.name;
    EXPECT_EQ(ToJson(*node), c.json2) << "case " << c.name;
    EXPECT_EQ(ToJson(*node, 2), c.json2) << "case " << c.name;
    EXPECT_EQ(ToJson(*node, -1), c.json1) << "case " << c.name;
  }
}

// The table through omegaconf 2.3.0 and json.dumps themselves.
TEST(AnchorsEmit, OmegaConfPrintsTheTableSo) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const EmitCase& c : EmitCases()) inputs.push_back(c.input);
  ASK_ANCHORS_OMEGACONF(live, "emit", inputs);
  for (size_t i = 0; i < EmitCases().size(); ++i) {
    const EmitCase& c = EmitCases()[i];
    const nlohmann::ordered_json& want = live.results[i];
    ASSERT_TRUE(want.is_array()) << c.name << ": " << testing::Outcome(want);
    EXPECT_EQ(nlohmann::ordered_json({c.yaml, c.json2, c.json1}), want)
        << c.name << ": the table is not what omegaconf 2.3.0 prints";
    StatusOr<Node> node = LoadYamlString(c.input, "t.yaml");
    ASSERT_OK(node) << c.name;
    EXPECT_EQ(ToYaml(*node), want[0]) << c.name;
    EXPECT_EQ(ToJson(*node, 2), want[1]) << c.name;
    EXPECT_EQ(ToJson(*node, -1), want[2]) << c.name;
  }
}

// Nodes the loader never makes: top-level scalars (yaml.dump ends an
// open-ended plain scalar with "..."), other JSON indents.
TEST(EmitTest, ScalarsAndIndents) {
  struct Case {
    std::string name;
    Node node;
    std::string yaml;
    std::string json;
    int indent;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"top int", Node::Int(5), "5\n...\n", "5", 2},
      {"top str", Node::String("x"), "x\n...\n", "\"x\"", 2},
      {"top quoted str", Node::String("1"), "'1'\n", "\"1\"", 2},
      {"top null", Node::Null(), "null\n...\n", "null", 2},
      {"top float", Node::Double(1e16), "1.0e+16\n...\n", "1e+16", 2},
      {"top -inf", Node::Double(-inf), "-.inf\n...\n", "-Infinity", 2},
      {"top nan", Node::Double(std::nan("")), ".nan\n...\n", "NaN", 2},
      {"indent 4", Node::MakeMap({{"a", Node::MakeList({Node::Int(1)})}}),
       "a:\n- 1\n", "{\n    \"a\": [\n        1\n    ]\n}", 4},
      {"indent 0", Node::MakeList({Node::Int(1), Node::Int(2)}), "- 1\n- 2\n",
       "[\n1,\n2\n]", 0},
      {"json escapes",
       Node::MakeMap({{"k\"\\", Node::String("\b\f\n\r\t\x01\x7f\xc3\xa9")}}),
       "k\"\\: \"\\b\\f\\n\\r\\t\\x01\\x7Fé\"\n",
       "{\"k\\\"\\\\\": \"\\b\\f\\n\\r\\t\\u0001\\u007f\\u00e9\"}", -1},
      {"json astral plane", Node::String("\xf0\x9f\x98\x80"), "😀\n...\n",
       "\"\\ud83d\\ude00\"", -1},
      {"invalid utf-8 becomes U+FFFD", Node::String("a\xff"), "a�\n...\n",
       "\"a\\ufffd\"", -1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ToYaml(c.node), c.yaml) << "case " << c.name;
    EXPECT_EQ(ToJson(c.node, c.indent), c.json) << "case " << c.name;
  }
}

// What ToYaml writes, the loader reads back to the same tree. (Not "\n"
// alone: PyYAML writes it as '\n\n  ', which yaml-cpp 0.7 misreads as "".)
TEST(EmitTest, YamlRoundTrips) {
  const std::vector<std::string> strings = {
      "",
      " ",
      "a b",
      "1",
      "010",
      "0x10",
      "1e-3",
      "yes",
      "y",
      "null",
      "~",
      "2001-12-14",
      "a: b",
      "- a",
      "#x",
      "x #y",
      "'",
      "\"",
      "\\",
      "\t",
      "a\nb",
      "a \nb",
      "x\n",
      "\n\nx",
      "日本",
      "${a.b}",
      "???",
      "\\${x}",
      "<<",
      "=",
      std::string(200, 'x') + " " + std::string(200, 'y'),
      "line one that is long enough to wrap somewhere " + std::string(90, 'z'),
  };
  Node::Map entries;
  for (size_t i = 0; i < strings.size(); ++i) {
    entries.emplace_back("k" + std::to_string(i), Node::String(strings[i]));
  }
  entries.emplace_back(
      "floats",
      Node::MakeList({Node::Double(0.1), Node::Double(1e-5), Node::Double(1e22),
                      Node::Double(-0.0), Node::Double(3.0)}));
  entries.emplace_back("ints", Node::MakeList({Node::Int(INT64_MIN),
                                               Node::Int(0), Node::Int(8)}));
  Node root = Node::MakeMap(std::move(entries));
  std::string text = ToYaml(root);
  auto back = LoadYamlString(text, "roundtrip.yaml");
  ASSERT_OK(back) << text;
  for (size_t i = 0; i < strings.size(); ++i) {
    std::string key = "k" + std::to_string(i);
    ASSERT_NE(back->Get(key), nullptr) << "case " << key;
    EXPECT_EQ(*back->Get(key), *root.Get(key))
        << "case " << key << " '" << strings[i] << "' written as:\n"
        << text;
  }
  EXPECT_EQ(*back->Get("floats"), *root.Get("floats"));
  EXPECT_EQ(*back->Get("ints"), *root.Get("ints"));
}

}  // namespace
}  // namespace trialshim::config
