// Position information inside attention: RoPE rotates each head's queries and keys by position,
// ALiBi adds a per-head linear distance penalty to the scores (the course's apply_rope and
// alibi_bias). Neither has parameters.
#pragma once

#include <vector>

#include "attn/base/tensor.h"

namespace attn {

// Rotary position embedding on interleaved pairs: for the vector x of one head at position p,
// each pair (x[2i], x[2i+1]), i in [0, Dh/2), is rotated by the angle p / base^(2i/Dh):
//   x[2i]   <- x[2i] cos - x[2i+1] sin
//   x[2i+1] <- x[2i] sin + x[2i+1] cos
// The cos/sin tables are float32, built like the sinusoidal table (embedding.cpp): in torch
// terms denom = base ** (arange(0, Dh, 2) / Dh) and angle = p / denom in float32, then cos and sin
// evaluated in double on the float angle and rounded once, so they are the same natively and in
// wasm.
class Rope {
 public:
  // Throws an Error of kind Config unless max_len >= 1 and d_head is even and >= 2.
  Rope(int max_len, int d_head, double base = 10000.0);

  // Rotates x (T,Dh) in place, row t taken to be at position first_position + t (which must be
  // below max_len). x may be a strided block (a head's columns of the fused qkv). The decoder
  // (decoder.h) rotates one new row at a time with first_position its position.
  void rotate(MatRef x, int first_position = 0) const;
  // The backward of rotate, for dx (T,Dh) in place: the inverse rotation (by -angle), since the
  // Jacobian of a rotation is the rotation and its transpose is its inverse.
  void rotate_backward(MatRef dx) const;

  // The angle of pair i at position p, pos / base^(2i/Dh), in the float32 recipe above: the
  // one formula the tables are built from (and the block view draws).
  static float angle(int p, int i, int d_head, double base = 10000.0);

  int max_len, d_head;
  Mat cos_table, sin_table;  // (max_len, Dh/2): cos and sin of the angle of position p, pair i

 private:
  void rotate_pairs(MatRef x, float sign, int first_position) const;
};

// ALiBi's head slopes m_h = 2^(-8 (h+1) / H) for h in [0, H), computed in double and rounded to
// float (for H = 8: 1/2, 1/4, ..., 1/256). Throws an Error of kind Config unless H >= 1.
std::vector<float> alibi_slopes(int n_heads);

// Adds ALiBi's bias -slope * |i - j| to scores (R,S) in place, row r being query position
// i = first_row + r and column c key position j = first_col + c, each entry computed in float as
// -(slope * float(|i - j|)). Under the causal mask only j <= i survives, where this is the
// -m (i - j) of the definition; a bidirectional (masked language) model and the teaching masks
// that keep future keys see the symmetric -m |i - j|. The layer passes (T,T) from row 0; the
// decoder one row at its position.
void add_alibi_bias(MatRef scores, float slope, int first_row = 0, int first_col = 0);

}  // namespace attn
