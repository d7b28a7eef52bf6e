// Single-head scaled dot-product attention: the curriculum's NumPy lesson in C++.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/base/rng.h"
#include "attn/base/tensor.h"

namespace attn {

// Q (T,dk), K (S,dk), V (S,dv) -> output (T,dv), weights (T,S).
struct AttentionResult {
  Mat output;   // (T,dv)
  Mat weights;  // (T,S), rows sum to 1; masked cells are exactly 0
};

// weights = softmax(Q K^T / sqrt(dk) [+ causal mask]); output = weights V.
// Causal needs T == S. Throws std::invalid_argument on mismatched shapes.
AttentionResult scaled_dot_product_attention(ConstMatRef Q, ConstMatRef K, ConstMatRef V,
                                             bool causal);

// Gradients of scaled_dot_product_attention, given its inputs, its weights and dout (T,dv).
struct AttentionGrads {
  Mat dQ;  // (T,dk)
  Mat dK;  // (S,dk)
  Mat dV;  // (S,dv)
};
AttentionGrads scaled_dot_product_attention_backward(ConstMatRef Q, ConstMatRef K, ConstMatRef V,
                                                     ConstMatRef weights, ConstMatRef dout);

// The same forward written as plain loops, kept as the reference the tests compare against.
AttentionResult naive_attention(const Mat& Q, const Mat& K, const Mat& V, bool causal);

// Every intermediate of one head, for the step-by-step view. X (T,D), Wq/Wk (D,dk), Wv (D,dv).
struct AttentionStages {
  Mat Q, K, V;        // (T,dk), (T,dk), (T,dv)
  Mat scores;         // Q K^T (T,T)
  Mat scaled_scores;  // scores / sqrt(dk)
  Mat masked_scores;  // scaled_scores with -inf above the diagonal when causal, else equal
  Mat weights;        // softmax(masked_scores) (T,T)
  Mat output;         // weights V (T,dv)
};
AttentionStages self_attention_stages(ConstMatRef X, ConstMatRef Wq, ConstMatRef Wk,
                                      ConstMatRef Wv, bool causal);

// The NumPy lesson's multi-head self-attention: H heads, each with its own projections (the
// single-head stages above), their outputs concatenated along the features, then mixed by an
// output projection without bias: output = concat(out_0, ..., out_{H-1}) Wo.
// X (T,D); per head Wq[h], Wk[h] (D,dk) and Wv[h] (D,dv), the same dk and dv for every head;
// Wo (H*dv, D_out). Throws std::invalid_argument on mismatched shapes or no head.
struct MultiHeadStages {
  std::vector<AttentionStages> heads;  // (H) every intermediate of each head
  Mat concat;                          // (T,H*dv) columns [h*dv, (h+1)*dv) are head h's output
  Mat output;                          // (T,D_out) concat Wo
};
MultiHeadStages multi_head_self_attention(ConstMatRef X, const std::vector<Mat>& Wq,
                                          const std::vector<Mat>& Wk, const std::vector<Mat>& Wv,
                                          ConstMatRef Wo, bool causal);

// ---- The lesson view's extras: a mask drawn cell by cell, and positions added to X.

// A mask drawn cell by cell: (T,T) row-major, nonzero = query i may not read key j (its score
// becomes -inf). Empty = no mask. A row with every cell masked gets weights 0 and so output 0
// (softmax_rows' rule for an all -inf row), never NaN.
using CellMask = std::vector<uint8_t>;
// The causal mask as cells: (i, j) masked when j > i.
CellMask causal_cells(int T);
// As above with any mask; mask must be empty or hold T*T cells. masked_scores has -inf at the
// masked cells. The bool overloads are these with causal_cells(T) or no mask.
AttentionStages self_attention_stages(ConstMatRef X, ConstMatRef Wq, ConstMatRef Wk,
                                      ConstMatRef Wv, const CellMask& mask);
MultiHeadStages multi_head_self_attention(ConstMatRef X, const std::vector<Mat>& Wq,
                                          const std::vector<Mat>& Wk, const std::vector<Mat>& Wv,
                                          ConstMatRef Wo, const CellMask& mask);

// E (T,D) -> X = E + P, P = the first T rows of the sinusoidal table (T,D) of
// SinusoidalPositionalEmbedding. D must be even. The same word then has a different row of X at
// each position.
struct PositionedInput {
  Mat positions;  // P (T,D)
  Mat X;          // E + P (T,D)
};
PositionedInput add_sinusoidal_positions(ConstMatRef E);

// The lesson's SelfAttention class: projections in NumPy layout (X @ W).
// Init: Wq, Wk ~ N(0, sqrt(2/(d_model+dk))), Wv ~ N(0, sqrt(2/(d_model+dv))).
class SelfAttention {
 public:
  SelfAttention(int d_model, int dk, int dv, uint64_t seed);

  // X (T,D) -> output (T,dv), weights (T,T); caches X, Q, K, V, weights.
  AttentionResult forward(ConstMatRef X, bool causal = false);

  // dout (T,dv) -> dX (T,D); overwrites dWq, dWk, dWv. Reads the cache of the last forward.
  Mat backward(ConstMatRef dout);

  int d_model, dk, dv;
  Mat Wq, Wk, Wv;     // (D,dk), (D,dk), (D,dv)
  Mat dWq, dWk, dWv;  // same shapes

 private:
  Mat X_, Q_, K_, V_, weights_;
};

// The lesson on why scores are divided by sqrt(dk): one query q and n_keys keys k_j of width dk,
// every entry drawn N(0, 1) from Rng(seed) (q first, then the keys row by row). The scores
// q . k_j have a spread that grows like sqrt(dk); the softmax of the raw scores then puts nearly
// all of the row on one key, while the softmax of scores / sqrt(dk) keeps the same spread at any
// dk. Both softmaxes are softmax_steps' stable recipe. Entropies are in nats (0 log 0 = 0).
// dk in [1, kMaxScalingDk], n_keys in [2, kMaxScalingKeys]; else an Error of kind Input.
constexpr int kMaxScalingDk = 64, kMaxScalingKeys = 16;
struct ScalingDemo {
  RowVec query;               // (dk)
  Mat keys;                   // (n_keys, dk)
  RowVec scores;              // (n_keys) q . k_j
  RowVec scaled_scores;       // (n_keys) scores / sqrt(dk)
  RowVec weights_unscaled;    // softmax(scores)
  RowVec weights_scaled;      // softmax(scaled_scores)
  float max_unscaled = 0.0f;  // largest weight of each softmax
  float max_scaled = 0.0f;
  float entropy_unscaled = 0.0f;  // -sum w log w of each softmax
  float entropy_scaled = 0.0f;
};
ScalingDemo scaling_demo(int dk, int n_keys, uint64_t seed);

// -sum_j w_j log w_j (nats) of a row of weights; entries <= 0 add nothing.
float entropy_of(const RowVec& w);

}  // namespace attn
