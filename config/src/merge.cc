#include "merge.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "trialshim/base/number_format.h"

namespace trialshim::config::internal {
namespace {

bool IsContainer(const Node& n) { return n.is_list() || n.is_map(); }

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::vector<std::string_view> SplitDots(std::string_view key) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

// A list index as Python's int() reads a key segment; -1 if it is not one.
long ParseIndex(std::string_view s) {
  if (s.empty() || s.size() > 18) return -1;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

Status KindMismatch(const Node& dest, const std::string& path) {
  return Status::InvalidArgument(
      std::string("cannot merge a ") + (dest.is_map() ? "list" : "dict") +
      " into the " + dest.type_name() + " at '" + path +
      "' (OmegaConf: Cannot merge DictConfig with ListConfig)");
}

// The child `seg` of container `n` (nullptr if absent); `index_error` is set
// when `n` is a list and `seg` is not a valid index.
Node* Child(Node* n, std::string_view seg, std::string* index_error) {
  if (n->is_map()) return n->GetMutable(seg);
  long i = ParseIndex(seg);
  if (i < 0) {
    *index_error =
        "list indices must be integers, not '" + std::string(seg) + "'";
    return nullptr;
  }
  if (static_cast<size_t>(i) >= n->size()) {
    *index_error = "list index " + std::string(seg) + " out of range (size " +
                   std::to_string(n->size()) + ")";
    return nullptr;
  }
  return &n->MutableList()[static_cast<size_t>(i)];
}


void CollectKeys(const Node& n, const std::string& path,
                 std::vector<std::string>* out) {
  if (!n.is_map()) return;
  for (const auto& [k, child] : n.AsMap()) {
    std::string full = Join(path, k);
    out->push_back(full);
    CollectKeys(child, full, out);
  }
}

}  // namespace

Status MergeInto(Node* dest, const Node& src, bool struct_mode,
                 const std::string& path) {
  if (dest->is_list() && src.is_list()) {
    *dest = src;  // lists replace
    return Status::Ok();
  }
  if (!dest->is_map() || !src.is_map()) {
    if (IsContainer(*dest) && IsContainer(src))
      return KindMismatch(*dest, path);
    *dest = src;
    return Status::Ok();
  }
  for (const auto& [key, value] : src.AsMap()) {
    std::string full = Join(path, key);
    Node* existing = dest->GetMutable(key);
    if (existing == nullptr) {
      if (struct_mode) return Status::NotFound(full);
      dest->Set(key, value);
      continue;
    }
    // A "???" from a later config never erases a value set earlier.
    if (value.IsMissing()) continue;
    if (IsContainer(*existing) && IsContainer(value)) {
      if (existing->type() != value.type()) {
        return KindMismatch(*existing, full);
      }
      TRIALSHIM_RETURN_IF_ERROR(MergeInto(existing, value, struct_mode, full));
      continue;
    }
    Mark mark = existing->mark();
    *existing = value;
    if (!value.mark().known()) existing->set_mark(std::move(mark));
  }
  return Status::Ok();
}

Status UpdateKey(Node* cfg, std::string_view key, const Node& value,
                 bool force_add) {
  const bool struct_mode = !force_add;
  std::vector<std::string_view> parts = SplitDots(key);
  Node* root = cfg;
  std::string path;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string_view seg = parts[i];
    path = Join(path, seg);
    std::string index_error;
    Node* next = Child(root, seg, &index_error);
    if (!index_error.empty()) {
      return Status::InvalidArgument(index_error + " at '" + path + "'");
    }
    if (next != nullptr && IsContainer(*next)) {
      root = next;
      continue;
    }
    // OmegaConf replaces a missing or scalar step by an empty map; in
    // struct mode only an existing key may be replaced.
    if (next == nullptr) {
      if (struct_mode) return Status::NotFound(path);
      root->Set(seg, Node::MakeMap());
      root = root->GetMutable(seg);
    } else {
      // In struct mode the new empty map refuses the next key anyway;
      // fail before touching the config.
      if (struct_mode) return Status::NotFound(Join(path, parts[i + 1]));
      *next = Node::MakeMap();
      root = next;
    }
  }
  std::string_view last = parts.back();
  std::string full = Join(path, last);
  std::string index_error;
  Node* existing = Child(root, last, &index_error);
  if (!index_error.empty()) {
    return Status::InvalidArgument(index_error + " at '" + full + "'");
  }
  if (existing != nullptr && IsContainer(*existing) && IsContainer(value)) {
    if (existing->type() != value.type()) return KindMismatch(*existing, full);
    return MergeInto(existing, value, struct_mode, full);
  }
  if (existing != nullptr) {
    *existing = value;
    return Status::Ok();
  }
  if (struct_mode) return Status::NotFound(full);
  root->Set(last, value);
  return Status::Ok();
}

const Node* SelectKey(const Node& cfg, std::string_view key) {
  const Node* n = &cfg;
  for (std::string_view seg : SplitDots(key)) {
    if (n->is_map()) {
      n = n->Get(seg);
    } else if (n->is_list()) {
      long i = ParseIndex(seg);
      if (i < 0 || static_cast<size_t>(i) >= n->size()) return nullptr;
      n = &n->AsList()[static_cast<size_t>(i)];
    } else {
      return nullptr;
    }
    if (n == nullptr) return nullptr;
  }
  return n;
}

bool DeleteKey(Node* cfg, std::string_view key) {
  size_t dot = key.rfind('.');
  Node* parent = cfg;
  std::string_view last = key;
  if (dot != std::string_view::npos) {
    parent = const_cast<Node*>(SelectKey(*cfg, key.substr(0, dot)));
    last = key.substr(dot + 1);
    if (parent == nullptr) return false;
  }
  if (!parent->is_map()) return false;
  return parent->Erase(last);
}

std::vector<std::string> DottedKeys(const Node& cfg) {
  std::vector<std::string> keys;
  CollectKeys(cfg, "", &keys);
  return keys;
}


bool PythonEquals(const Node& a, const Node& b) {
  auto numeric = [](const Node& n) {
    return n.is_bool() || n.is_int() || n.is_double();
  };
  if (numeric(a) && numeric(b)) {
    auto as_double = [](const Node& n) {
      return n.is_bool() ? (n.AsBool() ? 1.0 : 0.0) : n.AsDouble();
    };
    if (a.is_double() || b.is_double()) return as_double(a) == as_double(b);
    auto as_int = [](const Node& n) {
      return n.is_bool() ? (n.AsBool() ? 1 : 0) : n.AsInt();
    };
    return as_int(a) == as_int(b);
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Node::Type::kNull:
      return true;
    case Node::Type::kString:
      return a.AsString() == b.AsString();
    case Node::Type::kList:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!PythonEquals(a.AsList()[i], b.AsList()[i])) return false;
      }
      return true;
    case Node::Type::kMap:
      if (a.size() != b.size()) return false;
      for (const auto& [k, v] : a.AsMap()) {
        const Node* other = b.Get(k);
        if (other == nullptr || !PythonEquals(v, *other)) return false;
      }
      return true;
    default:
      return false;
  }
}

}  // namespace trialshim::config::internal
