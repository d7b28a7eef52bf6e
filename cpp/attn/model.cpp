#include "attn/model.h"

#include "attn/loss.h"

namespace attn {

void ModelConfig::validate() const {
  // The keys are the JS config's; the Trainer's seqLen sets max_context_length.
  require_config(vocab_size >= 1, "vocabSize", "vocab_size (", vocab_size, ") must be >= 1");
  require_config(d_model >= 1, "dModel", "d_model (", d_model, ") must be >= 1");
  require_config(n_heads >= 1, "nHeads", "n_heads (", n_heads, ") must be >= 1");
  require_config(d_model % n_heads == 0, "dModel", "d_model (", d_model,
                 ") must be divisible by n_heads (", n_heads, ")");
  require_config(d_model % 2 == 0, "dModel", "d_model (", d_model,
                 ") must be even for sinusoidal positions");
  require_config(max_context_length >= 1, "seqLen", "max_context_length (", max_context_length,
                 ") must be >= 1");
}

namespace {
const ModelConfig& validated(const ModelConfig& c) {
  c.validate();
  return c;
}
}  // namespace

TinyAttentionLM::TinyAttentionLM(const ModelConfig& c, uint64_t seed)
    : TinyAttentionLM(validated(c), Rng(seed)) {}

// One generator, consumed by the members in declaration order.
TinyAttentionLM::TinyAttentionLM(const ModelConfig& c, Rng&& rng)
    : config(c),
      token_emb(c.vocab_size, c.d_model, rng),
      pos_emb(c.max_context_length, c.d_model),
      attn(c.d_model, c.n_heads, c.max_context_length, c.attn_dropout, c.out_dropout, rng),
      lm_head(c.d_model, c.vocab_size, rng) {}

// ids (B,T) -> x = emb + pe (N,D) -> a = attn(x) (N,D) -> logits = a W^T + b (N,V).
void TinyAttentionLM::forward(const int32_t* ids, int B, int T, bool training, Rng& rng,
                              State& s) {
  attn.check_input(Eigen::Index(B) * T, config.d_model, B, T);
  const Eigen::Index N = Eigen::Index(B) * T;
  const int D = config.d_model, V = config.vocab_size;
  s.B = B;
  s.T = T;
  s.x.resize(N, D);
  s.a.resize(N, D);
  s.logits.resize(N, V);
  token_emb.forward(ids, N, s.x);
  const ConstMatMap pe = pos_emb.forward(T);
  for (int b = 0; b < B; ++b) s.x.middleRows(Eigen::Index(b) * T, T) += pe;
  attn.forward(s.x, B, T, training, rng, s.attn, s.a);
  lm_head.forward(s.a, s.logits);
}

// Backward in reverse; pe is constant, so dx flows straight into the token embedding.
void TinyAttentionLM::backward(const int32_t* ids, State& s) {
  const Eigen::Index N = Eigen::Index(s.B) * s.T;
  require(s.dlogits.rows() == N && s.dlogits.cols() == config.vocab_size,
          "dlogits must be (", N, ",", config.vocab_size, ")");
  s.da.resize(N, config.d_model);
  s.dx.resize(N, config.d_model);
  lm_head.backward(s.a, s.dlogits, s.da);
  attn.backward(s.attn, s.da, s.dx);
  token_emb.backward(ids, s.dx);
}

float TinyAttentionLM::position_loss_backward(const int32_t* ids, int T, int query, int target,
                                              State& s) {
  require(query >= 0 && query < T, "query position (", query, ") must be in [0, ", T - 1, "]");
  Rng unused(0);  // eval mode: no dropout draws
  forward(ids, 1, T, /*training=*/false, unused, s);
  // Every position but query is left out of the loss, so dlogits is zero outside row query.
  std::vector<int32_t> targets(size_t(T), kIgnoreIndex);
  targets[size_t(query)] = target;
  s.dlogits.resize(s.logits.rows(), s.logits.cols());
  const float loss = cross_entropy(s.logits, targets.data(), s.dlogits);
  backward(ids, s);
  return loss;
}

std::vector<ParamSpec> state_dict_specs(const ModelConfig& c) {
  const int64_t V = c.vocab_size, D = c.d_model;
  return {
      {"token_emb.embedding.weight", {V, D}},
      {"attn.qkv_proj.weight", {3 * D, D}},
      {"attn.qkv_proj.bias", {3 * D}},
      {"attn.out_proj.weight", {D, D}},
      {"attn.out_proj.bias", {D}},
      {"lm_head.weight", {V, D}},
      {"lm_head.bias", {V}},
  };
}

std::vector<ParamRef> TinyAttentionLM::parameters() {
  // Value and gradient of each parameter, in the order of state_dict_specs.
  float* const data[][2] = {
      {token_emb.weight.data(), token_emb.dweight.data()},
      {attn.qkv_proj.weight.data(), attn.qkv_proj.dweight.data()},
      {attn.qkv_proj.bias.data(), attn.qkv_proj.dbias.data()},
      {attn.out_proj.weight.data(), attn.out_proj.dweight.data()},
      {attn.out_proj.bias.data(), attn.out_proj.dbias.data()},
      {lm_head.weight.data(), lm_head.dweight.data()},
      {lm_head.bias.data(), lm_head.dbias.data()},
  };
  const std::vector<ParamSpec> specs = state_dict_specs(config);
  std::vector<ParamRef> params;
  for (size_t i = 0; i < specs.size(); ++i)
    params.push_back({specs[i].name, specs[i].shape, data[i][0], data[i][1]});
  return params;
}

}  // namespace attn
