#include "attn/model/model.h"

#include <stdexcept>

#include "attn/base/error.h"
#include "attn/nn/loss.h"

namespace attn {

MaskPattern ModelConfig::mask_pattern() const {
  MaskPattern p;
  p.causal = objective == Objective::Causal;
  if (attention != AttentionKind::Full) p.window = window;
  if (attention == AttentionKind::Strided) p.stride = stride;
  return p;
}

const char* objective_name(Objective o) { return kObjectiveNames[static_cast<int>(o)]; }

Objective parse_objective(const std::string& name) {
  return static_cast<Objective>(parse_enum(kObjectives, name));
}

const char* attention_kind_name(AttentionKind kind) {
  return kAttentionKindNames[static_cast<int>(kind)];
}

AttentionKind parse_attention_kind(const std::string& name) {
  return static_cast<AttentionKind>(parse_enum(kAttentionKinds, name));
}

const char* position_kind_name(PositionKind kind) {
  return kPositionKindNames[static_cast<int>(kind)];
}

PositionKind parse_position_kind(const std::string& name) {
  return static_cast<PositionKind>(parse_enum(kPositionKinds, name));
}

const char* norm_position_name(NormPosition p) { return kNormPositionNames[static_cast<int>(p)]; }

NormPosition parse_norm_position(const std::string& name) {
  return static_cast<NormPosition>(parse_enum(kNormPositions, name));
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
// L layers from one generator, in order: layer 0's qkv_proj, out_proj and FFN (into ffns), then
// layer 1's, ...
std::vector<MultiHeadSelfAttention> make_layers(const ModelConfig& c, Rng& rng,
                                                std::vector<FeedForward>& ffns) {
  AttentionOptions options;
  options.kv_heads = c.kv_heads;
  options.rope = c.positions == PositionKind::Rope;
  options.alibi = c.positions == PositionKind::Alibi;
  options.pattern = c.mask_pattern();
  options.differential = c.differential;
  options.bias = c.bias;
  std::vector<MultiHeadSelfAttention> layers;
  layers.reserve(size_t(c.n_layers));
  if (c.ffn != FfnKind::None) ffns.reserve(size_t(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) {
    layers.emplace_back(c.d_model, c.n_heads, c.max_context_length, c.attn_dropout, c.out_dropout,
                        rng, options);
    if (c.ffn != FfnKind::None) ffns.emplace_back(c.ffn, c.d_model, c.ffn_mult, rng, c.bias);
  }
  return layers;
}

std::optional<TokenEmbedding> make_learned_positions(const ModelConfig& c, Rng& rng) {
  if (c.positions != PositionKind::Learned) return std::nullopt;
  return TokenEmbedding(c.max_context_length, c.d_model, rng, c.pos_init_std);
}

// norm1 of every layer (ffn_side false), or norm2 of every layer with an FFN (true).
std::vector<Norm> make_norms(const ModelConfig& c, bool ffn_side) {
  std::vector<Norm> norms;
  if (c.norm == NormKind::None || (ffn_side && c.ffn == FfnKind::None)) return norms;
  for (int l = 0; l < c.n_layers; ++l) norms.emplace_back(c.norm, c.d_model);
  return norms;
}

std::optional<Norm> make_final_norm(const ModelConfig& c) {
  if (c.norm == NormKind::None || c.norm_position != NormPosition::Pre) return std::nullopt;
  return Norm(c.norm, c.d_model);
}

// lm_head, drawn last; tied, it keeps no matrix of its own (head_weight() is token_emb's) and
// draws nothing.
Linear make_lm_head(const ModelConfig& c, Rng& rng) {
  if (!c.tie_embeddings) return Linear(c.d_model, c.vocab_size, rng, c.bias);
  Rng unused(0);
  Linear head(1, 1, unused, false);
  head.in_features = c.d_model, head.out_features = c.vocab_size;
  head.weight.resize(0, 0);
  head.dweight.resize(0, 0);
  return head;
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
      steps(block_steps(c)),
      token_emb(c.vocab_size, c.d_model, rng, c.emb_init_std),
      pos_emb(c.max_context_length, c.d_model),
      learned_pos(make_learned_positions(c, rng)),
      layers(make_layers(c, rng, ffns)),
      attn(layers.front()),
      attn_norms(make_norms(c, false)),
      ffn_norms(make_norms(c, true)),
      final_norm(make_final_norm(c)),
      lm_head(make_lm_head(c, rng)) {}

void TinyAttentionLM::head_forward(ConstMatRef a, MatRef logits) const {
  if (!config.tie_embeddings) return lm_head.forward(a, logits);
  matmul_nt(a, token_emb.weight, logits);
}

void TinyAttentionLM::forward(const int32_t* ids, int B, int T, bool training, Rng& rng,
                              State& s, ForwardHooks* hooks) {
  run(ids, B, T, training ? &rng : nullptr, s, hooks);
}

void TinyAttentionLM::forward(const int32_t* ids, int B, int T, State& s, ForwardHooks* hooks) {
  run(ids, B, T, nullptr, s, hooks);
}

// ids (B,T) -> x = emb + pe (N,D) -> per layer l: a = layer_l(a) (layer_forward), starting from
// a = x -> final norm -> logits = a W^T + b (N,V). Caches x, a, the blocks' caches, and each
// layer's own cache (its input among them) in s.layers[l].
void TinyAttentionLM::run(const int32_t* ids, int B, int T, Rng* dropout, State& s,
                          ForwardHooks* hooks) {
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
  if (config.positions == PositionKind::Sinusoidal) {
    const ConstMatMap pe = pos_emb.forward(T);
    for (int b = 0; b < B; ++b) s.x.middleRows(Eigen::Index(b) * T, T) += pe;
  } else if (learned_pos) {
    for (int b = 0; b < B; ++b)
      s.x.middleRows(Eigen::Index(b) * T, T) += learned_pos->weight.topRows(T);
  }
  // x_0 = x; x_{l+1} = layer_l(x_l) (layer_forward: attention, and the block's norms and FFN).
  // The hooks (inspect.h) see, and may replace, the stream before each layer and at the end, each
  // attention's output and each FFN's.
  s.blocks.resize(size_t(L));
  s.a = s.x;
  for (int l = 0; l < L; ++l) {
    MultiHeadSelfAttention::State& st = s.layers[size_t(l)];
    if (s.inspect) st.inspect = true;
    st.tiled = s.tiled;
    if (hooks) hooks->stream(l, s.a);
    layer_forward(l, s.a, s.y, s.blocks[size_t(l)], [&](const Mat& in, Mat& out) {
      if (dropout) layers[size_t(l)].forward(in, B, T, /*training=*/true, *dropout, st, out);
      else layers[size_t(l)].forward(in, B, T, st, out);
      if (hooks) hooks->attention(l, st, out);
    }, hooks);
  }
  if (hooks) hooks->stream(L, s.a);
  if (final_norm) final_norm->forward(s.a, s.final_norm, s.a);
  head_forward(s.a, s.logits);
}

// Backward in reverse: lm_head, the final norm, then layer_backward from the last layer down;
// pe is constant, so the stream's gradient at layer 0 flows straight into the token embedding
// (and the learned position table). s.dx carries dL/d(the stream) down the layers.
void TinyAttentionLM::backward(const int32_t* ids, State& s) {
  const Eigen::Index N = Eigen::Index(s.B) * s.T;
  require(s.dlogits.rows() == N && s.dlogits.cols() == config.vocab_size,
          "dlogits must be (", N, ",", config.vocab_size, ")");
  require(s.layers.size() == size_t(config.n_layers), "the State holds ", s.layers.size(),
          " layers but the model has ", config.n_layers, "; run forward() first");
  require(s.blocks.size() == size_t(config.n_layers), "the State holds no block caches; run "
          "forward() first");
  s.da.resize(N, config.d_model);
  s.dx.resize(N, config.d_model);
  s.dstream.resize(N, config.d_model);
  if (config.tie_embeddings) {
    // logits = a E^T  =>  dE (head's share) = dlogits^T a, da = dlogits E.
    s.dhead.resize(config.vocab_size, config.d_model);
    matmul_tn(s.dlogits, s.a, s.dhead);
    matmul_nn(s.dlogits, token_emb.weight, s.da);
  } else {
    lm_head.backward(s.a, s.dlogits, s.da);
  }
  s.dx = s.da;
  if (final_norm) final_norm->backward(s.final_norm, s.dx, s.dx);
  for (int l = config.n_layers - 1; l >= 0; --l)
    layer_backward(l, s.dx, s.dstream, s.blocks[size_t(l)], s.layers[size_t(l)]);
  if (learned_pos) {
    // Every sequence adds the same rows [0, T), so their gradients sum.
    learned_pos->dweight.setZero();
    for (int b = 0; b < s.B; ++b)
      learned_pos->dweight.topRows(s.T) += s.dx.middleRows(Eigen::Index(b) * s.T, s.T);
  }
  token_emb.backward(ids, s.dx);
  // One parameter used twice: its gradient is the sum of both uses.
  if (config.tie_embeddings) token_emb.dweight += s.dhead;
}

BlockSteps block_steps(const ModelConfig& c) {
  using O = BlockOp;
  using S = BlockSlot;
  BlockSteps b;
  const auto add = [&b](O op, S in, S out) { b.steps[b.size++] = {op, in, out}; };
  if (!c.residual) {  // a = attn(a): the layer copies its input first
    add(O::Attention, S::Stream, S::Stream);
    return b;
  }
  const bool norm = c.norm != NormKind::None, ffn = c.ffn != FfnKind::None;
  if (c.norm_position == NormPosition::Pre) {
    // a = a + attn(norm1(a)); a = a + ffn(norm2(a))
    if (norm) add(O::Norm1, S::Stream, S::Input);
    add(O::Attention, norm ? S::Input : S::Stream, S::Output);
    add(O::Add, S::Output, S::Stream);
    if (ffn) {
      if (norm) add(O::Norm2, S::Stream, S::Input);
      add(O::Ffn, norm ? S::Input : S::Stream, S::Output);
      add(O::Add, S::Output, S::Stream);
    }
  } else {
    // a = norm1(a + attn(a)); a = norm2(a + ffn(a))
    add(O::Attention, S::Stream, S::Output);
    add(O::Add, S::Output, S::Stream);
    if (norm) add(O::Norm1, S::Stream, S::Stream);
    if (ffn) {
      add(O::Ffn, S::Stream, S::Output);
      add(O::Add, S::Output, S::Stream);
      if (norm) add(O::Norm2, S::Stream, S::Stream);
    }
  }
  return b;
}

// The steps in reverse. An Add (a = a + y) hands da on as dy and leaves it; a sublayer writes
// dL/d(its input) into scratch, added to da when it read the stream, or first taken through the
// pre-norm that made its input; a step that rewrote the stream in place (a = attn(a),
// a = norm(a)) turns da into dL/d(the stream before it).
void TinyAttentionLM::layer_backward(int l, Mat& da, Mat& scratch, State::Block& bk,
                                     MultiHeadSelfAttention::State& st) {
  const size_t i = size_t(l);
  for (int j = steps.size - 1; j >= 0; --j) {
    const BlockStep& step = steps.steps[j];
    switch (step.op) {
      case BlockOp::Add:
        break;
      case BlockOp::Attention:
      case BlockOp::Ffn:
        if (step.op == BlockOp::Attention) layers[i].backward(st, da, scratch);
        else ffns[i].backward(bk.ffn, da, scratch);
        if (step.out == BlockSlot::Stream) da.swap(scratch);  // same size: allocates nothing
        else if (step.in == BlockSlot::Stream) da += scratch;
        break;
      case BlockOp::Norm1:
      case BlockOp::Norm2: {
        Norm& n = step.op == BlockOp::Norm1 ? attn_norms[i] : ffn_norms[i];
        const Norm::State& ns = step.op == BlockOp::Norm1 ? bk.norm1 : bk.norm2;
        if (step.out == BlockSlot::Stream) {  // a = norm(a)
          n.backward(ns, da, da);
        } else {  // input = norm(a): scratch holds dL/d(input)
          n.backward(ns, scratch, scratch);
          da += scratch;
        }
        break;
      }
    }
  }
}

float TinyAttentionLM::position_loss_backward(const int32_t* ids, int T, int query, int target,
                                              State& s) {
  require(query >= 0 && query < T, "query position (", query, ") must be in [0, ", T - 1, "]");
  forward(ids, 1, T, s);
  // Every position but query is left out of the loss, so dlogits is zero outside row query.
  std::vector<int32_t> targets(size_t(T), kIgnoreIndex);
  targets[size_t(query)] = target;
  s.dlogits.resize(s.logits.rows(), s.logits.cols());
  const float loss = cross_entropy(s.logits, targets.data(), s.dlogits);
  backward(ids, s);
  return loss;
}

std::string layer_prefix(const ModelConfig& c, int layer) {
  return c.n_layers == 1 && c.legacy() ? std::string("attn.")
                                       : "layers." + std::to_string(layer) + ".";
}

ModuleReport TinyAttentionLM::report(const ModelConfig& c, int B, int T) {
  const int V = c.vocab_size, D = c.d_model;
  const int64_t N = int64_t(B) * T;
  const bool norm = c.norm != NormKind::None, ffn = c.ffn != FfnKind::None;
  AttentionOptions options;
  options.kv_heads = c.kv_heads;
  options.pattern = c.mask_pattern();
  options.differential = c.differential;
  options.bias = c.bias;
  ModuleReport r;
  // Tied, the one matrix goes by the head's name (as safetensors.torch.save_model keeps it).
  r.add(TokenEmbedding::report(V, D), c.tie_embeddings ? "lm_head." : "token_emb.embedding.");
  if (c.positions == PositionKind::Learned)
    r.add(TokenEmbedding::report(c.max_context_length, D), "pos_emb.");
  for (int l = 0; l < c.n_layers; ++l) {
    // The modules in PyTorch's order (its state dict's), whatever the steps' order.
    ModuleReport layer;
    if (norm) layer.add(Norm::report(c.norm, D, N), "attn_norm.");
    layer.add(MultiHeadSelfAttention::report(D, c.n_heads, options, B, T), "");
    if (ffn) {
      if (norm) layer.add(Norm::report(c.norm, D, N), "ffn_norm.");
      layer.add(FeedForward::report(c.ffn, D, c.ffn_mult, N, c.bias), "ffn.");
    }
    // The pre-norm inputs of attention and FFN (State::Block).
    for (const BlockStep& s : block_steps(c))
      if (s.out == BlockSlot::Input) layer.activations += N * D;
    r.add(layer, layer_prefix(c, l), /*label_products=*/false);
  }
  if (norm && c.norm_position == NormPosition::Pre) r.add(Norm::report(c.norm, D, N), "final_norm.");
  // Tied, the head's products stay and its tensors are the embedding's.
  ModuleReport head = Linear::report(D, V, c.bias && !c.tie_embeddings, N);
  if (c.tie_embeddings) head.tensors.clear();
  r.add(head, "lm_head.");
  // State: x, a, y (residual) (N,D) and the logits (N,V).
  r.activations += N * D * (c.residual ? 3 : 2) + N * V;
  return r;
}

std::vector<ParamSpec> state_dict_specs(const ModelConfig& c) {
  return TinyAttentionLM::report(c, 1, 1).tensors;
}

int64_t TinyAttentionLM::param_count() const { return report(config, 1, 1).param_count(); }

std::vector<ParamRef> TinyAttentionLM::parameters() {
  // Each module's parameters, named by the module under its prefix ...
  std::vector<ParamRef> refs;
  token_emb.append_params(config.tie_embeddings ? "lm_head." : "token_emb.embedding.", refs);
  if (learned_pos) learned_pos->append_params("pos_emb.", refs);
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string p = layer_prefix(config, int(l));
    if (!attn_norms.empty()) attn_norms[l].append_params(p + "attn_norm.", refs);
    layers[l].append_params(p, refs);
    if (!ffn_norms.empty()) ffn_norms[l].append_params(p + "ffn_norm.", refs);
    if (!ffns.empty()) ffns[l].append_params(p + "ffn.", refs);
  }
  if (final_norm) final_norm->append_params("final_norm.", refs);
  if (!config.tie_embeddings) lm_head.append_params("lm_head.", refs);
  // ... in the state dict's order (a layer's diff_lambda before its submodules'). The reports
  // and append_params agree module by module (tests/cpp/test_report.cpp).
  std::vector<ParamRef> ordered;
  for (const ParamSpec& spec : state_dict_specs(config))
    for (const ParamRef& ref : refs)
      if (ref.name == spec.name) ordered.push_back(ref);
  require_state(ordered.size() == refs.size(), "the modules' reports do not name their parameters");
  return ordered;
}

}  // namespace attn
