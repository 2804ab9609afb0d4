// The override lexer: Hydra 1.3's OverrideLexer.g4 by hand.
//
// ANTLR's lexer picks, at each position, the rule with the longest match
// (the first rule on a tie); QUOTED_VALUE's non-greedy loop stops at the
// first closing quote preceded by an even number of backslashes. There are
// two modes: KEY mode until the first '=' (plus the blanks after it), VALUE
// mode after it. Private to the config library.
#ifndef TRIALSHIM_CONFIG_SRC_OVERRIDE_LEXER_H_
#define TRIALSHIM_CONFIG_SRC_OVERRIDE_LEXER_H_

#include <cstddef>
#include <string_view>
#include <vector>

namespace trialshim::config::override_internal {

enum class Tok {
  // KEY mode.
  kEqual,  // '=' WS?   (VALUE mode: WS? '=' WS?)
  kTilde,
  kPlus,
  kAt,
  kColon,  // ':'       (VALUE mode: WS? ':' WS?)
  kSlash,
  kId,
  kKeySpecial,
  kDotPath,
  // VALUE mode.
  kPopen,
  kComma,
  kPclose,
  kBracketOpen,
  kBracketClose,
  kBraceOpen,
  kBraceClose,
  kFloat,
  kInt,
  kBool,
  kNull,
  kUnquotedChar,
  kEsc,
  kWs,
  kQuotedValue,
  kInterpolation,
  // No rule matched at `begin` (ANTLR's LexerNoViableAltException); the
  // token stream ends here.
  kError,
  kEof,
};

struct Token {
  Tok type;
  size_t begin;  // byte offsets into the input
  size_t end;
};

// Tokenizes `input` (starting in VALUE mode when `value_mode`). The result
// always ends with a kEof or a kError token.
std::vector<Token> Lex(std::string_view input, bool value_mode);

// ANTLR's display name of a token type ("'='", "ID", "<EOF>").
const char* TokName(Tok t);

// Can this token be part of a primitive / a dict key?
bool IsPrimitiveToken(Tok t);
bool IsDictKeyToken(Tok t);

}  // namespace trialshim::config::override_internal

#endif  // TRIALSHIM_CONFIG_SRC_OVERRIDE_LEXER_H_
