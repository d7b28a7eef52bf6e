// Multi-head causal self-attention with a fused QKV projection (the curriculum's PyTorch layer).
#pragma once

#include <cstdint>
#include <vector>

#include "attn/linear.h"
#include "attn/ops.h"
#include "attn/rng.h"
#include "attn/tensor.h"

namespace attn {

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
    Mat qkv;        // (N,3D) fused projection; q, k, v of head h are strided column blocks
    Mat scores;     // (B*H*T,T) q k^T * scale after the mask, the softmax's input (inspect only)
    Mat probs;      // (B*H*T,T) softmax(QK^T/sqrt(Dh) + mask), pre-dropout
    Mat attn;       // (B*H*T,T) probs after attention dropout (training with p > 0 only)
    Mat attn_mask;  // (B*H*T,T) dropout multipliers
    Mat merged;     // (N,D) heads merged, input of out_proj
    Mat out_mask;   // (N,D) output dropout multipliers
    bool attn_dropped = false, out_dropped = false;
    bool backward_done = false;  // backward() ran since the last forward()
    // Backward. dmerged (N,D): dL/d(each head's output), 0 for a head that is off. dweights:
    // dL/d(the weights that multiplied V); dscores: dL/d(scores). Both (T,T) for the head at
    // hand, or with inspect (B*H*T,T) for all of them.
    Mat dqkv, dmerged, dweights, dscores, dx_scratch;
    // The attention weights that multiplied V: (B*H*T,T), i.e. (B,H,T,T) row-major.
    const Mat& weights() const { return attn_dropped ? attn : probs; }
  };

  // Validates as the curriculum's class does and initialises qkv_proj then out_proj.
  MultiHeadSelfAttention(int d_model, int n_heads, int max_context_length, float attn_dropout,
                         float out_dropout, Rng& rng);

  // x (B*T,D) -> y (B*T,D). Caches in state what backward needs (x among it); weights in
  // state.weights(). y may be x itself (a stack of layers without residual does that). Dropout
  // (inverted) applies only when training; rng is read only then.
  void forward(ConstMatRef x, int B, int T, bool training, Rng& rng, State& s, MatRef y);

  // dy (B*T,D) -> dx (B*T,D); overwrites the gradients of qkv_proj and out_proj.
  void backward(State& s, ConstMatRef dy, MatRef dx);

  // Throws std::invalid_argument unless 1 <= T <= C and x is (B*T, D).
  void check_input(Eigen::Index rows, Eigen::Index cols, int B, int T) const;

  // One query row i of one head h in batch b, read from the caches of an eval-mode forward()
  // and the backward() after it, run with State::inspect. Computes nothing: every number is the
  // layer's own. With a loss that depends on row i only (dy zero elsewhere), d_k and d_v are
  // exactly row i's contributions to dK and dV.
  struct HeadRow {
    float scale;       // the score scale: 1/sqrt(Dh), or 1 with scale_scores off
    RowVec q;          // (Dh) the query
    Mat k, v;          // (T,Dh) keys and values of the head
    RowVec scores;     // (T) q k^T * scale after the mask (what the softmax saw)
    RowVec weights;    // (T) softmax(scores)
    RowVec out;        // (Dh) weights v (zero if the head is switched off)
    RowVec d_out;      // (Dh) dL/d(out) (zero if the head is switched off)
    RowVec d_weights;  // (T) d_out v^T
    RowVec d_scores;   // (T) the softmax Jacobian applied: w * (dw - w . dw)
    RowVec d_q;        // (Dh) d_scores k * scale
    Mat d_k, d_v;      // (T,Dh) row j: d_scores[j] q * scale, and w[j] d_out
  };
  HeadRow head_row(const State& s, int b, int h, int i) const;

  // Teaching interventions; the defaults are the curriculum's layer. A head that is off still
  // computes its weights (so they can be shown) but its output, and so its gradient, is zero.
  std::vector<uint8_t> head_off;  // (H), 1 = switched off
  bool scale_scores = true;       // false: scores are q k^T, without the 1/sqrt(Dh)
  MaskMode mask = MaskMode::Causal;
  float score_scale() const;

  int d_model, n_heads, d_head, max_context_length;
  float attn_dropout, out_dropout;
  Linear qkv_proj;  // weight (3D,D), bias (3D)
  Linear out_proj;  // weight (D,D), bias (D)
};

// (B*T,D) -> (B*H*T,Dh): head h of batch b becomes rows [(b*H+h)*T, +T). Copies; for tests and
// teaching, the layer itself uses strided views instead.
Mat split_heads(ConstMatRef x, int B, int T, int H);
// Inverse of split_heads: (B*H*T,Dh) -> (B*T,H*Dh).
Mat merge_heads(ConstMatRef x, int B, int T, int H);

}  // namespace attn
