#include "typed_value.h"

#include <cctype>
#include <optional>
#include <utility>

#include "trialshim/base/python_number.h"
#include "trialshim/config/python_text.h"
#include "trialshim/config/typed_value.h"

namespace trialshim::config {
namespace {

using internal::OmegaTypeName;

Node WithMark(Node n, const Node& from) {
  n.set_mark(from.mark());
  return n;
}

// BooleanNode: text Python's int() reads counts as that int, else the words
// (lower-cased, not stripped).
std::optional<bool> BoolFromText(const std::string& text) {
  if (StatusOr<std::string> i = PythonIntText(text); i.ok()) return *i != "0";
  std::string s = text;
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  if (s == "y" || s == "yes" || s == "on" || s == "true") return true;
  if (s == "n" || s == "no" || s == "off" || s == "false") return false;
  return std::nullopt;
}

std::string NotConverted(const Node& v, const char* to) {
  return "Value '" + PythonStr(v) + "' of type '" + OmegaTypeName(v) +
         "' could not be converted to " + to;
}

StatusOr<Node> ToStr(const Node& v) {
  if (v.is_string()) return v;
  if (!v.is_scalar()) {
    return Status::InvalidArgument("Cannot convert '" + OmegaTypeName(v) +
                                   "' to string: '" + PythonStr(v) + "'");
  }
  return WithMark(Node::String(PythonStr(v)), v);
}

StatusOr<Node> ToInt(const Node& v) {
  if (v.is_int()) return v;
  if (!v.is_string()) return Status::InvalidArgument(NotConverted(v, "Integer"));
  StatusOr<std::optional<int64_t>> i = ParsePythonInt(v.AsString());
  if (!i.ok()) return Status::InvalidArgument(NotConverted(v, "Integer"));
  if (!i->has_value()) {
    return Status::InvalidArgument("Value '" + v.AsString() +
                                   "' does not fit in a 64-bit int");
  }
  return WithMark(Node::Int(**i), v);
}

StatusOr<Node> ToFloat(const Node& v) {
  if (v.is_double()) return v;
  if (v.is_int()) {
    return WithMark(Node::Double(static_cast<double>(v.AsInt())), v);
  }
  if (v.is_string()) {
    StatusOr<double> f = ParsePythonFloat(v.AsString());
    if (f.ok()) return WithMark(Node::Double(*f), v);
  }
  return Status::InvalidArgument(NotConverted(v, "Float"));
}

StatusOr<Node> ToBool(const Node& v) {
  if (v.is_bool()) return v;
  std::optional<bool> value;
  if (v.is_int()) value = v.AsInt() != 0;
  if (v.is_string()) value = BoolFromText(v.AsString());
  if (!value) {
    return Status::InvalidArgument("Value '" + PythonStr(v) +
                                   "' is not a valid bool (type " +
                                   PythonTypeName(v) + ")");
  }
  return WithMark(Node::Bool(*value), v);
}

}  // namespace

const char* ScalarKindName(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::kStr:
      return "str";
    case ScalarKind::kInt:
      return "int";
    case ScalarKind::kFloat:
      return "float";
    case ScalarKind::kBool:
      return "bool";
  }
  return "?";
}

StatusOr<Node> ConvertScalar(const Node& v, ScalarKind kind) {
  if (v.is_null()) {
    return Status::InvalidArgument(
        std::string("Incompatible value 'None' for field of type '") +
        ScalarKindName(kind) + "'");
  }
  switch (kind) {
    case ScalarKind::kStr:
      return ToStr(v);
    case ScalarKind::kInt:
      return ToInt(v);
    case ScalarKind::kFloat:
      return ToFloat(v);
    case ScalarKind::kBool:
      return ToBool(v);
  }
  return v;
}

namespace internal {

std::string OmegaTypeName(const Node& v) {
  if (v.is_list()) return "ListConfig";
  if (v.is_map()) return "DictConfig";
  return PythonTypeName(v);
}

std::string NotAMapMessage(const Node& v, const std::string& dict_type) {
  if (v.is_list()) {
    return "Invalid type assigned: list is not a subclass of " + dict_type +
           ". value: " + PythonStr(v);
  }
  return "Cannot assign " + PythonTypeName(v) + " to " + dict_type;
}

}  // namespace internal

StatusOr<Node> ConvertLike(const Node& like, const Node& v) {
  if (v.is_null()) return v;
  switch (like.type()) {
    case Node::Type::kInt:
      return ConvertScalar(v, ScalarKind::kInt);
    case Node::Type::kDouble:
      return ConvertScalar(v, ScalarKind::kFloat);
    case Node::Type::kBool:
      return ConvertScalar(v, ScalarKind::kBool);
    case Node::Type::kString:
      return ConvertScalar(v, ScalarKind::kStr);
    default:
      return v;
  }
}

}  // namespace trialshim::config
