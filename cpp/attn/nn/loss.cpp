#include "attn/nn/loss.h"

#include <cmath>

#include "attn/kernels/kernels.h"

namespace attn {

namespace {

void check_targets(const int32_t* targets, Eigen::Index n, Eigen::Index V) {
  for (Eigen::Index i = 0; i < n; ++i)
    require(targets[i] == kIgnoreIndex || (targets[i] >= 0 && targets[i] < V), "target id ",
            targets[i], " at position ", i, " is outside [0, ", V, ")");
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
    // loss_i = lse - x_t, lse = log(sum_j exp(x_j - max)) + max; stable for finite logits.
    // dx_j = softmax_j - [j == t], then / count for the mean.
    const float mx = row_max(row, V);
    if (kGrad) {
      float* e = dlogits->row(i).data();
      const float sum = exp_shifted_sum(row, mx, e, V);  // the exps, reused for the gradient
      total += std::log(sum) + (mx - row[targets[i]]);  // (mx - x_t) first: exact for huge logits
      Eigen::Map<Eigen::ArrayXf>(e, V) *= inv / sum;
      e[targets[i]] -= inv;
    } else {
      total += std::log(exp_shifted_sum(row, mx, nullptr, V)) + (mx - row[targets[i]]);
    }
  }
  return count ? static_cast<float>(total / count) : 0.0f;
}

}  // namespace

float cross_entropy(ConstMatRef logits, const int32_t* targets, MatRef dlogits) {
  require(dlogits.rows() == logits.rows() && dlogits.cols() == logits.cols(),
          "dlogits must have the shape of logits");
  OpTimer timer("cross-entropy");
  return cross_entropy_impl<true>(logits, targets, &dlogits);
}

float token_accuracy(ConstMatRef logits, const int32_t* targets) {
  check_targets(targets, logits.rows(), logits.cols());
  Eigen::Index count = 0, right = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    if (targets[i] == kIgnoreIndex) continue;
    ++count;
    right += row_argmax(logits.row(i).data(), logits.cols()) == targets[i];
  }
  return count ? static_cast<float>(right) / static_cast<float>(count) : std::nanf("");
}

float cross_entropy_loss(ConstMatRef logits, const int32_t* targets) {
  return cross_entropy_impl<false>(logits, targets, nullptr);
}

}  // namespace attn
