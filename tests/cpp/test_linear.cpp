// Linear: PyTorch layout (weight (out,in), bias (out)), init, forward by hand, backward.
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/nn/linear.h"
#include "gradcheck.h"

using attn::Mat;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("linear: forward computed by hand", "[linear]") {
  // W = [[1,2],[3,4],[5,6]] (out 3, in 2), b = [0.5, -1, 2]
  // x = [1, -1]:  y = x W^T + b = [1-2+0.5, 3-4-1, 5-6+2] = [-0.5, -2, 1]
  // x = [2, 0.5]: y = [2+1+0.5, 6+2-1, 10+3+2]             = [3.5, 7, 15]
  attn::Rng rng(1);
  attn::Linear lin(2, 3, rng);
  lin.weight << 1, 2, 3, 4, 5, 6;
  lin.bias << 0.5f, -1, 2;
  Mat x(2, 2), y(2, 3);
  x << 1, -1, 2, 0.5f;
  lin.forward(x, y);
  Mat expected(2, 3);
  expected << -0.5f, -2, 1, 3.5f, 7, 15;
  CHECK(gradcheck::max_abs_diff(y, expected) == 0.0f);
}

TEST_CASE("linear: init is U(-1/sqrt(in), 1/sqrt(in)) for weight and bias", "[linear]") {
  attn::Rng rng(2);
  attn::Linear lin(16, 64, rng);
  REQUIRE(lin.weight.rows() == 64);
  REQUIRE(lin.weight.cols() == 16);
  REQUIRE(lin.bias.size() == 64);
  const float bound = 0.25f;  // 1/sqrt(16)
  CHECK(lin.weight.cwiseAbs().maxCoeff() <= bound);
  CHECK(lin.bias.cwiseAbs().maxCoeff() <= bound);
  // U(-a, a) has sd a/sqrt(3); the max over 1024 draws comes close to a.
  CHECK(lin.weight.cwiseAbs().maxCoeff() > 0.95f * bound);
  const double sd = std::sqrt(lin.weight.array().square().mean());
  CHECK_THAT(sd, WithinAbs(bound / std::sqrt(3.0), 0.1 * bound / std::sqrt(3.0)));
  CHECK(std::fabs(lin.weight.mean()) < 4 * bound / std::sqrt(3.0) / std::sqrt(1024.0));
  // Gradients start at zero.
  CHECK(lin.dweight.isZero(0));
  CHECK(lin.dbias.isZero(0));

  // Weight is drawn before bias from the same stream: a second layer from the same seed agrees.
  attn::Rng rng2(2);
  attn::Linear twin(16, 64, rng2);
  CHECK(gradcheck::max_abs_diff(lin.weight, twin.weight) == 0.0f);
  CHECK(rng.state() == rng2.state());
  attn::Rng r3(2);
  CHECK(lin.weight(0, 0) == 0.25f * (2.0f * r3.uniform() - 1.0f));
}

TEST_CASE("linear: bad sizes are rejected with the values", "[linear]") {
  attn::Rng rng(3);
  CHECK_THROWS_WITH(attn::Linear(0, 3, rng), Contains("in_features (0)"));
  CHECK_THROWS_WITH(attn::Linear(3, -1, rng), Contains("out_features (-1)"));
}

// Finite differences: tests/cpp/test_gradcheck.cpp.
TEST_CASE("linear: dbias is the column sums of dy, and backward overwrites", "[linear]") {
  attn::Rng rng(4);
  attn::Linear lin(5, 4, rng);
  Mat x = gradcheck::random_mat(6, 5, rng);
  const Mat dout = gradcheck::random_mat(6, 4, rng);
  Mat y(6, 4), dx(6, 5);
  lin.forward(x, y);
  lin.backward(x, dout, dx);
  // Exact identities: db = column sums of dy; backward overwrites rather than accumulates.
  CHECK(gradcheck::max_abs_diff(lin.dbias, dout.colwise().sum()) < 1e-6f);
  const Mat dw1 = lin.dweight;
  lin.backward(x, dout, dx);
  CHECK(gradcheck::max_abs_diff(dw1, lin.dweight) == 0.0f);
}

TEST_CASE("linear: works on strided views (blocks of a wider matrix)", "[linear]") {
  attn::Rng rng(5);
  attn::Linear lin(3, 2, rng);
  const Mat wide = gradcheck::random_mat(4, 7, rng);
  Mat out = Mat::Zero(4, 6);
  lin.forward(wide.block(0, 2, 4, 3), out.block(0, 1, 4, 2));
  const Mat x = wide.block(0, 2, 4, 3);
  Mat y(4, 2);
  lin.forward(x, y);
  CHECK(gradcheck::max_abs_diff(out.block(0, 1, 4, 2), y) == 0.0f);
  CHECK(out.col(0).isZero(0));
  CHECK(out.rightCols(3).isZero(0));
}
