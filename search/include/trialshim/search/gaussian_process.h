// GaussianProcess: the surrogate model of the Bayesian search (bayesian.h).
// A zero-mean Gaussian process on inputs in [0,1]^d (the caller normalises
// each parameter on its scale) with a Matern-5/2 kernel, one length scale
// per dimension (ARD), a signal variance and a Gaussian noise variance:
//
//   k(x, x') = s2 (1 + sqrt(5) r + 5/3 r^2) exp(-sqrt(5) r),
//   r^2 = sum_i (x_i - x'_i)^2 / l_i^2,    y = f(x) + N(0, n2).
//
// Outputs are standardised (mean 0, population standard deviation 1) before
// the fit, so the hyperparameter bounds below mean the same on every metric;
// predictions come back in the caller's units.
//
// Hyperparameters are fitted by maximising the log marginal likelihood plus
// a Gamma(3, 6) log prior on each length scale (the prior BoTorch used by
// default: mean 0.5 of the unit range; it keeps a fit on a handful of points
// from collapsing onto tiny or huge length scales), from several starts,
// with L-BFGS on unconstrained variables mapped into the bounds through a
// sigmoid. L-BFGS because the gradient is cheap and exact (O(n^2 d) once
// K^-1 is known) and the problem is smooth and small (d + 2 variables);
// Nelder-Mead needs far more evaluations as d grows, and the sigmoid mapping
// keeps the bounds without L-BFGS-B's projected steps.
//
// Everything is deterministic: the same inputs and seed give the same fit.
// Objects are immutable and cheap to copy (shared state); thread-compatible.
#ifndef TRIALSHIM_SEARCH_GAUSSIAN_PROCESS_H_
#define TRIALSHIM_SEARCH_GAUSSIAN_PROCESS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim::tuning {

struct GpHyperparameters {
  std::vector<double> length_scales;  // one per input dimension, > 0
  double signal_variance = 1;         // s2, on standardised outputs
  double noise_variance = 1e-4;       // n2, on standardised outputs
};

// Bounds of the fit, on standardised outputs and unit inputs.
struct GpFitOptions {
  double min_length_scale = 0.01;  // Default: 0.01
  double max_length_scale = 20;    // Default: 20 (flat: the input is ignored)
  double min_signal_variance = 0.05;  // Default: 0.05
  double max_signal_variance = 20;    // Default: 20
  // The fit finds ~0 noise on deterministic functions; 1e-6 keeps K
  // well-conditioned. Default: 1e-6 .. 1.
  double min_noise_variance = 1e-6;
  double max_noise_variance = 1;
  // Starts of L-BFGS: the first at length scales 0.5, s2 1, n2 1e-3; the
  // others drawn uniformly (in log space) in the middle 80% of the bounds.
  // Default: 5.
  int restarts = 5;
  // L-BFGS iterations per start. Default: 80.
  int max_iterations = 80;
  // Seeds the random starts. Default: 0.
  uint64_t seed = 0;
};

class GaussianProcess {
 public:
  // The posterior with fixed hyperparameters. `x` holds n rows of d values
  // (row-major, n * d), `y` n outputs. InvalidArgument for mismatched sizes,
  // no points or non-finite values, or a kernel matrix that is not positive
  // definite (coinciding points with a noise variance of 0).
  static StatusOr<GaussianProcess> Fit(const std::vector<double>& x,
                                       const std::vector<double>& y,
                                       const GpHyperparameters& h);
  // The posterior with hyperparameters fitted as described above.
  static StatusOr<GaussianProcess> FitHyperparameters(
      const std::vector<double>& x, const std::vector<double>& y,
      const GpFitOptions& options = {});

  // Adds points with the same hyperparameters and output standardisation
  // (for a kriging believer: y is then the posterior mean at x). Errors as
  // Fit.
  StatusOr<GaussianProcess> Condition(const std::vector<double>& x,
                                      const std::vector<double>& y) const;

  // Posterior mean and variance of f (noise excluded) at one point of d
  // values, in the units of y.
  void Predict(const double* x, double* mean, double* variance) const;

  const GpHyperparameters& hyperparameters() const;
  int dimensions() const;
  int size() const;  // number of points
  // log p(y | X, hyperparameters) of the standardised outputs.
  double LogMarginalLikelihood() const;
  // The same with another set of hyperparameters (NaN when K is singular).
  double LogMarginalLikelihood(const GpHyperparameters& h) const;

  struct State;  // Eigen lives only in gaussian_process.cc

 private:
  explicit GaussianProcess(std::shared_ptr<const State> s)
      : state_(std::move(s)) {}
  std::shared_ptr<const State> state_;
};

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_SEARCH_GAUSSIAN_PROCESS_H_
