// ParseSimpleYaml: see simple_yaml.h. A line-based recursive descent over
// the subset; every check that fails returns nullopt, never an error (the
// caller's yaml-cpp load then reports whatever is wrong, with its context).
#include "simple_yaml.h"

#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "yaml_scalar.h"

namespace trialshim::config::internal {
namespace {

using yaml_internal::PlainKind;

struct Line {
  int number = 0;         // 1-based
  int indent = 0;         // leading spaces
  std::string_view raw;   // the whole line, without its '\n'
  std::string_view body;  // after the indent, trailing blanks trimmed
  bool blank = false;     // empty or a comment
};

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Where a plain `key:` ends in `s` (the ':'), or npos when `s` does not start
// with one. Keys that are not plain text (quoted, flow, indicators) are not
// this parser's.
size_t KeyEnd(std::string_view s) {
  if (s.empty() || std::string_view("-?:,[]{}#&*!|>'\"%@`").find(s[0]) !=
                       std::string_view::npos) {
    return std::string_view::npos;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) {
      // "a : 1" is the key "a" to YAML: not this parser's.
      return s[i - 1] == ' ' ? std::string_view::npos : i;
    }
    // Characters whose meaning in a key is the loader's to decide.
    if (std::string_view("#:[]{},'\"").find(s[i]) != std::string_view::npos) {
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

bool IsSeqEntry(std::string_view body) {
  return body.size() >= 2 && body[0] == '-' && body[1] == ' ';
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& name,
         const LoadLimits& limits)
      : file_(std::make_shared<const std::string>(name)), limits_(limits) {
    // Printable ASCII and newlines only: tabs, CR, control characters and
    // UTF-8 are the loader's to check and to read.
    for (char c : text) {
      if ((c < ' ' && c != '\n') || static_cast<unsigned char>(c) >= 0x7f) {
        ok_ = false;
        return;
      }
    }
    int number = 0;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      Line l;
      l.number = ++number;
      l.raw = text.substr(start, end - start);
      while (l.indent < static_cast<int>(l.raw.size()) && l.raw[l.indent] == ' ')
        ++l.indent;
      l.body = TrimRight(l.raw.substr(l.indent));
      l.blank = l.body.empty() || l.body[0] == '#';
      lines_.push_back(l);
      start = end + 1;
    }
  }

  std::optional<Node> Document() {
    if (!ok_) return std::nullopt;
    SkipBlank();
    Node root = Node::MakeMap();  // an empty document: an empty config
    if (pos_ < lines_.size()) {
      const Line& l = lines_[pos_];
      root = IsSeqEntry(l.body) ? Seq(l.indent) : Map(l.indent);
      SkipBlank();
    }
    if (!ok_ || pos_ != lines_.size()) return std::nullopt;
    return root;
  }

 private:
  void SkipBlank() {
    while (pos_ < lines_.size() && lines_[pos_].blank) ++pos_;
  }

  // Every node is counted, as the loader counts them (LoadLimits).
  Node Marked(Node n, int line, int column) {
    if (++nodes_ > limits_.max_nodes) ok_ = false;
    n.set_mark({file_, line, column});
    return n;
  }

  // Lists and maps open in the one being read: deeper than the loader
  // allows is its error to report.
  struct Nesting {
    explicit Nesting(Parser* p) : p_(p) {
      if (++p_->depth_ > p_->limits_.max_depth) p_->ok_ = false;
    }
    ~Nesting() { --p_->depth_; }
    Parser* p_;
  };

  Node Fail() {
    ok_ = false;
    return Node();
  }

  // A block map whose first key is on the current line at `col` (a list
  // item's map starts after its "- "); the others follow at `col`.
  Node Map(int col) {
    Nesting nesting(this);
    const Line& first = lines_[pos_];
    Node map = Marked(Node::MakeMap(), first.number, col + 1);
    std::unordered_set<std::string_view> keys;
    int offset = col - first.indent;  // into the first line's body
    while (ok_) {
      const Line& l = lines_[pos_];
      std::string_view s = l.body.substr(offset);
      size_t colon = KeyEnd(s);
      if (colon == std::string_view::npos) return Fail();
      std::string_view key = s.substr(0, colon);
      if (yaml_internal::ResolvePlain(key, true) != PlainKind::kStr ||
          !keys.insert(key).second) {
        return Fail();  // a key of another type, or a duplicate
      }
      size_t rest = colon + 1;
      while (rest < s.size() && s[rest] == ' ') ++rest;
      Node value;
      if (rest == s.size()) {
        ++pos_;
        SkipBlank();
        // The value is a block below the key, or a list at its column.
        if (pos_ == lines_.size()) return Fail();
        const Line& next = lines_[pos_];
        if (next.indent > col) {
          value = IsSeqEntry(next.body) ? Seq(next.indent) : Map(next.indent);
        } else if (next.indent == col && IsSeqEntry(next.body)) {
          value = Seq(col);
        } else {
          return Fail();  // an empty value: null, with a mark to work out
        }
      } else {
        // `s` starts at 0-based column `col`.
        value = Inline(s.substr(rest), l, col + static_cast<int>(rest) + 1, col);
        ++pos_;
      }
      value.set_key_mark({nullptr, l.number, col + 1});
      map.MutableMap().emplace_back(std::string(key), std::move(value));
      SkipBlank();
      if (!ok_ || pos_ == lines_.size() || lines_[pos_].indent < col) break;
      if (lines_[pos_].indent > col || IsSeqEntry(lines_[pos_].body)) {
        return Fail();
      }
      offset = 0;
    }
    return map;
  }

  // A block list whose "- " items are at `col`, from the current line.
  Node Seq(int col) {
    Nesting nesting(this);
    Node seq = Marked(Node::MakeList(), lines_[pos_].number, col + 1);
    while (ok_) {
      const Line& l = lines_[pos_];
      std::string_view item = l.body.substr(1);
      int skipped = 1;
      while (!item.empty() && item[0] == ' ') {
        item.remove_prefix(1);
        ++skipped;
      }
      int item_col = col + skipped;
      if (KeyEnd(item) != std::string_view::npos) {
        seq.MutableList().push_back(Map(item_col));
      } else {
        seq.MutableList().push_back(Inline(item, l, item_col + 1, col));
        ++pos_;
      }
      SkipBlank();
      if (!ok_ || pos_ == lines_.size() || lines_[pos_].indent < col) break;
      if (lines_[pos_].indent > col) return Fail();
      if (!IsSeqEntry(lines_[pos_].body)) break;  // a map's next key
    }
    return seq;
  }

  // A value written on line `l` from 1-based `column` to the end of the
  // line; `parent` is the column of the map or list holding it.
  Node Inline(std::string_view s, const Line& l, int column, int parent) {
    if (s == "|") return Literal(l, column, parent);
    if (s == "{}") return Marked(Node::MakeMap(), l.number, column);
    if (s[0] == '[') return FlowList(s, l, column);
    if (s[0] == '\'') return Quoted(s, l, column);
    Node n = Plain(s, l.number, column);
    // A plain scalar may go on over more indented lines: not ours.
    size_t next = pos_ + 1;
    while (next < lines_.size() && lines_[next].blank) ++next;
    if (next < lines_.size() && lines_[next].indent > parent) return Fail();
    return n;
  }

  Node Plain(std::string_view s, int line, int column) {
    // '?', ':' and '-' start a plain scalar unless a blank follows ("???").
    bool indicator = std::string_view("?:-").find(s[0]) != std::string_view::npos
                         ? s.size() == 1 || s[1] == ' '
                         : std::string_view("\"&*!%@`>|{}[],#'").find(s[0]) !=
                               std::string_view::npos;
    if (indicator ||
        s.find(": ") != std::string_view::npos ||
        s.find(" #") != std::string_view::npos || s.back() == ':') {
      return Fail();
    }
    std::string error;
    Node n;
    switch (yaml_internal::ResolvePlain(s, /*omegaconf_loader=*/true)) {
      case PlainKind::kNull:
        break;
      case PlainKind::kBool: {
        bool b = false;
        if (!yaml_internal::ConstructYamlBool(s, &b, &error)) return Fail();
        n = Node::Bool(b);
        break;
      }
      case PlainKind::kInt: {
        int64_t i = 0;
        if (!yaml_internal::ConstructYamlInt(s, &i, &error)) return Fail();
        n = Node::Int(i);
        break;
      }
      case PlainKind::kFloat: {
        double d = 0;
        if (!yaml_internal::ConstructYamlFloat(s, &d, &error)) return Fail();
        n = Node::Double(d);
        break;
      }
      case PlainKind::kStr:
        n = Node::String(std::string(s));
        break;
      default:
        return Fail();
    }
    return Marked(std::move(n), line, column);
  }

  // '...' alone on the rest of the line; '' is a quote.
  Node Quoted(std::string_view s, const Line& l, int column) {
    std::string out;
    size_t i = 1;
    for (; i < s.size(); ++i) {
      if (s[i] != '\'') {
        out += s[i];
      } else if (i + 1 < s.size() && s[i + 1] == '\'') {
        out += '\'';
        ++i;
      } else {
        break;
      }
    }
    if (i + 1 != s.size()) return Fail();  // unclosed, or text after it
    return Marked(Node::String(std::move(out)), l.number, column);
  }

  // [a, b] of plain scalars, on one line (a ':' there may make a pair).
  Node FlowList(std::string_view s, const Line& l, int column) {
    if (s.back() != ']' ||
        s.find_first_of("[]{}'\"#:", 1) != s.size() - 1) {
      return Fail();
    }
    Node list = Marked(Node::MakeList(), l.number, column);
    std::string_view inner = s.substr(1, s.size() - 2);
    for (size_t start = 0; !inner.empty() && start <= inner.size();) {
      size_t comma = inner.find(',', start);
      if (comma == std::string_view::npos) comma = inner.size();
      size_t b = start;
      while (b < comma && inner[b] == ' ') ++b;
      std::string_view item = TrimRight(inner.substr(b, comma - b));
      if (item.empty()) return Fail();
      list.MutableList().push_back(
          Plain(item, l.number, column + 1 + static_cast<int>(b)));
      start = comma + 1;
    }
    return list;
  }

  // A `|` block (clip: one final newline) below line `l`, more indented than
  // `parent`.
  Node Literal(const Line& l, int column, int parent) {
    size_t next = pos_ + 1;
    int indent = -1;
    std::vector<std::string_view> content;
    for (; next < lines_.size(); ++next) {
      const Line& c = lines_[next];
      if (c.raw.empty()) {
        content.push_back("");
        continue;
      }
      if (c.raw.find_first_not_of(' ') == std::string_view::npos) {
        return Fail();  // spaces alone: kept or not by their count
      }
      if (indent < 0) indent = c.indent;
      if (indent <= parent || c.indent < indent) break;
      content.push_back(c.raw.substr(indent));
    }
    while (!content.empty() && content.back().empty()) content.pop_back();
    if (content.empty()) return Fail();
    std::string out;
    for (std::string_view c : content) {
      out.append(c);
      out += '\n';
    }
    pos_ = next - 1;  // the caller steps past the block's last line
    return Marked(Node::String(std::move(out)), l.number, column);
  }

  std::shared_ptr<const std::string> file_;
  LoadLimits limits_;
  std::vector<Line> lines_;
  size_t pos_ = 0;
  size_t nodes_ = 0;
  int depth_ = 0;
  bool ok_ = true;
};

}  // namespace

std::optional<Node> ParseSimpleYaml(std::string_view text,
                                    const std::string& name,
                                    const LoadLimits& limits) {
  return Parser(text, name, limits).Document();
}

}  // namespace trialshim::config::internal
