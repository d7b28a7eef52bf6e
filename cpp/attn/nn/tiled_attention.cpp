#include "attn/nn/tiled_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/kernels/kernels.h"
#include "attn/kernels/ops.h"
#include "attn/nn/positions.h"

namespace attn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void check_tiled_shapes(ConstMatRef q, ConstMatRef k, ConstMatRef v, const TileSizes& tiles) {
  require(tiles.query >= 1 && tiles.key >= 1, "tile sizes (", tiles.query, ", ", tiles.key,
          ") must be >= 1");
  require(q.rows() >= 1 && q.rows() == k.rows() && k.rows() == v.rows(),
          "tiled attention needs q, k and v of the same T >= 1 rows, got ", q.rows(), ", ",
          k.rows(), ", ", v.rows());
  require(q.cols() == k.cols() && q.cols() >= 1, "q and k must have the same width, got ",
          q.cols(), " and ", k.cols());
}

// The scores of block (rows [i0, i0 + s.rows()), keys [j0, j0 + s.cols())) in s:
// q_i k_j^T * scale, the ALiBi bias, and -inf where the mask hides key j from query i.
void block_scores(ConstMatRef q, ConstMatRef k, const TiledScores& sc, Eigen::Index i0,
                  Eigen::Index j0, MatRef s) {
  const Eigen::Index bq = s.rows(), bk = s.cols();
  matmul_nt(q.middleRows(i0, bq), k.middleRows(j0, bk), s, sc.scale);
  if (sc.alibi_slope != 0.0f) {
    for (Eigen::Index r = 0; r < bq; ++r)
      for (Eigen::Index c = 0; c < bk; ++c) {
        const Eigen::Index i = i0 + r, j = j0 + c;
        s(r, c) += -(sc.alibi_slope * static_cast<float>(i >= j ? i - j : j - i));
      }
  }
  if (sc.causal && j0 + bk - 1 > i0)  // a block that reaches past the diagonal
    for (Eigen::Index r = 0; r < bq; ++r)
      for (Eigen::Index c = std::max<Eigen::Index>(0, i0 + r - j0 + 1); c < bk; ++c)
        s(r, c) = kNegInf;
}

// One key tile of the online softmax for the rows of s (R, bk), the block's scores: m' = max(m,
// rowmax s); p = exp(s - m'); the correction c = exp(m - m') rescales l and acc (what earlier
// tiles added, relative to the old max); l = c l + rowsum p; m = m'. A row that has seen no
// visible key yet keeps m = -inf, l = 0 and gets p = 0.
void online_softmax_step(ConstMatRef s, RowVec& m, RowVec& l, MatRef p, MatRef acc) {
  const Eigen::Index bk = s.cols();
  for (Eigen::Index r = 0; r < s.rows(); ++r) {
    const float m_new = std::max(m[r], row_max(s.row(r).data(), bk));
    if (m_new == kNegInf) {
      p.row(r).setZero();
      continue;
    }
    const float correction = m[r] == kNegInf ? 0.0f : std::exp(m[r] - m_new);
    l[r] = l[r] * correction + exp_shifted_sum(s.row(r).data(), m_new, p.row(r).data(), bk);
    if (correction != 1.0f) acc.row(r) *= correction;
    m[r] = m_new;
  }
}

// The last key a query tile [i0, i1) may see, exclusive.
Eigen::Index key_end(const TiledScores& sc, Eigen::Index i1, Eigen::Index S) {
  return sc.causal ? std::min(i1, S) : S;
}

}  // namespace

// q (T,Dh), k, v (T,Dh) -> out (T,Dh), lse (T). Per query tile: m = -inf, l = 0, acc = 0; per key
// tile: s = block scores; m' = max(m, rowmax s); p = exp(s - m'); c = exp(m - m');
// l = c l + rowsum p; acc = c acc + p v; m = m'. Then out = acc / l and lse = m + log l.
void tiled_attention_forward(ConstMatRef q, ConstMatRef k, ConstMatRef v, const TiledScores& sc,
                             const TileSizes& tiles, MatRef out, float* lse, TiledWorkspace& ws) {
  check_tiled_shapes(q, k, v, tiles);
  const Eigen::Index T = q.rows(), S = k.rows(), Dv = v.cols();
  require(out.rows() == T && out.cols() == Dv, "out must be (", T, ",", Dv, ")");
  for (Eigen::Index i0 = 0; i0 < T; i0 += tiles.query) {
    const Eigen::Index bq = std::min<Eigen::Index>(tiles.query, T - i0);
    ws.m.resize(bq);
    ws.l.resize(bq);
    ws.acc.resize(bq, Dv);
    ws.m.setConstant(kNegInf);
    ws.l.setZero();
    ws.acc.setZero();
    const Eigen::Index end = key_end(sc, i0 + bq, S);
    for (Eigen::Index j0 = 0; j0 < end; j0 += tiles.key) {
      const Eigen::Index bk = std::min<Eigen::Index>(tiles.key, end - j0);
      ws.s.resize(bq, bk);
      ws.p.resize(bq, bk);
      block_scores(q, k, sc, i0, j0, ws.s);
      online_softmax_step(ws.s, ws.m, ws.l, ws.p, ws.acc);
      ws.pv.resize(bq, Dv);
      matmul_nn(ws.p, v.middleRows(j0, bk), ws.pv);
      ws.acc += ws.pv;
    }
    for (Eigen::Index r = 0; r < bq; ++r) {
      const bool empty = ws.l[r] == 0.0f;
      out.row(i0 + r) = empty ? RowVec::Zero(Dv) : RowVec(ws.acc.row(r) / ws.l[r]);
      lse[i0 + r] = empty ? kNegInf : ws.m[r] + std::log(ws.l[r]);
    }
  }
}

// Backward, FlashAttention-2's loop with the key tile outside: for key tile j and every query tile
// i that sees it, recompute w = exp(s - lse_i) and add its share to dq_i, dk_j, dv_j.
void tiled_attention_backward(ConstMatRef q, ConstMatRef k, ConstMatRef v, ConstMatRef out,
                              const float* lse, ConstMatRef dout, const TiledScores& sc,
                              const TileSizes& tiles, MatRef dq, MatRef dk, MatRef dv,
                              bool accumulate, TiledWorkspace& ws) {
  check_tiled_shapes(q, k, v, tiles);
  const Eigen::Index T = q.rows(), S = k.rows(), Dh = q.cols(), Dv = v.cols();
  require(out.rows() == T && dout.rows() == T && out.cols() == Dv && dout.cols() == Dv &&
              dq.rows() == T && dq.cols() == Dh && dk.rows() == S && dk.cols() == Dh &&
              dv.rows() == S && dv.cols() == Dv,
          "tiled_attention_backward: the gradients must have the shapes of q, k, v and out");
  // delta_i = rowsum(dout_i * out_i) = sum_j w_ij (dout_i . v_j): the softmax backward's
  // w . dw term, without the weights.
  ws.delta.resize(T);
  for (Eigen::Index i = 0; i < T; ++i) ws.delta[i] = dout.row(i).dot(out.row(i));
  dq.setZero();
  for (Eigen::Index j0 = 0; j0 < S; j0 += tiles.key) {
    const Eigen::Index bk = std::min<Eigen::Index>(tiles.key, S - j0);
    ws.dk.setZero(bk, Dh);
    ws.dv.setZero(bk, Dv);
    // Causal: query tiles that end before this key tile starts see none of it.
    const Eigen::Index first = sc.causal ? (j0 / tiles.query) * tiles.query : 0;
    for (Eigen::Index i0 = first; i0 < T; i0 += tiles.query) {
      const Eigen::Index bq = std::min<Eigen::Index>(tiles.query, T - i0);
      ws.s.resize(bq, bk);
      ws.p.resize(bq, bk);
      ws.dp.resize(bq, bk);
      block_scores(q, k, sc, i0, j0, ws.s);
      for (Eigen::Index r = 0; r < bq; ++r) {  // w = exp(s - lse); a row that sees nothing: 0
        const float shift = lse[i0 + r];
        if (shift == kNegInf) ws.p.row(r).setZero();
        else exp_shifted_sum(ws.s.row(r).data(), shift, ws.p.row(r).data(), bk);
      }
      // out = w v  =>  dv += w^T dout, dw = dout v^T
      ws.kv.resize(bk, Dv);
      matmul_tn(ws.p, dout.middleRows(i0, bq), ws.kv);
      ws.dv += ws.kv;
      matmul_nt(dout.middleRows(i0, bq), v.middleRows(j0, bk), ws.dp);
      // w = softmax(s)  =>  ds = w * (dw - delta)
      for (Eigen::Index r = 0; r < bq; ++r)
        ws.dp.row(r).array() = ws.p.row(r).array() * (ws.dp.row(r).array() - ws.delta[i0 + r]);
      // s = q k^T * scale (+ bias)  =>  dq += ds k * scale, dk += ds^T q * scale
      ws.pv.resize(bq, Dh);
      matmul_nn(ws.dp, k.middleRows(j0, bk), ws.pv, sc.scale);
      dq.middleRows(i0, bq) += ws.pv;
      ws.kv.resize(bk, Dh);
      matmul_tn(ws.dp, q.middleRows(i0, bq), ws.kv, sc.scale);
      ws.dk += ws.kv;
    }
    if (accumulate) {
      dk.middleRows(j0, bk) += ws.dk;
      dv.middleRows(j0, bk) += ws.dv;
    } else {
      dk.middleRows(j0, bk) = ws.dk;
      dv.middleRows(j0, bk) = ws.dv;
    }
  }
}

void plain_attention_reference(ConstMatRef q, ConstMatRef k, ConstMatRef v, const TiledScores& sc,
                               MatRef out, Mat* weights) {
  check_tiled_shapes(q, k, v, TileSizes{});
  const Eigen::Index T = q.rows(), S = k.rows();
  Mat w(T, S);
  matmul_nt(q, k, w, sc.scale);
  if (sc.alibi_slope != 0.0f) add_alibi_bias(w, sc.alibi_slope);
  if (sc.causal) apply_causal_mask(w);
  softmax_rows(w, w);
  matmul_nn(w, v, out);
  if (weights) *weights = std::move(w);
}

TiledTrace tiled_attention_trace(ConstMatRef q, ConstMatRef k, ConstMatRef v,
                                 const TiledScores& sc, int tile) {
  const TileSizes tiles{int(q.rows()), tile};
  check_tiled_shapes(q, k, v, tiles);
  const Eigen::Index T = q.rows(), Dv = v.cols();
  require(tile >= 1 && tile <= T, "the tile size (", tile, ") must be in [1, ", T, "]");
  TiledTrace t;
  t.tile = tile;
  t.tiles = int((T + tile - 1) / tile);
  t.row_max.resize(t.tiles, T);
  t.row_sum.resize(t.tiles, T);
  // The forward's loop for one query tile of all T rows, with m and l kept after each key tile
  // (the causal mask does not end it early, so every row has a value after every tile).
  RowVec m = RowVec::Constant(T, kNegInf), l = RowVec::Zero(T);
  Mat acc = Mat::Zero(T, Dv), s, p, pv(T, Dv);
  for (int t_i = 0; t_i < t.tiles; ++t_i) {
    const Eigen::Index j0 = Eigen::Index(t_i) * tile, bk = std::min<Eigen::Index>(tile, T - j0);
    s.resize(T, bk);
    p.resize(T, bk);
    block_scores(q, k, sc, 0, j0, s);
    online_softmax_step(s, m, l, p, acc);
    matmul_nn(p, v.middleRows(j0, bk), pv);
    acc += pv;
    t.row_max.row(t_i) = m;
    t.row_sum.row(t_i) = l;
  }
  t.out.resize(T, Dv);
  for (Eigen::Index r = 0; r < T; ++r) t.out.row(r) = acc.row(r) / l[r];
  // The softmax rows from the final m and l: exp(score - m) / l.
  t.weights.resize(T, T);
  block_scores(q, k, sc, 0, 0, t.weights);
  for (Eigen::Index r = 0; r < T; ++r) {
    const RowVec scores = t.weights.row(r);
    exp_shifted_sum(scores.data(), m[r], t.weights.row(r).data(), T);
    t.weights.row(r) /= l[r];
  }
  t.plain_out.resize(T, Dv);
  plain_attention_reference(q, k, v, sc, t.plain_out, &t.plain_weights);
  t.max_weight_difference = (t.weights - t.plain_weights).cwiseAbs().maxCoeff();
  t.max_out_difference = (t.out - t.plain_out).cwiseAbs().maxCoeff();
  return t;
}

int64_t plain_attention_bytes(int64_t B, int64_t H, int64_t T, bool training) {
  return (B * H * T * T + (training ? 2 * T * T : 0)) * int64_t(sizeof(float));
}

int64_t tiled_attention_bytes(int64_t B, int64_t H, int64_t T, int64_t d_head,
                              const TileSizes& tiles, bool training) {
  const int64_t bq = std::min<int64_t>(tiles.query, T), bk = std::min<int64_t>(tiles.key, T);
  int64_t floats = B * H * T + 3 * bq * bk + 2 * bq * d_head + 2 * bq;
  if (training) floats += 3 * bk * d_head + T;
  return floats * int64_t(sizeof(float));
}

}  // namespace attn
