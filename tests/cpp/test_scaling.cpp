// Scaling laws (train/scaling.h) against the course's numbers (13-scaling-laws/code/main.py),
// the least-squares fit on curves it must recover, and serial depth and the scans
// (teach/serial_depth.h) against 01-why-transformers/code/main.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attn/model/family.h"
#include "attn/teach/serial_depth.h"
#include "attn/train/scaling.h"
#include "expect_error.h"

using namespace attn;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("scaling: chinchilla_loss is the course's value for Chinchilla 70B on 1.4T tokens") {
  // 406.4 / 70e9^0.34 + 410.7 / 1.4e12^0.28 + 1.69 = 0.0880 + 0.1586 + 1.69
  CHECK_THAT(chinchilla_loss(70e9, 1.4e12), WithinAbs(1.936645, 5e-7));
  // Two terms: the others vanish as N, D grow.
  CHECK_THAT(chinchilla_loss(1e30, 1e30), WithinAbs(1.69, 1e-5));
  check_error([] { chinchilla_loss(0, 1e9); }, ErrorKind::Input, "", "N = 0");
  check_error([] { chinchilla_loss(1e9, -1); }, ErrorKind::Input, "", "D = -1");
}

TEST_CASE("scaling: compute_optimal gives the course's grid optimum at 1e18 to 1e24 FLOPs") {
  struct Row { double C, N, L; };
  const Row rows[] = {{1e18, 7.843e7, 3.535362},
                      {1e20, 6.593e8, 2.599871},
                      {1e22, 5.053e9, 2.138624},
                      {1e24, 4.2476e10, 1.911204}};
  for (const Row& r : rows) {
    CAPTURE(r.C);
    const ComputeSplit s = compute_optimal(r.C);
    CHECK_THAT(s.N, WithinRel(r.N, 1e-4));
    CHECK_THAT(s.L, WithinRel(r.L, 1e-4));
    CHECK_THAT(s.D, WithinRel(r.C / (6 * s.N), 1e-12));
    CHECK(s.D >= 1e6);
    CHECK_THAT(s.L, WithinRel(chinchilla_loss(s.N, s.D), 1e-12));
    // The closed form's N within 5% of the grid's (its spacing is 10^(8/199), 9.7%), and its loss
    // no higher: it is the exact minimum on the isoFLOP curve.
    const ComputeSplit f = compute_optimal_closed_form(r.C);
    CHECK_THAT(f.N, WithinRel(s.N, 0.05));
    CHECK_THAT(f.D * f.N * 6, WithinRel(r.C, 1e-12));
    CHECK(f.L <= s.L);
    // Its neighbours on the isoFLOP curve are worse.
    CHECK(chinchilla_loss(f.N * 1.01, r.C / (6 * f.N * 1.01)) > f.L);
    CHECK(chinchilla_loss(f.N / 1.01, r.C / (6 * f.N / 1.01)) > f.L);
  }
  // D/N grows with C under these constants (alpha > beta).
  CHECK(compute_optimal(1e24).tokens_per_param() > compute_optimal(1e18).tokens_per_param());
  check_error([] { compute_optimal(1e11); }, ErrorKind::Input, "", "6e11");
  check_error([] { compute_optimal(std::nan("")); }, ErrorKind::Input, "", "finite");
  check_error([] { compute_optimal_closed_form(-1); }, ErrorKind::Input, "", "(-1 FLOPs)");
}

TEST_CASE("scaling: fit_power_law recovers a curve it is given, exactly and with noise") {
  const std::vector<double> N = {1e3, 3e3, 1e4, 3e4, 1e5, 3e5};
  std::vector<double> L;
  for (double n : N) L.push_back(5.0 * std::pow(n, -0.4) + 1.25);
  const PowerLawFit f = fit_power_law(N, L);
  CHECK_THAT(f.alpha, WithinRel(0.4, 1e-5));
  CHECK_THAT(f.A, WithinRel(5.0, 1e-4));
  CHECK_THAT(f.E, WithinRel(1.25, 1e-5));
  CHECK(f.residual < 1e-7);
  // +-0.002 alternating: the fit stays close, and its residual is about the noise.
  std::vector<double> noisy = L;
  for (size_t i = 0; i < noisy.size(); ++i) noisy[i] += i % 2 ? 0.002 : -0.002;
  const PowerLawFit g = fit_power_law(N, noisy);
  CHECK_THAT(g.E, WithinAbs(1.25, 0.02));
  CHECK(g.residual > 1e-4);
  CHECK(g.residual < 0.003);
  // The residual is the RMS of the fit's own errors.
  double s = 0;
  for (size_t i = 0; i < N.size(); ++i) s += std::pow(noisy[i] - g.at(N[i]), 2);
  CHECK_THAT(g.residual, WithinRel(std::sqrt(s / N.size()), 1e-12));
  // A loss that rises with N has no falling power law: the fit is the flat mean, A = 0.
  const PowerLawFit up = fit_power_law({1, 2, 3}, {1.0, 2.0, 3.0});
  CHECK(up.A == 0);
  CHECK_THAT(up.E, WithinAbs(2.0, 1e-12));
  check_error([] { fit_power_law({1, 2}, {1, 2}); }, ErrorKind::Input, "", "at least 3 points");
  check_error([] { fit_power_law({5, 5, 5}, {1, 2, 3}); }, ErrorKind::Input, "", "2 distinct");
  check_error([] { fit_power_law({1, 0, 3}, {1, 2, 3}); }, ErrorKind::Input, "", "size 1 (0)");
  check_error([] { fit_power_law({1, 2, 3}, {1, 2}); }, ErrorKind::Input, "", "as many losses");
}

TEST_CASE("serial depth: the course's depth(n) for 64 to 262144") {
  // n, ceil(log2 n): 64 6, 512 9, 4096 12, 32768 15, 262144 18.
  const int64_t n[] = {64, 512, 4096, 32768, 262144};
  const int64_t scan[] = {6, 9, 12, 15, 18};
  for (int i = 0; i < 5; ++i) {
    const SerialDepth d = depth(n[i]);
    CHECK(d.rnn == n[i]);
    CHECK(d.scan == scan[i]);
    CHECK(d.attention == 1);
  }
  CHECK(depth(1).scan == 1);  // max(1, ceil(log2 1) = 0)
  CHECK(depth(2).scan == 1);
  CHECK(depth(65).scan == 7);
  CHECK(depth(4096, 3).attention == 3);
  check_error([] { depth(0); }, ErrorKind::Input, "", "n (0)");
  check_error([] { depth(8, 0); }, ErrorKind::Input, "", "layers (0)");
}

TEST_CASE("serial depth: the Hillis-Steele scan equals the serial scan") {
  // The course's check: 0..15, last value 120.
  std::vector<double> xs;
  for (int i = 0; i < 16; ++i) xs.push_back(i);
  CHECK(serial_scan(xs).back() == 120);
  CHECK(parallel_scan(xs) == serial_scan(xs));
  // Every length, ceil(log2 n) rounds after the input.
  for (int n = 1; n <= 70; ++n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(0.001 * (i % 17));
    const auto rounds = parallel_scan_rounds(v);
    CAPTURE(n);
    CHECK(int64_t(rounds.size()) - 1 == (n == 1 ? 0 : depth(n).scan));
    const std::vector<double> ser = serial_scan(v), par = rounds.back();
    for (int i = 0; i < n; ++i) CHECK_THAT(par[size_t(i)], WithinAbs(ser[size_t(i)], 1e-12));
  }
  // By hand, 4 ids: [1, 2, 3, 4] -> step 1 [1, 3, 5, 7] -> step 2 [1, 3, 6, 10].
  const auto r = parallel_scan_rounds({1, 2, 3, 4});
  REQUIRE(r.size() == 3);
  CHECK(r[1] == std::vector<double>{1, 3, 5, 7});
  CHECK(r[2] == std::vector<double>{1, 3, 6, 10});
  CHECK(parallel_scan({}).empty());
}

TEST_CASE("scaling sweep: heads scale with the width, the non-embedding count by hand") {
  CHECK(scaling_heads(8) == 1);
  CHECK(scaling_heads(16) == 2);
  CHECK(scaling_heads(24) == 3);
  CHECK(scaling_heads(48) == 6);
  CHECK(scaling_heads(12) == 1);  // 12 / 8 = 1
  CHECK(scaling_heads(40) == 5);
  CHECK(scaling_heads(36) == 4);  // 36 / 8 = 4 divides 36
  CHECK(scaling_heads(4) == 1);
  // The sweep's model at D 8 (V 8, T 32): per layer attn_norm 16, qkv_proj 3*8*8 + 24 = 216,
  // out_proj 64 + 8 = 72, ffn_norm 16, ffn up 8*32 + 32 = 288, down 32*8 + 8 = 264: 872; two
  // layers and the final norm (16): 1760. The embeddings: token 64, positions 32*8 = 256,
  // lm_head 64 + 8: 392 more, 2152 in all.
  TrainerConfig c = ScalingSweepConfig::scaling_base_config();
  c.model.d_model = 8, c.model.n_heads = 1, c.model.vocab_size = 8;
  CHECK(non_embedding_param_count(c.model_config()) == 1760);
  CHECK(model_report(c.model_config(), 1, 1).param_count() == 2152);
}

TEST_CASE("scaling sweep: every size trains on the same tokens; the fit is over its runs") {
  ScalingSweepConfig c;
  c.sizes = {8, 16, 24};
  c.steps = 40;
  c.base.task.seq_len = 8;
  c.base.training.batch_size = 4;
  c.eval_batches = 4;
  int seen = 0;
  const ScalingSweep s = scaling_sweep(
      c, nullptr, [](const ScalingRun&, void* n) { ++*static_cast<int*>(n); }, &seen);
  CHECK(seen == 3);
  REQUIRE(s.runs.size() == 3);
  std::vector<double> N, L;
  for (size_t i = 0; i < 3; ++i) {
    const ScalingRun& r = s.runs[i];
    CHECK(r.d_model == c.sizes[i]);
    CHECK(r.n_heads == scaling_heads(r.d_model));
    CHECK(r.non_embedding_params < r.params);
    CHECK(r.val_bits > 0);
    N.push_back(double(r.non_embedding_params));
    L.push_back(r.val_bits);
  }
  const PowerLawFit f = fit_power_law(N, L);
  CHECK(s.fit.E == f.E);
  CHECK(s.fit.alpha == f.alpha);
  // The markov chain's rate for the run's seed; the same sweep again gives the same numbers.
  CHECK(s.entropy_rate_bits ==
        markov_chain_for(c.base.task.params(), c.base.training.seed)->entropy_rate_bits());
  const ScalingRun again = scaling_run(c.base, 16, c.steps, c.eval_batches);
  CHECK(again.val_bits == s.runs[1].val_bits);
  // Another task has no rate.
  ScalingSweepConfig lag = c;
  lag.base.task.name = "lag";
  lag.base.task.lag = 2;
  lag.steps = 2;
  CHECK(std::isnan(scaling_sweep(lag).entropy_rate_bits));
}

TEST_CASE("scaling sweep: bad sizes and steps are refused with one sentence") {
  ScalingSweepConfig c;
  c.sizes = {8, 16};
  check_error([&] { check_scaling_sweep(c); }, ErrorKind::Config, "d_model", "3 to 16 sizes to fit A, alpha and E, got 2 (8,16)");
  c.sizes = {8, 16, 8};
  check_error([&] { check_scaling_sweep(c); }, ErrorKind::Config, "d_model", "(8,16,8) repeat 8");
  c.sizes = {8, 7, 16};
  check_error([&] { check_scaling_sweep(c); }, ErrorKind::Config, "d_model", "size 7: d_model (7)");
  c.sizes = {8, 16, 24};
  c.steps = 0;
  check_error([&] { check_scaling_sweep(c); }, ErrorKind::Input, "", "steps (0)");
  c.steps = 10;
  c.base.task.markov_order = 5;
  check_error([&] { check_scaling_sweep(c); }, ErrorKind::Config, "markov_order", "markov_order (5)");
}
