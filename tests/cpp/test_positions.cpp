// RoPE and ALiBi: values by hand, the tables, the backward as the inverse rotation, the norm and
// relative-offset properties, the slopes, and errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/nn/positions.h"
#include "expect_error.h"
#include "gradcheck.h"

using attn::Mat;
using attn::Rope;
using Catch::Matchers::WithinAbs;

TEST_CASE("rope: a rotation computed by hand", "[positions][rope]") {
  // Dh 4: pair 0 turns by p / 10000^0 = p, pair 1 by p / 10000^(2/4) = p / 100.
  // Position 0 leaves [1, 0, 0, 1] as it is. Position 1:
  //   pair 0 (a, b) = (1, 0) -> (a cos 1 - b sin 1, a sin 1 + b cos 1) = (0.5403023, 0.8414710)
  //   pair 1 (a, b) = (0, 1) -> (-sin 0.01, cos 0.01) = (-0.0099998, 0.9999500)
  const Rope rope(4, 4);
  Mat x(2, 4);
  x << 1, 0, 0, 1, 1, 0, 0, 1;
  rope.rotate(x);
  CHECK(x(0, 0) == 1.0f);
  CHECK(x(0, 1) == 0.0f);
  CHECK(x(0, 2) == 0.0f);
  CHECK(x(0, 3) == 1.0f);
  CHECK_THAT(x(1, 0), WithinAbs(0.5403023, 1e-7));
  CHECK_THAT(x(1, 1), WithinAbs(0.8414710, 1e-7));
  CHECK_THAT(x(1, 2), WithinAbs(-0.0099998, 1e-7));
  CHECK_THAT(x(1, 3), WithinAbs(0.9999500, 1e-7));
}

TEST_CASE("rope: the tables hold cos and sin of p / 10000^(2i/Dh)", "[positions][rope]") {
  const int C = 64, Dh = 8;
  const Rope rope(C, Dh);
  REQUIRE(rope.cos_table.rows() == C);
  REQUIRE(rope.cos_table.cols() == Dh / 2);
  // Against the angle in double: the float angle's rounding (~4e-6 at p = 63) is the only gap.
  double worst = 0;
  for (int p = 0; p < C; ++p)
    for (int i = 0; i < Dh / 2; ++i) {
      const double angle = p / std::pow(10000.0, 2.0 * i / Dh);
      worst = std::max({worst, std::fabs(rope.cos_table(p, i) - std::cos(angle)),
                        std::fabs(rope.sin_table(p, i) - std::sin(angle))});
    }
  CHECK(worst < 1e-5);
  CHECK(rope.cos_table.row(0).isOnes(0));
  CHECK(rope.sin_table.row(0).isZero(0));
}

TEST_CASE("rope: preserves each pair's norm, and rotate_backward undoes rotate",
          "[positions][rope]") {
  const int T = 12, Dh = 6;
  const Rope rope(16, Dh);
  attn::Rng rng(1);
  const Mat x = gradcheck::random_mat(T, Dh, rng);
  Mat r = x;
  rope.rotate(r);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < Dh / 2; ++i) {
      CAPTURE(t, i);
      const double before = std::hypot(double(x(t, 2 * i)), double(x(t, 2 * i + 1)));
      const double after = std::hypot(double(r(t, 2 * i)), double(r(t, 2 * i + 1)));
      CHECK_THAT(after, WithinAbs(before, 1e-6 * (1 + before)));
    }
  CHECK(gradcheck::max_abs_diff(r, x) > 0.1f);  // it did rotate
  rope.rotate_backward(r);
  CHECK(gradcheck::max_abs_diff(r, x) < 1e-6f);
}

TEST_CASE("rope: q . k depends only on the offset between the positions", "[positions][rope]") {
  // Rows all equal to q (to k) and rotated: row m is q at position m. For a fixed offset
  // m - n the dot product is the same wherever the pair sits.
  const int T = 20, Dh = 8;
  const Rope rope(T, Dh);
  attn::Rng rng(2);
  const Mat q1 = gradcheck::random_mat(1, Dh, rng), k1 = gradcheck::random_mat(1, Dh, rng);
  Mat q = q1.replicate(T, 1), k = k1.replicate(T, 1);
  rope.rotate(q);
  rope.rotate(k);
  for (int offset : {0, 1, 3, 7}) {
    CAPTURE(offset);
    const float first = q.row(offset).dot(k.row(0));
    for (int n = 1; n + offset < T; ++n) {
      CAPTURE(n);
      CHECK_THAT(q.row(n + offset).dot(k.row(n)), WithinAbs(first, 1e-5));
    }
  }
  // And it does depend on the offset.
  CHECK(std::fabs(q.row(3).dot(k.row(0)) - q.row(0).dot(k.row(0))) > 1e-3f);
}

TEST_CASE("rope: works in place on strided blocks", "[positions][rope]") {
  // The attention layer rotates a head's columns of the fused qkv.
  const int T = 5, Dh = 6;
  const Rope rope(8, Dh);
  attn::Rng rng(4);
  Mat wide = gradcheck::random_mat(T, 3 * Dh, rng);
  const Mat before = wide;
  Mat copy = wide.middleCols(Dh, Dh);
  rope.rotate(copy);
  rope.rotate(wide.middleCols(Dh, Dh));
  CHECK(gradcheck::max_abs_diff(wide.middleCols(Dh, Dh), copy) == 0.0f);
  CHECK(gradcheck::max_abs_diff(wide.leftCols(Dh), before.leftCols(Dh)) == 0.0f);
  CHECK(gradcheck::max_abs_diff(wide.rightCols(Dh), before.rightCols(Dh)) == 0.0f);
  rope.rotate_backward(copy);
  rope.rotate_backward(wide.middleCols(Dh, Dh));
  CHECK(gradcheck::max_abs_diff(wide.middleCols(Dh, Dh), copy) == 0.0f);
}

TEST_CASE("alibi: slopes are 2^(-8(h+1)/H)", "[positions][alibi]") {
  const std::vector<float> m8 = attn::alibi_slopes(8);
  REQUIRE(m8.size() == 8);
  for (int h = 0; h < 8; ++h) {
    CAPTURE(h);
    CHECK(m8[size_t(h)] == 1.0f / float(2 << h));  // 1/2, 1/4, ..., 1/256
  }
  const std::vector<float> m4 = attn::alibi_slopes(4);
  CHECK(m4 == std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f});
  CHECK(attn::alibi_slopes(1) == std::vector<float>{0.00390625f});
  const std::vector<float> m3 = attn::alibi_slopes(3);
  CHECK_THAT(m3[0], WithinAbs(0.1574901, 1e-7));  // 2^(-8/3)
  CHECK_THAT(m3[1], WithinAbs(0.0248031, 1e-7));  // 2^(-16/3)
  CHECK(m3[2] == 0.00390625f);
}

TEST_CASE("alibi: the bias is -m |i - j|, added to what is there", "[positions][alibi]") {
  // slope 0.5 on scores of 1: [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]; the causal mask then
  // keeps the lower triangle, -m (i - j) + 1.
  Mat s = Mat::Ones(3, 3);
  attn::add_alibi_bias(s, 0.5f);
  Mat expected(3, 3);
  expected << 1, 0.5f, 0, 0.5f, 1, 0.5f, 0, 0.5f, 1;
  CHECK(gradcheck::max_abs_diff(s, expected) == 0.0f);
}

TEST_CASE("positions: bad sizes are rejected", "[positions]") {
  using attn::ErrorKind;
  check_error([] { Rope(8, 5); }, ErrorKind::Config, "positions", "d_head (5)");
  check_error([] { Rope(8, 0); }, ErrorKind::Config, "positions", "d_head (0)");
  check_error([] { Rope(0, 4); }, ErrorKind::Config, "seq_len", "(0)");
  check_error([] { attn::alibi_slopes(0); }, ErrorKind::Config, "n_heads", "n_heads (0)");
  const Rope rope(4, 4);
  Mat x = Mat::Zero(5, 4);
  check_error([&] { rope.rotate(x); }, ErrorKind::Input, "", "(5)");
  Mat y = Mat::Zero(2, 6);
  check_error([&] { rope.rotate_backward(y); }, ErrorKind::Input, "", "got 6");
}
