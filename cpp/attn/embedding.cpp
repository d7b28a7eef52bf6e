#include "attn/embedding.h"

#include <cmath>

namespace attn {

TokenEmbedding::TokenEmbedding(int V, int D, Rng& rng) : vocab_size(V), d_model(D) {
  require_config(V >= 1, "vocabSize", "vocab_size (", V, ") must be >= 1");
  require_config(D >= 1, "dModel", "d_model (", D, ") must be >= 1");
  weight.resize(V, D);
  for (Eigen::Index i = 0; i < weight.size(); ++i) weight.data()[i] = 0.02f * rng.normal();
  dweight = Mat::Zero(V, D);
}

void TokenEmbedding::check_ids(const int32_t* ids, Eigen::Index n) const {
  for (Eigen::Index i = 0; i < n; ++i)
    require(ids[i] >= 0 && ids[i] < vocab_size, "token id ", ids[i], " at position ", i,
            " is outside [0, ", vocab_size, ")");
}

void TokenEmbedding::forward(const int32_t* ids, Eigen::Index n, MatRef out) const {
  check_ids(ids, n);
  for (Eigen::Index i = 0; i < n; ++i) out.row(i) = weight.row(ids[i]);
}

// Forward: out[n] = W[ids[n]]  =>  dW[v] = sum over n with ids[n] == v of dout[n].
void TokenEmbedding::backward(const int32_t* ids, ConstMatRef dout) {
  dweight.setZero();
  for (Eigen::Index i = 0; i < dout.rows(); ++i) dweight.row(ids[i]) += dout.row(i);
}

SinusoidalPositionalEmbedding::SinusoidalPositionalEmbedding(int C, int D, double base)
    : max_context_length(C), d_model(D) {
  require_config(C >= 1, "seqLen", "max_context_length (", C, ") must be >= 1");
  require_config(D >= 2 && D % 2 == 0, "dModel", "d_model (", D,
                 ") must be even for sinusoidal positions");
  require_config(std::isfinite(base) && base > 1.0, "", "base (", base, ") must be > 1");
  table.resize(C, D);
  for (int p = 0; p < C; ++p)
    for (int i = 0; i < D; i += 2) {
      const double angle = p * std::exp(-std::log(base) * i / D);
      table(p, i) = static_cast<float>(std::sin(angle));
      table(p, i + 1) = static_cast<float>(std::cos(angle));
    }
}

ConstMatMap SinusoidalPositionalEmbedding::forward(int seq_len) const {
  require(seq_len >= 1 && seq_len <= max_context_length, "seq_len (", seq_len,
          ") must be in [1, ", max_context_length, "]");
  return ConstMatMap(table.data(), seq_len, d_model, Eigen::OuterStride<>(d_model));
}

}  // namespace attn
