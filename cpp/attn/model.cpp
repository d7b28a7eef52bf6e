#include "attn/model.h"

#include "attn/loss.h"

namespace attn {

void ModelConfig::validate() const {
  // The keys are the Trainer config's; its seq_len sets max_context_length.
  require_config(vocab_size >= 1, "vocab_size", "vocab_size (", vocab_size, ") must be >= 1");
  require_config(d_model >= 1, "d_model", "d_model (", d_model, ") must be >= 1");
  require_config(n_heads >= 1, "n_heads", "n_heads (", n_heads, ") must be >= 1");
  require_config(d_model % n_heads == 0, "d_model", "d_model (", d_model,
                 ") must be divisible by n_heads (", n_heads, ")");
  require_config(d_model % 2 == 0, "d_model", "d_model (", d_model,
                 ") must be even for sinusoidal positions");
  require_config(max_context_length >= 1, "seq_len", "max_context_length (", max_context_length,
                 ") must be >= 1");
  require_config(n_layers >= 1 && n_layers <= kMaxLayers, "n_layers", "n_layers (", n_layers,
                 ") must be in [1, ", kMaxLayers, "]");
}

namespace {
const ModelConfig& validated(const ModelConfig& c) {
  c.validate();
  return c;
}
}  // namespace

TinyAttentionLM::TinyAttentionLM(const ModelConfig& c, uint64_t seed)
    : TinyAttentionLM(validated(c), Rng(seed)) {}

namespace {
// L layers from one generator, in order: layer 0's qkv_proj and out_proj, then layer 1's, ...
std::vector<MultiHeadSelfAttention> make_layers(const ModelConfig& c, Rng& rng) {
  std::vector<MultiHeadSelfAttention> layers;
  layers.reserve(size_t(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l)
    layers.emplace_back(c.d_model, c.n_heads, c.max_context_length, c.attn_dropout, c.out_dropout,
                        rng);
  return layers;
}

// One layer state, with room for kMaxLayers, so that attn (layers[0]) stays put when forward()
// sizes the vector to the model's depth.
std::vector<MultiHeadSelfAttention::State> one_layer_state() {
  std::vector<MultiHeadSelfAttention::State> layers;
  layers.reserve(size_t(kMaxLayers));
  layers.emplace_back();
  return layers;
}
}  // namespace

TinyAttentionLM::State::State() : layers(one_layer_state()), attn(layers.front()) {}

void TinyAttentionLM::State::stacked_weights(Mat& out) const {
  const Eigen::Index rows = layers.front().weights().rows();  // B*H*T of one layer
  out.resize(rows * Eigen::Index(layers.size()), T);
  for (size_t l = 0; l < layers.size(); ++l)
    out.middleRows(rows * Eigen::Index(l), rows) = layers[l].weights();
}

// One generator, consumed by the members in declaration order.
TinyAttentionLM::TinyAttentionLM(const ModelConfig& c, Rng&& rng)
    : config(c),
      token_emb(c.vocab_size, c.d_model, rng),
      pos_emb(c.max_context_length, c.d_model),
      layers(make_layers(c, rng)),
      attn(layers.front()),
      lm_head(c.d_model, c.vocab_size, rng) {}

// ids (B,T) -> x = emb + pe (N,D) -> per layer l: a = a + attn_l(a) with residual, else
// a = attn_l(a), starting from a = x -> logits = a W^T + b (N,V). Caches x, a, and each layer's
// own cache (its input among them) in s.layers[l].
void TinyAttentionLM::forward(const int32_t* ids, int B, int T, bool training, Rng& rng,
                              State& s) {
  attn.check_input(Eigen::Index(B) * T, config.d_model, B, T);
  const Eigen::Index N = Eigen::Index(B) * T;
  const int D = config.d_model, V = config.vocab_size, L = config.n_layers;
  require(size_t(L) <= s.layers.capacity(), "a State holds at most ", s.layers.capacity(),
          " layers, the model has ", L);
  s.B = B;
  s.T = T;
  s.x.resize(N, D);
  s.a.resize(N, D);
  s.logits.resize(N, V);
  s.layers.resize(size_t(L));  // within the reserved capacity: attn stays valid
  if (config.residual) s.y.resize(N, D);
  token_emb.forward(ids, N, s.x);
  const ConstMatMap pe = pos_emb.forward(T);
  for (int b = 0; b < B; ++b) s.x.middleRows(Eigen::Index(b) * T, T) += pe;
  for (int l = 0; l < L; ++l) {
    MultiHeadSelfAttention::State& st = s.layers[size_t(l)];
    if (s.inspect) st.inspect = true;
    const Mat& in = l == 0 ? s.x : s.a;
    if (config.residual) {
      layers[size_t(l)].forward(in, B, T, training, rng, st, s.y);
      if (l == 0) s.a = s.x + s.y;  // x_1 = x_0 + attn_0(x_0)
      else s.a += s.y;              // x_{l+1} = x_l + attn_l(x_l)
    } else {
      // x_{l+1} = attn_l(x_l); for l > 0 the layer reads a and overwrites it, which forward()
      // allows (it copies its input first).
      layers[size_t(l)].forward(in, B, T, training, rng, st, s.a);
    }
  }
  lm_head.forward(s.a, s.logits);
}

// Backward in reverse; pe is constant, so the stream's gradient at layer 0 flows straight into
// the token embedding. dx carries dL/d(layer l's output stream) down the layers:
//   residual:  x_{l+1} = x_l + attn_l(x_l)  =>  dx_l = dx_{l+1} + attn_l'(x_l)^T dx_{l+1}
//   otherwise: x_{l+1} = attn_l(x_l)        =>  dx_l = attn_l'(x_l)^T dx_{l+1}
void TinyAttentionLM::backward(const int32_t* ids, State& s) {
  const Eigen::Index N = Eigen::Index(s.B) * s.T;
  require(s.dlogits.rows() == N && s.dlogits.cols() == config.vocab_size,
          "dlogits must be (", N, ",", config.vocab_size, ")");
  require(s.layers.size() == size_t(config.n_layers), "the State holds ", s.layers.size(),
          " layers but the model has ", config.n_layers, "; run forward() first");
  s.da.resize(N, config.d_model);
  s.dx.resize(N, config.d_model);
  s.dstream.resize(N, config.d_model);
  lm_head.backward(s.a, s.dlogits, s.da);
  s.dx = s.da;
  for (int l = config.n_layers - 1; l >= 0; --l) {
    layers[size_t(l)].backward(s.layers[size_t(l)], s.dx, s.dstream);
    if (config.residual) s.dx += s.dstream;
    else s.dx.swap(s.dstream);  // same size: swaps buffers, allocates nothing
  }
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

std::string layer_prefix(const ModelConfig& c, int layer) {
  return c.n_layers == 1 ? std::string("attn.") : "layers." + std::to_string(layer) + ".";
}

std::vector<ParamSpec> state_dict_specs(const ModelConfig& c) {
  const int64_t V = c.vocab_size, D = c.d_model;
  std::vector<ParamSpec> specs = {{"token_emb.embedding.weight", {V, D}}};
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = layer_prefix(c, l);
    specs.push_back({p + "qkv_proj.weight", {3 * D, D}});
    specs.push_back({p + "qkv_proj.bias", {3 * D}});
    specs.push_back({p + "out_proj.weight", {D, D}});
    specs.push_back({p + "out_proj.bias", {D}});
  }
  specs.push_back({"lm_head.weight", {V, D}});
  specs.push_back({"lm_head.bias", {V}});
  return specs;
}

std::vector<ParamRef> TinyAttentionLM::parameters() {
  // Value and gradient of each parameter, in the order of state_dict_specs.
  std::vector<std::pair<float*, float*>> data = {
      {token_emb.weight.data(), token_emb.dweight.data()}};
  for (MultiHeadSelfAttention& m : layers) {
    data.push_back({m.qkv_proj.weight.data(), m.qkv_proj.dweight.data()});
    data.push_back({m.qkv_proj.bias.data(), m.qkv_proj.dbias.data()});
    data.push_back({m.out_proj.weight.data(), m.out_proj.dweight.data()});
    data.push_back({m.out_proj.bias.data(), m.out_proj.dbias.data()});
  }
  data.push_back({lm_head.weight.data(), lm_head.dweight.data()});
  data.push_back({lm_head.bias.data(), lm_head.dbias.data()});
  const std::vector<ParamSpec> specs = state_dict_specs(config);
  std::vector<ParamRef> params;
  for (size_t i = 0; i < specs.size(); ++i)
    params.push_back({specs[i].name, specs[i].shape, data[i].first, data[i].second});
  return params;
}

}  // namespace attn
