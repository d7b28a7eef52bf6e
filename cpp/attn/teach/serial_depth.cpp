#include "attn/teach/serial_depth.h"

#include "attn/base/tensor.h"

namespace attn {

SerialDepth depth(int64_t n, int attention_layers) {
  require(n >= 1, "the sequence length n (", n, ") must be >= 1");
  require(attention_layers >= 1, "the attention layers (", attention_layers, ") must be >= 1");
  int64_t rounds = 0;  // ceil(log2 n), in integers: the smallest r with 2^r >= n
  while ((int64_t(1) << rounds) < n) ++rounds;
  return {n, rounds > 1 ? rounds : 1, attention_layers};
}

std::vector<double> serial_scan(const std::vector<double>& xs) {
  std::vector<double> out;
  out.reserve(xs.size());
  double acc = 0;
  for (double x : xs) out.push_back(acc += x);
  return out;
}

std::vector<std::vector<double>> parallel_scan_rounds(const std::vector<double>& xs) {
  std::vector<std::vector<double>> rounds{xs};
  for (size_t step = 1; step < xs.size(); step *= 2) {
    std::vector<double> next = rounds.back();
    const std::vector<double>& prev = rounds.back();
    for (size_t i = step; i < xs.size(); ++i) next[i] = prev[i] + prev[i - step];
    rounds.push_back(std::move(next));
  }
  return rounds;
}

std::vector<double> parallel_scan(const std::vector<double>& xs) {
  return parallel_scan_rounds(xs).back();
}

}  // namespace attn
