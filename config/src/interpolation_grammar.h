// OmegaConf 2.3's interpolation grammar (OmegaConfGrammarLexer.g4 and
// OmegaConfGrammarParser.g4), parsed by hand into a small tree.
//
// Private to trialshim_config. The lexer modes of the .g4 files become
// functions here: the top-level text ("configValue"), quoted strings, the
// inside of "${...}" and resolver arguments ("VALUE_MODE"). Parsing never
// resolves anything, so a malformed value is refused before any lookup, as
// OmegaConf does. Recursion is bounded (kMaxNesting) so hostile input can not
// overflow the stack.
#ifndef TRIALSHIM_CONFIG_SRC_INTERPOLATION_GRAMMAR_H_
#define TRIALSHIM_CONFIG_SRC_INTERPOLATION_GRAMMAR_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trialshim::config::interp {

constexpr int kMaxNesting = 64;

struct Interpolation;

// One lexer token of a text or a primitive; kInterp holds a nested
// interpolation instead of text.
struct Piece {
  enum Kind {
    kAnyStr,     // literal text
    kEsc,        // "\\", "\(", "\'"...: always unescaped (every 2nd char)
    kEscInter,   // odd backslashes + "${": keeps half the backslashes + "${"
    kTopEsc,     // even backslashes at top level: halved before "${" only
    kQuotedEsc,  // even backslashes in quotes: halved before "${" or the end
    kId,
    kNull,
    kInt,
    kFloat,
    kBool,
    kUnquotedChar,
    kColon,
    kWs,
    kInterp,
  };
  Kind kind = kAnyStr;
  std::string text;
  std::shared_ptr<Interpolation> interp;
};

// A resolver argument, a list item or a dict value.
struct Element {
  enum Kind { kPrimitive, kQuoted, kList, kDict };
  Kind kind = kPrimitive;
  std::vector<Piece> pieces;   // kPrimitive tokens, or kQuoted's text
  std::vector<Element> items;  // kList
  std::vector<std::pair<std::vector<Piece>, Element>> entries;  // kDict
};

// A config key inside "${...}": literal text or a nested interpolation.
struct KeyPart {
  std::string text;
  std::shared_ptr<Interpolation> interp;
};

struct Interpolation {
  bool is_resolver = false;
  // Node interpolations: the key as tokens; ".", "[" and "]" are kept as
  // KeyParts with is_punct set so the dotted key can be rebuilt.
  std::vector<std::pair<bool, KeyPart>> key;  // (is_punct, part)
  // Resolver interpolations.
  std::vector<KeyPart> name;  // "oc", "env"
  std::vector<Element> args;
  std::string source;  // the interpolation's own text, for messages
};

struct ParseError {
  size_t offset = 0;  // where in the input (0-based byte offset)
  std::string message;
};

// configValue: a whole config string. Returns false and fills *error on a
// grammar error.
bool ParseConfigValue(std::string_view input, std::vector<Piece>* out,
                      ParseError* error);

// singleElement in VALUE_MODE, as oc.decode parses its input.
bool ParseSingleElement(std::string_view input, Element* out,
                        ParseError* error);

}  // namespace trialshim::config::interp

#endif  // TRIALSHIM_CONFIG_SRC_INTERPOLATION_GRAMMAR_H_
