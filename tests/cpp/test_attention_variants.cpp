// The attention layer's variants: the mask patterns (bidirectional, sliding window, strided) and
// differential attention. The course's mask counts, window = n as causal exactly, the
// bidirectional mirror, masked keys at exactly 0, rows summing to 1 (differential: 1 - lambda),
// the layer against a naive reference written from the course's attention_row and
// diff_attention_row. Their backward is in test_gradcheck.cpp's table.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attn/kernels/ops.h"
#include "attn/nn/head_row.h"
#include "attn/nn/multihead.h"
#include "attn/nn/positions.h"
#include "expect_error.h"
#include "gradcheck.h"
#include "mhsa_run.h"

using attn::AttentionOptions;
using attn::MaskPattern;
using attn::Mat;
using attn::MultiHeadSelfAttention;
using mhsa_test::run;

// Named, not anonymous: the test files share unity batches.
namespace variants_test {

MaskPattern pattern(bool causal, int window = 0, int stride = 0) {
  MaskPattern p;
  p.causal = causal;
  p.window = window;
  p.stride = stride;
  return p;
}

// The visible cells of an (n,n) score matrix after apply_mask_pattern.
int visible_cells(const MaskPattern& p, int n) {
  Mat scores = Mat::Zero(n, n);
  attn::apply_mask_pattern(scores, p);
  int count = 0;
  for (Eigen::Index i = 0; i < scores.size(); ++i) count += std::isfinite(scores.data()[i]);
  return count;
}

MultiHeadSelfAttention make_layer(int D, int H, int C, AttentionOptions o, uint64_t seed = 0,
                            float p_attn = 0.0f, float p_out = 0.0f) {
  attn::Rng rng(seed);
  return MultiHeadSelfAttention(D, H, C, p_attn, p_out, rng, o);
}

// The layer recomputed in double from its weights, query row by query row as the course's
// attention_row and diff_attention_row do: the scores of the keys the pattern lets the query see
// (with RoPE rotated, with ALiBi -m |i - j| added), a softmax over those alone, every other
// weight 0; differential: w1 - lambda w2, both over the same values. Returns the output (B*T,D)
// and the weights (B*H*T,T).
std::pair<Mat, Mat> naive_layer(const MultiHeadSelfAttention& m, const Mat& x, int B, int T) {
  const int H = m.n_heads, Dh = m.d_head, D = m.d_model;
  Mat qkv(B * T, m.qkv_proj.out_features);
  m.qkv_proj.forward(x, qkv);
  std::optional<attn::Rope> rope;
  if (m.options.rope) rope.emplace(T, Dh);
  const std::vector<float> slopes = attn::alibi_slopes(H);
  const MaskPattern& p = m.options.pattern;
  Mat merged(B * T, D), weights(B * H * T, T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      // One map: row i's weights over the visible keys (the others 0).
      const auto map = [&](Eigen::Index q0, Eigen::Index k0) {
        Mat q = qkv.block(b * T, q0, T, Dh), k = qkv.block(b * T, k0, T, Dh);
        if (rope) {
          rope->rotate(q);
          rope->rotate(k);
        }
        Eigen::MatrixXd w = Eigen::MatrixXd::Zero(T, T);
        for (int i = 0; i < T; ++i) {
          double mx = -std::numeric_limits<double>::infinity(), sum = 0;
          std::vector<double> s(size_t(T), 0.0);
          for (int j = 0; j < T; ++j) {
            if (!p.visible(i, j)) continue;
            s[size_t(j)] = double(q.row(i).dot(k.row(j))) / std::sqrt(double(Dh));
            if (m.options.alibi) s[size_t(j)] -= double(slopes[size_t(h)]) * std::abs(i - j);
            mx = std::max(mx, s[size_t(j)]);
          }
          for (int j = 0; j < T; ++j)
            if (p.visible(i, j)) sum += (w(i, j) = std::exp(s[size_t(j)] - mx));
          w.row(i) /= sum;
        }
        return w;
      };
      Eigen::MatrixXd w = map(m.q_offset(h), m.k_offset(h));
      if (m.options.differential) w -= double(m.lambda[h]) * map(m.q2_offset(h), m.k2_offset(h));
      const Eigen::MatrixXd v = qkv.block(b * T, m.v_offset(h), T, Dh).cast<double>();
      weights.middleRows((b * H + h) * T, T) = w.cast<float>();
      merged.block(b * T, h * Dh, T, Dh) = (w * v).cast<float>();
    }
  Mat y(B * T, D);
  m.out_proj.forward(merged, y);
  return {y, weights};
}

struct LayerVariant {
  std::string name;
  AttentionOptions options;
};

AttentionOptions options(MaskPattern p, bool differential = false, int kv_heads = 0,
                         bool rope = false, bool alibi = false) {
  AttentionOptions o;
  o.pattern = p;
  o.differential = differential;
  o.kv_heads = kv_heads;
  o.rope = rope;
  o.alibi = alibi;
  return o;
}

// Every option and a few mixes, for the reference.
std::vector<LayerVariant> layer_variants() {
  return {
      {"bidirectional", options(pattern(false))},
      {"window 2", options(pattern(true, 2))},
      {"window 3, bidirectional, alibi", options(pattern(false, 3), false, 0, false, true)},
      {"strided 2 / 3", options(pattern(true, 2, 3))},
      {"strided 2 / 3, bidirectional, rope", options(pattern(false, 2, 3), false, 0, true)},
      {"differential", options(pattern(true), true)},
      {"differential, bidirectional, gqa 2, rope", options(pattern(false), true, 2, true)},
      {"differential, window 2, kv 1, alibi", options(pattern(true, 2), true, 1, false, true)},
      {"differential, strided 1 / 2", options(pattern(true, 1, 2), true)},
  };
}

// A layer with lambda moved off its init, a different value per head, so a swapped head shows.
MultiHeadSelfAttention variant_layer(const AttentionOptions& o, int D, int H, int C,
                                     uint64_t seed, float p_attn = 0.0f, float p_out = 0.0f) {
  MultiHeadSelfAttention m = make_layer(D, H, C, o, seed, p_attn, p_out);
  for (Eigen::Index h = 0; h < m.lambda.size(); ++h) m.lambda[h] = 0.3f + 0.15f * float(h);
  return m;
}

}  // namespace variants_test

using namespace variants_test;

TEST_CASE("mask pattern: the course's counts at n = 8 and window = n as causal exactly",
          "[variants]") {
  // swa_mask(8, 4): rows 0..3 see 1, 2, 3, 4 keys and rows 4..7 four each: 10 + 16 = 26.
  // strided_mask(8, 2, 3): the window {i-1, i} plus {0, 3, 6} <= i: 1+2+3+3+3+4+4+4 = 24.
  CHECK(visible_cells(pattern(true), 8) == 36);
  CHECK(visible_cells(pattern(true, 4), 8) == 26);
  CHECK(visible_cells(pattern(true, 2, 3), 8) == 24);
  // Bidirectional: the causal pattern mirrored, the diagonal counted once.
  CHECK(visible_cells(pattern(false), 8) == 64);
  CHECK(visible_cells(pattern(false, 4), 8) == 2 * 26 - 8);
  CHECK(visible_cells(pattern(false, 2, 3), 8) == 2 * 24 - 8);
  // visible_keys (what the page draws) is apply_mask_pattern's pattern, cell for cell.
  for (const MaskPattern& p : {pattern(true), pattern(true, 4), pattern(true, 2, 3), pattern(false),
                               pattern(false, 3), pattern(false, 2, 3)}) {
    Mat scores = Mat::Zero(8, 8);
    attn::apply_mask_pattern(scores, p);
    const std::vector<uint8_t> cells = attn::visible_keys(p, 8);
    REQUIRE(cells.size() == 64);
    for (Eigen::Index i = 0; i < 64; ++i) CHECK(cells[size_t(i)] == std::isfinite(scores.data()[i]));
  }
  for (int n = 1; n <= 12; ++n) {
    CAPTURE(n);
    Mat causal = Mat::Zero(n, n), window = Mat::Zero(n, n);
    attn::apply_causal_mask(causal);
    attn::apply_mask_pattern(window, pattern(true, n));
    CHECK(window == causal);  // -inf at the same cells, 0 elsewhere: bit for bit
    Mat longer = Mat::Zero(n, n);
    attn::apply_mask_pattern(longer, pattern(true, n + 5, 2));
    CHECK(longer == causal);
  }
}

TEST_CASE("mask pattern: the bidirectional form mirrors the causal one, and no row is empty",
          "[variants]") {
  for (int n : {1, 5, 9})
    for (int w : {1, 2, 3, 7})
      for (int s : {0, 1, 2, 3, 4}) {
        CAPTURE(n, w, s);
        const MaskPattern c = pattern(true, w, s), b = pattern(false, w, s);
        for (int i = 0; i < n; ++i) {
          int seen = 0;
          for (int j = 0; j < n; ++j) {
            CHECK(b.visible(i, j) == c.visible(std::max(i, j), std::min(i, j)));
            CHECK(b.visible(i, j) == b.visible(j, i));
            seen += c.visible(i, j);
          }
          CHECK(c.visible(i, i));
          CHECK(seen >= 1);
        }
        // One row at a time from its own position gives the same cells as the whole matrix.
        Mat whole = Mat::Zero(n, n), rows = Mat::Zero(n, n);
        attn::apply_mask_pattern(whole, c);
        for (int i = 0; i < n; ++i) attn::apply_mask_pattern(rows.row(i), c, i);
        CHECK(whole == rows);
      }
}

TEST_CASE("variants: the layer equals the naive reference; masked keys get exactly 0",
          "[variants]") {
  const int B = 2, T = 7, D = 16, H = 4;
  for (const LayerVariant& v : layer_variants()) {
    SECTION(v.name) {
      MultiHeadSelfAttention m = variant_layer(v.options, D, H, 9, 3);
      attn::Rng data(4);
      const Mat x = gradcheck::random_mat(B * T, D, data);
      MultiHeadSelfAttention::State s;
      const Mat y = run(m, x, B, T, s);
      const auto [want_y, want_w] = naive_layer(m, x, B, T);
      const Mat& w = s.weights();
      CHECK(gradcheck::max_abs_diff(y, want_y) <= 1e-5f);
      CHECK(gradcheck::max_abs_diff(w, want_w) <= 1e-6f);
      for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
          for (int i = 0; i < T; ++i) {
            const Eigen::Index r = (Eigen::Index(b) * H + h) * T + i;
            // Differential rows sum to 1 - lambda, plain ones to 1.
            const float want = v.options.differential ? 1.0f - m.lambda[h] : 1.0f;
            CHECK_THAT(w.row(r).sum(), Catch::Matchers::WithinAbs(want, 1e-6));
            for (int j = 0; j < T; ++j)
              if (!v.options.pattern.visible(i, j)) CHECK(w(r, j) == 0.0f);
          }
    }
  }
}

TEST_CASE("variants: a differential layer's projection holds q1, q2, k1, k2, v; lambda starts "
          "at 0.5",
          "[variants]") {
  // H 4, KV 2, Dh 4: q1 rows 0..15, q2 16..31, k1 32..39, k2 40..47, v 48..55.
  MultiHeadSelfAttention m = make_layer(16, 4, 8, options(pattern(true), true, 2));
  CHECK(m.qkv_proj.weight.rows() == (2 * 4 + 3 * 2) * 4);
  CHECK(m.q_offset(3) == 12);
  CHECK(m.q2_offset(3) == 28);
  CHECK(m.k_offset(3) == 36);  // head 3 reads K/V head 1
  CHECK(m.k2_offset(3) == 44);
  CHECK(m.v_offset(3) == 52);
  REQUIRE(m.lambda.size() == 4);
  for (int h = 0; h < 4; ++h) CHECK(m.lambda[h] == attn::kDiffLambdaInit);
  CHECK(attn::kDiffLambdaInit == 0.5f);
  // Without the option: no lambda and the curriculum's (H + 2 KV) Dh rows.
  MultiHeadSelfAttention plain = make_layer(16, 4, 8, options(pattern(true, 3)), 0);
  CHECK(plain.lambda.size() == 0);
  CHECK(plain.qkv_proj.weight.rows() == 48);
  check_error([] { make_layer(8, 2, 4, options(pattern(true, -1))); }, attn::ErrorKind::Config,
              "window", "window (-1)");
}

TEST_CASE("variants: a window as long as the sequence is the causal layer, bit for bit",
          "[variants]") {
  const int B = 2, T = 6, D = 12, H = 3;
  MultiHeadSelfAttention full = make_layer(D, H, 8, options(pattern(true)), 5);
  MultiHeadSelfAttention window = make_layer(D, H, 8, options(pattern(true, T)), 5);
  attn::Rng data(6);
  const Mat x = gradcheck::random_mat(B * T, D, data), dy = gradcheck::random_mat(B * T, D, data);
  MultiHeadSelfAttention::State s1, s2;
  CHECK(gradcheck::max_abs_diff(run(full, x, B, T, s1), run(window, x, B, T, s2)) == 0.0f);
  Mat dx1(B * T, D), dx2(B * T, D);
  full.backward(s1, dy, dx1);
  window.backward(s2, dy, dx2);
  CHECK(gradcheck::max_abs_diff(dx1, dx2) == 0.0f);
  CHECK(gradcheck::max_abs_diff(full.qkv_proj.dweight, window.qkv_proj.dweight) == 0.0f);
}

TEST_CASE("variants: head_row refuses a differential layer with one sentence", "[variants]") {
  MultiHeadSelfAttention m = make_layer(8, 2, 4, options(pattern(true), true));
  attn::Rng data(1);
  const Mat x = gradcheck::random_mat(4, 8, data), dy = gradcheck::random_mat(4, 8, data);
  MultiHeadSelfAttention::State s;
  s.inspect = true;
  run(m, x, 1, 4, s);
  Mat dx(4, 8);
  m.backward(s, dy, dx);
  check_error([&] { head_row(m, s, 0, 0, 3); }, attn::ErrorKind::State, "", "two score maps");
}
