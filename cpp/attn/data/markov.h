// The markov task's source: a random Markov chain of order k over S symbols, a source whose
// entropy is known exactly. The next symbol depends on the last k; a state is those k symbols,
// s_1 (the oldest) ... s_k, numbered s_1 S^(k-1) + ... + s_k. The entropy rate, in bits per
// symbol, is sum over states of pi(state) H(next | state), pi the stationary distribution of the
// chain on states (state -> its last k-1 symbols and the next one).
#pragma once

#include <cstdint>
#include <vector>

#include "attn/base/rng.h"

namespace attn {

class MarkovChain {
 public:
  // next (S^k, S) row-major: P(next = x | state); every row non-negative and summing to 1 (within
  // 1e-9). Bad sizes or rows are an Error of kind Input. Computes the stationary distribution by
  // power iteration of the lazy chain (P + I) / 2, which has the same stationary distributions
  // and converges for periodic chains too, from the uniform distribution, until the L1 change of
  // an iteration is below 1e-13.
  MarkovChain(int order, int symbols, std::vector<double> next);

  // A chain with every row softmax(2 z), z standard normal, drawn from Rng(seed): every
  // transition has positive probability, so the chain is irreducible and its rate unique.
  // order in [1, 3], symbols in [2, 32] (an Error of kind Config keyed markov_order or
  // markov_symbols otherwise).
  static MarkovChain random(int order, int symbols, uint64_t seed);

  int order() const { return order_; }      // k
  int symbols() const { return symbols_; }  // S
  int states() const { return states_; }    // S^k
  double next(int state, int x) const { return next_[size_t(state) * symbols_ + x]; }
  const std::vector<double>& stationary() const { return stationary_; }  // (S^k)
  double entropy_rate_bits() const { return entropy_rate_bits_; }

  // n >= k symbols: the first k a state drawn from the stationary distribution, each next one
  // from its row. So every symbol from the k-th on has the conditional entropy of the rate.
  void draw(Rng& rng, int n, int32_t* z) const;

 private:
  int order_, symbols_, states_;
  std::vector<double> next_, stationary_, stationary_cdf_;
  double entropy_rate_bits_ = 0;
};

}  // namespace attn
