#include "attn/nn/attention_map.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "attn/kernels/kernels.h"
#include "attn/nn/positions.h"

namespace attn {

// scores = q k^T * scale (+ bias), masked, padding columns -inf; then the softmax in place.
void attention_map_forward(const AttentionMap& m, ConstMatRef q, ConstMatRef k, MatRef p,
                           int64_t first_row, int64_t first_col, const uint8_t* key_pad,
                           Mat* scores, Eigen::Index scores_row) {
  require(q.cols() == k.cols(), "the map's queries have ", q.cols(), " features, its keys ",
          k.cols());
  require(p.rows() == q.rows() && p.cols() == k.rows(), "the map's weights must be (", q.rows(),
          ",", k.rows(), "), got (", p.rows(), ",", p.cols(), ")");
  matmul_nt(q, k, p, m.scale);  // scores = q k^T / sqrt(Dh)
  if (m.alibi) add_alibi_bias(p, m.alibi_slope, int(first_row), int(first_col));
  if (m.mode == MaskMode::Causal)
    apply_mask_pattern(p, m.pattern, first_row, first_col);
  else
    apply_mask(p, m.mode);
  if (key_pad)
    for (Eigen::Index j = 0; j < p.cols(); ++j)
      if (key_pad[j]) p.col(j).setConstant(-std::numeric_limits<float>::infinity());
  if (scores) scores->block(scores_row, 0, p.rows(), p.cols()) = p;
  softmax_rows(p, p);
}

void attention_map_backward(ConstMatRef probs, ConstMatRef dw, MatRef ds) {
  softmax_rows_backward(probs, dw, ds);  // ds = w * (dw - rowsum(dw * w))
}

// scores = q k^T * scale  =>  dq = ds k * scale, dk = ds^T q * scale.
void attention_scores_backward(const AttentionMap& m, ConstMatRef ds, ConstMatRef q, ConstMatRef k,
                               MatRef dq, MatRef dk, bool accumulate) {
  matmul_nn(ds, k, dq, m.scale);
  if (!accumulate) {
    matmul_tn(ds, q, dk, m.scale);
    return;
  }
  Mat share(dk.rows(), dk.cols());
  matmul_tn(ds, q, share, m.scale);
  dk += share;
}

Mat naive_attention_map(const AttentionMap& m, const Mat& q, const Mat& k, int64_t first_row,
                        int64_t first_col, const uint8_t* key_pad) {
  require(m.mode != MaskMode::Inverted, "the naive map knows the causal pattern and no mask only");
  const Eigen::Index T = q.rows(), S = k.rows();
  Mat p = Mat::Zero(T, S);
  for (Eigen::Index i = 0; i < T; ++i) {
    const int64_t qi = first_row + i;
    std::vector<double> s(size_t(S), 0.0);
    std::vector<bool> seen(size_t(S), true);
    double top = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < S; ++j) {
      const int64_t kj = first_col + j;
      double dot = 0;
      for (Eigen::Index d = 0; d < q.cols(); ++d) dot += double(q(i, d)) * double(k(j, d));
      s[size_t(j)] = dot * m.scale - (m.alibi ? double(m.alibi_slope) * double(std::llabs(qi - kj)) : 0.0);
      bool visible = true;
      if (m.mode == MaskMode::Causal) visible = m.pattern.visible(qi, kj);
      if (key_pad && key_pad[j]) visible = false;
      seen[size_t(j)] = visible;
      if (visible && s[size_t(j)] > top) top = s[size_t(j)];
    }
    double total = 0;
    for (Eigen::Index j = 0; j < S; ++j)
      if (seen[size_t(j)]) total += std::exp(s[size_t(j)] - top);
    for (Eigen::Index j = 0; j < S; ++j)
      if (seen[size_t(j)]) p(i, j) = float(std::exp(s[size_t(j)] - top) / total);
  }
  return p;
}

}  // namespace attn
