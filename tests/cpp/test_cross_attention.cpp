// The attention pieces: the shared attention map (attention_map.h) against its plain-loop twin,
// rectangular and at offsets; and cross-attention (cross_attention.h) against its twin, against
// per-head scaled_dot_product_attention for the backward, with padding keys, T != S, decoding
// over a cached source, and bad shapes. Finite differences of both: test_gradcheck.cpp's table.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/base/error.h"
#include "attn/nn/attention.h"
#include "attn/nn/attention_map.h"
#include "attn/nn/cross_attention.h"
#include "expect_error.h"
#include "gradcheck.h"

using attn::AttentionMap;
using attn::CrossAttention;
using attn::Mat;
using Catch::Matchers::WithinAbs;

namespace cross_test {

constexpr float kTol = 1e-5f;  // float kernels against double loops, values of size ~1

float max_diff(const Mat& a, const Mat& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace cross_test

using cross_test::kTol;
using cross_test::max_diff;

TEST_CASE("attention map: the kernels' map equals the plain loops, rectangular and at offsets",
          "[attention_map]") {
  attn::Rng rng(31);
  const Mat q = gradcheck::random_mat(3, 4, rng), k = gradcheck::random_mat(6, 4, rng);
  const uint8_t pad[6] = {0, 0, 1, 0, 0, 1};
  struct Config {
    const char* name;
    attn::MaskMode mode;
    attn::MaskPattern pattern;
    bool alibi;
    const uint8_t* pad;
  };
  const Config configs[] = {{"no mask", attn::MaskMode::None, {}, false, nullptr},
                            {"causal, alibi", attn::MaskMode::Causal, {}, true, nullptr},
                            {"window 2", attn::MaskMode::Causal, {true, 2, 0}, false, nullptr},
                            {"bidirectional, strided, pad", attn::MaskMode::Causal, {false, 2, 3}, true, pad},
                            {"no mask, pad", attn::MaskMode::None, {}, false, pad}};
  for (const Config& c : configs) {
    AttentionMap m;
    m.scale = 0.5f;
    m.mode = c.mode;
    m.pattern = c.pattern;
    m.alibi = c.alibi;
    m.alibi_slope = 0.3f;
    Mat p(3, 6);
    attn::attention_map_forward(m, q, k, p, 3, 0, c.pad);  // queries at positions 3..5
    const Mat ref = attn::naive_attention_map(m, q, k, 3, 0, c.pad);
    CAPTURE(c.name, max_diff(p, ref));
    CHECK(max_diff(p, ref) <= kTol);
    for (Eigen::Index i = 0; i < 3; ++i) CHECK_THAT(p.row(i).sum(), WithinAbs(1.0, 1e-5));
    if (c.pad)
      for (Eigen::Index i = 0; i < 3; ++i) CHECK((p(i, 2) == 0.0f && p(i, 5) == 0.0f));
  }
}

TEST_CASE("attention map: q and k of different widths, or weights of the wrong shape, are named",
          "[attention_map]") {
  AttentionMap m;
  Mat q = Mat::Ones(2, 3), k = Mat::Ones(4, 2), p(2, 4);
  check_error([&] { attn::attention_map_forward(m, q, k, p); }, attn::ErrorKind::Input, "",
              "queries have 3 features, its keys 2");
  Mat k3 = Mat::Ones(4, 3), wrong(2, 3);
  check_error([&] { attn::attention_map_forward(m, q, k3, wrong); }, attn::ErrorKind::Input, "",
              "must be (2,4), got (2,3)");
}

namespace cross_test {

struct Fixture {
  static constexpr int B = 2, T = 3, S = 5, D = 8;
  attn::Rng init{41}, data{42};
  CrossAttention m;
  Mat x = gradcheck::random_mat(B * T, D, data), src = gradcheck::random_mat(B * S, D, data);
  CrossAttention::Source c;  // the source encoded by the last forward
  CrossAttention::State s;   // that forward's cache
  Fixture(int H, int KV) : m(D, H, KV, 0.0f, init) {}
  Mat forward(const std::vector<uint8_t>& pad) {
    m.encode(src, B, S, pad, c);
    Mat y(B * T, D);
    m.forward(x, B, T, c, s, y);
    return y;
  }
};

}  // namespace cross_test

TEST_CASE("cross-attention: forward equals the naive twin, T != S, grouped K/V and padding",
          "[cross_attention]") {
  for (int KV : {0, 2, 1}) {
    for (bool padded : {false, true}) {
      cross_test::Fixture f(4, KV);
      const std::vector<uint8_t> pad =
          padded ? std::vector<uint8_t>{0, 0, 1, 0, 1, 1, 0, 0, 0, 0} : std::vector<uint8_t>{};
      const Mat y = f.forward(pad);
      const CrossAttention::State& s = f.s;
      const Mat ref = attn::naive_cross_attention(f.m, f.x, f.B, f.T, f.src, f.S, pad);
      CAPTURE(KV, padded, max_diff(y, ref));
      CHECK(max_diff(y, ref) <= kTol);
      CHECK(s.weights().rows() == f.B * 4 * f.T);
      CHECK(s.weights().cols() == f.S);
    }
  }
}

TEST_CASE("cross-attention: padding keys get exactly zero weight, and their values change nothing",
          "[cross_attention]") {
  cross_test::Fixture f(2, 0);
  const std::vector<uint8_t> pad = {0, 1, 0, 0, 1, 0, 0, 0, 1, 1};
  const Mat y = f.forward(pad);
  for (int b = 0; b < f.B; ++b)
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < f.T; ++i)
        for (int j = 0; j < f.S; ++j) {
          const float w = f.s.weights()((b * 2 + h) * f.T + i, j);
          if (pad[size_t(b * f.S + j)]) CHECK(w == 0.0f);
          else CHECK(w > 0.0f);
        }
  // The padded source rows replaced by anything: the output is the same, bit for bit.
  f.src.row(1).setConstant(7.0f);
  f.src.row(9).setConstant(-3.0f);
  CHECK(f.forward(pad) == y);
}

TEST_CASE("cross-attention: backward equals per-head scaled_dot_product_attention_backward",
          "[cross_attention]") {
  // Ungrouped, no padding, H 2: head h is sdpa on q_h, k_h, v_h, so the gradients of the
  // projections' outputs are sdpa's, which the op table checks by finite differences.
  cross_test::Fixture f(2, 0);
  f.forward({});
  CrossAttention::Source& c = f.c;
  CrossAttention::State& s = f.s;
  attn::Rng rng(43);
  const Mat dy = gradcheck::random_mat(f.B * f.T, f.D, rng);
  Mat dx(f.B * f.T, f.D), dsrc(f.B * f.S, f.D);
  f.m.backward(s, c, dy, dx, dsrc);
  Mat dmerged(f.B * f.T, f.D);
  attn::Linear out = f.m.out_proj;
  out.backward(s.merged, dy, dmerged);
  const int Dh = f.m.d_head;
  for (int b = 0; b < f.B; ++b)
    for (int h = 0; h < 2; ++h) {
      const Mat q = s.q.block(b * f.T, h * Dh, f.T, Dh);
      const Mat k = c.kv.block(b * f.S, h * Dh, f.S, Dh);
      const Mat v = c.kv.block(b * f.S, (2 + h) * Dh, f.S, Dh);
      const attn::AttentionResult r = attn::scaled_dot_product_attention(q, k, v, false);
      const attn::AttentionGrads g = attn::scaled_dot_product_attention_backward(
          q, k, v, r.weights, dmerged.block(b * f.T, h * Dh, f.T, Dh));
      CAPTURE(b, h);
      CHECK(max_diff(r.weights, s.probs.block((b * 2 + h) * f.T, 0, f.T, f.S)) <= kTol);
      CHECK(max_diff(g.dQ, s.dq.block(b * f.T, h * Dh, f.T, Dh)) <= kTol);
      CHECK(max_diff(g.dK, s.dkv.block(b * f.S, h * Dh, f.S, Dh)) <= kTol);
      CHECK(max_diff(g.dV, s.dkv.block(b * f.S, (2 + h) * Dh, f.S, Dh)) <= kTol);
    }
}

TEST_CASE("cross-attention: decoding over the cached source gives the full forward's rows",
          "[cross_attention]") {
  cross_test::Fixture f(4, 2);
  const std::vector<uint8_t> pad = {0, 0, 0, 1, 1, 0, 1, 0, 0, 0};
  const Mat y = f.forward(pad);
  const CrossAttention::Source& c = f.c;
  const Mat kv = c.kv;
  for (int b = 0; b < f.B; ++b)
    for (int i = 0; i < f.T; ++i) {  // one row at a time, as a decoder steps
      Mat w(4, f.S), row(1, f.D);
      f.m.forward_rows(f.x.row(b * f.T + i), c, b, w, row);
      CAPTURE(b, i);
      CHECK(max_diff(row, y.row(b * f.T + i)) <= 1e-6f);
      for (int h = 0; h < 4; ++h)
        CHECK(max_diff(w.row(h), f.s.probs.row((b * 4 + h) * f.T + i)) <= 1e-6f);
    }
  Mat w(f.T * 4, f.S), rows(f.T, f.D);  // all of sequence 1's rows at once
  f.m.forward_rows(f.x.middleRows(f.T, f.T), c, 1, w, rows);
  CHECK(max_diff(rows, y.middleRows(f.T, f.T)) <= 1e-6f);
  CHECK(c.kv == kv);  // decoding read the cache, never rewrote it
}

TEST_CASE("cross-attention: names its tensors under the caller's prefix with issue #40's names",
          "[cross_attention]") {
  cross_test::Fixture f(4, 2);
  std::vector<attn::ParamRef> p;
  f.m.append_params("decoder.layers.0.", p);
  REQUIRE(p.size() == 6);
  const std::string names[] = {"cross_q_proj.weight", "cross_q_proj.bias", "cross_kv_proj.weight",
                               "cross_kv_proj.bias", "cross_out_proj.weight", "cross_out_proj.bias"};
  const std::vector<int64_t> shapes[] = {{8, 8}, {8}, {8, 8}, {8}, {8, 8}, {8}};  // 2 KV Dh = 8
  for (size_t i = 0; i < 6; ++i) {
    CHECK(p[i].name == "decoder.layers.0." + names[i]);
    CHECK(p[i].shape == shapes[i]);
  }
  cross_test::Fixture g(4, 1);  // multi-query: kv (2 Dh, D)
  p.clear();
  g.m.append_params("", p);
  CHECK(p[2].shape == std::vector<int64_t>{4, 8});
}

TEST_CASE("cross-attention: bad shapes and configs get a clear error", "[cross_attention]") {
  attn::Rng rng(1);
  check_error([&] { CrossAttention(6, 4, 0, 0.0f, rng); }, attn::ErrorKind::Config, "d_model",
              "divisible by n_heads (4)");
  check_error([&] { CrossAttention(8, 4, 3, 0.0f, rng); }, attn::ErrorKind::Config, "kv_heads",
              "kv_heads (3) must divide n_heads (4)");
  cross_test::Fixture f(2, 0);
  CrossAttention::Source c;
  check_error([&] { f.m.encode(f.src, 2, 4, {}, c); }, attn::ErrorKind::Input, "",
              "the source has 10 rows but B*S = 8");
  check_error([&] { f.m.encode(f.src.leftCols(6), 2, 5, {}, c); }, attn::ErrorKind::Input, "",
              "the source must have 8 features, got 6");
  check_error([&] { f.m.encode(f.src, 2, 5, std::vector<uint8_t>(3, 0), c); },
              attn::ErrorKind::Input, "", "3 flags for B*S = 10");
  f.m.encode(f.src, 2, 5, {}, c);
  CrossAttention::State s;
  Mat y(6, 8);
  check_error([&] { f.m.forward(f.x, 3, 2, c, s, y); }, attn::ErrorKind::State, "",
              "a source encoded for batch size 3 (it holds 2)");
  check_error([&] { f.m.forward(f.x.leftCols(4), 2, 3, c, s, y.leftCols(4)); },
              attn::ErrorKind::Input, "", "expected feature dim 8, got 4");
  Mat w(2, 4), row(1, 8);
  check_error([&] { f.m.forward_rows(f.x.row(0), c, 0, w, row); }, attn::ErrorKind::Input, "",
              "weights must be (2,5), got (2,4)");
  Mat w5(2, 5);
  check_error([&] { f.m.forward_rows(f.x.row(0), c, 2, w5, row); }, attn::ErrorKind::Input, "",
              "batch index (2) must be in [0, 1]");
}
