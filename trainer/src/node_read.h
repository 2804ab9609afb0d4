// Typed reads from a resolved config map, with messages that name the full
// key, its file:line:col and what was expected. Private to the trainer.
#ifndef TRIALSHIM_TRAINER_SRC_NODE_READ_H_
#define TRIALSHIM_TRAINER_SRC_NODE_READ_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trialshim/config/node.h"
#include "trialshim/base/status.h"

namespace trialshim::trainer::internal {

// Reads fields of the map `node` whose full key is `prefix` ("optimizer").
// A missing or null field leaves the output at its default.
class MapReader {
 public:
  MapReader(const config::Node& node, std::string prefix)
      : node_(node), prefix_(std::move(prefix)) {}

  // InvalidArgument if the node is not a map (null is an empty map) or has a
  // key outside `allowed` (with did-you-mean).
  Status CheckKeys(const std::vector<std::string>& allowed) const;

  Status Double(const std::string& key, double* out) const;
  Status Int(const std::string& key, int64_t* out) const;
  Status Bool(const std::string& key, bool* out) const;
  Status String(const std::string& key, std::string* out) const;
  // A list of exactly `n` numbers ("betas: [0.9, 0.999]").
  Status Doubles(const std::string& key, size_t n,
                 std::vector<double>* out) const;

 private:
  const config::Node* Field(const std::string& key) const;
  Status Error(const config::Node& value, const std::string& key,
               const std::string& expected) const;

  const config::Node& node_;
  std::string prefix_;
};

}  // namespace trialshim::trainer::internal

#endif  // TRIALSHIM_TRAINER_SRC_NODE_READ_H_
