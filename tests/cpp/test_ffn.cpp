// The feed-forward network: relu, gelu and swiglu by hand, torch's Linear init in the documented
// order, the activations' derivatives, aliasing, parameter names and errors (finite differences
// of every gradient: test_gradcheck.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/nn/ffn.h"
#include "expect_error.h"
#include "gradcheck.h"

using attn::FeedForward;
using attn::FfnKind;
using attn::Mat;
using Catch::Matchers::WithinAbs;

namespace {

FeedForward make_ffn(FfnKind kind, int D, int mult, uint64_t seed = 0) {
  attn::Rng rng(seed);
  return FeedForward(kind, D, mult, rng);
}

Mat run(const FeedForward& f, const Mat& x, FeedForward::State& s) {
  Mat y(x.rows(), x.cols());
  f.forward(x, s, y);
  return y;
}

}  // namespace

TEST_CASE("ffn: relu and gelu computed by hand", "[ffn]") {
  // D 1, ffn_mult 2 (F 2). up: W [[1], [-1]], b [0, 0.5]; down: W [[2, 3]], b [0.25].
  //   x = 1:  up = [1, -0.5];  relu -> [1, 0]     y = 2*1 + 3*0 + 0.25           = 2.25
  //                            gelu -> [Phi(1), -0.5 Phi(-0.5)] = [0.8413447, -0.1542688]
  //                                               y = 1.6826895 - 0.4628063 + 0.25 = 1.4698832
  //   x = -2: up = [-2, 2.5];  relu -> [0, 2.5]   y = 3*2.5 + 0.25               = 7.75
  for (FfnKind kind : {FfnKind::ReLU, FfnKind::GELU}) {
    CAPTURE(attn::ffn_kind_name(kind));
    auto f = make_ffn(kind, 1, 2);
    f.up.weight << 1, -1;
    f.up.bias << 0, 0.5f;
    f.down.weight << 2, 3;
    f.down.bias << 0.25f;
    Mat x(2, 1);
    x << 1, -2;
    FeedForward::State s;
    const Mat y = run(f, x, s);
    if (kind == FfnKind::ReLU) {
      CHECK(y(0, 0) == 2.25f);
      CHECK(y(1, 0) == 7.75f);
    } else {
      CHECK_THAT(y(0, 0), WithinAbs(1.4698832, 1e-6));
      // gelu(-2) = -2 Phi(-2) = -0.0455003, gelu(2.5) = 2.5 Phi(2.5) = 2.4844758
      //   y = 2 * -0.0455003 + 3 * 2.4844758 + 0.25 = 7.6124268
      CHECK_THAT(y(1, 0), WithinAbs(7.6124268, 1e-5));
    }
  }
}

TEST_CASE("ffn: swiglu computed by hand", "[ffn]") {
  // D 1, F 2, no biases. gate W [[1], [2]], up W [[3], [-1]], down W [[1, 2]]; x = 1:
  //   gate = [1, 2], silu = [1/(1+e^-1), 2/(1+e^-2)] = [0.7310586, 1.7615942]
  //   up = [3, -1];  hidden = silu(gate) * up = [2.1931757, -1.7615942]
  //   y = 2.1931757 - 2 * 1.7615942 = -1.3300126
  auto f = make_ffn(FfnKind::SwiGLU, 1, 2);
  REQUIRE(f.gate.has_value());
  CHECK(!f.up.has_bias());
  CHECK(!f.down.has_bias());
  CHECK(!f.gate->has_bias());
  f.gate->weight << 1, 2;
  f.up.weight << 3, -1;
  f.down.weight << 1, 2;
  Mat x(1, 1);
  x << 1;
  FeedForward::State s;
  const Mat y = run(f, x, s);
  CHECK_THAT(y(0, 0), WithinAbs(-1.3300126, 1e-6));
  CHECK_THAT(s.hidden(0, 0), WithinAbs(2.1931757, 1e-6));
}

TEST_CASE("ffn: activations and their derivatives", "[ffn]") {
  CHECK(attn::gelu(0.0f) == 0.0f);
  CHECK_THAT(attn::gelu(1.0f), WithinAbs(0.8413447, 1e-7));
  CHECK_THAT(attn::gelu(-3.0f), WithinAbs(-0.0040497, 1e-7));  // -3 Phi(-3)
  CHECK(attn::gelu_grad(0.0f) == 0.5f);
  CHECK(attn::silu(0.0f) == 0.0f);
  CHECK(attn::silu_grad(0.0f) == 0.5f);
  // Far in the tails, exp overflows: the results are exact limits, never NaN.
  CHECK(attn::silu(-200.0f) == 0.0f);
  CHECK(attn::silu_grad(-200.0f) == 0.0f);
  CHECK(attn::silu(200.0f) == 200.0f);
  CHECK(attn::silu_grad(200.0f) == 1.0f);
  CHECK(attn::gelu(-200.0f) == 0.0f);
  CHECK(attn::gelu_grad(200.0f) == 1.0f);
  // Each derivative against a central difference of its function, in double.
  for (float x : {-4.0f, -1.5f, -0.3f, 0.2f, 0.9f, 2.7f}) {
    CAPTURE(x);
    const float h = 1e-2f;
    const double dg = (double(attn::gelu(x + h)) - attn::gelu(x - h)) / (2.0 * h);
    const double ds = (double(attn::silu(x + h)) - attn::silu(x - h)) / (2.0 * h);
    CHECK_THAT(attn::gelu_grad(x), WithinAbs(dg, 1e-4));
    CHECK_THAT(attn::silu_grad(x), WithinAbs(ds, 1e-4));
  }
}

TEST_CASE("ffn: init is torch.nn.Linear's, in the documented order", "[ffn]") {
  const int D = 4, mult = 3, F = 12;
  // relu/gelu: up (weight, bias), then down (weight, bias), each U(-1/sqrt(in), 1/sqrt(in)).
  for (FfnKind kind : {FfnKind::ReLU, FfnKind::GELU}) {
    auto f = make_ffn(kind, D, mult, 7);
    CHECK(f.hidden_dim == F);
    CHECK(!f.gate.has_value());
    attn::Rng rng(7);
    const attn::Linear up(D, F, rng), down(F, D, rng);
    CHECK(gradcheck::max_abs_diff(f.up.weight, up.weight) == 0.0f);
    CHECK(gradcheck::max_abs_diff(f.up.bias, up.bias) == 0.0f);
    CHECK(gradcheck::max_abs_diff(f.down.weight, down.weight) == 0.0f);
    CHECK(gradcheck::max_abs_diff(f.down.bias, down.bias) == 0.0f);
    CHECK(f.up.weight.cwiseAbs().maxCoeff() <= 0.5f);          // 1/sqrt(4)
    CHECK(f.down.weight.cwiseAbs().maxCoeff() <= 1 / std::sqrt(12.0f));
  }
  // swiglu: gate, up, down, weights only (no draws for biases).
  auto f = make_ffn(FfnKind::SwiGLU, D, mult, 7);
  attn::Rng rng(7);
  const attn::Linear gate(D, F, rng, false), up(D, F, rng, false), down(F, D, rng, false);
  CHECK(gradcheck::max_abs_diff(f.gate->weight, gate.weight) == 0.0f);
  CHECK(gradcheck::max_abs_diff(f.up.weight, up.weight) == 0.0f);
  CHECK(gradcheck::max_abs_diff(f.down.weight, down.weight) == 0.0f);
  CHECK(f.up.bias.size() == 0);
  // A bias-free Linear draws only its weight: the next draw is the next layer's first.
  attn::Rng a(9), b(9);
  attn::Linear nb(3, 2, a, false);
  for (int i = 0; i < 6; ++i) b.uniform();
  CHECK(a.state() == b.state());
}

TEST_CASE("ffn: y may alias x, dx may alias dy, and backward overwrites", "[ffn]") {
  for (FfnKind kind : {FfnKind::ReLU, FfnKind::GELU, FfnKind::SwiGLU}) {
    CAPTURE(attn::ffn_kind_name(kind));
    auto f = make_ffn(kind, 4, 2, 13);
    attn::Rng data(14);
    const Mat x = gradcheck::random_mat(5, 4, data), dy = gradcheck::random_mat(5, 4, data);
    FeedForward::State s1, s2;
    const Mat y = run(f, x, s1);
    Mat inplace = x;
    f.forward(inplace, s2, inplace);
    CHECK(gradcheck::max_abs_diff(inplace, y) == 0.0f);
    Mat dx(5, 4);
    f.backward(s1, dy, dx);
    const Mat dup = f.up.dweight;
    Mat dinplace = dy;
    f.backward(s2, dinplace, dinplace);
    CHECK(gradcheck::max_abs_diff(dinplace, dx) == 0.0f);
    CHECK(gradcheck::max_abs_diff(f.up.dweight, dup) == 0.0f);
  }
}

TEST_CASE("ffn: parameters are named like torch modules, in init order", "[ffn]") {
  auto relu = make_ffn(FfnKind::ReLU, 3, 2), swiglu = make_ffn(FfnKind::SwiGLU, 3, 2);
  std::vector<attn::ParamRef> p;
  relu.append_params("layers.0.ffn.", p);
  REQUIRE(p.size() == 4);
  CHECK(p[0].name == "layers.0.ffn.up.weight");
  CHECK(p[0].shape == std::vector<int64_t>{6, 3});
  CHECK(p[1].name == "layers.0.ffn.up.bias");
  CHECK(p[1].shape == std::vector<int64_t>{6});
  CHECK(p[2].name == "layers.0.ffn.down.weight");
  CHECK(p[2].shape == std::vector<int64_t>{3, 6});
  CHECK(p[3].name == "layers.0.ffn.down.bias");
  CHECK(p[3].shape == std::vector<int64_t>{3});
  p.clear();
  swiglu.append_params("ffn.", p);
  REQUIRE(p.size() == 3);
  CHECK(p[0].name == "ffn.gate.weight");
  CHECK(p[0].value == swiglu.gate->weight.data());
  CHECK(p[1].name == "ffn.up.weight");
  CHECK(p[2].name == "ffn.down.weight");
  CHECK(p[2].shape == std::vector<int64_t>{3, 6});
}

TEST_CASE("ffn: bad kinds, widths and calls are rejected", "[ffn]") {
  using attn::ErrorKind;
  check_error([] { make_ffn(FfnKind::ReLU, 4, 0); }, ErrorKind::Config, "ffn_mult",
              "ffn_mult (0)");
  check_error([] { make_ffn(FfnKind::GELU, 4, 9); }, ErrorKind::Config, "ffn_mult",
              "ffn_mult (9)");
  check_error([] { make_ffn(FfnKind::SwiGLU, 0, 2); }, ErrorKind::Config, "d_model",
              "d_model (0)");
  check_error([] { make_ffn(FfnKind::None, 4, 2); }, ErrorKind::Config, "ffn", "swiglu");
  check_error([] { attn::parse_ffn_kind("geglu"); }, ErrorKind::Config, "ffn", "'geglu'");
  for (FfnKind k : {FfnKind::None, FfnKind::ReLU, FfnKind::GELU, FfnKind::SwiGLU})
    CHECK(attn::parse_ffn_kind(attn::ffn_kind_name(k)) == k);
  // A rejected config draws nothing.
  attn::Rng rng(3);
  CHECK_THROWS(FeedForward(FfnKind::ReLU, 4, 12, rng));
  CHECK(rng.state() == attn::Rng(3).state());
  auto f = make_ffn(FfnKind::ReLU, 4, 2);
  FeedForward::State s;
  Mat dx(2, 4);
  check_error([&] { f.backward(s, Mat::Zero(2, 4), dx); }, ErrorKind::State, "", "forward pass");
  run(f, Mat::Zero(2, 4), s);
  check_error([&] { f.backward(s, Mat::Zero(2, 5), dx); }, ErrorKind::Input, "", "(2,5)");
}
