#include "attn/data/markov.h"

#include <algorithm>
#include <cmath>

#include "attn/base/tensor.h"

namespace attn {

namespace {

constexpr int kMaxOrder = 3, kMaxSymbols = 32;

// A draw from the discrete distribution whose cumulative sums are cdf[0..n).
int draw_cdf(Rng& rng, const double* cdf, int n) {
  const double u = rng.uniform_open_double() * cdf[n - 1];
  const int i = int(std::lower_bound(cdf, cdf + n, u) - cdf);
  return std::min(i, n - 1);
}

}  // namespace

MarkovChain::MarkovChain(int order, int symbols, std::vector<double> next)
    : order_(order), symbols_(symbols), states_(1), next_(std::move(next)) {
  require(order >= 1 && order <= kMaxOrder, "a Markov chain's order (", order, ") must be in [1, ",
          kMaxOrder, "]");
  require(symbols >= 2 && symbols <= kMaxSymbols, "a Markov chain's symbols (", symbols,
          ") must be in [2, ", kMaxSymbols, "]");
  for (int i = 0; i < order; ++i) states_ *= symbols;
  const int S = symbols, N = states_;
  require(next_.size() == size_t(N) * S, "a chain of order ", order, " over ", S,
          " symbols needs ", size_t(N) * S, " transition probabilities, got ", next_.size());
  for (int s = 0; s < N; ++s) {
    double sum = 0;
    for (int x = 0; x < S; ++x) {
      const double p = next_[size_t(s) * S + x];
      require(p >= 0 && std::isfinite(p), "transition (", s, ", ", x, ") = ", p,
              " is not a probability");
      sum += p;
    }
    require(std::abs(sum - 1) <= 1e-9, "the transitions of state ", s, " sum to ", sum, ", not 1");
  }
  // Lazy power iteration: pi' = (pi + pi P) / 2, state s -> (s mod S^(k-1)) S + x.
  const int tail = N / S;  // S^(k-1)
  std::vector<double> pi(size_t(N), 1.0 / N), moved(size_t(N), 0.0);
  for (int it = 0; it < 1000000; ++it) {
    std::fill(moved.begin(), moved.end(), 0.0);
    for (int s = 0; s < N; ++s) {
      const double mass = pi[size_t(s)];
      const int base = (s % tail) * S;
      for (int x = 0; x < S; ++x) moved[size_t(base + x)] += mass * next_[size_t(s) * S + x];
    }
    double change = 0;
    for (int s = 0; s < N; ++s) {
      const double v = 0.5 * (pi[size_t(s)] + moved[size_t(s)]);
      change += std::abs(v - pi[size_t(s)]);
      pi[size_t(s)] = v;
    }
    if (change < 1e-13) break;
  }
  stationary_ = pi;
  stationary_cdf_.resize(size_t(N));
  double acc = 0, rate = 0;
  for (int s = 0; s < N; ++s) {
    stationary_cdf_[size_t(s)] = acc += pi[size_t(s)];
    double h = 0;  // H(next | s), bits
    for (int x = 0; x < S; ++x) {
      const double p = next_[size_t(s) * S + x];
      if (p > 0) h -= p * std::log2(p);
    }
    rate += pi[size_t(s)] * h;
  }
  entropy_rate_bits_ = rate;
}

MarkovChain MarkovChain::random(int order, int symbols, uint64_t seed) {
  require_config(order >= 1 && order <= kMaxOrder, "markov_order", "markov_order (", order,
                 ") must be in [1, ", kMaxOrder, "]");
  require_config(symbols >= 2 && symbols <= kMaxSymbols, "markov_symbols", "markov_symbols (",
                 symbols, ") must be in [2, ", kMaxSymbols, "]");
  int states = 1;
  for (int i = 0; i < order; ++i) states *= symbols;
  Rng rng(seed);
  std::vector<double> next(size_t(states) * symbols);
  for (int s = 0; s < states; ++s) {
    double* row = &next[size_t(s) * symbols];
    double peak = -1e300, sum = 0;
    for (int x = 0; x < symbols; ++x) peak = std::max(peak, row[x] = 2.0 * double(rng.normal()));
    for (int x = 0; x < symbols; ++x) sum += row[x] = std::exp(row[x] - peak);
    for (int x = 0; x < symbols; ++x) row[x] /= sum;
  }
  return MarkovChain(order, symbols, std::move(next));
}

void MarkovChain::draw(Rng& rng, int n, int32_t* z) const {
  require(n >= order_, "a draw of ", n, " symbols from a chain of order ", order_,
          " needs at least ", order_);
  const int S = symbols_, tail = states_ / S;
  int state = draw_cdf(rng, stationary_cdf_.data(), states_);
  for (int i = order_ - 1, s = state; i >= 0; --i, s /= S) z[i] = int32_t(s % S);
  double cdf[kMaxSymbols];
  for (int t = order_; t < n; ++t) {
    double acc = 0;
    for (int x = 0; x < S; ++x) cdf[x] = acc += next(state, x);
    const int x = draw_cdf(rng, cdf, S);
    z[t] = int32_t(x);
    state = (state % tail) * S + x;
  }
}

}  // namespace attn
