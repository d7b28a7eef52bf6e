// Multi-head cross-attention (an encoder-decoder's): queries from one stream x (B*T,D), keys and
// values from another, the source (B*S,D), through the shared attention map (attention_map.h),
// rectangular (T,S). No causal mask and no position term; an optional key-padding mask gives
// padding keys exactly zero weight. The source's K/V are projected once (encode) and read by
// every forward, backward and decoding step that follows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/nn/attention_map.h"
#include "attn/nn/linear.h"

namespace attn {

class CrossAttention {
 public:
  // One source's keys and values, computed once by encode and cached for every pass over it.
  struct Source {
    int B = 0, S = 0;
    Mat x;                     // (B*S,D) the source, copied for backward
    Mat kv;                    // (B*S, 2 KV Dh): k of K/V head g at [g Dh, +Dh), v at [KV Dh + g Dh, +Dh)
    std::vector<uint8_t> pad;  // (B*S) 1 = a padding key, or empty (no padding)
  };

  // Forward cache and backward workspace for one (B,T,S).
  struct State {
    int B = 0, T = 0, S = 0;
    Mat x;          // (N,D) the queries' input, copied for backward; N = B*T
    Mat q;          // (N, H Dh) q_proj's output
    Mat probs;      // (B*H*T,S) softmax(q k^T * scale, padding masked), pre-dropout
    Mat attn;       // (B*H*T,S) the weights after dropout (training with p > 0 only)
    Mat attn_mask;  // (B*H*T,S) dropout multipliers
    bool attn_dropped = false;
    Mat merged;     // (N,D) heads merged, input of out_proj
    // Backward: dmerged (N,D), dq (N,H Dh), dkv (B*S, 2 KV Dh); per head scratch dw and ds (T,S).
    Mat dmerged, dq, dkv, dw, ds;
    // The weights that multiplied V: (B*H*T,S), i.e. (B,H,T,S) row-major.
    const Mat& weights() const { return attn_dropped ? attn : probs; }
  };

  // Validates (d_model divisible by n_heads, kv_heads dividing n_heads, 0 meaning n_heads) and
  // initialises q_proj, kv_proj, then out_proj, each as torch.nn.Linear with a bias.
  CrossAttention(int d_model, int n_heads, int kv_heads, float attn_dropout, Rng& rng);

  // src (B*S,D) -> out.kv = kv_proj(src). pad: empty, or B*S flags (nonzero = padding key).
  void encode(ConstMatRef src, int B, int S, const std::vector<uint8_t>& pad, Source& out) const;

  // x (B*T,D), src from encode -> y (B*T,D); caches in s what backward needs. Dropout on the
  // weights only when training (rng read only then). y may alias x.
  void forward(ConstMatRef x, int B, int T, const Source& src, bool training, Rng& rng, State& s,
               MatRef y);
  void forward(ConstMatRef x, int B, int T, const Source& src, State& s, MatRef y);

  // dy (B*T,D) -> dx (B*T,D), dsrc (B*S,D); overwrites the gradients of q_proj, kv_proj and
  // out_proj. src must be the one forward read.
  void backward(State& s, const Source& src, ConstMatRef dy, MatRef dx, MatRef dsrc);

  // Decoding over a cached source: m new query rows x (m,D) of sequence b attend over src's S
  // keys of that sequence, in eval mode. weights.row(i*H + h) ((m*H,S)) gets row i's weights in
  // head h, y (m,D) the outputs (may alias x): forward()'s rows, number for number.
  void forward_rows(ConstMatRef x, const Source& src, int b, MatRef weights, MatRef y) const;

  // The named tensors under prefix: cross_q_proj, cross_kv_proj, cross_out_proj (weight, bias).
  void append_params(const std::string& prefix, std::vector<ParamRef>& out);

  // Head h's map: the score scale 1/sqrt(Dh), no mask, no position term.
  AttentionMap head_map() const;
  int kv_head(int h) const { return h / (n_heads / kv_heads); }

  int d_model, n_heads, kv_heads, d_head;
  float attn_dropout;
  Linear q_proj;    // weight (H Dh, D), bias (H Dh)
  Linear kv_proj;   // weight (2 KV Dh, D), bias (2 KV Dh): rows k, then v
  Linear out_proj;  // weight (D,D), bias (D)

 private:
  void run(ConstMatRef x, int B, int T, const Source& src, Rng* dropout, State& s, MatRef y);
};

// The same forward as plain loops over the layer's weights (projections, scores, softmax,
// weighted sums in double): the tests' reference. x (B*T,D), src (B*S,D) -> y (B*T,D).
Mat naive_cross_attention(const CrossAttention& m, const Mat& x, int B, int T, const Mat& src,
                          int S, const std::vector<uint8_t>& pad);

}  // namespace attn
