// hydra-optuna-sweeper's settings, read once; see optuna_sweeper.h.
#include "trialshim/search/optuna_sweeper.h"

#include <string>
#include <utility>

#include "trialshim/base/spell.h"
#include "trialshim/config/python_text.h"

namespace trialshim::tuning {
namespace {

using config::Node;

// "file:line:col: " where `n` was written, or "" (an override's value).
std::string At(const Node& n) {
  return n.mark().known() ? n.mark().ToString() + ": " : "";
}

// The node at `key` of the resolved sweeper, null when it has none.
Node Get(const Node& sweeper, const char* key) {
  const Node* n = sweeper.is_map() ? sweeper.Get(key) : nullptr;
  return n ? *n : Node::Null();
}

// n_trials and n_jobs: OptunaSweeperConf types them int; below 1 the
// plugin's `while n_trials_to_go > 0` runs no trial (n_trials) or never
// ends (n_jobs: batches of 0).
StatusOr<int64_t> AtLeastOne(const Node& sweeper, const char* key) {
  Node n = Get(sweeper, key);
  if (!n.is_int() || n.AsInt() < 1) {
    return Status::InvalidArgument(At(n) + "hydra.sweeper." + key +
                                   " must be an int >= 1, got " +
                                   config::PythonRepr(n));
  }
  return n.AsInt();
}

// _impl.py's _get_directions: a list's items, or the one str; then
// optuna.create_study takes "minimize" and "maximize" only.
StatusOr<std::vector<std::string>> Directions(const Node& direction) {
  std::vector<std::string> out;
  if (direction.is_string()) out.push_back(direction.AsString());
  if (direction.is_list()) {
    for (const Node& d : direction.AsList()) out.push_back(config::PythonStr(d));
  }
  if (out.empty()) {
    return Status::InvalidArgument(
        At(direction) +
        "hydra.sweeper.direction must be minimize, maximize or a list of "
        "them, got " + config::PythonRepr(direction));
  }
  for (const std::string& d : out) {
    if (d != "minimize" && d != "maximize") {
      return Status::InvalidArgument(
          At(direction) + "hydra.sweeper.direction: '" + d +
          "' is not a direction: expected minimize or maximize" +
          DidYouMean(d, {"minimize", "maximize"}));
    }
  }
  return out;
}

// What the search space may not be: Python code (custom_search_space, a
// function the plugin imports and calls per trial) or the old
// search_space (its sweep() asserts it is None).
Status RefuseCodedSearchSpaces(const Node& sweeper, std::string_view runner) {
  Node custom = Get(sweeper, "custom_search_space");
  if (!custom.is_null()) {
    return Status::InvalidArgument(
        At(custom) +
        "hydra.sweeper.custom_search_space: the search space is extended by "
        "Python code, which " + std::string(runner) +
        " can not run; write the search space in hydra.sweeper.params");
  }
  Node old = Get(sweeper, "search_space");
  if (!old.is_null()) {
    return Status::InvalidArgument(
        At(old) +
        "hydra.sweeper.search_space: hydra-optuna-sweeper 1.2.0 fails on it "
        "(an assertion in its sweep()); write the search space in "
        "hydra.sweeper.params");
  }
  return Status::Ok();
}

void ReadSampler(const config::ComposeResult& master,
                 OptunaSweeperConfig* out) {
  const Node* target = out->sampler.is_map() ? out->sampler.Get("_target_")
                                             : nullptr;
  if (target && target->is_string()) out->sampler_target = target->AsString();
  const Node* choices = master.hydra.Find("runtime.choices");
  const Node* option =
      choices ? choices->Get("hydra/sweeper/sampler") : nullptr;
  if (option && option->is_string()) out->sampler_option = option->AsString();
  out->known_sampler =
      FindOptunaSampler(out->sampler_target, out->sampler_option);
  const Node* seed = out->sampler.is_map() ? out->sampler.Get("seed") : nullptr;
  if (seed && seed->is_int()) out->seed = seed->AsInt();
}

}  // namespace

StatusOr<OptunaSweeperConfig> ReadOptunaSweeperConfig(
    const config::ComposeResult& master, std::string_view runner,
    std::map<std::string, Node>* now) {
  TRIALSHIM_ASSIGN_OR_RETURN(
      Node sweeper,
      config::ResolveHydra(master, "sweeper", false,
                           config::HydraScope::kWholeConfig, now));
  TRIALSHIM_RETURN_IF_ERROR(RefuseCodedSearchSpaces(sweeper, runner));
  OptunaSweeperConfig out;
  out.params = Get(sweeper, "params");
  TRIALSHIM_ASSIGN_OR_RETURN(out.n_trials, AtLeastOne(sweeper, "n_trials"));
  TRIALSHIM_ASSIGN_OR_RETURN(out.n_jobs, AtLeastOne(sweeper, "n_jobs"));
  TRIALSHIM_ASSIGN_OR_RETURN(out.directions,
                             Directions(Get(sweeper, "direction")));
  out.sampler = Get(sweeper, "sampler");
  ReadSampler(master, &out);
  Node name = Get(sweeper, "study_name");
  if (!name.is_null()) out.study_name = config::PythonStr(name);
  out.storage = Get(sweeper, "storage");
  return out;
}

}  // namespace trialshim::tuning
