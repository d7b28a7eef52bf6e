// Row-wise primitives: softmax (forward, backward), the causal mask, inverted dropout.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "attn/kernels/ops.h"
#include "gradcheck.h"

using attn::Mat;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}

TEST_CASE("softmax: a small row computed by hand", "[ops][softmax]") {
  // x = [1, 2, 3]; subtract the max 3: [-2, -1, 0]
  // exp: [0.1353353, 0.3678794, 1]; sum = 1.5032147
  // y = [0.0900306, 0.2447285, 0.6652410]
  Mat x(2, 3);
  x << 1, 2, 3,
       0, 0, 0;  // equal logits: y = 1/3 each
  Mat y(2, 3);
  attn::softmax_rows(x, y);
  CHECK_THAT(y(0, 0), WithinAbs(0.0900306, 1e-6));
  CHECK_THAT(y(0, 1), WithinAbs(0.2447285, 1e-6));
  CHECK_THAT(y(0, 2), WithinAbs(0.6652410, 1e-6));
  for (int j = 0; j < 3; ++j) CHECK_THAT(y(1, j), WithinAbs(1.0 / 3.0, 1e-7));
}

TEST_CASE("softmax: stable for large logits, in place, and with masked cells", "[ops][softmax]") {
  // Shifting a row by a constant changes nothing: [1000, 1001, 1002] -> same as [1, 2, 3].
  Mat big(1, 3), small(1, 3), yb(1, 3), ys(1, 3);
  big << 1000, 1001, 1002;
  small << 1, 2, 3;
  attn::softmax_rows(big, yb);
  attn::softmax_rows(small, ys);
  REQUIRE(yb.allFinite());
  CHECK(gradcheck::max_abs_diff(yb, ys) < 1e-6f);

  // y may alias x.
  Mat x = small;
  attn::softmax_rows(x, x);
  CHECK(gradcheck::max_abs_diff(x, ys) < 1e-7f);

  // -inf cells get exactly 0; a fully masked row becomes zeros, never NaN.
  Mat m(2, 3), ym(2, 3);
  m << 0.5f, -kInf, 0.5f,
       -kInf, -kInf, -kInf;
  attn::softmax_rows(m, ym);
  CHECK(ym(0, 0) == 0.5f);
  CHECK(ym(0, 1) == 0.0f);
  CHECK(ym(0, 2) == 0.5f);
  for (int j = 0; j < 3; ++j) CHECK(ym(1, j) == 0.0f);
}

TEST_CASE("softmax: rows sum to 1 and entries lie between 0 and 1", "[ops][softmax]") {
  attn::Rng rng(1);
  const Mat x = gradcheck::random_mat(20, 13, rng, 5.0f);
  Mat y(20, 13);
  attn::softmax_rows(x, y);
  for (Eigen::Index i = 0; i < y.rows(); ++i) {
    CAPTURE(i);
    CHECK_THAT(y.row(i).sum(), WithinAbs(1.0, 1e-5));
    CHECK(y.row(i).minCoeff() >= 0.0f);
    CHECK(y.row(i).maxCoeff() <= 1.0f);
  }
}

// Finite differences: tests/cpp/test_gradcheck.cpp.
TEST_CASE("softmax: backward's dx may alias dy", "[ops][softmax]") {
  attn::Rng rng(2);
  Mat x = gradcheck::random_mat(4, 6, rng);
  const Mat dout = gradcheck::random_mat(4, 6, rng);
  Mat y(4, 6), dx(4, 6);
  attn::softmax_rows(x, y);
  attn::softmax_rows_backward(y, dout, dx);
  // dx may alias dy.
  Mat d = dout;
  attn::softmax_rows_backward(y, d, d);
  CHECK(gradcheck::max_abs_diff(d, dx) == 0.0f);
}

TEST_CASE("softmax: backward through masked cells gives exactly 0 there", "[ops][softmax]") {
  attn::Rng rng(3);
  Mat x = gradcheck::random_mat(5, 5, rng);
  attn::apply_causal_mask(x);
  Mat y(5, 5), dx(5, 5);
  attn::softmax_rows(x, y);
  const Mat dout = gradcheck::random_mat(5, 5, rng);
  attn::softmax_rows_backward(y, dout, dx);
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j) CHECK(dx(i, j) == 0.0f);
  // Each row's gradient sums to 0, since softmax is invariant to adding a constant.
  for (int i = 0; i < 5; ++i) CHECK_THAT(dx.row(i).sum(), WithinAbs(0.0, 1e-6));
}

TEST_CASE("causal mask: -inf strictly above the diagonal, the rest untouched", "[ops][mask]") {
  attn::Rng rng(4);
  const Mat x = gradcheck::random_mat(6, 6, rng);
  Mat m = x;
  attn::apply_causal_mask(m);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      CAPTURE(i, j);
      if (j > i)
        CHECK(m(i, j) == -kInf);
      else
        CHECK(m(i, j) == x(i, j));
    }
}

TEST_CASE("dropout: p = 0 is the identity", "[ops][dropout]") {
  attn::Rng rng(5), drop_rng(6);
  const Mat x = gradcheck::random_mat(16, 16, rng);
  Mat y = x, mask(16, 16);
  attn::dropout_forward(y, mask, 0.0f, drop_rng);
  CHECK(gradcheck::max_abs_diff(y, x) == 0.0f);
  CHECK(mask.minCoeff() == 1.0f);
  CHECK(mask.maxCoeff() == 1.0f);
}

TEST_CASE("dropout: kept fraction is 1-p within 4 sigma, kept values scaled by 1/(1-p)",
          "[ops][dropout]") {
  for (float p : {0.1f, 0.5f, 0.9f}) {
    CAPTURE(p);
    attn::Rng rng(7), drop_rng(8);
    const Mat x = gradcheck::random_mat(256, 256, rng);
    Mat y = x, mask(256, 256);
    attn::dropout_forward(y, mask, p, drop_rng);
    const float scale = 1.0f / (1.0f - p);
    int64_t kept = 0, bad = 0;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const float m = mask.data()[i];
      if (m == 0.0f) {
        bad += y.data()[i] != 0.0f;
      } else {
        ++kept;
        bad += m != scale || y.data()[i] != x.data()[i] * scale;  // exactly x / (1-p)
      }
    }
    CHECK(bad == 0);
    const double n = double(x.size());
    const double sigma = std::sqrt(n * p * (1.0 - p));
    CAPTURE(kept, n * (1.0 - p), sigma);
    CHECK(std::fabs(kept - n * (1.0 - p)) < 4 * sigma);
  }
  // p = 0.5 scales by exactly 2.
  attn::Rng drop_rng(9);
  Mat ones = Mat::Ones(4, 4), mask(4, 4);
  attn::dropout_forward(ones, mask, 0.5f, drop_rng);
  for (Eigen::Index i = 0; i < ones.size(); ++i)
    CHECK((ones.data()[i] == 0.0f || ones.data()[i] == 2.0f));
}

TEST_CASE("dropout: the same generator state gives the same mask", "[ops][dropout]") {
  Mat a = Mat::Ones(8, 8), b = Mat::Ones(8, 8), ma(8, 8), mb(8, 8);
  attn::Rng r1(10), r2(10);
  attn::dropout_forward(a, ma, 0.3f, r1);
  attn::dropout_forward(b, mb, 0.3f, r2);
  CHECK(gradcheck::max_abs_diff(ma, mb) == 0.0f);
  CHECK(r1.state() == r2.state());
}

TEST_CASE("dropout: p below 0 or at least 1 is rejected with the name and the value", "[ops][dropout]") {
  CHECK_NOTHROW(attn::check_dropout_p("attn_dropout", 0.0f));
  CHECK_NOTHROW(attn::check_dropout_p("attn_dropout", 0.99f));
  CHECK_THROWS_AS(attn::check_dropout_p("attn_dropout", 1.0f),
                  std::invalid_argument);
  CHECK_THROWS_WITH(attn::check_dropout_p("attn_dropout", 1.0f),
                    Contains("attn_dropout") && Contains("(1)") && Contains("[0, 1)"));
  CHECK_THROWS_WITH(attn::check_dropout_p("out_dropout", -0.5f),
                    Contains("out_dropout") && Contains("(-0.5)"));
  CHECK_THROWS_WITH(attn::check_dropout_p("p", std::nanf("")), Contains("nan"));
  CHECK_THROWS_WITH(attn::check_dropout_p("p", kInf), Contains("inf"));
}

TEST_CASE("softmax_rows_naive: equals a plain double reference on small logits", "[ops][softmax]") {
  // Reference: exp(x) / sum(exp(x)) in double, no shift. |x| <= 3*4 keeps exp far from overflow.
  attn::Rng rng(5);
  const Mat x = gradcheck::random_mat(6, 9, rng, 4.0f);
  Mat y(6, 9), stable(6, 9);
  attn::softmax_rows_naive(x, y);
  attn::softmax_rows(x, stable);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double sum = 0.0;
    for (Eigen::Index j = 0; j < x.cols(); ++j) sum += std::exp(double(x(i, j)));
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      CAPTURE(i, j);
      CHECK_THAT(y(i, j), WithinAbs(std::exp(double(x(i, j))) / sum, 1e-6));
    }
  }
  CHECK(gradcheck::max_abs_diff(y, stable) < 1e-6f);  // same function where both are defined
}

TEST_CASE("softmax_rows_naive: [100, 200, 300] overflows to inf and NaN in float32; the stable "
          "softmax does not", "[ops][softmax]") {
  // exp(100) = 2.7e43 > FLT_MAX = 3.4e38: every exp is inf, the sum is inf, inf / inf = NaN.
  // Stable: x - 300 = [-200, -100, 0]; exp = [0 (underflow), 3.7e-44 (a subnormal), 1].
  Mat x(1, 3), naive(1, 3), stable(1, 3);
  x << 100, 200, 300;
  attn::softmax_rows_naive(x, naive);
  for (int j = 0; j < 3; ++j) CHECK(std::isnan(naive(0, j)));
  attn::softmax_rows(x, stable);
  REQUIRE(stable.allFinite());
  CHECK(stable(0, 0) == 0.0f);
  // exp(-100) = 3.7e-44 is a subnormal float; the wasm SIMD kernel's exp flushes anything below
  // exp(-87.3) to 0, the scalar one keeps it. Either way it is 0 to any visible precision.
  CHECK(stable(0, 1) >= 0.0f);
  CHECK(stable(0, 1) <= 1e-43f);
  CHECK(stable(0, 2) == 1.0f);

  const attn::SoftmaxSteps bad = attn::softmax_steps(x.row(0), /*subtract_max=*/false);
  CHECK(bad.max == 0.0f);
  for (int j = 0; j < 3; ++j) {
    CHECK(bad.shifted[j] == x(0, j));
    CHECK(std::isinf(bad.exps[j]));
    CHECK(std::isnan(bad.weights[j]));
  }
  CHECK(std::isinf(bad.sum));

  const attn::SoftmaxSteps good = attn::softmax_steps(x.row(0), /*subtract_max=*/true);
  CHECK(good.max == 300.0f);
  CHECK(good.shifted[0] == -200.0f);
  CHECK(good.shifted[1] == -100.0f);
  CHECK(good.shifted[2] == 0.0f);
  CHECK(good.exps[0] == 0.0f);
  CHECK_THAT(good.exps[1], WithinAbs(std::exp(-100.0), 1e-45));  // a subnormal (std::exp)
  CHECK(good.exps[2] == 1.0f);
  CHECK(good.sum == 1.0f);
  CHECK(good.weights[0] == 0.0f);
  CHECK(good.weights[1] == good.exps[1]);
  CHECK(good.weights[2] == 1.0f);
}

TEST_CASE("softmax_steps: matches a plain reference step by step, and a masked row gives zeros",
          "[ops][softmax]") {
  // x = [1, 2, 3]: max 3, shifted [-2, -1, 0], exps [0.1353353, 0.3678794, 1], sum 1.5032147,
  // weights [0.0900306, 0.2447285, 0.6652410] (as in the hand-computed case above).
  attn::RowVec x(3);
  x << 1, 2, 3;
  const attn::SoftmaxSteps s = attn::softmax_steps(x, true);
  CHECK(s.max == 3.0f);
  CHECK_THAT(s.exps[0], WithinAbs(0.1353353, 1e-7));
  CHECK_THAT(s.exps[1], WithinAbs(0.3678794, 1e-7));
  CHECK_THAT(s.sum, WithinAbs(1.5032147, 1e-6));
  CHECK_THAT(s.weights[0], WithinAbs(0.0900306, 1e-6));
  CHECK_THAT(s.weights[2], WithinAbs(0.6652410, 1e-6));
  const attn::SoftmaxSteps n = attn::softmax_steps(x, false);  // [e, e^2, e^3] / sum
  CHECK_THAT(n.exps[2], WithinAbs(20.0855369, 1e-5));
  CHECK_THAT(n.weights[1], WithinAbs(0.2447285, 1e-6));

  attn::RowVec masked(2);
  masked << -kInf, -kInf;
  const attn::SoftmaxSteps m = attn::softmax_steps(masked, true);
  CHECK(m.weights.isZero(0));
  CHECK(std::isnan(attn::softmax_steps(masked, false).weights[0]));  // 0 / 0
  CHECK_THROWS_WITH(attn::softmax_steps(attn::RowVec(0), true), Contains("at least one logit"));
}
