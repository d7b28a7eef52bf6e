// The models and the chi-square threshold of the speculative decoding tests
// (test_speculative.cpp, test_speculative_exactness.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attn/data/text.h"
#include "attn/model/speculative.h"
#include "attn/train/bench.h"
#include "attn/train/draft.h"
#include "attn/train/trainer.h"

namespace speculative_test {

using namespace attn;

// The chi-square tests' threshold. Under a correct implementation the p-value of each test is
// (asymptotically) uniform on [0, 1], so one test fails with probability 1e-5 and the two tests
// of a run (first and second token) with at most 2e-5 together (a union bound): once in 50,000
// runs. The chi-square law is an approximation at finite counts; with every bin's expected count
// at least 5 (smaller ones pooled) it is good to well within the factor of 5 this leaves against
// the once-in-10^4 budget. The counts are large enough that the wrong rules the tests try
// (drawing at a rejection from q instead of the residual, accepting every draft token), whose
// distributions differ by a few percent, fall far below it (checked: they fail).
inline constexpr double kPValueThreshold = 1e-5;
inline constexpr int kSamples = 20000;

// The target and the draft, trained once per process on the default corpus: the GPT preset at
// D 32, T 32, and its suggested draft at D 16 (1 layer).
struct TextModels {
  std::shared_ptr<const TextCorpus> corpus;
  std::unique_ptr<Trainer> target, draft;
};

inline TextModels& text_models() {
  static TextModels m = [] {
    TextModels t;
    t.corpus = std::make_shared<const TextCorpus>(make_corpus(default_corpus(), 32));
    TrainerConfig c = text_preset_config();  // at half the width and length
    c.model.d_model = 32;
    c.task.seq_len = 32;
    c.model.ffn_mult = 2;
    t.target = std::make_unique<Trainer>(c, t.corpus);
    t.target->step(120);
    TrainerConfig d = draft_config(c);
    d.model.d_model = 16;
    t.draft = std::make_unique<Trainer>(d, t.corpus);
    t.draft->step(120);
    return t;
  }();
  return m;
}

inline std::vector<int32_t> text_ids(const std::string& text) {
  return encode(text_models().corpus->vocab, text);
}

inline BigramDraft corpus_bigram() {
  const TextCorpus& c = *text_models().corpus;
  return BigramDraft(c.train.data(), c.train.size(), c.vocab_size());
}

}  // namespace speculative_test
