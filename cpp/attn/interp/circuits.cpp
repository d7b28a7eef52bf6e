#include "attn/interp/circuits.h"

#include <algorithm>
#include <cmath>

#include "attn/base/rng.h"
#include "attn/data/tasks.h"

namespace attn {

float ScoreSum::mean() const { return count ? static_cast<float>(sum / double(count)) : std::nanf(""); }

namespace {

void check_weights(ConstMatRef weights, int B, int H, int T) {
  require(B >= 1 && H >= 1 && T >= 1 && weights.rows() == Eigen::Index(B) * H * T &&
              weights.cols() == T,
          "attention weights are (", weights.rows(), ",", weights.cols(), "), expected (B*H*T,T) = (",
          int64_t(B) * H * T, ",", T, ")");
}

void check_head(const MultiHeadSelfAttention& layer, int h) {
  require(h >= 0 && h < layer.n_heads, "head (", h, ") must be in [0, ", layer.n_heads - 1, "]");
}

}  // namespace

void add_previous_token(ConstMatRef weights, int B, int H, int T, ScoreSum* per_head) {
  check_weights(weights, B, H, T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const Eigen::Index base = (Eigen::Index(b) * H + h) * T;
      for (int i = 1; i < T; ++i) per_head[h].sum += weights(base + i, i - 1);
      per_head[h].count += T - 1;
    }
}

void add_prefix_matching(ConstMatRef weights, const int32_t* ids, int B, int H, int T,
                         ScoreSum* per_head) {
  check_weights(weights, B, H, T);
  for (int b = 0; b < B; ++b) {
    const Repeat r = find_repeat(ids + int64_t(b) * T, T);
    if (!r.found()) continue;
    for (int h = 0; h < H; ++h) {
      const Eigen::Index base = (Eigen::Index(b) * H + h) * T;
      for (int i = 0; i < r.length; ++i)
        per_head[h].sum += weights(base + r.second + i, r.first + i + 1);
      per_head[h].count += r.length;
    }
  }
}

Mat qk_circuit(const MultiHeadSelfAttention& layer, int h) {
  check_head(layer, h);
  const int Dh = layer.d_head;
  const auto wq = layer.qkv_proj.weight.middleRows(layer.q_offset(h), Dh);  // (W_Q^h)^T (Dh,D)
  const auto wk = layer.qkv_proj.weight.middleRows(layer.k_offset(h), Dh);  // (W_K^h)^T (Dh,D)
  return wq.transpose() * wk;
}

Mat ov_circuit(const MultiHeadSelfAttention& layer, int h) {
  check_head(layer, h);
  const int Dh = layer.d_head;
  const auto wv = layer.qkv_proj.weight.middleRows(layer.v_offset(h), Dh);  // (W_V^h)^T (Dh,D)
  const auto wo = layer.out_proj.weight.middleCols(h * Dh, Dh);          // (W_O^h)^T (D,Dh)
  return wv.transpose() * wo.transpose();
}

float k_composition(ConstMatRef w_qk, ConstMatRef w_ov) {
  require(w_qk.rows() == w_qk.cols() && w_ov.rows() == w_ov.cols() && w_qk.rows() == w_ov.rows(),
          "k_composition needs two (D,D) matrices, got (", w_qk.rows(), ",", w_qk.cols(), ") and (",
          w_ov.rows(), ",", w_ov.cols(), ")");
  const double norms = double(w_qk.norm()) * double(w_ov.norm());
  if (norms == 0.0) return 0.0f;
  const Mat product = w_qk * w_ov.transpose();
  return static_cast<float>(double(product.norm()) / norms);
}

float k_composition_baseline(int D, int Dh, int samples, uint64_t seed) {
  require(D >= 1 && Dh >= 1 && samples >= 1, "k_composition_baseline needs D, Dh, samples >= 1, got ",
          D, ", ", Dh, ", ", samples);
  Rng rng(seed);
  Mat wq(D, Dh), wk(D, Dh), wv(D, Dh), wo(Dh, D);
  const auto fill = [&](Mat& m) {
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  };
  double total = 0.0;
  for (int s = 0; s < samples; ++s) {
    fill(wq);
    fill(wk);
    fill(wv);
    fill(wo);
    const Mat qk = wq * wk.transpose();
    const Mat ov = wv * wo;
    total += k_composition(qk, ov);
  }
  return static_cast<float>(total / samples);
}

void PhaseChangeDetector::restart(int64_t stride) {
  stride_ = stride;
  seen_ = 0;
  cumsum_.assign(1, 0.0);
  smooth_.clear();
  plateau_level_ = 0.0f;
  plateau_end_ = -1;
}

int64_t PhaseChangeDetector::update(const float* losses, size_t n, int64_t stride) {
  require(stride >= 1, "history stride (", stride, ") must be >= 1");
  if (step_ >= 0) return step_;
  if (stride != stride_ || n < seen_) restart(stride);
  // The rule's step counts as history entries (at least one each).
  const auto entries = [&](int steps) { return std::max<int64_t>(1, (steps + stride - 1) / stride); };
  const int64_t W = entries(rule_.smooth_steps), P = entries(rule_.plateau_steps);
  const int64_t window = entries(rule_.window_steps);
  for (; seen_ < n; ++seen_) {
    cumsum_.push_back(cumsum_.back() + double(losses[seen_]));
    const int64_t k = int64_t(seen_);
    if (k + 1 < W) continue;
    const float s = static_cast<float>((cumsum_[size_t(k + 1)] - cumsum_[size_t(k + 1 - W)]) / double(W));
    smooth_.push_back(s);
    if (plateau_end_ >= 0 && k - plateau_end_ <= window && s <= (1.0f - rule_.drop) * plateau_level_) {
      step_ = k * stride + 1;
      return step_;
    }
    if (int64_t(smooth_.size()) < P) continue;
    const auto first = smooth_.end() - P;
    const auto [lo, hi] = std::minmax_element(first, smooth_.end());
    double mean = 0.0;
    for (auto it = first; it != smooth_.end(); ++it) mean += *it;
    mean /= double(P);
    if (*hi - *lo <= rule_.flatness * mean && mean >= rule_.still_high * smooth_.front()) {
      plateau_level_ = static_cast<float>(mean);
      plateau_end_ = k;
    }
  }
  return step_;
}

}  // namespace attn
