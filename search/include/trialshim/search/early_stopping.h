// Early stopping: whether a running trial should stop, from its
// intermediate measurements and those of the trials that have completed,
// as studySpec's automatedStoppingSpec asks Vertex AI to decide.
//
// Both rules compare trials at a position: the measurement's global_step,
// or its elapsed time with useElapsedDuration. The completed trials are
// those that SUCCEEDED, early-stopped ones included (leaving them out would
// make the median climb with every trial stopped). Non-finite values are
// ignored. A rule never stops a trial without measurements, nor before
// kMinCompletedTrials trials have completed with measurements (for the
// median rule: with measurements at or before the trial's position), as
// a median or a best of fewer says little.
//
// Median (medianAutomatedStoppingSpec). Vertex: "The median automated
// stopping rule stops a pending Trial if the Trial's best objective_value
// is strictly below the median 'performance' of all completed Trials
// reported up to the Trial's last measurement. Currently, 'performance'
// refers to the running average of the objective values reported by the
// Trial in each measurement." It is the median stopping rule of Golovin et
// al., "Google Vizier" (KDD 2017). Here: at the running trial's
// last position s, each completed trial's performance is the mean of its
// values at positions <= s (trials with none there do not count); the
// trial stops if its best value so far is strictly worse (by the goal)
// than the median of those means.
//
// Decay curve (decayCurveStoppingSpec). Vertex fits a Gaussian process to
// predict a trial's final value and stops it when it has "very low
// probability to exceed the optimal value found so far". Here, a simpler
// model with the same decision: a learning curve is taken to follow
// y(s) = a + b (s + 1)^-c (a power-law decay towards a, its asymptote). For
// c in {0.25, 0.5, 1, 2}, a and b are fitted by least squares and the c
// with the smallest squared error is kept. The running trial's fit (at
// least kMinDecayPoints measurements) predicts its value at the horizon H,
// the median last position of the completed trials. The prediction's error
// is calibrated on the completed trials: each one's curve, cut at the
// running trial's position and fitted the same way, predicts its own final
// value; sigma is the root mean square of those errors (floored at the
// running fit's residual spread). The trial stops when even
// prediction + 2 sigma (for MAXIMIZE; - for MINIMIZE) does not reach the
// best final value of the completed trials, a chance of about 2% by a
// normal error, and never once it is at or past H.
//
// Everything here is pure and deterministic.
#ifndef TRIALSHIM_SEARCH_EARLY_STOPPING_H_
#define TRIALSHIM_SEARCH_EARLY_STOPPING_H_

#include <string>
#include <vector>

#include "trialshim/search/measurements.h"
#include "trialshim/search/study_spec.h"

namespace trialshim::tuning {

inline constexpr size_t kMinCompletedTrials = 3;
inline constexpr size_t kMinDecayPoints = 4;

// A completed trial's learning curve and its final value (the measurement
// measurementSelectionType chose).
struct CompletedCurve {
  std::vector<Measurement> measurements;
  double final_value = 0;
};

struct StoppingDecision {
  bool stop = false;
  std::string reason;  // why it stops, for the trial's record; else empty
};

// Whether the trial with `current` measurements should stop under `rule`
// (kNone never stops).
StoppingDecision ShouldStop(StoppingRule rule, bool use_elapsed, Goal goal,
                            const std::vector<CompletedCurve>& completed,
                            const std::vector<Measurement>& current);

// The decay-curve model: the fit of y(s) = a + b (s + 1)^-c to (x, y)
// points, and its value at x. ok is false for fewer than 2 distinct x.
struct DecayFit {
  bool ok = false;
  double a = 0, b = 0, c = 1;
  double rms = 0;  // root mean square residual
  double At(double x) const;
};
DecayFit FitDecayCurve(const std::vector<double>& x,
                       const std::vector<double>& y);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_EARLY_STOPPING_H_
