#include "trialshim/config/python_text.h"

#include "override_value.h"
#include "trialshim/base/number_format.h"

namespace trialshim::config {

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

StatusOr<double> PythonFloat(const Node& v) {
  switch (v.type()) {
    case Node::Type::kBool:
      return v.AsBool() ? 1.0 : 0.0;
    case Node::Type::kInt:
    case Node::Type::kDouble:
      return v.AsDouble();
    case Node::Type::kString:
      return override_internal::PyParseFloat(v.AsString());
    default:
      return Status::InvalidArgument(
          std::string("TypeError: float() argument must be a string or a "
                      "real number, not '") +
          (v.is_null() ? "NoneType" : v.type_name()) + "'");
  }
}

std::string PythonTypeName(const Node& v) {
  if (v.is_list()) return "list";
  if (v.is_map()) return "dict";
  return v.is_null() ? "NoneType" : v.type_name();
}

}  // namespace trialshim::config
