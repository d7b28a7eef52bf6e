// LayerNorm and RMSNorm: values by hand, the row properties at init, finite-difference checks of
// every gradient, aliasing, parameters and errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/nn/norm.h"
#include "expect_error.h"
#include "gradcheck.h"

using attn::Mat;
using attn::Norm;
using attn::NormKind;
using attn::RowVec;
using Catch::Matchers::WithinAbs;

namespace {

Mat run(const Norm& norm, const Mat& x, Norm::State& s) {
  Mat y(x.rows(), x.cols());
  norm.forward(x, s, y);
  return y;
}

}  // namespace

TEST_CASE("norm: layernorm computed by hand", "[norm]") {
  // Row [0, 2]: mean 1, var ((-1)^2 + 1^2) / 2 = 1, xhat = [-1, 1] / sqrt(1 + 1e-5).
  // Row [3, 3]: mean 3, var 0, xhat = [0, 0] (the eps keeps it finite).
  // weight [2, 3], bias [0.5, -1]: y = [-2 r + 0.5, 3 r - 1] and [0.5, -1], r = 1/sqrt(1.00001).
  Norm ln(NormKind::LayerNorm, 2);
  ln.weight << 2, 3;
  ln.bias << 0.5f, -1;
  Mat x(2, 2);
  x << 0, 2, 3, 3;
  Norm::State s;
  const Mat y = run(ln, x, s);
  const double r = 1.0 / std::sqrt(1.00001);
  CHECK_THAT(y(0, 0), WithinAbs(-2 * r + 0.5, 1e-6));
  CHECK_THAT(y(0, 1), WithinAbs(3 * r - 1, 1e-6));
  CHECK(y(1, 0) == 0.5f);
  CHECK(y(1, 1) == -1.0f);
  CHECK_THAT(s.rstd[0], WithinAbs(r, 1e-7));
  CHECK_THAT(s.rstd[1], WithinAbs(1.0 / std::sqrt(1e-5), 1e-2));  // 316.2
}

TEST_CASE("norm: rmsnorm computed by hand", "[norm]") {
  // Row [2, -2, 2, -2]: mean square 4, rms = sqrt(4 + 1e-6), xhat = [1, -1, 1, -1] / q with
  // q = sqrt(1 + 2.5e-7); weight [1, 2, 3, 4]: y = [1, -2, 3, -4] / q. No mean is subtracted:
  // row [1, 1, 1, 1] (mean square 1) stays [1, 2, 3, 4] / sqrt(1 + 1e-6).
  Norm rms(NormKind::RMSNorm, 4);
  REQUIRE(rms.bias.size() == 0);
  rms.weight << 1, 2, 3, 4;
  Mat x(2, 4);
  x << 2, -2, 2, -2, 1, 1, 1, 1;
  Norm::State s;
  const Mat y = run(rms, x, s);
  const double q = std::sqrt(1 + 2.5e-7), q1 = std::sqrt(1 + 1e-6);
  for (int j = 0; j < 4; ++j) {
    CAPTURE(j);
    CHECK_THAT(y(0, j), WithinAbs((j % 2 ? -1 : 1) * (j + 1) / q, 1e-6));
    CHECK_THAT(y(1, j), WithinAbs((j + 1) / q1, 1e-6));
  }
}

TEST_CASE("norm: at init layernorm rows have mean 0 and variance 1, rmsnorm rows RMS 1",
          "[norm]") {
  attn::Rng rng(1);
  const int N = 7, D = 16;
  // Rows of different scales and offsets: the norm removes both (LayerNorm) or the scale (RMS).
  Mat x = gradcheck::random_mat(N, D, rng, 3.0f);
  for (int n = 0; n < N; ++n) x.row(n).array() += float(n - 3) * 2.5f;
  Norm ln(NormKind::LayerNorm, D), rms(NormKind::RMSNorm, D);
  CHECK(ln.weight.isOnes(0));
  CHECK(ln.bias.isZero(0));
  CHECK(rms.weight.isOnes(0));
  CHECK(ln.eps() == 1e-5);
  CHECK(rms.eps() == 1e-6);
  Norm::State s1, s2;
  const Mat y1 = run(ln, x, s1), y2 = run(rms, x, s2);
  for (int n = 0; n < N; ++n) {
    CAPTURE(n);
    const double mean = y1.row(n).cast<double>().mean();
    const double var = (y1.row(n).cast<double>().array() - mean).square().mean();
    CHECK_THAT(mean, WithinAbs(0.0, 1e-6));
    CHECK_THAT(var, WithinAbs(1.0, 1e-4));  // var / (var + eps), var ~ 9 here
    const double ms = y2.row(n).cast<double>().array().square().mean();
    CHECK_THAT(std::sqrt(ms), WithinAbs(1.0, 1e-5));
    // RMSNorm only rescales: y is x times the positive rstd of its row.
    CHECK(s2.rstd[n] > 0.0f);
    CHECK(gradcheck::max_abs_diff(y2.row(n), x.row(n) * s2.rstd[n]) < 1e-6f);
  }
}

namespace {

// dbias = column sums of dy; dweight = column sums of dy * xhat; a second backward overwrites
// rather than accumulates (finite differences: test_gradcheck.cpp).
void check_norm_identities(NormKind kind) {
  const int N = 5, D = 6;
  attn::Rng rng(kind == NormKind::LayerNorm ? 2 : 3);
  Norm norm(kind, D);
  // Weights away from 1 and a bias away from 0, so every term of the backward is exercised.
  norm.weight = gradcheck::random_mat(1, D, rng);
  if (norm.bias.size()) norm.bias = gradcheck::random_mat(1, D, rng);
  Mat x = gradcheck::random_mat(N, D, rng, 2.0f);
  const Mat dout = gradcheck::random_mat(N, D, rng);
  Norm::State s;
  run(norm, x, s);
  Mat dx(N, D);
  norm.backward(s, dout, dx);
  if (kind == NormKind::LayerNorm)
    CHECK(gradcheck::max_abs_diff(norm.dbias, dout.colwise().sum()) < 1e-5f);
  CHECK(gradcheck::max_abs_diff(norm.dweight, dout.cwiseProduct(s.xhat).colwise().sum()) < 1e-5f);
  const RowVec dw1 = norm.dweight;
  norm.backward(s, dout, dx);
  CHECK(gradcheck::max_abs_diff(dw1, norm.dweight) == 0.0f);
}

}  // namespace

TEST_CASE("norm: layernorm's dbias and dweight are column sums; backward overwrites", "[norm]") {
  check_norm_identities(NormKind::LayerNorm);
}

TEST_CASE("norm: rmsnorm's dweight is a column sum; backward overwrites", "[norm]") {
  check_norm_identities(NormKind::RMSNorm);
}

TEST_CASE("norm: layernorm's dx sums to 0 on every row (the mean is removed)", "[norm]") {
  attn::Rng rng(4);
  Norm ln(NormKind::LayerNorm, 8);
  const Mat x = gradcheck::random_mat(3, 8, rng), dy = gradcheck::random_mat(3, 8, rng);
  Norm::State s;
  run(ln, x, s);
  Mat dx(3, 8);
  ln.backward(s, dy, dx);
  for (int n = 0; n < 3; ++n) CHECK_THAT(dx.row(n).sum(), WithinAbs(0.0, 1e-5));
  // Shifting a row leaves a LayerNorm's output unchanged; an RMSNorm's moves.
  Mat shifted = x;
  shifted.array() += 5.0f;
  Norm::State s2;
  CHECK(gradcheck::max_abs_diff(run(ln, shifted, s2), run(ln, x, s)) < 1e-5f);
  Norm rms(NormKind::RMSNorm, 8);
  CHECK(gradcheck::max_abs_diff(run(rms, shifted, s2), run(rms, x, s)) > 0.1f);
}

TEST_CASE("norm: y may alias x and dx may alias dy", "[norm]") {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    CAPTURE(attn::norm_kind_name(kind));
    attn::Rng rng(5);
    Norm norm(kind, 6);
    norm.weight = gradcheck::random_mat(1, 6, rng);
    const Mat x = gradcheck::random_mat(4, 6, rng), dy = gradcheck::random_mat(4, 6, rng);
    Norm::State s1, s2;
    const Mat y = run(norm, x, s1);
    Mat inplace = x;
    norm.forward(inplace, s2, inplace);
    CHECK(gradcheck::max_abs_diff(inplace, y) == 0.0f);
    Mat dx(4, 6);
    norm.backward(s1, dy, dx);
    Mat dinplace = dy;
    norm.backward(s2, dinplace, dinplace);
    CHECK(gradcheck::max_abs_diff(dinplace, dx) == 0.0f);
  }
}

TEST_CASE("norm: parameters are named like torch modules", "[norm]") {
  Norm ln(NormKind::LayerNorm, 5), rms(NormKind::RMSNorm, 5);
  std::vector<attn::ParamRef> p;
  ln.append_params("layers.0.attn_norm.", p);
  rms.append_params("final_norm.", p);
  REQUIRE(p.size() == 3);
  CHECK(p[0].name == "layers.0.attn_norm.weight");
  CHECK(p[1].name == "layers.0.attn_norm.bias");
  CHECK(p[2].name == "final_norm.weight");
  for (const auto& r : p) CHECK(r.shape == std::vector<int64_t>{5});
  CHECK(p[0].value == ln.weight.data());
  CHECK(p[1].grad == ln.dbias.data());
  CHECK(p[2].grad == rms.dweight.data());
}

TEST_CASE("norm: bad kinds, sizes and calls are rejected", "[norm]") {
  using attn::ErrorKind;
  check_error([] { Norm(NormKind::None, 4); }, ErrorKind::Config, "norm", "layernorm or rmsnorm");
  check_error([] { Norm(NormKind::RMSNorm, 0); }, ErrorKind::Config, "d_model", "d_model (0)");
  check_error([] { attn::parse_norm_kind("batchnorm"); }, ErrorKind::Config, "norm",
              "'batchnorm'");
  for (NormKind k : {NormKind::None, NormKind::LayerNorm, NormKind::RMSNorm})
    CHECK(attn::parse_norm_kind(attn::norm_kind_name(k)) == k);
  Norm ln(NormKind::LayerNorm, 4);
  Norm::State s;
  Mat dx(2, 4);
  check_error([&] { ln.backward(s, Mat::Zero(2, 4), dx); }, ErrorKind::State, "", "forward pass");
  Mat y(2, 3);
  check_error([&] { ln.forward(Mat::Zero(2, 3), s, y); }, ErrorKind::Input, "", "got 3");
  run(ln, Mat::Zero(2, 4), s);
  check_error([&] { ln.backward(s, Mat::Zero(3, 4), dx); }, ErrorKind::Input, "", "(3,4)");
}
