// One query row of one self-attention head, forward and backward, as the Backward panel shows it:
// read from the layer's own caches (MultiHeadSelfAttention::State with inspect set).
#pragma once

#include "attn/base/tensor.h"
#include "attn/nn/multihead.h"

namespace attn {

struct HeadRow {
  float scale;       // the score scale: 1/sqrt(Dh), or 1 with scale_scores off
  RowVec q;          // (Dh) the query
  Mat k, v;          // (T,Dh) keys and values of the head
  RowVec scores;     // (T) q k^T * scale (+ the ALiBi bias) after the mask: the softmax's input
  RowVec weights;    // (T) softmax(scores)
  RowVec out;        // (Dh) weights v (zero if the head is switched off)
  RowVec d_out;      // (Dh) dL/d(out) (zero if the head is switched off)
  RowVec d_weights;  // (T) d_out v^T
  RowVec d_scores;   // (T) the softmax Jacobian applied: w * (dw - w . dw)
  RowVec d_q;        // (Dh) d_scores k * scale
  Mat d_k, d_v;      // (T,Dh) row j: d_scores[j] q * scale, and w[j] d_out
};

// One query row i of one head h in batch b, read from the caches of layer's eval-mode forward()
// and the backward() after it, run with State::inspect. Computes nothing: every number is the
// layer's own. With a loss that depends on row i only (dy zero elsewhere), d_k and d_v are
// exactly row i's contributions to dK and dV (with grouped K/V heads, summed over the query
// heads that share head h's K/V). With RoPE, q, k, d_q and d_k are the rotated ones. A
// differential layer has two score maps per head, which one row does not show: an Error of
// kind State.
HeadRow head_row(const MultiHeadSelfAttention& layer, const MultiHeadSelfAttention::State& s,
                 int b, int h, int i);

}  // namespace attn
