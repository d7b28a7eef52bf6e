#include "attn/nn/head_row.h"

namespace attn {

HeadRow head_row(const MultiHeadSelfAttention& layer, const MultiHeadSelfAttention::State& s,
                 int b, int h, int i) {
  const int H = layer.n_heads, Dh = layer.d_head, T = s.T;
  require_state(s.backward_done, "head_row needs a forward and a backward pass first");
  require_state(s.inspect, "head_row needs a forward pass with State::inspect set");
  require_state(!s.attn_dropped && !s.out_dropped, "head_row needs a forward pass in eval mode");
  require_state(!layer.options.differential, "one query row of a differential head has two score "
                "maps, which head_row does not show");
  require(b >= 0 && b < s.B, "batch index (", b, ") must be in [0, ", s.B - 1, "]");
  require(h >= 0 && h < H, "head (", h, ") must be in [0, ", H - 1, "]");
  require(i >= 0 && i < T, "query position (", i, ") must be in [0, ", T - 1, "]");
  const Eigen::Index r0 = Eigen::Index(b) * T, p0 = (Eigen::Index(b) * H + h) * T;
  HeadRow r;
  r.scale = layer.score_scale();
  r.q = s.qkv.block(r0 + i, layer.q_offset(h), 1, Dh);
  r.k = s.qkv.block(r0, layer.k_offset(h), T, Dh);
  r.v = s.qkv.block(r0, layer.v_offset(h), T, Dh);
  r.scores = s.scores.row(p0 + i);
  r.weights = s.probs.row(p0 + i);
  r.out = s.merged.block(r0 + i, h * Dh, 1, Dh);
  r.d_out = s.dmerged.block(r0 + i, h * Dh, 1, Dh);
  r.d_weights = s.dweights.row(p0 + i);
  r.d_scores = s.dscores.row(p0 + i);
  r.d_q = s.dqkv.block(r0 + i, layer.q_offset(h), 1, Dh);
  r.d_k = s.dqkv.block(r0, layer.k_offset(h), T, Dh);
  r.d_v = s.dqkv.block(r0, layer.v_offset(h), T, Dh);
  return r;
}

}  // namespace attn
