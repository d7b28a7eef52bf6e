// Single-head attention: scaled_dot_product_attention (+ backward), the naive loop reference,
// self_attention_stages and the lesson's SelfAttention class.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/nn/attention.h"
#include "gradcheck.h"

using attn::Mat;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// Attention probabilities must be a distribution per row, with no mass on the future.
void check_weights_are_distributions(const Mat& w, bool causal) {
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    CAPTURE(i);
    CHECK_THAT(w.row(i).sum(), WithinAbs(1.0, 1e-5));
    CHECK(w.row(i).minCoeff() >= 0.0f);
    if (causal)
      for (Eigen::Index j = i + 1; j < w.cols(); ++j) CHECK(w(i, j) == 0.0f);
  }
}

}  // namespace

TEST_CASE("sdpa: a 2-token case computed by hand", "[attention]") {
  // Q = K = I (2x2), V = [[1,2],[3,4]], dk = 2, scale = 1/sqrt(2) = 0.7071068.
  // scores * scale = [[0.7071068, 0], [0, 0.7071068]]
  // row 0: exp(0.7071068) = 2.0281150; weights = [2.028115/3.028115, 1/3.028115]
  //                                            = [0.6697615, 0.3302385]
  //        output = 0.6697615*[1,2] + 0.3302385*[3,4] = [1.6604769, 2.6604769]
  // row 1: weights = [0.3302385, 0.6697615]; output = [2.3395231, 3.3395231]
  // Causal: row 0 sees only key 0 -> weights [1, 0], output [1, 2]; row 1 is unchanged.
  Mat Q(2, 2), K(2, 2), V(2, 2);
  Q << 1, 0, 0, 1;
  K << 1, 0, 0, 1;
  V << 1, 2, 3, 4;
  const auto r = attn::scaled_dot_product_attention(Q, K, V, false);
  CHECK_THAT(r.weights(0, 0), WithinAbs(0.6697615, 1e-6));
  CHECK_THAT(r.weights(0, 1), WithinAbs(0.3302385, 1e-6));
  CHECK_THAT(r.weights(1, 0), WithinAbs(0.3302385, 1e-6));
  CHECK_THAT(r.weights(1, 1), WithinAbs(0.6697615, 1e-6));
  CHECK_THAT(r.output(0, 0), WithinAbs(1.6604769, 1e-6));
  CHECK_THAT(r.output(0, 1), WithinAbs(2.6604769, 1e-6));
  CHECK_THAT(r.output(1, 0), WithinAbs(2.3395231, 1e-6));
  CHECK_THAT(r.output(1, 1), WithinAbs(3.3395231, 1e-6));

  const auto c = attn::scaled_dot_product_attention(Q, K, V, true);
  CHECK(c.weights(0, 0) == 1.0f);
  CHECK(c.weights(0, 1) == 0.0f);
  CHECK(c.output(0, 0) == 1.0f);
  CHECK(c.output(0, 1) == 2.0f);
  CHECK_THAT(c.weights(1, 0), WithinAbs(0.3302385, 1e-6));
  CHECK_THAT(c.output(1, 1), WithinAbs(3.3395231, 1e-6));
}

TEST_CASE("sdpa: matches the naive loop reference within 1e-5", "[attention][naive]") {
  struct Shape {
    int T, S, dk, dv;
    bool causal;
    float scale;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1, false, 1.0f}, {1, 1, 1, 1, true, 1.0f},  {4, 4, 8, 8, true, 1.0f},
      {4, 4, 8, 8, false, 1.0f}, {7, 9, 5, 3, false, 1.0f}, {3, 11, 2, 6, false, 3.0f},
      {16, 16, 32, 16, true, 1.0f}, {12, 12, 8, 8, true, 3.0f}, {33, 33, 4, 4, false, 1.0f},
  };
  attn::Rng rng(11);
  for (const Shape& s : shapes) {
    CAPTURE(s.T, s.S, s.dk, s.dv, s.causal, s.scale);
    const Mat Q = gradcheck::random_mat(s.T, s.dk, rng, s.scale);
    const Mat K = gradcheck::random_mat(s.S, s.dk, rng, s.scale);
    const Mat V = gradcheck::random_mat(s.S, s.dv, rng);
    const auto fast = attn::scaled_dot_product_attention(Q, K, V, s.causal);
    const auto slow = attn::naive_attention(Q, K, V, s.causal);
    REQUIRE(fast.output.rows() == s.T);
    REQUIRE(fast.output.cols() == s.dv);
    REQUIRE(fast.weights.rows() == s.T);
    REQUIRE(fast.weights.cols() == s.S);
    const float dw = gradcheck::max_abs_diff(fast.weights, slow.weights);
    const float dout = gradcheck::max_abs_diff(fast.output, slow.output);
    CAPTURE(dw, dout);
    CHECK(dw <= 1e-5f);
    CHECK(dout <= 1e-5f);
    check_weights_are_distributions(fast.weights, s.causal);
    check_weights_are_distributions(slow.weights, s.causal);
  }
}

TEST_CASE("sdpa: causal weights have exactly 0 mass above the diagonal", "[attention]") {
  attn::Rng rng(12);
  const Mat Q = gradcheck::random_mat(10, 4, rng, 2.0f);
  const Mat K = gradcheck::random_mat(10, 4, rng, 2.0f);
  const Mat V = gradcheck::random_mat(10, 4, rng);
  const auto r = attn::scaled_dot_product_attention(Q, K, V, true);
  double upper = 0;
  for (int i = 0; i < 10; ++i)
    for (int j = i + 1; j < 10; ++j) upper += r.weights(i, j);
  CHECK(upper < 1e-5);
  CHECK(upper == 0.0);
  check_weights_are_distributions(r.weights, true);
  // The first query sees only itself, so its output is V's first row.
  CHECK(gradcheck::max_abs_diff(r.output.row(0), V.row(0)) < 1e-6f);
}

TEST_CASE("sdpa: mismatched shapes are rejected with the sizes", "[attention]") {
  const Mat Q = Mat::Zero(3, 4), K = Mat::Zero(5, 4), V = Mat::Zero(5, 2);
  CHECK_THROWS_WITH(attn::scaled_dot_product_attention(Q, Mat::Zero(5, 3), V, false),
                    Contains("K has 3 columns but Q has 4"));
  CHECK_THROWS_WITH(attn::scaled_dot_product_attention(Q, K, Mat::Zero(4, 2), false),
                    Contains("V has 4 rows but K has 5"));
  CHECK_THROWS_WITH(attn::scaled_dot_product_attention(Q, K, V, true),
                    Contains("(3)") && Contains("(5)"));
  CHECK_THROWS_AS(attn::scaled_dot_product_attention(Mat::Zero(0, 4), K, V, false),
                  std::invalid_argument);
  CHECK_THROWS_AS(attn::naive_attention(Q, K, V, true), std::invalid_argument);
  CHECK_NOTHROW(attn::scaled_dot_product_attention(Q, K, V, false));
}

// Finite differences of sdpa and SelfAttention: tests/cpp/test_gradcheck.cpp.
TEST_CASE("sdpa: backward's shapes, and the last key's dV is its weight times dout",
          "[attention]") {
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    attn::Rng rng(13);
    const int T = causal ? 5 : 3, S = 5, dk = 4, dv = 3;
    Mat Q = gradcheck::random_mat(T, dk, rng);
    Mat K = gradcheck::random_mat(S, dk, rng);
    Mat V = gradcheck::random_mat(S, dv, rng);
    const Mat dout = gradcheck::random_mat(T, dv, rng);
    const auto r = attn::scaled_dot_product_attention(Q, K, V, causal);
    const auto g = attn::scaled_dot_product_attention_backward(Q, K, V, r.weights, dout);
    REQUIRE(g.dQ.rows() == T);
    REQUIRE(g.dK.rows() == S);
    REQUIRE(g.dV.rows() == S);
    if (causal) {
      // The last key is seen only by the last query, and dV's last row is its weight * dout.
      CHECK(gradcheck::max_abs_diff(g.dV.row(S - 1), r.weights(T - 1, S - 1) * dout.row(T - 1)) <
            1e-6f);
    }
  }
}

TEST_CASE("self_attention_stages: every stage follows from the previous one", "[attention]") {
  attn::Rng rng(14);
  const Mat X = gradcheck::random_mat(6, 8, rng);
  const Mat Wq = gradcheck::random_mat(8, 4, rng), Wk = gradcheck::random_mat(8, 4, rng);
  const Mat Wv = gradcheck::random_mat(8, 5, rng);
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    const auto st = attn::self_attention_stages(X, Wq, Wk, Wv, causal);
    CHECK(gradcheck::max_abs_diff(st.Q, X * Wq) < 1e-5f);
    CHECK(gradcheck::max_abs_diff(st.K, X * Wk) < 1e-5f);
    CHECK(gradcheck::max_abs_diff(st.V, X * Wv) < 1e-5f);
    CHECK(gradcheck::max_abs_diff(st.scores, st.Q * st.K.transpose()) < 1e-5f);
    CHECK(gradcheck::max_abs_diff(st.scaled_scores, st.scores / 2.0f) < 1e-6f);  // sqrt(4) = 2
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        if (causal && j > i)
          CHECK(st.masked_scores(i, j) == -std::numeric_limits<float>::infinity());
        else
          CHECK(st.masked_scores(i, j) == st.scaled_scores(i, j));
      }
    check_weights_are_distributions(st.weights, causal);
    const auto ref = attn::naive_attention(st.Q, st.K, st.V, causal);
    CHECK(gradcheck::max_abs_diff(st.weights, ref.weights) <= 1e-5f);
    CHECK(gradcheck::max_abs_diff(st.output, ref.output) <= 1e-5f);
    CHECK(gradcheck::max_abs_diff(st.output, st.weights * st.V) < 1e-5f);
  }
}

TEST_CASE("self_attention_stages: bad shapes are rejected with the sizes", "[attention]") {
  const Mat X = Mat::Zero(3, 4), W = Mat::Zero(4, 2);
  CHECK_THROWS_WITH(attn::self_attention_stages(X, Mat::Zero(5, 2), W, W, false),
                    Contains("Wq has 5 rows but X has 4 columns"));
  CHECK_THROWS_WITH(attn::self_attention_stages(X, W, Mat::Zero(3, 2), W, false),
                    Contains("Wk has 3 rows"));
  CHECK_THROWS_WITH(attn::self_attention_stages(X, W, W, Mat::Zero(2, 2), false),
                    Contains("Wv has 2 rows"));
  CHECK_THROWS_WITH(attn::self_attention_stages(X, W, Mat::Zero(4, 3), W, false),
                    Contains("2 and 3"));
  CHECK_THROWS_AS(attn::self_attention_stages(Mat::Zero(0, 4), W, W, W, false),
                  std::invalid_argument);
  CHECK_THROWS_AS(attn::self_attention_stages(X, W, W, Mat::Zero(4, 0), false),
                  std::invalid_argument);
}

TEST_CASE("SelfAttention: shapes, init scale and determinism", "[attention][self]") {
  attn::SelfAttention sa(64, 32, 16, 42);
  REQUIRE(sa.Wq.rows() == 64);
  REQUIRE(sa.Wq.cols() == 32);
  REQUIRE(sa.Wk.rows() == 64);
  REQUIRE(sa.Wk.cols() == 32);
  REQUIRE(sa.Wv.rows() == 64);
  REQUIRE(sa.Wv.cols() == 16);
  // Wq, Wk ~ N(0, sqrt(2/(64+32))) = N(0, 0.1443); Wv ~ N(0, sqrt(2/(64+16))) = N(0, 0.1581).
  // With 2048 and 1024 samples the sample sd is within 10% with overwhelming probability.
  auto sd = [](const Mat& m) {
    const double mean = m.mean();
    return std::sqrt((m.array() - float(mean)).square().mean());
  };
  CHECK_THAT(sd(sa.Wq), WithinAbs(std::sqrt(2.0 / 96), 0.1 * std::sqrt(2.0 / 96)));
  CHECK_THAT(sd(sa.Wk), WithinAbs(std::sqrt(2.0 / 96), 0.1 * std::sqrt(2.0 / 96)));
  CHECK_THAT(sd(sa.Wv), WithinAbs(std::sqrt(2.0 / 80), 0.1 * std::sqrt(2.0 / 80)));
  CHECK(std::fabs(sa.Wq.mean()) < 4 * std::sqrt(2.0 / 96) / std::sqrt(2048.0));

  attn::SelfAttention same(64, 32, 16, 42), other(64, 32, 16, 43);
  CHECK(gradcheck::max_abs_diff(sa.Wq, same.Wq) == 0.0f);
  CHECK(gradcheck::max_abs_diff(sa.Wv, same.Wv) == 0.0f);
  CHECK(gradcheck::max_abs_diff(sa.Wq, other.Wq) > 0.0f);

  attn::Rng rng(15);
  const Mat X = gradcheck::random_mat(7, 64, rng);
  const auto r = sa.forward(X, true);
  CHECK(r.output.rows() == 7);
  CHECK(r.output.cols() == 16);
  CHECK(r.weights.rows() == 7);
  CHECK(r.weights.cols() == 7);
  check_weights_are_distributions(r.weights, true);
  // The class is the stages pipeline with its own weights.
  const auto st = attn::self_attention_stages(X, sa.Wq, sa.Wk, sa.Wv, true);
  CHECK(gradcheck::max_abs_diff(r.output, st.output) < 1e-5f);
}

TEST_CASE("SelfAttention: bad sizes are rejected with the values", "[attention][self]") {
  CHECK_THROWS_WITH(attn::SelfAttention(0, 4, 4, 1), Contains("d_model (0)"));
  CHECK_THROWS_WITH(attn::SelfAttention(4, 0, 4, 1), Contains("dk (0)"));
  CHECK_THROWS_WITH(attn::SelfAttention(4, 4, -2, 1), Contains("dv (-2)"));
  attn::SelfAttention sa(8, 4, 4, 1);
  CHECK_THROWS_WITH(sa.forward(Mat::Zero(3, 5)),
                    Contains("expected feature dim 8") && Contains("got 5"));
  CHECK_THROWS_WITH(sa.forward(Mat::Zero(0, 8)), Contains("sequence length (0)"));
  sa.forward(Mat::Ones(3, 8));
  CHECK_THROWS_WITH(sa.backward(Mat::Zero(3, 5)), Contains("(3,4)") && Contains("(3,5)"));
}

TEST_CASE("SelfAttention: backward overwrites, never accumulates", "[attention][self]") {
  attn::SelfAttention sa(6, 4, 3, 7);
  attn::Rng rng(17);
  const Mat X = gradcheck::random_mat(5, 6, rng);
  const Mat dout = gradcheck::random_mat(5, 3, rng);
  sa.forward(X);
  const Mat dX1 = sa.backward(dout);
  const Mat dWq1 = sa.dWq;
  const Mat dX2 = sa.backward(dout);
  CHECK(gradcheck::max_abs_diff(dX1, dX2) == 0.0f);
  CHECK(gradcheck::max_abs_diff(dWq1, sa.dWq) == 0.0f);
}

TEST_CASE("multi_head_self_attention: per-head stages, concat and Wo match a plain loop "
          "reference", "[attention][multihead-lesson]") {
  // Reference: each head with naive_attention on X Wq[h], X Wk[h], X Wv[h] (double loops), its
  // output copied into columns [h*dv, (h+1)*dv), then concat Wo by triple loop in double.
  struct Shape {
    int T, D, H, dk, dv, D_out;
    bool causal;
  };
  const Shape shapes[] = {{6, 8, 2, 4, 4, 8, false}, {6, 8, 2, 4, 4, 8, true},
                          {1, 3, 1, 2, 5, 3, false}, {5, 6, 3, 2, 3, 4, true}};
  attn::Rng rng(21);
  for (const Shape& s : shapes) {
    CAPTURE(s.T, s.D, s.H, s.dk, s.dv, s.D_out, s.causal);
    const Mat X = gradcheck::random_mat(s.T, s.D, rng);
    std::vector<Mat> Wq, Wk, Wv;
    for (int h = 0; h < s.H; ++h) {
      Wq.push_back(gradcheck::random_mat(s.D, s.dk, rng, 0.5f));
      Wk.push_back(gradcheck::random_mat(s.D, s.dk, rng, 0.5f));
      Wv.push_back(gradcheck::random_mat(s.D, s.dv, rng, 0.5f));
    }
    const Mat Wo = gradcheck::random_mat(s.H * s.dv, s.D_out, rng, 0.5f);
    const attn::MultiHeadStages m = attn::multi_head_self_attention(X, Wq, Wk, Wv, Wo, s.causal);
    REQUIRE(m.heads.size() == size_t(s.H));
    REQUIRE(m.concat.rows() == s.T);
    REQUIRE(m.concat.cols() == s.H * s.dv);
    REQUIRE(m.output.rows() == s.T);
    REQUIRE(m.output.cols() == s.D_out);

    Mat concat(s.T, s.H * s.dv);
    for (int h = 0; h < s.H; ++h) {
      const Mat Q = X * Wq[h], K = X * Wk[h], V = X * Wv[h];
      const attn::AttentionResult ref = attn::naive_attention(Q, K, V, s.causal);
      CHECK(gradcheck::max_abs_diff(m.heads[h].weights, ref.weights) <= 1e-5f);
      CHECK(gradcheck::max_abs_diff(m.heads[h].output, ref.output) <= 1e-5f);
      check_weights_are_distributions(m.heads[h].weights, s.causal);
      for (int i = 0; i < s.T; ++i)
        for (int c = 0; c < s.dv; ++c) concat(i, h * s.dv + c) = ref.output(i, c);
    }
    CHECK(gradcheck::max_abs_diff(m.concat, concat) <= 1e-5f);
    Mat out(s.T, s.D_out);
    for (int i = 0; i < s.T; ++i)
      for (int o = 0; o < s.D_out; ++o) {
        double acc = 0.0;  // no bias
        for (int c = 0; c < s.H * s.dv; ++c) acc += double(concat(i, c)) * Wo(c, o);
        out(i, o) = static_cast<float>(acc);
      }
    CHECK(gradcheck::max_abs_diff(m.output, out) <= 1e-5f);
  }
}

TEST_CASE("multi_head_self_attention: one head with Wo = I is the single-head lesson",
          "[attention][multihead-lesson]") {
  attn::Rng rng(22);
  const Mat X = gradcheck::random_mat(5, 6, rng);
  const std::vector<Mat> Wq = {gradcheck::random_mat(6, 3, rng)},
                         Wk = {gradcheck::random_mat(6, 3, rng)},
                         Wv = {gradcheck::random_mat(6, 4, rng)};
  const Mat I = Mat::Identity(4, 4);
  const attn::MultiHeadStages m = attn::multi_head_self_attention(X, Wq, Wk, Wv, I, true);
  const attn::AttentionStages one = attn::self_attention_stages(X, Wq[0], Wk[0], Wv[0], true);
  CHECK(m.output == one.output);
  CHECK(m.concat == one.output);
}

TEST_CASE("multi_head_self_attention: bad shapes are rejected with the sizes",
          "[attention][multihead-lesson]") {
  attn::Rng rng(23);
  const Mat X = gradcheck::random_mat(4, 6, rng);
  const Mat A = gradcheck::random_mat(6, 2, rng), B = gradcheck::random_mat(6, 3, rng);
  const Mat Wo = gradcheck::random_mat(4, 6, rng);
  CHECK_THROWS_WITH(attn::multi_head_self_attention(X, {}, {}, {}, Wo, false),
                    Contains("at least one head"));
  CHECK_THROWS_WITH(attn::multi_head_self_attention(X, {A, A}, {A}, {A, A}, Wo, false),
                    Contains("got 2 Wq, 1 Wk and 2 Wv"));
  CHECK_THROWS_WITH(attn::multi_head_self_attention(X, {A, A}, {A, A}, {A, B}, Wo, false),
                    Contains("head 1 has dk 2/2 and dv 3"));
  CHECK_THROWS_WITH(attn::multi_head_self_attention(X, {A, A}, {A, A}, {A, A}, Mat(5, 6), false),
                    Contains("Wo has shape (5,6) but the concatenated heads have 4 columns"));
}

// ---- The lesson view's drawn mask and positions.

namespace {

// The lesson's attention in plain double loops with a drawn mask: masked cells get weight 0; a
// row with every cell masked gets weights 0 and output 0.
attn::AttentionResult masked_reference(const Mat& X, const Mat& Wq, const Mat& Wk, const Mat& Wv,
                                       const attn::CellMask& mask) {
  const Eigen::Index T = X.rows(), D = X.cols(), dk = Wq.cols(), dv = Wv.cols();
  auto proj = [&](const Mat& W, Eigen::Index i, Eigen::Index c) {
    double acc = 0;
    for (Eigen::Index d = 0; d < D; ++d) acc += double(X(i, d)) * W(d, c);
    return acc;
  };
  attn::AttentionResult r{Mat::Zero(T, dv), Mat::Zero(T, T)};
  for (Eigen::Index i = 0; i < T; ++i) {
    std::vector<double> s(size_t(T), 0.0);
    std::vector<bool> open(static_cast<size_t>(T));
    double mx = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < T; ++j) {
      open[size_t(j)] = mask.empty() || !mask[size_t(i * T + j)];
      if (!open[size_t(j)]) continue;
      double dot = 0;
      for (Eigen::Index c = 0; c < dk; ++c) dot += proj(Wq, i, c) * proj(Wk, j, c);
      s[size_t(j)] = dot / std::sqrt(double(dk));
      mx = std::max(mx, s[size_t(j)]);
    }
    double sum = 0;
    for (Eigen::Index j = 0; j < T; ++j)
      sum += (s[size_t(j)] = open[size_t(j)] ? std::exp(s[size_t(j)] - mx) : 0.0);
    if (sum == 0) continue;  // every key masked: weights and output stay 0
    for (Eigen::Index j = 0; j < T; ++j) {
      r.weights(i, j) = float(s[size_t(j)] / sum);
      for (Eigen::Index c = 0; c < dv; ++c)
        r.output(i, c) += float(s[size_t(j)] / sum * proj(Wv, j, c));
    }
  }
  return r;
}

}  // namespace

TEST_CASE("self_attention_stages with a drawn mask matches a plain loop, a fully masked row "
          "gives zeros", "[attention][lesson-mask]") {
  attn::Rng rng(31);
  const int T = 5, D = 6, dk = 3, dv = 2;
  const Mat X = gradcheck::random_mat(T, D, rng);
  const Mat Wq = gradcheck::random_mat(D, dk, rng), Wk = gradcheck::random_mat(D, dk, rng),
            Wv = gradcheck::random_mat(D, dv, rng);
  // Row 0: keys 1 and 3 masked; row 2: every key masked; row 4: only key 4 left; others open.
  attn::CellMask mask(T * T, 0);
  mask[0 * T + 1] = mask[0 * T + 3] = 1;
  for (int j = 0; j < T; ++j) mask[2 * T + j] = 1;
  for (int j = 0; j < 4; ++j) mask[4 * T + j] = 1;
  const attn::AttentionStages st = attn::self_attention_stages(X, Wq, Wk, Wv, mask);
  const attn::AttentionResult ref = masked_reference(X, Wq, Wk, Wv, mask);
  CHECK(gradcheck::max_abs_diff(st.weights, ref.weights) <= 1e-5f);
  CHECK(gradcheck::max_abs_diff(st.output, ref.output) <= 1e-5f);
  CHECK(st.weights.allFinite());
  CHECK(st.output.allFinite());
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      CAPTURE(i, j);
      if (mask[size_t(i * T + j)]) {
        CHECK(st.masked_scores(i, j) == -std::numeric_limits<float>::infinity());
        CHECK(st.weights(i, j) == 0.0f);
      } else {
        CHECK(st.masked_scores(i, j) == st.scaled_scores(i, j));
      }
    }
  CHECK(st.weights.row(2).isZero(0.0f));
  CHECK(st.output.row(2).isZero(0.0f));
  CHECK(st.weights(4, 4) == 1.0f);
  CHECK_THAT(st.weights.row(1).sum(), WithinAbs(1.0, 1e-6));
}

TEST_CASE("causal_cells is the causal mask, cell by cell", "[attention][lesson-mask]") {
  // T = 3: masked cells (0,1), (0,2), (1,2).
  CHECK(attn::causal_cells(3) == attn::CellMask{0, 1, 1, 0, 0, 1, 0, 0, 0});
  attn::Rng rng(32);
  const Mat X = gradcheck::random_mat(4, 4, rng), W = gradcheck::random_mat(4, 2, rng);
  const auto a = attn::self_attention_stages(X, W, W, W, true);
  const auto b = attn::self_attention_stages(X, W, W, W, attn::causal_cells(4));
  CHECK(a.masked_scores == b.masked_scores);
  CHECK(a.weights == b.weights);
  const auto none = attn::self_attention_stages(X, W, W, W, attn::CellMask{});
  CHECK(none.weights == attn::self_attention_stages(X, W, W, W, false).weights);
}

TEST_CASE("multi_head_self_attention with a drawn mask: every head masked alike, against a "
          "plain loop", "[attention][lesson-mask]") {
  attn::Rng rng(33);
  const int T = 4, D = 8, H = 3, dk = 2, dv = 3;
  const Mat X = gradcheck::random_mat(T, D, rng);
  std::vector<Mat> Wq, Wk, Wv;
  for (int h = 0; h < H; ++h) {
    Wq.push_back(gradcheck::random_mat(D, dk, rng, 0.5f));
    Wk.push_back(gradcheck::random_mat(D, dk, rng, 0.5f));
    Wv.push_back(gradcheck::random_mat(D, dv, rng, 0.5f));
  }
  const Mat Wo = gradcheck::random_mat(H * dv, D, rng, 0.5f);
  // Block-diagonal for two sentences of 2 tokens, plus row 3 fully masked.
  const attn::CellMask mask = {0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1};
  const attn::MultiHeadStages m = attn::multi_head_self_attention(X, Wq, Wk, Wv, Wo, mask);
  Mat concat(T, H * dv);
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    const attn::AttentionResult ref = masked_reference(X, Wq[h], Wk[h], Wv[h], mask);
    CHECK(gradcheck::max_abs_diff(m.heads[h].weights, ref.weights) <= 1e-5f);
    concat.middleCols(h * dv, dv) = ref.output;
  }
  CHECK(gradcheck::max_abs_diff(m.concat, concat) <= 1e-5f);
  CHECK(m.output.row(3).isZero(0.0f));  // a fully masked row stays 0 through Wo (no bias)
  for (int i = 0; i < T; ++i)
    for (int o = 0; o < D; ++o) {
      double acc = 0;
      for (int c = 0; c < H * dv; ++c) acc += double(concat(i, c)) * Wo(c, o);
      CHECK_THAT(m.output(i, o), WithinAbs(acc, 1e-5));
    }
}

TEST_CASE("a drawn mask of the wrong size is rejected with the sizes", "[attention][lesson-mask]") {
  attn::Rng rng(34);
  const Mat X = gradcheck::random_mat(3, 4, rng), W = gradcheck::random_mat(4, 2, rng);
  CHECK_THROWS_WITH(attn::self_attention_stages(X, W, W, W, attn::CellMask(8, 0)),
                    Contains("the mask has 8 cells but T * T = 3 * 3 = 9"));
  CHECK_THROWS_WITH(attn::multi_head_self_attention(X, {W}, {W}, {W}, Mat::Identity(2, 2),
                                                    attn::CellMask(4, 1)),
                    Contains("the mask has 4 cells"));
}

TEST_CASE("add_sinusoidal_positions: X = E + P with P the sinusoidal table",
          "[attention][lesson-positions]") {
  // P[p][2i] = sin(p / 10000^(2i/D)), P[p][2i+1] = cos(same); at p = 0: sin 0 = 0, cos 0 = 1.
  attn::Rng rng(35);
  const int T = 7, D = 8;
  const Mat E = gradcheck::random_mat(T, D, rng);
  const attn::PositionedInput r = attn::add_sinusoidal_positions(E);
  REQUIRE(r.positions.rows() == T);
  REQUIRE(r.positions.cols() == D);
  for (int p = 0; p < T; ++p)
    for (int i = 0; i < D; i += 2) {
      CAPTURE(p, i);
      const double angle = p / std::pow(10000.0, double(i) / D);
      CHECK_THAT(r.positions(p, i), WithinAbs(std::sin(angle), 1e-5));
      CHECK_THAT(r.positions(p, i + 1), WithinAbs(std::cos(angle), 1e-5));
    }
  CHECK(r.X == Mat(E + r.positions));
  // A repeated row of E (the same word twice) gives different rows of X.
  Mat twice = E;
  twice.row(3) = twice.row(1);
  const attn::PositionedInput t = attn::add_sinusoidal_positions(twice);
  CHECK(gradcheck::max_abs_diff(Mat(t.X.row(1)), Mat(t.X.row(3))) > 0.1f);
  CHECK_THROWS_WITH(attn::add_sinusoidal_positions(Mat::Zero(3, 5)),
                    Contains("even width, got (3,5)"));
}

// ---- scaling_demo (the sqrt(dk) lesson)

namespace {

// Plain double softmax of a row, shifted by its max (no float32 overflow in the reference).
std::vector<double> softmax_ref(const std::vector<double>& x) {
  double m = x[0];
  for (double v : x) m = std::max(m, v);
  std::vector<double> w(x.size());
  double sum = 0.0;
  for (size_t j = 0; j < x.size(); ++j) sum += (w[j] = std::exp(x[j] - m));
  for (double& v : w) v /= sum;
  return w;
}

double entropy_ref(const std::vector<double>& w) {
  double h = 0.0;
  for (double v : w)
    if (v > 0.0) h -= v * std::log(v);
  return h;
}

}  // namespace

TEST_CASE("scaling_demo: equals a plain double reference on the same seeded draws", "[attention][scaling]") {
  for (const int dk : {1, 4, 16, 64}) {
    CAPTURE(dk);
    const int n = 8;
    const uint64_t seed = 42;
    const attn::ScalingDemo d = attn::scaling_demo(dk, n, seed);
    // The documented draws: q first, then the keys row by row, each N(0, 1) from Rng(seed).
    attn::Rng rng(seed);
    std::vector<double> q(static_cast<size_t>(dk)), scores(static_cast<size_t>(n)), scaled(static_cast<size_t>(n));
    for (double& v : q) v = rng.normal();
    REQUIRE(d.query.size() == dk);
    REQUIRE(d.keys.rows() == n);
    REQUIRE(d.keys.cols() == dk);
    for (int i = 0; i < dk; ++i) CHECK(d.query[i] == float(q[size_t(i)]));
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int i = 0; i < dk; ++i) {
        const float k = rng.normal();
        CHECK(d.keys(j, i) == k);
        s += q[size_t(i)] * double(k);
      }
      scores[size_t(j)] = s;
      scaled[size_t(j)] = s / std::sqrt(double(dk));
    }
    const std::vector<double> wu = softmax_ref(scores), ws = softmax_ref(scaled);
    for (int j = 0; j < n; ++j) {
      CAPTURE(j);
      CHECK_THAT(d.scores[j], WithinAbs(scores[size_t(j)], 1e-4 * (1 + std::abs(scores[size_t(j)]))));
      CHECK_THAT(d.scaled_scores[j], WithinAbs(scaled[size_t(j)], 1e-4 * (1 + std::abs(scaled[size_t(j)]))));
      CHECK_THAT(d.weights_unscaled[j], WithinAbs(wu[size_t(j)], 1e-4));
      CHECK_THAT(d.weights_scaled[j], WithinAbs(ws[size_t(j)], 1e-5));
    }
    CHECK_THAT(d.max_unscaled, WithinAbs(*std::max_element(wu.begin(), wu.end()), 1e-4));
    CHECK_THAT(d.max_scaled, WithinAbs(*std::max_element(ws.begin(), ws.end()), 1e-5));
    CHECK_THAT(d.entropy_unscaled, WithinAbs(entropy_ref(wu), 1e-4));
    CHECK_THAT(d.entropy_scaled, WithinAbs(entropy_ref(ws), 1e-5));
    if (dk == 1) CHECK(d.scaled_scores == d.scores);  // sqrt(1) = 1
  }
}

TEST_CASE("scaling_demo: without scaling the softmax sharpens as dk grows, with it it does not", "[attention][scaling]") {
  // Averaged over seeds, so one lucky draw cannot decide it.
  double hu1 = 0, hu64 = 0, hs1 = 0, hs64 = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    hu1 += attn::scaling_demo(1, 8, seed).entropy_unscaled;
    hs1 += attn::scaling_demo(1, 8, seed).entropy_scaled;
    const attn::ScalingDemo d = attn::scaling_demo(64, 8, seed);
    hu64 += d.entropy_unscaled;
    hs64 += d.entropy_scaled;
  }
  CHECK(hu64 < 0.3 * hu1);                 // unscaled: far sharper at dk = 64
  CHECK(std::abs(hs64 - hs1) < 0.2 * hs1);  // scaled: about the same at both widths
}

TEST_CASE("scaling_demo: rejects a dk or a key count out of range", "[attention][scaling]") {
  CHECK_THROWS_WITH(attn::scaling_demo(0, 8, 1), Contains("dk (0)"));
  CHECK_THROWS_WITH(attn::scaling_demo(65, 8, 1), Contains("dk (65)"));
  CHECK_THROWS_WITH(attn::scaling_demo(4, 1, 1), Contains("keys (1)"));
  CHECK_THROWS_WITH(attn::scaling_demo(4, 17, 1), Contains("keys (17)"));
  try {
    attn::scaling_demo(0, 8, 1);
  } catch (const attn::Error& e) {
    CHECK(e.kind() == attn::ErrorKind::Input);
  }
}

TEST_CASE("entropy_of: -sum w log w, zeros add nothing", "[attention][scaling]") {
  attn::RowVec w(4);
  w << 0.5f, 0.25f, 0.25f, 0.0f;
  CHECK_THAT(attn::entropy_of(w), WithinAbs(1.5 * std::log(2.0), 1e-6));
  attn::RowVec one(3);
  one << 0.0f, 1.0f, 0.0f;
  CHECK(attn::entropy_of(one) == 0.0f);
}
