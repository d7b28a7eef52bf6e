#include "attn/kernels/ops.h"

#include "attn/kernels/kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

void softmax_rows(ConstMatRef x, MatRef y) {
  OpTimer timer("softmax");
  for (Eigen::Index i = 0; i < x.rows(); ++i) softmax_row(x.row(i).data(), y.row(i).data(), x.cols());
}

void softmax_rows_backward(ConstMatRef y, ConstMatRef dy, MatRef dx) {
  OpTimer timer("softmax backward");
  for (Eigen::Index i = 0; i < y.rows(); ++i)
    softmax_backward_row(y.row(i).data(), dy.row(i).data(), dx.row(i).data(), y.cols());
}

void softmax_rows_causal(MatRef x) {
  OpTimer timer("softmax");
  const Eigen::Index T = x.cols();
  require(x.rows() == T, "softmax_rows_causal expects square scores, got (", x.rows(), ",", T, ")");
  for (Eigen::Index i = 0; i < T; ++i) softmax_row_prefix(x.row(i).data(), i + 1, T);
}

void softmax_rows_backward_causal(ConstMatRef y, ConstMatRef dy, MatRef dx) {
  OpTimer timer("softmax backward");
  const Eigen::Index T = y.cols();
  require(y.rows() == T, "softmax_rows_backward_causal expects square weights, got (", y.rows(),
          ",", T, ")");
  for (Eigen::Index i = 0; i < T; ++i)
    softmax_backward_row_prefix(y.row(i).data(), dy.row(i).data(), dx.row(i).data(), i + 1, T);
}

void softmax_rows_naive(ConstMatRef x, MatRef y) {
  require(y.rows() == x.rows() && y.cols() == x.cols(), "y must be (", x.rows(), ",", x.cols(),
          "), got (", y.rows(), ",", y.cols(), ")");
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    float sum = 0.0f;
    for (Eigen::Index j = 0; j < x.cols(); ++j) sum += (y(i, j) = std::exp(x(i, j)));
    for (Eigen::Index j = 0; j < x.cols(); ++j) y(i, j) /= sum;
  }
}

SoftmaxSteps softmax_steps(const RowVec& x, bool subtract_max) {
  require(x.size() >= 1, "softmax needs at least one logit");
  const float ninf = -std::numeric_limits<float>::infinity();
  SoftmaxSteps st;
  if (subtract_max) {
    st.max = x.maxCoeff();
    if (st.max == ninf) st.max = 0.0f;  // every entry masked: exps 0, weights 0 (below)
  }
  st.shifted = (x.array() - st.max).matrix();
  st.exps.resize(x.size());
  for (Eigen::Index j = 0; j < x.size(); ++j) st.sum += (st.exps[j] = std::exp(st.shifted[j]));
  st.weights = st.exps / st.sum;
  if (subtract_max && st.sum == 0.0f) st.weights.setZero();
  return st;
}

void apply_causal_mask(MatRef scores) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    for (Eigen::Index j = i + 1; j < scores.cols(); ++j) scores(i, j) = ninf;
}

MaskMode parse_mask_mode(const std::string& name) {
  return static_cast<MaskMode>(parse_enum(kMaskModes, name));
}

const char* mask_mode_name(MaskMode mode) { return kMaskModeNames[static_cast<int>(mode)]; }

void apply_mask(MatRef scores, MaskMode mode) {
  if (mode == MaskMode::Causal) apply_causal_mask(scores);
  if (mode != MaskMode::Inverted) return;
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    for (Eigen::Index j = 0; j < i && j < scores.cols(); ++j) scores(i, j) = kBrokenMaskFill;
}

bool MaskPattern::visible(int64_t i, int64_t j) const {
  if (causal && j > i) return false;
  if (window == 0) return true;
  const int64_t lo = i < j ? i : j, hi = i < j ? j : i;
  return hi - lo < window || (stride > 0 && lo % stride == 0);
}

std::vector<uint8_t> visible_keys(const MaskPattern& pattern, int T) {
  require(T >= 1, "the sequence length (", T, ") must be >= 1");
  std::vector<uint8_t> cells(size_t(T) * size_t(T));
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) cells[size_t(i) * size_t(T) + size_t(j)] = pattern.visible(i, j);
  return cells;
}

void apply_mask_pattern(MatRef scores, const MaskPattern& p, int64_t first_row,
                        int64_t first_col) {
  const float ninf = -std::numeric_limits<float>::infinity();
  if (p.window == 0) {
    if (!p.causal) return;
    for (Eigen::Index r = 0; r < scores.rows(); ++r)  // keys j > i
      for (Eigen::Index c = std::max<int64_t>(0, first_row + r + 1 - first_col); c < scores.cols();
           ++c)
        scores(r, c) = ninf;
    return;
  }
  for (Eigen::Index r = 0; r < scores.rows(); ++r)
    for (Eigen::Index c = 0; c < scores.cols(); ++c)
      if (!p.visible(first_row + r, first_col + c)) scores(r, c) = ninf;
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
  require_config(std::isfinite(p) && p >= 0.0f && p < 1.0f, name, name, " (", p,
                 ") must be in [0, 1)");
}

}  // namespace attn
