// The attention map: one head's weights from its queries and keys, rectangular (T,S), the piece
// that self-attention (multihead.h) and cross-attention (cross_attention.h) share: the scaled
// scores, an ALiBi bias, the mask (pattern or teaching fault), an optional key-padding mask, the
// softmax; its backward; and the plain-loop twin the tests compare against. Dropout on the
// weights is ops.h's dropout_forward, which both layers call on the map's output.
#pragma once

#include <cstdint>

#include "attn/base/tensor.h"
#include "attn/kernels/ops.h"

namespace attn {

// How one head turns scores into weights. The defaults are an unmasked map with scale 1.
struct AttentionMap {
  float scale = 1.0f;            // 1/sqrt(Dh), or 1 with scale_scores off
  MaskMode mode = MaskMode::None;  // Causal: pattern applies; None: no mask; Inverted: ops.h's fault
  MaskPattern pattern;           // read only with mode Causal
  bool alibi = false;            // add -slope |i - j| before the mask
  float alibi_slope = 0.0f;
};

// q (T,Dh), k (S,Dh) -> p (T,S) = softmax(q k^T * scale [+ bias], masked), query rows and key
// columns at absolute positions first_row and first_col. key_pad, when given, holds S flags
// (nonzero = a padding key): those columns get exactly 0 weight (a row of padding only is all 0).
// scores, when given, receives the masked scores (the softmax's input) at rows scores_row.
void attention_map_forward(const AttentionMap& m, ConstMatRef q, ConstMatRef k, MatRef p,
                           int64_t first_row = 0, int64_t first_col = 0,
                           const uint8_t* key_pad = nullptr, Mat* scores = nullptr,
                           Eigen::Index scores_row = 0);

// Backward of the softmax: dw (T,S) = dL/d(weights) -> ds (T,S) = dL/d(scores), from the map's
// probs (T,S). Masked and padding cells have probs 0, so their ds is 0. ds may alias dw.
void attention_map_backward(ConstMatRef probs, ConstMatRef dw, MatRef ds);

// Backward of scores = q k^T * scale: dq (T,Dh) = ds k * scale (overwritten); dk (S,Dh) += or =
// ds^T q * scale (accumulate true adds, for K/V heads that several query heads share).
void attention_scores_backward(const AttentionMap& m, ConstMatRef ds, ConstMatRef q, ConstMatRef k,
                               MatRef dq, MatRef dk, bool accumulate);

// attention_map_forward as plain loops (double sums, no kernels): the tests' reference. Knows
// the Causal and None modes (Inverted is an Error of kind Input).
Mat naive_attention_map(const AttentionMap& m, const Mat& q, const Mat& k, int64_t first_row = 0,
                        int64_t first_col = 0, const uint8_t* key_pad = nullptr);

}  // namespace attn
