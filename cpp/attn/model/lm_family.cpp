// TinyAttentionLM behind the model seam (family.h): the family `lm`'s side of the interface,
// and the heads' ablation and freezing that the Trainer asks of it.
#include <string>

#include "attn/model/model.h"

namespace attn {

TinyAttentionLM& lm_of(Model& model, const char* what) {
  auto* lm = dynamic_cast<TinyAttentionLM*>(&model);
  if (!lm)
    throw Error(ErrorKind::Config, "family",
                str_cat(what, " needs a model of family 'lm', not '", model.family(), "'"));
  return *lm;
}

std::unique_ptr<ModelState> TinyAttentionLM::new_state() const {
  return std::make_unique<State>();
}

TinyAttentionLM::State& TinyAttentionLM::own_state(ModelState& s) {
  auto* own = dynamic_cast<State*>(&s);
  require(own != nullptr, "the lm family runs on its own State (TinyAttentionLM::new_state)");
  return *own;
}

const TinyAttentionLM::State& TinyAttentionLM::own_state(const ModelState& s) {
  return own_state(const_cast<ModelState&>(s));
}

const MultiHeadSelfAttention& TinyAttentionLM::attention_layer(int l) const {
  require(l >= 0 && l < config.n_layers, "layer (", l, ") must be in [0, ", config.n_layers - 1,
          "]");
  return layers[size_t(l)];
}

const MultiHeadSelfAttention::State& TinyAttentionLM::attention_state(const ModelState& s,
                                                                      int l) const {
  const State& st = own_state(s);
  require(l >= 0 && size_t(l) < st.layers.size(), "layer (", l, ") has no cache in the State (",
          st.layers.size(), " layers); run forward() first");
  return st.layers[size_t(l)];
}

float TinyAttentionLM::position_loss_backward(const int32_t* ids, int T, int query, int target,
                                              ModelState& s) {
  return position_loss_backward(ids, T, query, target, own_state(s));
}

void TinyAttentionLM::check_ids(const Batch& batch) const {
  require(batch.kind == BatchKind::Ids, "family 'lm' takes ", batch_kind_taken(BatchKind::Ids),
          ", not ", batch_kind_produced(batch.kind));
  require(batch.inputs.rows() == batch.targets.rows() &&
              batch.inputs.cols() == batch.targets.cols(),
          "the batch's inputs are (", batch.inputs.rows(), ",", batch.inputs.cols(),
          ") but its targets (", batch.targets.rows(), ",", batch.targets.cols(), ")");
}

// batch.inputs (B,T) -> s.logits (B*T,V); the lm adds no auxiliary term.
void TinyAttentionLM::forward(const Batch& batch, bool training, Rng& rng, ModelState& s) {
  check_ids(batch);
  State& st = own_state(s);
  st.aux.clear();
  forward(batch.inputs.data(), int(batch.inputs.rows()), int(batch.inputs.cols()), training, rng,
          st);
}

void TinyAttentionLM::forward(const Batch& batch, ModelState& s) {
  check_ids(batch);
  State& st = own_state(s);
  st.aux.clear();
  forward(batch.inputs.data(), int(batch.inputs.rows()), int(batch.inputs.cols()), st);
}

void TinyAttentionLM::backward(const Batch& batch, ModelState& s) {
  check_ids(batch);
  backward(batch.inputs.data(), own_state(s));
}

void TinyAttentionLM::set_ablation(const Ablation& a) {
  const int H = config.n_heads, L = config.n_layers;
  const size_t G = size_t(L) * H;
  require(a.heads_off.empty() || a.heads_off.size() == G, "heads_off has ", a.heads_off.size(),
          " entries, expected ", G);
  require(a.heads_frozen.empty() || a.heads_frozen.size() == G, "heads_frozen has ",
          a.heads_frozen.size(), " entries, expected ", G);
  heads_frozen_ = a.heads_frozen;
  heads_frozen_.resize(G, 0);
  frozen_.resize(size_t(L));
  for (int l = 0; l < L; ++l) {
    MultiHeadSelfAttention& m = layers[size_t(l)];
    for (int h = 0; h < H; ++h) {
      const size_t g = size_t(l) * H + h;
      m.head_off[size_t(h)] = g < a.heads_off.size() && a.heads_off[g] ? 1 : 0;
    }
    m.scale_scores = a.scale_scores;
    m.mask = a.mask;
    if (!layer_frozen(l)) continue;
    FrozenCopy& f = frozen_[size_t(l)];  // sized here so that the copies allocate nothing
    f.qkv_w.resize(m.qkv_proj.weight.rows(), m.qkv_proj.weight.cols());
    f.qkv_b.resize(m.qkv_proj.bias.size());
    f.out_w.resize(m.out_proj.weight.rows(), m.out_proj.weight.cols());
    f.lambda.resize(m.lambda.size());
  }
}

bool TinyAttentionLM::layer_frozen(int l) const {
  const size_t H = size_t(config.n_heads);
  if (heads_frozen_.size() < (size_t(l) + 1) * H) return false;
  for (size_t h = 0; h < H; ++h)
    if (heads_frozen_[size_t(l) * H + h]) return true;
  return false;
}

void TinyAttentionLM::hold_frozen() {
  for (int l = 0; l < config.n_layers; ++l) {
    if (!layer_frozen(l)) continue;
    const MultiHeadSelfAttention& m = layers[size_t(l)];
    FrozenCopy& f = frozen_[size_t(l)];
    f.qkv_w = m.qkv_proj.weight;  // same sizes (set_ablation): no allocation
    f.qkv_b = m.qkv_proj.bias;
    f.out_w = m.out_proj.weight;
    f.lambda = m.lambda;
  }
}

// Puts back the frozen heads' slices that an optimizer step just moved.
void TinyAttentionLM::restore_frozen() {
  for (int l = 0; l < config.n_layers; ++l) {
    if (!layer_frozen(l)) continue;
    MultiHeadSelfAttention& m = layers[size_t(l)];
    const FrozenCopy& f = frozen_[size_t(l)];
    const int Dh = m.d_head;
    for (int h = 0; h < m.n_heads; ++h) {
      if (!heads_frozen_[size_t(l) * m.n_heads + h]) continue;
      // With grouped K/V heads, the k and v a frozen head reads stay put for its whole group.
      // A differential head keeps its second query and key, and its lambda, too.
      const int rows = m.options.differential ? 5 : 3;
      const Eigen::Index starts[5] = {m.q_offset(h), m.k_offset(h), m.v_offset(h),
                                      m.q2_offset(h), m.k2_offset(h)};
      for (int i = 0; i < rows; ++i) {
        m.qkv_proj.weight.middleRows(starts[i], Dh) = f.qkv_w.middleRows(starts[i], Dh);
        if (m.qkv_proj.has_bias())
          m.qkv_proj.bias.segment(starts[i], Dh) = f.qkv_b.segment(starts[i], Dh);
      }
      m.out_proj.weight.middleCols(h * Dh, Dh) = f.out_w.middleCols(h * Dh, Dh);
      if (m.options.differential) m.lambda[h] = f.lambda[h];
    }
  }
}

}  // namespace attn
