// Shared helpers for the Catch2 suite: deterministic test data and a finite-difference gradient
// check on llm.c's "fakeloss" (loss = sum(out * dout) with a fixed random dout). The check itself
// is the core's (attn/check.h, which the self-test panel runs too); these wrap it in CHECKs.
//
// The forward passes run in float32, so the central difference uses a float-sized step and the
// comparison allows both an absolute and a relative error (named below). On a mismatch the check
// prints the largest difference and the first differing entries, as llm.c's check_tensor does.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "attn/base/check.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/nn/loss.h"

namespace gradcheck {

// Central-difference step for float32 forwards: large enough that the loss change is far above
// float rounding, small enough that the O(eps^2) truncation error stays below the tolerances.
// (The self-test panel uses the same step and tolerances: attn/check.h.)
constexpr float kFdEps = attn::kGradcheckEps;
// |analytic - numeric| <= abs + rel * max(|analytic|, |numeric|).
using Tolerance = attn::Tolerance;
// For fakeloss checks of one layer: the float rounding of the outputs, summed against dout and
// divided by 2*eps, leaves up to ~3e-4 of noise in a numeric gradient of size ~1.
constexpr double kFdAbsTol = attn::kGradcheckAbsTol;
constexpr double kFdRelTol = attn::kGradcheckRelTol;
constexpr Tolerance kLayerTol{kFdAbsTol, kFdRelTol};
// For a loss evaluated in double from float outputs (the whole model through cross-entropy):
// measured noise is below 1e-5, so gradients of size ~0.01 are resolved to a few percent.
constexpr double kFdAbsTolDoubleLoss = 1e-4;
constexpr Tolerance kDoubleLossTol{kFdAbsTolDoubleLoss, kFdRelTol};
// How many differing entries a failing check prints.
constexpr int kShowMismatches = 5;

// n token ids drawn uniformly from [0, V) by our deterministic generator.
inline std::vector<int32_t> random_ids(int n, int V, attn::Rng& rng) {
  std::vector<int32_t> ids(size_t(n), 0);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng.below(static_cast<uint32_t>(V)));
  return ids;
}

// Cross-entropy of float logits evaluated in double (rows whose target is kIgnoreIndex left
// out): finite differences through it then see only the forward's own float rounding, not the
// rounding of the loss, so they resolve small gradients (kDoubleLossTol).
inline double cross_entropy_double(const attn::Mat& logits, const std::vector<int32_t>& targets) {
  double total = 0;
  int count = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const int32_t target = targets[size_t(i)];
    if (target == attn::kIgnoreIndex) continue;
    double mx = logits(i, 0), sum = 0;
    for (Eigen::Index j = 0; j < logits.cols(); ++j) mx = std::max(mx, double(logits(i, j)));
    for (Eigen::Index j = 0; j < logits.cols(); ++j) sum += std::exp(double(logits(i, j)) - mx);
    total += std::log(sum) + mx - logits(i, target);
    ++count;
  }
  return total / count;
}

// A (rows, cols) matrix of N(0, scale^2) entries from our deterministic generator.
inline attn::Mat random_mat(Eigen::Index rows, Eigen::Index cols, attn::Rng& rng,
                            float scale = 1.0f) {
  attn::Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = scale * rng.normal();
  return m;
}

// llm.c's fakeloss: sum(out * dout), accumulated in double. Its gradient wrt out is dout.
inline double fakeloss(const attn::Mat& out, const attn::Mat& dout) {
  REQUIRE(out.rows() == dout.rows());
  REQUIRE(out.cols() == dout.cols());
  return attn::fakeloss(out, dout);
}

// The central difference of loss() at *value (attn::central_difference).
template <typename LossFn>
double central_difference(float* value, LossFn&& loss, float eps = kFdEps) {
  return attn::central_difference(value, loss, eps);
}

// All of [0, n) when n <= max_count, else max_count distinct indices: the first, the last, and
// the rest drawn from rng. Keeps the whole-model check fast.
inline std::vector<int64_t> sample_indices(int64_t n, int64_t max_count, attn::Rng& rng) {
  std::vector<int64_t> idx;
  if (n <= max_count) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  std::vector<char> taken(static_cast<size_t>(n), 0);
  auto take = [&](int64_t i) {
    if (!taken[i]) {
      taken[i] = 1;
      idx.push_back(i);
    }
  };
  take(0);
  take(n - 1);
  while (static_cast<int64_t>(idx.size()) < max_count) take(rng.below(static_cast<uint32_t>(n)));
  std::sort(idx.begin(), idx.end());
  return idx;
}

// Compares analytic gradient entries with central differences of loss() over the entries of
// value listed in idx (all when idx is empty), with attn::check_gradient, and CHECKs that none is
// out of tolerance and that the gradient is not ~0 everywhere. loss() must recompute the loss
// from value and must not change anything else; analytic is copied first, so loss() may
// overwrite the layer's gradient buffers.
template <typename LossFn>
void check_grad(const std::string& name, float* value, const float* analytic_ptr, int64_t n,
                LossFn&& loss, std::vector<int64_t> idx = {}, Tolerance tol = kLayerTol) {
  const attn::GradientCheck g = attn::check_gradient(value, analytic_ptr, n, loss, idx, tol,
                                                     size_t(kShowMismatches));
  std::ostringstream report;
  report << name << ": " << g.checked << " of " << n << " entries checked, max |diff| "
         << g.max_abs_diff << " at [" << g.max_abs_diff_at << "], largest |grad| " << g.max_grad
         << ", " << g.bad << " mismatches (tolerance " << tol.abs << " + " << tol.rel << " rel)";
  for (const attn::GradientMismatch& m : g.first_bad)
    report << "\n  [" << m.index << "] analytic " << m.analytic << " numeric " << m.numeric;
  INFO(report.str());
  if (std::getenv("ATTN_GRADCHECK_VERBOSE")) WARN(report.str());  // opt-in summary of every check
  CHECK(g.bad == 0);
  // A check on a gradient that is zero everywhere proves nothing; every caller expects signal.
  CHECK(g.max_grad > 1e-4);
}

// Largest |a - b| over two same-shaped matrices (the shapes are REQUIREd equal).
inline float max_abs_diff(const attn::Mat& a, const attn::Mat& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return a.size() ? (a - b).cwiseAbs().maxCoeff() : 0.0f;
}

}  // namespace gradcheck
