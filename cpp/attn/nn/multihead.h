// Multi-head causal self-attention with a fused QKV projection (the curriculum's PyTorch layer),
// optionally with grouped K/V heads, RoPE and ALiBi, a bidirectional, sliding-window or strided
// mask, and differential attention (the course's later lessons): its parameters, training forward
// and backward. Incremental decoding over a KV cache is kv_cache.h; one head's row, head_row.h.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/kernels/ops.h"
#include "attn/nn/attention_map.h"
#include "attn/nn/linear.h"
#include "attn/nn/positions.h"
#include "attn/nn/report.h"
#include "attn/nn/tiled_attention.h"

namespace attn {

// The sequence length from which callers that need no attention weights run the layer tile by
// tile (State::tiled): a training step and an evaluation at length. Measured faster from about
// here (bench/README.md), and it never holds the (T,T) matrices, which grow as T^2.
constexpr int kTiledMinLength = 256;

// The layer's variants beyond the curriculum. The defaults are the curriculum's layer exactly:
// the same draws, the same code path, the same numbers.
struct AttentionOptions {
  // K/V heads (KV); 0 means n_heads. Must divide n_heads; query head h reads K/V head
  // h / (H / KV), so 1 is multi-query attention.
  int kv_heads = 0;
  // Rotate each head's q and k by position (Rope, positions.h) before the scores.
  bool rope = false;
  // Add ALiBi's bias -m_h |i - j| (positions.h) to head h's scores before the mask.
  bool alibi = false;
  // Which keys each query sees (MaskPattern, ops.h): causal by default; bidirectional for a
  // masked language model; a sliding window or a strided pattern.
  MaskPattern pattern;
  // Differential attention: each head has two query and two key projections and a learned
  // lambda; its weights are softmax(s1) - lambda softmax(s2), s1 = q1 k1^T * scale and s2 = q2
  // k2^T * scale each biased (ALiBi) and masked as one map is, so every row sums to 1 - lambda.
  // Both maps weigh the same values v.
  bool differential = false;
  // Biases on qkv_proj and out_proj (false: torch's bias=False, as the course's capstone).
  bool bias = true;
};

// A differential head's lambda at initialisation: the course's code uses the fixed 0.5.
constexpr float kDiffLambdaInit = 0.5f;

class MultiHeadSelfAttention {
 public:
  // Forward cache and backward workspace for one (B,T). Sized on first use; reusing it for the
  // same (B,T) allocates nothing.
  struct State {
    // Set before forward() to inspect heads (head_row): forward then keeps every head's scores,
    // and backward every head's dweights and dscores, instead of one head's at a time.
    bool inspect = false;
    int B = 0, T = 0;
    Mat x;          // (N,D) input, copied for backward
    // (N,W) fused projection, W = (H + 2 KV) Dh = 3D without grouping: the q of every head, then
    // the k and the v of every K/V head, as strided column blocks. With RoPE, q and k are
    // stored rotated (what the scores saw).
    Mat qkv;
    Mat scores;     // (B*H*T,T) q k^T * scale after the mask, the softmax's input (inspect only)
    Mat probs;      // (B*H*T,T) softmax(QK^T/sqrt(Dh) + mask), pre-dropout
    // Differential only: (B*H*T,T) the second map's softmax, and the weights probs - lambda
    // probs2 (pre-dropout).
    Mat probs2, combined;
    bool differential = false;
    Mat attn;       // (B*H*T,T) the weights after attention dropout (training with p > 0 only)
    Mat attn_mask;  // (B*H*T,T) dropout multipliers
    Mat merged;     // (N,D) heads merged, input of out_proj
    Mat out_mask;   // (N,D) output dropout multipliers
    bool attn_dropped = false, out_dropped = false;
    // Causal mask, no inspect: the products skip the hidden triangle, whose probs are 0 and whose
    // dweights are left unspecified.
    bool causal = false;
    bool backward_done = false;  // backward() ran since the last forward()
    // Backward. dmerged (N,D): dL/d(each head's output), 0 for a head that is off. dweights:
    // dL/d(the weights that multiplied V); dscores: dL/d(scores). Both (T,T) for the head at
    // hand (one block per thread part, parallel.h), or with inspect (B*H*T,T) for all of them.
    // dqkv (N,W): dL/d(qkv), i.e. with RoPE with respect to the rotated q and k; a K/V head's
    // block sums its query heads' shares.
    Mat dqkv, dmerged, dweights, dscores, dx_scratch;
    Mat dqkv_proj;   // (N,W) RoPE only: dqkv rotated back, dL/d(qkv_proj's output)
    Mat dkv_scratch; // (T,Dh) per thread part, grouped K/V only: a query head's dk or dv share
    Mat dscores2;    // (T,T) differential only: dL/d(the second map's scores), the head at hand
    // Set before forward() to compute the attention tile by tile (tiled_attention.h) with these
    // tile sizes, never holding (T,T): taken when the layer allows it (full causal or
    // bidirectional rows, no window or stride, not differential, no attention dropout in this
    // pass, not inspect), else the plain path runs. A tiled forward
    // leaves probs, weights(), dweights and dscores empty, keeps each row's log-sum-exp in lse,
    // and its backward recomputes the weights per tile.
    bool tiled = false;
    TileSizes tiles;
    bool tiled_used = false;  // the last forward ran tiled
    Mat lse;                  // (B*H,T) tiled only: log sum_j exp(score_ij) of each row
    TiledWorkspace tiled_ws;
    // The attention weights that multiplied V: (B*H*T,T), i.e. (B,H,T,T) row-major.
    const Mat& weights() const { return attn_dropped ? attn : differential ? combined : probs; }
  };

  // Validates as the curriculum's class does (and the options: kv_heads divides n_heads, RoPE
  // needs an even d_head) and initialises qkv_proj then out_proj; RoPE and ALiBi draw nothing.
  MultiHeadSelfAttention(int d_model, int n_heads, int max_context_length, float attn_dropout,
                         float out_dropout, Rng& rng, const AttentionOptions& options = {});

  // x (B*T,D) -> y (B*T,D). Caches in state what backward needs (x among it); weights in
  // state.weights(). y may be x itself (a stack of layers without residual does that). Dropout
  // (inverted) applies only when training; rng is read only then.
  void forward(ConstMatRef x, int B, int T, bool training, Rng& rng, State& s, MatRef y);
  // The same in eval mode: no dropout, so no generator.
  void forward(ConstMatRef x, int B, int T, State& s, MatRef y);

  // dy (B*T,D) -> dx (B*T,D); overwrites the gradients of qkv_proj and out_proj (and of lambda,
  // differential). dx may not alias dy.
  void backward(State& s, ConstMatRef dy, MatRef dx);

  // The layer for a batch (B,T): its own "diff_lambda" (H, differential), then qkv_proj and
  // out_proj mounted as "qkv_proj." and "out_proj."; caches x (N,D), qkv (N,W), probs (B,H,T,T)
  // (differential: probs2 and combined too) and merged (N,D); per head the products q k^T (per
  // map), weights v and their backward (the plain path, every head on).
  static ModuleReport report(int d_model, int n_heads, const AttentionOptions& options, int B,
                             int T);
  // Appends the parameters as report names them, under prefix.
  void append_params(const std::string& prefix, std::vector<ParamRef>& out);

  // Throws std::invalid_argument unless 1 <= T <= C and x is (B*T, D).
  void check_input(Eigen::Index rows, Eigen::Index cols, int B, int T) const;

  // Teaching interventions; the defaults are the curriculum's layer. A head that is off still
  // computes its weights (so they can be shown) but its output, and so its gradient, is zero.
  std::vector<uint8_t> head_off;  // (H), 1 = switched off
  bool scale_scores = true;       // false: scores are q k^T, without the 1/sqrt(Dh)
  // Causal: the layer's own mask, options.pattern (bidirectional in a masked language model);
  // None and Inverted replace it with the teaching faults of ops.h.
  MaskMode mask = MaskMode::Causal;
  float score_scale() const;
  // Head h's scores as the tiled kernels take them: the scale, the mask (causal or none) and
  // its ALiBi slope.
  TiledScores tiled_scores(int h) const;
  // Head h's map (attention_map.h): the layer's score scale, mask and ALiBi slope.
  AttentionMap head_map(int h) const;

  // The K/V head query head h reads: h / (H / KV).
  int kv_head(int h) const { return h / (n_heads / options.kv_heads); }
  // Query/key maps per head: 2 with differential attention, else 1.
  int qk_maps() const { return options.differential ? 2 : 1; }
  // First row of query head h's q, and of the k and v it reads, in qkv_proj's output (and
  // weight rows), M = qk_maps(), g = kv_head(h): q h Dh, k (M H + g) Dh, v (M (H + KV) + g) Dh.
  // Differential rows are q1 (H Dh), q2 (H Dh), k1 (KV Dh), k2 (KV Dh), v (KV Dh): q and k are
  // the first maps', q2_offset(h) = (H + h) Dh and k2_offset(h) = (2 H + KV + g) Dh the second's.
  Eigen::Index q_offset(int h) const { return Eigen::Index(h) * d_head; }
  Eigen::Index k_offset(int h) const {
    return Eigen::Index(qk_maps() * n_heads + kv_head(h)) * d_head;
  }
  Eigen::Index v_offset(int h) const {
    return Eigen::Index(qk_maps() * (n_heads + options.kv_heads) + kv_head(h)) * d_head;
  }
  Eigen::Index q2_offset(int h) const { return Eigen::Index(n_heads + h) * d_head; }
  Eigen::Index k2_offset(int h) const { return k_offset(h) + Eigen::Index(options.kv_heads) * d_head; }

  int d_model, n_heads, d_head, max_context_length;
  float attn_dropout, out_dropout;
  AttentionOptions options;  // as given, with kv_heads resolved (never 0)
  // weight ((H + 2 KV) Dh, D), bias ((H + 2 KV) Dh): rows q, k, v; differential
  // ((2 H + 3 KV) Dh, D): rows q1, q2, k1, k2, v.
  Linear qkv_proj;
  Linear out_proj;  // weight (D,D), bias (D)
  // Differential only (else empty): (H) each head's lambda, from kDiffLambdaInit, and its
  // gradient.
  RowVec lambda, dlambda;
  std::optional<Rope> rope;  // tables for max_context_length positions, with options.rope
  std::vector<float> alibi_m;  // (H) ALiBi's slopes m_h with options.alibi, else empty

 private:
  // forward() with dropout drawn from *dropout, or none when it is null (eval mode).
  void run(ConstMatRef x, int B, int T, Rng* dropout, State& s, MatRef y);
};

// (B*T,D) -> (B*H*T,Dh): head h of batch b becomes rows [(b*H+h)*T, +T). Copies; for tests and
// teaching, the layer itself uses strided views instead.
Mat split_heads(ConstMatRef x, int B, int T, int H);
// Inverse of split_heads: (B*H*T,Dh) -> (B*T,H*Dh).
Mat merge_heads(ConstMatRef x, int B, int T, int H);

}  // namespace attn
