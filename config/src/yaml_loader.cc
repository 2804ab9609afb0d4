#include "trialshim/config/yaml_loader.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simple_yaml.h"
#include "trialshim/base/file.h"
#include "trialshim/base/number_format.h"
#include "trialshim/base/strings.h"
#include "yaml_scalar.h"

namespace trialshim::config {
namespace {

using yaml_internal::PlainKind;

constexpr const char kYamlTagPrefix[] = "tag:yaml.org,2002:";

// Thrown from inside yaml-cpp's event callbacks to stop the parse at once
// (a limit reached, a duplicate key); caught in Load below. yaml-cpp unwinds
// cleanly: it throws its own exceptions from the same places.
struct LoadError {
  Status status;
};

// "file:line:col: what" plus the offending source line and a caret under the
// column (line and col 0-based here, as yaml-cpp reports them).
std::string Located(const std::string& name, std::string_view text, int line,
                    int col, const std::string& what) {
  std::string out = name + ":" + std::to_string(line + 1) + ":" +
                    std::to_string(col + 1) + ": " + what;
  if (line < 0) return out;
  size_t start = 0;
  for (int i = 0; i < line && start != std::string_view::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start > text.size()) return out;
  size_t end = text.find('\n', start);
  std::string_view src = text.substr(
      start, (end == std::string_view::npos ? text.size() : end) - start);
  if (!src.empty() && src.back() == '\r') src.remove_suffix(1);
  if (src.size() > 200) return out;  // a minified line helps nobody
  std::string caret;
  for (int i = 0; i < col && static_cast<size_t>(i) < src.size(); ++i) {
    caret += src[i] == '\t' ? '\t' : ' ';  // keep tabs so the caret lines up
  }
  out += "\n    " + std::string(src) + "\n    " + caret + "^";
  return out;
}

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
  };
  unsigned b0 = byte(0);
  if (b0 < 0x80) return 1;
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned b = byte(k);
    return i + k < text.size() && b >= lo && b <= hi;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// Code point of the well-formed sequence of `n` bytes at text[i].
char32_t DecodeUtf8(std::string_view text, size_t i, size_t n) {
  static const unsigned kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t cp = static_cast<unsigned char>(text[i]) & kLeadMask[n];
  for (size_t k = 1; k < n; ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  }
  return cp;
}

// PyYAML's reader (which Hydra uses) accepts only these (Reader.NON_PRINTABLE
// in yaml/reader.py, YAML 1.1's printable set: no C0 control but tab and the
// line breaks, no C1 control but NEL, no surrogates, no U+FFFE/U+FFFF);
// yaml-cpp lets a raw NUL or other control character through, or fails with
// an unrelated message.
bool IsYamlPrintable(char32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) ||
         c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

// yaml-cpp replaces invalid UTF-8 with U+FFFD, silently changing values;
// Hydra (PyYAML reading the file as UTF-8) refuses such a file, and control
// characters, and so do we. Hydra's FileConfigSource.load_config opens a
// config with encoding="utf-8": invalid UTF-8 is Python's UnicodeDecodeError
// there, before PyYAML sees a character.
Status CheckText(std::string_view text, const std::string& name) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    auto where = [&] {
      return name + ":" + std::to_string(line) + ":" + std::to_string(col);
    };
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x",
                    static_cast<unsigned char>(text[i]));
      return Status::InvalidArgument(
          where() + ": invalid UTF-8 byte " + hex +
          ", expected a UTF-8 text file (config files are read as UTF-8)");
    }
    char32_t c = DecodeUtf8(text, i, n);
    if (!IsYamlPrintable(c)) {
      char hex[12];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(c));
      return Status::InvalidArgument(
          where() + ": non-printable character " + hex +
          (c == 0 ? " (NUL)" : "") +
          " is not allowed in YAML, expected printable text (write it as an "
          "escape such as \\0 or \\x1b in a double-quoted string)");
    }
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += n;
  }
  return Status::Ok();
}

// Whether 0-based `line` of `text` has a tab in its indentation.
bool LeadingTab(std::string_view text, int line) {
  if (line < 0) return false;
  size_t start = 0;
  for (int i = 0; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return false;
    ++start;
  }
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] == '\t') return true;
    if (text[i] != ' ') return false;
  }
  return false;
}

// What yaml-cpp's terse messages usually mean, said as what was expected.
std::string Hint(const std::string& msg) {
  struct Entry {
    const char* prefix;
    const char* hint;
  };
  static const Entry kHints[] = {
      {"end of map not found",
       "expected another 'key: value' at the mapping's indentation (check the "
       "indentation, and quote a value that contains ': ')"},
      {"end of map flow not found", "expected ',' or '}' to close the {...}"},
      {"end of sequence not found",
       "expected another '- item' at the list's indentation"},
      {"end of sequence flow not found",
       "expected ',' or ']' to close the [...]"},
      {"illegal map value",
       "expected a newline after 'key:' or a single value; quote a value "
       "that contains ': '"},
      {"illegal EOF in scalar", "expected the closing quote"},
      {"illegal document indicator in scalar", "expected the closing quote"},
      {"unknown escape character",
       "expected a YAML escape (\\n, \\t, \\\\, \\\", \\uXXXX) in a "
       "double-quoted string; use single quotes for backslashes"},
      {"illegal block entry",
       "expected '- ' items only where a list may start"},
      {"illegal map key", "expected a key here"},
      {"unknown token", "expected a key, a value, '- ' or a [...]/{...}"},
      {"the referenced anchor is not defined",
       "expected an '&anchor' defined earlier in the file"},
      {"illegal flow end", "expected no ']' or '}' here"},
      {"invalid leading characters", "expected a node after the anchor or tag"},
  };
  for (const Entry& e : kHints) {
    if (msg.rfind(e.prefix, 0) == 0) return ", " + std::string(e.hint);
  }
  if (msg.find("tab") != std::string::npos) {
    return ", expected spaces for indentation (YAML forbids tabs there)";
  }
  return "";
}

// Builds our Node tree from yaml-cpp's parse events, typing scalars as
// OmegaConf does. Aliases are expanded by copying; node counts are checked
// before every copy, so an alias bomb stops after max_nodes, not after
// exhausting memory.
class Builder : public YAML::EventHandler {
 public:
  Builder(const std::string& name, std::string_view text,
          const LoadLimits& limits)
      : name_(name),
        file_(std::make_shared<const std::string>(name)),
        text_(text),
        limits_(limits) {}

  bool has_root() const { return has_root_; }
  Node TakeRoot() { return std::move(root_); }

  // yaml.load takes one document (Composer.get_single_node: "expected a
  // single document in the stream").
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_++ > 0) {
      Fail(mark,
           "a second YAML document starts here (after '---', or "
           "where the first top-level node ended: check the "
           "indentation), expected a single document");
    }
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(MarkNode(Node::Null(), mark), mark, anchor, false);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      Fail(mark,
           "alias refers to an anchor that encloses it (recursive "
           "structures are not supported), expected an alias to a "
           "complete node");
    }
    Count(mark, it->second.CountNodes());
    Node copy = it->second;
    Add(std::move(copy), mark, YAML::NullAnchor, /*counted=*/true);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    if (tag == "!") CheckClosingQuote(mark);
    bool is_merge_key = false;
    Node n = TypeScalar(mark, tag, value, &is_merge_key);
    if (is_merge_key && expecting_key()) {
      frames_.back().merge_next = true;
      frames_.back().key_mark = mark;
      frames_.back().have_key = true;
      frames_.back().key.clear();
      return;
    }
    Add(MarkNode(std::move(n), mark), mark, anchor, false);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag,
                       YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    CheckCollectionTag(mark, tag, "seq");
    Open(MarkNode(Node::MakeList(), mark), mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag,
                  YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    CheckCollectionTag(mark, tag, "map");
    Open(MarkNode(Node::MakeMap(), mark), mark, anchor);
  }
  void OnMapEnd() override { Close(); }

  [[noreturn]] void Fail(const YAML::Mark& mark, const std::string& what) {
    throw LoadError{Status::InvalidArgument(
        Located(name_, text_, mark.line, mark.column, what))};
  }

 private:
  struct Frame {
    Node node;
    YAML::anchor_t anchor = YAML::NullAnchor;
    // Maps: the pending key, if one has been read.
    bool have_key = false;
    std::string key;
    YAML::Mark key_mark;
    bool merge_next = false;  // the pending key is "<<"
    // Where each key was first seen, for duplicate-key errors.
    std::unordered_map<std::string, YAML::Mark> seen;
    // Entries merged in with "<<", in PyYAML's order.
    Node::Map merged;
  };

  Node MarkNode(Node n, const YAML::Mark& mark) {
    Mark m;
    m.file = file_;
    m.line = mark.line + 1;
    m.column = mark.column + 1;
    n.set_mark(std::move(m));
    return n;
  }

  // yaml-cpp 0.7 accepts a quoted scalar cut off by the end of the input
  // (PyYAML does not): look for the closing quote ourselves.
  void CheckClosingQuote(const YAML::Mark& mark) {
    size_t i = static_cast<size_t>(mark.pos);
    if (mark.pos < 0 || i >= text_.size()) return;
    char quote = text_[i];
    if (quote != '"' && quote != '\'') return;
    for (++i; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;
          continue;
        }
        return;
      }
    }
    Fail(mark,
         std::string("unterminated quoted string, expected the closing ") +
             quote + " before the end of the file");
  }

  bool expecting_key() const {
    return !frames_.empty() && frames_.back().node.is_map() &&
           !frames_.back().have_key;
  }

  void Count(const YAML::Mark& mark, size_t n) {
    nodes_ += n;
    if (nodes_ > limits_.max_nodes) {
      Fail(mark, "more than " + std::to_string(limits_.max_nodes) +
                     " nodes after expanding aliases (limit max_nodes; an "
                     "alias bomb?), expected a smaller config");
    }
  }

  // SafeConstructor also builds !!omap and !!pairs (lists of pairs, which
  // OmegaConf keeps as lists of lists; refused here on purpose,
  // docs/hydra-differences.md) and !!set (which OmegaConf.create refuses).
  void CheckCollectionTag(const YAML::Mark& mark, const std::string& tag,
                          const char* kind) {
    if (tag == "?" || tag == "!" || tag.empty() ||
        tag == std::string(kYamlTagPrefix) + kind) {
      return;
    }
    const bool pairs = tag == std::string(kYamlTagPrefix) + "omap" ||
                       tag == std::string(kYamlTagPrefix) + "pairs";
    Fail(mark, "unsupported tag '" + tag + "' (" +
                   (pairs ? "OmegaConf keeps it as a list of [key, value] "
                            "lists; write that list instead"
                          : "OmegaConf's loader refuses it too") +
                   "), expected no tag or !!" + kind);
  }

  // A plain scalar ("?") goes through the resolvers of OmegaConf's loader
  // (yaml_scalar.h); a quoted or block one ("!") is always a string. An
  // explicit tag picks SafeConstructor's constructor for it: !!int '0x1f'
  // is 31, !!int 1.5 fails as int() does. Of the other scalar tags,
  // !!binary gives bytes, which OmegaConf keeps and we refuse
  // (docs/hydra-differences.md), and !!timestamp a date OmegaConf.create
  // refuses.
  Node TypeScalar(const YAML::Mark& mark, const std::string& tag,
                  const std::string& value, bool* is_merge_key) {
    PlainKind kind;
    if (tag == "?") {
      kind = yaml_internal::ResolvePlain(value, /*omegaconf_loader=*/true);
    } else if (tag == "!") {
      kind = PlainKind::kStr;  // quoted or block scalars are always strings
    } else if (tag.rfind(kYamlTagPrefix, 0) == 0) {
      std::string t = tag.substr(sizeof(kYamlTagPrefix) - 1);
      if (t == "str") {
        kind = PlainKind::kStr;
      } else if (t == "int") {
        kind = PlainKind::kInt;
      } else if (t == "float") {
        kind = PlainKind::kFloat;
      } else if (t == "bool") {
        kind = PlainKind::kBool;
      } else if (t == "null") {
        kind = PlainKind::kNull;
      } else {
        Fail(mark,
             "unsupported tag '!!" + t +
                 "' (OmegaConf's loader "
                 "refuses it too), expected !!str, !!int, !!float, !!bool "
                 "or !!null");
      }
    } else {
      Fail(mark,
           "unsupported tag '" + tag +
               "' (OmegaConf's loader refuses "
               "it too), expected !!str, !!int, !!float, !!bool or !!null");
    }
    std::string error;
    switch (kind) {
      case PlainKind::kNull:
        return Node::Null();
      case PlainKind::kBool: {
        bool b = false;
        if (!yaml_internal::ConstructYamlBool(value, &b, &error)) {
          Fail(mark, error);
        }
        return Node::Bool(b);
      }
      case PlainKind::kInt: {
        int64_t i = 0;
        if (!yaml_internal::ConstructYamlInt(value, &i, &error)) {
          Fail(mark, error +
                         ", expected an integer in 64 bits (quote it to "
                         "keep it as a string)");
        }
        return Node::Int(i);
      }
      case PlainKind::kFloat: {
        double d = 0;
        if (!yaml_internal::ConstructYamlFloat(value, &d, &error)) {
          Fail(mark, error +
                         ", expected a float (quote it to keep it as a "
                         "string)");
        }
        return Node::Double(d);
      }
      case PlainKind::kMerge:
        *is_merge_key = true;
        return Node::String(value);
      case PlainKind::kValue:
        // PyYAML has no constructor for the "=" value tag. As a mapping key
        // flatten_mapping retags it as a string, so OmegaConf loads "=: 1"
        // as {'=': 1}; refused here, key or value.
        Fail(mark,
             "a bare '=' is YAML's value indicator, which OmegaConf "
             "can not load as a value (as a key it reads \"=\"), expected "
             "a quoted '='");
      case PlainKind::kTimestamp:  // never from the OmegaConf resolver
      case PlainKind::kStr:
        break;
    }
    return Node::String(value);
  }

  // The text a non-string key becomes (our map keys are strings; a null
  // key is refused before). OmegaConf keeps a key's type (DictConfig takes
  // int, float and bool keys), so there '1' and 1 are two keys; here they
  // are one, and the second is refused as a duplicate.
  static std::string KeyText(const Node& key) {
    switch (key.type()) {
      case Node::Type::kBool:
        return key.AsBool() ? "true" : "false";
      case Node::Type::kInt:
        return std::to_string(key.AsInt());
      case Node::Type::kDouble:
        return FormatPythonFloat(key.AsDouble());
      default:
        return key.AsString();
    }
  }

  void Open(Node n, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (expecting_key()) {
      Fail(mark,
           "a mapping key must be a scalar, found a list or mapping, "
           "expected a plain or quoted key");
    }
    Count(mark, 1);
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      Fail(mark, "nesting deeper than " + std::to_string(limits_.max_depth) +
                     " levels (limit max_depth), expected a flatter config");
    }
    Frame f;
    f.node = std::move(n);
    f.anchor = anchor;
    frames_.push_back(std::move(f));
  }

  void Close() {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    Node n = std::move(f.node);
    if (n.is_map() && !f.merged.empty()) {
      // PyYAML's flatten_mapping: merged entries first, then the map's own;
      // a later value wins but the key keeps its first position (a dict's
      // insertion order, in construct_mapping).
      Node flat = Node::MakeMap();
      flat.set_mark(n.mark());
      for (auto& [k, v] : f.merged) flat.Set(k, std::move(v));
      for (auto& [k, v] : n.MutableMap()) flat.Set(k, std::move(v));
      n = std::move(flat);
    }
    Attach(std::move(n), f.anchor);
  }

  // A complete node: remember its anchor and hang it on its parent.
  void Add(Node n, const YAML::Mark& mark, YAML::anchor_t anchor,
           bool counted) {
    if (expecting_key()) {
      Frame& f = frames_.back();
      if (!n.is_scalar()) {
        Fail(mark,
             "a mapping key must be a scalar, found a list or "
             "mapping, expected a plain or quoted key");
      }
      if (n.is_null()) {  // OmegaConf: Incompatible key type 'NoneType'
        Fail(mark,
             "a mapping key must not be null (null, ~ or nothing), expected "
             "a key; quote it ('null') to use the word");
      }
      f.key = KeyText(n);
      f.key_mark = mark;
      f.have_key = true;
      if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
      return;
    }
    if (!counted) Count(mark, 1);
    Attach(std::move(n), anchor);
  }

  // Every key is checked for duplicates. OmegaConf's loader
  // (OmegaConfLoader.construct_mapping in omegaconf/_utils.py) checks only
  // keys that resolve as strings and keeps the last of "1: a" twice; we
  // refuse both (docs/hydra-differences.md). A duplicate anchor name, which
  // PyYAML's Composer.compose_node refuses, is taken here: the later one.
  void Attach(Node n, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    if (frames_.empty()) {
      root_ = std::move(n);
      has_root_ = true;
      return;
    }
    Frame& f = frames_.back();
    if (f.node.is_list()) {
      f.node.MutableList().push_back(std::move(n));
      return;
    }
    f.have_key = false;
    if (f.merge_next) {
      f.merge_next = false;
      Merge(&f, n);
      return;
    }
    auto [it, inserted] = f.seen.emplace(f.key, f.key_mark);
    if (!inserted) {
      Fail(f.key_mark, "duplicate key '" + f.key + "' (first at line " +
                           std::to_string(it->second.line + 1) + ", column " +
                           std::to_string(it->second.column + 1) +
                           "), expected each key once per mapping");
    }
    n.set_key_mark({nullptr, f.key_mark.line + 1, f.key_mark.column + 1});
    f.node.MutableMap().emplace_back(std::move(f.key), std::move(n));
  }

  void Merge(Frame* f, const Node& value) {
    if (value.is_map()) {
      for (const auto& entry : value.AsMap()) f->merged.push_back(entry);
      return;
    }
    if (value.is_list()) {
      // PyYAML 6.0 (Debian 12's): earlier maps in the list take precedence,
      // so append them last (their values win, the first-seen position
      // stays): <<: [{x: 1, y: 1}, {x: 2, z: 2}] is {x: 1, z: 2, y: 1}.
      // PyYAML 6.0.4 (the anchors' venv) walks the list in order and skips
      // a key whose text object it has seen (id()), so the order is x, y, z
      // and a key longer than one character (CPython shares only the
      // one-character strings) takes the last map's value.
      const Node::List& items = value.AsList();
      for (const Node& item : items) {
        if (!item.is_map()) {
          Fail(f->key_mark, "'<<' merges mappings, found a list holding a " +
                                std::string(item.type_name()) +
                                ", expected a mapping or a list of mappings");
        }
      }
      for (auto it = items.rbegin(); it != items.rend(); ++it) {
        for (const auto& entry : it->AsMap()) f->merged.push_back(entry);
      }
      return;
    }
    Fail(f->key_mark, "'<<' merges mappings, found a " +
                          std::string(value.type_name()) +
                          ", expected a mapping or a list of mappings");
  }

  const std::string& name_;
  std::shared_ptr<const std::string> file_;
  std::string_view text_;
  LoadLimits limits_;
  std::vector<Frame> frames_;
  std::unordered_map<YAML::anchor_t, Node> anchors_;
  size_t nodes_ = 0;
  int documents_ = 0;
  Node root_;
  bool has_root_ = false;
};

// The document's root node as written (null when there is none).
StatusOr<Node> ParseDocument(std::string_view text, const std::string& name,
                             const LoadLimits& limits) {
  TRIALSHIM_RETURN_IF_ERROR(CheckText(text, name));
  Builder builder(name, text, limits);
  try {
    std::string owned(text);
    std::istringstream in(owned);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const LoadError& e) {
    return e.status;
  } catch (const YAML::ParserException& e) {
    std::string what = e.msg;
    if (what.rfind("depth", 0) == 0 ||
        what.find("recursion") != std::string::npos) {
      what = "nesting deeper than " + std::to_string(limits.max_depth) +
             " levels (limit max_depth), expected a flatter config";
    } else if (LeadingTab(text, e.mark.line) ||
               LeadingTab(text, e.mark.line - 1)) {
      what += ", expected spaces for indentation (YAML forbids tabs there)";
    } else {
      what += Hint(what);
    }
    return Status::InvalidArgument(
        Located(name, text, e.mark.line, e.mark.column, what));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(name + ": YAML error: " + e.what());
  } catch (...) {
    return Status::InvalidArgument(name + ": unknown YAML error");
  }
  if (!builder.has_root()) return Node::Null();
  return builder.TakeRoot();
}

void SetMarks(Node* n, const Mark& mark) {
  n->set_mark(mark);
  if (n->is_list()) {
    for (Node& item : n->MutableList()) SetMarks(&item, mark);
  } else if (n->is_map()) {
    for (auto& entry : n->MutableMap()) SetMarks(&entry.second, mark);
  }
}

}  // namespace

StatusOr<Node> LoadYamlString(std::string_view text, const std::string& name,
                              const LoadLimits& limits) {
  if (text.size() > limits.max_file_bytes) {
    return Status::InvalidArgument(
        name + ": " + std::to_string(text.size()) + " bytes, more than the " +
        std::to_string(limits.max_file_bytes) +
        " allowed (limit max_file_bytes), expected a smaller config file");
  }
  // Most configs are plain block YAML, read without yaml-cpp's scanner
  // (about a thousand instructions a byte; a trial's start composes at
  // least ten configs): the very Node yaml-cpp's parse gives, or nullopt.
  if (std::optional<Node> simple =
          internal::ParseSimpleYaml(text, name, limits)) {
    return std::move(*simple);
  }
  return internal::LoadYamlWithYamlCpp(text, name, limits);
}

namespace internal {

StatusOr<Node> LoadYamlWithYamlCpp(std::string_view text,
                                   const std::string& name,
                                   const LoadLimits& limits) {
  TRIALSHIM_ASSIGN_OR_RETURN(Node root, ParseDocument(text, name, limits));
  if (root.is_string()) {
    // OmegaConf.load passes a lone string to OmegaConf.create, which reads
    // it as YAML once more and makes a string the key of a null value:
    // "foo" is {foo: null}, "'a: b'" is {a: b}.
    Mark at = root.mark();
    TRIALSHIM_ASSIGN_OR_RETURN(root,
                               ParseDocument(root.AsString(), name, limits));
    if (root.is_string()) {
      root = Node::MakeMap({{root.AsString(), Node::Null()}});
    }
    SetMarks(&root, at);
  }
  if (root.is_null()) {
    // OmegaConf.load: a document that is only "~" or "null" is an empty
    // config, like an empty file (OmegaConf.create() of nothing).
    Node empty = Node::MakeMap();
    empty.set_mark(root.mark());
    return empty;
  }
  // OmegaConf.load raises IOError("Invalid loaded object type: int") for a
  // number or a bool.
  if (root.is_scalar()) {
    return Status::InvalidArgument(
        root.mark().ToString() + ": the file holds a single " +
        root.type_name() + ", expected a mapping (key: value lines) or a list");
  }
  return root;
}

}  // namespace internal

StatusOr<std::string> ReadConfigText(const std::string& path,
                                     const LoadLimits& limits) {
  // The one way to read an input (base/file.h): a FIFO, a device or a
  // directory is refused without blocking, and plain read(2) rather than
  // iostreams, which throw ios_base::failure on a read error (EIO).
  StatusOr<std::string> text = ReadInputFile(path, limits.max_file_bytes);
  if (text.status().code() == StatusCode::kNotFound) {
    return Status::NotFound("config file '" + Abbreviated(path) +
                            "' not found");
  }
  if (text.status().code() == StatusCode::kInvalidArgument) {
    return Status::InvalidArgument(
        text.status().message() +
        " (limit max_file_bytes), expected a smaller config file");
  }
  // "can not read config file '<path>': <reason>", as config errors say it.
  const std::string prefix = "cannot read " + Abbreviated(path) + ": ";
  if (!text.ok() && text.status().message().rfind(prefix, 0) == 0) {
    return Status(text.status().code(),
                  "can not read config file '" + Abbreviated(path) +
                      "': " + text.status().message().substr(prefix.size()));
  }
  return text;
}

StatusOr<Node> LoadYamlFile(const std::string& path, const LoadLimits& limits) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::string text, ReadConfigText(path, limits));
  return LoadYamlString(text, path, limits);
}

}  // namespace trialshim::config
