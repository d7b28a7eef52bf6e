// Speculative decoding keeps the target's distribution: a chi-square test on the first and second
// tokens of 20,000 speculative continuations of one prompt, for the bigram and a trained draft, at
// temperature 1 and with the strategies cutting the distribution (cpp/attn/model/speculative.h,
// speculative_exactness). Native only (tests.cmake): under node it takes most of a minute; the
// wasm builds run the same check with fewer samples through the JS API
// (tests/js-api/speculative.test.mjs), and the rest of the speculative tests in both.
#include <catch2/catch.hpp>

#include <vector>

#include "attn/base/stats.h"
#include "attn/model/speculative.h"
#include "speculative_models.h"

using namespace attn;
using namespace speculative_test;

TEST_CASE("speculative: the first and second tokens follow the target's distribution (chi-square)") {
  TextModels& m = text_models();
  TinyAttentionLM& target = m.target->model();
  BigramDraft bigram = corpus_bigram();
  ModelDraft trained(m.draft->model());
  const std::vector<int32_t> prompt = text_ids("the mo");
  struct Case {
    Draft* draft;
    SamplingOptions sampling;
    int N;
  };
  SamplingOptions t1, cut;
  cut.temperature = 0.8f;
  cut.top_k = 12;
  cut.top_p = 0.95f;
  const Case cases[] = {{&bigram, t1, 4}, {&trained, t1, 4}, {&trained, cut, 2}};
  uint64_t seed = 11;
  for (const Case& c : cases) {
    SpeculativeOptions o;
    o.draft_tokens = c.N;
    o.sampling = c.sampling;
    o.seed = seed++;
    const Exactness e = speculative_exactness(target, *c.draft, prompt, o, kSamples);
    CAPTURE(c.draft->kind(), c.N, c.sampling.temperature, c.sampling.top_k);
    CAPTURE(e.first.test.statistic, e.first.test.dof, e.first.test.p_value);
    CAPTURE(e.second.test.statistic, e.second.test.dof, e.second.test.p_value);
    CAPTURE(e.stats.alpha(), e.stats.mean_overlap());
    CHECK(e.first.test.samples == kSamples);
    CHECK(e.first.test.dof >= 3);  // a real distribution, not one token
    CHECK(e.second.test.dof >= 3);
    CHECK(e.first.test.p_value > kPValueThreshold);
    CHECK(e.second.test.p_value > kPValueThreshold);
    CHECK(e.stats.judged > 0);
    CHECK(e.stats.accepted < e.stats.judged);  // rejections happened: the residual was drawn
    // The same counts drawn from the draft alone (every proposal accepted) fail the test.
    if (c.draft == &bigram && c.sampling.temperature == 1.0f) {
      std::vector<float> p(size_t(target.config.vocab_size));
      bigram.reset();
      next_token_distribution(bigram.push(prompt.data(), int(prompt.size())).data(),
                              int(p.size()), c.sampling, p.data());
      Rng rng(5);
      std::vector<int64_t> counts(p.size(), 0);
      for (int s = 0; s < kSamples; ++s) ++counts[size_t(sample_token(p.data(), int(p.size()), rng))];
      const ChiSquare wrong = chi_square_test(counts, e.first.expected);
      CAPTURE(wrong.statistic, wrong.p_value);
      CHECK(wrong.p_value < kPValueThreshold);
    }
  }
}
