#include "node_read.h"

#include <algorithm>

#include "trialshim/base/spell.h"

namespace trialshim::trainer::internal {

using config::Node;

namespace {
std::string Where(const Node& n) {
  std::string at = n.mark().ToString();
  return at.empty() ? "" : at + ": ";
}
// Where the key of `value` is written, for errors about the key.
std::string WhereKey(const Node& value) {
  std::string at = value.KeyOrValueMark().ToString();
  return at.empty() ? "" : at + ": ";
}
}  // namespace

Status MapReader::CheckKeys(const std::vector<std::string>& allowed) const {
  if (node_.is_null()) return Status::Ok();
  if (!node_.is_map()) {
    return Status::InvalidArgument(
        Where(node_) + prefix_ + ": expected a map, got " + node_.type_name());
  }
  for (const auto& [key, value] : node_.AsMap()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Status::InvalidArgument(WhereKey(value) + "unknown option '" +
                                     prefix_ + "." + key + "'" +
                                     DidYouMean(key, allowed));
    }
  }
  return Status::Ok();
}

const Node* MapReader::Field(const std::string& key) const {
  if (!node_.is_map()) return nullptr;
  const Node* n = node_.Get(key);
  return (n == nullptr || n->is_null()) ? nullptr : n;
}

Status MapReader::Error(const Node& value, const std::string& key,
                        const std::string& expected) const {
  std::string got = value.type_name();
  if (value.is_string()) got += " '" + value.AsString() + "'";
  return Status::InvalidArgument(Where(value) + prefix_ + "." + key +
                                 ": expected " + expected + ", got " + got);
}

Status MapReader::Double(const std::string& key, double* out) const {
  const Node* n = Field(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_number()) return Error(*n, key, "a number");
  *out = n->AsDouble();
  return Status::Ok();
}

Status MapReader::Int(const std::string& key, int64_t* out) const {
  const Node* n = Field(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_int()) return Error(*n, key, "an int");
  *out = n->AsInt();
  return Status::Ok();
}

Status MapReader::Bool(const std::string& key, bool* out) const {
  const Node* n = Field(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_bool()) return Error(*n, key, "a bool");
  *out = n->AsBool();
  return Status::Ok();
}

Status MapReader::String(const std::string& key, std::string* out) const {
  const Node* n = Field(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_string()) return Error(*n, key, "a string");
  *out = n->AsString();
  return Status::Ok();
}

Status MapReader::Doubles(const std::string& key, size_t count,
                          std::vector<double>* out) const {
  const Node* n = Field(key);
  if (n == nullptr) return Status::Ok();
  std::string expected = "a list of " + std::to_string(count) + " numbers";
  if (!n->is_list() || n->size() != count) return Error(*n, key, expected);
  std::vector<double> values;
  for (const Node& item : n->AsList()) {
    if (!item.is_number()) return Error(*n, key, expected);
    values.push_back(item.AsDouble());
  }
  *out = std::move(values);
  return Status::Ok();
}

}  // namespace trialshim::trainer::internal
