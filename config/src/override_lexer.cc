// Hydra 1.3.2's hydra/grammar/OverrideLexer.g4 rule by rule: one matcher
// per rule, named after it, and Lex() trying a mode's rules in the .g4's
// order. Every rule was checked against the .g4 at the v1.3.2 tag.
#include "override_lexer.h"

#include <string_view>
#include <vector>

namespace trialshim::config::override_internal {
namespace {

constexpr size_t kNo = std::string_view::npos;  // "rule does not match"

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Each matcher returns the end of the longest match starting at p, or kNo.
class Matcher {
 public:
  explicit Matcher(std::string_view s) : s_(s) {}

  char At(size_t p) const { return p < s_.size() ? s_[p] : '\0'; }

  // WS: [ \t]+
  size_t Ws(size_t p) const {
    size_t q = p;
    while (q < s_.size() && IsBlank(s_[q])) ++q;
    return q == p ? kNo : q;
  }
  size_t OptWs(size_t p) const {
    size_t q = Ws(p);
    return q == kNo ? p : q;
  }
  // (('_')? DIGIT)*
  // An '_' only between two digits: the rule Python's own literals follow
  // (PEP 515), which is why overrides_visitor.py's _createPrimitive can hand
  // an INT or FLOAT token's text straight to int() and float().
  size_t DigitTail(size_t p) const {
    for (;;) {
      if (IsDigit(At(p))) {
        ++p;
      } else if (At(p) == '_' && IsDigit(At(p + 1))) {
        p += 2;
      } else {
        return p;
      }
    }
  }
  // INT_UNSIGNED: '0' | [1-9] (('_')? DIGIT)*
  // No leading zeros: "01" lexes as INT 0, INT 1, and two tokens make a str,
  // so Hydra 1.3.2 reads a=01 as '01', not 1.
  size_t IntUnsigned(size_t p) const {
    if (At(p) == '0') return p + 1;
    if (At(p) >= '1' && At(p) <= '9') return DigitTail(p + 1);
    return kNo;
  }
  // POINT_FLOAT: INT_UNSIGNED '.' | INT_UNSIGNED? '.' DIGIT (('_')? DIGIT)*
  // "1." needs its integer part, ".5" does not. Taking IntUnsigned's longest
  // match loses nothing: a shorter one is followed by a digit or '_', never
  // by the '.', so ANTLR's exploring every length finds the same token.
  size_t PointFloat(size_t p) const {
    size_t best = kNo;
    size_t u = IntUnsigned(p);
    size_t dot = u == kNo ? p : u;
    if (At(dot) == '.') {
      if (u != kNo) best = dot + 1;
      if (IsDigit(At(dot + 1))) best = DigitTail(dot + 2);
    }
    return best;
  }
  // EXPONENT_FLOAT: (INT_UNSIGNED | POINT_FLOAT) [eE] [+-]? DIGIT (('_')?
  // DIGIT)*
  // The exponent needs a digit: "0.1e" is FLOAT 0.1 and ID e, which Hydra
  // joins into the str '0.1e'.
  size_t ExponentFloat(size_t p) const {
    size_t best = kNo;
    for (size_t base : {IntUnsigned(p), PointFloat(p)}) {
      if (base == kNo || (At(base) != 'e' && At(base) != 'E')) continue;
      size_t q = base + 1;
      if (At(q) == '+' || At(q) == '-') ++q;
      if (!IsDigit(At(q))) continue;
      q = DigitTail(q + 1);
      if (best == kNo || q > best) best = q;
    }
    return best;
  }
  bool WordAt(size_t p, std::string_view word) const {
    if (p + word.size() > s_.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      char c = s_[p + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != word[i]) return false;
    }
    return true;
  }
  // FLOAT: [+-]? (POINT_FLOAT | EXPONENT_FLOAT | inf | nan), any case.
  // inf and nan tie with ID on "inf"/"nan" and win as FLOAT is listed first
  // (Pick); "infinity" is a longer ID, so a str. Python's float() accepts
  // them in any case, as the token allows.
  size_t Float(size_t p) const {
    size_t q = (At(p) == '+' || At(p) == '-') ? p + 1 : p;
    size_t best = kNo;
    for (size_t e : {PointFloat(q), ExponentFloat(q)}) {
      if (e != kNo && (best == kNo || e > best)) best = e;
    }
    if (best == kNo && (WordAt(q, "inf") || WordAt(q, "nan"))) best = q + 3;
    return best;
  }
  // INT: [+-]? INT_UNSIGNED
  size_t Int(size_t p) const {
    size_t q = (At(p) == '+' || At(p) == '-') ? p + 1 : p;
    return IntUnsigned(q);
  }
  size_t Word(size_t p, std::string_view w) const {
    return WordAt(p, w) ? p + w.size() : kNo;
  }
  // ID: (CHAR|'_') (CHAR|DIGIT|'_'|'-')*; KEY_SPECIAL also allows '$'.
  // KEY_SPECIAL exists in KEY mode only ("same as ID but allowing $" in the
  // .g4): in a value, $x is UNQUOTED_CHAR '$' and ID x, a str all the same.
  size_t Id(size_t p, bool dollar) const {
    auto first = [&](char c) {
      return IsAlpha(c) || c == '_' || (dollar && c == '$');
    };
    if (!first(At(p))) return kNo;
    ++p;
    while (first(At(p)) || IsDigit(At(p)) || At(p) == '-') ++p;
    return p;
  }
  // DOT_PATH: (KEY_SPECIAL | INT_UNSIGNED) ('.' (KEY_SPECIAL | INT_UNSIGNED))+
  // Number segments address list items (a.0.b). The '+' wants two segments:
  // a lone name is ID or KEY_SPECIAL, and "a." matches neither, so the
  // dangling '.' is a lexer error in the key, as in Hydra.
  size_t DotPath(size_t p) const {
    auto segment = [&](size_t q) {
      size_t e = Id(q, /*dollar=*/true);
      return e != kNo ? e : IntUnsigned(q);
    };
    size_t e = segment(p);
    if (e == kNo) return kNo;
    int segments = 1;
    while (At(e) == '.') {
      size_t next = segment(e + 1);
      if (next == kNo) break;
      e = next;
      ++segments;
    }
    return segments >= 2 ? e : kNo;
  }
  // ESC: a run of backslash pairs that Hydra unescapes.
  // The set is the .g4's ESC, which must equal `_ESC` in
  // hydra/_internal/grammar/utils.py (the .g4 says so), the characters
  // escape_special_characters writes back (override_value.cc). A backslash
  // before anything else is not ESC but UNQUOTED_CHAR '\': a=\x is '\x'.
  size_t Esc(size_t p) const {
    size_t q = p;
    while (At(q) == '\\' && q + 1 < s_.size()) {
      char c = s_[q + 1];
      if (std::string_view("\\()[]{}:=, \t").find(c) == std::string_view::npos)
        break;
      q += 2;
    }
    return q == p ? kNo : q;
  }
  // QUOTED_VALUE: the first matching quote preceded by an even number of
  // backslashes closes the string (the grammar's non-greedy loop).
  // An unclosed quote matches nothing, and no other rule starts with a
  // quote: Hydra reports it as LexerNoViableAltException.
  size_t Quoted(size_t p) const {
    char q = At(p);
    if (q != '\'' && q != '"') return kNo;
    size_t backslashes = 0;
    for (size_t i = p + 1; i < s_.size(); ++i) {
      if (s_[i] == q && backslashes % 2 == 0) return i + 1;
      backslashes = s_[i] == '\\' ? backslashes + 1 : 0;
    }
    return kNo;
  }
  // INTERPOLATION: '${' ~('}')+ '}'
  // The first '}' ends it, so nesting does not lex: ${x.${y}} is the token
  // "${x.${y}" and a stray '}' (Hydra 1.3.2: "extraneous input '}'
  // expecting <EOF>"). OmegaConf's own grammar checks the text later.
  size_t Interpolation(size_t p) const {
    if (At(p) != '$' || At(p + 1) != '{') return kNo;
    size_t close = s_.find('}', p + 2);
    if (close == std::string_view::npos || close == p + 2) return kNo;
    return close + 1;
  }
  // WS? <c> and WS? <c> WS?
  // The .g4 folds blanks into punctuation (POPEN: WS? '(' WS?, "to allow
  // `func (x)`"), which is how blanks around ',' ':' '=' never reach a
  // primitive: '[' and '{' take them after only, ')' ']' '}' before only.
  size_t Punct(size_t p, char c, bool ws_before, bool ws_after) const {
    size_t q = ws_before ? OptWs(p) : p;
    if (At(q) != c) return kNo;
    return ws_after ? OptWs(q + 1) : q + 1;
  }

 private:
  std::string_view s_;
};

struct Candidate {
  Tok type;
  size_t end;
};

// Longest match; on a tie the rule listed first (as in the .g4) wins.
// This tie rule is what makes true, null and inf keywords, not IDs: BOOL,
// NULL and FLOAT come before ID in VALUE_MODE.
Tok Pick(std::initializer_list<Candidate> rules, size_t p, size_t* end) {
  Tok best = Tok::kError;
  size_t best_end = p;
  for (const Candidate& c : rules) {
    if (c.end != kNo && c.end > best_end) {
      best = c.type;
      best_end = c.end;
    }
  }
  *end = best_end;
  return best;
}

}  // namespace

std::vector<Token> Lex(std::string_view input, bool value_mode) {
  Matcher m(input);
  std::vector<Token> out;
  size_t p = 0;
  while (p < input.size()) {
    size_t end = p;
    Tok t;
    if (!value_mode) {
      // DEFAULT_MODE (the key) has no WS rule, so a blank in a key is a
      // lexer error (Hydra: LexerNoViableAltException on "a b=1"). KEY_ID
      // is ID retyped and listed before KEY_SPECIAL, so a plain name stays
      // an ID, which packageOrGroup's ID (SLASH ID)+ needs.
      t = Pick({{Tok::kEqual, m.Punct(p, '=', false, true)},
                {Tok::kTilde, m.Punct(p, '~', false, false)},
                {Tok::kPlus, m.Punct(p, '+', false, false)},
                {Tok::kAt, m.Punct(p, '@', false, false)},
                {Tok::kColon, m.Punct(p, ':', false, false)},
                {Tok::kSlash, m.Punct(p, '/', false, false)},
                {Tok::kId, m.Id(p, false)},
                {Tok::kKeySpecial, m.Id(p, true)},
                {Tok::kDotPath, m.DotPath(p)}},
               p, &end);
      // EQUAL's `-> mode(VALUE_MODE)`: only the first '=' ends the key.
      if (t == Tok::kEqual) value_mode = true;
    } else {
      char c = input[p];
      size_t unquoted =
          std::string_view("/-\\+.$%*@?|").find(c) != std::string_view::npos
              ? p + 1
              : kNo;
      // VALUE_MODE in the .g4's order. VALUE_COLON and VALUE_EQUAL are
      // retyped COLON and EQUAL (`-> type(...)`), hence kColon and kEqual.
      t = Pick(
          {{Tok::kPopen, m.Punct(p, '(', true, true)},
           {Tok::kComma, m.Punct(p, ',', true, true)},
           {Tok::kPclose, m.Punct(p, ')', true, false)},
           {Tok::kBracketOpen, m.Punct(p, '[', false, true)},
           {Tok::kBracketClose, m.Punct(p, ']', true, false)},
           {Tok::kBraceOpen, m.Punct(p, '{', false, true)},
           {Tok::kBraceClose, m.Punct(p, '}', true, false)},
           {Tok::kColon, m.Punct(p, ':', true, true)},
           {Tok::kEqual, m.Punct(p, '=', true, true)},
           {Tok::kFloat, m.Float(p)},
           {Tok::kInt, m.Int(p)},
           {Tok::kBool, m.Word(p, "true") != kNo ? p + 4 : m.Word(p, "false")},
           {Tok::kNull, m.Word(p, "null")},
           {Tok::kUnquotedChar, unquoted},
           {Tok::kId, m.Id(p, false)},
           {Tok::kEsc, m.Esc(p)},
           {Tok::kWs, m.Ws(p)},
           {Tok::kQuotedValue, m.Quoted(p)},
           {Tok::kInterpolation, m.Interpolation(p)}},
          p, &end);
    }
    // Hydra's HydraErrorListener (overrides_visitor.py) raises on the first
    // syntaxError, the lexer's included, so nothing after it matters.
    if (t == Tok::kError) {
      out.push_back({Tok::kError, p, p + 1});
      return out;
    }
    out.push_back({t, p, end});
    p = end;
  }
  out.push_back({Tok::kEof, input.size(), input.size()});
  return out;
}

// As ANTLR's IntervalSet.elementName: a rule that is one literal shows as
// that literal ('~'), any other by its symbolic name (EQUAL is '=' WS?).
// VALUE_COLON is typed COLON, so ':' is "':'" in both modes.
const char* TokName(Tok t) {
  switch (t) {
    case Tok::kEqual:
      return "EQUAL";
    case Tok::kTilde:
      return "'~'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kAt:
      return "'@'";
    case Tok::kColon:
      return "':'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kId:
      return "ID";
    case Tok::kKeySpecial:
      return "KEY_SPECIAL";
    case Tok::kDotPath:
      return "DOT_PATH";
    case Tok::kPopen:
      return "POPEN";
    case Tok::kComma:
      return "COMMA";
    case Tok::kPclose:
      return "PCLOSE";
    case Tok::kBracketOpen:
      return "BRACKET_OPEN";
    case Tok::kBracketClose:
      return "BRACKET_CLOSE";
    case Tok::kBraceOpen:
      return "BRACE_OPEN";
    case Tok::kBraceClose:
      return "BRACE_CLOSE";
    case Tok::kFloat:
      return "FLOAT";
    case Tok::kInt:
      return "INT";
    case Tok::kBool:
      return "BOOL";
    case Tok::kNull:
      return "NULL";
    case Tok::kUnquotedChar:
      return "UNQUOTED_CHAR";
    case Tok::kEsc:
      return "ESC";
    case Tok::kWs:
      return "WS";
    case Tok::kQuotedValue:
      return "QUOTED_VALUE";
    case Tok::kInterpolation:
      return "INTERPOLATION";
    case Tok::kError:
      return "<error>";
    case Tok::kEof:
      return "<EOF>";
  }
  return "?";
}

// OverrideParser.g4's dictKey: primitive's tokens less COLON (the first ':'
// ends the key) and INTERPOLATION. QUOTED_VALUE is in neither set:
// primitive takes it only alone, and dictKey not at all, so Hydra 1.3.2
// refuses {'k':1} ("no viable alternative").
bool IsDictKeyToken(Tok t) {
  switch (t) {
    case Tok::kId:
    case Tok::kNull:
    case Tok::kInt:
    case Tok::kFloat:
    case Tok::kBool:
    case Tok::kUnquotedChar:
    case Tok::kEsc:
    case Tok::kWs:
      return true;
    default:
      return false;
  }
}

bool IsPrimitiveToken(Tok t) {
  return IsDictKeyToken(t) || t == Tok::kInterpolation || t == Tok::kColon;
}

}  // namespace trialshim::config::override_internal
