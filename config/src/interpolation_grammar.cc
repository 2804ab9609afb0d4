#include "interpolation_grammar.h"

namespace trialshim::config::interp {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsWs(char c) { return c == ' ' || c == '\t'; }

// A quoted copy of what the input holds at `pos`, for messages.
std::string Near(std::string_view s, size_t pos) {
  if (pos >= s.size()) return "end of input";
  std::string_view rest = s.substr(pos, 12);
  return "'" + std::string(rest) + (s.size() - pos > 12 ? "...'" : "'");
}

// The rules quoted below are those of omegaconf/grammar/
// OmegaConfGrammarLexer.g4 and OmegaConfGrammarParser.g4 at omegaconf's tag
// v2.3.0 (the wheel ships only the generated gen/*.py; their ruleNames are
// the same). A lexer mode is a function here; where ANTLR's lexer takes the
// longest token, so does Primitive.
class Parser {
 public:
  Parser(std::string_view s, ParseError* error) : s_(s), error_(error) {}

  // configValue: text EOF. What OmegaConf parses for every string value
  // holding "${" (grammar_parser.parse, lexer in DEFAULT_MODE).
  bool ConfigValue(std::vector<Piece>* out) {
    if (!Text(0, out)) return false;
    if (pos_ != s_.size()) return Fail(pos_, "unexpected " + Near(s_, pos_));
    return true;
  }

  // singleElement: element EOF, in VALUE_MODE: what oc.decode parses
  // (omegaconf/resolvers/oc/__init__.py), so "[1, 2]" decodes to a list.
  bool SingleElement(Element* out) {
    if (!ParseElement(out, /*in_dict_key=*/false)) return false;
    if (pos_ != s_.size()) {
      return Fail(pos_, "unexpected " + Near(s_, pos_) +
                            ", expected the end of the value");
    }
    return true;
  }

 private:
  bool Fail(size_t at, std::string message) {
    error_->offset = at;
    error_->message = std::move(message);
    return false;
  }

  // Our own bound: ANTLR has none, Python's recursion limit stops it.
  bool Deeper() {
    if (++depth_ > kMaxNesting) {
      return Fail(pos_, "interpolations nested more than " +
                            std::to_string(kMaxNesting) + " levels deep");
    }
    return true;
  }

  // DEFAULT_MODE (quote == 0) or QUOTED_*_MODE: text up to the end of input
  // or the closing quote (not consumed).
  bool Text(char quote, std::vector<Piece>* out) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (quote != 0 && c == quote) return true;
      if (c == '$' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '{') {
        Piece p;
        p.kind = Piece::kInterp;
        if (!ParseInterpolation(&p.interp)) return false;
        out->push_back(std::move(p));
        continue;
      }
      // A run of backslashes, lexed as ESC_INTER (odd count before "${":
      // `_unescape` in grammar_visitor.py keeps half of them and the "${"),
      // an escaped quote (QSINGLE_ESC_QUOTE/QDOUBLE_ESC_QUOTE, typed ESC:
      // every second character kept), TOP_ESC/QUOTED_ESC (an even run;
      // `_unescape` halves it only before an interpolation, or at the end
      // of a quoted string, since ANY_STR swallows backslashes elsewhere)
      // and BACKSLASHES, the odd one left, typed ANY_STR and kept as is.
      if (c == '\\') {
        size_t n = 0;
        while (pos_ + n < s_.size() && s_[pos_ + n] == '\\') ++n;
        size_t after = pos_ + n;
        bool inter_follows = s_.compare(after, 2, "${") == 0;
        if (n % 2 == 1 && inter_follows) {  // ESC_INTER
          out->push_back(
              {Piece::kEscInter, std::string(s_.substr(pos_, n + 2)), nullptr});
          pos_ = after + 2;
          continue;
        }
        if (n % 2 == 1 && quote != 0 && after < s_.size() &&
            s_[after] == quote) {  // escaped quote: ESC
          out->push_back(
              {Piece::kEsc, std::string(s_.substr(pos_, n + 1)), nullptr});
          pos_ = after + 1;
          continue;
        }
        size_t even = n - n % 2;
        if (even > 0) {
          out->push_back({quote == 0 ? Piece::kTopEsc : Piece::kQuotedEsc,
                          std::string(even, '\\'), nullptr});
        }
        if (n % 2 == 1) out->push_back({Piece::kAnyStr, "\\", nullptr});
        pos_ = after;
        continue;
      }
      if (c == '$') {
        out->push_back({Piece::kAnyStr, "$", nullptr});
        ++pos_;
        continue;
      }
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] != '\\' && s_[pos_] != '$' &&
             (quote == 0 || s_[pos_] != quote)) {
        ++pos_;
      }
      out->push_back({Piece::kAnyStr,
                      std::string(s_.substr(start, pos_ - start)), nullptr});
    }
    return true;
  }

  void SkipWs() {
    while (pos_ < s_.size() && IsWs(s_[pos_])) ++pos_;
  }

  // Length of an INTER_KEY at pos_: ~[\\{}()[\]:. \t'"]+. OmegaConf's
  // INTER_KEY takes '$' too, and so fails on "${foo${bar}}" at the '{'
  // (token recognition error); stopping before "${" makes it a key then an
  // interpolation, which ValidNodeKey refuses: the same input is refused.
  size_t InterKeyLength() const {
    size_t n = 0;
    while (pos_ + n < s_.size()) {
      char c = s_[pos_ + n];
      if (c == '\\' || c == '{' || c == '}' || c == '(' || c == ')' ||
          c == '[' || c == ']' || c == ':' || c == '.' || c == ' ' ||
          c == '\t' || c == '\'' || c == '"') {
        break;
      }
      // "${" starts a nested interpolation, not part of a key.
      if (c == '$' && pos_ + n + 1 < s_.size() && s_[pos_ + n + 1] == '{') {
        break;
      }
      ++n;
    }
    return n;
  }

  // ID: (CHAR|'_') (CHAR|DIGIT|'_'|'-')*. The '-' is new in 2.3 (2.2
  // refused ${my-res:1}; see docs/hydra-differences.md).
  bool IsId(std::string_view t) const {
    if (t.empty() || !(IsAlpha(t[0]) || t[0] == '_')) return false;
    for (char c : t) {
      if (!(IsAlpha(c) || IsDigit(c) || c == '_' || c == '-')) return false;
    }
    return true;
  }

  // At "${": INTERPOLATION_MODE up to the matching "}". Whitespace is a
  // token only after "${" (INTER_OPEN: '${' WS?) and before ':' or '}'
  // (INTER_COLON, INTER_CLOSE: WS? ...), so "${ a }" is a key and "${a b}"
  // is not. INTER_COLON switches to VALUE_MODE: the arguments are values.
  bool ParseInterpolation(std::shared_ptr<Interpolation>* out) {
    if (!Deeper()) return false;
    size_t start = pos_;
    auto interp = std::make_shared<Interpolation>();
    pos_ += 2;
    SkipWs();
    // Tokens until ':' (a resolver) or '}' (a node).
    std::vector<std::pair<bool, KeyPart>> tokens;
    std::vector<bool> token_is_id;
    while (true) {
      if (pos_ >= s_.size()) {
        return Fail(pos_, "unterminated interpolation '" +
                              std::string(s_.substr(start)) +
                              "', expected '}'");
      }
      size_t ws = pos_;
      while (ws < s_.size() && IsWs(s_[ws])) ++ws;
      if (ws < s_.size() && (s_[ws] == '}' || s_[ws] == ':')) {
        pos_ = ws;
        break;
      }
      if (ws != pos_) {
        return Fail(pos_, "unexpected whitespace in interpolation '" +
                              std::string(s_.substr(start, ws + 1 - start)) +
                              "...', expected '}', ':' or a key");
      }
      char c = s_[pos_];
      if (c == '$' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '{') {
        KeyPart part;
        if (!ParseInterpolation(&part.interp)) return false;
        tokens.push_back({false, std::move(part)});
        token_is_id.push_back(true);  // allowed wherever an ID is
        continue;
      }
      if (c == '.' || c == '[' || c == ']') {
        tokens.push_back({true, KeyPart{std::string(1, c), nullptr}});
        token_is_id.push_back(false);
        ++pos_;
        continue;
      }
      size_t n = InterKeyLength();
      if (n == 0) {
        return Fail(pos_, "unexpected " + Near(s_, pos_) +
                              " in interpolation, expected a key, '.', '[', "
                              "']', ':' or '}'");
      }
      std::string text(s_.substr(pos_, n));
      token_is_id.push_back(IsId(text));
      tokens.push_back({false, KeyPart{std::move(text), nullptr}});
      pos_ += n;
    }
    if (s_[pos_] == '}') {
      ++pos_;
      if (!ValidNodeKey(tokens)) {
        return Fail(start, "invalid interpolation '" +
                               std::string(s_.substr(start, pos_ - start)) +
                               "', expected ${key}, ${a.b}, ${a[0]} or "
                               "${.relative}");
      }
      interp->key = std::move(tokens);
    } else {
      // resolverName: (interpolation | ID) (DOT (interpolation | ID))* ':'
      // An INTER_KEY is no name part: "${a/b:x}" is refused, as there.
      bool ok = !tokens.empty() && tokens.size() % 2 == 1;
      for (size_t i = 0; ok && i < tokens.size(); ++i) {
        if (i % 2 == 1) {
          ok = tokens[i].first && tokens[i].second.text == ".";
        } else {
          ok = !tokens[i].first && token_is_id[i];
        }
      }
      if (!ok) {
        return Fail(start, "invalid resolver name in '" +
                               std::string(s_.substr(start, pos_ + 1 - start)) +
                               "', expected a name like oc.env");
      }
      for (size_t i = 0; i < tokens.size(); i += 2) {
        interp->name.push_back(std::move(tokens[i].second));
      }
      interp->is_resolver = true;
      ++pos_;  // ':'
      SkipWs();
      if (!Sequence('}', &interp->args)) return false;
      if (pos_ >= s_.size() || s_[pos_] != '}') {
        return Fail(pos_, "unterminated resolver call '" +
                              std::string(s_.substr(start)) +
                              "', expected ',' or '}'");
      }
      ++pos_;
    }
    interp->source = std::string(s_.substr(start, pos_ - start));
    *out = std::move(interp);
    --depth_;
    return true;
  }

  // interpolationNode: DOT* (configKey | '[' configKey ']')
  //   (DOT configKey | '[' configKey ']')*
  // The leading dots make a relative key (${..a}); "${a.}" and "${[a}" fail.
  static bool ValidNodeKey(const std::vector<std::pair<bool, KeyPart>>& t) {
    size_t i = 0;
    while (i < t.size() && t[i].first && t[i].second.text == ".") ++i;
    bool first = true;
    if (i == t.size()) return false;
    while (i < t.size()) {
      if (t[i].first && t[i].second.text == "[") {
        if (i + 2 >= t.size() || t[i + 1].first || !t[i + 2].first ||
            t[i + 2].second.text != "]") {
          return false;
        }
        i += 3;
      } else if (first && !t[i].first) {
        i += 1;
      } else if (!first && t[i].first && t[i].second.text == "." &&
                 i + 1 < t.size() && !t[i + 1].first) {
        i += 2;
      } else {
        return false;
      }
      first = false;
    }
    return true;
  }

  // ---- VALUE_MODE -------------------------------------------------------

  // The length of WS? `c` WS? style tokens; 0 if not at one. COMMA and
  // COLON absorb the whitespace on both sides, BRACE_CLOSE and
  // BRACKET_CLOSE the one before: "${f: a b ,x}" passes "a b" and "x".
  size_t PunctLength(char c, bool ws_before, bool ws_after) const {
    size_t p = pos_;
    if (ws_before) {
      while (p < s_.size() && IsWs(s_[p])) ++p;
    }
    if (p >= s_.size() || s_[p] != c) return 0;
    ++p;
    if (ws_after) {
      while (p < s_.size() && IsWs(s_[p])) ++p;
    }
    return p - pos_;
  }
  bool AtComma() const { return PunctLength(',', true, true) > 0; }
  bool AtClose(char close) const { return PunctLength(close, true, false) > 0; }
  void EatClose(char close) { pos_ += PunctLength(close, true, false); }

  // sequence? up to `close` ('}' or ']'), not consumed.
  // sequence: (element (COMMA element?)*) | (COMMA element?)+. A missing
  // element (",,", a leading or trailing ",") is "", as visitSequence in
  // grammar_visitor.py yields it; OmegaConf 2.3 also warns that this is
  // deprecated, we do not (docs/hydra-differences.md).
  bool Sequence(char close, std::vector<Element>* out) {
    if (AtClose(close)) {
      pos_ += PunctLength(close, true, false) - 1;  // leave `close`
      return true;
    }
    bool expect_element = true;
    while (true) {
      if (expect_element) {
        Element e;
        if (AtComma() || AtClose(close)) {
          e.kind = Element::kPrimitive;  // empty: ""
        } else if (!ParseElement(&e, false)) {
          return false;
        }
        out->push_back(std::move(e));
        expect_element = false;
        continue;
      }
      if (AtComma()) {
        pos_ += PunctLength(',', true, true);
        expect_element = true;
        continue;
      }
      if (AtClose(close)) {
        pos_ += PunctLength(close, true, false) - 1;  // leave `close`
        return true;
      }
      if (pos_ >= s_.size()) {
        return Fail(pos_, std::string("unexpected end of input, expected ',' "
                                      "or '") +
                              close + "'");
      }
      return Fail(pos_, "unexpected " + Near(s_, pos_) + ", expected ',' or '" +
                            std::string(1, close) + "'");
    }
  }

  // element: primitive | quotedValue | listContainer | dictContainer.
  // A quote or bracket opens one only at the start of an element; a dict
  // key is a `dictKey` (a primitive without COLON, interpolations and
  // quotes), so "{${x}:1}" is refused, as OmegaConf refuses it.
  bool ParseElement(Element* out, bool in_dict_key) {
    if (pos_ >= s_.size()) {
      return Fail(pos_, "unexpected end of input, expected a value");
    }
    char c = s_[pos_];
    if (!in_dict_key && (c == '\'' || c == '"')) {
      if (!Deeper()) return false;
      size_t start = pos_;
      ++pos_;
      out->kind = Element::kQuoted;
      if (!Text(c, &out->pieces)) return false;
      if (pos_ >= s_.size()) {
        return Fail(start, "unterminated quoted string " + Near(s_, start) +
                               ", expected the closing " + std::string(1, c));
      }
      ++pos_;
      --depth_;
      return true;
    }
    if (!in_dict_key && c == '[') {
      if (!Deeper()) return false;
      ++pos_;
      SkipWs();
      out->kind = Element::kList;
      if (!Sequence(']', &out->items)) return false;
      if (pos_ >= s_.size() || s_[pos_] != ']') {
        return Fail(pos_, "unexpected end of input, expected ']'");
      }
      ++pos_;
      --depth_;
      return true;
    }
    if (!in_dict_key && c == '{' && !(pos_ > 0 && s_[pos_ - 1] == '$')) {
      if (!Deeper()) return false;
      ++pos_;
      SkipWs();
      out->kind = Element::kDict;
      if (AtClose('}')) {
        EatClose('}');
        --depth_;
        return true;
      }
      while (true) {
        Element key;
        if (!Primitive(&key.pieces, /*dict_key=*/true)) return false;
        if (key.pieces.empty()) {
          return Fail(pos_,
                      "unexpected " + Near(s_, pos_) + ", expected a dict key");
        }
        size_t colon = PunctLength(':', true, true);
        if (colon == 0) {
          return Fail(pos_, "unexpected " + Near(s_, pos_) +
                                ", expected ':' after a dict key");
        }
        pos_ += colon;
        Element value;
        if (!ParseElement(&value, false)) return false;
        out->entries.push_back({std::move(key.pieces), std::move(value)});
        if (AtComma()) {
          pos_ += PunctLength(',', true, true);
          continue;
        }
        if (AtClose('}')) {
          EatClose('}');
          --depth_;
          return true;
        }
        return Fail(pos_,
                    "unexpected " + Near(s_, pos_) + ", expected ',' or '}'");
      }
    }
    out->kind = Element::kPrimitive;
    if (!Primitive(&out->pieces, in_dict_key)) return false;
    if (out->pieces.empty()) {
      return Fail(pos_, "unexpected " + Near(s_, pos_) + ", expected a value");
    }
    return true;
  }

  // INT_UNSIGNED: '0' | [1-9] ('_'? DIGIT)*
  size_t IntUnsigned(size_t p) const {
    if (p >= s_.size() || !IsDigit(s_[p])) return 0;
    if (s_[p] == '0') return 1;
    return 1 + DigitTail(p + 1);
  }
  // ('_'? DIGIT)*
  size_t DigitTail(size_t p) const {
    size_t q = p;
    while (q < s_.size()) {
      if (IsDigit(s_[q])) {
        ++q;
      } else if (s_[q] == '_' && q + 1 < s_.size() && IsDigit(s_[q + 1])) {
        q += 2;
      } else {
        break;
      }
    }
    return q - p;
  }
  // DIGIT ('_'? DIGIT)*
  size_t Digits(size_t p) const {
    if (p >= s_.size() || !IsDigit(s_[p])) return 0;
    return 1 + DigitTail(p + 1);
  }

  // FLOAT: [+-]? (POINT_FLOAT | EXPONENT_FLOAT | inf | nan), inf and nan in
  // any case. POINT_FLOAT: INT_UNSIGNED '.' | INT_UNSIGNED? '.' DIGIT
  // ('_'? DIGIT)*; EXPONENT_FLOAT: (INT_UNSIGNED | POINT_FLOAT) [eE] [+-]?
  // DIGIT ('_'? DIGIT)*. So "1." and ".5" are floats, "1_0" is an INT.
  size_t FloatLength() const {
    size_t p = pos_;
    if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
    size_t best = 0;
    auto word = [&](const char* w) {
      for (size_t i = 0; i < 3; ++i) {
        if (p + i >= s_.size() || (s_[p + i] | 0x20) != w[i]) return false;
      }
      return true;
    };
    if (word("inf") || word("nan")) best = p + 3 - pos_;
    size_t iu = IntUnsigned(p);
    std::vector<size_t> bases;  // ends of mantissas (POINT_FLOAT or INT)
    if (iu > 0 && p + iu < s_.size() && s_[p + iu] == '.') {
      size_t end = p + iu + 1;
      bases.push_back(end);
      best = std::max(best, end - pos_);
      size_t d = Digits(end);
      if (d > 0) {
        bases.push_back(end + d);
        best = std::max(best, end + d - pos_);
      }
    } else if (iu == 0 && p < s_.size() && s_[p] == '.') {
      size_t d = Digits(p + 1);
      if (d > 0) {
        bases.push_back(p + 1 + d);
        best = std::max(best, p + 1 + d - pos_);
      }
    }
    if (iu > 0) bases.push_back(p + iu);
    for (size_t b : bases) {
      if (b < s_.size() && (s_[b] == 'e' || s_[b] == 'E')) {
        size_t q = b + 1;
        if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
        size_t d = Digits(q);
        if (d > 0) best = std::max(best, q + d - pos_);
      }
    }
    return best;
  }

  // INT: [+-]? INT_UNSIGNED.
  size_t IntLength() const {
    size_t p = pos_;
    if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
    size_t iu = IntUnsigned(p);
    return iu == 0 ? 0 : p + iu - pos_;
  }

  size_t WordLength(const char* w) const {
    size_t n = std::char_traits<char>::length(w);
    for (size_t i = 0; i < n; ++i) {
      if (pos_ + i >= s_.size() || (s_[pos_ + i] | 0x20) != w[i]) return 0;
    }
    return n;
  }

  size_t IdLength() const {
    if (pos_ >= s_.size() || !(IsAlpha(s_[pos_]) || s_[pos_] == '_')) return 0;
    size_t q = pos_ + 1;
    while (q < s_.size() &&
           (IsAlpha(s_[q]) || IsDigit(s_[q]) || s_[q] == '_' || s_[q] == '-')) {
      ++q;
    }
    return q - pos_;
  }

  // ESC: ('\\\\' | '\\(' | '\\)' | '\\[' | '\\]' | '\\{' | '\\}' | '\\:' |
  //       '\\=' | '\\,' | '\\ ' | '\\\t')+: a pair keeps its second character.
  size_t EscLength() const {
    size_t q = pos_;
    while (q + 1 < s_.size() && s_[q] == '\\' &&
           std::string_view("\\()[]{}:=, \t").find(s_[q + 1]) !=
               std::string_view::npos) {
      q += 2;
    }
    return q - pos_;
  }

  // primitive (or dictKey): tokens until a structural token.
  bool Primitive(std::vector<Piece>* out, bool dict_key) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '$' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '{') {
        if (dict_key) {
          return Fail(pos_, "interpolations are not allowed in dict keys");
        }
        Piece p;
        p.kind = Piece::kInterp;
        if (!ParseInterpolation(&p.interp)) return false;
        out->push_back(std::move(p));
        continue;
      }
      // Structural tokens end the primitive (they absorb whitespace).
      if (AtComma() || AtClose('}') || AtClose(']')) return true;
      size_t colon = PunctLength(':', true, true);
      if (colon > 0) {
        if (dict_key) return true;
        out->push_back(
            {Piece::kColon, std::string(s_.substr(pos_, colon)), nullptr});
        pos_ += colon;
        continue;
      }
      if (c == '\'' || c == '"' || c == '[' || c == '{') {
        if (out->empty()) return true;  // the caller's element decides
        return Fail(pos_, "unexpected " + Near(s_, pos_) +
                              ": quote a value that mixes text with quotes "
                              "or brackets");
      }
      // Longest match; ties go to the earlier lexer rule, in the .g4's
      // VALUE_MODE order below: "inf" is a FLOAT, "true" a BOOL, not IDs.
      // UNQUOTED_CHAR: [/\-\\+.$%*@?|].
      struct Cand {
        Piece::Kind kind;
        size_t len;
      };
      size_t unq =
          std::string_view("/-\\+.$%*@?|").find(c) != std::string_view::npos
              ? 1
              : 0;
      size_t ws = 0;
      while (pos_ + ws < s_.size() && IsWs(s_[pos_ + ws])) ++ws;
      const Cand cands[] = {
          {Piece::kFloat, FloatLength()},
          {Piece::kInt, IntLength()},
          {Piece::kBool, std::max(WordLength("true"), WordLength("false"))},
          {Piece::kNull, WordLength("null")},
          {Piece::kUnquotedChar, unq},
          {Piece::kId, IdLength()},
          {Piece::kEsc, EscLength()},
          {Piece::kWs, ws},
      };
      Cand best{Piece::kAnyStr, 0};
      for (const Cand& cand : cands) {
        if (cand.len > best.len) best = cand;
      }
      // No VALUE_MODE token starts with it ('#', '=', '!'...): OmegaConf's
      // "token recognition error at: '#'".
      if (best.len == 0) {
        return Fail(pos_, "unexpected character " +
                              Near(s_, pos_).substr(0, 2) +
                              "' in a resolver argument: quote the value");
      }
      out->push_back(
          {best.kind, std::string(s_.substr(pos_, best.len)), nullptr});
      pos_ += best.len;
    }
    return true;
  }

  std::string_view s_;
  ParseError* error_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

bool ParseConfigValue(std::string_view input, std::vector<Piece>* out,
                      ParseError* error) {
  return Parser(input, error).ConfigValue(out);
}

bool ParseSingleElement(std::string_view input, Element* out,
                        ParseError* error) {
  return Parser(input, error).SingleElement(out);
}

}  // namespace trialshim::config::interp
