#include "attn/nn/multihead.h"

#include <cmath>

#include "attn/base/parallel.h"
#include "attn/kernels/kernels.h"
#include "attn/kernels/ops.h"
#include "attn/nn/attention_map.h"

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

// The options with kv_heads resolved, checked before any member is built (so nothing is drawn
// for a bad config). Runs after checked_d_model, so n_heads >= 1 and d_model % n_heads == 0.
AttentionOptions checked_options(AttentionOptions o, int d_model, int n_heads) {
  if (o.kv_heads == 0) o.kv_heads = n_heads;
  require_config(o.kv_heads >= 1 && n_heads % o.kv_heads == 0, "kv_heads", "kv_heads (",
                 o.kv_heads, ") must divide n_heads (", n_heads, ")");
  const int d_head = d_model / n_heads;
  require_config(!o.rope || d_head % 2 == 0, "positions", "d_head (", d_head,
                 ") must be even for rope positions");
  require_config(o.pattern.window >= 0, "window", "window (", o.pattern.window, ") must be >= 1");
  require_config(o.pattern.stride >= 0, "stride", "stride (", o.pattern.stride, ") must be >= 1");
  return o;
}

// Query head h of batch b: its first row in the (N,.) matrices and in the (B*H*T,T) ones, and
// its q, k, v as (T,Dh) strided views into the fused qkv (N,W) (or into its gradient), at the
// columns m.q_offset(h), m.k_offset(h), m.v_offset(h): h Dh, D + h Dh, 2D + h Dh ungrouped.
struct Head {
  Eigen::Index r0, p0;
  Eigen::Block<Mat> q, k, v;
};

Head head_views(const MultiHeadSelfAttention& m, Mat& qkv, int b, int h, int T) {
  const int Dh = m.d_head;
  const Eigen::Index r0 = Eigen::Index(b) * T;
  return {r0, (Eigen::Index(b) * m.n_heads + h) * T, qkv.block(r0, m.q_offset(h), T, Dh),
          qkv.block(r0, m.k_offset(h), T, Dh), qkv.block(r0, m.v_offset(h), T, Dh)};
}

// A differential head's second query and key, (T,Dh) views like head_views'.
struct Head2 {
  Eigen::Block<Mat> q, k;
};

Head2 head2_views(const MultiHeadSelfAttention& m, Mat& qkv, int b, int h, int T) {
  const Eigen::Index r0 = Eigen::Index(b) * T;
  return {qkv.block(r0, m.q2_offset(h), T, m.d_head), qkv.block(r0, m.k2_offset(h), T, m.d_head)};
}

std::optional<Rope> make_rope(const AttentionOptions& o, int max_context_length, int d_head) {
  if (!o.rope) return std::nullopt;
  return Rope(max_context_length, d_head);
}

}  // namespace

MultiHeadSelfAttention::MultiHeadSelfAttention(int d_model_, int n_heads_, int C, float p_attn,
                                               float p_out, Rng& rng,
                                               const AttentionOptions& options_)
    : d_model(checked_d_model(d_model_, n_heads_, C, p_attn, p_out)),
      n_heads(n_heads_),
      d_head(d_model_ / n_heads_),
      max_context_length(C),
      attn_dropout(p_attn),
      out_dropout(p_out),
      options(checked_options(options_, d_model_, n_heads_)),
      qkv_proj(d_model_, (qk_maps() * (n_heads_ + options.kv_heads) + options.kv_heads) * d_head,
               rng, options_.bias),
      out_proj(d_model_, d_model_, rng, options_.bias),
      rope(make_rope(options, C, d_head)) {
  head_off.assign(n_heads, 0);
  if (options.alibi) alibi_m = attn::alibi_slopes(n_heads);
  if (options.differential) {
    lambda = RowVec::Constant(n_heads, kDiffLambdaInit);
    dlambda = RowVec::Zero(n_heads);
  }
}

ModuleReport MultiHeadSelfAttention::report(int D, int H, const AttentionOptions& o, int B,
                                            int T) {
  const int KV = o.kv_heads > 0 ? o.kv_heads : H, Dh = D / H, M = o.differential ? 2 : 1;
  const int W = (M * (H + KV) + KV) * Dh, heads = B * H;  // W: 3D without GQA
  const int64_t N = int64_t(B) * T;
  ModuleReport r;
  if (o.differential) r.own_tensor("diff_lambda", {H});
  r.add(Linear::report(D, W, o.bias, N), "qkv_proj.");
  // Per head: scores = q k^T (each map), out = weights v; then their backward.
  r.step({{"scores q k^T", "nt", T, T, Dh, M * heads}, {"weights v", "nn", T, Dh, T, heads}},
         {{"dv = w^T dout", "tn", T, Dh, T, heads},
          {"dweights = dout v^T", "nt", T, T, Dh, heads},
          {"dq = dscores k", "nn", T, Dh, T, M * heads},
          {"dk = dscores^T q", "tn", T, Dh, T, M * heads}});
  r.add(Linear::report(D, D, o.bias, N), "out_proj.");
  r.activations += N * D + N * W + int64_t(o.differential ? 3 : 1) * heads * T * T + N * D;
  return r;
}

void MultiHeadSelfAttention::append_params(const std::string& prefix,
                                           std::vector<ParamRef>& out) {
  if (options.differential)
    out.push_back({prefix + "diff_lambda", {n_heads}, lambda.data(), dlambda.data()});
  qkv_proj.append_params(prefix + "qkv_proj.", out);
  out_proj.append_params(prefix + "out_proj.", out);
}

float MultiHeadSelfAttention::score_scale() const {
  return scale_scores ? 1.0f / std::sqrt(static_cast<float>(d_head)) : 1.0f;
}

AttentionMap MultiHeadSelfAttention::head_map(int h) const {
  AttentionMap a;
  a.scale = score_scale();
  a.mode = mask;
  a.pattern = options.pattern;
  a.alibi = options.alibi;
  if (a.alibi) a.alibi_slope = alibi_m[size_t(h)];
  return a;
}

TiledScores MultiHeadSelfAttention::tiled_scores(int h) const {
  return {score_scale(), mask == MaskMode::Causal && options.pattern.causal,
          options.alibi ? alibi_m[size_t(h)] : 0.0f};
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

void MultiHeadSelfAttention::forward(ConstMatRef x, int B, int T, bool training, Rng& rng,
                                     State& s, MatRef y) {
  run(x, B, T, training ? &rng : nullptr, s, y);
}

void MultiHeadSelfAttention::forward(ConstMatRef x, int B, int T, State& s, MatRef y) {
  run(x, B, T, nullptr, s, y);
}

// x (B*T,D) -> y (B*T,D); caches x, qkv (N,W) (q and k rotated with RoPE), probs (B,H,T,T)
// (differential: probs2 and combined too), dropout masks (when dropout is given), merged heads,
// and with s.inspect the masked scores (B,H,T,T).
void MultiHeadSelfAttention::run(ConstMatRef x, int B, int T, Rng* dropout, State& s, MatRef y) {
  check_input(x.rows(), x.cols(), B, T);
  const int D = d_model, H = n_heads, Dh = d_head, KV = options.kv_heads;
  const bool diff = options.differential;
  const Eigen::Index N = Eigen::Index(B) * T;
  s.B = B;
  s.T = T;
  // The tiled kernel knows full causal or bidirectional rows, not windows or a second map.
  s.tiled_used = s.tiled && !s.inspect && !(dropout && attn_dropout > 0.0f) && !diff &&
                 ((mask == MaskMode::Causal && options.pattern.window == 0) || mask == MaskMode::None);
  s.x.resize(N, D);
  s.qkv.resize(N, qkv_proj.out_features);
  s.differential = diff;
  if (s.tiled_used) {
    s.probs.resize(0, 0);
    s.lse.resize(Eigen::Index(B) * H, T);
  } else {
    s.probs.resize(N * H, T);
  }
  if (diff) {
    s.probs2.resize(N * H, T);
    s.combined.resize(N * H, T);
  }
  if (s.inspect) s.scores.resize(N * H, T);
  s.merged.resize(N, D);
  s.backward_done = false;
  s.attn_dropped = dropout && attn_dropout > 0.0f;
  s.out_dropped = dropout && out_dropout > 0.0f;
  if (s.attn_dropped) {
    s.attn.resize(N * H, T);
    s.attn_mask.resize(N * H, T);
  }

  require(head_off.size() == size_t(H), "head_off has ", head_off.size(), " entries for ", H,
          " heads");
  s.x = x;  // from here on only the copy is read, so y may alias x
  qkv_proj.forward(s.x, s.qkv);
  const float scale = score_scale();
  Mat* scores = s.inspect ? &s.scores : nullptr;
  // Under the full causal mask the products skip what it hides (unless the masked scores are
  // kept); a window or stride, and the differential maps, go through attention_map.
  s.causal = mask == MaskMode::Causal && options.pattern.causal && options.pattern.window == 0 &&
             !s.inspect && !diff;
  const Causal lower_c = s.causal ? Causal::kLowerC : Causal::kNone;
  const Causal lower_a = s.causal ? Causal::kLowerA : Causal::kNone;
  // One map of head h: softmax(q k^T * scale + bias) under the mask, into p (T,T).
  const auto map = [&](int h, ConstMatRef q, ConstMatRef k, MatRef p, Mat* kept, Eigen::Index row) {
    if (!s.causal) return attention_map_forward(head_map(h), q, k, p, 0, 0, nullptr, kept, row);
    matmul_nt(q, k, p, scale, nullptr, lower_c);  // scores (T,T) = q k^T / sqrt(Dh)
    if (options.alibi) add_alibi_bias(p, alibi_m[size_t(h)]);
    softmax_rows_causal(p);
  };
  // Sequence b: RoPE on its rows, then each head. The sequences are independent: the threads
  // share them, unless attention dropout draws its masks from rng (in order, on one thread) or
  // the tiled path shares its workspace.
  const auto sequence = [&](int b) {
    const Eigen::Index rb = Eigen::Index(b) * T;
    if (rope)  // every query head's q and every K/V head's k (both maps'), each row by its position
      for (int c = 0; c < qk_maps() * (H + KV); ++c)
        rope->rotate(s.qkv.block(rb, Eigen::Index(c) * Dh, T, Dh));
    for (int h = 0; h < H; ++h) {
      Head hd = head_views(*this, s.qkv, b, h, T);
      const Eigen::Index r0 = hd.r0, p0 = hd.p0;
      if (s.tiled_used) {  // softmax(q k^T * scale + bias) v, tile by tile
        auto out = s.merged.block(r0, h * Dh, T, Dh);
        if (head_off[h]) out.setZero();
        else tiled_attention_forward(hd.q, hd.k, hd.v, tiled_scores(h), s.tiles, out,
                                     s.lse.row(Eigen::Index(b) * H + h).data(), s.tiled_ws);
        continue;
      }
      auto p = s.probs.block(p0, 0, T, T);
      map(h, hd.q, hd.k, p, scores, p0);
      // The weights that multiply V: probs, or differential probs - lambda probs2.
      Eigen::Block<Mat> w = diff ? s.combined.block(p0, 0, T, T) : p;
      if (diff) {
        Head2 hd2 = head2_views(*this, s.qkv, b, h, T);
        auto p2 = s.probs2.block(p0, 0, T, T);
        map(h, hd2.q, hd2.k, p2, nullptr, 0);
        w = p - lambda[h] * p2;
      }
      if (s.attn_dropped) {  // a head that is off draws the same masks as if it were on
        auto a = s.attn.block(p0, 0, T, T);
        a = w;
        dropout_forward(a, s.attn_mask.block(p0, 0, T, T), attn_dropout, *dropout);
        if (!head_off[h]) matmul_nn(a, hd.v, s.merged.block(r0, h * Dh, T, Dh), 1.0f, lower_a);
      } else if (!head_off[h]) {
        matmul_nn(w, hd.v, s.merged.block(r0, h * Dh, T, Dh), 1.0f, lower_a);
      }
      if (head_off[h]) s.merged.block(r0, h * Dh, T, Dh).setZero();
    }
  };
  if (s.attn_dropped || s.tiled_used) {
    for (int b = 0; b < B; ++b) sequence(b);
  } else {
    parallel_for(B, 1, [&](int, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) sequence(int(b));
    });
  }
  out_proj.forward(s.merged, y);
  if (s.out_dropped) {
    s.out_mask.resize(N, D);
    dropout_forward(y, s.out_mask, out_dropout, *dropout);
  }
}

// Backward of the forward above, in reverse order. Reads the cache; overwrites parameter grads.
// dy (B*T,D) -> dx (B*T,D); leaves dmerged, dqkv and, per head, dweights and dscores in s.
// The ALiBi bias is a constant: nothing flows into it.
void MultiHeadSelfAttention::backward(State& s, ConstMatRef dy, MatRef dx) {
  const int D = d_model, H = n_heads, Dh = d_head, B = s.B, T = s.T, KV = options.kv_heads;
  const int group = H / KV;  // query heads per K/V head
  const bool diff = options.differential;
  const Eigen::Index N = Eigen::Index(B) * T;
  require(dy.rows() == N && dy.cols() == D, "dy must be (", N, ",", D, "), got (", dy.rows(),
          ",", dy.cols(), ")");
  s.dqkv.resize(N, qkv_proj.out_features);
  // The threads share the sequences, each part with its own (T,T) and (T,Dh) scratch; one thread
  // when the differential heads sum dlambda over the sequences or the tiled path shares its
  // workspace.
  const bool threaded = !diff && !s.tiled_used;
  const int parts = threaded ? parallel_parts(B, 1) : 1;
  if (group > 1) s.dkv_scratch.resize(Eigen::Index(parts) * T, Dh);
  s.dmerged.resize(N, D);
  if (!s.tiled_used) {
    s.dweights.resize(s.inspect ? N * H : Eigen::Index(parts) * T, T);
    s.dscores.resize(s.inspect ? N * H : Eigen::Index(parts) * T, T);
  }
  if (diff) {
    s.dscores2.resize(T, T);
    dlambda.setZero();
  }
  if (rope) s.dqkv_proj.resize(N, qkv_proj.out_features);
  const float scale = score_scale();
  const Causal lower_c = s.causal ? Causal::kLowerC : Causal::kNone;
  const Causal lower_a = s.causal ? Causal::kLowerA : Causal::kNone;

  if (s.out_dropped) {  // y = out_proj(merged) * out_mask
    s.dx_scratch.resize(N, D);
    s.dx_scratch = dy.cwiseProduct(s.out_mask);
    out_proj.backward(s.merged, s.dx_scratch, s.dmerged);
  } else {
    out_proj.backward(s.merged, dy, s.dmerged);
  }
  const Mat& w = s.weights();
  // softmax backward under the mask: the causal variant reads only the lower triangle (the
  // upper one of dw was never computed).
  const auto softmax_backward = [&](ConstMatRef probs, ConstMatRef dw, MatRef ds) {
    if (s.causal) softmax_rows_backward_causal(probs, dw, ds);
    else attention_map_backward(probs, dw, ds);
  };
  // Sequence b on the part's scratch: each head, then RoPE's rotation of its rows undone.
  const auto sequence = [&](int part, int b) {
    const Eigen::Index t0 = Eigen::Index(part) * T;  // the part's scratch rows
    auto scratch = s.dkv_scratch.middleRows(group > 1 ? t0 : 0, group > 1 ? T : 0);
    // One map's scores = q k^T * scale (+ bias)  =>  dq = ds k * scale, dk = ds^T q * scale;
    // the first query head of a K/V group writes dk, the others add their share.
    const auto scores_backward = [&](ConstMatRef ds, ConstMatRef q, ConstMatRef k, MatRef dq,
                                     MatRef dk, bool first_of_group) {
      matmul_nn(ds, k, dq, scale, lower_a);
      if (first_of_group) {
        matmul_tn(ds, q, dk, scale, lower_a);
      } else {
        matmul_tn(ds, q, scratch, scale, lower_a);
        dk += scratch;
      }
    };
    for (int h = 0; h < H; ++h) {
      Head hd = head_views(*this, s.qkv, b, h, T);
      Head dhd = head_views(*this, s.dqkv, b, h, T);
      const Eigen::Index r0 = hd.r0, p0 = hd.p0;
      auto &v = hd.v;
      auto &dq = dhd.q, &dk = dhd.k, &dv = dhd.v;
      // The first query head of a K/V group writes dk and dv, the others add their share.
      // Ungrouped, every head is the first of its group: the curriculum's code path.
      const bool first_of_group = h % group == 0;
      auto dout = s.dmerged.block(r0, h * Dh, T, Dh);
      if (head_off[h]) {  // merged_h = 0: nothing flows back into this head
        dout.setZero();
        if (!s.tiled_used) {
          s.dweights.block(s.inspect ? p0 : t0, 0, T, T).setZero();
          s.dscores.block(s.inspect ? p0 : t0, 0, T, T).setZero();
        }
        dq.setZero();
        if (first_of_group) {
          dk.setZero();
          dv.setZero();
        }
        if (diff) {
          Head2 dhd2 = head2_views(*this, s.dqkv, b, h, T);
          dhd2.q.setZero();
          if (first_of_group) dhd2.k.setZero();
        }
        continue;
      }
      if (s.tiled_used) {  // the weights recomputed per tile from the rows' log-sum-exp
        tiled_attention_backward(hd.q, hd.k, v, s.merged.block(r0, h * Dh, T, Dh),
                                 s.lse.row(Eigen::Index(b) * H + h).data(), dout, tiled_scores(h),
                                 s.tiles, dq, dk, dv, !first_of_group, s.tiled_ws);
        continue;
      }
      auto dw = s.dweights.block(s.inspect ? p0 : t0, 0, T, T);
      auto ds = s.dscores.block(s.inspect ? p0 : t0, 0, T, T);
      auto a = w.block(p0, 0, T, T);
      // merged_h = a v  =>  dv = a^T dout, da = dout v^T
      if (first_of_group) {
        matmul_tn(a, dout, dv, 1.0f, lower_a);
      } else {
        matmul_tn(a, dout, scratch, 1.0f, lower_a);
        dv += scratch;
      }
      matmul_nt(dout, v, dw, 1.0f, nullptr, lower_c);
      // a = weights * attn_mask  =>  d(weights) = da * attn_mask (in place in dw)
      if (s.attn_dropped) dw = dw.cwiseProduct(s.attn_mask.block(p0, 0, T, T));
      // probs = softmax(scores); masked cells have probs 0, so their dscores are 0
      softmax_backward(s.probs.block(p0, 0, T, T), dw, ds);
      scores_backward(ds, hd.q, hd.k, dq, dk, first_of_group);
      if (diff) {
        // weights = probs - lambda probs2  =>  dprobs = dw, dprobs2 = -lambda dw,
        // dlambda = -sum(dw * probs2)
        const auto p2 = s.probs2.block(p0, 0, T, T);
        dlambda[h] -= dw.cwiseProduct(p2).sum();
        s.dscores2 = -lambda[h] * dw;
        softmax_backward(p2, s.dscores2, s.dscores2);
        Head2 hd2 = head2_views(*this, s.qkv, b, h, T);
        Head2 dhd2 = head2_views(*this, s.dqkv, b, h, T);
        scores_backward(s.dscores2, hd2.q, hd2.k, dhd2.q, dhd2.k, first_of_group);
      }
    }
    if (rope) {  // q and k were rotated after the projection: rotate their gradients back
      const Eigen::Index rb = Eigen::Index(b) * T;
      s.dqkv_proj.middleRows(rb, T) = s.dqkv.middleRows(rb, T);
      for (int c = 0; c < qk_maps() * (H + KV); ++c)  // the q blocks, then the k blocks
        rope->rotate_backward(s.dqkv_proj.block(rb, Eigen::Index(c) * Dh, T, Dh));
    }
  };
  if (threaded) {
    parallel_for(B, 1, [&](int part, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) sequence(part, int(b));
    });
  } else {
    for (int b = 0; b < B; ++b) sequence(0, b);
  }
  qkv_proj.backward(s.x, rope ? s.dqkv_proj : s.dqkv, dx);
  s.backward_done = true;
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
