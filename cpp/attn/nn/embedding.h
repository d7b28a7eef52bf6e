// Token and sinusoidal positional embeddings.
#pragma once

#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/nn/report.h"

namespace attn {

// Lookup table (V,D), init N(0, init_std^2): the curriculum's 0.02 by default. Ids outside [0, V)
// are an error.
class TokenEmbedding {
 public:
  TokenEmbedding(int vocab_size, int d_model, Rng& rng, float init_std = 0.02f);

  // ids (N) -> out (N,D): out[n] = weight[ids[n]]. Throws on an id outside [0, V).
  void forward(const int32_t* ids, Eigen::Index n, MatRef out) const;

  // Overwrites dweight: zeros, then dweight[ids[n]] += dout[n]. dout (N,D).
  void backward(const int32_t* ids, ConstMatRef dout);

  // "weight" (V,D); no cache and no products (its output is the caller's).
  static ModuleReport report(int vocab_size, int d_model);
  // Appends weight as prefix + "weight" (V,D).
  void append_params(const std::string& prefix, std::vector<ParamRef>& out);

  // Throws std::invalid_argument naming the first id outside [0, V).
  void check_ids(const int32_t* ids, Eigen::Index n) const;

  int vocab_size, d_model;
  Mat weight;   // (V,D)
  Mat dweight;  // (V,D)
};

// Fixed table pe (C,D): pe[p][2i] = sin(p / base^(2i/D)), pe[p][2i+1] = cos(same angle).
// Computed in float32 in the order of the curriculum's PyTorch class (denom = base^(2i/D), then
// angle = p / denom), so it matches that table to float rounding. Not a parameter.
class SinusoidalPositionalEmbedding {
 public:
  SinusoidalPositionalEmbedding(int max_context_length, int d_model, double base = 10000.0);

  // The first seq_len rows (seq_len,D); seq_len must be in [1, C].
  ConstMatMap forward(int seq_len) const;

  int max_context_length, d_model;
  Mat table;  // (C,D)
};

}  // namespace attn
