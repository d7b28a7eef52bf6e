// The attention-layer tests' one way to run a layer forward.
#pragma once

#include <cstdint>

#include "attn/nn/multihead.h"
#include "gradcheck.h"

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

// The layer's backward against finite differences of llm.c's fakeloss sum(y * dout), x and dout
// N(0,1) from Rng(data_seed): dx and every parameter gradient (lambda too, for a differential
// layer). Every forward's dropout draws from Rng(dropout_seed), so the masks stay fixed.
inline void check_layer_grads(attn::MultiHeadSelfAttention& m, int B, int T, uint64_t data_seed,
                              bool training = false, uint64_t dropout_seed = 77) {
  attn::Rng data(data_seed);
  attn::Mat x = gradcheck::random_mat(B * T, m.d_model, data);
  const attn::Mat dout = gradcheck::random_mat(B * T, m.d_model, data);
  attn::MultiHeadSelfAttention::State s;
  run(m, x, B, T, s, training, dropout_seed);
  attn::Mat dx(B * T, m.d_model);
  m.backward(s, dout, dx);
  auto loss = [&] {
    attn::MultiHeadSelfAttention::State ls;
    return gradcheck::fakeloss(run(m, x, B, T, ls, training, dropout_seed), dout);
  };
  gradcheck::check_grad("dx", x.data(), dx.data(), x.size(), loss);
  const attn::Mat dlambda = m.dlambda;  // copied: the loss's backward-free forwards keep it
  struct Param {
    const char* name;
    float* value;
    const float* grad;
    Eigen::Index n;
  };
  const Param params[] = {
      {"qkv_proj.weight", m.qkv_proj.weight.data(), m.qkv_proj.dweight.data(), m.qkv_proj.weight.size()},
      {"qkv_proj.bias", m.qkv_proj.bias.data(), m.qkv_proj.dbias.data(), m.qkv_proj.bias.size()},
      {"out_proj.weight", m.out_proj.weight.data(), m.out_proj.dweight.data(), m.out_proj.weight.size()},
      {"out_proj.bias", m.out_proj.bias.data(), m.out_proj.dbias.data(), m.out_proj.bias.size()},
      {"diff_lambda", m.lambda.data(), dlambda.data(), m.lambda.size()},
  };
  for (const Param& p : params)
    if (p.n > 0) gradcheck::check_grad(p.name, p.value, p.grad, p.n, loss);
}

}  // namespace mhsa_test
