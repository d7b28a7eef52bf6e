// Why attention replaced recurrence (the course's lesson 01, 01-why-transformers/code/main.py):
// serial depth, the length of the longest chain of steps that must run one after another. A
// recurrent net's h_t = f(h_(t-1), x_t) is a chain of n steps; a prefix scan (Hillis-Steele)
// needs ceil(log2 n) rounds; an attention layer reaches every position in one.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

struct SerialDepth {
  int64_t rnn = 0;        // n: one step per position
  int64_t scan = 0;       // max(1, ceil(log2 n)): the parallel scan's rounds, the course's attn depth
  int64_t attention = 0;  // the attention layers: one step each, whatever n
};

// The course's depth(n) (n >= 1), with attention_layers >= 1 layers (an Error of kind Input
// otherwise).
SerialDepth depth(int64_t n, int attention_layers = 1);

// Prefix sums out[i] = xs[0] + ... + xs[i], one after another (n serial additions).
std::vector<double> serial_scan(const std::vector<double>& xs);

// Hillis-Steele: round r (step s = 2^r) sets out[i] += out[i - s] for every i >= s at once, from
// the previous round's values; ceil(log2 n) rounds. Returns every round's values: [0] is xs, the
// last the prefix sums (equal to serial_scan's up to the order of the additions).
std::vector<std::vector<double>> parallel_scan_rounds(const std::vector<double>& xs);

// The last round of parallel_scan_rounds.
std::vector<double> parallel_scan(const std::vector<double>& xs);

}  // namespace attn
