// The renderer proves each choice with the parser: a string is left bare
// only when ParseOverrideValue reads the bare text back as that very string,
// so the two can not drift apart.
#include "trialshim/config/render.h"

#include <string>
#include <string_view>

#include "override_value.h"
#include "trialshim/base/number_format.h"
#include "trialshim/config/interpolation.h"

namespace trialshim::config {
namespace {

// Hydra's QUOTED_VALUE encoding: backslashes directly before a quote of
// the same kind (or before the closing quote) are doubled and the quote is
// escaped; every other character, backslashes included, is literal.
std::string QuoteWith(std::string_view s, char q) {
  std::string out(1, q);
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && s[j] == '\\') ++j;
    size_t run = j - i;
    if (j == s.size()) {
      out.append(2 * run, '\\');  // before the closing quote
      break;
    }
    if (s[j] == q) {
      out.append(2 * run + 1, '\\');
      out += q;
    } else {
      out.append(run, '\\');
      out += s[j];
    }
    i = j + 1;
  }
  out += q;
  return out;
}

// Single quotes unless only the value's own single quotes would need
// escapes. Hydra keeps an override's text in hydra.overrides.task, where
// OmegaConf parses it: a quote escaped inside ${...} is refused there, so
// the other quote is taken where it spares the interpolation its escapes.
std::string Quote(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out = QuoteWith(s, q);
  if (s.find("${") == std::string_view::npos ||
      CheckInterpolationSyntax(Node::String(out)).ok()) {
    return out;
  }
  std::string other = QuoteWith(s, q == '"' ? '\'' : '"');
  return CheckInterpolationSyntax(Node::String(other)).ok() ? other : out;
}

bool ReadsBackAs(const std::string& text, const Node& want) {
  StatusOr<Node> got = override_internal::ParseValueQuietly(text);
  return got.ok() && *got == want;
}

// The characters Hydra's ESC token unescapes.
std::string EscapeSpecials(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\()[]{}:=, \t").find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

// Dict keys can not be quoted: bare, or with ESC escapes. Some keys have no
// spelling at all ("True" always reads as the bool key "true", "" and
// non-ASCII can not be written); those get the escaped form, best effort.
std::string RenderKey(const std::string& key) {
  for (const std::string& candidate : {key, EscapeSpecials(key)}) {
    if (candidate.empty()) continue;
    StatusOr<Node> got =
        override_internal::ParseValueQuietly("{" + candidate + ":0}");
    if (got.ok() && got->is_map() && got->size() == 1 &&
        got->AsMap()[0].first == key) {
      return candidate;
    }
  }
  return EscapeSpecials(key);
}

std::string RenderStringIn(std::string_view s, bool in_container) {
  if (s.empty()) return "''";
  std::string bare(s);
  // Inside [..] or {..} a trailing backslash would escape the ',' ']' or
  // '}' that follows it.
  if (in_container && bare.back() == '\\') return Quote(s);
  if (ReadsBackAs(bare, Node::String(bare))) return bare;
  return Quote(s);
}

std::string RenderIn(const Node& value, bool in_container);

}  // namespace

std::string RenderString(std::string_view s) {
  return RenderStringIn(s, false);
}

std::string RenderValue(const Node& value) { return RenderIn(value, false); }

namespace {

std::string RenderIn(const Node& value, bool in_container) {
  switch (value.type()) {
    case Node::Type::kNull:
      return "null";
    case Node::Type::kBool:
      return value.AsBool() ? "true" : "false";
    case Node::Type::kInt:
      return std::to_string(value.AsInt());
    case Node::Type::kDouble:
      // Python's repr: "0.1", "1e-05", "inf", "nan" all read back as floats.
      return FormatPythonFloat(value.AsDouble());
    case Node::Type::kString:
      return RenderStringIn(value.AsString(), in_container);
    case Node::Type::kList: {
      std::string out = "[";
      for (const Node& item : value.AsList()) {
        if (out.size() > 1) out += ',';
        out += RenderIn(item, true);
      }
      return out + "]";
    }
    case Node::Type::kMap: {
      std::string out = "{";
      for (const auto& [k, v] : value.AsMap()) {
        if (out.size() > 1) out += ',';
        out += RenderKey(k) + ":" + RenderIn(v, true);
      }
      return out + "}";
    }
  }
  return "null";
}

}  // namespace
}  // namespace trialshim::config
