// Matern-5/2 ARD Gaussian process regression with Eigen, and the L-BFGS fit
// of its hyperparameters. See gaussian_process.h.
#include "trialshim/search/gaussian_process.h"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "splitmix.h"

namespace trialshim::tuning {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct GaussianProcess::State {
  MatrixXd x;  // n x d
  VectorXd y;  // standardised
  double y_mean = 0, y_std = 1;
  GpHyperparameters h;
  MatrixXd l;      // lower Cholesky factor of K + n2 I
  VectorXd alpha;  // (K + n2 I)^-1 y
  double lml = 0;
};

namespace {


constexpr double kSqrt5 = 2.23606797749978969641;
constexpr double kLog2Pi = 1.83787706640934548356;
// Added to the diagonal on top of the noise: keeps K positive definite when
// two points coincide and the fitted noise is at its lower bound.
constexpr double kJitter = 1e-9;

// Matern-5/2 correlation at scaled distance r (the Matern class with
// nu = 5/2 of Rasmussen & Williams, "Gaussian Processes for Machine
// Learning", ch. 4: twice differentiable, so smoother than the exponential
// kernel, rougher than the squared exponential), and its derivative factor
// g(r) = -(1/r) dm/dr = 5/3 (1 + sqrt5 r) exp(-sqrt5 r), finite at r = 0.
inline double Matern(double r) {
  return (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r);
}
inline double MaternGrad(double r) {
  return 5.0 / 3.0 * (1 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
}

double ScaledSquaredDistance(const double* a, const double* b,
                             const VectorXd& inv_l2) {
  double s = 0;
  for (Eigen::Index i = 0; i < inv_l2.size(); ++i) {
    double d = a[i] - b[i];
    s += d * d * inv_l2[i];
  }
  return s;
}

VectorXd InverseSquares(const std::vector<double>& length_scales) {
  VectorXd inv(static_cast<Eigen::Index>(length_scales.size()));
  for (size_t i = 0; i < length_scales.size(); ++i) {
    inv[static_cast<Eigen::Index>(i)] =
        1 / (length_scales[i] * length_scales[i]);
  }
  return inv;
}

// K + (n2 + jitter) I. Rows of `x` are contiguous in a row-major copy.
MatrixXd Kernel(const MatrixXd& x, const GpHyperparameters& h) {
  using RowMajor =
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMajor rows = x;
  VectorXd inv_l2 = InverseSquares(h.length_scales);
  Eigen::Index n = x.rows();
  MatrixXd k(n, n);
  for (Eigen::Index a = 0; a < n; ++a) {
    k(a, a) = h.signal_variance + h.noise_variance + kJitter;
    for (Eigen::Index b = 0; b < a; ++b) {
      double r = std::sqrt(ScaledSquaredDistance(rows.row(a).data(),
                                                 rows.row(b).data(), inv_l2));
      k(a, b) = k(b, a) = h.signal_variance * Matern(r);
    }
  }
  return k;
}

// Factorises K; false when it is not positive definite. Rasmussen &
// Williams, Algorithm 2.1: L = cholesky(K + n2 I), alpha = L^T \ (L \ y),
// log p(y) = -1/2 y^T alpha - sum_i log L_ii - n/2 log 2 pi (their eq. 5.8).
// A Cholesky factor rather than an inverse: stable, and the log determinant
// comes free from its diagonal.
bool Factorise(GaussianProcess::State* s) {
  Eigen::LLT<MatrixXd> llt(Kernel(s->x, s->h));
  if (llt.info() != Eigen::Success) return false;
  s->l = llt.matrixL();
  s->alpha = llt.solve(s->y);
  double log_det = 2 * s->l.diagonal().array().log().sum();
  s->lml = -0.5 * s->y.dot(s->alpha) - 0.5 * log_det -
           0.5 * static_cast<double>(s->y.size()) * kLog2Pi;
  return std::isfinite(s->lml);
}

Status CheckData(const std::vector<double>& x, const std::vector<double>& y,
                 size_t d) {
  if (y.empty() || d == 0 || x.size() != y.size() * d) {
    return Status::InvalidArgument(
        "Gaussian process: " + std::to_string(x.size()) +
        " input values do not make " + std::to_string(y.size()) +
        " points of " + std::to_string(d) + " dimensions");
  }
  for (double v : x) {
    if (!std::isfinite(v)) {
      return Status::InvalidArgument("Gaussian process: non-finite input");
    }
  }
  for (double v : y) {
    if (!std::isfinite(v)) {
      return Status::InvalidArgument("Gaussian process: non-finite output");
    }
  }
  return Status::Ok();
}

MatrixXd ToMatrix(const std::vector<double>& x, size_t d) {
  Eigen::Index n = static_cast<Eigen::Index>(x.size() / d);
  MatrixXd m(n, static_cast<Eigen::Index>(d));
  for (Eigen::Index a = 0; a < n; ++a) {
    for (Eigen::Index i = 0; i < m.cols(); ++i) {
      m(a, i) = x[static_cast<size_t>(a) * d + static_cast<size_t>(i)];
    }
  }
  return m;
}

// The fit's variables: theta = (log l_1..d, log s2, log n2), each mapped
// from an unconstrained z through lo + (hi - lo) * sigmoid(z). Logs because
// the hyperparameters are scales (a step means a factor); the sigmoid keeps
// every point L-BFGS tries inside the bounds, so no projection is needed.
struct Box {
  VectorXd lo, hi;
  VectorXd Theta(const VectorXd& z) const {
    return lo.array() + (hi - lo).array() / (1 + (-z.array()).exp());
  }
  // d theta / d z
  VectorXd Slope(const VectorXd& z) const {
    VectorXd s = 1 / (1 + (-z.array()).exp());
    return (hi - lo).array() * s.array() * (1 - s.array());
  }
  VectorXd Z(const VectorXd& theta) const {
    VectorXd u =
        ((theta - lo).array() / (hi - lo).array()).max(1e-6).min(1 - 1e-6);
    return (u.array() / (1 - u.array())).log();
  }
};

GpHyperparameters FromTheta(const VectorXd& theta) {
  GpHyperparameters h;
  Eigen::Index d = theta.size() - 2;
  for (Eigen::Index i = 0; i < d; ++i) {
    h.length_scales.push_back(std::exp(theta[i]));
  }
  h.signal_variance = std::exp(theta[d]);
  h.noise_variance = std::exp(theta[d + 1]);
  return h;
}

// Log marginal likelihood plus the length scales' Gamma(3, 6) log prior
// (up to a constant), and its gradient in theta; -inf when K is singular.
double Objective(const MatrixXd& x, const VectorXd& y, const VectorXd& theta,
                 VectorXd* grad) {
  GpHyperparameters h = FromTheta(theta);
  Eigen::Index n = x.rows(), d = x.cols();
  MatrixXd k = Kernel(x, h);
  Eigen::LLT<MatrixXd> llt(k);
  if (llt.info() != Eigen::Success) return -HUGE_VAL;
  VectorXd alpha = llt.solve(y);
  MatrixXd l = llt.matrixL();
  double lml = -0.5 * y.dot(alpha) - l.diagonal().array().log().sum() -
               0.5 * static_cast<double>(n) * kLog2Pi;
  if (!std::isfinite(lml)) return -HUGE_VAL;
  // dL/dtheta_j = 1/2 tr(W dK/dtheta_j), W = alpha alpha^T - K^-1
  // (Rasmussen & Williams, eq. 5.9). K^-1 costs O(n^3) once; each
  // derivative is then O(n^2), d + 2 of them.
  MatrixXd w = alpha * alpha.transpose() - llt.solve(MatrixXd::Identity(n, n));
  grad->setZero(theta.size());
  VectorXd inv_l2 = InverseSquares(h.length_scales);
  for (Eigen::Index a = 0; a < n; ++a) {
    for (Eigen::Index b = 0; b < a; ++b) {
      double r2 = 0;
      for (Eigen::Index i = 0; i < d; ++i) {
        double diff = x(a, i) - x(b, i);
        r2 += diff * diff * inv_l2[i];
      }
      double r = std::sqrt(r2);
      double wab = w(a, b);  // symmetric: the pair counts twice, 1/2 cancels
      (*grad)[d] += wab * h.signal_variance * Matern(r);
      double g = wab * h.signal_variance * MaternGrad(r);
      for (Eigen::Index i = 0; i < d; ++i) {
        double diff = x(a, i) - x(b, i);
        (*grad)[i] += g * diff * diff * inv_l2[i];
      }
    }
  }
  (*grad)[d] += 0.5 * w.diagonal().sum() * h.signal_variance;
  (*grad)[d + 1] = 0.5 * w.diagonal().sum() * h.noise_variance;
  // Gamma(shape 3, rate 6) on each length scale: log density
  // 2 log l - 6 l, whose derivative in theta = log l is 2 - 6 l. It is the
  // density of l (no Jacobian term for the log), so its mode, 1/3, is in l.
  double prior = 0;
  for (Eigen::Index i = 0; i < d; ++i) {
    double len = h.length_scales[static_cast<size_t>(i)];
    prior += 2 * std::log(len) - 6 * len;
    (*grad)[i] += 2 - 6 * len;
  }
  return lml + prior;
}

// Minimises f from z0 by L-BFGS (memory 6) with a backtracking Armijo line
// search; returns the best z and sets *best_f. f returns +inf where it is
// undefined, which the line search backs away from. The direction is Liu and
// Nocedal's (1989, "On the limited memory BFGS method for large scale
// optimization"): the two-loop recursion over the last pairs (s, y), the
// initial inverse Hessian scaled by s^T y / y^T y.
template <typename F>
VectorXd Lbfgs(const F& f, VectorXd z, int max_iterations, double* best_f) {
  constexpr int kMemory = 6;
  VectorXd g;
  double fz = f(z, &g);
  std::vector<VectorXd> s_hist, y_hist;
  std::vector<double> rho;
  for (int it = 0; it < max_iterations && std::isfinite(fz); ++it) {
    if (g.lpNorm<Eigen::Infinity>() < 1e-6) break;
    // Two-loop recursion: dir = -H g.
    VectorXd q = g;
    std::vector<double> a(s_hist.size());
    for (size_t i = s_hist.size(); i-- > 0;) {
      a[i] = rho[i] * s_hist[i].dot(q);
      q -= a[i] * y_hist[i];
    }
    double gamma = s_hist.empty() ? 1 / std::max(1.0, g.norm())
                                  : s_hist.back().dot(y_hist.back()) /
                                        y_hist.back().squaredNorm();
    q *= gamma;
    for (size_t i = 0; i < s_hist.size(); ++i) {
      double b = rho[i] * y_hist[i].dot(q);
      q += s_hist[i] * (a[i] - b);
    }
    VectorXd dir = -q;
    double slope = g.dot(dir);
    if (slope >= 0) {  // not a descent direction: restart from steepest
      dir = -g * gamma;
      slope = g.dot(dir);
      s_hist.clear();
      y_hist.clear();
      rho.clear();
    }
    double step = 1;
    VectorXd z_new, g_new;
    double f_new = HUGE_VAL;
    for (int back = 0; back < 30; ++back, step *= 0.5) {
      z_new = z + step * dir;
      f_new = f(z_new, &g_new);
      if (std::isfinite(f_new) && f_new <= fz + 1e-4 * step * slope) break;
    }
    if (!(f_new < fz)) break;
    VectorXd s = z_new - z, yv = g_new - g;
    double sy = s.dot(yv);
    // A pair is kept only with positive curvature (s^T y > 0), which keeps
    // the implied inverse Hessian positive definite and so dir a descent
    // direction; Armijo backtracking alone does not guarantee it.
    if (sy > 1e-12) {
      if (static_cast<int>(s_hist.size()) == kMemory) {
        s_hist.erase(s_hist.begin());
        y_hist.erase(y_hist.begin());
        rho.erase(rho.begin());
      }
      s_hist.push_back(s);
      y_hist.push_back(yv);
      rho.push_back(1 / sy);
    }
    bool converged = fz - f_new < 1e-9 * (1 + std::fabs(fz));
    z = z_new;
    g = g_new;
    fz = f_new;
    if (converged) break;
  }
  *best_f = fz;
  return z;
}


}  // namespace

StatusOr<GaussianProcess> GaussianProcess::Fit(const std::vector<double>& x,
                                               const std::vector<double>& y,
                                               const GpHyperparameters& h) {
  size_t d = h.length_scales.size();
  TRIALSHIM_RETURN_IF_ERROR(CheckData(x, y, d));
  auto s = std::make_shared<State>();
  s->x = ToMatrix(x, d);
  VectorXd raw =
      Eigen::Map<const VectorXd>(y.data(), static_cast<Eigen::Index>(y.size()));
  // Standardised outputs: the zero-mean prior and the bounds of GpFitOptions
  // then mean the same on every metric. A constant metric keeps scale 1.
  s->y_mean = raw.mean();
  double sd = std::sqrt((raw.array() - s->y_mean).square().mean());
  s->y_std = sd > 1e-12 * (1 + std::fabs(s->y_mean)) ? sd : 1;
  s->y = (raw.array() - s->y_mean) / s->y_std;
  s->h = h;
  if (!Factorise(s.get())) {
    return Status::InvalidArgument("Gaussian process: the kernel matrix of " +
                                   std::to_string(y.size()) +
                                   " points is not positive definite");
  }
  return GaussianProcess(std::move(s));
}

StatusOr<GaussianProcess> GaussianProcess::FitHyperparameters(
    const std::vector<double>& x, const std::vector<double>& y,
    const GpFitOptions& options) {
  if (y.empty()) return Status::InvalidArgument("Gaussian process: no points");
  size_t d = x.size() / y.size();
  GpHyperparameters start;
  start.length_scales.assign(d, 0.5);
  start.signal_variance = 1;
  start.noise_variance = 1e-3;
  // Standardises y and checks the data.
  TRIALSHIM_ASSIGN_OR_RETURN(GaussianProcess gp, Fit(x, y, start));
  const State& s = *gp.state_;
  Eigen::Index p = static_cast<Eigen::Index>(d) + 2;
  Box box{VectorXd(p), VectorXd(p)};
  for (Eigen::Index i = 0; i < p - 2; ++i) {
    box.lo[i] = std::log(options.min_length_scale);
    box.hi[i] = std::log(options.max_length_scale);
  }
  box.lo[p - 2] = std::log(options.min_signal_variance);
  box.hi[p - 2] = std::log(options.max_signal_variance);
  box.lo[p - 1] = std::log(options.min_noise_variance);
  box.hi[p - 1] = std::log(options.max_noise_variance);

  auto f = [&](const VectorXd& z, VectorXd* grad_z) {
    VectorXd grad;
    double v = Objective(s.x, s.y, box.Theta(z), &grad);
    if (!std::isfinite(v)) return HUGE_VAL;
    *grad_z = -grad.cwiseProduct(box.Slope(z));
    return -v;
  };
  VectorXd theta0(p);
  for (Eigen::Index i = 0; i < p - 2; ++i) theta0[i] = std::log(0.5);
  theta0[p - 2] = 0;
  theta0[p - 1] = std::log(1e-3);
  uint64_t rng = options.seed ^ 0x6a09e667f3bcc909ULL;
  double best = HUGE_VAL;
  VectorXd best_z = box.Z(theta0);
  for (int start_i = 0; start_i < std::max(1, options.restarts); ++start_i) {
    VectorXd z0 = box.Z(theta0);
    if (start_i > 0) {
      for (Eigen::Index i = 0; i < p; ++i) {
        // Uniform in the middle 80% of each log range.
        double u = internal::Uniform(&rng);
        z0[i] = std::log((0.1 + 0.8 * u) / (0.9 - 0.8 * u));
      }
    }
    double fz;
    VectorXd z = Lbfgs(f, z0, options.max_iterations, &fz);
    if (fz < best) {
      best = fz;
      best_z = z;
    }
  }
  if (!std::isfinite(best)) return gp;  // nothing better than the start
  return Fit(x, y, FromTheta(box.Theta(best_z)));
}

StatusOr<GaussianProcess> GaussianProcess::Condition(
    const std::vector<double>& x, const std::vector<double>& y) const {
  const State& old = *state_;
  size_t d = old.h.length_scales.size();
  if (y.empty()) return *this;
  TRIALSHIM_RETURN_IF_ERROR(CheckData(x, y, d));
  auto s = std::make_shared<State>(old);
  Eigen::Index n0 = old.x.rows(), m = static_cast<Eigen::Index>(y.size());
  s->x.conservativeResize(n0 + m, Eigen::NoChange);
  s->x.bottomRows(m) = ToMatrix(x, d);
  s->y.conservativeResize(n0 + m);
  for (Eigen::Index a = 0; a < m; ++a) {
    s->y[n0 + a] = (y[static_cast<size_t>(a)] - old.y_mean) / old.y_std;
  }
  if (!Factorise(s.get())) {
    return Status::InvalidArgument(
        "Gaussian process: conditioning made the kernel matrix singular");
  }
  return GaussianProcess(std::move(s));
}

void GaussianProcess::Predict(const double* x, double* mean,
                              double* variance) const {
  const State& s = *state_;
  Eigen::Index n = s.x.rows(), d = s.x.cols();
  VectorXd inv_l2 = InverseSquares(s.h.length_scales);
  VectorXd k(n);
  for (Eigen::Index a = 0; a < n; ++a) {
    double r2 = 0;
    for (Eigen::Index i = 0; i < d; ++i) {
      double diff = s.x(a, i) - x[i];
      r2 += diff * diff * inv_l2[i];
    }
    k[a] = s.h.signal_variance * Matern(std::sqrt(r2));
  }
  // Rasmussen & Williams, Algorithm 2.1: mean k*^T alpha, variance
  // k(x*, x*) - v^T v with v = L \ k*: the latent f's variance, n2 not
  // added. Rounding can make it slightly negative; it is clamped to 0.
  double m = k.dot(s.alpha);
  s.l.triangularView<Eigen::Lower>().solveInPlace(k);
  double v = std::max(s.h.signal_variance - k.squaredNorm(), 0.0);
  *mean = s.y_mean + m * s.y_std;
  *variance = v * s.y_std * s.y_std;
}

const GpHyperparameters& GaussianProcess::hyperparameters() const {
  return state_->h;
}
int GaussianProcess::dimensions() const {
  return static_cast<int>(state_->x.cols());
}
int GaussianProcess::size() const { return static_cast<int>(state_->x.rows()); }
double GaussianProcess::LogMarginalLikelihood() const { return state_->lml; }

double GaussianProcess::LogMarginalLikelihood(
    const GpHyperparameters& h) const {
  State s = *state_;
  s.h = h;
  if (h.length_scales.size() != static_cast<size_t>(s.x.cols()) ||
      !Factorise(&s)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return s.lml;
}

}  // namespace trialshim::tuning
