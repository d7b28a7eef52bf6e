// Decoding (the GPT lesson): from the logits of the next token to the distribution a
// sampler draws from, and the draw itself. One function owns the strategies, so the page, the
// CLI and the tests all sample the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/base/rng.h"

namespace attn {

// The strategies, applied in this order: temperature, top-k, top-p, min-p. Each stage keeps some
// tokens and renormalises over them; the next stage sees that distribution.
struct SamplingOptions {
  // Divides the logits before the softmax; 0 means greedy (all the mass on the largest logit).
  float temperature = 1.0f;
  // Keeps the k largest logits (ties: the lower token id first); 0 keeps every token.
  int top_k = 0;
  // Keeps the most likely tokens, in descending order, up to and including the one at which the
  // cumulative probability reaches p; 1 keeps every token.
  float top_p = 1.0f;
  // Keeps every token whose probability is at least min_p times the largest; 0 keeps every token.
  float min_p = 0.0f;

  // Throws an Error of kind Input naming the first bad value (temperature in [0, 100], top_k in
  // [0, V], top_p in (0, 1], min_p in [0, 1]).
  void validate(int vocab_size) const;
};

// probs (V): the probability of every token after the strategies, 0 for the excluded ones; they
// sum to 1. logits must be finite. Throws an Error of kind Input on a bad option or logit.
void next_token_distribution(const float* logits, int vocab_size, const SamplingOptions& options,
                             float* probs);
std::vector<float> next_token_distribution(const std::vector<float>& logits,
                                           const SamplingOptions& options);

// Draws a token from probs (V) by the inverse CDF: u = rng.uniform() in [0, 1), the first token
// whose cumulative probability exceeds u. A token of probability 0 is never drawn.
int sample_token(const float* probs, int vocab_size, Rng& rng);

}  // namespace attn
