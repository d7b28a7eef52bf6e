#include "attn/nn/cross_attention.h"

#include <cmath>

#include "attn/kernels/kernels.h"
#include "attn/kernels/ops.h"

namespace attn {

namespace {

// Runs before any member is built, so nothing is drawn for a bad config; returns kv_heads resolved.
int checked_kv_heads(int d_model, int n_heads, int kv_heads, float attn_dropout) {
  require_config(d_model >= 1, "d_model", "d_model (", d_model, ") must be >= 1");
  require_config(n_heads >= 1, "n_heads", "n_heads (", n_heads, ") must be >= 1");
  require_config(d_model % n_heads == 0, "d_model", "d_model (", d_model,
                 ") must be divisible by n_heads (", n_heads, ")");
  if (kv_heads == 0) kv_heads = n_heads;
  require_config(kv_heads >= 1 && n_heads % kv_heads == 0, "kv_heads", "kv_heads (", kv_heads,
                 ") must divide n_heads (", n_heads, ")");
  check_dropout_p("attn_dropout", attn_dropout);
  return kv_heads;
}

void add_linear(const std::string& name, Linear& l, std::vector<ParamRef>& out) {
  out.push_back({name + ".weight", {l.out_features, l.in_features}, l.weight.data(), l.dweight.data()});
  out.push_back({name + ".bias", {l.out_features}, l.bias.data(), l.dbias.data()});
}

}  // namespace

CrossAttention::CrossAttention(int D, int H, int KV, float p_attn, Rng& rng)
    : d_model(D),
      n_heads(H),
      kv_heads(checked_kv_heads(D, H, KV, p_attn)),
      d_head(D / H),
      attn_dropout(p_attn),
      q_proj(D, D, rng),
      kv_proj(D, 2 * kv_heads * d_head, rng),
      out_proj(D, D, rng) {}

AttentionMap CrossAttention::head_map() const {
  AttentionMap a;
  a.scale = 1.0f / std::sqrt(static_cast<float>(d_head));
  a.mode = MaskMode::None;
  return a;
}

void CrossAttention::encode(ConstMatRef src, int B, int S, const std::vector<uint8_t>& pad,
                            Source& out) const {
  require(B >= 1, "batch size (", B, ") must be >= 1");
  require(S >= 1, "source length (", S, ") must be >= 1");
  require(src.cols() == d_model, "the source must have ", d_model, " features, got ", src.cols());
  require(src.rows() == Eigen::Index(B) * S, "the source has ", src.rows(), " rows but B*S = ",
          Eigen::Index(B) * S);
  require(pad.empty() || pad.size() == size_t(B) * size_t(S), "the key-padding mask has ",
          pad.size(), " flags for B*S = ", Eigen::Index(B) * S, " keys");
  out.B = B;
  out.S = S;
  out.x = src;
  out.kv.resize(src.rows(), kv_proj.out_features);
  kv_proj.forward(out.x, out.kv);
  out.pad = pad;
}

void CrossAttention::forward(ConstMatRef x, int B, int T, const Source& src, bool training,
                             Rng& rng, State& s, MatRef y) {
  run(x, B, T, src, training ? &rng : nullptr, s, y);
}

void CrossAttention::forward(ConstMatRef x, int B, int T, const Source& src, State& s, MatRef y) {
  run(x, B, T, src, nullptr, s, y);
}

// x (B*T,D), src (B*S) -> y (B*T,D); caches x, q (N,H Dh), probs (B,H,T,S), the dropout masks and
// the merged heads.
void CrossAttention::run(ConstMatRef x, int B, int T, const Source& src, Rng* dropout, State& s,
                         MatRef y) {
  require(B >= 1 && T >= 1, "batch size (", B, ") and target length (", T, ") must be >= 1");
  require(x.cols() == d_model, "expected feature dim ", d_model, ", got ", x.cols());
  require(x.rows() == Eigen::Index(B) * T, "x has ", x.rows(), " rows but B*T = ",
          Eigen::Index(B) * T);
  require_state(src.B == B && src.kv.rows() == Eigen::Index(B) * src.S &&
                    src.kv.cols() == kv_proj.out_features,
                "cross-attention needs a source encoded for batch size ", B, " (it holds ", src.B,
                ")");
  const int H = n_heads, Dh = d_head, S = src.S;
  const Eigen::Index N = Eigen::Index(B) * T, KVDh = Eigen::Index(kv_heads) * Dh;
  s.B = B;
  s.T = T;
  s.S = S;
  s.x = x;  // from here on only the copy is read, so y may alias x
  s.q.resize(N, q_proj.out_features);
  q_proj.forward(s.x, s.q);
  s.probs.resize(N * H, S);
  s.merged.resize(N, d_model);
  s.attn_dropped = dropout && attn_dropout > 0.0f;
  if (s.attn_dropped) {
    s.attn.resize(N * H, S);
    s.attn_mask.resize(N * H, S);
  }
  const AttentionMap map = head_map();
  for (int b = 0; b < B; ++b) {
    const Eigen::Index r0 = Eigen::Index(b) * T, s0 = Eigen::Index(b) * S;
    const uint8_t* pad = src.pad.empty() ? nullptr : src.pad.data() + s0;
    for (int h = 0; h < H; ++h) {
      const Eigen::Index p0 = (Eigen::Index(b) * H + h) * T, g0 = Eigen::Index(kv_head(h)) * Dh;
      auto p = s.probs.block(p0, 0, T, S);
      attention_map_forward(map, s.q.block(r0, Eigen::Index(h) * Dh, T, Dh),
                            src.kv.block(s0, g0, S, Dh), p, 0, 0, pad);
      auto out = s.merged.block(r0, Eigen::Index(h) * Dh, T, Dh);
      if (s.attn_dropped) {
        auto a = s.attn.block(p0, 0, T, S);
        a = p;
        dropout_forward(a, s.attn_mask.block(p0, 0, T, S), attn_dropout, *dropout);
        matmul_nn(a, src.kv.block(s0, KVDh + g0, S, Dh), out);
      } else {
        matmul_nn(p, src.kv.block(s0, KVDh + g0, S, Dh), out);
      }
    }
  }
  out_proj.forward(s.merged, y);
}

// Backward of run, in reverse order: y = out_proj(merged); merged_h = w v; w = dropout(probs);
// probs = softmax(q k^T * scale); q = q_proj(x), [k v] = kv_proj(src).
void CrossAttention::backward(State& s, const Source& src, ConstMatRef dy, MatRef dx,
                              MatRef dsrc) {
  const int B = s.B, T = s.T, S = s.S, H = n_heads, Dh = d_head;
  const Eigen::Index N = Eigen::Index(B) * T, KVDh = Eigen::Index(kv_heads) * Dh;
  require(dy.rows() == N && dy.cols() == d_model, "dy must be (", N, ",", d_model, "), got (",
          dy.rows(), ",", dy.cols(), ")");
  require(dsrc.rows() == src.x.rows() && dsrc.cols() == d_model, "dsrc must be (", src.x.rows(),
          ",", d_model, "), got (", dsrc.rows(), ",", dsrc.cols(), ")");
  require_state(src.S == S && src.B == B, "backward needs the source its forward read");
  s.dmerged.resize(N, d_model);
  s.dq.resize(N, q_proj.out_features);
  s.dkv.setZero(src.kv.rows(), kv_proj.out_features);
  s.dw.resize(T, S);
  s.ds.resize(T, S);
  out_proj.backward(s.merged, dy, s.dmerged);
  const AttentionMap map = head_map();
  const Mat& w = s.weights();
  for (int b = 0; b < B; ++b) {
    const Eigen::Index r0 = Eigen::Index(b) * T, s0 = Eigen::Index(b) * S;
    for (int h = 0; h < H; ++h) {
      const Eigen::Index p0 = (Eigen::Index(b) * H + h) * T, g0 = Eigen::Index(kv_head(h)) * Dh;
      auto dout = s.dmerged.block(r0, Eigen::Index(h) * Dh, T, Dh);
      // merged_h = w v  =>  dw = dout v^T, dv += w^T dout
      matmul_nt(dout, src.kv.block(s0, KVDh + g0, S, Dh), s.dw);
      Mat dv_share(S, Dh);
      matmul_tn(w.block(p0, 0, T, S), dout, dv_share);
      s.dkv.block(s0, KVDh + g0, S, Dh) += dv_share;
      if (s.attn_dropped) s.dw = s.dw.cwiseProduct(s.attn_mask.block(p0, 0, T, S));
      attention_map_backward(s.probs.block(p0, 0, T, S), s.dw, s.ds);
      attention_scores_backward(map, s.ds, s.q.block(r0, Eigen::Index(h) * Dh, T, Dh),
                                src.kv.block(s0, g0, S, Dh),
                                s.dq.block(r0, Eigen::Index(h) * Dh, T, Dh),
                                s.dkv.block(s0, g0, S, Dh), true);
    }
  }
  q_proj.backward(s.x, s.dq, dx);
  kv_proj.backward(src.x, s.dkv, dsrc);
}

// Row i of sequence b: q = q_proj(x_i), per head w = softmax(q k^T * scale) over the cached keys,
// merged_h = w v; y = out_proj(merged).
void CrossAttention::forward_rows(ConstMatRef x, const Source& src, int b, MatRef weights,
                                  MatRef y) const {
  const int H = n_heads, Dh = d_head, S = src.S, m = int(x.rows());
  const Eigen::Index KVDh = Eigen::Index(kv_heads) * Dh, s0 = Eigen::Index(b) * S;
  require(m >= 1 && x.cols() == d_model, "forward_rows expects rows of ", d_model,
          " features, got (", x.rows(), ",", x.cols(), ")");
  require_state(src.kv.cols() == kv_proj.out_features && src.B >= 1,
                "forward_rows needs a source encoded by this layer");
  require(b >= 0 && b < src.B, "batch index (", b, ") must be in [0, ", src.B - 1, "]");
  require(weights.rows() == Eigen::Index(m) * H && weights.cols() == S,
          "forward_rows' weights must be (", m * H, ",", S, "), got (", weights.rows(), ",",
          weights.cols(), ")");
  Mat q(m, q_proj.out_features), merged(m, d_model);
  q_proj.forward(x, q);  // x is not read again, so y may alias it
  const uint8_t* pad = src.pad.empty() ? nullptr : src.pad.data() + s0;
  const AttentionMap map = head_map();
  Mat p(1, S);
  for (int i = 0; i < m; ++i)
    for (int h = 0; h < H; ++h) {
      const Eigen::Index g0 = Eigen::Index(kv_head(h)) * Dh;
      attention_map_forward(map, q.block(i, Eigen::Index(h) * Dh, 1, Dh),
                            src.kv.block(s0, g0, S, Dh), p, 0, 0, pad);
      weights.row(Eigen::Index(i) * H + h) = p;
      matmul_nn(p, src.kv.block(s0, KVDh + g0, S, Dh), merged.block(i, Eigen::Index(h) * Dh, 1, Dh));
    }
  out_proj.forward(merged, y);
}

void CrossAttention::append_params(const std::string& prefix, std::vector<ParamRef>& out) {
  add_linear(prefix + "cross_q_proj", q_proj, out);
  add_linear(prefix + "cross_kv_proj", kv_proj, out);
  add_linear(prefix + "cross_out_proj", out_proj, out);
}

Mat naive_cross_attention(const CrossAttention& m, const Mat& x, int B, int T, const Mat& src,
                          int S, const std::vector<uint8_t>& pad) {
  const int D = m.d_model, H = m.n_heads, Dh = m.d_head, KV = m.kv_heads;
  // y = x W^T + b, row by row in double.
  const auto linear = [](const Linear& l, const Mat& in) {
    Mat out(in.rows(), l.out_features);
    for (Eigen::Index r = 0; r < in.rows(); ++r)
      for (int o = 0; o < l.out_features; ++o) {
        double acc = l.bias[o];
        for (int c = 0; c < l.in_features; ++c) acc += double(in(r, c)) * double(l.weight(o, c));
        out(r, o) = float(acc);
      }
    return out;
  };
  const Mat q = linear(m.q_proj, x), kv = linear(m.kv_proj, src);
  Mat merged = Mat::Zero(Eigen::Index(B) * T, D);
  const AttentionMap map = m.head_map();
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int g = m.kv_head(h);
      const Mat qh = q.block(Eigen::Index(b) * T, Eigen::Index(h) * Dh, T, Dh);
      const Mat kh = kv.block(Eigen::Index(b) * S, Eigen::Index(g) * Dh, S, Dh);
      const Mat vh = kv.block(Eigen::Index(b) * S, Eigen::Index(KV + g) * Dh, S, Dh);
      const Mat w = naive_attention_map(map, qh, kh, 0, 0,
                                        pad.empty() ? nullptr : pad.data() + size_t(b) * size_t(S));
      for (int i = 0; i < T; ++i)
        for (int d = 0; d < Dh; ++d) {
          double acc = 0;
          for (int j = 0; j < S; ++j) acc += double(w(i, j)) * double(vh(j, d));
          merged(Eigen::Index(b) * T + i, Eigen::Index(h) * Dh + d) = float(acc);
        }
    }
  return linear(m.out_proj, merged);
}

}  // namespace attn
