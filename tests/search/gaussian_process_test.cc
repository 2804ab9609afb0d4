// The Gaussian process: its posterior against independently computed
// values, the hyperparameter fit, conditioning and bad input.
#include "trialshim/search/gaussian_process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/testutil/status_matchers.h"

namespace trialshim::tuning {
namespace {

const std::vector<double> kX = {0.1, 0.2, 0.4, 0.9, 0.7,
                                0.3, 0.9, 0.8, 0.5, 0.5};
const std::vector<double> kY = {1.0, 3.0, -0.5, 2.0, 0.7};

// Reference values computed with numpy (/usr/bin/python3, numpy 1.24), not
// with this code: the same Matern-5/2 kernel with length scales (0.3, 0.6),
// signal variance 1.5 and noise 1e-3 (+1e-9 jitter) on the outputs
// standardised with their mean and population standard deviation; mean
// k*^T K^-1 y_s * sd + mu, variance (s2 - k*^T K^-1 k*) sd^2, and the log
// marginal likelihood of y_s with np.linalg.inv and slogdet.
TEST(GaussianProcessTest, PosteriorMatchesNumpy) {
  GpHyperparameters h;
  h.length_scales = {0.3, 0.6};
  h.signal_variance = 1.5;
  h.noise_variance = 1e-3;
  StatusOr<GaussianProcess> gp = GaussianProcess::Fit(kX, kY, h);
  ASSERT_OK(gp);
  struct Case {
    const char* name;
    double x[2];
    double mean, variance;
  } cases[] = {
      {"between points", {0.2, 0.3}, 1.082205205771829, 0.2958061340135082},
      {"centre", {0.6, 0.6}, 0.7950242586973293, 0.2453141551485107},
      {"far corner", {1.0, 0.0}, 0.5839515464221178, 1.5574333291102966},
  };
  for (const Case& c : cases) {
    double mean, var;
    gp->Predict(c.x, &mean, &var);
    EXPECT_NEAR(mean, c.mean, 1e-9) << "case " << c.name;
    EXPECT_NEAR(var, c.variance, 1e-9) << "case " << c.name;
  }
  EXPECT_NEAR(gp->LogMarginalLikelihood(), -7.701704758752504, 1e-9);
  EXPECT_NEAR(gp->LogMarginalLikelihood(h), -7.701704758752504, 1e-9);
}

TEST(GaussianProcessTest, InterpolatesItsPoints) {
  GpHyperparameters h;
  h.length_scales = {0.3, 0.6};
  h.noise_variance = 1e-6;
  StatusOr<GaussianProcess> gp = GaussianProcess::Fit(kX, kY, h);
  ASSERT_OK(gp);
  for (size_t i = 0; i < kY.size(); ++i) {
    double mean, var;
    gp->Predict(&kX[2 * i], &mean, &var);
    EXPECT_NEAR(mean, kY[i], 1e-3) << "case point " << i;
    EXPECT_LT(var, 1e-3) << "case point " << i;
  }
}

// Samples f on a 1-d or 2-d grid of n points per dimension.
void Sample(double (*f)(double, double), int dims, int n,
            std::vector<double>* x, std::vector<double>* y) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < (dims == 2 ? n : 1); ++j) {
      double a = (i + 0.5) / n, b = (j + 0.5) / n;
      x->push_back(a);
      if (dims == 2) x->push_back(b);
      y->push_back(f(a, b));
    }
  }
}

TEST(GaussianProcessTest, FitImprovesMarginalLikelihood) {
  struct Case {
    const char* name;
    int dims, n;
    double (*f)(double, double);
  } cases[] = {
      {"smooth 1-d", 1, 12, [](double a, double) { return std::sin(6 * a); }},
      {"wiggly 1-d", 1, 20,
       [](double a, double) { return std::sin(25 * a) + a; }},
      {"second input ignored", 2, 5,
       [](double a, double) { return std::cos(5 * a); }},
  };
  for (const Case& c : cases) {
    std::vector<double> x, y;
    Sample(c.f, c.dims, c.n, &x, &y);
    StatusOr<GaussianProcess> fit = GaussianProcess::FitHyperparameters(x, y);
    ASSERT_OK(fit);
    // The fit's own first start.
    GpHyperparameters start;
    start.length_scales.assign(static_cast<size_t>(c.dims), 0.5);
    start.noise_variance = 1e-3;
    double before = fit->LogMarginalLikelihood(start);
    EXPECT_GT(fit->LogMarginalLikelihood(), before + 1) << "case " << c.name;
    const GpHyperparameters& h = fit->hyperparameters();
    if (c.dims == 2) {
      EXPECT_GT(h.length_scales[1], 3 * h.length_scales[0])
          << "case " << c.name << ": the ignored input has a long scale";
    }
    EXPECT_LT(h.noise_variance, 1e-2) << "case " << c.name << ": noiseless";
    // Deterministic: the same data and seed give the same fit.
    StatusOr<GaussianProcess> again = GaussianProcess::FitHyperparameters(x, y);
    ASSERT_OK(again);
    EXPECT_EQ(again->hyperparameters().length_scales, h.length_scales)
        << "case " << c.name;
  }
}

TEST(GaussianProcessTest, ConditionAsKrigingBeliever) {
  GpHyperparameters h;
  h.length_scales = {0.3, 0.6};
  h.noise_variance = 1e-6;
  StatusOr<GaussianProcess> gp = GaussianProcess::Fit(kX, kY, h);
  ASSERT_OK(gp);
  double at[2] = {0.2, 0.6}, mean, var;
  gp->Predict(at, &mean, &var);
  StatusOr<GaussianProcess> believer = gp->Condition({0.2, 0.6}, {mean});
  ASSERT_OK(believer);
  double mean2, var2;
  believer->Predict(at, &mean2, &var2);
  EXPECT_NEAR(mean2, mean, 1e-6);
  EXPECT_LT(var2, 1e-4 * var);
  EXPECT_EQ(believer->size(), 6);
  EXPECT_EQ(believer->hyperparameters().length_scales, h.length_scales);
}

TEST(GaussianProcessTest, RefusesBadInput) {
  GpHyperparameters h;
  h.length_scales = {0.5, 0.5};
  struct Case {
    const char* name;
    std::vector<double> x, y;
  } cases[] = {
      {"no points", {}, {}},
      {"sizes disagree", {0.1, 0.2, 0.3}, {1, 2}},
      {"nan input", {0.1, NAN}, {1}},
      {"infinite output", {0.1, 0.2}, {INFINITY}},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(GaussianProcess::Fit(c.x, c.y, h).ok()) << "case " << c.name;
    EXPECT_FALSE(GaussianProcess::FitHyperparameters(c.x, c.y).ok())
        << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::tuning
