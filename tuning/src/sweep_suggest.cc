// The values each trial is given: the grid's point, the seeded random
// draw, or (ALGORITHM_UNSPECIFIED) the Bayesian search's suggestion from
// the trials so far, several metrics first scalarized as ParEGO does.
// Grid and random values depend on the id alone, so --resume can check
// them; a Bayesian trial's are recorded before it starts (planned_).
#include "sweeper.h"
#include "trialshim/search/pareto.h"

namespace trialshim::tuning::internal {

StatusOr<Assignment> Sweeper::Values(int64_t id) const {
  if (result_.algorithm == Algorithm::kGridSearch) {
    return GridPoint(job_.parameters, static_cast<uint64_t>(id - 1));
  }
  if (!bayesian_) return RandomPoint(job_.parameters, options_.seed, id);
  auto planned = planned_.find(id);
  if (planned != planned_.end()) return planned->second;
  // Finished trials are the observations; started ones are pending.
  std::vector<Observation> observed;
  std::vector<Assignment> pending;
  std::vector<std::vector<double>> points;  // several objectives
  for (const TrialRecord& t : result_.trials) {
    if (t.state == TrialState::kActive) pending.push_back(t.parameters);
    if (!IsFinal(t.state)) continue;
    Observation o{t.parameters, Observation::Kind::kFailed, 0};
    if (t.state == TrialState::kSucceeded && t.metric) {
      o.kind = Observation::Kind::kSucceeded;
      o.value = *t.metric;
      points.push_back(t.values);
    } else if (t.state == TrialState::kInfeasible) {
      o.kind = Observation::Kind::kInfeasible;
    }
    observed.push_back(std::move(o));
  }
  if (MultiObjective()) Scalarize(id, points, &observed);
  return bayesian_->Suggest(id, observed, pending);
}

// The succeeded observations' values become ParEGO's scalarization of
// `points` (theirs, in order) with the weights of trial `id`.
void Sweeper::Scalarize(int64_t id,
                        const std::vector<std::vector<double>>& points,
                        std::vector<Observation>* observed) const {
  std::vector<Goal> goals;
  for (const Objective& o : result_.objectives) goals.push_back(o.goal);
  std::vector<double> s = tuning::Scalarize(
      points, goals, ChebyshevWeights(goals.size(), options_.seed, id));
  size_t k = 0;
  for (Observation& o : *observed) {
    if (o.kind == Observation::Kind::kSucceeded) o.value = s[k++];
  }
}

}  // namespace trialshim::tuning::internal
