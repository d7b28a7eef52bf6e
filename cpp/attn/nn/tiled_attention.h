// Tiled attention (the course's lesson 12, FlashAttention's forward and backward) for one head:
// the scores are computed one (query tile x key tile) block at a time, and each query row keeps
// a running max m and a running sum l of exp(score - m) (an online softmax), rescaling what it
// has accumulated whenever m grows. The (T,S) matrix of scores or weights is never held: the
// memory is O(tile^2 + T Dh) per head instead of O(T S). The numbers are the plain kernel's
// (softmax_rows, then weights V) up to float rounding in another order.
//
// The backward recomputes each block's weights from the saved log-sum-exp of its rows, as
// FlashAttention does, instead of reading stored ones.
#pragma once

#include "attn/base/tensor.h"

namespace attn {

// Which keys a query sees, and the bias on its scores.
struct TiledScores {
  float scale = 1.0f;        // the scores are q k^T * scale
  bool causal = true;        // query i sees keys j <= i; otherwise every key
  float alibi_slope = 0.0f;  // adds -slope |i - j| (positions.h's add_alibi_bias); 0 for none
};

// The tile sizes: query rows and key rows per block, each >= 1.
struct TileSizes {
  int query = 64;
  int key = 64;
};

// The per-head scratch of the tiled kernels, sized on first use; reusing it for the same tile
// sizes and Dh allocates nothing.
struct TiledWorkspace {
  Mat s, p;       // (Bq, Bk) one block of scores, and their exp(score - m) (or the weights)
  Mat dp;         // (Bq, Bk) backward: dL/d(weights) of the block, then dL/d(scores)
  Mat acc;        // (Bq, Dh) forward: the running weights V of a query tile
  RowVec m, l;    // (Bq) the running max and sum
  Mat pv;         // (Bq, Dh) one block's product with v (forward) or k (backward)
  Mat dk, dv, kv; // (Bk, Dh) backward: one key tile's gradients, and one block's share
  RowVec delta;   // (T) backward: rowsum(dout * out)
};

// q (T,Dh), k (S,Dh), v (S,Dh) with T == S -> out (T,Dh); lse (T) gets each row's log-sum-exp
// of its scores, log(sum_j exp(score_ij)) = m + log(l), which the backward reads. A row that
// sees no key gets out 0 and lse -inf. Throws an Error of kind Input on mismatched shapes or
// tile sizes < 1.
void tiled_attention_forward(ConstMatRef q, ConstMatRef k, ConstMatRef v, const TiledScores& sc,
                             const TileSizes& tiles, MatRef out, float* lse, TiledWorkspace& ws);

// Backward of the forward above, from its q, k, v, out and lse and dout (T,Dh): writes dq (T,Dh);
// writes dk and dv (S,Dh), or adds into them when accumulate is set (grouped K/V heads sum their
// query heads' shares). Per block: w = exp(score - lse); dv += w^T dout; dw = dout v^T;
// dscore = w * (dw - rowsum(dout * out)); dq += dscore k * scale; dk += dscore^T q * scale.
void tiled_attention_backward(ConstMatRef q, ConstMatRef k, ConstMatRef v, ConstMatRef out,
                              const float* lse, ConstMatRef dout, const TiledScores& sc,
                              const TileSizes& tiles, MatRef dq, MatRef dk, MatRef dv,
                              bool accumulate, TiledWorkspace& ws);

// The plain kernel the tiled one is tested against: scores (T,S) with the same mask and bias,
// softmax_rows, then weights V -> out (T,Dh); weights (T,S) when given.
void plain_attention_reference(ConstMatRef q, ConstMatRef k, ConstMatRef v, const TiledScores& sc,
                               MatRef out, Mat* weights = nullptr);

// One head computed tile by tile with a single query tile of all T rows, keeping each row's
// running max and sum after every key tile (the block view's step).
struct TiledTrace {
  int tile = 0;     // key rows per tile
  int tiles = 0;    // ceil(T / tile)
  Mat row_max;      // (tiles, T): m of each row after tile t (-inf while it has seen no key)
  Mat row_sum;      // (tiles, T): l of each row after tile t, sum of exp(score - m)
  Mat out;          // (T,Dh) the tiled output
  Mat weights;      // (T,T) exp(score - m) / l with the final m and l: the softmax rows
  Mat plain_weights;  // (T,T) and plain_out (T,Dh): plain_attention_reference
  Mat plain_out;
  float max_weight_difference = 0.0f;  // max |weights - plain_weights|
  float max_out_difference = 0.0f;     // max |out - plain_out|
};
// q, k, v as tiled_attention_forward's; tile in [1, T].
TiledTrace tiled_attention_trace(ConstMatRef q, ConstMatRef k, ConstMatRef v,
                                 const TiledScores& sc, int tile);

// Bytes a MultiHeadSelfAttention layer holds for its attention weights in a forward of B
// sequences of T (and the backward after it when training), computed from the buffers' shapes.
// Plain: the weights of every head (B*H*T,T), and for the backward one head's dL/d(weights) and
// dL/d(scores) (T,T) each. Tiled: the log-sum-exp of every row (B*H*T) and the workspace's blocks
// (TiledWorkspace: three (Bq,Bk), (Bq,Dh) twice, (Bk,Dh) three times, the row statistics), the
// same for any T.
int64_t plain_attention_bytes(int64_t B, int64_t H, int64_t T, bool training);
int64_t tiled_attention_bytes(int64_t B, int64_t H, int64_t T, int64_t d_head,
                              const TileSizes& tiles, bool training);

}  // namespace attn
