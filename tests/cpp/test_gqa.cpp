// The attention layer's options: grouped K/V heads (GQA, multi-query), RoPE and ALiBi. The
// defaults are today's layer bit for bit; each option is checked against a reference built
// from the pieces and for its defining property (finite differences: test_gradcheck.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>

#include "attn/nn/attention.h"
#include "attn/nn/head_row.h"
#include "attn/nn/multihead.h"
#include "attn/nn/positions.h"
#include "expect_error.h"
#include "gradcheck.h"
#include "mhsa_run.h"

using attn::AttentionOptions;
using attn::Mat;
using attn::MultiHeadSelfAttention;
using Catch::Matchers::WithinAbs;

namespace {

MultiHeadSelfAttention make(int D, int H, int C, AttentionOptions o, uint64_t seed = 0,
                            float p_attn = 0.0f, float p_out = 0.0f) {
  attn::Rng rng(seed);
  return MultiHeadSelfAttention(D, H, C, p_attn, p_out, rng, o);
}

AttentionOptions gqa_options(int kv_heads, bool rope = false, bool alibi = false) {
  AttentionOptions o;
  o.kv_heads = kv_heads;
  o.rope = rope;
  o.alibi = alibi;
  return o;
}

using mhsa_test::run;

// The layer recomputed from its weights with the course's recipe: project, (rotate), then per
// query head h naive attention on q_h and the k, v of K/V head h / (H / KV), with the ALiBi bias
// added to the scores before the causal mask. Returns the output (B*T,D) and the weights
// (B*H*T,T).
std::pair<Mat, Mat> reference(const MultiHeadSelfAttention& m, const Mat& x, int B, int T) {
  const int H = m.n_heads, KV = m.options.kv_heads, Dh = m.d_head, D = m.d_model;
  Mat qkv(B * T, (H + 2 * KV) * Dh);
  m.qkv_proj.forward(x, qkv);
  std::optional<attn::Rope> rope;
  if (m.options.rope) rope.emplace(T, Dh);
  const std::vector<float> slopes = attn::alibi_slopes(H);
  Mat merged(B * T, D), weights(B * H * T, T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int g = h / (H / KV);
      Mat q = qkv.block(b * T, h * Dh, T, Dh), k = qkv.block(b * T, (H + g) * Dh, T, Dh),
          v = qkv.block(b * T, (H + KV + g) * Dh, T, Dh);
      if (m.options.rope) {
        rope->rotate(q);
        rope->rotate(k);
      }
      Mat scores = q * k.transpose() / std::sqrt(float(Dh));
      if (m.options.alibi)
        for (int i = 0; i < T; ++i)
          for (int j = 0; j <= i; ++j) scores(i, j) -= slopes[size_t(h)] * float(i - j);
      attn::apply_causal_mask(scores);
      attn::softmax_rows(scores, scores);
      weights.middleRows((b * H + h) * T, T) = scores;
      merged.block(b * T, h * Dh, T, Dh) = scores * v;
    }
  Mat y(B * T, D);
  m.out_proj.forward(merged, y);
  return {y, weights};
}

}  // namespace

TEST_CASE("gqa: default options are today's layer, bit for bit", "[gqa]") {
  // kv_heads = 0 (the default) and kv_heads = H both give the curriculum's layer: the same draws,
  // the same outputs and gradients, to the last bit.
  const int B = 2, T = 5, D = 12, H = 3;
  attn::Rng r1(5), r2(5), r3(5);
  MultiHeadSelfAttention today(D, H, 8, 0.2f, 0.1f, r1), zero(D, H, 8, 0.2f, 0.1f, r2, {}),
      full(D, H, 8, 0.2f, 0.1f, r3, gqa_options(H));
  CHECK(r1.state() == r2.state());
  CHECK(r1.state() == r3.state());
  CHECK(zero.options.kv_heads == H);
  CHECK(!zero.rope.has_value());
  CHECK(zero.alibi_m.empty());
  CHECK(gradcheck::max_abs_diff(today.qkv_proj.weight, full.qkv_proj.weight) == 0.0f);
  attn::Rng data(6);
  const Mat x = gradcheck::random_mat(B * T, D, data), dy = gradcheck::random_mat(B * T, D, data);
  for (bool training : {false, true}) {
    CAPTURE(training);
    MultiHeadSelfAttention::State s1, s3;
    const Mat y1 = run(today, x, B, T, s1, training, 9), y3 = run(full, x, B, T, s3, training, 9);
    CHECK(gradcheck::max_abs_diff(y1, y3) == 0.0f);
    Mat dx1(B * T, D), dx3(B * T, D);
    today.backward(s1, dy, dx1);
    full.backward(s3, dy, dx3);
    CHECK(gradcheck::max_abs_diff(dx1, dx3) == 0.0f);
    CHECK(gradcheck::max_abs_diff(today.qkv_proj.dweight, full.qkv_proj.dweight) == 0.0f);
    CHECK(gradcheck::max_abs_diff(today.out_proj.dweight, full.out_proj.dweight) == 0.0f);
  }
}

TEST_CASE("gqa: the fused projection is ((H + 2 KV) Dh, D), rows q, k, v", "[gqa]") {
  // H 4, KV 2, Dh 4: 16 q rows, then 8 k rows, then 8 v rows. Query heads 0, 1 read K/V head
  // 0 (k rows 16..19, v rows 24..27); heads 2, 3 read K/V head 1 (rows 20..23, 28..31).
  auto m = make(16, 4, 8, gqa_options(2));
  CHECK(m.qkv_proj.weight.rows() == 32);
  CHECK(m.qkv_proj.weight.cols() == 16);
  CHECK(m.qkv_proj.bias.size() == 32);
  const int kv[4] = {0, 0, 1, 1}, k0[4] = {16, 16, 20, 20}, v0[4] = {24, 24, 28, 28};
  for (int h = 0; h < 4; ++h) {
    CAPTURE(h);
    CHECK(m.kv_head(h) == kv[h]);
    CHECK(m.q_offset(h) == 4 * h);
    CHECK(m.k_offset(h) == k0[h]);
    CHECK(m.v_offset(h) == v0[h]);
  }
  // Multi-query: one K/V head of Dh columns each.
  auto mq = make(16, 4, 8, gqa_options(1));
  CHECK(mq.qkv_proj.weight.rows() == 16 + 2 * 4);
  for (int h = 0; h < 4; ++h) CHECK(mq.k_offset(h) == 16);
}

TEST_CASE("gqa: equals per-head naive attention with K/V head h / (H / KV)", "[gqa]") {
  const int B = 2, T = 6, D = 16, H = 4;
  for (int kv : {4, 2, 1}) {
    CAPTURE(kv);
    auto m = make(D, H, 8, gqa_options(kv), 3);
    attn::Rng data(4);
    const Mat x = gradcheck::random_mat(B * T, D, data);
    MultiHeadSelfAttention::State s;
    const Mat y = run(m, x, B, T, s);
    const auto ref = reference(m, x, B, T);
    CHECK(gradcheck::max_abs_diff(y, ref.first) < 1e-5f);
    CHECK(gradcheck::max_abs_diff(s.weights(), ref.second) < 1e-5f);
    // And with the course's loop over naive_attention on the same K/V for a whole group.
    Mat qkv(B * T, (H + 2 * kv) * 4);
    m.qkv_proj.forward(x, qkv);
    const int g = (H - 1) / (H / kv);  // the last query head's K/V head
    const auto r = attn::naive_attention(qkv.block(T, (H - 1) * 4, T, 4),
                                         qkv.block(T, (H + g) * 4, T, 4),
                                         qkv.block(T, (H + kv + g) * 4, T, 4), true);
    CHECK(gradcheck::max_abs_diff(s.merged.block(T, (H - 1) * 4, T, 4), r.output) < 1e-5f);
  }
}

TEST_CASE("gqa: multi-query heads share one K/V", "[gqa]") {
  // With kv_heads = 1, every query head reads the same k and v: two heads with the same query
  // weights give the same weights and outputs; and the K/V gradient is the sum of all heads'.
  const int B = 1, T = 5, D = 12, H = 3, Dh = 4;
  auto m = make(D, H, 8, gqa_options(1), 7);
  m.qkv_proj.weight.middleRows(2 * Dh, Dh) = m.qkv_proj.weight.middleRows(0, Dh);
  m.qkv_proj.bias.segment(2 * Dh, Dh) = m.qkv_proj.bias.segment(0, Dh);
  attn::Rng data(8);
  const Mat x = gradcheck::random_mat(B * T, D, data);
  MultiHeadSelfAttention::State s;
  s.inspect = true;
  run(m, x, B, T, s);
  CHECK(gradcheck::max_abs_diff(s.probs.middleRows(0, T), s.probs.middleRows(2 * T, T)) == 0.0f);
  CHECK(gradcheck::max_abs_diff(s.merged.middleCols(0, Dh), s.merged.middleCols(2 * Dh, Dh)) ==
        0.0f);
  CHECK(gradcheck::max_abs_diff(s.probs.middleRows(0, T), s.probs.middleRows(T, T)) > 1e-3f);
  // dK = sum over heads of dscores_h^T q_h * scale; dV = sum over heads of a_h^T dout_h.
  Mat dy = gradcheck::random_mat(B * T, D, data), dx(B * T, D);
  m.backward(s, dy, dx);
  Mat dk = Mat::Zero(T, Dh), dv = Mat::Zero(T, Dh);
  for (int h = 0; h < H; ++h) {
    const Mat q = s.qkv.block(0, h * Dh, T, Dh);
    dk += s.dscores.middleRows(h * T, T).transpose() * q * m.score_scale();
    dv += s.probs.middleRows(h * T, T).transpose() * s.dmerged.block(0, h * Dh, T, Dh);
  }
  CHECK(gradcheck::max_abs_diff(s.dqkv.block(0, H * Dh, T, Dh), dk) < 1e-5f);
  CHECK(gradcheck::max_abs_diff(s.dqkv.block(0, (H + 1) * Dh, T, Dh), dv) < 1e-5f);
}

TEST_CASE("gqa: rope and alibi equal the reference built from positions.h", "[gqa][rope][alibi]") {
  const int B = 2, T = 7, D = 16, H = 4;
  for (int kv : {4, 2})
    for (int variant = 0; variant < 3; ++variant) {
      const bool rope = variant != 1, alibi = variant != 0;
      CAPTURE(kv, rope, alibi);
      auto m = make(D, H, 8, gqa_options(kv, rope, alibi), 11);
      attn::Rng data(12);
      const Mat x = gradcheck::random_mat(B * T, D, data);
      MultiHeadSelfAttention::State s;
      const Mat y = run(m, x, B, T, s);
      const auto ref = reference(m, x, B, T);
      CHECK(gradcheck::max_abs_diff(y, ref.first) < 1e-5f);
      CHECK(gradcheck::max_abs_diff(s.weights(), ref.second) < 1e-5f);
      // Neither option draws random numbers: the weights are the plain layer's.
      auto plain = make(D, H, 8, gqa_options(kv), 11);
      CHECK(gradcheck::max_abs_diff(m.qkv_proj.weight, plain.qkv_proj.weight) == 0.0f);
    }
}

TEST_CASE("gqa: with rope, scores depend on relative positions only", "[gqa][rope]") {
  // The same token at every position: without positions every key looks the same, so each
  // query's weights are uniform over its past. With RoPE the scores q_i . k_j depend on i - j
  // alone, so the diagonals of every head's score matrix are constant.
  const int T = 6, D = 8, H = 2;
  auto m = make(D, H, 8, gqa_options(1, true), 13);
  attn::Rng data(14);
  const Mat row = gradcheck::random_mat(1, D, data);
  const Mat x = row.replicate(T, 1);
  MultiHeadSelfAttention::State s;
  s.inspect = true;
  run(m, x, 1, T, s);
  bool varies = false;
  for (int h = 0; h < H; ++h)
    for (int d = 0; d < T; ++d)
      for (int i = d + 1; i < T; ++i) {
        CAPTURE(h, d, i);
        const float first = s.scores(h * T + d, 0);
        CHECK_THAT(s.scores(h * T + i, i - d), WithinAbs(first, 1e-5));
        varies = varies || std::fabs(s.scores(h * T + d, 0) - s.scores(h * T, 0)) > 1e-4f;
      }
  CHECK(varies);
}

TEST_CASE("gqa: alibi penalises distance by each head's slope", "[gqa][alibi]") {
  // With q = 0 (zero query weights and bias), q k^T is 0 and the scores are the bias alone:
  // row i of head h is -m_h (i - j), with m = 2^-4, 2^-8 for H 2.
  const int T = 4, D = 8, H = 2;
  auto m = make(D, H, 8, gqa_options(0, false, true), 15);
  CHECK(m.alibi_m == std::vector<float>{0.0625f, 0.00390625f});
  m.qkv_proj.weight.topRows(D).setZero();
  m.qkv_proj.bias.head(D).setZero();
  attn::Rng data(16);
  MultiHeadSelfAttention::State s;
  s.inspect = true;
  run(m, gradcheck::random_mat(T, D, data), 1, T, s);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        CAPTURE(h, i, j);
        const float want = j > i ? -INFINITY : -m.alibi_m[size_t(h)] * float(i - j);
        CHECK(s.scores(h * T + i, j) == want);
      }
  // The nearest key gets the most weight, more so in the steeper head.
  CHECK(s.probs(T - 1, T - 1) > s.probs(T - 1, 0));
  CHECK(s.probs(T - 1, T - 1) > s.probs(2 * T - 1, T - 1));
}

TEST_CASE("gqa: head_row reads the grouped, rotated caches", "[gqa][rope]") {
  // The row's own formulas hold for q, scores and d_q with RoPE and groups; d_k and d_v are the
  // K/V head's, summed over its query heads.
  const int B = 1, T = 5, D = 8, H = 2, Dh = 4, i = 3;
  auto m = make(D, H, 8, gqa_options(1, true, true), 17);
  attn::Rng data(18);
  MultiHeadSelfAttention::State s;
  s.inspect = true;
  run(m, gradcheck::random_mat(B * T, D, data), B, T, s);
  Mat dy = Mat::Zero(B * T, D), dx(B * T, D);
  dy.row(i) = gradcheck::random_mat(1, D, data);
  m.backward(s, dy, dx);
  Mat dk_sum = Mat::Zero(T, Dh);
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    const auto g = head_row(m, s, 0, h, i);
    CHECK(gradcheck::max_abs_diff(g.k, s.qkv.block(0, H * Dh, T, Dh)) == 0.0f);
    CHECK(gradcheck::max_abs_diff((g.d_scores * g.k) * g.scale, g.d_q) < 1e-6f);
    dk_sum += g.d_scores.transpose() * g.q * g.scale;
    CHECK(gradcheck::max_abs_diff(g.d_k, s.dqkv.block(0, H * Dh, T, Dh)) == 0.0f);
  }
  CHECK(gradcheck::max_abs_diff(dk_sum, s.dqkv.block(0, H * Dh, T, Dh)) < 1e-6f);
}

TEST_CASE("gqa: bad options are rejected before anything is drawn", "[gqa]") {
  using attn::ErrorKind;
  attn::Rng rng(1);
  check_error([&] { MultiHeadSelfAttention(16, 4, 8, 0, 0, rng, gqa_options(3)); }, ErrorKind::Config,
              "kv_heads", "kv_heads (3) must divide n_heads (4)");
  check_error([&] { MultiHeadSelfAttention(16, 4, 8, 0, 0, rng, gqa_options(-1)); }, ErrorKind::Config,
              "kv_heads", "kv_heads (-1)");
  check_error([&] { MultiHeadSelfAttention(16, 4, 8, 0, 0, rng, gqa_options(8)); }, ErrorKind::Config,
              "kv_heads", "kv_heads (8)");
  check_error([&] { MultiHeadSelfAttention(12, 4, 8, 0, 0, rng, gqa_options(0, true)); },
              ErrorKind::Config, "positions", "d_head (3)");
  CHECK(rng.state() == attn::Rng(1).state());
  // An odd d_head is fine without RoPE.
  CHECK_NOTHROW(MultiHeadSelfAttention(12, 4, 8, 0, 0, rng, gqa_options(2, false, true)));
}
