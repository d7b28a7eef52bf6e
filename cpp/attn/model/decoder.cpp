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
  history_.reserve(size_t(window_) + kMaxRollback);
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
  history_.clear();
  total_ = 0;
  cached_ = use_cache_;
  for (const MultiHeadSelfAttention& layer : model_.layers)
    if (layer.mask != MaskMode::Causal) cached_ = false;
  for (size_t l = 0; l < caches_.size(); ++l) reset_cache(model_.layers[l], caches_[l]);
  cache_valid_ = cached_;
}

ConstMatMap Decoder::attention() const {
  return ConstMatMap(attention_.data(), attention_.rows(), context_length(),
                     Eigen::OuterStride<>(attention_.cols()));
}

std::vector<int32_t> Decoder::context() const {
  return std::vector<int32_t>(history_.end() - context_length(), history_.end());
}

void Decoder::append(int32_t token) {
  const int V = model_.config.vocab_size;
  require(token >= 0 && token < V, "token ", token, " is outside the vocabulary [0, ", V, ")");
  if (history_.size() == history_.capacity()) history_.erase(history_.begin());
  history_.push_back(token);
  ++total_;
}

const RowVec& Decoder::push(int32_t token) {
  const bool slides = context_length() == window_;
  append(token);
  if (!cached_) {
    run_reference();
  } else if (cache_valid_ && !slides) {
    run_rows(1);
  } else if (cache_valid_ && keeps_cache_when_sliding_) {
    for (size_t l = 0; l < caches_.size(); ++l) drop_first(model_.layers[l], caches_[l]);  // header
    run_rows(1);
  } else if (!slides || keeps_cache_when_sliding_) {
    rebuild();
  } else {  // the window slid and every kept token's keys change: re-encode it
    run_reference();
    cache_valid_ = false;
  }
  return logits_;
}

const Mat& Decoder::push_rows(const int32_t* tokens, int m) {
  require(m >= 1, "push_rows needs at least one token, got ", m);
  const int V = model_.config.vocab_size;
  for (int i = 0; i < m; ++i)
    require(tokens[i] >= 0 && tokens[i] < V, "token ", tokens[i],
            " is outside the vocabulary [0, ", V, ")");
  rows_logits_.resize(m, V);
  if (cached_ && context_length() + m <= window_) {  // room in the window: one step of m rows
    for (int i = 0; i < m; ++i) append(tokens[i]);
    if (cache_valid_) run_rows(m);
    else rebuild();
    rows_logits_ = logits_row_.bottomRows(m);
  } else if (context_length() == window_ && m > 1) {
    run_windows(tokens, m);
  } else {
    for (int i = 0; i < m; ++i) rows_logits_.row(i) = push(tokens[i]);
  }
  return rows_logits_;
}

const RowVec& Decoder::prefill(const int32_t* tokens, size_t n) {
  require(n >= 1, "prefill needs at least one token");
  if (total_ + int64_t(n) <= window_) {  // no slide: push_rows' step of n rows
    push_rows(tokens, int(n));
    return logits_;
  }
  const int V = model_.config.vocab_size;
  for (size_t i = 0; i < n; ++i)
    require(tokens[i] >= 0 && tokens[i] < V, "token ", tokens[i],
            " is outside the vocabulary [0, ", V, ")");
  // Tokens that would leave the kept history anyway are only counted.
  const size_t skipped = n > history_.capacity() ? n - history_.capacity() : 0;
  total_ += int64_t(skipped);
  for (size_t i = skipped; i < n; ++i) append(tokens[i]);
  // The window slid. Pushed one at a time, a model whose cache survives slides would end with
  // the cache of the window's tokens at their positions in it; any other, with the reference
  // over the window and no valid cache.
  if (cached_ && keeps_cache_when_sliding_) {
    rebuild();
  } else {
    run_reference();
    cache_valid_ = false;
  }
  return logits_;
}

void Decoder::rollback(int n) {
  require(n >= 0 && n <= total_, "rollback(", n, "): the decoder holds ", total_, " tokens");
  if (n == 0) return;
  const bool slid = total_ > window_;  // the caches no longer hold the first tokens
  const int64_t kept = total_ - n;
  require(history_.size() >= size_t(n) + size_t(std::min<int64_t>(kept, window_)),
          "rollback(", n, "): past the window the decoder keeps only the last ", kMaxRollback,
          " pushes");
  history_.resize(history_.size() - size_t(n));
  total_ = kept;
  if (!cache_valid_) return;
  const bool let_go = std::any_of(caches_.begin(), caches_.end(),
                                  [](const KVCache& c) { return c.first > 0; });
  if (slid || let_go) {  // the caches no longer hold every kept position: re-encode at the next push
    cache_valid_ = false;
  } else {
    for (size_t l = 0; l < caches_.size(); ++l)
      truncate_cache(caches_[l], int(kept));
  }
}

void Decoder::run_reference() {
  const int n = context_length(), H = model_.config.n_heads;
  model_.forward(context_data(), 1, n, state_);
  ++passes_;
  logits_ = state_.logits.row(n - 1);
  // Head h's weights are rows [h n, h n + n) of its layer's (H n, n); the last one is the query's.
  for (int l = 0; l < model_.config.n_layers; ++l)
    for (int h = 0; h < H; ++h)
      attention_.block(Eigen::Index(l) * H + h, 0, 1, n) =
          state_.layers[size_t(l)].weights().row(Eigen::Index(h) * n + n - 1);
}

void Decoder::rebuild() {
  for (size_t l = 0; l < caches_.size(); ++l) reset_cache(model_.layers[l], caches_[l]);
  cache_valid_ = true;
  run_rows(context_length());
}

// Row i of tokens is the last of its own window: the W tokens that end with it. The m windows
// run as one batch (B = m, T = W), each counting positions from its own start, as run_reference
// does for one.
void Decoder::run_windows(const int32_t* tokens, int m) {
  const int W = window_, H = model_.config.n_heads;
  windows_.resize(size_t(m) * size_t(W));
  std::vector<int32_t> all(history_.end() - W, history_.end());  // the window before the rows
  all.insert(all.end(), tokens, tokens + m);
  for (int i = 0; i < m; ++i)
    std::copy(all.begin() + i + 1, all.begin() + i + 1 + W, windows_.begin() + size_t(i) * W);
  for (int i = 0; i < m; ++i) append(tokens[i]);
  model_.forward(windows_.data(), m, W, state_);
  ++passes_;
  cache_valid_ = false;
  for (int i = 0; i < m; ++i) rows_logits_.row(i) = state_.logits.row(Eigen::Index(i) * W + W - 1);
  logits_ = rows_logits_.row(m - 1);
  const Eigen::Index last = (Eigen::Index(m) - 1) * H;  // the last window's heads
  for (int l = 0; l < model_.config.n_layers; ++l)
    for (int h = 0; h < H; ++h)
      attention_.block(Eigen::Index(l) * H + h, 0, 1, W) =
          state_.layers[size_t(l)].weights().row((last + h) * W + W - 1);
}

// The last m positions p0 .. n - 1 of the context through the model as forward() runs them, as
// m rows: embedding plus the positions' table rows, then every layer (TinyAttentionLM::
// layer_forward) with the cached attention (forward_rows), the final norm and lm_head.
void Decoder::run_rows(int m) {
  const ModelConfig& c = model_.config;
  const int n = context_length(), p0 = n - m, H = c.n_heads;
  a_.resize(m, c.d_model);
  y_.resize(m, c.d_model);
  logits_row_.resize(m, c.vocab_size);
  model_.token_emb.forward(context_data() + p0, m, a_);
  if (c.positions == PositionKind::Sinusoidal) a_ += model_.pos_emb.table.middleRows(p0, m);
  else if (model_.learned_pos) a_ += model_.learned_pos->weight.middleRows(p0, m);
  for (int l = 0; l < c.n_layers; ++l) {
    const MultiHeadSelfAttention& layer = model_.layers[size_t(l)];
    KVCache& cache = caches_[size_t(l)];
    model_.layer_forward(l, a_, y_, blocks_[size_t(l)], [&](const Mat& in, Mat& out) {
      if (m == 1) {
        forward_step(layer, in, cache, attention_.block(Eigen::Index(l) * H, 0, H, n), out);
      } else {
        rows_weights_.resize(Eigen::Index(m) * H, n);
        forward_rows(layer, in, cache, rows_weights_, out);
        attention_.block(Eigen::Index(l) * H, 0, H, n) = rows_weights_.bottomRows(H);
      }
    });
  }
  if (model_.final_norm) model_.final_norm->forward(a_, final_norm_, a_);
  model_.head_forward(a_, logits_row_);
  ++passes_;
  logits_ = logits_row_.row(m - 1);
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
