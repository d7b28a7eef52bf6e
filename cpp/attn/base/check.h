// Numerical comparisons shared by the self-test panel (selftest.cpp) and the Catch2 suite
// (tests/cpp/compare.h and gradcheck.h wrap these in CHECKs): ours against a reference entry by
// entry, and analytic gradients against central differences, as llm.c's check_tensor and
// fakeloss do. Each keeps the largest difference and the first few offenders for a report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/base/tensor.h"

namespace attn {

// An entry passes when |ours - ref| <= abs + rel * magnitude, the magnitude being |ref| for a
// comparison with a reference and max(|analytic|, |numeric|) for a gradient.
struct Tolerance {
  double abs, rel;
};

// Finite differences of float32 forwards: the central-difference step, and the tolerance for a
// gradient of one layer (the float rounding of the outputs, summed against dout and divided by
// 2*eps, leaves up to ~3e-4 of noise in a numeric gradient of size ~1).
constexpr float kGradcheckEps = 1e-3f;
constexpr double kGradcheckAbsTol = 1e-3;
constexpr double kGradcheckRelTol = 2e-2;

// ---- ours against a reference

struct Closeness {
  size_t n = 0;               // values compared
  double max_abs_diff = 0.0;  // largest |ours - ref| (the first NaN difference, if any)
  // Largest |ours - ref| / (abs + rel * |ref|): 1 is the edge of the tolerance (NaN kept).
  double max_error = 0.0;
  size_t bad = 0;             // entries out of tolerance (a NaN difference counts as bad)
  std::string first_bad;      // the first few offenders: " [i] ours x <ref_name> y;" each
};

// max that keeps a NaN from either side (std::max drops it on one side), so a NaN anywhere in a
// running maximum shows in the result.
double nan_max(double a, double b);

// Compares n values of ours with ref, listing up to show offenders under the name ref_name.
Closeness compare_close(const float* ours, const float* ref, size_t n, Tolerance tol,
                        size_t show = 4, const char* ref_name = "ref");

// ---- analytic gradients against central differences

// llm.c's fakeloss: sum(out * dout), accumulated in double; its gradient with respect to out is
// dout. Throws an Error of kind Input if the shapes differ.
double fakeloss(const Mat& out, const Mat& dout);

// The central difference (loss(v + eps) - loss(v - eps)) / step of loss() with respect to
// *value, where step is the float step actually taken (rounding makes it differ from 2*eps).
// loss() must recompute the loss from *value; *value is restored exactly afterwards.
double central_difference(float* value, const std::function<double()>& loss,
                          float eps = kGradcheckEps);

struct GradientMismatch {
  int64_t index;
  double analytic, numeric;
};

struct GradientCheck {
  size_t checked = 0;               // entries probed
  double max_abs_diff = 0.0;        // largest |analytic - numeric|
  int64_t max_abs_diff_at = -1;     // its index (-1 when no entry was probed)
  double max_grad = 0.0;            // largest max(|analytic|, |numeric|) (NaN kept)
  // Largest |a - n| / (abs + rel * max(|a|, |n|)): 1 is the edge of the tolerance (NaN kept),
  // at index max_error_at, where the gradients were analytic_at and numeric_at.
  double max_error = 0.0;
  int64_t max_error_at = -1;
  double analytic_at = 0.0, numeric_at = 0.0;
  size_t bad = 0;                         // entries out of tolerance (NaN counts as bad)
  std::vector<GradientMismatch> first_bad;  // the first few of them
};

// Compares analytic[i] with the central difference of loss() at value[i], for every i in idx
// (all of [0, n) when idx is empty). analytic is copied first, so loss() may overwrite the
// gradient buffers; loss() must recompute the loss from value and change nothing else.
GradientCheck check_gradient(float* value, const float* analytic, int64_t n,
                             const std::function<double()>& loss,
                             const std::vector<int64_t>& idx = {},
                             Tolerance tol = {kGradcheckAbsTol, kGradcheckRelTol},
                             size_t show = 5, float eps = kGradcheckEps);

}  // namespace attn
