#include "trialshim/config/node.h"

#include <cassert>
#include <cmath>
#include <cstdlib>

namespace trialshim::config {

std::string Mark::ToString() const {
  if (!known()) return file ? *file : "";
  std::string where = std::to_string(line) + ":" + std::to_string(column);
  return file ? *file + ":" + where : where;
}

Node Node::Bool(bool v) {
  Node n;
  n.type_ = Type::kBool;
  n.bool_ = v;
  return n;
}
Node Node::Int(int64_t v) {
  Node n;
  n.type_ = Type::kInt;
  n.int_ = v;
  return n;
}
Node Node::Double(double v) {
  Node n;
  n.type_ = Type::kDouble;
  n.double_ = v;
  return n;
}
Node Node::String(std::string v) {
  Node n;
  n.type_ = Type::kString;
  n.string_ = std::move(v);
  return n;
}
Node Node::MakeList(List items) {
  Node n;
  n.type_ = Type::kList;
  n.list_ = std::move(items);
  return n;
}
Node Node::MakeMap(Map entries) {
  Node n;
  n.type_ = Type::kMap;
  n.map_ = std::move(entries);
  return n;
}

bool Node::IsMissing() const { return is_string() && string_ == "???"; }

bool Node::IsInterpolation() const {
  if (!is_string()) return false;
  for (size_t i = 0; i + 1 < string_.size(); ++i) {
    if (string_[i] == '\\') {
      ++i;  // an escaped character can not start "${"
      continue;
    }
    if (string_[i] == '$' && string_[i + 1] == '{') return true;
  }
  return false;
}

bool Node::AsBool() const {
  assert(is_bool());
  return bool_;
}
int64_t Node::AsInt() const {
  assert(is_int());
  return int_;
}
double Node::AsDouble() const {
  assert(is_number());
  return is_int() ? static_cast<double>(int_) : double_;
}
const std::string& Node::AsString() const {
  assert(is_string());
  return string_;
}
const Node::List& Node::AsList() const {
  assert(is_list());
  return list_;
}
Node::List& Node::MutableList() {
  assert(is_list());
  return list_;
}
const Node::Map& Node::AsMap() const {
  assert(is_map());
  return map_;
}
Node::Map& Node::MutableMap() {
  assert(is_map());
  return map_;
}

size_t Node::size() const {
  if (is_list()) return list_.size();
  if (is_map()) return map_.size();
  return 0;
}

const Node* Node::Get(std::string_view key) const {
  if (!is_map()) return nullptr;
  for (const auto& [k, v] : map_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Node* Node::GetMutable(std::string_view key) {
  return const_cast<Node*>(static_cast<const Node*>(this)->Get(key));
}

void Node::Set(std::string_view key, Node value) {
  if (!is_map()) *this = MakeMap();
  if (Node* existing = GetMutable(key)) {
    *existing = std::move(value);
    return;
  }
  map_.emplace_back(std::string(key), std::move(value));
}

bool Node::Erase(std::string_view key) {
  if (!is_map()) return false;
  for (auto it = map_.begin(); it != map_.end(); ++it) {
    if (it->first == key) {
      map_.erase(it);
      return true;
    }
  }
  return false;
}

std::vector<std::string> Node::Keys() const {
  std::vector<std::string> keys;
  if (!is_map()) return keys;
  keys.reserve(map_.size());
  for (const auto& entry : map_) keys.push_back(entry.first);
  return keys;
}

namespace {

// Splits "a.b[0].c" into {"a", "b", "0", "c"}.
std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '.' || path[i] == '[' ||
        path[i] == ']') {
      if (i > start) parts.push_back(path.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

}  // namespace

const Node* Node::Find(std::string_view path) const {
  const Node* cur = this;
  for (std::string_view part : SplitPath(path)) {
    if (cur->is_map()) {
      cur = cur->Get(part);
    } else if (cur->is_list()) {
      char* end = nullptr;
      std::string digits(part);
      long index = std::strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || index < 0 ||
          static_cast<size_t>(index) >= cur->list_.size()) {
        return nullptr;
      }
      cur = &cur->list_[index];
    } else {
      return nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

Node* Node::FindMutable(std::string_view path) {
  return const_cast<Node*>(static_cast<const Node*>(this)->Find(path));
}

bool Node::operator==(const Node& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::kNull:
      return true;
    case Type::kBool:
      return bool_ == other.bool_;
    case Type::kInt:
      return int_ == other.int_;
    case Type::kDouble:
      if (std::isnan(double_)) return std::isnan(other.double_);
      return double_ == other.double_;
    case Type::kString:
      return string_ == other.string_;
    case Type::kList:
      return list_ == other.list_;
    case Type::kMap:
      return map_ == other.map_;
  }
  return false;
}

const char* Node::TypeName(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kDouble:
      return "float";
    case Type::kString:
      return "str";
    case Type::kList:
      return "list";
    case Type::kMap:
      return "dict";
  }
  return "?";
}

size_t Node::CountNodes() const {
  size_t n = 1;
  for (const Node& child : list_) n += child.CountNodes();
  for (const auto& entry : map_) n += entry.second.CountNodes();
  return n;
}

}  // namespace trialshim::config
