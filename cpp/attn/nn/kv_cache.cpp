#include "attn/nn/kv_cache.h"

#include <cstring>

#include "attn/kernels/kernels.h"
#include "attn/nn/attention_map.h"

namespace attn {

int cache_rows(const MultiHeadSelfAttention& layer) {
  const MaskPattern& p = layer.options.pattern;
  const bool window_only = p.causal && p.window > 0 && p.stride == 0;
  return window_only && p.window < layer.max_context_length ? p.window : layer.max_context_length;
}

void reset_cache(const MultiHeadSelfAttention& layer, KVCache& c) {
  const Eigen::Index R = cache_rows(layer);
  const Eigen::Index KVDh = Eigen::Index(layer.options.kv_heads) * layer.d_head;
  c.first = c.length = 0;
  c.k.resize(R, layer.qk_maps() * KVDh);
  c.v.resize(R, KVDh);
  if (layer.rope) c.k_raw.resize(R, layer.qk_maps() * KVDh);
  if (layer.options.differential) c.w2.resize(1, R);
  c.qkv.resize(1, layer.qkv_proj.out_features);
  c.merged.resize(1, layer.d_model);
}

namespace {
// Moves rows [1, n) of m up by one (rows are contiguous: row-major).
void shift_rows_up(Mat& m, int n) {
  if (n > 1)
    std::memmove(m.data(), m.data() + m.cols(), sizeof(float) * size_t(n - 1) * size_t(m.cols()));
}
}  // namespace

void forward_step(const MultiHeadSelfAttention& layer, ConstMatRef x, KVCache& c, MatRef weights,
                  MatRef y) {
  forward_rows(layer, x, c, weights, y);
}

// The last m rows of forward() for T = p0 + m (p0 = first + length), computed from the cache:
// qkv = x W^T + b (m,W); q and k of row i rotated by p0 + i; then row by row: a full window cache
// lets its oldest position go, k and v of position p0 + i are appended, and per head
// w = softmax(q_i K^T * scale + bias, masked) over the held positions (differential: minus lambda
// times the second map's) and merged_h,i = w V; y = out_proj(merged).
void forward_rows(const MultiHeadSelfAttention& layer, ConstMatRef x, KVCache& c, MatRef weights,
                  MatRef y) {
  const int H = layer.n_heads, Dh = layer.d_head, KV = layer.options.kv_heads, M = layer.qk_maps();
  const int p0 = c.first + c.length, m = int(x.rows()), n = p0 + m;
  const Eigen::Index KVDh = Eigen::Index(KV) * Dh;
  const int R = cache_rows(layer);
  require_state(c.k.rows() == R && c.v.rows() == R,
                "forward_step needs a cache sized by reset_cache");
  require(m >= 1 && x.cols() == layer.d_model, "forward_step expects rows of ", layer.d_model,
          " features, got (", x.rows(), ",", x.cols(), ")");
  require_state(n <= layer.max_context_length, "the KV cache is full (", layer.max_context_length,
                " positions; ", p0, " held, ", m, " more asked); drop a position first");
  require(weights.rows() == Eigen::Index(m) * H && weights.cols() == n,
          "forward_step's weights must be (", m * H, ",", n, "), got (", weights.rows(), ",",
          weights.cols(), ")");
  require(layer.head_off.size() == size_t(H), "head_off has ", layer.head_off.size(),
          " entries for ", H, " heads");
  c.qkv.resize(m, layer.qkv_proj.out_features);
  c.merged.resize(m, layer.d_model);
  layer.qkv_proj.forward(x, c.qkv);  // x is not read again, so y may alias it
  const Eigen::Index k0 = Eigen::Index(M) * H * Dh, v0 = k0 + M * KVDh;  // k1 (k2) and v columns
  for (int i = 0; i < m; ++i) {
    const int p = p0 + i;  // row i is position p
    if (c.length == c.k.rows()) {  // a full window cache: the oldest position is out of every window
      shift_rows_up(c.k, c.length);
      shift_rows_up(c.v, c.length);
      if (layer.rope) shift_rows_up(c.k_raw, c.length);
      ++c.first;
      --c.length;
    }
    const int r = c.length;  // the new position's row
    if (layer.rope) {  // the keys kept unrotated; then every q block and every k block turned by p
      c.k_raw.row(r) = c.qkv.block(i, k0, 1, M * KVDh);
      for (int b = 0; b < M * (H + KV); ++b)
        layer.rope->rotate(c.qkv.block(i, Eigen::Index(b) * Dh, 1, Dh), p);
    }
    c.k.row(r) = c.qkv.block(i, k0, 1, M * KVDh);
    c.v.row(r) = c.qkv.block(i, v0, 1, KVDh);
    c.length = r + 1;
    const int first = c.first, len = c.length;
    if (p + 1 < n) weights.block(Eigen::Index(i) * H, p + 1, H, n - p - 1).setZero();
    for (int h = 0; h < H; ++h) {
      const Eigen::Index g0 = Eigen::Index(layer.kv_head(h)) * Dh, row = Eigen::Index(i) * H + h;
      weights.row(row).head(first).setZero();  // positions a window cache let go: out of the window
      auto w = weights.block(row, first, 1, len);
      const AttentionMap map = layer.head_map(h);
      attention_map_forward(map, c.qkv.block(i, layer.q_offset(h), 1, Dh),
                            c.k.block(0, g0, len, Dh), w, p, first);
      if (layer.options.differential) {
        auto w2 = c.w2.leftCols(len);
        attention_map_forward(map, c.qkv.block(i, layer.q2_offset(h), 1, Dh),
                              c.k.block(0, KVDh + g0, len, Dh), w2, p, first);
        w -= layer.lambda[h] * w2;
      }
      auto out = c.merged.block(i, Eigen::Index(h) * Dh, 1, Dh);
      if (layer.head_off[size_t(h)]) out.setZero();
      else matmul_nn(w, c.v.block(0, g0, len, Dh), out);
    }
  }
  layer.out_proj.forward(c.merged, y);
}

void truncate_cache(KVCache& c, int length) {
  require_state(c.first == 0, "a window cache that let positions go cannot be rolled back");
  require(length >= 0 && length <= c.length, "the cache holds ", c.length,
          " positions; it cannot be truncated to ", length);
  c.length = length;
}

void drop_first(const MultiHeadSelfAttention& layer, KVCache& c) {
  if (c.first > 0) {
    --c.first;  // position 0 was let go already: the kept rows only move down a position
  } else if (c.length > 0) {
    shift_rows_up(c.k, c.length);
    shift_rows_up(c.v, c.length);
    if (layer.rope) shift_rows_up(c.k_raw, c.length);
    --c.length;
  }
  if (layer.rope && c.length > 0) {  // every kept key turned again to its new position
    c.k.topRows(c.length) = c.k_raw.topRows(c.length);
    const int Dh = layer.d_head;
    for (int b = 0; b < layer.qk_maps() * layer.options.kv_heads; ++b)
      layer.rope->rotate(c.k.block(0, Eigen::Index(b) * Dh, c.length, Dh), c.first);
  }
}

}  // namespace attn
