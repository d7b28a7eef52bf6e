#include "attn/loss.h"

#include <cmath>

namespace attn {

namespace {

void check_targets(const int32_t* targets, Eigen::Index n, Eigen::Index V) {
  for (Eigen::Index i = 0; i < n; ++i)
    require(targets[i] == kIgnoreIndex || (targets[i] >= 0 && targets[i] < V), "target id ",
            targets[i], " at position ", i, " is outside [0, ", V, ")");
}

// log(sum(exp(row - max))) + max, stable for any finite row.
float row_logsumexp(const float* row, Eigen::Index V, float& mx) {
  mx = row[0];
  for (Eigen::Index j = 1; j < V; ++j) mx = row[j] > mx ? row[j] : mx;
  float sum = 0.0f;
  for (Eigen::Index j = 0; j < V; ++j) sum += std::exp(row[j] - mx);
  return std::log(sum) + mx;
}

template <bool kGrad>
float cross_entropy_impl(ConstMatRef logits, const int32_t* targets, MatRef* dlogits) {
  const Eigen::Index N = logits.rows(), V = logits.cols();
  check_targets(targets, N, V);
  Eigen::Index count = 0;
  for (Eigen::Index i = 0; i < N; ++i) count += targets[i] != kIgnoreIndex;
  double total = 0.0;
  const float inv = count ? 1.0f / static_cast<float>(count) : 0.0f;
  for (Eigen::Index i = 0; i < N; ++i) {
    const float* row = logits.row(i).data();
    if (targets[i] == kIgnoreIndex) {
      if (kGrad) dlogits->row(i).setZero();
      continue;
    }
    float mx;
    const float lse = row_logsumexp(row, V, mx);
    total += lse - row[targets[i]];
    if (kGrad) {
      // loss_i = lse - x_t  =>  dx_j = softmax_j - [j == t], then / count for the mean.
      float* d = dlogits->row(i).data();
      for (Eigen::Index j = 0; j < V; ++j) d[j] = std::exp(row[j] - lse) * inv;
      d[targets[i]] -= inv;
    }
  }
  return count ? static_cast<float>(total / count) : 0.0f;
}

}  // namespace

float cross_entropy(ConstMatRef logits, const int32_t* targets, MatRef dlogits) {
  require(dlogits.rows() == logits.rows() && dlogits.cols() == logits.cols(),
          "dlogits must have the shape of logits");
  return cross_entropy_impl<true>(logits, targets, &dlogits);
}

float cross_entropy_loss(ConstMatRef logits, const int32_t* targets) {
  return cross_entropy_impl<false>(logits, targets, nullptr);
}

}  // namespace attn
