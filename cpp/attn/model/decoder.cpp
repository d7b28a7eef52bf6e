#include "attn/model/decoder.h"

namespace attn {

namespace {
bool relative_positions(PositionKind p) {
  return p == PositionKind::Rope || p == PositionKind::Alibi || p == PositionKind::None;
}
}  // namespace

namespace {
int checked_window(const ModelConfig& c, int window) {
  require_config(c.objective == Objective::Causal, "objective",
                 "a masked language model (objective mlm) cannot generate left to right: it was "
                 "trained to see both sides of each token; fill blanks with it instead");
  require(window >= 0 && window <= c.max_context_length, "the window (", window,
          ") must be in [1, ", c.max_context_length, "], or 0 for the model's max context length");
  return window > 0 ? window : c.max_context_length;
}

// Whether every layer's cache stays exact as the context slides past `window` tokens (header).
bool keeps_cache(const ModelConfig& c, int window) {
  if (!relative_positions(c.positions)) return false;
  if (c.n_layers == 1) return true;
  const MaskPattern p = c.mask_pattern();
  return p.window > 0 && p.stride == 0 && int64_t(c.n_layers) * (p.window - 1) <= window - 1;
}
}  // namespace

Decoder::Decoder(TinyAttentionLM& model, bool use_cache, int window)
    : model_(model),
      use_cache_(use_cache),
      window_(checked_window(model.config, window)),
      keeps_cache_when_sliding_(keeps_cache(model.config, window_)) {
  const ModelConfig& c = model.config;
  context_.reserve(size_t(window_) + 1);
  logits_.resize(c.vocab_size);
  attention_.resize(model.n_heads_total(), c.max_context_length);
  caches_.resize(size_t(c.n_layers));
  blocks_.resize(size_t(c.n_layers));
  a_.resize(1, c.d_model);
  y_.resize(1, c.d_model);
  logits_row_.resize(1, c.vocab_size);
  reset();
}

void Decoder::reset() {
  context_.clear();
  cached_ = use_cache_;
  for (const MultiHeadSelfAttention& layer : model_.layers)
    if (layer.mask != MaskMode::Causal) cached_ = false;
  for (size_t l = 0; l < caches_.size(); ++l) model_.layers[l].reset_cache(caches_[l]);
}

ConstMatMap Decoder::attention() const {
  return ConstMatMap(attention_.data(), attention_.rows(), context_length(),
                     Eigen::OuterStride<>(attention_.cols()));
}

const RowVec& Decoder::push(int32_t token) {
  const int V = model_.config.vocab_size;
  require(token >= 0 && token < V, "token ", token, " is outside the vocabulary [0, ", V, ")");
  const bool slides = context_length() == window_;
  if (slides) context_.erase(context_.begin());
  context_.push_back(token);
  if (!cached_ || (slides && !keeps_cache_when_sliding_)) {
    run_reference();
  } else {
    if (slides)  // see the header
      for (size_t l = 0; l < caches_.size(); ++l) model_.layers[l].drop_first(caches_[l]);
    run_step();
  }
  return logits_;
}

void Decoder::run_reference() {
  const int n = context_length(), H = model_.config.n_heads;
  model_.forward(context_.data(), 1, n, state_);
  logits_ = state_.logits.row(n - 1);
  // Head h's weights are rows [h n, h n + n) of its layer's (H n, n); the last one is the query's.
  for (int l = 0; l < model_.config.n_layers; ++l)
    for (int h = 0; h < H; ++h)
      attention_.block(Eigen::Index(l) * H + h, 0, 1, n) =
          state_.layers[size_t(l)].weights().row(Eigen::Index(h) * n + n - 1);
}

// The new position p = n - 1 through the model as forward() runs it, on one row: embedding plus
// position p's table row, then every layer (TinyAttentionLM::layer_forward) with the cached
// attention, the final norm and lm_head.
void Decoder::run_step() {
  const ModelConfig& c = model_.config;
  const int n = context_length(), p = n - 1, H = c.n_heads;
  model_.token_emb.forward(&context_.back(), 1, a_);
  if (c.positions == PositionKind::Sinusoidal) a_ += model_.pos_emb.table.row(p);
  else if (model_.learned_pos) a_ += model_.learned_pos->weight.row(p);
  for (int l = 0; l < c.n_layers; ++l) {
    const MultiHeadSelfAttention& layer = model_.layers[size_t(l)];
    MultiHeadSelfAttention::KVCache& cache = caches_[size_t(l)];
    model_.layer_forward(l, a_, y_, blocks_[size_t(l)], [&](const Mat& in, Mat& out) {
      layer.forward_step(in, cache, attention_.block(Eigen::Index(l) * H, 0, H, n), out);
    });
  }
  if (model_.final_norm) model_.final_norm->forward(a_, final_norm_, a_);
  model_.lm_head.forward(a_, logits_row_);
  logits_ = logits_row_.row(0);
}

std::vector<int32_t> generate(TinyAttentionLM& model, const std::vector<int32_t>& prompt,
                              int n_tokens, const SamplingOptions& options, uint64_t seed,
                              int window) {
  const int V = model.config.vocab_size;
  require(!prompt.empty(), "the prompt is empty: generation needs at least one token");
  require(prompt.size() <= size_t(kMaxPromptTokens), "the prompt has ", prompt.size(),
          " tokens, more than the ", kMaxPromptTokens, " allowed");
  require(n_tokens >= 0 && n_tokens <= kMaxGenerateTokens, "the number of tokens (", n_tokens,
          ") must be in [0, ", kMaxGenerateTokens, "]");
  options.validate(V);
  Decoder decoder(model, true, window);
  Rng rng(seed);
  std::vector<float> probs(static_cast<size_t>(V));
  std::vector<int32_t> out;
  out.reserve(size_t(n_tokens));
  const RowVec* logits = nullptr;
  for (int32_t token : prompt) logits = &decoder.push(token);
  for (int i = 0; i < n_tokens; ++i) {
    next_token_distribution(logits->data(), V, options, probs.data());
    out.push_back(sample_token(probs.data(), V, rng));
    if (i + 1 < n_tokens) logits = &decoder.push(out.back());
  }
  return out;
}

}  // namespace attn
