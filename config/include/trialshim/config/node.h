// Node: the typed configuration tree every part of trialshim works on.
//
// A Node is null, a bool, a 64-bit int, a double, a string, a list of Nodes or
// an ordered map from string keys to Nodes (insertion order is kept, as
// OmegaConf keeps it). Scalars carry the type OmegaConf would give them; the
// YAML loader and the override parser decide those types, never the tree.
//
// Strings are stored as written: "${a.b}" is an unresolved interpolation and
// "???" is OmegaConf's missing value; resolution (interpolation.h) gives them
// meaning. Each node may carry the Mark of the text it came from so that
// errors can say file:line:col.
//
// Nodes are values: copying one copies the subtree. Not thread-safe for
// concurrent mutation; concurrent reads are fine.
#ifndef TRIALSHIM_CONFIG_NODE_H_
#define TRIALSHIM_CONFIG_NODE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trialshim::config {

// Where a node came from. line and column are 1-based; line 0 means unknown.
struct Mark {
  std::shared_ptr<const std::string> file;  // null when not from a file
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  // "file:line:col", "line:col" without a file, or "" when unknown.
  std::string ToString() const;
};

class Node {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kList, kMap };
  using List = std::vector<Node>;
  using Map = std::vector<std::pair<std::string, Node>>;

  Node() = default;  // null
  static Node Null() { return Node(); }
  static Node Bool(bool v);
  static Node Int(int64_t v);
  static Node Double(double v);
  static Node String(std::string v);
  static Node MakeList(List items = {});
  static Node MakeMap(Map entries = {});

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_int() const { return type_ == Type::kInt; }
  bool is_double() const { return type_ == Type::kDouble; }
  bool is_number() const { return is_int() || is_double(); }
  bool is_string() const { return type_ == Type::kString; }
  bool is_list() const { return type_ == Type::kList; }
  bool is_map() const { return type_ == Type::kMap; }
  bool is_scalar() const { return !is_list() && !is_map(); }
  // The string "???" (OmegaConf's mandatory-missing value).
  bool IsMissing() const;
  // A string containing an unescaped "${" (resolved lazily by interpolation.h).
  bool IsInterpolation() const;

  // Accessors; calling the wrong one for the type is a bug (asserted) and
  // returns a default value in release builds.
  bool AsBool() const;
  int64_t AsInt() const;
  double AsDouble() const;  // ints convert
  const std::string& AsString() const;
  const List& AsList() const;
  List& MutableList();
  const Map& AsMap() const;
  Map& MutableMap();
  size_t size() const;  // children of a list or map, else 0

  // Map helpers. Get returns nullptr when this is not a map or has no `key`.
  const Node* Get(std::string_view key) const;
  Node* GetMutable(std::string_view key);
  // Replaces the value of `key` in place (keeping its position) or appends.
  // A non-map node becomes an empty map first.
  void Set(std::string_view key, Node value);
  bool Erase(std::string_view key);
  // Keys of a map in order (empty for other types).
  std::vector<std::string> Keys() const;

  // Follows a dotted path ("a.b.0.c"; list items by index, also "a[0]").
  // Returns nullptr if any step is missing. "" is this node.
  const Node* Find(std::string_view path) const;
  Node* FindMutable(std::string_view path);

  const Mark& mark() const { return mark_; }
  void set_mark(Mark m) { mark_ = std::move(m); }
  // Where the key of this node was written, when the node is the value of a
  // map entry read from a file (mark()'s file); unknown otherwise. An error
  // about the key ("unknown field") points here: a map value's own mark is
  // its first entry, on the next line.
  Mark key_mark() const { return {mark_.file, key_line_, key_column_}; }
  void set_key_mark(const Mark& m) {
    key_line_ = m.line;
    key_column_ = m.column;
  }
  // key_mark() when known, else mark().
  Mark KeyOrValueMark() const {
    return key_line_ > 0 ? key_mark() : mark_;
  }

  // Structural equality with exact types: Int(1) != Double(1.0); NaN equals
  // NaN (so a round trip of nan compares equal). Marks are ignored.
  bool operator==(const Node& other) const;
  bool operator!=(const Node& other) const { return !(*this == other); }

  // "null", "bool", "int", "float", "str", "list", "dict" (Python's names,
  // as users see them in Hydra's messages).
  static const char* TypeName(Type t);
  const char* type_name() const { return TypeName(type_); }

  // Total number of nodes in this subtree, this one included.
  size_t CountNodes() const;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  int key_line_ = 0;  // key_mark(), in mark_'s file
  int key_column_ = 0;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  List list_;
  Map map_;
  Mark mark_;
};

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_NODE_H_
