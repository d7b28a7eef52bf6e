// Generation: incremental decoding of a TinyAttentionLM with a KV cache per layer, and
// the one sampling loop the CLI and the page share.
//
// The context window W is by default the model's max context length C (the Trainer's
// max_seq_len, which is seq_len unless set); a model whose table is longer than the length T it
// was trained at can be given W = T. Up to W tokens the decoder keeps every layer's keys and
// values, so a new token runs each layer on its own row only (one projection and one row of
// attention over the cache) instead of the whole context. Past W the context slides over the
// last W tokens, and the reference runs the model's forward over them: every position is counted
// from the window's start, so sliding moves every kept token one position down. What the cache
// can keep then depends on how the model knows positions:
//   sinusoidal, learned: the table is added to each token's embedding, so every kept token's
//     input, and with it its keys and values in every layer, changes: each step re-encodes the
//     window with one batched forward (as fast as the uncached decoder, and the same numbers).
//   rope, alibi, none: a score depends on the distance i - j only (RoPE turns q and k by their
//     positions, ALiBi adds -m (i - j), none adds nothing), so in the first layer the kept
//     tokens' keys and values stay valid: the oldest row is dropped, RoPE keys are turned again
//     to their new positions (from the unrotated keys the cache keeps), and only the new token
//     is projected. In every later layer the kept tokens' inputs change (each of them attended
//     to the dropped token one layer below), so a model of 2 or more layers re-encodes the
//     window each step, and only a 1-layer model keeps its cache past W, but for a sliding
//     window of w keys (attention window, no strided keys) over L layers with L (w - 1) <= W - 1:
//     there the new token reads, through all L layers, only tokens at most L (w - 1) back, whose
//     cached keys and values never saw the dropped token, so every layer drops its oldest row.
// Either way the logits are the reference's (within float rounding, 1e-5 in the tests).
//
// Attention patterns (MaskPattern): each cached step applies the causal pattern at the
// positions as they stand. A sliding window of w < C keys (no strided keys) keeps only w rows
// per layer (cache_rows, nn/kv_cache.h): older positions are out of every later query's
// window, so the cache lets them go; the strided pattern keeps C rows (its strided keys reach
// back to the start). A masked language model (objective mlm) sees both sides of every token and
// cannot generate left to right: constructing a decoder for one is an Error of kind Config on
// key objective.
//
// The decoder runs in eval mode (no dropout). Its cache holds keys and values made with the
// model's weights and its layers' head_off, scale_scores and mask as they were when each token
// was pushed: change any of them (a training step, say) and call reset() before pushing again. A
// layer whose mask is not causal (a teaching fault that lets earlier positions see later ones)
// cannot be cached: the decoder then runs the reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/model/model.h"
#include "attn/model/sampling.h"
#include "attn/nn/kv_cache.h"
#include "attn/nn/multihead.h"

namespace attn {

// The most pushes rollback() can undo once the context has slid past the window (before any
// slide it can undo every push): the decoder keeps the last W + kMaxRollback tokens.
constexpr int kMaxRollback = 64;

class Decoder {
 public:
  // use_cache false: every push() runs the model's full forward over the context (the
  // reference). window: the most tokens attended over, in [1, C]; 0 means C (an Error of kind
  // Input otherwise). The model must outlive the decoder.
  explicit Decoder(TinyAttentionLM& model, bool use_cache = true, int window = 0);
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Empties the context (and the caches).
  void reset();
  // Appends token (an Error of kind Input if outside [0, V)); returns the logits (V) of the next
  // token, valid until the next push(), push_rows(), rollback() or reset().
  const RowVec& push(int32_t token);
  // Appends m >= 1 tokens and returns (m,V): row i the logits after tokens[0..i], as m push()es
  // would give them (within float rounding: the rows share their products). One evaluation of
  // the model: with the cache and room in the window, one step of m rows through every layer
  // (forward_rows, nn/kv_cache.h); with a full window, one batched forward of the m
  // windows; otherwise (a partly full window, a mask that is not causal) m pushes. Valid until
  // the next push, rollback or reset.
  const Mat& push_rows(const int32_t* tokens, int m);
  // Appends n >= 1 tokens when only the state after them matters (a prompt): the same state and
  // returned logits (those after the last token) as n push()es, in one evaluation: one step of
  // the new rows through the caches while the window has room; past it, the window alone (the
  // last W tokens, which are all the model reads) in one step, or one reference forward where
  // every push would re-encode. Valid until the next push, rollback or reset.
  const RowVec& prefill(const int32_t* tokens, size_t n);
  // Undoes the last n pushed tokens: afterwards the decoder is as if they had never been pushed.
  // Before any slide the caches are cut to the kept length; after one, the caches no longer hold
  // the rows that slid out, and the next push rebuilds them with one forward over the window (or,
  // when every push re-encodes anyway, runs the reference). The logits and attention of the last
  // push are not valid afterwards. n in [0, pushes since reset], and once the context has slid,
  // at most kMaxRollback (an Error of kind Input otherwise).
  void rollback(int n);
  // The tokens the last push attended over (<= window()); 0 before the first push.
  int context_length() const { return int(std::min<int64_t>(total_, window_)); }
  // Tokens pushed since the last reset() (minus those rolled back).
  int64_t length() const { return total_; }
  // Evaluations of the model since construction: 1 per push, push_rows of one step or one
  // batched forward, or rebuild of the caches; m for a push_rows of m pushes.
  int64_t passes() const { return passes_; }
  // The attention of the last pushed position over its context: (L*H, context_length()), row
  // g = l*H + h is head h of layer l; each row sums to 1. Valid until the next push() or reset().
  ConstMatMap attention() const;
  // The tokens in the window, oldest first.
  std::vector<int32_t> context() const;
  // Whether pushes use the cache: use_cache, and every layer's mask causal at the last reset().
  bool cached() const { return cached_; }
  // The window W: the context slides past it.
  int window() const { return window_; }
  // Whether a slide keeps the caches (above) rather than re-encoding the window.
  bool keeps_cache_when_sliding() const { return keeps_cache_when_sliding_; }
  // Layer l's KV cache, for tests and the readers of its size: rows [0, length) hold the
  // context's keys and values when the caches are in use (a rollback leaves what a fresh decoder
  // of the kept tokens would hold).
  const KVCache& cache(int l) const { return caches_.at(size_t(l)); }

 private:
  const int32_t* context_data() const { return history_.data() + history_.size() - context_length(); }
  void append(int32_t token);         // to the history (the oldest kept token leaves when full)
  void run_reference();               // the full forward over the context
  void run_rows(int m);               // the last m positions of the context from the caches
  void rebuild();                     // empties the caches and runs the whole context through them
  void run_windows(const int32_t* tokens, int m);  // m full windows in one batched forward

  TinyAttentionLM& model_;
  bool use_cache_, cached_ = false;
  // The caches hold exactly the context's rows (false after a rollback across a slide, or once
  // a slide re-encoded the window, until rebuilt).
  bool cache_valid_ = false;
  int window_;
  // Positions rope, alibi or none with 1 layer (or a narrow sliding window, above): the caches
  // stay valid as the window slides.
  bool keeps_cache_when_sliding_;
  std::vector<int32_t> history_;  // the last W + kMaxRollback tokens, oldest first
  int64_t total_ = 0;             // tokens pushed since reset
  int64_t passes_ = 0;
  RowVec logits_;                 // (V)
  Mat rows_logits_;               // (m,V) of push_rows
  Mat attention_;                 // (L*H, C); the first context_length() columns are in use
  // The cached path: one cache per layer, the new rows' stream and scratch, the block's caches.
  std::vector<KVCache> caches_;
  std::vector<TinyAttentionLM::State::Block> blocks_;
  Mat a_, y_, logits_row_;        // (m,D), (m,D), (m,V)
  Mat rows_weights_;              // (m*H, n) one layer's weights of a step of m > 1 rows
  std::vector<int32_t> windows_;  // (m,W) the windows of run_windows
  Norm::State final_norm_;
  // The reference path.
  TinyAttentionLM::State state_;
};

// The largest number of tokens generate() makes in one call.
constexpr int kMaxGenerateTokens = 10000;
// The longest prompt generate() accepts, in tokens (characters of a text model).
constexpr int kMaxPromptTokens = 10000;

// Pushes prompt through a Decoder (with the cache) and then samples n_tokens tokens one at a
// time: next_token_distribution(logits, options), then sample_token with one Rng(seed). Returns
// the n_tokens new tokens (without the prompt). The same model, prompt, options and seed give
// the same tokens; temperature 0 is greedy (the argmax of each step's logits). Errors of kind
// Input: an empty prompt, a prompt longer than kMaxPromptTokens, a prompt token outside [0, V),
// n_tokens outside [0, kMaxGenerateTokens], a bad option (SamplingOptions::validate), a bad
// window (Decoder).
std::vector<int32_t> generate(TinyAttentionLM& model, const std::vector<int32_t>& prompt,
                              int n_tokens, const SamplingOptions& options, uint64_t seed,
                              int window = 0);

}  // namespace attn
