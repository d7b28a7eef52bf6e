#include "attn/teach/tiled_trace.h"

#include <cmath>

namespace attn {

BlockTiledTrace block_tiled_trace(const BlockStagesInput& input, int head, int tile,
                                  KeyNamer namer) {
  const BlockStages b = transformer_block_stages(input, namer);
  const int H = b.config.n_heads, KV = b.config.kv_heads_resolved(), Dh = b.d_head, T = b.T;
  require(head >= 0 && head < H, "head (", head, ") must be in [0, ", H - 1, "]");
  require(tile >= 1 && tile <= T, "the tile size (", tile, ") must be in [1, ", T, "]");
  BlockTiledTrace r;
  r.head = head;
  r.kv_head = head / (H / KV);
  r.T = T;
  r.d_head = Dh;
  r.scale = 1.0f / std::sqrt(float(Dh));  // the block's layer scales its scores
  r.alibi_slope = b.alibi_slopes.empty() ? 0.0f : b.alibi_slopes[size_t(head)];
  const TiledScores sc{r.scale, true, r.alibi_slope};
  r.trace = tiled_attention_trace(b.q.middleCols(Eigen::Index(head) * Dh, Dh),
                                  b.k.middleCols(Eigen::Index(r.kv_head) * Dh, Dh),
                                  b.v.middleCols(Eigen::Index(r.kv_head) * Dh, Dh), sc, tile);
  r.max_layer_weight_difference =
      (r.trace.weights - b.weights.middleRows(Eigen::Index(head) * T, T)).cwiseAbs().maxCoeff();
  r.plain_bytes = plain_attention_bytes(1, 1, T, false);
  r.tiled_bytes = tiled_attention_bytes(1, 1, T, Dh, TileSizes{T, tile}, false);
  return r;
}

}  // namespace attn
