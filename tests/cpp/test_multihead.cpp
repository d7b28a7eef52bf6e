// MultiHeadSelfAttention: the curriculum's PyTorch tests ported one for one, then a per-head
// reference and dropout properties (finite differences of every gradient: test_gradcheck.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/nn/attention.h"
#include "attn/nn/head_row.h"
#include "attn/nn/multihead.h"
#include "gradcheck.h"
#include "mhsa_run.h"

using attn::Mat;
using attn::MultiHeadSelfAttention;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// Builds a layer from its own seeded generator, as the curriculum's tests build a fresh module.
MultiHeadSelfAttention make_mhsa(int D, int H, int C, float p_attn = 0.0f, float p_out = 0.0f,
                                 uint64_t seed = 0) {
  attn::Rng rng(seed);
  return MultiHeadSelfAttention(D, H, C, p_attn, p_out, rng);
}

using mhsa_test::run;

}  // namespace

// ---- The curriculum's suite ---------------------------------------------------------------

TEST_CASE("mhsa: d_model not divisible by n_heads is rejected, naming both", "[multihead]") {
  attn::Rng rng(0);
  CHECK_THROWS_AS(MultiHeadSelfAttention(10, 3, 8, 0, 0, rng), std::invalid_argument);
  CHECK_THROWS_WITH(MultiHeadSelfAttention(10, 3, 8, 0, 0, rng),
                    Contains("d_model (10)") && Contains("n_heads (3)"));
}

TEST_CASE("mhsa: zero heads are rejected", "[multihead]") {
  attn::Rng rng(0);
  CHECK_THROWS_AS(MultiHeadSelfAttention(16, 0, 8, 0, 0, rng), std::invalid_argument);
  CHECK_THROWS_WITH(MultiHeadSelfAttention(16, 0, 8, 0, 0, rng), Contains("n_heads (0)"));
}

TEST_CASE("mhsa: d_head is d_model / n_heads", "[multihead]") {
  CHECK(make_mhsa(32, 4, 8).d_head == 8);
}

TEST_CASE("mhsa: output and attention shapes", "[multihead]") {
  // H 4, C 10, x (B 2, T 7, D 16) -> output (2,7,16) = (14,16); weights (2,4,7,7) = (56,7).
  auto m = make_mhsa(16, 4, 10);
  attn::Rng rng(1);
  const Mat x = gradcheck::random_mat(2 * 7, 16, rng);
  MultiHeadSelfAttention::State s;
  const Mat y = run(m, x, 2, 7, s);
  CHECK(y.rows() == 2 * 7);
  CHECK(y.cols() == 16);
  CHECK(s.weights().rows() == 2 * 4 * 7);
  CHECK(s.weights().cols() == 7);
}

TEST_CASE("mhsa: wrong feature dim is rejected", "[multihead]") {
  auto m = make_mhsa(16, 4, 10);
  MultiHeadSelfAttention::State s;
  const Mat x = Mat::Zero(2 * 7, 15);
  CHECK_THROWS_WITH(run(m, x, 2, 7, s), Contains("expected feature dim 16") && Contains("got 15"));
}

TEST_CASE("mhsa: seq_len past max_context_length is rejected", "[multihead]") {
  auto m = make_mhsa(16, 4, 10);
  MultiHeadSelfAttention::State s;
  const Mat x = Mat::Zero(2 * 11, 16);
  CHECK_THROWS_WITH(run(m, x, 2, 11, s),
                    Contains("sequence length (11)") && Contains("max_context_length (10)"));
}

TEST_CASE("mhsa: other bad arguments are rejected with the values", "[multihead]") {
  attn::Rng rng(0);
  CHECK_THROWS_WITH(MultiHeadSelfAttention(0, 1, 8, 0, 0, rng), Contains("d_model (0)"));
  CHECK_THROWS_WITH(MultiHeadSelfAttention(16, 4, 0, 0, 0, rng),
                    Contains("max_context_length (0)"));
  CHECK_THROWS_WITH(MultiHeadSelfAttention(16, 4, 8, 1.0f, 0, rng),
                    Contains("attn_dropout (1)") && Contains("[0, 1)"));
  CHECK_THROWS_WITH(MultiHeadSelfAttention(16, 4, 8, -0.1f, 0, rng),
                    Contains("attn_dropout (-0.1)"));
  CHECK_THROWS_WITH(MultiHeadSelfAttention(16, 4, 8, 0, 1.5f, rng), Contains("out_dropout (1.5)"));
  auto m = make_mhsa(16, 4, 10);
  MultiHeadSelfAttention::State s;
  CHECK_THROWS_WITH(run(m, Mat::Zero(0, 16), 2, 0, s), Contains("sequence length (0)"));
  CHECK_THROWS_WITH(run(m, Mat::Zero(0, 16), 0, 5, s), Contains("batch size (0)"));
  CHECK_THROWS_WITH(run(m, Mat::Zero(13, 16), 2, 7, s), Contains("13 rows") && Contains("14"));
  run(m, Mat::Zero(14, 16), 2, 7, s);
  Mat dx(14, 16);
  CHECK_THROWS_WITH(m.backward(s, Mat::Zero(14, 8), dx), Contains("(14,16)") && Contains("(14,8)"));
}

TEST_CASE("mhsa: causal weights: no future mass, rows sum to 1, non-negative", "[multihead]") {
  auto m = make_mhsa(16, 4, 10);
  attn::Rng rng(2);
  const int B = 2, T = 7, H = 4;
  const Mat x = gradcheck::random_mat(B * T, 16, rng, 3.0f);
  MultiHeadSelfAttention::State s;
  run(m, x, B, T, s);
  const Mat& w = s.weights();
  double upper = 0;
  for (int bh = 0; bh < B * H; ++bh)
    for (int i = 0; i < T; ++i) {
      CAPTURE(bh, i);
      const auto row = w.row(bh * T + i);
      for (int j = i + 1; j < T; ++j) upper += row(j);
      CHECK_THAT(row.sum(), WithinAbs(1.0, 1e-5));
      CHECK(row.minCoeff() >= 0.0f);
    }
  CHECK(upper < 1e-5);
  CHECK(upper == 0.0);  // masked cells are exactly 0, not merely small
}

TEST_CASE("mhsa: changing tokens 4.. leaves outputs 0..3 unchanged", "[multihead]") {
  auto m = make_mhsa(16, 4, 10);
  attn::Rng rng(3);
  const int B = 2, T = 8;
  const Mat x = gradcheck::random_mat(B * T, 16, rng);
  Mat x2 = x;
  for (int b = 0; b < B; ++b)
    x2.middleRows(b * T + 4, T - 4) = gradcheck::random_mat(T - 4, 16, rng, 5.0f);
  MultiHeadSelfAttention::State s1, s2;
  const Mat y1 = run(m, x, B, T, s1), y2 = run(m, x2, B, T, s2);
  for (int b = 0; b < B; ++b) {
    CAPTURE(b);
    const float past = gradcheck::max_abs_diff(y1.middleRows(b * T, 4), y2.middleRows(b * T, 4));
    const float future =
        gradcheck::max_abs_diff(y1.middleRows(b * T + 4, T - 4), y2.middleRows(b * T + 4, T - 4));
    CHECK(past <= 1e-5f);
    CHECK(future > 1e-3f);  // the change did reach the later positions
  }
}

TEST_CASE("mhsa: split_heads / merge_heads round-trip on (2,5,24) with 6 heads", "[multihead]") {
  attn::Rng rng(4);
  const int B = 2, T = 5, D = 24, H = 6, Dh = 4;
  const Mat x = gradcheck::random_mat(B * T, D, rng);
  const Mat heads = attn::split_heads(x, B, T, H);
  REQUIRE(heads.rows() == B * H * T);
  REQUIRE(heads.cols() == Dh);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < Dh; ++c)
          REQUIRE(heads((b * H + h) * T + t, c) == x(b * T + t, h * Dh + c));
  const Mat back = attn::merge_heads(heads, B, T, H);
  REQUIRE(back.rows() == B * T);
  REQUIRE(back.cols() == D);
  CHECK(gradcheck::max_abs_diff(back, x) == 0.0f);
  CHECK_THROWS_WITH(attn::split_heads(x, B, T, 5), Contains("(24)") && Contains("(5)"));
  CHECK_THROWS_WITH(attn::merge_heads(heads, B, T, 5), Contains("B*H*T = 50"));
}

TEST_CASE("mhsa: qkv projection of (1,5,16) is (1,5,48)", "[multihead]") {
  auto m = make_mhsa(16, 4, 8);
  REQUIRE(m.qkv_proj.weight.rows() == 48);
  REQUIRE(m.qkv_proj.weight.cols() == 16);
  REQUIRE(m.qkv_proj.bias.size() == 48);
  REQUIRE(m.out_proj.weight.rows() == 16);
  REQUIRE(m.out_proj.weight.cols() == 16);
  attn::Rng rng(5);
  const Mat x = gradcheck::random_mat(5, 16, rng);
  Mat qkv(5, 48);
  m.qkv_proj.forward(x, qkv);
  CHECK(qkv.rows() == 5);
  CHECK(qkv.cols() == 48);
  MultiHeadSelfAttention::State s;
  run(m, x, 1, 5, s);
  CHECK(s.qkv.rows() == 5);
  CHECK(s.qkv.cols() == 48);
  CHECK(gradcheck::max_abs_diff(s.qkv, qkv) == 0.0f);
}

TEST_CASE("mhsa: gradients reach qkv_proj and out_proj", "[multihead]") {
  auto m = make_mhsa(16, 4, 10);
  attn::Rng rng(6);
  const Mat x = gradcheck::random_mat(2 * 7, 16, rng);
  MultiHeadSelfAttention::State s;
  run(m, x, 2, 7, s);
  const Mat dy = Mat::Ones(14, 16);  // loss = output.sum()
  Mat dx(14, 16);
  m.backward(s, dy, dx);
  CHECK(m.out_proj.dweight.cwiseAbs().sum() > 0.0f);
  CHECK(m.out_proj.dbias.cwiseAbs().sum() > 0.0f);
  CHECK(m.qkv_proj.dbias.cwiseAbs().sum() > 0.0f);
  // Each of the q, k and v thirds of the fused projection receives gradient.
  for (int part = 0; part < 3; ++part) {
    CAPTURE(part);
    CHECK(m.qkv_proj.dweight.middleRows(part * 16, 16).cwiseAbs().sum() > 0.0f);
  }
  CHECK(dx.cwiseAbs().sum() > 0.0f);
}

// ---- Beyond the curriculum ----------------------------------------------------------------

TEST_CASE("mhsa: equals a per-head reference built from split_heads and naive attention",
          "[multihead][naive]") {
  const int B = 2, T = 6, D = 12, H = 3;
  auto m = make_mhsa(D, H, 8, 0, 0, 7);
  attn::Rng rng(7);
  const Mat x = gradcheck::random_mat(B * T, D, rng);
  MultiHeadSelfAttention::State s;
  const Mat y = run(m, x, B, T, s);

  Mat qkv(B * T, 3 * D);
  m.qkv_proj.forward(x, qkv);
  const Mat q = attn::split_heads(qkv.leftCols(D), B, T, H);
  const Mat k = attn::split_heads(qkv.middleCols(D, D), B, T, H);
  const Mat v = attn::split_heads(qkv.rightCols(D), B, T, H);
  Mat heads_out(B * H * T, D / H), weights(B * H * T, T);
  for (int bh = 0; bh < B * H; ++bh) {
    const auto r = attn::naive_attention(q.middleRows(bh * T, T), k.middleRows(bh * T, T),
                                         v.middleRows(bh * T, T), true);
    heads_out.middleRows(bh * T, T) = r.output;
    weights.middleRows(bh * T, T) = r.weights;
  }
  Mat ref(B * T, D);
  m.out_proj.forward(attn::merge_heads(heads_out, B, T, H), ref);
  CHECK(gradcheck::max_abs_diff(s.weights(), weights) <= 1e-5f);
  CHECK(gradcheck::max_abs_diff(y, ref) <= 1e-5f);
}

TEST_CASE("mhsa: eval mode and p = 0 are the identity for dropout", "[multihead][dropout]") {
  const int B = 2, T = 5, D = 8, H = 2;
  // Dropout rates do not change the initialisation, so both layers hold the same weights.
  auto dropped = make_mhsa(D, H, 8, 0.3f, 0.4f, 9);
  auto plain = make_mhsa(D, H, 8, 0.0f, 0.0f, 9);
  REQUIRE(gradcheck::max_abs_diff(dropped.qkv_proj.weight, plain.qkv_proj.weight) == 0.0f);
  attn::Rng data(8);
  const Mat x = gradcheck::random_mat(B * T, D, data);
  MultiHeadSelfAttention::State s1, s2, s3;
  attn::Rng rng1(100), rng2(100);
  Mat y_eval(B * T, D), y_plain_train(B * T, D);
  dropped.forward(x, B, T, /*training=*/false, rng1, s1, y_eval);
  plain.forward(x, B, T, /*training=*/true, rng2, s2, y_plain_train);
  const Mat y_plain_eval = run(plain, x, B, T, s3);
  CHECK(gradcheck::max_abs_diff(y_eval, y_plain_eval) == 0.0f);
  CHECK(gradcheck::max_abs_diff(y_plain_train, y_plain_eval) == 0.0f);
  CHECK(gradcheck::max_abs_diff(s1.weights(), s3.weights()) == 0.0f);
  // Neither eval mode nor p = 0 draws random numbers.
  CHECK(rng1.state() == attn::Rng(100).state());
  CHECK(rng2.state() == attn::Rng(100).state());
}

TEST_CASE("mhsa: training dropout zeroes or rescales attention weights", "[multihead][dropout]") {
  const int B = 2, T = 6, D = 8, H = 2;
  const float p = 0.5f;
  auto m = make_mhsa(D, H, 8, p, 0.0f, 10);
  attn::Rng data(11);
  const Mat x = gradcheck::random_mat(B * T, D, data);
  MultiHeadSelfAttention::State s;
  run(m, x, B, T, s, /*training=*/true, 5);
  REQUIRE(s.attn_dropped);
  const Mat& w = s.weights();
  REQUIRE(w.rows() == s.probs.rows());
  int dropped = 0, kept = 0;
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    const float pr = s.probs.data()[i], a = w.data()[i];
    if (pr == 0.0f) continue;  // masked future cell
    if (a == 0.0f)
      ++dropped;
    else {
      ++kept;
      CHECK(a == pr * 2.0f);  // 1/(1-p) = 2
    }
  }
  CHECK(dropped > 0);
  CHECK(kept > 0);
  // The layer output differs from eval mode.
  MultiHeadSelfAttention::State se;
  const Mat y_train = run(m, x, B, T, s, true, 5), y_eval = run(m, x, B, T, se);
  CHECK(gradcheck::max_abs_diff(y_train, y_eval) > 1e-3f);
}

TEST_CASE("mhsa: a state reused for another (B,T) gives the same as a fresh one",
          "[multihead]") {
  auto m = make_mhsa(8, 2, 8);
  attn::Rng rng(12);
  const Mat big = gradcheck::random_mat(2 * 7, 8, rng), small = gradcheck::random_mat(3, 8, rng);
  MultiHeadSelfAttention::State reused, fresh;
  run(m, big, 2, 7, reused);
  const Mat a = run(m, small, 1, 3, reused), b = run(m, small, 1, 3, fresh);
  CHECK(gradcheck::max_abs_diff(a, b) == 0.0f);
  CHECK(gradcheck::max_abs_diff(reused.weights(), fresh.weights()) == 0.0f);
}

// ---- Teaching interventions: switched-off heads, no 1/sqrt(dk), broken masks ---------------

TEST_CASE("mhsa: mask modes: causal -inf above the diagonal, none untouched, inverted -1e4 below",
          "[multihead][ablation]") {
  Mat causal = Mat::Constant(4, 4, 2.0f), none = causal, inverted = causal;
  attn::apply_mask(causal, attn::MaskMode::Causal);
  attn::apply_mask(none, attn::MaskMode::None);
  attn::apply_mask(inverted, attn::MaskMode::Inverted);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      CAPTURE(i, j);
      CHECK(causal(i, j) == (j > i ? -INFINITY : 2.0f));
      CHECK(none(i, j) == 2.0f);
      CHECK(inverted(i, j) == (j < i ? attn::kBrokenMaskFill : 2.0f));
    }
  for (const char* name : {"causal", "none", "inverted"})
    CHECK(std::string(attn::mask_mode_name(attn::parse_mask_mode(name))) == name);
  CHECK_THROWS_WITH(attn::parse_mask_mode("triu"), Contains("'triu'") && Contains("inverted"));
}

TEST_CASE("mhsa: a switched-off head keeps its weights but adds nothing to the output",
          "[multihead][ablation]") {
  // Switching head 1 off must equal zeroing its columns of out_proj (its only way out).
  const int B = 2, T = 5, D = 12, H = 3, Dh = 4;
  auto off = make_mhsa(D, H, 8, 0, 0, 3), ref = make_mhsa(D, H, 8, 0, 0, 3);
  off.head_off[1] = 1;
  ref.out_proj.weight.middleCols(Dh, Dh).setZero();
  attn::Rng rng(4);
  const Mat x = gradcheck::random_mat(B * T, D, rng);
  MultiHeadSelfAttention::State so, sr;
  const Mat yo = run(off, x, B, T, so), yr = run(ref, x, B, T, sr);
  CHECK(gradcheck::max_abs_diff(yo, yr) < 1e-6f);
  CHECK(gradcheck::max_abs_diff(so.weights(), sr.weights()) == 0.0f);
  CHECK(so.merged.middleCols(Dh, Dh).cwiseAbs().maxCoeff() == 0.0f);
  // Nothing flows back into the head that is off.
  Mat dx(B * T, D);
  off.backward(so, gradcheck::random_mat(B * T, D, rng), dx);
  for (int part = 0; part < 3; ++part)
    CHECK(off.qkv_proj.dweight.middleRows(part * D + Dh, Dh).cwiseAbs().maxCoeff() == 0.0f);
  CHECK(off.qkv_proj.dweight.middleRows(0, Dh).cwiseAbs().maxCoeff() > 0.0f);
}

TEST_CASE("mhsa: without the 1/sqrt(dk) scaling, scores are q k^T", "[multihead][ablation]") {
  // No scaling equals the scaled layer with the query projection multiplied by sqrt(Dh).
  const int B = 1, T = 6, D = 16, H = 2, Dh = 8;
  auto raw = make_mhsa(D, H, 8, 0, 0, 5), ref = make_mhsa(D, H, 8, 0, 0, 5);
  raw.scale_scores = false;
  CHECK(raw.score_scale() == 1.0f);
  CHECK(ref.score_scale() == 1.0f / std::sqrt(8.0f));
  ref.qkv_proj.weight.topRows(D) *= std::sqrt(float(Dh));
  ref.qkv_proj.bias.head(D) *= std::sqrt(float(Dh));
  attn::Rng rng(6);
  const Mat x = gradcheck::random_mat(B * T, D, rng);
  MultiHeadSelfAttention::State s1, s2, s3;
  const Mat y1 = run(raw, x, B, T, s1), y2 = run(ref, x, B, T, s2);
  CHECK(gradcheck::max_abs_diff(y1, y2) < 1e-5f);
  CHECK(gradcheck::max_abs_diff(s1.weights(), s2.weights()) < 1e-5f);
  // And it saturates: the largest weight of each row is at least the scaled layer's.
  auto scaled = make_mhsa(D, H, 8, 0, 0, 5);
  run(scaled, x, B, T, s3);
  CHECK(s1.weights().rowwise().maxCoeff().sum() > s3.weights().rowwise().maxCoeff().sum());
}

TEST_CASE("mhsa: broken masks let queries see the future", "[multihead][ablation]") {
  const int B = 1, T = 5, D = 8, H = 2;
  attn::Rng rng(7);
  const Mat x = gradcheck::random_mat(B * T, D, rng);
  auto none = make_mhsa(D, H, 8, 0, 0, 8), inverted = make_mhsa(D, H, 8, 0, 0, 8);
  none.mask = attn::MaskMode::None;
  inverted.mask = attn::MaskMode::Inverted;
  MultiHeadSelfAttention::State sn, si;
  run(none, x, B, T, sn);
  run(inverted, x, B, T, si);
  for (int r = 0; r < H * T; ++r) {
    const int i = r % T;
    CAPTURE(r, i);
    CHECK(sn.weights().row(r).minCoeff() > 0.0f);  // every key visible
    CHECK_THAT(si.weights().row(r).sum(), WithinAbs(1.0, 1e-5));
    for (int j = 0; j < T; ++j)
      if (j < i) CHECK(si.weights()(r, j) == 0.0f);  // exp(-1e4) underflows to 0
      else CHECK(si.weights()(r, j) > 0.0f);         // itself and the future
  }
  // The last query of the inverted mask sees only itself.
  CHECK(si.weights()(T - 1, T - 1) == 1.0f);
}


TEST_CASE("mhsa: head_row is the layer's backward for a loss on one query row",
          "[multihead][ablation]") {
  const int B = 2, T = 5, D = 12, H = 3, Dh = 4;
  for (int variant = 0; variant < 4; ++variant) {
    CAPTURE(variant);
    auto m = make_mhsa(D, H, 8, 0, 0, 9);
    if (variant == 1) m.scale_scores = false;
    if (variant == 2) m.mask = attn::MaskMode::Inverted;
    if (variant == 3) m.head_off[2] = 1;
    attn::Rng rng(10 + variant);
    const Mat x = gradcheck::random_mat(B * T, D, rng);
    MultiHeadSelfAttention::State s;
    s.inspect = true;
    run(m, x, B, T, s);
    const int b = 1, i = 3;
    Mat dy = Mat::Zero(B * T, D);
    dy.row(b * T + i) = gradcheck::random_mat(1, D, rng);
    Mat dx(B * T, D);
    m.backward(s, dy, dx);
    for (int h = 0; h < H; ++h) {
      CAPTURE(h);
      const auto g = head_row(m, s, b, h, i);
      const float wsum = g.weights.sum();
      CHECK_THAT(wsum, WithinAbs(1.0, 1e-5));
      CHECK(gradcheck::max_abs_diff(g.weights, s.probs.row((b * H + h) * T + i)) == 0.0f);
      const Mat dq = s.dqkv.block(b * T, h * Dh, T, Dh), dk = s.dqkv.block(b * T, D + h * Dh, T, Dh),
                dv = s.dqkv.block(b * T, 2 * D + h * Dh, T, Dh);
      CHECK(gradcheck::max_abs_diff(dq.row(i), g.d_q) < 1e-6f);
      CHECK(dq.topRows(i).cwiseAbs().maxCoeff() == 0.0f);  // only row i has a dq
      CHECK(dq.bottomRows(T - i - 1).cwiseAbs().maxCoeff() == 0.0f);
      CHECK(gradcheck::max_abs_diff(dk, g.d_k) < 1e-6f);
      CHECK(gradcheck::max_abs_diff(dv, g.d_v) < 1e-6f);
      // The forward quantities: out is the head's merged row; scores give the weights.
      CHECK(gradcheck::max_abs_diff(g.out, s.merged.block(b * T + i, h * Dh, 1, Dh)) < 1e-6f);
      Mat sm = g.scores;
      attn::softmax_rows(sm, sm);
      CHECK(gradcheck::max_abs_diff(sm, g.weights) < 1e-6f);
      if (variant != 3 || h != 2) CHECK(g.d_scores.cwiseAbs().maxCoeff() > 0.0f);
    }
  }
  auto m = make_mhsa(D, H, 8, 0, 0, 9);
  MultiHeadSelfAttention::State s;
  s.inspect = true;
  attn::Rng rng(1);
  run(m, gradcheck::random_mat(B * T, D, rng), B, T, s);
  Mat dx(B * T, D);
  m.backward(s, Mat::Zero(B * T, D), dx);
  CHECK_THROWS_WITH(head_row(m, s, 0, 3, 0), Contains("head (3)"));
  CHECK_THROWS_WITH(head_row(m, s, 0, 0, 5), Contains("query position (5)"));
  CHECK_THROWS_WITH(head_row(m, s, 2, 0, 0), Contains("batch index (2)"));
}

TEST_CASE("mhsa: the row head_row reads satisfies the formulas the Backward panel shows",
          "[multihead][ablation]") {
  // The naive reference: each quantity of one query row recomputed from the row's q, k, v and
  // d_out as attention-core.d.ts (RowBackward) writes it, against what forward and backward kept.
  const int B = 2, T = 6, D = 12, H = 3, b = 1, i = 4;
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    auto m = make_mhsa(D, H, 8, 0, 0, 21);
    if (variant == 1) m.scale_scores = false;
    if (variant == 2) m.mask = attn::MaskMode::None;
    attn::Rng rng(30 + variant);
    MultiHeadSelfAttention::State s;
    s.inspect = true;
    run(m, gradcheck::random_mat(B * T, D, rng), B, T, s);
    Mat dy = Mat::Zero(B * T, D), dx(B * T, D);
    dy.row(b * T + i) = gradcheck::random_mat(1, D, rng);
    m.backward(s, dy, dx);
    const float scale = m.score_scale();
    for (int h = 0; h < H; ++h) {
      CAPTURE(h);
      const auto g = head_row(m, s, b, h, i);
      Mat scores = (g.q * g.k.transpose()) * scale, full = Mat::Zero(T, T);
      full.row(i) = scores;
      attn::apply_mask(full, m.mask);  // the mask depends on the row index
      for (int j = 0; j < T; ++j) {  // a causal mask leaves -inf: equal, not close
        CAPTURE(j);
        if (std::isinf(full(i, j))) CHECK(g.scores[j] == full(i, j));
        else CHECK_THAT(g.scores[j], WithinAbs(full(i, j), 1e-5));
      }
      CHECK(gradcheck::max_abs_diff(g.weights * g.v, g.out) < 1e-5f);
      const Mat d_weights = g.d_out * g.v.transpose();
      CHECK(gradcheck::max_abs_diff(d_weights, g.d_weights) < 1e-5f);
      const float dot = g.weights.dot(g.d_weights);
      const Mat d_scores = (g.weights.array() * (g.d_weights.array() - dot)).matrix();
      CHECK(gradcheck::max_abs_diff(d_scores, g.d_scores) < 1e-6f);
      CHECK(gradcheck::max_abs_diff((g.d_scores * g.k) * scale, g.d_q) < 1e-6f);
      CHECK(gradcheck::max_abs_diff(g.d_scores.transpose() * g.q * scale, g.d_k) < 1e-6f);
      CHECK(gradcheck::max_abs_diff(g.weights.transpose() * g.d_out, g.d_v) < 1e-6f);
    }
  }
}
