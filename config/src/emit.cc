#include "trialshim/config/emit.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/number_format.h"
#include "trialshim/base/python_number.h"
#include "trialshim/base/python_text.h"
#include "yaml_scalar.h"

namespace trialshim::config {
namespace {

// ---------------------------------------------------------------------------
// YAML: a port of the parts of PyYAML 6.0's Emitter (yaml/emitter.py) that
// yaml.dump(default_flow_style=False, allow_unicode=True, sort_keys=False)
// reaches for plain data, with OmegaConf's str representer: the call of
// OmegaConf.to_yaml (omegaconf/omegaconf.py). Names follow emitter.py so
// the two can be read side by side. With default_flow_style=False the only
// flow collections are the empty ones, so the flow-context half of the
// Emitter (flow_level, allow_flow_plain, flow indicators) is left out.

// Emitter.__init__'s defaults (best_indent 2, best_width 80): to_yaml passes
// neither indent nor width.
constexpr int kBestIndent = 2;
constexpr int kBestWidth = 80;

bool IsBreak(char32_t c) {
  return c == U'\n' || c == U'\x85' || c == U'\u2028' || c == U'\u2029';
}
bool IsSpaceOrBreak0(char32_t c) {
  return c == 0 || c == U' ' || c == U'\t' || c == U'\r' || IsBreak(c);
}

struct Analysis {
  bool empty = false;
  bool multiline = false;
  bool allow_block_plain = true;
  bool allow_single_quoted = true;
};

// Emitter.analyze_scalar, block context only: which styles can write `s`
// so that it reads back unchanged. An empty scalar is PyYAML's special case:
// it passes, yet is quoted, as "" resolves to null, and as a key it is never
// simple ("? ''\n: 1").
Analysis AnalyzeScalar(const std::u32string& s) {
  Analysis a;
  if (s.empty()) {
    a.empty = true;
    return a;
  }
  bool block_indicators = false, line_breaks = false;
  bool special_characters = false;
  bool leading_space = false, leading_break = false;
  bool trailing_space = false, trailing_break = false;
  bool break_space = false, space_break = false;
  // A document marker at the start would end the document when read.
  if (s.compare(0, 3, U"---") == 0 || s.compare(0, 3, U"...") == 0) {
    block_indicators = true;
  }
  bool preceded_by_whitespace = true;
  bool followed_by_whitespace = s.size() == 1 || IsSpaceOrBreak0(s[1]);
  bool previous_space = false, previous_break = false;
  for (size_t index = 0; index < s.size(); ++index) {
    char32_t ch = s[index];
    if (index == 0) {
      if (std::u32string_view(U"#,[]{}&*!|>'\"%@`").find(ch) !=
          std::u32string_view::npos) {
        block_indicators = true;
      }
      if ((ch == U'?' || ch == U':') && followed_by_whitespace) {
        block_indicators = true;
      }
      if (ch == U'-' && followed_by_whitespace) block_indicators = true;
    } else {
      if (ch == U':' && followed_by_whitespace) block_indicators = true;
      if (ch == U'#' && preceded_by_whitespace) block_indicators = true;
    }
    if (IsBreak(ch)) line_breaks = true;
    if (!(ch == U'\n' || (ch >= 0x20 && ch <= 0x7e))) {
      bool printable = (ch == 0x85 || (ch >= 0xa0 && ch <= 0xd7ff) ||
                        (ch >= 0xe000 && ch <= 0xfffd) ||
                        (ch >= 0x10000 && ch < 0x10ffff)) &&
                       ch != 0xfeff;
      // allow_unicode=True: printable non-ASCII is fine as it is.
      if (!printable) special_characters = true;
    }
    if (ch == U' ') {
      if (index == 0) leading_space = true;
      if (index == s.size() - 1) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (IsBreak(ch)) {
      if (index == 0) leading_break = true;
      if (index == s.size() - 1) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = false;
      previous_break = false;
    }
    preceded_by_whitespace = IsSpaceOrBreak0(ch);
    followed_by_whitespace =
        index + 2 >= s.size() || IsSpaceOrBreak0(s[index + 2]);
  }
  a.multiline = line_breaks;
  if (leading_space || leading_break || trailing_space || trailing_break) {
    a.allow_block_plain = false;
  }
  if (break_space) a.allow_block_plain = a.allow_single_quoted = false;
  if (space_break || special_characters) {
    a.allow_block_plain = a.allow_single_quoted = false;
  }
  if (line_breaks) a.allow_block_plain = false;
  if (block_indicators) a.allow_block_plain = false;
  return a;
}

// A scalar as the serializer hands it to the emitter.
struct Scalar {
  std::u32string text;
  bool implicit_plain;  // the plain text resolves back to the same type
  char style;           // 0 (any), or '\'' forced by OmegaConf's representer
  // Emitter.check_simple_key counts the tag even when it is implicit, so
  // a key of 123 characters or more is written as "? key\n: value".
  size_t tag_length;    // len of the short tag ("!!str"), for simple keys
};

Scalar RepresentString(const std::string& s) {
  using yaml_internal::PlainKind;
  // OmegaConfDumper.str_representer (omegaconf/_utils.py): single-quote a
  // string that is in YAML_BOOL_TYPES or that Python's int() or float()
  // accepts ("1_0", "1e3", " 5 "), what OmegaConf's loader would not read
  // back as a string. yaml.Dumper then asks PyYAML's own resolver
  // (timestamps included, no OmegaConf float) whether plain style is safe:
  // "2001-12-14" is quoted by that second rule.
  static const char* const kYamlBoolTypes[] = {
      "y",  "Y",  "yes",  "Yes",  "YES",  "n",     "N",     "no",
      "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
      "on", "On", "ON",   "off",  "Off",  "OFF"};
  bool quote = PythonIntAccepts(s) || PythonFloatAccepts(s);
  for (const char* b : kYamlBoolTypes) quote = quote || s == b;
  Scalar out;
  out.text = DecodeUtf8(s);
  out.implicit_plain = yaml_internal::ResolvePlain(s, false) == PlainKind::kStr;
  out.style = quote ? '\'' : 0;
  out.tag_length = 5;  // "!!str"
  return out;
}

Scalar RepresentScalar(const Node& n) {
  std::string text;
  switch (n.type()) {
    // SafeRepresenter's represent_none, represent_bool and represent_int
    // (yaml/representer.py); their text resolves back to the same type.
    case Node::Type::kNull:
      text = "null";
      break;
    case Node::Type::kBool:
      text = n.AsBool() ? "true" : "false";
      break;
    case Node::Type::kInt:
      text = std::to_string(n.AsInt());
      break;
    case Node::Type::kDouble: {
      double v = n.AsDouble();
      if (std::isnan(v)) {
        text = ".nan";
      } else if (std::isinf(v)) {
        text = v > 0 ? ".inf" : "-.inf";
      } else {
        // PyYAML's represent_float: repr().lower(), and "1e+17" gets a
        // ".0" ("1.0e+17") so that YAML 1.1 reads it back as a float.
        text = FormatPythonFloat(v);
        if (text.find('.') == std::string::npos &&
            text.find('e') != std::string::npos) {
          text.insert(text.find('e'), ".0");
        }
      }
      break;
    }
    default:
      return RepresentString(n.AsString());
  }
  return Scalar{DecodeUtf8(text), true, 0, 0};
}

// Python's text[start:end]: empty when start >= end.
std::u32string_view Slice(const std::u32string& text, size_t start,
                          size_t end) {
  if (start >= end) return {};
  return std::u32string_view(text).substr(start, end - start);
}

class YamlEmitter {
 public:
  // One implicit document: yaml.dump's expect_document_start writes no
  // "---" for it.
  std::string Emit(const Node& root) {
    EmitNode(root, /*root=*/true, /*mapping=*/false, /*simple_key=*/false);
    // expect_document_end, then StreamEnd's "..." after an open-ended plain
    // top-level scalar.
    WriteIndent();
    if (open_ended_) {
      WriteIndicator(U"...", true);
      WriteIndent();
    }
    return std::move(out_);
  }

 private:
  void Write(std::u32string_view data) {
    for (char32_t c : data) AppendUtf8(c, &out_);
    column_ += static_cast<int>(data.size());
  }

  void WriteIndicator(std::u32string_view indicator, bool need_whitespace,
                      bool whitespace = false, bool indention = false) {
    if (!whitespace_ && need_whitespace) Write(U" ");
    Write(indicator);
    whitespace_ = whitespace;
    indention_ = indention_ && indention;
    open_ended_ = false;
  }

  // Emitter.write_indent: a new line unless the current one holds only
  // indentation, no deeper than the indent; then spaces up to the indent.
  void WriteIndent() {
    int indent = indent_ < 0 ? 0 : indent_;
    if (!indention_ || column_ > indent ||
        (column_ == indent && !whitespace_)) {
      WriteLineBreak();
    }
    if (column_ < indent) {
      whitespace_ = true;
      Write(std::u32string(indent - column_, U' '));
    }
  }

  void WriteLineBreak(char32_t br = U'\n') {
    whitespace_ = true;
    indention_ = true;
    AppendUtf8(br, &out_);
    column_ = 0;
  }

  void IncreaseIndent(bool flow, bool indentless = false) {
    indents_.push_back(indent_);
    if (indent_ < 0) {
      indent_ = flow ? kBestIndent : 0;
    } else if (!indentless) {
      indent_ += kBestIndent;
    }
  }
  void PopIndent() {
    indent_ = indents_.back();
    indents_.pop_back();
  }

  // Emitter.expect_node and the block mapping/sequence states, folded into
  // one recursion: the tree is walked as the serializer's events come.
  void EmitNode(const Node& n, bool root, bool mapping, bool simple_key) {
    if (n.is_map()) {
      // An empty collection is flow style even under
      // default_flow_style=False (check_empty_mapping/_sequence).
      if (n.size() == 0) return EmitEmptyFlow(U"{", U"}");
      IncreaseIndent(false);
      for (const auto& [key, value] : n.AsMap()) {
        WriteIndent();
        Scalar k = RepresentString(key);
        Analysis ka = AnalyzeScalar(k.text);
        bool simple =
            k.tag_length + k.text.size() < 128 && !ka.empty && !ka.multiline;
        if (simple) {
          EmitScalar(k, ka, false, true);
          WriteIndicator(U":", false);
        } else {
          WriteIndicator(U"?", true, false, true);
          EmitScalar(k, ka, false, false);
          WriteIndent();
          WriteIndicator(U":", true, false, true);
        }
        EmitNode(value, false, true, false);
      }
      PopIndent();
      return;
    }
    if (n.is_list()) {
      if (n.size() == 0) return EmitEmptyFlow(U"[", U"]");
      // expect_block_sequence: a list as a map's value is not indented
      // ("b:\n- c: 1"), the style OmegaConf.to_yaml prints.
      IncreaseIndent(false, mapping && !indention_);
      for (const Node& item : n.AsList()) {
        WriteIndent();
        WriteIndicator(U"-", true, false, true);
        EmitNode(item, false, false, false);
      }
      PopIndent();
      return;
    }
    Scalar s = RepresentScalar(n);
    EmitScalar(s, AnalyzeScalar(s.text), root, simple_key);
  }

  void EmitEmptyFlow(std::u32string_view open, std::u32string_view close) {
    WriteIndicator(open, true, true);
    IncreaseIndent(true);
    PopIndent();
    WriteIndicator(close, false);
  }

  // Emitter.choose_scalar_style without the block styles ('|', '>'), which
  // no representer here asks for: plain if the representer allows it and
  // the text resolves back implicitly, else single, else double quoted.
  char ChooseStyle(const Scalar& s, const Analysis& a, bool simple_key) {
    if (s.style == 0 && s.implicit_plain) {
      if (!(simple_key && (a.empty || a.multiline)) && a.allow_block_plain) {
        return 0;
      }
    }
    if (a.allow_single_quoted && !(simple_key && a.multiline)) return '\'';
    return '"';
  }

  void EmitScalar(const Scalar& s, const Analysis& a, bool root,
                  bool simple_key) {
    IncreaseIndent(true);
    char style = ChooseStyle(s, a, simple_key);
    bool split = !simple_key;
    if (style == '"') {
      WriteDoubleQuoted(s.text, split);
    } else if (style == '\'') {
      WriteSingleQuoted(s.text, split);
    } else {
      WritePlain(s.text, split, root);
    }
    PopIndent();
  }

  // Emitter.write_plain, write_single_quoted and write_double_quoted: each
  // folds a long line at a space past kBestWidth (a key, split=false,
  // never), so a long string prints on several lines as PyYAML prints it.
  // A plain root scalar leaves the stream open-ended: Emit adds "...".
  void WritePlain(const std::u32string& text, bool split, bool root) {
    if (root) open_ended_ = true;
    if (text.empty()) return;
    if (!whitespace_) Write(U" ");
    whitespace_ = false;
    indention_ = false;
    bool spaces = false, breaks = false;
    size_t start = 0;
    for (size_t end = 0; end <= text.size(); ++end) {
      char32_t ch = end < text.size() ? text[end] : 0;
      bool at_end = end == text.size();
      if (spaces) {
        if (at_end || ch != U' ') {
          if (start + 1 == end && column_ > kBestWidth && split) {
            WriteIndent();
            whitespace_ = false;
            indention_ = false;
          } else {
            Write(Slice(text, start, end));
          }
          start = end;
        }
      } else if (breaks) {
        if (at_end || !IsBreak(ch)) {
          if (text[start] == U'\n') WriteLineBreak();
          for (size_t i = start; i < end; ++i) WriteLineBreak(text[i]);
          WriteIndent();
          whitespace_ = false;
          indention_ = false;
          start = end;
        }
      } else if (at_end || ch == U' ' || IsBreak(ch)) {
        Write(Slice(text, start, end));
        start = end;
      }
      if (!at_end) {
        spaces = ch == U' ';
        breaks = IsBreak(ch);
      }
    }
  }

  void WriteSingleQuoted(const std::u32string& text, bool split) {
    WriteIndicator(U"'", true);
    bool spaces = false, breaks = false;
    size_t start = 0;
    for (size_t end = 0; end <= text.size(); ++end) {
      bool at_end = end == text.size();
      char32_t ch = at_end ? 0 : text[end];
      if (spaces) {
        if (at_end || ch != U' ') {
          if (start + 1 == end && column_ > kBestWidth && split && start != 0 &&
              end != text.size()) {
            WriteIndent();
          } else {
            Write(Slice(text, start, end));
          }
          start = end;
        }
      } else if (breaks) {
        if (at_end || !IsBreak(ch)) {
          if (text[start] == U'\n') WriteLineBreak();
          for (size_t i = start; i < end; ++i) WriteLineBreak(text[i]);
          WriteIndent();
          start = end;
        }
      } else if (at_end || ch == U' ' || IsBreak(ch) || ch == U'\'') {
        if (start < end) {
          Write(Slice(text, start, end));
          start = end;
        }
      }
      if (ch == U'\'' && !at_end) {
        Write(U"''");
        start = end + 1;
      }
      if (!at_end) {
        spaces = ch == U' ';
        breaks = IsBreak(ch);
      }
    }
    WriteIndicator(U"'", false);
  }

  void WriteDoubleQuoted(const std::u32string& text, bool split) {
    WriteIndicator(U"\"", true);
    size_t start = 0;
    for (size_t end = 0; end <= text.size(); ++end) {
      bool at_end = end == text.size();
      char32_t ch = at_end ? 0 : text[end];
      if (at_end || ch == U'"' || ch == U'\\' || ch == 0x85 || ch == 0x2028 ||
          ch == 0x2029 || ch == 0xfeff ||
          !((ch >= 0x20 && ch <= 0x7e) || (ch >= 0xa0 && ch <= 0xd7ff) ||
            (ch >= 0xe000 && ch <= 0xfffd))) {
        if (start < end) {
          Write(Slice(text, start, end));
          start = end;
        }
        if (!at_end) {
          Write(EscapeYaml(ch));
          start = end + 1;
        }
      }
      if (end > 0 && end + 1 < text.size() && (ch == U' ' || start >= end) &&
          column_ + static_cast<int>(end - start) > kBestWidth && split) {
        std::u32string data = std::u32string(Slice(text, start, end)) + U"\\";
        if (start < end) start = end;
        Write(data);
        WriteIndent();
        whitespace_ = false;
        indention_ = false;
        if (text[start] == U' ') Write(U"\\");
      }
    }
    WriteIndicator(U"\"", false);
  }

  // Emitter.ESCAPE_REPLACEMENTS, then \xXX, \uXXXX or \UXXXXXXXX.
  static std::u32string EscapeYaml(char32_t ch) {
    switch (ch) {
      case 0:
        return U"\\0";
      case 0x07:
        return U"\\a";
      case 0x08:
        return U"\\b";
      case 0x09:
        return U"\\t";
      case 0x0a:
        return U"\\n";
      case 0x0b:
        return U"\\v";
      case 0x0c:
        return U"\\f";
      case 0x0d:
        return U"\\r";
      case 0x1b:
        return U"\\e";
      case U'"':
        return U"\\\"";
      case U'\\':
        return U"\\\\";
      case 0x85:
        return U"\\N";
      case 0xa0:
        return U"\\_";
      case 0x2028:
        return U"\\L";
      case 0x2029:
        return U"\\P";
    }
    char buf[16];
    if (ch <= 0xff) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(ch));
    } else if (ch <= 0xffff) {
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(ch));
    } else {
      std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(ch));
    }
    return std::u32string(buf, buf + std::char_traits<char>::length(buf));
  }

  std::string out_;
  int column_ = 0;
  bool whitespace_ = true;
  bool indention_ = true;
  bool open_ended_ = false;
  int indent_ = -1;  // PyYAML's None
  std::vector<int> indents_;
};

// ---------------------------------------------------------------------------
// JSON as Python's json.dumps: ensure_ascii, ", " / ": " on one line and
// "," + newline when indented (JSONEncoder in json/encoder.py drops the
// space after "," once indent is set), floats as repr(), and
// Infinity/-Infinity/NaN (floatstr, allow_nan=True), which strict JSON
// readers refuse but Python's json.loads reads back.

void Json(const Node& n, int indent, int level, std::string* out) {
  auto newline = [&](int lvl) {
    *out += '\n';
    out->append(static_cast<size_t>(indent) * lvl, ' ');
  };
  switch (n.type()) {
    case Node::Type::kNull:
      *out += "null";
      return;
    case Node::Type::kBool:
      *out += n.AsBool() ? "true" : "false";
      return;
    case Node::Type::kInt:
      *out += std::to_string(n.AsInt());
      return;
    case Node::Type::kDouble: {
      double v = n.AsDouble();
      if (std::isnan(v)) {
        *out += "NaN";
      } else if (std::isinf(v)) {
        *out += v > 0 ? "Infinity" : "-Infinity";
      } else {
        *out += FormatPythonFloat(v);
      }
      return;
    }
    case Node::Type::kString:
      AppendPythonJsonString(n.AsString(), out);
      return;
    case Node::Type::kList:
    case Node::Type::kMap:
      break;
  }
  bool is_map = n.is_map();
  if (n.size() == 0) {
    *out += is_map ? "{}" : "[]";
    return;
  }
  *out += is_map ? '{' : '[';
  bool first = true;
  auto separator = [&]() {
    if (!first) *out += indent < 0 ? ", " : ",";
    if (indent >= 0) newline(level + 1);
    first = false;
  };
  if (is_map) {
    for (const auto& [k, v] : n.AsMap()) {
      separator();
      AppendPythonJsonString(k, out);
      *out += ": ";
      Json(v, indent, level + 1, out);
    }
  } else {
    for (const Node& item : n.AsList()) {
      separator();
      Json(item, indent, level + 1, out);
    }
  }
  if (indent >= 0) newline(level);
  *out += is_map ? '}' : ']';
}

}  // namespace

std::string ToYaml(const Node& node) { return YamlEmitter().Emit(node); }

std::string ToJson(const Node& node, int indent) {
  std::string out;
  Json(node, indent, 0, &out);
  return out;
}

}  // namespace trialshim::config
