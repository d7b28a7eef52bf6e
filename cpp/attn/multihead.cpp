#include "attn/multihead.h"

#include <cmath>

#include "attn/kernels.h"
#include "attn/ops.h"

namespace attn {

namespace {

// Runs before any member is built, so a bad config is reported in the curriculum's words.
int checked_d_model(int d_model, int n_heads, int max_context_length, float attn_dropout,
                    float out_dropout) {
  require_config(d_model >= 1, "d_model", "d_model (", d_model, ") must be >= 1");
  require_config(n_heads >= 1, "n_heads", "n_heads (", n_heads, ") must be >= 1");
  require_config(d_model % n_heads == 0, "d_model", "d_model (", d_model,
                 ") must be divisible by n_heads (", n_heads, ")");
  require_config(max_context_length >= 1, "seq_len", "max_context_length (", max_context_length,
                 ") must be >= 1");
  check_dropout_p("attn_dropout", attn_dropout);
  check_dropout_p("out_dropout", out_dropout);
  return d_model;
}

// Head h of batch b: its first row in the (N,.) matrices and in the (B*H*T,T) ones, and its
// q, k, v as (T,Dh) strided views into the fused qkv (N,3D): columns h*Dh, D + h*Dh, 2D + h*Dh.
struct Head {
  Eigen::Index r0, p0;
  Eigen::Block<Mat> q, k, v;
};

Head head_views(Mat& qkv, int b, int h, int T, int H, int Dh) {
  const Eigen::Index D = Eigen::Index(H) * Dh, r0 = Eigen::Index(b) * T;
  return {r0, (Eigen::Index(b) * H + h) * T, qkv.block(r0, h * Dh, T, Dh),
          qkv.block(r0, D + h * Dh, T, Dh), qkv.block(r0, 2 * D + h * Dh, T, Dh)};
}

}  // namespace

MultiHeadSelfAttention::MultiHeadSelfAttention(int d_model_, int n_heads_, int C, float p_attn,
                                               float p_out, Rng& rng)
    : d_model(checked_d_model(d_model_, n_heads_, C, p_attn, p_out)),
      n_heads(n_heads_),
      d_head(d_model_ / n_heads_),
      max_context_length(C),
      attn_dropout(p_attn),
      out_dropout(p_out),
      qkv_proj(d_model_, 3 * d_model_, rng),
      out_proj(d_model_, d_model_, rng) {
  head_off.assign(n_heads, 0);
}

float MultiHeadSelfAttention::score_scale() const {
  return scale_scores ? 1.0f / std::sqrt(static_cast<float>(d_head)) : 1.0f;
}

void MultiHeadSelfAttention::check_input(Eigen::Index rows, Eigen::Index cols, int B,
                                         int T) const {
  require(B >= 1, "batch size (", B, ") must be >= 1");
  require(T >= 1, "sequence length (", T, ") must be >= 1");
  require(T <= max_context_length, "sequence length (", T, ") exceeds max_context_length (",
          max_context_length, ")");
  require(cols == d_model, "expected feature dim ", d_model, ", got ", cols);
  require(rows == Eigen::Index(B) * T, "x has ", rows, " rows but B*T = ", Eigen::Index(B) * T);
}

// x (B*T,D) -> y (B*T,D); caches x, qkv, probs (B,H,T,T), dropout masks, merged heads, and with
// s.inspect the masked scores (B,H,T,T).
void MultiHeadSelfAttention::forward(ConstMatRef x, int B, int T, bool training, Rng& rng,
                                     State& s, MatRef y) {
  check_input(x.rows(), x.cols(), B, T);
  const int D = d_model, H = n_heads, Dh = d_head;
  const Eigen::Index N = Eigen::Index(B) * T;
  s.B = B;
  s.T = T;
  s.x.resize(N, D);
  s.qkv.resize(N, 3 * D);
  s.probs.resize(N * H, T);
  if (s.inspect) s.scores.resize(N * H, T);
  s.merged.resize(N, D);
  s.backward_done = false;
  s.attn_dropped = training && attn_dropout > 0.0f;
  s.out_dropped = training && out_dropout > 0.0f;
  if (s.attn_dropped) {
    s.attn.resize(N * H, T);
    s.attn_mask.resize(N * H, T);
  }

  require(head_off.size() == size_t(H), "head_off has ", head_off.size(), " entries for ", H,
          " heads");
  s.x = x;  // from here on only the copy is read, so y may alias x
  qkv_proj.forward(s.x, s.qkv);
  const float scale = score_scale();
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      Head hd = head_views(s.qkv, b, h, T, H, Dh);
      const Eigen::Index r0 = hd.r0, p0 = hd.p0;
      auto &q = hd.q, &k = hd.k, &v = hd.v;
      auto p = s.probs.block(p0, 0, T, T);
      matmul_nt(q, k, p, scale);  // scores (T,T) = q k^T / sqrt(Dh)
      apply_mask(p, mask);
      if (s.inspect) s.scores.block(p0, 0, T, T) = p;
      softmax_rows(p, p);
      if (head_off[h]) {
        s.merged.block(r0, h * Dh, T, Dh).setZero();
        if (s.attn_dropped) {  // draw the same dropout masks as if the head were on
          auto a = s.attn.block(p0, 0, T, T);
          a = p;
          dropout_forward(a, s.attn_mask.block(p0, 0, T, T), attn_dropout, rng);
        }
      } else if (s.attn_dropped) {
        auto a = s.attn.block(p0, 0, T, T);
        a = p;
        dropout_forward(a, s.attn_mask.block(p0, 0, T, T), attn_dropout, rng);
        matmul_nn(a, v, s.merged.block(r0, h * Dh, T, Dh));
      } else {
        matmul_nn(p, v, s.merged.block(r0, h * Dh, T, Dh));
      }
    }
  out_proj.forward(s.merged, y);
  if (s.out_dropped) {
    s.out_mask.resize(N, D);
    dropout_forward(y, s.out_mask, out_dropout, rng);
  }
}

// Backward of the forward above, in reverse order. Reads the cache; overwrites parameter grads.
// dy (B*T,D) -> dx (B*T,D); leaves dmerged, dqkv and, per head, dweights and dscores in s.
void MultiHeadSelfAttention::backward(State& s, ConstMatRef dy, MatRef dx) {
  const int D = d_model, H = n_heads, Dh = d_head, B = s.B, T = s.T;
  const Eigen::Index N = Eigen::Index(B) * T;
  require(dy.rows() == N && dy.cols() == D, "dy must be (", N, ",", D, "), got (", dy.rows(),
          ",", dy.cols(), ")");
  s.dqkv.resize(N, 3 * D);
  s.dmerged.resize(N, D);
  s.dweights.resize(s.inspect ? N * H : T, T);
  s.dscores.resize(s.inspect ? N * H : T, T);
  const float scale = score_scale();

  if (s.out_dropped) {  // y = out_proj(merged) * out_mask
    s.dx_scratch.resize(N, D);
    s.dx_scratch = dy.cwiseProduct(s.out_mask);
    out_proj.backward(s.merged, s.dx_scratch, s.dmerged);
  } else {
    out_proj.backward(s.merged, dy, s.dmerged);
  }
  const Mat& w = s.weights();
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      Head hd = head_views(s.qkv, b, h, T, H, Dh);
      const Eigen::Index r0 = hd.r0, p0 = hd.p0;
      auto &q = hd.q, &k = hd.k, &v = hd.v;
      auto dout = s.dmerged.block(r0, h * Dh, T, Dh);
      auto dw = s.dweights.block(s.inspect ? p0 : 0, 0, T, T);
      auto ds = s.dscores.block(s.inspect ? p0 : 0, 0, T, T);
      if (head_off[h]) {  // merged_h = 0: nothing flows back into this head
        dout.setZero();
        dw.setZero();
        ds.setZero();
        for (int part = 0; part < 3; ++part) s.dqkv.block(r0, part * D + h * Dh, T, Dh).setZero();
        continue;
      }
      auto a = w.block(p0, 0, T, T);
      // merged_h = a v  =>  dv = a^T dout, da = dout v^T
      matmul_tn(a, dout, s.dqkv.block(r0, 2 * D + h * Dh, T, Dh));
      matmul_nt(dout, v, dw);
      // probs = softmax(scores); masked cells have probs 0, so their dscores are 0
      if (s.attn_dropped) {  // a = probs * attn_mask
        ds = dw.cwiseProduct(s.attn_mask.block(p0, 0, T, T));
        softmax_rows_backward(s.probs.block(p0, 0, T, T), ds, ds);
      } else {
        softmax_rows_backward(s.probs.block(p0, 0, T, T), dw, ds);
      }
      // scores = q k^T * scale  =>  dq = dscores k * scale, dk = dscores^T q * scale
      auto dq = s.dqkv.block(r0, h * Dh, T, Dh);
      auto dk = s.dqkv.block(r0, D + h * Dh, T, Dh);
      matmul_nn(ds, k, dq, scale);
      matmul_tn(ds, q, dk, scale);
    }
  qkv_proj.backward(s.x, s.dqkv, dx);
  s.backward_done = true;
}

MultiHeadSelfAttention::HeadRow MultiHeadSelfAttention::head_row(const State& s, int b, int h,
                                                                 int i) const {
  const int H = n_heads, Dh = d_head, T = s.T;
  require_state(s.backward_done, "head_row needs a forward and a backward pass first");
  require_state(s.inspect, "head_row needs a forward pass with State::inspect set");
  require_state(!s.attn_dropped && !s.out_dropped, "head_row needs a forward pass in eval mode");
  require(b >= 0 && b < s.B, "batch index (", b, ") must be in [0, ", s.B - 1, "]");
  require(h >= 0 && h < H, "head (", h, ") must be in [0, ", H - 1, "]");
  require(i >= 0 && i < T, "query position (", i, ") must be in [0, ", T - 1, "]");
  const Eigen::Index D = d_model, r0 = Eigen::Index(b) * T, p0 = (Eigen::Index(b) * H + h) * T;
  HeadRow r;
  r.scale = score_scale();
  r.q = s.qkv.block(r0 + i, h * Dh, 1, Dh);
  r.k = s.qkv.block(r0, D + h * Dh, T, Dh);
  r.v = s.qkv.block(r0, 2 * D + h * Dh, T, Dh);
  r.scores = s.scores.row(p0 + i);
  r.weights = s.probs.row(p0 + i);
  r.out = s.merged.block(r0 + i, h * Dh, 1, Dh);
  r.d_out = s.dmerged.block(r0 + i, h * Dh, 1, Dh);
  r.d_weights = s.dweights.row(p0 + i);
  r.d_scores = s.dscores.row(p0 + i);
  r.d_q = s.dqkv.block(r0 + i, h * Dh, 1, Dh);
  r.d_k = s.dqkv.block(r0, D + h * Dh, T, Dh);
  r.d_v = s.dqkv.block(r0, 2 * D + h * Dh, T, Dh);
  return r;
}

Mat split_heads(ConstMatRef x, int B, int T, int H) {
  require(H >= 1 && x.cols() % H == 0, "feature dim (", x.cols(), ") must be divisible by H (",
          H, ")");
  require(x.rows() == Eigen::Index(B) * T, "x has ", x.rows(), " rows but B*T = ",
          Eigen::Index(B) * T);
  const Eigen::Index Dh = x.cols() / H;
  Mat out(Eigen::Index(B) * H * T, Dh);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      out.block((Eigen::Index(b) * H + h) * T, 0, T, Dh) = x.block(Eigen::Index(b) * T, h * Dh, T, Dh);
  return out;
}

Mat merge_heads(ConstMatRef x, int B, int T, int H) {
  require(x.rows() == Eigen::Index(B) * H * T, "x has ", x.rows(), " rows but B*H*T = ",
          Eigen::Index(B) * H * T);
  const Eigen::Index Dh = x.cols();
  Mat out(Eigen::Index(B) * T, H * Dh);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      out.block(Eigen::Index(b) * T, h * Dh, T, Dh) = x.block((Eigen::Index(b) * H + h) * T, 0, T, Dh);
  return out;
}

}  // namespace attn
