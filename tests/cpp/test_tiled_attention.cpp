// Tiled attention (cpp/attn/nn/tiled_attention.h): a hand case with its running max and sum, the
// tiled forward against the plain kernel up to T = 4096, its backward against finite differences
// and against the plain backward, the layer and the model with State::tiled, the memory they
// hold, and the trace of the block view.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "attn/model/model.h"
#include "attn/nn/multihead.h"
#include "attn/nn/tiled_attention.h"
#include "expect_error.h"
#include "gradcheck.h"
#include "mhsa_run.h"

using namespace attn;

namespace {

// The tiled kernel equals the plain one, and a float64 reference, within this, relative to the
// largest output entry (measured up to T 4096: 1.5e-6 against plain, 1e-6 against float64).
constexpr float kTiledRelTol = 2e-6f;
// Except in the scalar wasm build, where the plain kernel's own sums run sequentially over up to
// 4096 terms (no SIMD lanes to split them): measured at T 4096, plain is 1.5e-5 from float64
// there while tiled (which sums 64 at a time) stays at 4e-7, so the two differ by about that.
#if defined(__wasm__) && !defined(__wasm_simd128__)
constexpr float kTiledPlainRelTol = 4e-5f;
#else
constexpr float kTiledPlainRelTol = kTiledRelTol;
#endif

// max |a - b| / max |b|.
float relative_diff(const Mat& a, const Mat& b) {
  const float scale = b.cwiseAbs().maxCoeff();
  return gradcheck::max_abs_diff(a, b) / (scale > 0.0f ? scale : 1.0f);
}

// log sum_j exp(score_ij) over the visible keys, in double.
std::vector<double> lse_double(const Mat& q, const Mat& k, const TiledScores& sc) {
  std::vector<double> out(size_t(q.rows()));
  for (Eigen::Index i = 0; i < q.rows(); ++i) {
    std::vector<double> s;
    for (Eigen::Index j = 0; j < k.rows(); ++j) {
      if (sc.causal && j > i) break;
      s.push_back(double(q.row(i).dot(k.row(j))) * sc.scale -
                  sc.alibi_slope * double(i >= j ? i - j : j - i));
    }
    double m = -INFINITY, sum = 0.0;
    for (double x : s) m = std::max(m, x);
    for (double x : s) sum += std::exp(x - m);
    out[size_t(i)] = m + std::log(sum);
  }
  return out;
}

// Row i of softmax(scores) v in double.
Eigen::RowVectorXd out_double(const Mat& q, const Mat& k, const Mat& v, const TiledScores& sc,
                              Eigen::Index i) {
  const Eigen::Index n = sc.causal ? i + 1 : k.rows();
  std::vector<double> s(static_cast<size_t>(n));
  double m = -INFINITY, sum = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    s[size_t(j)] = double(q.row(i).dot(k.row(j))) * sc.scale -
                   sc.alibi_slope * double(i >= j ? i - j : j - i);
    m = std::max(m, s[size_t(j)]);
  }
  Eigen::RowVectorXd out = Eigen::RowVectorXd::Zero(v.cols());
  for (Eigen::Index j = 0; j < n; ++j) {
    const double e = std::exp(s[size_t(j)] - m);
    sum += e;
    out += e * v.row(j).cast<double>();
  }
  return out / sum;
}

// max |a - reference| / max |reference| over every 16th row and the last, reference in double.
double error_against_double(const Mat& a, const Mat& q, const Mat& k, const Mat& v,
                            const TiledScores& sc) {
  double err = 0.0, scale = 0.0;
  std::vector<Eigen::Index> rows;
  for (Eigen::Index i = 0; i < a.rows(); i += 16) rows.push_back(i);
  rows.push_back(a.rows() - 1);
  for (Eigen::Index i : rows) {
    const Eigen::RowVectorXd want = out_double(q, k, v, sc, i);
    err = std::max(err, (a.row(i).cast<double>() - want).cwiseAbs().maxCoeff());
    scale = std::max(scale, want.cwiseAbs().maxCoeff());
  }
  return err / scale;
}

}  // namespace

TEST_CASE("tiled attention: a hand case, tile by tile") {
  // T 2, Dh 1, scale 1, causal; q = (1, 2), k = (1, 0), v = (1, 3).
  // Row 0 sees key 0 only: out 1. Row 1: scores (2, 0), weights (e^2, 1) / (e^2 + 1),
  // out (e^2 + 3) / (e^2 + 1). With tiles of 1 key: after tile 0, m = (1, 2), l = (1, 1); after
  // tile 1 row 0 is unchanged (key 1 is masked) and row 1 has m = max(2, 0) = 2, l = 1 + e^-2.
  Mat q(2, 1), k(2, 1), v(2, 1);
  q << 1, 2;
  k << 1, 0;
  v << 1, 3;
  const TiledScores sc{1.0f, true, 0.0f};
  const TiledTrace t = tiled_attention_trace(q, k, v, sc, 1);
  const float e2 = std::exp(2.0f);
  REQUIRE(t.tiles == 2);
  CHECK(t.row_max(0, 0) == 1.0f);
  CHECK(t.row_max(0, 1) == 2.0f);
  CHECK(t.row_sum(0, 0) == 1.0f);
  CHECK(t.row_sum(0, 1) == 1.0f);
  CHECK(t.row_max(1, 0) == 1.0f);
  CHECK(t.row_sum(1, 0) == 1.0f);
  CHECK(t.row_max(1, 1) == 2.0f);
  CHECK(t.row_sum(1, 1) == Approx(1.0f + 1.0f / e2));
  CHECK(t.out(0, 0) == Approx(1.0f));
  CHECK(t.out(1, 0) == Approx((e2 + 3.0f) / (e2 + 1.0f)));
  CHECK(t.weights(1, 0) == Approx(e2 / (e2 + 1.0f)));
  CHECK(t.weights(0, 1) == 0.0f);
  CHECK(t.max_weight_difference <= 1e-6f);
  Mat out(2, 1);
  float lse[2];
  TiledWorkspace ws;
  tiled_attention_forward(q, k, v, sc, TileSizes{1, 1}, out, lse, ws);
  CHECK(lse[0] == Approx(1.0f));
  CHECK(lse[1] == Approx(2.0f + std::log(1.0f + 1.0f / e2)));
  CHECK(gradcheck::max_abs_diff(out, t.out) <= 1e-6f);
}

TEST_CASE("tiled attention: equals the plain kernel and float64 within 2e-6 up to T = 4096") {
  Rng rng(1);
  struct Case {
    int T, Dh;
    TileSizes tiles;
    bool causal;
    float alibi;
  };
  const Case cases[] = {
      {1, 8, {64, 64}, true, 0.0f},      {7, 4, {1, 1}, true, 0.0f},
      {7, 4, {3, 2}, false, 0.25f},      {64, 16, {64, 64}, true, 0.0f},
      {100, 16, {16, 32}, true, 0.5f},   {257, 16, {64, 64}, false, 0.0f},
      {1024, 16, {64, 128}, true, 0.0f}, {2048, 32, {128, 64}, true, 0.0625f},
      {4096, 16, {64, 64}, true, 0.0f},
  };
  for (const Case& c : cases) {
    CAPTURE(c.T, c.Dh, c.tiles.query, c.tiles.key, c.causal, c.alibi);
    // Scores of spread O(1-10): q and k ~ N(0, 1), scale 1/sqrt(Dh) * 3.
    const Mat q = gradcheck::random_mat(c.T, c.Dh, rng), k = gradcheck::random_mat(c.T, c.Dh, rng),
              v = gradcheck::random_mat(c.T, c.Dh, rng);
    const TiledScores sc{3.0f / std::sqrt(float(c.Dh)), c.causal, c.alibi};
    Mat plain(c.T, c.Dh), tiled(c.T, c.Dh);
    plain_attention_reference(q, k, v, sc, plain);
    std::vector<float> lse(size_t(c.T));
    TiledWorkspace ws;
    tiled_attention_forward(q, k, v, sc, c.tiles, tiled, lse.data(), ws);
    const float rel = relative_diff(tiled, plain);
    const double plain_error = error_against_double(plain, q, k, v, sc);
    const double tiled_error = error_against_double(tiled, q, k, v, sc);
    CAPTURE(rel, plain_error, tiled_error);
    CHECK(rel <= kTiledPlainRelTol);
    CHECK(tiled_error <= kTiledRelTol);
    if (c.T <= 1024) {
      const std::vector<double> want = lse_double(q, k, sc);
      for (int i = 0; i < c.T; ++i) CHECK(lse[size_t(i)] == Approx(want[size_t(i)]).epsilon(1e-5));
    }
  }
}

TEST_CASE("tiled attention: the backward against finite differences") {
  Rng rng(2);
  for (bool causal : {true, false}) {
    const int T = 9, Dh = 3;
    const TiledScores sc{0.7f, causal, causal ? 0.3f : 0.0f};
    const TileSizes tiles{4, 2};
    Mat q = gradcheck::random_mat(T, Dh, rng), k = gradcheck::random_mat(T, Dh, rng), v = gradcheck::random_mat(T, Dh, rng);
    const Mat dout = gradcheck::random_mat(T, Dh, rng);
    TiledWorkspace ws;
    const auto loss = [&] {
      Mat out(T, Dh);
      std::vector<float> lse(static_cast<size_t>(T));
      tiled_attention_forward(q, k, v, sc, tiles, out, lse.data(), ws);
      return gradcheck::fakeloss(out, dout);
    };
    Mat out(T, Dh), dq(T, Dh), dk(T, Dh), dv(T, Dh);
    std::vector<float> lse(static_cast<size_t>(T));
    tiled_attention_forward(q, k, v, sc, tiles, out, lse.data(), ws);
    tiled_attention_backward(q, k, v, out, lse.data(), dout, sc, tiles, dq, dk, dv, false, ws);
    CAPTURE(causal);
    gradcheck::check_grad("dq", q.data(), dq.data(), q.size(), loss);
    gradcheck::check_grad("dk", k.data(), dk.data(), k.size(), loss);
    gradcheck::check_grad("dv", v.data(), dv.data(), v.size(), loss);
    // accumulate adds into dk and dv.
    Mat dk2 = dk, dv2 = dv;
    tiled_attention_backward(q, k, v, out, lse.data(), dout, sc, tiles, dq, dk2, dv2, true, ws);
    CHECK(gradcheck::max_abs_diff(dk2, Mat(2 * dk)) <= 1e-6f);
    CHECK(gradcheck::max_abs_diff(dv2, Mat(2 * dv)) <= 1e-6f);
  }
}

TEST_CASE("tiled attention: the layer and the model with State::tiled match the plain path") {
  Rng rng(3);
  const int B = 2, T = 150, D = 16, H = 4;
  struct Variant {
    AttentionOptions options;
    MaskMode mask;
    bool head_off;
  };
  AttentionOptions gqa_rope, alibi;
  gqa_rope.kv_heads = 2;
  gqa_rope.rope = true;
  alibi.alibi = true;
  const Variant variants[] = {{{}, MaskMode::Causal, false},
                              {gqa_rope, MaskMode::Causal, true},
                              {alibi, MaskMode::None, false}};
  for (const Variant& var : variants) {
    CAPTURE(var.options.kv_heads, var.options.rope, var.options.alibi, mask_mode_name(var.mask));
    Rng init(4);
    MultiHeadSelfAttention m(D, H, T, 0.0f, 0.1f, init, var.options);
    m.mask = var.mask;
    if (var.head_off) m.head_off[1] = 1;
    const Mat x = gradcheck::random_mat(B * T, D, rng), dy = gradcheck::random_mat(B * T, D, rng);
    MultiHeadSelfAttention::State plain, tiled;
    tiled.tiled = true;
    tiled.tiles = {32, 48};
    // Training with output dropout (the same draws on both paths): the tiled path still runs.
    const Mat y0 = mhsa_test::run(m, x, B, T, plain, true, 9);
    Mat dx0(B * T, D);
    m.backward(plain, dy, dx0);
    const Mat dw0 = m.qkv_proj.dweight, dwo0 = m.out_proj.dweight;
    const Mat y1 = mhsa_test::run(m, x, B, T, tiled, true, 9);
    Mat dx1(B * T, D);
    m.backward(tiled, dy, dx1);
    REQUIRE(tiled.tiled_used);
    REQUIRE_FALSE(plain.tiled_used);
    CHECK(tiled.probs.size() == 0);
    CHECK(tiled.dweights.size() == 0);
    CHECK(plain.probs.size() == int64_t(B) * H * T * T);
    CHECK(relative_diff(y1, y0) <= 1e-5f);
    CHECK(relative_diff(dx1, dx0) <= 1e-5f);
    CHECK(relative_diff(m.qkv_proj.dweight, dw0) <= 1e-5f);
    CHECK(relative_diff(m.out_proj.dweight, dwo0) <= 1e-5f);
  }
  // Attention dropout, inspect and the inverted mask take the plain path.
  Rng init(5);
  MultiHeadSelfAttention m(D, H, T, 0.2f, 0.0f, init);
  MultiHeadSelfAttention::State s;
  s.tiled = true;
  const Mat x = gradcheck::random_mat(T, D, rng);
  mhsa_test::run(m, x, 1, T, s, true, 1);
  CHECK_FALSE(s.tiled_used);
  mhsa_test::run(m, x, 1, T, s, false);
  CHECK(s.tiled_used);
  m.mask = MaskMode::Inverted;
  mhsa_test::run(m, x, 1, T, s, false);
  CHECK_FALSE(s.tiled_used);

  // The whole model: logits and every parameter gradient.
  ModelConfig c{20, 16, 4, 200};
  c.n_layers = 2;
  c.residual = true;
  c.positions = PositionKind::Rope;
  c.norm = NormKind::LayerNorm;
  c.ffn = FfnKind::GELU;
  TinyAttentionLM model(c, 6);
  std::vector<int32_t> ids = gradcheck::random_ids(2 * 200, c.vocab_size, rng);
  TinyAttentionLM::State sp, st;
  st.tiled = true;
  Rng unused(0);
  std::vector<Mat> grads;
  for (TinyAttentionLM::State* s2 : {&sp, &st}) {
    model.forward(ids.data(), 2, 200, false, unused, *s2);
    s2->dlogits = gradcheck::random_mat(s2->logits.rows(), s2->logits.cols(), rng);
    if (s2 == &st) s2->dlogits = sp.dlogits;
    model.backward(ids.data(), *s2);
    for (const ParamRef& p : model.parameters())
      grads.push_back(Eigen::Map<const Mat>(p.grad, 1, p.numel()));
  }
  CHECK(relative_diff(st.logits, sp.logits) <= 1e-5f);
  const size_t n = grads.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(relative_diff(grads[n + i], grads[i]) <= 1e-4f);
  }
  CHECK(st.layers[0].tiled_used);
  CHECK(st.layers[1].probs.size() == 0);
}

TEST_CASE("tiled attention: memory, the trace's rows, and bad arguments") {
  // The plain path holds B H T^2 weights; the tiled one B H T log-sum-exps and fixed blocks.
  CHECK(plain_attention_bytes(16, 4, 4096, false) == 16LL * 4 * 4096 * 4096 * 4);
  CHECK(tiled_attention_bytes(16, 4, 4096, 16, TileSizes{64, 64}, false) ==
        (16LL * 4 * 4096 + 3 * 64 * 64 + 2 * 64 * 16 + 2 * 64) * 4);
  CHECK(tiled_attention_bytes(1, 1, 8192, 16, TileSizes{64, 64}, true) <
        plain_attention_bytes(1, 1, 8192, true) / 1000);

  // The trace: the running max never falls, the final rows are the plain softmax rows.
  Rng rng(7);
  const int T = 40, Dh = 8;
  const Mat q = gradcheck::random_mat(T, Dh, rng), k = gradcheck::random_mat(T, Dh, rng), v = gradcheck::random_mat(T, Dh, rng);
  const TiledScores sc{0.9f, true, 0.0f};
  const TiledTrace t = tiled_attention_trace(q, k, v, sc, 16);
  REQUIRE(t.tiles == 3);
  for (int r = 0; r < T; ++r)
    for (int i = 1; i < t.tiles; ++i) CHECK(t.row_max(i, r) >= t.row_max(i - 1, r));
  // Weights are at most 1: 16 float ulps of 1. The trace's exp and the reference's round apart by
  // a few ulps, more where -march=native vectorises wider (1.01e-6 seen with AVX-512).
  CHECK(t.max_weight_difference <= 16 * std::numeric_limits<float>::epsilon());
  CHECK(t.max_out_difference <= 1e-5f);
  for (int r = 0; r < T; ++r) CHECK(t.weights.row(r).sum() == Approx(1.0f).margin(1e-5));
  // Row 3 has seen keys 0-3 in tile 0, and nothing more after it.
  CHECK(t.row_max(2, 3) == t.row_max(0, 3));
  CHECK(t.row_sum(2, 3) == t.row_sum(0, 3));

  Mat out(T, Dh);
  float lse[T];
  TiledWorkspace ws;
  check_error([&] { tiled_attention_forward(q, k, v, sc, TileSizes{0, 4}, out, lse, ws); },
              ErrorKind::Input, "", "tile sizes (0, 4)");
  check_error([&] { tiled_attention_forward(q, k.topRows(3), v, sc, TileSizes{}, out, lse, ws); },
              ErrorKind::Input, "", "the same T");
  check_error([&] { tiled_attention_trace(q, k, v, sc, 41); }, ErrorKind::Input, "",
              "tile size (41) must be in [1, 40]");
}
