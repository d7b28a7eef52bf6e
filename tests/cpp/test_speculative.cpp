// Speculative decoding (cpp/attn/model/speculative.h): the acceptance rule on fixed distributions
// (the course's setting), greedy output token-identical to the target's own for any draft, the
// figures of a generation, and the errors. The chi-square test on trained models is in
// test_speculative_exactness.cpp (native only).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "attn/base/stats.h"
#include "attn/data/text.h"
#include "attn/model/decoder.h"
#include "attn/model/speculative.h"
#include "expect_error.h"
#include "scrambled_model.h"
#include "speculative_models.h"

using namespace attn;
using namespace speculative_test;

namespace {

// The course's verifier distribution and a draft that differs from it.
const std::vector<float> kQ = {0.35f, 0.20f, 0.15f, 0.10f, 0.08f, 0.06f, 0.04f, 0.02f};
const std::vector<float> kP = {0.20f, 0.30f, 0.05f, 0.15f, 0.02f, 0.18f, 0.05f, 0.05f};

std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

// ---- The rule on fixed distributions

TEST_CASE("speculative: min(p, q) plus the residual's share of the rejections is q") {
  // P(token x) = p(x) min(1, q(x)/p(x)) + (1 - alpha) r(x) = min(p(x), q(x)) + (1 - alpha) r(x).
  Rng rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    const int V = 2 + trial % 20;
    std::vector<float> p(static_cast<size_t>(V)), q(static_cast<size_t>(V)), r(static_cast<size_t>(V));
    for (int i = 0; i < V; ++i) {  // some zeros on either side, as top-k leaves them
      p[size_t(i)] = rng.uniform() < 0.2 ? 0.0f : float(rng.uniform());
      q[size_t(i)] = rng.uniform() < 0.2 ? 0.0f : float(rng.uniform());
    }
    p[0] += 0.1f;
    q[size_t(V - 1)] += 0.1f;
    const float sp = std::accumulate(p.begin(), p.end(), 0.0f), sq = std::accumulate(q.begin(), q.end(), 0.0f);
    for (int i = 0; i < V; ++i) p[size_t(i)] /= sp, q[size_t(i)] /= sq;
    const double alpha = distribution_overlap(p.data(), q.data(), V);
    residual_distribution(q.data(), p.data(), V, r.data());
    CAPTURE(trial, V, alpha);
    for (int i = 0; i < V; ++i)
      CHECK(std::min(p[size_t(i)], q[size_t(i)]) + (1.0 - alpha) * r[size_t(i)] ==
            Approx(q[size_t(i)]).margin(1e-6));
    CHECK(std::accumulate(r.begin(), r.end(), 0.0) == Approx(1.0).margin(1e-5));
  }
  // q == p: the residual is empty and, as the course's code does, q is returned.
  std::vector<float> r(kQ.size());
  residual_distribution(kQ.data(), kQ.data(), int(kQ.size()), r.data());
  CHECK(r == kQ);
  // The hand case: q = (0.5, 0.5), p = (0.8, 0.2): alpha = 0.5 + 0.2 = 0.7, residual (0, 1).
  const float q2[] = {0.5f, 0.5f}, p2[] = {0.8f, 0.2f};
  float r2[2];
  CHECK(distribution_overlap(p2, q2, 2) == Approx(0.7));
  residual_distribution(q2, p2, 2, r2);
  CHECK(r2[0] == 0.0f);
  CHECK(r2[1] == 1.0f);
}

TEST_CASE("speculative: on fixed distributions the output follows q and k accepted follows alpha") {
  // The course's setting: the same q and p at every position, N = 3. Accepted counts: P(k) =
  // alpha^k (1 - alpha) for k < N and alpha^N for k = N; the emitted token follows q (at a
  // rejection the residual, else the bonus from q).
  const int V = int(kQ.size()), N = 3;
  Mat q_rows(N + 1, V), p_rows(N, V);
  for (int i = 0; i <= N; ++i) q_rows.row(i) = Eigen::Map<const RowVec>(kQ.data(), V);
  for (int i = 0; i < N; ++i) p_rows.row(i) = Eigen::Map<const RowVec>(kP.data(), V);
  const double alpha = distribution_overlap(kP.data(), kQ.data(), V);
  Rng rng(7);
  std::vector<int64_t> k_counts(size_t(N + 1), 0), last_counts(size_t(V), 0);
  std::vector<int64_t> buggy_counts(size_t(V), 0);
  int64_t bonus = 0, judged = 0, accepted = 0;
  std::vector<int32_t> drafts(static_cast<size_t>(N));
  for (int s = 0; s < kSamples; ++s) {
    for (int32_t& d : drafts) d = sample_token(kP.data(), V, rng);
    const Verification v = verify_drafts(q_rows, p_rows, drafts.data(), N, rng);
    ++k_counts[size_t(v.accepted)];
    // The first emitted token: the first draft if accepted, else the resampled one.
    ++last_counts[size_t(v.accepted > 0 ? drafts[0] : v.token)];
    bonus += v.bonus;
    judged += v.judged;
    accepted += v.accepted;
    CHECK(v.bonus == (v.accepted == N));
    CHECK(v.overlap_sum == Approx(alpha * v.judged));
    // A classic bug for contrast: at a rejection, draw from q instead of the residual. Its
    // first token follows min(p, q) + (1 - alpha) q, not q.
    const int32_t d = sample_token(kP.data(), V, rng);
    if (rng.uniform() < std::min(1.0, double(kQ[size_t(d)]) / kP[size_t(d)])) ++buggy_counts[size_t(d)];
    else ++buggy_counts[size_t(sample_token(kQ.data(), V, rng))];
  }
  std::vector<double> k_probs(size_t(N + 1));
  for (int k = 0; k < N; ++k) k_probs[size_t(k)] = std::pow(alpha, k) * (1.0 - alpha);
  k_probs[size_t(N)] = std::pow(alpha, N);
  const ChiSquare tk = chi_square_test(k_counts, k_probs);
  const ChiSquare tq = chi_square_test(last_counts, as_double(kQ));
  const ChiSquare tb = chi_square_test(buggy_counts, as_double(kQ));
  CAPTURE(alpha, tk.statistic, tk.p_value, tq.statistic, tq.p_value, tb.statistic, tb.p_value);
  CHECK(tk.p_value > kPValueThreshold);
  CHECK(tq.p_value > kPValueThreshold);
  CHECK(tb.p_value < kPValueThreshold);  // the test has the power to see the bug
  CHECK(bonus == k_counts[size_t(N)]);
  CHECK(double(accepted) / judged == Approx(alpha).margin(0.02));
}

TEST_CASE("speculative: equal distributions accept everything, disjoint ones nothing, greedy is the argmax") {
  const int V = int(kQ.size()), N = 4;
  Mat same(N + 1, V), q_rows(N + 1, V), p_rows(N, V);
  for (int i = 0; i <= N; ++i) same.row(i) = Eigen::Map<const RowVec>(kQ.data(), V);
  Rng rng(3);
  std::vector<int32_t> drafts = {0, 3, 7, 1};
  for (int s = 0; s < 1000; ++s) {
    const Verification v = verify_drafts(same, same.topRows(N), drafts.data(), N, rng);
    REQUIRE(v.accepted == N);
    REQUIRE(v.bonus);
    CHECK(v.overlap_sum == Approx(N));
  }
  // Disjoint: q on the even ids, p on the odd ones; nothing is ever accepted and the token comes
  // from q's support.
  q_rows.setZero();
  p_rows.setZero();
  for (int i = 0; i < V; i += 2) q_rows.col(i).setConstant(0.25f);
  for (int i = 1; i < V; i += 2) p_rows.col(i).setConstant(0.25f);
  drafts = {1, 3, 5, 7};
  for (int s = 0; s < 1000; ++s) {
    const Verification v = verify_drafts(q_rows, p_rows, drafts.data(), N, rng);
    REQUIRE(v.accepted == 0);
    REQUIRE(v.judged == 1);
    CHECK(v.token % 2 == 0);
    CHECK_FALSE(v.bonus);
    CHECK(v.overlap_sum == 0.0);
  }
  // Greedy: one-hot q and p. The draft's argmax is accepted exactly when it is the target's.
  q_rows.setZero();
  p_rows.setZero();
  for (int i = 0; i <= N; ++i) q_rows(i, (i * 3) % V) = 1.0f;  // targets 0, 3, 6, 1, 4
  drafts = {0, 3, 5, 1};                                       // the third differs
  for (int i = 0; i < N; ++i) p_rows(i, drafts[size_t(i)]) = 1.0f;
  const Verification v = verify_drafts(q_rows, p_rows, drafts.data(), N, rng);
  CHECK(v.accepted == 2);
  CHECK(v.token == 6);
  CHECK_FALSE(v.bonus);
}

TEST_CASE("speculative: the expected tokens per verification") {
  CHECK(expected_tokens_per_round(0.0, 4) == 1.0);
  CHECK(expected_tokens_per_round(1.0, 4) == 5.0);
  // 1 + a + a^2 + ... + a^N
  CHECK(expected_tokens_per_round(0.5, 3) == Approx(1.875));
  CHECK(expected_tokens_per_round(0.85, 5) == Approx((1 - std::pow(0.85, 6)) / 0.15));
  check_error([] { expected_tokens_per_round(1.5, 3); }, ErrorKind::Input, "", "alpha (1.5)");
}

// ---- Real models

TEST_CASE("speculative: greedy output is the target's own greedy output, for any draft") {
  TextModels& m = text_models();
  TinyAttentionLM& target = m.target->model();
  BigramDraft bigram = corpus_bigram();
  ModelDraft trained(m.draft->model());
  // An untrained draft (it proposes near-uniform guesses) and the target as its own draft.
  TinyAttentionLM untrained(m.draft->model().config, 99);
  ModelDraft fresh(untrained), itself(target);
  Draft* drafts[] = {&trained, &bigram, &fresh, &itself};
  SpeculativeOptions o;
  o.sampling.temperature = 0.0f;
  // A short prompt that the generation takes past the window (32), and one already past it.
  const std::vector<std::string> prompts = {"The cat ", "the heads attend to the tokens before them and "};
  for (const std::string& prompt : prompts) {
    const std::vector<int32_t> ids = text_ids(prompt);
    const std::vector<int32_t> plain = generate(target, ids, 60, o.sampling, 0);
    for (Draft* draft : drafts)
      for (int N : {1, 4, 8}) {
        o.draft_tokens = N;
        CAPTURE(prompt, draft->kind(), N);
        SpeculativeDecoder d(target, *draft, ids, 60, o);
        d.run();
        CHECK(d.tokens() == plain);
        const SpeculativeStats& s = d.stats();
        CHECK(s.tokens == 60);
        CHECK(s.accepted <= s.judged);
        CHECK(s.judged <= s.proposed);
        CHECK(int64_t(std::count(d.fates().begin(), d.fates().end(), TokenFate::Accepted)) <= s.accepted);
        if (draft == &itself) CHECK(s.alpha() == 1.0);
      }
  }
}

TEST_CASE("speculative: the figures of a generation add up") {
  TextModels& m = text_models();
  TinyAttentionLM& target = m.target->model();
  ModelDraft trained(m.draft->model());
  SpeculativeOptions o;
  o.draft_tokens = 4;
  o.seed = 3;
  // 20 tokens from a 5-character prompt stay inside the window of 32: every round is one target
  // pass of 5 rows and 4 draft passes (its pending tokens, then 3 drafts).
  const std::vector<int32_t> prompt = text_ids("The c");
  SpeculativeDecoder d(target, trained, prompt, 20, o);
  int64_t emitted = 0;
  while (!d.done()) emitted += d.round();
  const SpeculativeStats& s = d.stats();
  CHECK(emitted == 20);
  CHECK(s.tokens == 20);
  CHECK(d.tokens().size() == 20);
  CHECK(d.fates().size() == 20);
  CHECK(s.target_passes == s.rounds);
  CHECK(s.draft_passes == 4 * s.rounds);
  CHECK(s.proposed == 4 * s.rounds);
  CHECK(s.tokens <= s.rounds + s.accepted);  // the last round may be cut short
  CHECK(s.tokens_per_target_pass() > 1.0);   // a trained draft: some proposals accepted
  CHECK(s.alpha() > 0.0);
  CHECK(s.mean_overlap() > 0.0);
  CHECK(s.mean_overlap() <= 1.0);
  CHECK(d.round() == 0);
  // Every fate but the last of each round is Accepted; each round ends with one other.
  const int64_t ends = std::count_if(d.fates().begin(), d.fates().end(),
                                     [](TokenFate f) { return f != TokenFate::Accepted; });
  CHECK(ends >= s.rounds - 1);
  CHECK(ends <= s.rounds);
  // The same seed repeats the generation, its fates and figures; the plain comparison is
  // generate() of as many tokens with the same options and seed.
  const SpeculativeResult r = speculative_generate(target, trained, prompt, 20, o);
  CHECK(r.tokens == d.tokens());
  CHECK(r.fates == d.fates());
  CHECK(std::make_tuple(r.stats.tokens, r.stats.rounds, r.stats.target_passes,
                        r.stats.draft_passes, r.stats.proposed, r.stats.judged,
                        r.stats.accepted) ==
        std::make_tuple(s.tokens, s.rounds, s.target_passes, s.draft_passes, s.proposed,
                        s.judged, s.accepted));
  CHECK(r.stats.overlap_sum == s.overlap_sum);
  CHECK(r.plain_tokens == generate(target, prompt, 20, o.sampling, o.seed, o.window));
  CHECK_FALSE(std::isnan(r.plain_ms));  // compared: NaN only when the comparison is skipped
  const SpeculativeResult alone = speculative_generate(target, trained, prompt, 5, o, false);
  CHECK(alone.tokens.size() == 5);
  CHECK(alone.plain_tokens.empty());
  CHECK(std::isnan(alone.plain_ms));
}

TEST_CASE("speculative: measured alpha agrees with the mean of sum min(p, q)") {
  // Each judged proposal is accepted with probability sum_x min(p, q) at its position, so the
  // accepted count minus the summed overlaps is a sum of zero-mean terms of variance <= 1/4.
  TextModels& m = text_models();
  ModelDraft trained(m.draft->model());
  SpeculativeOptions o;
  o.draft_tokens = 4;
  o.seed = 21;
  SpeculativeDecoder d(m.target->model(), trained, text_ids("A small dog "), 1500, o);
  d.run();
  const SpeculativeStats& s = d.stats();
  CAPTURE(s.alpha(), s.mean_overlap(), s.judged);
  CHECK(std::abs(double(s.accepted) - s.overlap_sum) <= 5.0 * std::sqrt(0.25 * s.judged));
}

TEST_CASE("speculative: the expected acceptance on a text is 1 for the target itself, less for others") {
  TextModels& m = text_models();
  TinyAttentionLM& target = m.target->model();
  ModelDraft itself(target), trained(m.draft->model());
  BigramDraft bigram = corpus_bigram();
  const std::vector<int32_t> text = text_ids("The cat sat on the mat. A small dog ran to the park.");
  SamplingOptions t1, cold;
  cold.temperature = 0.5f;
  CHECK(expected_acceptance(target, itself, text, t1) == Approx(1.0).margin(1e-5));
  const double a_trained = expected_acceptance(target, trained, text, t1);
  const double a_bigram = expected_acceptance(target, bigram, text, t1);
  CAPTURE(a_trained, a_bigram);
  CHECK(a_trained > 0.3);
  CHECK(a_trained < 1.0);
  CHECK(a_bigram > 0.1);
  CHECK(a_bigram < a_trained);  // the trained draft reads more context than one character
  // Deterministic; and it is the overlap of the distributions under the strategies asked for.
  CHECK(expected_acceptance(target, trained, text, t1) == a_trained);
  CHECK(expected_acceptance(target, trained, text, cold) != a_trained);
  check_error([&] { expected_acceptance(target, trained, {1}, t1); }, ErrorKind::Input, "",
              "at least 2 tokens");
}

TEST_CASE("speculative: a draft serves one generation at a time") {
  ModelConfig c{11, 16, 4, 10};
  TinyAttentionLM target(c, 1), small(c, 2);
  scramble(target, 3);
  scramble(small, 4);
  ModelDraft draft(small);
  SpeculativeOptions o;
  o.sampling.temperature = 0.0f;
  SpeculativeDecoder a(target, draft, {1, 2, 3}, 6, o);
  a.round();
  {
    SpeculativeDecoder b(target, draft, {4, 5}, 6, o);  // takes the draft
    b.run();
    CHECK(b.tokens() == generate(target, {4, 5}, 6, o.sampling, 0));
    check_error([&] { a.round(); }, ErrorKind::State, "", "another generation has used this draft");
  }
  a.restart();  // the prompt goes in again
  a.run();
  CHECK(a.tokens() == generate(target, {1, 2, 3}, 6, o.sampling, 0));
}

TEST_CASE("speculative: bigram table, and errors name the bad value") {
  // Counted by hand: ids 0 1 0 1 1 over V 3: row 0 has (0->1) twice, row 1 has (1->0), (1->1).
  const int32_t ids[] = {0, 1, 0, 1, 1};
  BigramDraft b(ids, 5, 3);
  CHECK(std::exp(b.table()(0, 1)) == Approx(3.0 / 5.0));  // (2 + 1) / (2 + 3)
  CHECK(std::exp(b.table()(0, 0)) == Approx(1.0 / 5.0));
  CHECK(std::exp(b.table()(1, 1)) == Approx(2.0 / 5.0));
  CHECK(std::exp(b.table()(2, 0)) == Approx(1.0 / 3.0));  // never seen: uniform
  const int32_t one[] = {1};
  CHECK(b.push(one, 1) == b.table().row(1));
  const int32_t two[] = {2, 0};
  CHECK(b.push(two, 2) == b.table().row(0));
  b.rollback(1);
  CHECK(b.passes() == 2);
  check_error([&] { BigramDraft(ids, 1, 3); }, ErrorKind::Input, "", "at least 2 tokens");
  check_error([&] { BigramDraft(ids, 5, 1); }, ErrorKind::Input, "", "token 1 at 1");

  ModelConfig tc{11, 16, 4, 10}, dc{13, 16, 4, 10};
  TinyAttentionLM target(tc, 1), other(dc, 2);
  ModelDraft wrong(other), right(target);
  SpeculativeOptions o;
  check_error([&] { SpeculativeDecoder(target, wrong, {1, 2}, 5, o); }, ErrorKind::Input, "",
              "the draft's vocabulary has 13 tokens but the target's has 11");
  check_error([&] { SpeculativeDecoder(target, right, {}, 5, o); }, ErrorKind::Input, "",
              "the prompt is empty");
  check_error([&] { SpeculativeDecoder(target, right, {1, 11}, 5, o); }, ErrorKind::Input, "",
              "prompt token 11");
  check_error([&] { SpeculativeDecoder(target, right, {1}, -1, o); }, ErrorKind::Input, "",
              "number of tokens (-1)");
  o.draft_tokens = 0;
  check_error([&] { SpeculativeDecoder(target, right, {1}, 5, o); }, ErrorKind::Input, "",
              "the draft tokens per round (0) must be in [1, 16]");
  o.draft_tokens = 2;
  o.sampling.top_p = 0.0f;
  check_error([&] { SpeculativeDecoder(target, right, {1}, 5, o); }, ErrorKind::Input, "",
              "top_p (0)");
  o.sampling.top_p = 1.0f;
  check_error([&] { speculative_exactness(target, right, {1}, o, 0); }, ErrorKind::Input, "",
              "samples (0)");
}
