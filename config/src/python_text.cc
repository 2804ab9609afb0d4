#include "python_text.h"

#include "trialshim/base/number_format.h"

namespace trialshim::config::internal {

std::string PythonStringRepr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  static const char kHex[] = "0123456789abcdef";
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

std::string PythonStr(const Node& v) {
  switch (v.type()) {
    case Node::Type::kNull:
      return "None";
    case Node::Type::kBool:
      return v.AsBool() ? "True" : "False";
    case Node::Type::kInt:
      return std::to_string(v.AsInt());
    case Node::Type::kDouble:
      return FormatPythonFloat(v.AsDouble());
    case Node::Type::kString:
      return v.AsString();
    case Node::Type::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        out += PythonRepr(v.AsList()[i]);
      }
      return out + "]";
    }
    case Node::Type::kMap: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, child] : v.AsMap()) {
        if (!first) out += ", ";
        first = false;
        out += PythonStringRepr(k) + ": " + PythonRepr(child);
      }
      return out + "}";
    }
  }
  return "";
}

std::string PythonRepr(const Node& v) {
  return v.is_string() ? PythonStringRepr(v.AsString()) : PythonStr(v);
}

}  // namespace trialshim::config::internal
