// The attention-layer tests' one way to run a layer forward.
#pragma once

#include <cstdint>

#include "attn/nn/multihead.h"

namespace mhsa_test {

// Forward, eval mode unless training: x (B*T,D) -> y (B*T,D), the cache (and weights) left in s.
// Dropout, when training, draws from a generator seeded with dropout_seed.
inline attn::Mat run(attn::MultiHeadSelfAttention& m, const attn::Mat& x, int B, int T,
                     attn::MultiHeadSelfAttention::State& s, bool training = false,
                     uint64_t dropout_seed = 0) {
  attn::Rng rng(dropout_seed);
  attn::Mat y(x.rows(), m.d_model);
  m.forward(x, B, T, training, rng, s, y);
  return y;
}

}  // namespace mhsa_test
