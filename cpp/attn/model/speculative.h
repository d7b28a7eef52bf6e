// Speculative decoding (the course's lesson 16): a cheap draft proposes N tokens, the target
// scores all of them in one forward pass, and a rejection rule keeps exactly the target's
// distribution. Left to right, draft token d (drawn from p) is accepted with probability
// min(1, q(d) / p(d)); at the first rejection the token is drawn from the residual
// norm(max(0, q - p)) and the rest is discarded; when all N are accepted a bonus token is drawn
// from the target's next distribution. p and q are the distributions after the sampling
// strategies (next_token_distribution), so the guarantee holds for what was asked; at
// temperature 0 both are one-hot and the output is the target's greedy output for any draft.
//
// Unlike the course's code, whose p and q are fixed distributions, ours are two models with
// context: the target's KV cache takes the N + 1 rows in one step (Decoder::push_rows) and both
// caches roll back to the accepted length after a rejection (Decoder::rollback).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/base/rng.h"
#include "attn/base/stats.h"
#include "attn/base/tensor.h"
#include "attn/data/text.h"
#include "attn/model/decoder.h"
#include "attn/model/model.h"
#include "attn/model/sampling.h"

namespace attn {

// The largest number of draft tokens per round.
constexpr int kMaxDraftTokens = 16;

// What proposes tokens: a smaller model with its own KV cache, or a bigram table.
class Draft {
 public:
  virtual ~Draft() = default;
  virtual int vocab_size() const = 0;
  // "model" or "bigram".
  virtual const char* kind() const = 0;
  // Empties the context.
  virtual void reset() = 0;
  // Appends m >= 1 tokens; returns the logits (V) of the token after the last, valid until the
  // next call.
  virtual const RowVec& push(const int32_t* tokens, int m) = 0;
  // Undoes the last n pushed tokens (n <= kMaxRollback once a model draft's context slid).
  virtual void rollback(int n) = 0;
  // Evaluations since construction: a model's forward passes, a bigram's table lookups.
  virtual int64_t passes() const = 0;

  // The generation the draft's context belongs to: a draft serves one at a time, and a
  // SpeculativeDecoder whose draft another one has taken since fails instead of reading the
  // other's context.
  const void* user = nullptr;
};

// A saved or live model as the draft, decoded with the KV cache (Decoder). The model must outlive
// the draft; change its weights and reset() before using it again.
class ModelDraft : public Draft {
 public:
  // window: as Decoder's (0: the model's max context length).
  explicit ModelDraft(TinyAttentionLM& model, int window = 0);
  int vocab_size() const override { return vocab_size_; }
  const char* kind() const override { return "model"; }
  void reset() override { decoder_.reset(); }
  const RowVec& push(const int32_t* tokens, int m) override;
  void rollback(int n) override { decoder_.rollback(n); }
  int64_t passes() const override { return decoder_.passes(); }

 private:
  int vocab_size_;
  Decoder decoder_;
  RowVec logits_;
};

// A draft that needs no training: the next token's distribution given the last one, counted
// from a text. logits(a, b) = log((count(a b) + 1) / (count(a) + V)), add-one smoothing, so every
// token keeps a probability and at temperature 1 the softmax gives the smoothed counts back.
class BigramDraft : public Draft {
 public:
  // ids (n >= 2) in [0, V): an Error of kind Input otherwise.
  BigramDraft(const int32_t* ids, size_t n, int vocab_size);
  int vocab_size() const override { return int(table_.rows()); }
  const char* kind() const override { return "bigram"; }
  void reset() override;
  const RowVec& push(const int32_t* tokens, int m) override;
  void rollback(int n) override;
  int64_t passes() const override { return passes_; }
  // (V,V): row a holds the logits of the token after a.
  const Mat& table() const { return table_; }

 private:
  Mat table_;
  std::vector<int32_t> history_;  // the last kMaxRollback + 1 pushed tokens
  int64_t total_ = 0, passes_ = 0;
  RowVec logits_;
};

// The bigram of a text model: corpus's training split (its first 90%) counted as ids of vocab
// (the model's characters). A character vocab lacks is an Error of kind Input naming it.
std::unique_ptr<BigramDraft> make_bigram_draft(const std::u32string& vocab, const TextCorpus& corpus);

// An Error of kind Input unless the draft's vocabulary has the target's size: "the draft's
// vocabulary has 40 tokens but the target's has 35".
void check_draft_vocab(int target_vocab_size, int draft_vocab_size);

// The pieces of the acceptance rule, on one position's distributions (V each).
// sum_x min(p(x), q(x)): the probability that a token drawn from p is accepted (alpha).
double distribution_overlap(const float* p, const float* q, int V);
// norm(max(0, q - p)) into out (V). When it sums to 0 (q <= p everywhere, i.e. q == p) it is q,
// as the course's code returns; a rejection cannot happen then anyway.
void residual_distribution(const float* q, const float* p, int V, float* out);

// One verification: drafts (n) drawn from p_rows (n,V), against q_rows (n+1,V) of the target at
// the same positions and the one after. Returns the accepted count k, the token that follows
// them (drawn from the residual at position k, or the bonus from q_rows row n when k == n) and
// whether it is a bonus. Draws one uniform per judged draft token, then one for the token.
struct Verification {
  int accepted = 0;
  int32_t token = 0;
  bool bonus = false;
  // sum over the judged draft tokens (the accepted ones and the rejected one) of their
  // positions' distribution_overlap, and how many were judged.
  double overlap_sum = 0.0;
  int judged = 0;
};
Verification verify_drafts(ConstMatRef q_rows, ConstMatRef p_rows, const int32_t* drafts, int n,
                           Rng& rng);

// How each generated token came about.
enum class TokenFate : uint8_t {
  Accepted = 0,   // a draft token the target accepted
  Resampled = 1,  // drawn from the residual at a rejection
  Bonus = 2,      // drawn from the target after every draft token of the round was accepted
};

struct SpeculativeOptions {
  int draft_tokens = 4;      // N, in [1, kMaxDraftTokens]
  SamplingOptions sampling;  // for p and q alike
  uint64_t seed = 0;         // one Rng draws the draft tokens, the acceptances and the residuals
  int window = 0;            // the target's window (Decoder); 0: its max context length
  // Throws an Error of kind Input naming the first bad value.
  void validate(int vocab_size) const;
};

// Per generation. alpha() and mean_overlap() average over the judged draft tokens: the accepted
// ones and, in each round that had one, the rejected one (tokens after it are never judged).
struct SpeculativeStats {
  int64_t tokens = 0;         // generated
  int64_t rounds = 0;         // verifications: one target forward pass each where the rows fit
  int64_t target_passes = 0;  // the target's evaluations after the prompt
  int64_t draft_passes = 0;   // the draft's evaluations (a bigram's lookups) after the prompt
  int64_t proposed = 0;       // draft tokens proposed
  int64_t judged = 0;         // draft tokens the target judged
  int64_t accepted = 0;       // draft tokens accepted
  double overlap_sum = 0.0;   // sum of distribution_overlap over the judged tokens
  int draft_tokens = 0;       // N
  // Measured acceptance rate: accepted / judged (NaN before any).
  double alpha() const;
  // The mean of sum_x min(p, q) over the judged tokens: the acceptance rate to expect.
  double mean_overlap() const;
  // Tokens per target forward pass, and per verification.
  double tokens_per_target_pass() const;
  double tokens_per_round() const;
};

// The expected tokens per verification with N draft tokens when each is accepted with
// probability alpha independently: (1 - alpha^(N+1)) / (1 - alpha) (N + 1 at alpha = 1).
double expected_tokens_per_round(double alpha, int N);

// Speculative generation, one round at a time: the prompt through both models at construction,
// then round() proposes, verifies and rolls back. Reads the live models: they and the draft must
// outlive it, unchanged.
class SpeculativeDecoder {
 public:
  // Errors of kind Input: an empty or too long prompt, a prompt token outside [0, V), n_tokens
  // outside [0, kMaxGenerateTokens], a bad option, a draft of another vocabulary size.
  SpeculativeDecoder(TinyAttentionLM& target, Draft& draft, const std::vector<int32_t>& prompt,
                     int n_tokens, const SpeculativeOptions& options);
  ~SpeculativeDecoder();
  SpeculativeDecoder(const SpeculativeDecoder&) = delete;
  SpeculativeDecoder& operator=(const SpeculativeDecoder&) = delete;
  // One round: up to N proposals (fewer where the target's window would be crossed), one
  // verification, the rollbacks. Appends its tokens (at most the n_tokens asked in all) to
  // tokens() and fates(); returns how many. 0 once done(). An Error of kind State when another
  // generation has used the draft since.
  int round();
  bool done() const { return int64_t(tokens_.size()) >= n_tokens_; }
  // Runs rounds until done().
  void run();
  // Back to the state right after the prompt, for another continuation: the generator runs on
  // (the next draws are new ones) and the stats keep adding up. The exactness check draws many
  // samples after one prompt this way.
  void restart();
  const std::vector<int32_t>& tokens() const { return tokens_; }
  const std::vector<TokenFate>& fates() const { return fates_; }
  const SpeculativeStats& stats() const { return stats_; }
  // The target's decoder: its next-token distributions after the prompt.
  Decoder& target_decoder() { return target_; }

 private:
  TinyAttentionLM& model_;
  Draft& draft_;
  SpeculativeOptions options_;
  int64_t n_tokens_;
  Decoder target_;
  Rng rng_;
  // Resets both models and pushes the prompt but its last token, which goes in with the first
  // round's rows.
  void fill_prompt();

  std::vector<int32_t> committed_;  // the prompt and every generated token
  size_t prompt_size_;
  int64_t target_len_ = 0, draft_len_ = 0;  // committed tokens pushed into each
  int64_t target_passes0_ = 0, draft_passes0_ = 0;
  std::vector<int32_t> tokens_;
  std::vector<TokenFate> fates_;
  SpeculativeStats stats_;
  // Scratch: the draft tokens, p (N,V), the target's rows (N+1) and their q (N+1,V).
  std::vector<int32_t> drafts_, rows_;
  Mat p_, q_;
};

// The acceptance rate to expect on a text, without sampling: ids (2 to kMaxPromptTokens tokens)
// through both models, and the mean over positions t = 0 .. n - 2 of sum_x min(p_t(x), q_t(x)),
// p_t and q_t the draft's and the target's next-token distributions after ids[0..t] under
// options. Deterministic, so alpha against temperature or draft size draws a smooth curve.
// Takes the draft from any generation using it. Errors of kind Input as SpeculativeDecoder's.
double expected_acceptance(TinyAttentionLM& target, Draft& draft, const std::vector<int32_t>& ids,
                           const SamplingOptions& options, int window = 0);

// speculative_generate's result: the tokens, their fates, the figures, and the wall time against
// plain decoding (generate(), the same options and seed) of the same number of tokens.
struct SpeculativeResult {
  std::vector<int32_t> tokens;
  std::vector<TokenFate> fates;
  SpeculativeStats stats;
  double wall_ms = 0.0;        // the speculative generation, the prompt included
  double plain_ms = 0.0;       // generate() of as many tokens (NaN when not compared)
  std::vector<int32_t> plain_tokens;  // its tokens (empty when not compared)
};
SpeculativeResult speculative_generate(TinyAttentionLM& target, Draft& draft,
                                       const std::vector<int32_t>& prompt, int n_tokens,
                                       const SpeculativeOptions& options,
                                       bool compare_plain = true);

// The exactness check: `samples` speculative continuations of one prompt, each of two tokens
// (each from its own restart, one Rng for all), against the target's own distributions: q of the
// first token, and sum_x q(x) q(. | prompt x) of the second. Per position: the counts (V), the
// expected probabilities (V) and the chi-square test (its bins of expected count < 5 pooled).
struct ExactnessPosition {
  std::vector<int64_t> counts;
  std::vector<double> expected;
  ChiSquare test;
};
struct Exactness {
  ExactnessPosition first, second;
  SpeculativeStats stats;  // over every sample
};
// samples in [1, 1000000] (an Error of kind Input otherwise), and the constructor's errors.
Exactness speculative_exactness(TinyAttentionLM& target, Draft& draft,
                                const std::vector<int32_t>& prompt,
                                const SpeculativeOptions& options, int samples);

}  // namespace attn
