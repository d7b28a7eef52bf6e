// Circuit measurements (cpp/attn/interp/circuits.h): previous-token and prefix-matching scores,
// W_QK / W_OV, K-composition and its random baseline, each against plain loops; the phase-change
// rule on synthetic loss curves.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/data/tasks.h"
#include "attn/interp/circuits.h"
#include "attn/nn/loss.h"
#include "attn/train/trainer.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// Random attention maps (B,H,T,T): causal rows of positive weights that sum to 1.
attn::Mat random_weights(int B, int H, int T, attn::Rng& rng) {
  attn::Mat w = attn::Mat::Zero(B * H * T, T);
  for (int r = 0; r < B * H * T; ++r) {
    const int i = r % T;
    double total = 0.0;
    for (int j = 0; j <= i; ++j) total += w(r, j) = 0.05f + rng.uniform();
    for (int j = 0; j <= i; ++j) w(r, j) = float(w(r, j) / total);
  }
  return w;
}

// A layer with random weights (D 8, H 2, C 6).
attn::MultiHeadSelfAttention random_layer(uint64_t seed, int D = 8, int H = 2) {
  attn::Rng rng(seed);
  attn::MultiHeadSelfAttention layer(D, H, 6, 0.0f, 0.0f, rng);
  for (attn::Mat* m : {&layer.qkv_proj.weight, &layer.out_proj.weight})
    for (Eigen::Index i = 0; i < m->size(); ++i) m->data()[i] = rng.normal();
  return layer;
}

double plain_frobenius(const attn::Mat& m) {
  double s = 0.0;
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) s += double(m(i, j)) * m(i, j);
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("circuits: previous-token score by hand", "[circuits]") {
  // B 1, H 2, T 3. Head 0 rows: [1], [.25 .75], [.1 .6 .3] -> weights on i-1: .25, .6 -> mean .425.
  // Head 1 rows: [1], [1 0], [0 0 1] -> 1, 0 -> mean .5.
  attn::Mat w(6, 3);
  w << 1, 0, 0, .25f, .75f, 0, .1f, .6f, .3f,  //
      1, 0, 0, 1, 0, 0, 0, 0, 1;
  attn::ScoreSum s[2];
  attn::add_previous_token(w, 1, 2, 3, s);
  CHECK_THAT(s[0].mean(), WithinAbs(0.425, 1e-7));
  CHECK_THAT(s[1].mean(), WithinAbs(0.5, 1e-7));
  CHECK(s[0].count == 2);
  CHECK(std::isnan(attn::ScoreSum{}.mean()));
  CHECK_THROWS_WITH(attn::add_previous_token(w, 1, 2, 4, s), Contains("expected (B*H*T,T) = (8,4)"));
}

TEST_CASE("circuits: prefix-matching score by hand", "[circuits]") {
  // T 10 (segments of 4..5 ids): 5 6 7 8 at 0 and 5, x = 5 6 7 8 9 5 6 7 8 1. Query 5 (id 5) ->
  // key 1 (after the first 5), query 6 -> key 2, 7 -> 3, 8 -> 4.
  const int32_t ids[10] = {5, 6, 7, 8, 9, 5, 6, 7, 8, 1};
  REQUIRE(attn::find_repeat(ids, 10) == attn::Repeat{0, 5, 4});
  attn::Mat w = attn::Mat::Zero(10, 10);  // B 1, H 1
  for (int i = 0; i < 10; ++i) w(i, 0) = 1.0f;
  w(5, 0) = 0.5f, w(5, 1) = 0.5f;    // 0.5 on key 1
  w(6, 0) = 0.0f, w(6, 2) = 1.0f;    // 1.0 on key 2
  w(7, 0) = 0.75f, w(7, 6) = 0.25f;  // 0.0 on key 3
  w(8, 0) = 0.5f, w(8, 4) = 0.5f;    // 0.5 on key 4
  attn::ScoreSum s[1];
  attn::add_prefix_matching(w, ids, 1, 1, 10, s);
  CHECK(s[0].count == 4);
  CHECK_THAT(s[0].mean(), WithinAbs(0.5, 1e-7));  // (0.5 + 1 + 0 + 0.5) / 4
  // A row without a repeat adds nothing.
  const int32_t plain[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  attn::ScoreSum none[1];
  attn::add_prefix_matching(w, plain, 1, 1, 10, none);
  CHECK(none[0].count == 0);
}

TEST_CASE("circuits: both attention scores match plain loops on rows with known repeats",
          "[circuits]") {
  // Row b: a segment of L = 4 + b % 3 ids (b*10 .. b*10 + L-1) at first = b % 3 and
  // second = first + L + b % 5; every other position holds its own id (100 + position), so the
  // segment is the only repeat.
  const int B = 8, H = 3, T = 24;
  attn::IntMat ids(B, T);
  std::vector<attn::Repeat> placed;
  for (int b = 0; b < B; ++b) {
    const int L = 4 + b % 3, first = b % 3, second = first + L + b % 5;
    for (int t = 0; t < T; ++t) ids(b, t) = 100 + t;
    for (int i = 0; i < L; ++i) ids(b, first + i) = ids(b, second + i) = b * 10 + i;
    placed.push_back({first, second, L});
  }
  attn::Rng rng(7);
  const attn::Mat w = random_weights(B, H, T, rng);
  attn::ScoreSum prev[H], prefix[H];
  attn::add_previous_token(w, B, H, T, prev);
  attn::add_prefix_matching(w, ids.data(), B, H, T, prefix);
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    // Previous token: w[b,h,i,i-1] over b and i >= 1.
    double p = 0.0;
    for (int b = 0; b < B; ++b)
      for (int i = 1; i < T; ++i) p += w((b * H + h) * T + i, i - 1);
    CHECK_THAT(prev[h].mean(), WithinRel(p / (B * (T - 1)), 1e-6));
    // Prefix matching: query second + i, key first + i + 1.
    double q = 0.0;
    int n = 0;
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < placed[size_t(b)].length; ++i, ++n)
        q += w((b * H + h) * T + placed[size_t(b)].second + i, placed[size_t(b)].first + i + 1);
    CHECK(prefix[h].count == n);
    CHECK_THAT(prefix[h].mean(), WithinRel(q / n, 1e-6));
  }
}

TEST_CASE("circuits: W_QK and W_OV match plain loops and act as the head does", "[circuits]") {
  const int D = 8, H = 2, Dh = D / H;
  const attn::MultiHeadSelfAttention layer = random_layer(3, D, H);
  const attn::Mat& W = layer.qkv_proj.weight;  // (3D,D)
  const attn::Mat& Wo = layer.out_proj.weight; // (D,D)
  attn::Rng rng(4);
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    const attn::Mat qk = attn::qk_circuit(layer, h), ov = attn::ov_circuit(layer, h);
    REQUIRE(qk.rows() == D);
    REQUIRE(qk.cols() == D);
    REQUIRE(ov.rows() == D);
    REQUIRE(ov.cols() == D);
    for (int a = 0; a < D; ++a)
      for (int c = 0; c < D; ++c) {
        // W_QK[a,c] = sum_e W_Q[a,e] W_K[c,e], with W_Q[a,e] = W[h*Dh + e, a].
        // W_OV[a,c] = sum_e W_V[a,e] W_O[e,c], with W_V[a,e] = W[2D + h*Dh + e, a], W_O[e,c] = Wo[c, h*Dh + e].
        double want_qk = 0.0, want_ov = 0.0;
        for (int e = 0; e < Dh; ++e) {
          want_qk += double(W(h * Dh + e, a)) * W(D + h * Dh + e, c);
          want_ov += double(W(2 * D + h * Dh + e, a)) * Wo(c, h * Dh + e);
        }
        CHECK_THAT(qk(a, c), WithinAbs(want_qk, 1e-5));
        CHECK_THAT(ov(a, c), WithinAbs(want_ov, 1e-5));
      }
    // As the head computes it (biases left out): x_i W_QK x_j^T = q(x_i) . k(x_j), and x W_OV is
    // out_proj of the merged vector holding only head h's value v(x).
    attn::RowVec xi(D), xj(D);
    for (int a = 0; a < D; ++a) xi[a] = rng.normal(), xj[a] = rng.normal();
    double score = 0.0;
    for (int e = 0; e < Dh; ++e) {
      double q = 0.0, k = 0.0;
      for (int a = 0; a < D; ++a) q += double(xi[a]) * W(h * Dh + e, a), k += double(xj[a]) * W(D + h * Dh + e, a);
      score += q * k;
    }
    CHECK_THAT(double((xi * qk * xj.transpose())(0, 0)), WithinAbs(score, 1e-4));
    attn::RowVec merged = attn::RowVec::Zero(D);
    for (int e = 0; e < Dh; ++e)
      for (int a = 0; a < D; ++a) merged[h * Dh + e] += xj[a] * W(2 * D + h * Dh + e, a);
    const attn::RowVec written = xj * ov, want = merged * Wo.transpose();
    for (int c = 0; c < D; ++c) CHECK_THAT(written[c], WithinAbs(want[c], 1e-4));
  }
  CHECK_THROWS_WITH(attn::qk_circuit(layer, 2), Contains("head (2) must be in [0, 1]"));
}

TEST_CASE("circuits: K-composition against plain loops, its semantics and its extremes",
          "[circuits]") {
  const int D = 8;
  const attn::MultiHeadSelfAttention l1 = random_layer(5), l2 = random_layer(6);
  for (int h1 = 0; h1 < 2; ++h1)
    for (int h2 = 0; h2 < 2; ++h2) {
      CAPTURE(h1, h2);
      const attn::Mat qk = attn::qk_circuit(l2, h2), ov = attn::ov_circuit(l1, h1);
      // ||W_QK W_OV^T||_F / (||W_QK||_F ||W_OV||_F), every sum a loop.
      attn::Mat product = attn::Mat::Zero(D, D);
      for (int a = 0; a < D; ++a)
        for (int c = 0; c < D; ++c)
          for (int e = 0; e < D; ++e) product(a, c) += qk(a, e) * ov(c, e);
      const double want = plain_frobenius(product) / (plain_frobenius(qk) * plain_frobenius(ov));
      const float got = attn::k_composition(qk, ov);
      CHECK_THAT(got, WithinRel(want, 1e-5));
      CHECK(got > 0.0f);
      CHECK(got <= 1.0f);
      // The semantics: the later head's score on a key x_j W_OV (what head h1 wrote) is
      // x_i (W_QK W_OV^T) x_j^T.
      attn::Rng rng(8);
      attn::RowVec xi(D), xj(D);
      for (int a = 0; a < D; ++a) xi[a] = rng.normal(), xj[a] = rng.normal();
      const attn::RowVec written = xj * ov;
      CHECK_THAT(double((xi * qk * written.transpose())(0, 0)),
                 WithinAbs(double((xi * product * xj.transpose())(0, 0)), 1e-3));
    }
  // Rank one: W_QK = u v^T reads direction v from the key; W_OV = w v^T writes along v -> 1.
  // Written along z orthogonal to v -> 0.
  attn::RowVec u = attn::RowVec::Zero(D), v = attn::RowVec::Zero(D), w = attn::RowVec::Zero(D),
               z = attn::RowVec::Zero(D);
  u[0] = 2, v[1] = 3, w[2] = -1, w[3] = 1, z[4] = 5;
  const attn::Mat qk = u.transpose() * v;
  CHECK_THAT(attn::k_composition(qk, w.transpose() * v), WithinAbs(1.0, 1e-6));
  CHECK(attn::k_composition(qk, w.transpose() * z) == 0.0f);
  CHECK(attn::k_composition(qk, attn::Mat::Zero(D, D)) == 0.0f);
  CHECK_THROWS_WITH(attn::k_composition(qk, attn::Mat::Zero(D, D + 1)),
                    Contains("two (D,D) matrices"));
}

TEST_CASE("circuits: the random K-composition baseline is the mean over its own draws",
          "[circuits]") {
  const int D = 12, Dh = 4, samples = 20;
  const float got = attn::k_composition_baseline(D, Dh, samples, 99);
  CHECK(got == attn::k_composition_baseline(D, Dh, samples, 99));  // deterministic
  // The same draws (W_Q, W_K, W_V (D,Dh), W_O (Dh,D), each row-major from one Rng), plain loops.
  attn::Rng rng(99);
  double total = 0.0;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> q(D * Dh), k(D * Dh), v(D * Dh), o(Dh * D);
    for (auto* m : {&q, &k, &v, &o})
      for (double& x : *m) x = rng.normal();
    attn::Mat qk(D, D), ov(D, D);
    for (int a = 0; a < D; ++a)
      for (int c = 0; c < D; ++c) {
        double x = 0.0, y = 0.0;
        for (int e = 0; e < Dh; ++e) x += q[a * Dh + e] * k[c * Dh + e], y += v[a * Dh + e] * o[e * D + c];
        qk(a, c) = float(x), ov(a, c) = float(y);
      }
    attn::Mat product = attn::Mat::Zero(D, D);
    for (int a = 0; a < D; ++a)
      for (int c = 0; c < D; ++c)
        for (int e = 0; e < D; ++e) product(a, c) += qk(a, e) * ov(c, e);
    total += plain_frobenius(product) / (plain_frobenius(qk) * plain_frobenius(ov));
  }
  CHECK_THAT(got, WithinRel(total / samples, 1e-5));
  CHECK(got > 0.0f);
  CHECK(got < 1.0f);
  // Another seed gives another estimate of the same mean.
  CHECK_THAT(attn::k_composition_baseline(D, Dh, 400, 1), WithinRel(double(got), 0.1));
  CHECK_THROWS_WITH(attn::k_composition_baseline(D, 0, 5, 1), Contains("got 12, 0, 5"));
}

namespace {

// A loss curve: level `high` with noise until `at`, then a logistic fall of width `width` to
// `low`; noise N(0, sd) from Rng(seed).
std::vector<float> falling_curve(int steps, float high, float low, int at, float width, float sd,
                                 uint64_t seed) {
  attn::Rng rng(seed);
  std::vector<float> out;
  for (int t = 1; t <= steps; ++t) {
    const float f = 1.0f / (1.0f + std::exp((float(t) - float(at)) / width));
    out.push_back(low + (high - low) * f + sd * rng.normal());
  }
  return out;
}

int64_t detect(const std::vector<float>& losses, int64_t stride = 1) {
  attn::PhaseChangeDetector d;
  return d.update(losses.data(), losses.size(), stride);
}

}  // namespace

TEST_CASE("circuits: the phase change is found after a plateau, at the fall", "[circuits][phase]") {
  // Plateau at 3.3, falling to 0.4 around step 700 over about 4 * 30 steps, noisy.
  for (uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    const std::vector<float> curve = falling_curve(2000, 3.3f, 0.4f, 700, 30.0f, 0.15f, seed);
    const int64_t step = detect(curve);
    CAPTURE(step);
    // Half the plateau is 1.65; the curve 0.4 + 2.9 / (1 + e^((t - 700) / 30)) is there at
    // t = 700 + 30 ln(2.9 / 1.25 - 1) = 708, and the 25-step trailing mean lags about 12 steps:
    // about 720.
    CHECK(step >= 700);
    CHECK(step <= 740);
    // Fed in pieces, the detector finds the same step.
    attn::PhaseChangeDetector d;
    for (size_t n = 0; n <= curve.size(); n += 37) d.update(curve.data(), n, 1);
    CHECK(d.update(curve.data(), curve.size(), 1) == step);
    // A thinned history (every other step, as the Trainer keeps it past its cap): the same
    // fall, to within the thinning.
    std::vector<float> thin;
    for (size_t i = 0; i < curve.size(); i += 2) thin.push_back(curve[i]);
    CHECK(std::abs(detect(thin, 2) - step) <= 8);
  }
  // Once found it stays, whatever follows.
  attn::PhaseChangeDetector d;
  const std::vector<float> curve = falling_curve(1500, 3.3f, 0.4f, 700, 30.0f, 0.1f, 4);
  const int64_t step = d.update(curve.data(), curve.size(), 1);
  CHECK(step > 0);
  CHECK(d.update(curve.data(), 10, 1) == step);
  CHECK(d.step() == step);
}

TEST_CASE("circuits: no phase change without a plateau, for a slow drift or for noise",
          "[circuits][phase]") {
  // Falling from the start (the repeat task's curve): exponential decay, no plateau while high;
  // the flat tail near 0 is not high enough to count.
  std::vector<float> decay;
  attn::Rng rng(5);
  for (int t = 0; t < 3000; ++t) decay.push_back(4.0f * std::exp(-t / 40.0f) + 0.002f * std::abs(rng.normal()));
  CHECK(detect(decay) == -1);
  // A slow drift from 3.3 to 0.3 over 5000 steps: plateaus, but never half gone within 400 steps.
  std::vector<float> drift;
  for (int t = 0; t < 5000; ++t) drift.push_back(3.3f - 3.0f * t / 5000.0f + 0.1f * rng.normal());
  CHECK(detect(drift) == -1);
  // Noise only, with occasional spikes: a plateau that never falls.
  std::vector<float> noise = falling_curve(4000, 3.3f, 3.3f, 100, 10.0f, 0.3f, 6);
  for (size_t i = 0; i < noise.size(); i += 97) noise[i] = 0.1f;
  CHECK(detect(noise) == -1);
  // Too short to have a plateau and a fall.
  CHECK(detect(std::vector<float>(50, 1.0f)) == -1);
  CHECK(detect({}) == -1);
  CHECK_THROWS_WITH(attn::PhaseChangeDetector().update(nullptr, 0, 0), Contains("stride (0)"));
}

TEST_CASE("circuits: head_scores has one score per head and the model's composition",
          "[circuits][trainer]") {
  attn::TrainerConfig c = attn::sized_config(16, 16, 2, 16, 8);  // V, D, H, T, B
  c.model.n_layers = 3;
  c.model.residual = true;
  c.task.name = "repeat";  // the scores use their own induction rows whatever the task
  attn::Trainer t(c);
  t.step(5);
  const attn::HeadScores s = head_scores(t.model(), t.data());
  REQUIRE(s.previous_token.size() == 6);
  REQUIRE(s.prefix_matching.size() == 6);
  REQUIRE(s.composition.size() == 8);  // (L-1) * H * H
  for (size_t g = 0; g < 6; ++g) {
    CHECK((s.previous_token[g] > 0.0f && s.previous_token[g] < 1.0f));
    CHECK((s.prefix_matching[g] > 0.0f && s.prefix_matching[g] < 1.0f));
  }
  for (int l = 0; l < 2; ++l)
    for (int h1 = 0; h1 < 2; ++h1)
      for (int h2 = 0; h2 < 2; ++h2)
        CHECK(s.composition[size_t((l * 2 + h1) * 2 + h2)] ==
              attn::k_composition(attn::qk_circuit(t.model().layers[size_t(l + 1)], h2),
                                  attn::ov_circuit(t.model().layers[size_t(l)], h1)));
  CHECK(s.composition_baseline == attn::k_composition_baseline(16, 8, attn::kBaselineSamples, 0x5EED));
  // The same rows every call, training not disturbed.
  const attn::HeadScores again = head_scores(t.model(), t.data());
  CHECK(again.previous_token == s.previous_token);
  CHECK(again.prefix_matching == s.prefix_matching);
  // Too short for induction rows: no prefix-matching score; previous-token still measured.
  c.task.seq_len = 3;
  c.model.n_layers = 1;
  attn::Trainer small(c);
  const attn::HeadScores few = head_scores(small.model(), small.data());
  CHECK(std::isnan(few.prefix_matching[0]));
  CHECK(few.previous_token[0] > 0.0f);
  CHECK(few.composition.empty());
  CHECK(std::isnan(few.composition_baseline));  // one layer: no pair of layers to compare
  CHECK(small.phase_change_step() == -1);
  // The baseline depends on the shapes alone: another trainer of those shapes reads the same.
  attn::Trainer other(t.config());
  CHECK(head_scores(other.model(), other.data()).composition_baseline == s.composition_baseline);
}
