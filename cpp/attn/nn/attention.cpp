#include "attn/nn/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/kernels/ops.h"
#include "attn/nn/embedding.h"

namespace attn {

namespace {

void check_qkv(ConstMatRef Q, ConstMatRef K, ConstMatRef V, bool causal) {
  require(Q.rows() >= 1 && Q.cols() >= 1, "Q must be non-empty, got (", Q.rows(), ",", Q.cols(),
          ")");
  require(K.cols() == Q.cols(), "K has ", K.cols(), " columns but Q has ", Q.cols());
  require(V.rows() == K.rows(), "V has ", V.rows(), " rows but K has ", K.rows());
  require(!causal || Q.rows() == K.rows(), "causal attention needs as many queries (", Q.rows(),
          ") as keys (", K.rows(), ")");
}

}  // namespace

AttentionResult scaled_dot_product_attention(ConstMatRef Q, ConstMatRef K, ConstMatRef V,
                                             bool causal) {
  check_qkv(Q, K, V, causal);
  AttentionResult r;
  const float scale = 1.0f / std::sqrt(static_cast<float>(Q.cols()));
  r.weights.noalias() = Q * K.transpose();
  r.weights *= scale;
  if (causal) apply_causal_mask(r.weights);
  softmax_rows(r.weights, r.weights);
  r.output.noalias() = r.weights * V;
  return r;
}

// Forward: S = Q K^T * scale; W = softmax(S); O = W V.
AttentionGrads scaled_dot_product_attention_backward(ConstMatRef Q, ConstMatRef K, ConstMatRef V,
                                                     ConstMatRef weights, ConstMatRef dout) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(Q.cols()));
  AttentionGrads g;
  g.dV.noalias() = weights.transpose() * dout;  // O = W V  =>  dV = W^T dO
  Mat dW = dout * V.transpose();                //          =>  dW = dO V^T
  softmax_rows_backward(weights, dW, dW);       // dS (masked cells have W = 0, so dS = 0)
  g.dQ.noalias() = dW * K;                      // S = Q K^T * scale  =>  dQ = dS K * scale
  g.dQ *= scale;
  g.dK.noalias() = dW.transpose() * Q;          //                    =>  dK = dS^T Q * scale
  g.dK *= scale;
  return g;
}

AttentionResult naive_attention(const Mat& Q, const Mat& K, const Mat& V, bool causal) {
  check_qkv(Q, K, V, causal);
  const Eigen::Index T = Q.rows(), S = K.rows(), dk = Q.cols(), dv = V.cols();
  AttentionResult r{Mat::Zero(T, dv), Mat::Zero(T, S)};
  for (Eigen::Index i = 0; i < T; ++i) {
    std::vector<double> s(S);
    double mx = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < S; ++j) {
      if (causal && j > i) continue;
      double dot = 0;
      for (Eigen::Index c = 0; c < dk; ++c) dot += double(Q(i, c)) * K(j, c);
      s[j] = dot / std::sqrt(double(dk));
      mx = std::max(mx, s[j]);
    }
    double sum = 0;
    for (Eigen::Index j = 0; j < S; ++j) {
      s[j] = (causal && j > i) ? 0.0 : std::exp(s[j] - mx);
      sum += s[j];
    }
    for (Eigen::Index j = 0; j < S; ++j) {
      r.weights(i, j) = static_cast<float>(s[j] / sum);
      for (Eigen::Index c = 0; c < dv; ++c) r.output(i, c) += static_cast<float>(s[j] / sum * V(j, c));
    }
  }
  return r;
}

CellMask causal_cells(int T) {
  CellMask m(size_t(std::max(T, 0)) * size_t(std::max(T, 0)), 0);
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) m[size_t(i) * size_t(T) + size_t(j)] = 1;
  return m;
}

AttentionStages self_attention_stages(ConstMatRef X, ConstMatRef Wq, ConstMatRef Wk,
                                      ConstMatRef Wv, bool causal) {
  return self_attention_stages(X, Wq, Wk, Wv, causal ? causal_cells(int(X.rows())) : CellMask{});
}

AttentionStages self_attention_stages(ConstMatRef X, ConstMatRef Wq, ConstMatRef Wk,
                                      ConstMatRef Wv, const CellMask& mask) {
  require(X.rows() >= 1 && X.cols() >= 1, "X must be non-empty, got (", X.rows(), ",", X.cols(),
          ")");
  require(Wq.rows() == X.cols(), "Wq has ", Wq.rows(), " rows but X has ", X.cols(), " columns");
  require(Wk.rows() == X.cols(), "Wk has ", Wk.rows(), " rows but X has ", X.cols(), " columns");
  require(Wv.rows() == X.cols(), "Wv has ", Wv.rows(), " rows but X has ", X.cols(), " columns");
  require(Wq.cols() >= 1 && Wq.cols() == Wk.cols(), "Wq and Wk must have the same dk >= 1, got ",
          Wq.cols(), " and ", Wk.cols());
  require(Wv.cols() >= 1, "Wv must have dv >= 1 columns");
  const size_t T = size_t(X.rows());
  require(mask.empty() || mask.size() == T * T, "the mask has ", mask.size(),
          " cells but T * T = ", T, " * ", T, " = ", T * T);
  AttentionStages st;
  st.Q.noalias() = X * Wq;
  st.K.noalias() = X * Wk;
  st.V.noalias() = X * Wv;
  st.scores.noalias() = st.Q * st.K.transpose();
  st.scaled_scores = st.scores * (1.0f / std::sqrt(static_cast<float>(Wq.cols())));
  st.masked_scores = st.scaled_scores;
  const float ninf = -std::numeric_limits<float>::infinity();
  for (size_t c = 0; c < mask.size(); ++c)
    if (mask[c]) st.masked_scores(Eigen::Index(c / T), Eigen::Index(c % T)) = ninf;
  st.weights.resize(st.masked_scores.rows(), st.masked_scores.cols());
  softmax_rows(st.masked_scores, st.weights);  // a fully masked row: weights 0, output 0
  st.output.noalias() = st.weights * st.V;
  return st;
}

MultiHeadStages multi_head_self_attention(ConstMatRef X, const std::vector<Mat>& Wq,
                                          const std::vector<Mat>& Wk, const std::vector<Mat>& Wv,
                                          ConstMatRef Wo, bool causal) {
  return multi_head_self_attention(X, Wq, Wk, Wv, Wo,
                                   causal ? causal_cells(int(X.rows())) : CellMask{});
}

MultiHeadStages multi_head_self_attention(ConstMatRef X, const std::vector<Mat>& Wq,
                                          const std::vector<Mat>& Wk, const std::vector<Mat>& Wv,
                                          ConstMatRef Wo, const CellMask& mask) {
  const size_t H = Wq.size();
  require(H >= 1, "multi-head attention needs at least one head");
  require(Wk.size() == H && Wv.size() == H, "got ", H, " Wq, ", Wk.size(), " Wk and ", Wv.size(),
          " Wv; expected one of each per head");
  const Eigen::Index dk = Wq[0].cols(), dv = Wv[0].cols();
  for (size_t h = 0; h < H; ++h)
    require(Wq[h].cols() == dk && Wk[h].cols() == dk && Wv[h].cols() == dv, "head ", h,
            " has dk ", Wq[h].cols(), "/", Wk[h].cols(), " and dv ", Wv[h].cols(),
            "; every head must have head 0's dk ", dk, " and dv ", dv);
  require(Wo.rows() == Eigen::Index(H) * dv && Wo.cols() >= 1, "Wo has shape (", Wo.rows(), ",",
          Wo.cols(), ") but the concatenated heads have ", Eigen::Index(H) * dv, " columns");
  MultiHeadStages m;
  m.concat.resize(X.rows(), Eigen::Index(H) * dv);
  for (size_t h = 0; h < H; ++h) {
    m.heads.push_back(self_attention_stages(X, Wq[h], Wk[h], Wv[h], mask));
    m.concat.middleCols(Eigen::Index(h) * dv, dv) = m.heads.back().output;
  }
  m.output.noalias() = m.concat * Wo;  // no bias
  return m;
}

PositionedInput add_sinusoidal_positions(ConstMatRef E) {
  require(E.rows() >= 1 && E.cols() >= 2 && E.cols() % 2 == 0,
          "positions need a non-empty E with an even width, got (", E.rows(), ",", E.cols(), ")");
  const SinusoidalPositionalEmbedding pe(int(E.rows()), int(E.cols()));
  PositionedInput r{pe.table, Mat()};
  r.X = E + r.positions;
  return r;
}

SelfAttention::SelfAttention(int d_model_, int dk_, int dv_, uint64_t seed)
    : d_model(d_model_), dk(dk_), dv(dv_) {
  require_config(d_model >= 1, "d_model", "d_model (", d_model, ") must be >= 1");
  require_config(dk >= 1, "dk", "dk (", dk, ") must be >= 1");
  require_config(dv >= 1, "dv", "dv (", dv, ") must be >= 1");
  Rng rng(seed);
  const float sqk = static_cast<float>(std::sqrt(2.0 / (d_model + dk)));
  const float sv = static_cast<float>(std::sqrt(2.0 / (d_model + dv)));
  Wq.resize(d_model, dk);
  Wk.resize(d_model, dk);
  Wv.resize(d_model, dv);
  for (Eigen::Index i = 0; i < Wq.size(); ++i) Wq.data()[i] = rng.normal() * sqk;
  for (Eigen::Index i = 0; i < Wk.size(); ++i) Wk.data()[i] = rng.normal() * sqk;
  for (Eigen::Index i = 0; i < Wv.size(); ++i) Wv.data()[i] = rng.normal() * sv;
  dWq = Mat::Zero(d_model, dk);
  dWk = Mat::Zero(d_model, dk);
  dWv = Mat::Zero(d_model, dv);
}

AttentionResult SelfAttention::forward(ConstMatRef X, bool causal) {
  require(X.cols() == d_model, "expected feature dim ", d_model, ", got ", X.cols());
  require(X.rows() >= 1, "sequence length (", X.rows(), ") must be >= 1");
  X_ = X;
  Q_.noalias() = X * Wq;
  K_.noalias() = X * Wk;
  V_.noalias() = X * Wv;
  AttentionResult r = scaled_dot_product_attention(Q_, K_, V_, causal);
  weights_ = r.weights;
  return r;
}

// Forward: Q = X Wq, K = X Wk, V = X Wv  =>  dW* = X^T d*, dX = dQ Wq^T + dK Wk^T + dV Wv^T.
Mat SelfAttention::backward(ConstMatRef dout) {
  require(dout.rows() == X_.rows() && dout.cols() == dv, "dout must be (", X_.rows(), ",", dv,
          "), got (", dout.rows(), ",", dout.cols(), ")");
  AttentionGrads g = scaled_dot_product_attention_backward(Q_, K_, V_, weights_, dout);
  dWq.noalias() = X_.transpose() * g.dQ;
  dWk.noalias() = X_.transpose() * g.dK;
  dWv.noalias() = X_.transpose() * g.dV;
  Mat dX(X_.rows(), d_model);
  dX.noalias() = g.dQ * Wq.transpose();
  dX.noalias() += g.dK * Wk.transpose();
  dX.noalias() += g.dV * Wv.transpose();
  return dX;
}

float entropy_of(const RowVec& w) {
  float h = 0.0f;
  for (Eigen::Index j = 0; j < w.size(); ++j)
    if (w[j] > 0.0f) h -= w[j] * std::log(w[j]);
  return h;
}

ScalingDemo scaling_demo(int dk, int n_keys, uint64_t seed) {
  require(dk >= 1 && dk <= kMaxScalingDk, "dk (", dk, ") must be in [1, ", kMaxScalingDk, "]");
  require(n_keys >= 2 && n_keys <= kMaxScalingKeys, "the number of keys (", n_keys,
          ") must be in [2, ", kMaxScalingKeys, "]");
  Rng rng(seed);
  ScalingDemo d;
  d.query.resize(dk);
  for (Eigen::Index i = 0; i < d.query.size(); ++i) d.query[i] = rng.normal();
  d.keys.resize(n_keys, dk);
  for (Eigen::Index j = 0; j < d.keys.rows(); ++j)
    for (Eigen::Index i = 0; i < d.keys.cols(); ++i) d.keys(j, i) = rng.normal();
  d.scores = (d.keys * d.query.transpose()).transpose();
  d.scaled_scores = d.scores / std::sqrt(static_cast<float>(dk));
  d.weights_unscaled = softmax_steps(d.scores, /*subtract_max=*/true).weights;
  d.weights_scaled = softmax_steps(d.scaled_scores, /*subtract_max=*/true).weights;
  d.max_unscaled = d.weights_unscaled.maxCoeff();
  d.max_scaled = d.weights_scaled.maxCoeff();
  d.entropy_unscaled = entropy_of(d.weights_unscaled);
  d.entropy_scaled = entropy_of(d.weights_scaled);
  return d;
}

}  // namespace attn
