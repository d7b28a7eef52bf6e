#include "attn/ops.h"

#include <cmath>
#include <limits>

namespace attn {

void softmax_rows(ConstMatRef x, MatRef y) {
  const Eigen::Index R = x.rows(), S = x.cols();
  for (Eigen::Index i = 0; i < R; ++i) {
    const float* xr = x.row(i).data();
    float* yr = y.row(i).data();
    float mx = -std::numeric_limits<float>::infinity();
    for (Eigen::Index j = 0; j < S; ++j) mx = xr[j] > mx ? xr[j] : mx;
    if (mx == -std::numeric_limits<float>::infinity()) {  // fully masked row
      for (Eigen::Index j = 0; j < S; ++j) yr[j] = 0.0f;
      continue;
    }
    // Vectorised exp; its clamp makes exp(-inf) tiny rather than 0, so masked cells are
    // selected to exactly 0.
    const Eigen::Map<const Eigen::ArrayXf> x_row(xr, S);
    Eigen::Map<Eigen::ArrayXf> y_row(yr, S);
    y_row = (x_row == -std::numeric_limits<float>::infinity()).select(0.0f, (x_row - mx).exp());
    y_row *= 1.0f / y_row.sum();
  }
}

// Backward of: y_j = exp(x_j) / sum_k exp(x_k).
// dL/dx_j = sum_i dy_i * y_i * (delta_ij - y_j) = y_j * (dy_j - sum_i dy_i * y_i).
void softmax_rows_backward(ConstMatRef y, ConstMatRef dy, MatRef dx) {
  const Eigen::Index R = y.rows(), S = y.cols();
  for (Eigen::Index i = 0; i < R; ++i) {
    const float* yr = y.row(i).data();
    const float* dyr = dy.row(i).data();
    float* dxr = dx.row(i).data();
    float dot = 0.0f;
    for (Eigen::Index j = 0; j < S; ++j) dot += dyr[j] * yr[j];
    for (Eigen::Index j = 0; j < S; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
  }
}

void apply_causal_mask(MatRef scores) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    for (Eigen::Index j = i + 1; j < scores.cols(); ++j) scores(i, j) = ninf;
}

void dropout_forward(MatRef x, MatRef mask, float p, Rng& rng) {
  const float scale = 1.0f / (1.0f - p);
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float m = rng.uniform() < p ? 0.0f : scale;
      mask(i, j) = m;
      x(i, j) *= m;
    }
}

void check_dropout_p(const char* name, float p) {
  require(std::isfinite(p) && p >= 0.0f && p < 1.0f, name, " (", p, ") must be in [0, 1)");
}

}  // namespace attn
