// Incremental decoding (model/decoder.h) with a self-attention layer: the keys and values of the
// positions decoded so far, so that a new position projects only its own row. The layer is read,
// never changed (its parameters, head_off, scale_scores); the cache is the decoder's.
#pragma once

#include "attn/base/tensor.h"
#include "attn/nn/multihead.h"

namespace attn {

// One layer's cache. Sized by reset_cache for C positions; appending and dropping positions
// allocates nothing.
struct KVCache {
  // Positions held: [first, first + length), in rows [0, length) of k and v. first is 0 but in
  // a window cache that has let its oldest positions go.
  int first = 0, length = 0;
  // (R, KV Dh): row r is position first + r's k (rotated by its position with RoPE) and v;
  // K/V head g at columns [g Dh, g Dh + Dh). Differential: k is (R, 2 KV Dh), k1 of head g at
  // [g Dh, +Dh) and k2 at [(KV + g) Dh, +Dh). R = cache_rows(): C, or W for a causal window.
  Mat k, v;
  Mat k_raw;       // RoPE only: the keys before their rotation, as k
  Mat qkv;         // (m, W) scratch: the new positions' projection
  Mat merged;      // (m, D) scratch: the heads' outputs
  Mat w2;          // (1, R) differential scratch: one head's second map
};

// Rows a cache of layer keeps: C, or the window W < C of a causal sliding window (no strided
// keys), whose queries never see a key W or more positions back.
int cache_rows(const MultiHeadSelfAttention& layer);
// Empties cache and sizes it for layer.
void reset_cache(const MultiHeadSelfAttention& layer, KVCache& cache);
// Causal attention of one new position p = first + length over positions [0, p], in eval
// mode: projects x (1,D) and appends its k and v to cache (rotated to position p with RoPE;
// a full window cache first lets its oldest position go), then writes head h's weights over
// the p + 1 positions to weights.row(h) ((H, p + 1), the last row of forward()'s (T,T) for that
// head: ALiBi bias, the pattern's mask and the differential map included, and exactly 0 on the
// positions a window cache no longer holds) and the output to y (1,D), which may alias x.
// Honours head_off and scale_scores; the mask is taken to be the causal pattern (the Decoder
// checks). Throws an Error of kind State when p would reach C.
void forward_step(const MultiHeadSelfAttention& layer, ConstMatRef x, KVCache& cache,
                  MatRef weights, MatRef y);
// forward_step for m new positions p0 .. p0 + m - 1 at once (p0 = first + length): one
// projection of x (m,D), then row by row its key and value appended to cache and row i of head
// h attending over the positions it may see up to p0 + i (causal among the new rows too) into
// weights.row(i*H + h) ((m*H, p0 + m); 0 elsewhere), and y (m,D) gets the outputs (may alias x).
// Row i's attention is forward_step's for that position, number for number (forward_step is
// this with m = 1). Throws an Error of kind State when the cache cannot take m more.
void forward_rows(const MultiHeadSelfAttention& layer, ConstMatRef x, KVCache& cache,
                  MatRef weights, MatRef y);
// Keeps only the first length positions of cache (a rollback): as if the later ones had never
// been appended. length in [0, cache.length]; a window cache that let positions go (first > 0)
// cannot (an Error of kind State: the decoder re-encodes instead).
void truncate_cache(KVCache& cache, int length);
// Every position moves down by one: position p + 1 becomes p, and position 0, if held, is
// dropped. With RoPE the kept keys are rotated again from k_raw to their new positions. Only
// for layers whose keys and values do not depend on the positions that change: decoder.h.
void drop_first(const MultiHeadSelfAttention& layer, KVCache& cache);

}  // namespace attn
