#include "attn/nn/embedding.h"

#include <cmath>

#include "attn/kernels/kernels.h"

namespace attn {

TokenEmbedding::TokenEmbedding(int V, int D, Rng& rng, float init_std)
    : vocab_size(V), d_model(D) {
  require_config(V >= 1, "vocab_size", "vocab_size (", V, ") must be >= 1");
  require_config(D >= 1, "d_model", "d_model (", D, ") must be >= 1");
  weight.resize(V, D);
  for (Eigen::Index i = 0; i < weight.size(); ++i) weight.data()[i] = init_std * rng.normal();
  dweight = Mat::Zero(V, D);
}

void TokenEmbedding::check_ids(const int32_t* ids, Eigen::Index n) const {
  for (Eigen::Index i = 0; i < n; ++i)
    require(ids[i] >= 0 && ids[i] < vocab_size, "token id ", ids[i], " at position ", i,
            " is outside [0, ", vocab_size, ")");
}

void TokenEmbedding::forward(const int32_t* ids, Eigen::Index n, MatRef out) const {
  check_ids(ids, n);
  OpTimer timer("embedding");
  for (Eigen::Index i = 0; i < n; ++i) out.row(i) = weight.row(ids[i]);
}

// Forward: out[n] = W[ids[n]]  =>  dW[v] = sum over n with ids[n] == v of dout[n].
void TokenEmbedding::backward(const int32_t* ids, ConstMatRef dout) {
  OpTimer timer("embedding backward");
  dweight.setZero();
  for (Eigen::Index i = 0; i < dout.rows(); ++i) dweight.row(ids[i]) += dout.row(i);
}

SinusoidalPositionalEmbedding::SinusoidalPositionalEmbedding(int C, int D, double base)
    : max_context_length(C), d_model(D) {
  require_config(C >= 1, "seq_len", "max_context_length (", C, ") must be >= 1");
  require_config(D >= 2 && D % 2 == 0, "d_model", "d_model (", D,
                 ") must be even for sinusoidal positions");
  require_config(std::isfinite(base) && base > 1.0, "", "base (", base, ") must be > 1");
  table.resize(C, D);
  // The curriculum's PyTorch class, in float32 and in its order, each result rounded to float
  // where PyTorch rounds it:
  //   i = arange(D/2); denom = base ** (2 * i / D)    (D/2)
  //   angle = pos / denom                              (C, D/2)
  //   pe[:, 0::2] = sin(angle); pe[:, 1::2] = cos(angle)
  // The float32 angle is what matters: at pos ~ 100 its rounding moves sin by up to ~7.5e-6,
  // which an angle computed in double does not reproduce. pow, sin and cos are evaluated in
  // double on the float arguments and rounded once (correctly rounded up to rare ties), so the
  // table is within one float rounding of PyTorch's (tests/cpp/test_embedding.cpp) and the same
  // natively and in wasm whatever the libm.
  const float base_f = static_cast<float>(base);
  for (int i = 0; i < D; i += 2) {
    const float exponent = static_cast<float>(i) / static_cast<float>(D);  // 2 * (i/2) / D
    const float denom = static_cast<float>(std::pow(double(base_f), double(exponent)));
    for (int p = 0; p < C; ++p) {
      const float angle = static_cast<float>(p) / denom;
      table(p, i) = static_cast<float>(std::sin(double(angle)));
      table(p, i + 1) = static_cast<float>(std::cos(double(angle)));
    }
  }
}

ConstMatMap SinusoidalPositionalEmbedding::forward(int seq_len) const {
  require(seq_len >= 1 && seq_len <= max_context_length, "seq_len (", seq_len,
          ") must be in [1, ", max_context_length, "]");
  return ConstMatMap(table.data(), seq_len, d_model, Eigen::OuterStride<>(d_model));
}

ModuleReport TokenEmbedding::report(int vocab_size, int d_model) {
  ModuleReport r;
  r.tensors.push_back({"weight", {vocab_size, d_model}});
  return r;
}

void TokenEmbedding::append_params(const std::string& prefix, std::vector<ParamRef>& out) {
  out.push_back({prefix + "weight", {vocab_size, d_model}, weight.data(), dweight.data()});
}

}  // namespace attn
