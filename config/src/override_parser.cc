// Hydra 1.3.2's OverrideParser.g4 as a recursive-descent parser over the
// tokens of override_lexer. Like ANTLR, it builds the whole tree first (so a
// syntax error anywhere wins over an evaluation error) and then evaluates it
// the way Hydra's visitor does.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "override_functions.h"
#include "override_lexer.h"
#include "override_value.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"
#include "trialshim/config/render.h"
#include "trialshim/base/spell.h"

namespace trialshim::config {

std::string Override::KeyWithPackage() const {
  if (!package) return key_or_group;
  return key_or_group + "@" + *package;
}

std::string Override::KeyElement() const {
  const char* prefix = type == OverrideType::kAdd        ? "+"
                       : type == OverrideType::kForceAdd ? "++"
                       : type == OverrideType::kDelete   ? "~"
                                                         : "";
  return prefix + KeyWithPackage();
}

namespace {

using override_internal::CallFunction;
using override_internal::EnumerateSweep;
using override_internal::FunctionNames;
using override_internal::HydraStr;
using override_internal::IsDictKeyToken;
using override_internal::IsPrimitiveToken;
using override_internal::Lex;
using override_internal::PVal;
using override_internal::Tok;
using override_internal::Token;
using override_internal::ToNode;

// The line overrides_parser.py's parse_overrides ends every parse error
// with; Hydra 1.3.2 still points at the 1.2 docs.
constexpr char kGrammarUrl[] =
    "See https://hydra.cc/docs/1.2/advanced/override_grammar/basic for details";

// A parsed but not yet evaluated element.
struct Ast {
  enum Kind { kPrimitive, kList, kDict, kFunction } kind = kPrimitive;
  size_t first = 0, last = 0;  // token range [first, last)
  bool dict_key = false;
  std::vector<Ast> children;           // list items; dict key, value, ...; args
  std::vector<std::string> arg_names;  // function: "" for a positional arg
};

// Token text as ANTLR shows it in messages: control characters escaped.
// (DefaultErrorStrategy.escapeWSAndQuote in ANTLR's Python runtime.)
std::string AntlrDisplay(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

// 1-based column of a byte offset, counting UTF-8 code points.
// Code points, as ANTLR counts on a Python str; the column is our addition.
size_t ColumnOf(std::string_view s, size_t offset) {
  size_t col = 1;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++col;
  }
  return col;
}

// Inputs up to this many bytes are echoed whole in messages, as Hydra does
// (the longest of the cases run through Hydra is 306 bytes). A longer one
// (a hostile trial value can be 128 KiB) is shown as a window around the
// error, and each piece of it a message quotes is cut, so the reason comes
// first and a message stays a few hundred bytes.
constexpr size_t kMaxEcho = 1024;
constexpr size_t kEchoWindow = 40;  // bytes each side of the caret
constexpr size_t kMaxQuoted = 60;

// Back to the first byte of the UTF-8 character at `i`.
size_t CharStart(std::string_view s, size_t i) {
  while (i > 0 && i < s.size() &&
         (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) {
    --i;
  }
  return i;
}

// `s` itself, or its first kMaxQuoted bytes and "...".
std::string Clip(std::string_view s) {
  if (s.size() <= kMaxQuoted) return std::string(s);
  return std::string(s.substr(0, CharStart(s, kMaxQuoted))) + "...";
}

// The whole input as a message echoes it: cut when it is long.
std::string Echo(std::string_view input) {
  if (input.size() <= kMaxEcho) return std::string(input);
  return Clip(input) + " (" + std::to_string(input.size()) + " bytes)";
}

// "  <input>\n  <spaces>^" (tabs kept so that the caret lines up).
std::string CaretLines(std::string_view s, size_t offset) {
  std::string pad;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;
    pad += c == '\t' ? '\t' : ' ';
  }
  std::string shown(s);
  return "\n  " + shown + "\n  " + pad + "^";
}

// CaretLines of a long input: the kEchoWindow bytes each side of `offset`.
std::string CaretWindow(std::string_view s, size_t offset) {
  size_t from = CharStart(s, offset > kEchoWindow ? offset - kEchoWindow : 0);
  size_t to = CharStart(s, std::min(s.size(), offset + kEchoWindow));
  std::string head = from > 0 ? "..." : "";
  std::string shown = head + std::string(s.substr(from, to - from)) +
                      (to < s.size() ? "..." : "");
  return CaretLines(shown, head.size() + offset - from);
}

// ESC is backslash-char pairs; _createPrimitive keeps text[1::2].
std::string Unescape(std::string_view esc) {
  std::string out;
  for (size_t i = 1; i < esc.size(); i += 2) out += esc[i];
  return out;
}

// QUOTED_VALUE's content: n backslashes before a quote of the same kind
// stand for n/2 backslashes (and the quote when n is odd).
// overrides_visitor.py's _unescape_quoted_string. Only backslashes before a
// quote are escapes; elsewhere they are kept as written ('a\b' is a\b).
std::string UnquoteText(std::string_view tok) {
  char q = tok[0];
  std::string_view body = tok.substr(1);  // keeps the closing quote
  std::string out;
  size_t i = 0;
  while (i < body.size()) {
    size_t j = i;
    while (j < body.size() && body[j] == '\\') ++j;
    size_t run = j - i;
    if (j < body.size() && body[j] == q) {
      out.append(run / 2, '\\');
      if (j + 1 < body.size()) out += q;  // not the closing quote
      i = j + 1;
    } else if (run > 0) {
      out.append(run, '\\');
      i = j;
    } else {
      out += body[i++];
    }
  }
  return out;
}

// As the YAML loader's max_depth.
// Hydra has no bound of its own; ours is listed in docs/limits.md.
constexpr int kMaxOverrideNesting = 128;

class Parser {
 public:
  // `label` is "override" or "override value".
  Parser(std::string_view input, std::string label, size_t value_offset)
      : input_(input), label_(std::move(label)), value_offset_(value_offset) {}

  Status ParseOverrideText(Override* out) {
    toks_ = Lex(input_, /*value_mode=*/false);
    if (!ParseOverrideTree(out)) return error_;
    if (has_value_) {
      TRIALSHIM_RETURN_IF_ERROR(Finish(out));
    } else if (saw_equal_) {
      out->value = Node::String("");
    }
    return Status::Ok();
  }

  // overrides_parser.py's parse_rule starts the lexer in VALUE_MODE for any
  // rule outside KEY_RULES; a value alone is parsed that way.
  Status ParseValueText(Override* out) {
    toks_ = Lex(input_.substr(value_offset_), /*value_mode=*/true);
    for (Token& t : toks_) {
      t.begin += value_offset_;
      t.end += value_offset_;
    }
    if (!ParseValueTree()) return error_;
    if (!has_value_) {
      out->value = Node::String("");
      return Status::Ok();
    }
    return Finish(out);
  }

 private:
  // ---- tokens ----
  const Token& Cur() const { return toks_[pos_]; }
  Tok CurType() const { return toks_[pos_].type; }
  Tok TypeAt(size_t i) const {
    return i < toks_.size() ? toks_[i].type : Tok::kEof;
  }
  Tok NextType() const { return TypeAt(pos_ + 1); }
  std::string_view Text(const Token& t) const {
    return input_.substr(t.begin, t.end - t.begin);
  }
  std::string_view Text(size_t first, size_t last) const {
    if (first >= last) return {};
    return input_.substr(toks_[first].begin,
                         toks_[last - 1].end - toks_[first].begin);
  }
  // ANTLR's quoting of a token in messages.
  std::string Shown(const Token& t) const {
    if (t.type == Tok::kEof) return "'<EOF>'";
    return "'" + Quoted(AntlrDisplay(Text(t))) + "'";
  }
  // A piece of the input quoted in a message: cut when the input is long.
  std::string Quoted(std::string_view text) const {
    return input_.size() > kMaxEcho ? Clip(text) : std::string(text);
  }
  // Where a message should point: the token's first non-blank character.
  size_t PointAt(const Token& t) const {
    size_t p = t.begin;
    while (p < t.end && (input_[p] == ' ' || input_[p] == '\t')) ++p;
    return p < t.end ? p : t.begin;
  }

  // ---- errors ----
  bool Fail(size_t offset, const std::string& what) {
    error_ = Message(offset, what);
    return false;
  }
  // Hydra's "Error parsing override '<input>': <what>" and the caret; for a
  // long input the reason first, and only a window of the input.
  // Hydra's own wording differs by kind (parse_overrides): the bare ANTLR
  // message for a syntax error, "LexerNoViableAltException: <input>" and a
  // caret for a lexer error, this prefix only for errors the visitor
  // raises. We use one form for all, with input, column and caret, so each
  // message says where as well as what (docs/hydra-differences.md).
  Status Message(size_t offset, const std::string& what) const {
    if (input_.size() > kMaxEcho) {
      return Status::InvalidArgument(
          "Error parsing " + label_ + ": " + what + " (in an " + label_ +
          " of " + std::to_string(input_.size()) + " bytes)" +
          CaretWindow(input_, offset));
    }
    return Status::InvalidArgument("Error parsing " + label_ + " '" +
                                   std::string(input_) + "': " + what +
                                   CaretLines(input_, offset));
  }
  std::string At(size_t offset) const {
    return " at column " + std::to_string(ColumnOf(input_, offset));
  }
  // The value as the user should write it to get a string.
  std::string QuoteAdvice() const {
    if (!advice_ || input_.size() > kMaxEcho) {
      return "to use it in a string, quote the value";
    }
    std::string value(input_.substr(value_offset_));
    std::string key(input_.substr(0, value_offset_));
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t'))
      key.pop_back();
    return "to use it in a string, quote the value: " + key +
           RenderString(value);
  }
  bool LexerError(const Token& t) {
    size_t p = t.begin;
    unsigned char c = static_cast<unsigned char>(input_[p]);
    bool in_value = p >= value_offset_ && value_mode_reached_;
    std::string what;
    if ((c == '\'' || c == '"') && in_value) {
      std::string q(1, static_cast<char>(c));
      what =
          "unterminated quoted string" + At(p) +
          " (LexerNoViableAltException); expected a closing " + q +
          " (a backslash just before the closing quote must be doubled: " + q +
          "a\\\\" + q + ")";
    } else {
      std::string shown;
      if (c >= 0x80) {
        size_t n = 1;
        while (p + n < input_.size() &&
               (static_cast<unsigned char>(input_[p + n]) & 0xC0) == 0x80) {
          ++n;
        }
        shown =
            "non-ASCII character '" + std::string(input_.substr(p, n)) + "'";
      } else if (c == ' ' || c == '\t') {
        shown = c == ' ' ? "illegal space" : "illegal tab";
      } else {
        shown =
            "illegal character '" + std::string(1, static_cast<char>(c)) + "'";
      }
      if (in_value) {
        what = shown + At(p) + " (LexerNoViableAltException); " + QuoteAdvice();
      } else if (input_.substr(0, 2) == "--") {
        what = shown + " in the key" + At(p) +
               " (LexerNoViableAltException); an override has no leading '--': "
               "write key=value";
      } else {
        what =
            shown + " in the key" + At(p) +
            " (LexerNoViableAltException); expected a key such as a.b_c-1, $x, "
            "group/sub, group@pkg";
      }
    }
    return Fail(p, what);
  }
  // An unexpected token where `expecting` (ANTLR's words) was expected.
  // ANTLR calls it "extraneous" when dropping it would fix the input.
  // ANTLR's DefaultErrorStrategy: singleTokenDeletion reports "extraneous
  // input" when the token after the bad one is in the expected set,
  // otherwise it is "mismatched input"; the set is printed with
  // IntervalSet.toString(literalNames, symbolicNames), as TokName names.
  bool Unexpected(const std::string& expecting, bool (*acceptable)(Tok),
                  const std::string& hint) {
    const Token& t = Cur();
    if (t.type == Tok::kError) return LexerError(t);
    if (nva_start_ && nva_depth_ > 0) {
      // ANTLR's lookahead for this decision runs on into the lexer error.
      if (toks_.back().type == Tok::kError) return LexerError(toks_.back());
      // Inside the first element of the value, ANTLR's full-context
      // prediction reports the whole span it could not make sense of.
      size_t end = t.type == Tok::kEof ? input_.size() : t.end;
      return Fail(PointAt(t), "no viable alternative at input '" +
                                  Quoted(AntlrDisplay(input_.substr(
                                      *nva_start_, end - *nva_start_))) +
                                  "'" + At(PointAt(t)) + "; expected " + hint);
    }
    if (TypeAt(pos_ + 1) == Tok::kError) return LexerError(toks_[pos_ + 1]);
    bool extraneous = t.type != Tok::kEof && acceptable(TypeAt(pos_ + 1));
    std::string what = std::string(extraneous ? "extraneous" : "mismatched") +
                       " input " + Shown(t) + " expecting " + expecting +
                       At(PointAt(t)) + "; expected " + hint;
    return Fail(PointAt(t), what);
  }

  static bool IsKeyTok(Tok t) {
    return t == Tok::kId || t == Tok::kKeySpecial || t == Tok::kDotPath;
  }
  static bool IsElementStart(Tok t) {
    return IsPrimitiveToken(t) || t == Tok::kQuotedValue ||
           t == Tok::kBracketOpen || t == Tok::kBraceOpen;
  }
  static bool EofOrElement(Tok t) {
    return t == Tok::kEof || IsElementStart(t);
  }

  // ---- override: key part ----
  // override: key EQUAL value? | TILDE key (EQUAL value?)? |
  //           PLUS PLUS? key EQUAL value?   (OverrideParser.g4)
  // so only ~key may end without '=', and at most one prefix is allowed.
  bool ParseOverrideTree(Override* out) {
    if (CurType() == Tok::kError) return LexerError(Cur());
    bool del = false;
    if (CurType() == Tok::kTilde) {
      out->type = OverrideType::kDelete;
      del = true;
      ++pos_;
    } else if (CurType() == Tok::kPlus) {
      out->type = OverrideType::kAdd;
      ++pos_;
      if (CurType() == Tok::kPlus) {
        out->type = OverrideType::kForceAdd;
        ++pos_;
      }
    }
    if (CurType() == Tok::kError) return LexerError(Cur());
    // What ANTLR expects here depends on the prefixes read so far.
    const bool one_plus = out->type == OverrideType::kAdd;
    const char* key_set =
        pos_ == 0  ? "{EQUAL, '~', '+', '@', KEY_SPECIAL, DOT_PATH, ID}"
        : one_plus ? "{EQUAL, '+', '@', KEY_SPECIAL, DOT_PATH, ID}"
                   : "{EQUAL, '@', KEY_SPECIAL, DOT_PATH, ID}";
    Tok t = CurType();
    if (!IsKeyTok(t) && t != Tok::kEqual && t != Tok::kAt &&
        !(del && t == Tok::kEof)) {
      const bool extra_prefix = t == Tok::kPlus || t == Tok::kTilde;
      std::string hint =
          extra_prefix
              ? "a key: only one prefix is allowed (+key=v, ++key=v, ~key)"
              : "a key such as a.b_c-1, $x, group/sub, group@pkg";
      if (del || (extra_prefix && !(one_plus && t == Tok::kTilde))) {
        return Fail(PointAt(Cur()), "no viable alternative at input " +
                                        Shown(Cur()) + At(PointAt(Cur())) +
                                        "; expected " + hint);
      }
      return Unexpected(
          key_set,
          [](Tok t) {
            return IsKeyTok(t) || t == Tok::kEqual || t == Tok::kAt ||
                   t == Tok::kPlus || t == Tok::kTilde;
          },
          hint);
    }
    if (!ParseKey(out, del)) return false;
    if (del && CurType() == Tok::kEof) return true;
    if (CurType() != Tok::kEqual) {
      if (CurType() == Tok::kError) return LexerError(Cur());
      const Token& t = Cur();
      std::string hint = del ? "'=' or the end of the override after the key"
                             : "'=' after the key: key=value (~key deletes it)";
      if (del) {
        return Unexpected(
            "{<EOF>, EQUAL}",
            [](Tok t) { return t == Tok::kEof || t == Tok::kEqual; }, hint);
      }
      // (singleTokenInsertion: "missing EQUAL at ...".)
      // ANTLR inserts the missing '=' when what follows could be a value.
      if (NextType() != Tok::kEqual &&
          (t.type == Tok::kEof || t.type == Tok::kColon ||
           t.type == Tok::kId)) {
        return Fail(PointAt(t), "missing EQUAL at " + Shown(t) +
                                    At(PointAt(t)) + "; expected " + hint);
      }
      return Unexpected(
          "EQUAL", [](Tok t) { return t == Tok::kEqual; }, hint);
    }
    saw_equal_ = true;
    value_offset_ = Cur().end;
    value_mode_reached_ = true;
    ++pos_;
    return ParseValueTree();
  }

  // key: packageOrGroup (AT package)?; packageOrGroup: package |
  // ID (SLASH ID)+. A group path is plain IDs; a package may be empty
  // (db@=x: package '', the _global_ package in the .g4's comment).
  bool ParseKey(Override* out, bool del) {
    size_t start = Cur().begin;
    size_t end = start;
    if (CurType() == Tok::kId && NextType() == Tok::kSlash) {
      end = Cur().end;
      ++pos_;
      while (CurType() == Tok::kSlash) {
        ++pos_;
        if (CurType() != Tok::kId) {
          const char* hint =
              "a group name after '/' (letters, digits, '_', '-')";
          Tok t = CurType();
          if (t == Tok::kError) return LexerError(Cur());
          if (NextType() != Tok::kId &&
              (t == Tok::kEqual || t == Tok::kAt || t == Tok::kSlash ||
               (del && t == Tok::kEof))) {
            return Fail(PointAt(Cur()), "missing ID at " + Shown(Cur()) +
                                            At(PointAt(Cur())) + "; expected " +
                                            hint);
          }
          return Unexpected(
              "ID", [](Tok t) { return t == Tok::kId; }, hint);
        }
        end = Cur().end;
        ++pos_;
      }
    } else if (IsKeyTok(CurType())) {
      end = Cur().end;
      ++pos_;
    }
    out->key_or_group = std::string(input_.substr(start, end - start));
    if (CurType() == Tok::kAt) {
      ++pos_;
      std::string package;
      if (IsKeyTok(CurType())) {
        package = std::string(Text(Cur()));
        ++pos_;
      }
      out->package = package;
    }
    return true;
  }

  // ---- value ----
  // value: element | simpleChoiceSweep, simpleChoiceSweep: element (COMMA
  // element)+; visitSimpleChoiceSweep makes a,b a ChoiceSweep with
  // simple_form. ANTLR must read past the first element to choose between
  // the two, so an error inside it is "no viable alternative" over the span
  // from its start (Hydra 1.3.2: a=[1,2 gives "...at input '[1,2'"):
  // nva_start_ marks that span.
  bool ParseValueTree() {
    if (CurType() == Tok::kEof) return true;  // "key=" is ""
    if (CurType() == Tok::kError) return LexerError(Cur());
    if (!IsElementStart(CurType())) {
      return Unexpected(
          "{<EOF>, a value}", EofOrElement,
          "a value: a string, number, [list], {dict} or function(...); " +
              QuoteAdvice());
    }
    has_value_ = true;
    nva_start_ = Cur().begin;
    elements_.emplace_back();
    if (!ParseElement(&elements_.back())) return false;
    nva_start_.reset();
    while (CurType() == Tok::kComma) {
      ++pos_;
      if (!IsElementStart(CurType())) {
        return Unexpected(
            "a value", IsElementStart,
            "a value after ',' (a,b is a sweep; " + QuoteAdvice() + ")");
      }
      elements_.emplace_back();
      if (!ParseElement(&elements_.back())) return false;
    }
    if (CurType() != Tok::kEof) {
      std::string hint = "the end of the override";
      Tok t = CurType();
      if (t == Tok::kEqual) {
        hint +=
            " ('=' may appear only once, after the key; " + QuoteAdvice() + ")";
      } else {
        hint += " (" + QuoteAdvice() + ")";
      }
      return Unexpected(
          "<EOF>", [](Tok t) { return t == Tok::kEof; }, hint);
    }
    return true;
  }

  // element: primitive | listContainer | dictContainer | function. An ID
  // before POPEN is a call (POPEN takes blanks before: "int (1)" is one).
  // primitive is QUOTED_VALUE alone, or a greedy run of the other tokens,
  // so x:y and "2 3" are single strings and 'x'y is a syntax error.
  bool ParseElement(Ast* out) {
    out->first = pos_;
    Tok t = CurType();
    if (t == Tok::kBracketOpen) return ParseList(out);
    if (t == Tok::kBraceOpen) return ParseDict(out);
    if (t == Tok::kId && NextType() == Tok::kPopen) return ParseFunction(out);
    if (t == Tok::kQuotedValue) {
      out->kind = Ast::kPrimitive;
      out->last = ++pos_;
      return true;
    }
    if (IsPrimitiveToken(t)) {
      while (IsPrimitiveToken(CurType())) ++pos_;
      out->kind = Ast::kPrimitive;
      out->last = pos_;
      return true;
    }
    return Unexpected(
        "a value", IsElementStart,
        "a value: a string, number, [list], {dict} or function(...)");
  }

  // Parses ", element" repetitions up to `close`.
  bool ParseSequence(Ast* out, Tok close, const char* close_text, bool dict,
                     bool args) {
    // Each level recurses once; a bound keeps hostile input (one argv item
    // of 10,000 '[') from overflowing the stack.
    if (++depth_ > kMaxOverrideNesting) {
      return Fail(PointAt(Cur()),
                  "nesting deeper than " + std::to_string(kMaxOverrideNesting) +
                      " levels of lists, dicts and function calls" +
                      At(PointAt(Cur())) + "; expected a flatter value");
    }
    ++nva_depth_;
    ++pos_;  // the opening token
    if (CurType() != close) {
      for (;;) {
        if (args) {
          // argName: ID EQUAL. Its order against positional arguments is
          // checked when evaluating, as visitFunction does.
          if (CurType() == Tok::kId && NextType() == Tok::kEqual) {
            out->arg_names.emplace_back(Text(Cur()));
            pos_ += 2;
          } else {
            out->arg_names.emplace_back();
          }
        }
        if (dict && !ParseDictKey(out)) return false;
        out->children.emplace_back();
        if (!ParseElement(&out->children.back())) return false;
        if (CurType() == Tok::kComma) {
          ++pos_;
          continue;
        }
        if (CurType() == close) break;
        return Unexpected(
            std::string("{COMMA, ") + close_text + "}",
            [](Tok) { return false; },
            std::string("',' or '") + close_text + "'");
      }
    }
    ++pos_;
    out->last = pos_;
    --nva_depth_;
    --depth_;
    return true;
  }

  bool ParseList(Ast* out) {
    out->kind = Ast::kList;
    return ParseSequence(out, Tok::kBracketClose, "]", false, false);
  }
  bool ParseDict(Ast* out) {
    out->kind = Ast::kDict;
    return ParseSequence(out, Tok::kBraceClose, "}", true, false);
  }
  bool ParseFunction(Ast* out) {
    out->kind = Ast::kFunction;
    ++pos_;  // the name; ParseSequence skips '('
    return ParseSequence(out, Tok::kPclose, ")", false, true);
  }

  // dictKeyValuePair: dictKey COLON element.
  bool ParseDictKey(Ast* out) {
    Ast key;
    key.kind = Ast::kPrimitive;
    key.dict_key = true;
    key.first = pos_;
    while (IsDictKeyToken(CurType())) ++pos_;
    key.last = pos_;
    if (key.first == key.last) {
      return Unexpected(
          "a dict key", [](Tok) { return false; },
          "a dict key: unquoted letters, digits, '_', '-' or escapes "
          "(keys can not be quoted)");
    }
    if (CurType() != Tok::kColon) {
      return Unexpected(
          "':'", [](Tok) { return false; }, "':' after the dict key");
    }
    ++pos_;
    out->children.push_back(std::move(key));
    return true;
  }

  // ---- evaluation ----
  Status EvalFail(size_t offset, const std::string& what) const {
    return Message(offset, what);
  }

  StatusOr<PVal> Eval(const Ast& a) const {
    switch (a.kind) {
      case Ast::kPrimitive:
        return EvalPrimitive(a);
      case Ast::kList: {
        PVal out = PVal::List({});
        for (const Ast& c : a.children) {
          TRIALSHIM_ASSIGN_OR_RETURN(PVal v, Eval(c));
          out.items.push_back(std::move(v));
        }
        return out;
      }
      case Ast::kDict: {
        PVal out;
        out.k = PVal::K::kDict;
        for (size_t i = 0; i + 1 < a.children.size(); i += 2) {
          TRIALSHIM_ASSIGN_OR_RETURN(PVal k, Eval(a.children[i]));
          TRIALSHIM_ASSIGN_OR_RETURN(PVal v, Eval(a.children[i + 1]));
          // dict(pairs): a repeated key keeps its place, takes the new value.
          bool replaced = false;
          for (auto& e : out.entries) {
            if (override_internal::PyEq(e.first, k)) {
              e.second = v;
              replaced = true;
              break;
            }
          }
          if (!replaced) out.entries.emplace_back(std::move(k), std::move(v));
        }
        return out;
      }
      case Ast::kFunction:
        return EvalFunction(a);
    }
    return Status::Internal("bad tree");
  }

  // overrides_visitor.py's _createPrimitive: one blank token is dropped at
  // each end (a primitive of blanks alone is an error), several tokens
  // join into a str with ESC unescaped, and a single token takes its type.
  StatusOr<PVal> EvalPrimitive(const Ast& a) const {
    size_t first = a.first, last = a.last;
    if (toks_[first].type == Tok::kWs) {
      if (last - first == 1) {
        return EvalFail(
            toks_[first].begin,
            "Trying to parse a primitive that is all whitespaces; expected a "
            "value (quote blanks to keep them: ' ')");
      }
      ++first;
    }
    if (toks_[last - 1].type == Tok::kWs) --last;
    if (last - first > 1) {
      // Several tokens make a string; escapes are unescaped.
      std::string s;
      for (size_t i = first; i < last; ++i) {
        std::string_view text = Text(toks_[i]);
        s += toks_[i].type == Tok::kEsc ? Unescape(text) : std::string(text);
      }
      return PVal::Str(std::move(s));
    }
    const Token& t = toks_[first];
    std::string text(Text(t));
    switch (t.type) {
      case Tok::kQuotedValue: {
        PVal q;
        q.k = PVal::K::kQuoted;
        q.quote = text[0];
        q.s = UnquoteText(text);
        return q;
      }
      case Tok::kInt: {
        // Python's int() grows a big int; ours stops at 64 bits, the most a
        // config Node holds, and says so rather than wrapping.
        StatusOr<int64_t> i = override_internal::PyParseInt(text);
        if (!i.ok()) {
          return EvalFail(
              t.begin, "integer " + text +
                           " does not fit in 64 bits; expected an integer from "
                           "-2^63 to 2^63-1 (quote it to keep it as a string)");
        }
        return PVal::Int(*i);
      }
      case Tok::kFloat: {
        StatusOr<double> f = override_internal::PyParseFloat(text);
        if (!f.ok()) return EvalFail(t.begin, f.status().message());
        return PVal::Float(*f);
      }
      case Tok::kNull:
        return PVal::Null();
      case Tok::kBool:
        // (BOOL matched only true or false, in any case.)
        return PVal::Bool(text[0] == 't' || text[0] == 'T');
      case Tok::kEsc:
        return PVal::Str(Unescape(text));
      default:
        return PVal::Str(std::move(text));
    }
  }

  // visitFunction: arguments are evaluated in order, a positional one after
  // a keyword one is an error, and an exception becomes "<Type> while
  // evaluating '<ctx.getText()>'". No rule skips a token, so the input span
  // is exactly ctx.getText(). The did-you-mean list is our addition.
  StatusOr<PVal> EvalFunction(const Ast& a) const {
    std::string name(Text(toks_[a.first]));
    std::string call_text = Quoted(Text(a.first, a.last));
    std::vector<PVal> args;
    std::vector<std::pair<std::string, PVal>> kwargs;
    for (size_t i = 0; i < a.children.size(); ++i) {
      const std::string& arg_name = a.arg_names[i];
      if (arg_name.empty() && !kwargs.empty()) {
        return EvalFail(
            toks_[a.children[i].first].begin,
            "positional argument follows keyword argument in '" + call_text +
                "'; expected name=value or positional arguments first");
      }
      TRIALSHIM_ASSIGN_OR_RETURN(PVal v, Eval(a.children[i]));
      if (arg_name.empty()) {
        args.push_back(std::move(v));
      } else {
        kwargs.emplace_back(arg_name, std::move(v));
      }
    }
    StatusOr<PVal> r = CallFunction(name, std::move(args), std::move(kwargs));
    if (r.ok()) return r;
    // "<ExceptionType>: <message>" -> Hydra's "<Type> while evaluating ...".
    const std::string& m = r.status().message();
    size_t colon = m.find(": ");
    std::string type =
        colon == std::string::npos ? "Error" : m.substr(0, colon);
    std::string msg = colon == std::string::npos ? m : m.substr(colon + 2);
    if (type == "AssertionError" && msg.empty()) {
      msg = "(" + name + "() does not accept an argument of this type)";
    }
    if (msg.rfind("Unknown function", 0) == 0) {
      std::string available;
      for (const std::string& f : FunctionNames()) {
        available += (available.empty() ? "" : ",") + f;
      }
      msg += DidYouMean(name, FunctionNames()) + "; available: " + available;
    }
    return EvalFail(toks_[a.first].begin,
                    type + " while evaluating '" + call_text + "': " + msg);
  }

  // Evaluates the parsed elements into out->value and value_kind.
  // visitOverride's value_type: SIMPLE_CHOICE_SWEEP for a,b, CHOICE_SWEEP,
  // RANGE_SWEEP, INTERVAL_SWEEP, GLOB_CHOICE_SWEEP, else ELEMENT. Sweeps
  // are enumerated here, as Override.sweep_iterator would.
  Status Finish(Override* out) {
    PVal value;
    if (elements_.size() == 1) {
      TRIALSHIM_ASSIGN_OR_RETURN(value, Eval(elements_[0]));
    } else {
      value.k = PVal::K::kChoice;
      value.simple_form = true;
      for (const Ast& e : elements_) {
        TRIALSHIM_ASSIGN_OR_RETURN(PVal v, Eval(e));
        value.items.push_back(std::move(v));
      }
    }
    size_t where = toks_.empty() ? 0 : toks_[elements_[0].first].begin;
    Node node;
    SweepDetail& sweep = out->sweep;
    sweep.tags = value.tags;
    sweep.shuffle = value.shuffle;
    switch (value.k) {
      case PVal::K::kChoice:
      case PVal::K::kRange: {
        out->value_kind = value.k == PVal::K::kRange ? ValueKind::kRangeSweep
                          : value.simple_form ? ValueKind::kSimpleChoiceSweep
                                              : ValueKind::kChoiceSweep;
        StatusOr<std::vector<PVal>> items = EnumerateSweep(value);
        if (!items.ok()) return EvalFail(where, items.status().message());
        Node::List list;
        for (const PVal& item : *items) {
          StatusOr<Node> n = ToNode(item);
          if (!n.ok()) return EvalFail(where, n.status().message());
          list.push_back(*n);
          bool primitive = item.is_number() || item.k == PVal::K::kStr;
          sweep.items.push_back({std::move(*n), HydraStr(item), primitive});
        }
        node = Node::MakeList(std::move(list));
        if (value.k == PVal::K::kRange) {
          TRIALSHIM_RETURN_IF_ERROR(Bounds(value, where, &sweep.bounds));
        }
        break;
      }
      case PVal::K::kInterval:
        out->value_kind = ValueKind::kIntervalSweep;
        TRIALSHIM_RETURN_IF_ERROR(Bounds(value, where, &sweep.bounds));
        break;
      case PVal::K::kGlob: {
        out->value_kind = ValueKind::kGlob;
        for (const PVal& p : value.include) sweep.include.push_back(p.s);
        for (const PVal& p : value.exclude) sweep.exclude.push_back(p.s);
        break;
      }
      default: {
        StatusOr<Node> n = ToNode(value);
        if (!n.ok()) return EvalFail(where, n.status().message());
        node = std::move(*n);
        out->value_text = HydraStr(value);
      }
    }
    out->value = std::move(node);
    return Status::Ok();
  }

  // A range's or interval's bounds as nodes.
  Status Bounds(const PVal& value, size_t where, std::vector<Node>* bounds) {
    for (const PVal& b : value.items) {
      StatusOr<Node> n = ToNode(b);
      if (!n.ok()) return EvalFail(where, n.status().message());
      bounds->push_back(std::move(*n));
    }
    return Status::Ok();
  }

  std::string_view input_;
  std::string label_;
  size_t value_offset_ = 0;  // where the value text starts
  bool value_mode_reached_ = true;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  Status error_;
  bool saw_equal_ = false;
  bool has_value_ = false;
  std::vector<Ast> elements_;  // the value's elements (several for a,b)
  std::optional<size_t> nva_start_;
  int nva_depth_ = 0;
  int depth_ = 0;  // open lists, dicts and function calls
  // Quoting advice renders the value, and the renderer parses: the
  // renderer's own parses go without advice.
  bool advice_ = true;

 public:
  void set_key_mode() { value_mode_reached_ = false; }
  void set_no_advice() { advice_ = false; }
};

}  // namespace

StatusOr<Override> ParseOverride(std::string_view text) {
  Override out;
  out.input = std::string(text);
  Parser parser(text, "override", 0);
  parser.set_key_mode();
  Status s = parser.ParseOverrideText(&out);
  if (!s.ok()) return Status::InvalidArgument(s.message() + "\n" + kGrammarUrl);
  // Ambiguity (a,b without -m) is the caller's check (compose.cc), as
  // Hydra makes it in config_loader_impl.py, not in the parser.
  if (!out.value) out.value_text = "null";  // "~key": Hydra's value is None
  // The value goes into the config, where OmegaConf checks its
  // interpolations (Hydra: "Error merging override"). A deletion's value is
  // only compared, and a sweep is refused before anything is merged.
  if (out.type != OverrideType::kDelete && !out.is_sweep()) {
    Status st = CheckInterpolationSyntax(*out.value, out.key_or_group);
    if (!st.ok()) {
      return Status::InvalidArgument("Error merging override " +
                                     Echo(out.input) + "\n" + st.message());
    }
  }
  return out;
}

namespace {

StatusOr<Node> ParseValue(std::string_view text, bool advice) {
  // As after "key=": the lexer's EQUAL token swallows the blanks after '='.
  size_t start = 0;
  while (start < text.size() && (text[start] == ' ' || text[start] == '\t'))
    ++start;
  Override out;
  Parser parser(text, "override value", start);
  if (!advice) parser.set_no_advice();
  Status s = parser.ParseValueText(&out);
  if (!s.ok()) return Status::InvalidArgument(s.message() + "\n" + kGrammarUrl);
  if (out.is_sweep()) {
    if (!advice) return Status::InvalidArgument("a sweep");
    std::string quoted = text.size() > kMaxEcho
                             ? std::string("quote the value")
                             : "quote the value: " +
                                   RenderString(text.substr(start));
    // config_loader_impl.py's message for a SIMPLE_CHOICE_SWEEP in RUN
    // mode, with the user's own value quoted in place of key='value1,...'.
    return Status::InvalidArgument(
        "Ambiguous value '" + Echo(text) +
        "': it is a sweep, but a single value was expected\n"
        "1. To use it as a list, use [value1,value2]\n"
        "2. To use it as string, " + quoted +
        "\n3. To sweep over it, add --multirun to your command line");
  }
  return std::move(*out.value);
}

}  // namespace

StatusOr<Node> ParseOverrideValue(std::string_view text) {
  return ParseValue(text, true);
}

namespace override_internal {
StatusOr<Node> ParseValueQuietly(std::string_view text) {
  return ParseValue(text, false);
}
}  // namespace override_internal

}  // namespace trialshim::config
