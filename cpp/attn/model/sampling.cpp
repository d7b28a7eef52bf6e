#include "attn/model/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attn/base/tensor.h"

namespace attn {

void SamplingOptions::validate(int V) const {
  require(std::isfinite(temperature) && temperature >= 0.0f && temperature <= 100.0f,
          "temperature (", temperature, ") must be in [0, 100]");
  require(top_k >= 0 && top_k <= V, "top_k (", top_k, ") must be in [0, ", V, "]");
  require(std::isfinite(top_p) && top_p > 0.0f && top_p <= 1.0f, "top_p (", top_p,
          ") must be in (0, 1]");
  require(std::isfinite(min_p) && min_p >= 0.0f && min_p <= 1.0f, "min_p (", min_p,
          ") must be in [0, 1]");
}

namespace {

// Scales the kept entries of p (p[i] > 0 or kept) to sum 1 and zeroes the rest.
void renormalise(float* p, int V, const std::vector<int>& kept) {
  double sum = 0.0;
  for (int i : kept) sum += p[i];
  std::vector<float> out(size_t(V), 0.0f);
  for (int i : kept) out[size_t(i)] = static_cast<float>(p[i] / sum);
  std::copy(out.begin(), out.end(), p);
}

}  // namespace

void next_token_distribution(const float* logits, int V, const SamplingOptions& o, float* probs) {
  require(V >= 1, "the vocabulary is empty");
  o.validate(V);
  for (int i = 0; i < V; ++i)
    require(std::isfinite(logits[i]), "logit ", i, " (", logits[i], ") is not finite");
  // Token ids by descending logit, ties by ascending id: the order every stage reads.
  std::vector<int> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });

  if (o.temperature == 0.0f) {  // greedy
    std::fill(probs, probs + V, 0.0f);
    probs[order[0]] = 1.0f;
    return;
  }
  // Temperature, then the softmax (in double, max subtracted).
  const double top = double(logits[order[0]]) / o.temperature;
  double sum = 0.0;
  std::vector<double> e(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) sum += e[size_t(i)] = std::exp(double(logits[i]) / o.temperature - top);
  for (int i = 0; i < V; ++i) probs[i] = static_cast<float>(e[size_t(i)] / sum);

  // Top-k: the first k of the order.
  int kept = (o.top_k > 0) ? o.top_k : V;
  if (kept < V) renormalise(probs, V, std::vector<int>(order.begin(), order.begin() + kept));
  // Top-p: down the order, up to and including the token where the cumulative mass reaches p.
  if (o.top_p < 1.0f) {
    double cum = 0.0;
    int n = 0;
    while (n < kept) {
      cum += probs[order[size_t(n)]];
      ++n;
      if (cum >= o.top_p) break;
    }
    if (n < kept) {
      kept = n;
      renormalise(probs, V, std::vector<int>(order.begin(), order.begin() + kept));
    }
  }
  // Min-p: every kept token with at least min_p times the largest probability.
  if (o.min_p > 0.0f) {
    const float threshold = o.min_p * probs[order[0]];
    int n = 0;
    while (n < kept && probs[order[size_t(n)]] >= threshold) ++n;
    if (n < kept) renormalise(probs, V, std::vector<int>(order.begin(), order.begin() + n));
  }
}

std::vector<float> next_token_distribution(const std::vector<float>& logits,
                                           const SamplingOptions& options) {
  std::vector<float> probs(logits.size());
  next_token_distribution(logits.data(), static_cast<int>(logits.size()), options, probs.data());
  return probs;
}

int sample_token(const float* probs, int V, Rng& rng) {
  require(V >= 1, "the vocabulary is empty");
  const double u = rng.uniform();
  double cum = 0.0;
  int last = -1;
  for (int i = 0; i < V; ++i) {
    if (probs[i] <= 0.0f) continue;
    cum += probs[i];
    last = i;
    if (u < cum) return i;
  }
  require(last >= 0, "the distribution has no token with a positive probability");
  return last;  // rounding left the total just under u
}

}  // namespace attn
