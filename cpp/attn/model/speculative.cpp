#include "attn/model/speculative.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace attn {

// ---- Drafts

ModelDraft::ModelDraft(TinyAttentionLM& model, int window)
    : vocab_size_(model.config.vocab_size), decoder_(model, true, window) {}

const RowVec& ModelDraft::push(const int32_t* tokens, int m) {
  require(m >= 1, "a draft push needs at least one token, got ", m);
  return m == 1 ? decoder_.push(tokens[0]) : decoder_.prefill(tokens, size_t(m));
}

BigramDraft::BigramDraft(const int32_t* ids, size_t n, int V) {
  require(V >= 1, "the vocabulary is empty");
  require(n >= 2, "a bigram table needs a text of at least 2 tokens, got ", n);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> counts =
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>::Zero(V, V);
  for (size_t i = 0; i < n; ++i)
    require(ids[i] >= 0 && ids[i] < V, "token ", ids[i], " at ", i,
            " is outside the vocabulary [0, ", V, ")");
  for (size_t i = 0; i + 1 < n; ++i) counts(ids[i], ids[i + 1]) += 1.0;
  table_.resize(V, V);
  for (int a = 0; a < V; ++a) {
    const double total = counts.row(a).sum() + V;
    for (int b = 0; b < V; ++b) table_(a, b) = float(std::log((counts(a, b) + 1.0) / total));
  }
  history_.reserve(size_t(kMaxRollback) + 1);
}

void BigramDraft::reset() {
  history_.clear();
  total_ = 0;
}

const RowVec& BigramDraft::push(const int32_t* tokens, int m) {
  require(m >= 1, "a draft push needs at least one token, got ", m);
  const int V = vocab_size();
  for (int i = 0; i < m; ++i) {
    require(tokens[i] >= 0 && tokens[i] < V, "token ", tokens[i],
            " is outside the vocabulary [0, ", V, ")");
    if (history_.size() == history_.capacity()) history_.erase(history_.begin());
    history_.push_back(tokens[i]);
  }
  total_ += m;
  ++passes_;
  logits_ = table_.row(history_.back());
  return logits_;
}

void BigramDraft::rollback(int n) {
  require(n >= 0 && n <= total_, "rollback(", n, "): the draft holds ", total_, " tokens");
  require(size_t(n) < history_.size() || n == total_, "rollback(", n, "): the bigram draft "
          "keeps only the last ", kMaxRollback, " pushes");
  history_.resize(history_.size() - std::min(history_.size(), size_t(n)));
  total_ -= n;
}

std::unique_ptr<BigramDraft> make_bigram_draft(const std::u32string& vocab, const TextCorpus& corpus) {
  const std::vector<int32_t> ids = encode(vocab, decode(corpus.vocab, corpus.train));
  return std::make_unique<BigramDraft>(ids.data(), ids.size(), int(vocab.size()));
}

void check_draft_vocab(int target_vocab_size, int draft_vocab_size) {
  require(target_vocab_size == draft_vocab_size, "the draft's vocabulary has ", draft_vocab_size,
          " tokens but the target's has ", target_vocab_size);
}

// ---- The acceptance rule

double distribution_overlap(const float* p, const float* q, int V) {
  double sum = 0.0;
  for (int i = 0; i < V; ++i) sum += std::min(p[i], q[i]);
  return sum;
}

void residual_distribution(const float* q, const float* p, int V, float* out) {
  double sum = 0.0;
  for (int i = 0; i < V; ++i) sum += std::max(0.0f, q[i] - p[i]);
  if (sum <= 0.0) {  // q == p: the course's code returns q
    std::copy(q, q + V, out);
    return;
  }
  for (int i = 0; i < V; ++i) out[i] = float(std::max(0.0f, q[i] - p[i]) / sum);
}

Verification verify_drafts(ConstMatRef q_rows, ConstMatRef p_rows, const int32_t* drafts, int n,
                           Rng& rng) {
  const int V = int(q_rows.cols());
  require(n >= 0 && q_rows.rows() == n + 1 && (n == 0 || (p_rows.rows() >= n && p_rows.cols() == V)),
          "verify_drafts needs q (", n + 1, ",V) and p (", n, ",V), got q (", q_rows.rows(), ",",
          q_rows.cols(), ") and p (", p_rows.rows(), ",", p_rows.cols(), ")");
  Verification v;
  RowVec residual(V);
  for (int i = 0; i < n; ++i) {
    const float* p = p_rows.row(i).data();
    const float* q = q_rows.row(i).data();
    const int32_t d = drafts[i];
    require(d >= 0 && d < V && p[d] > 0.0f, "draft token ", d, " at ", i,
            " has no probability under the draft's distribution");
    v.overlap_sum += distribution_overlap(p, q, V);
    ++v.judged;
    // Accept d with probability min(1, q(d) / p(d)).
    if (rng.uniform() < std::min(1.0, double(q[d]) / double(p[d]))) {
      ++v.accepted;
      continue;
    }
    residual_distribution(q, p, V, residual.data());
    v.token = sample_token(residual.data(), V, rng);
    return v;
  }
  v.token = sample_token(q_rows.row(n).data(), V, rng);
  v.bonus = true;
  return v;
}

// ---- Options and figures

void SpeculativeOptions::validate(int V) const {
  require(draft_tokens >= 1 && draft_tokens <= kMaxDraftTokens, "the draft tokens per round (",
          draft_tokens, ") must be in [1, ", kMaxDraftTokens, "]");
  sampling.validate(V);
}

double SpeculativeStats::alpha() const { return judged ? double(accepted) / judged : NAN; }
double SpeculativeStats::mean_overlap() const { return judged ? overlap_sum / judged : NAN; }
double SpeculativeStats::tokens_per_target_pass() const {
  return target_passes ? double(tokens) / target_passes : NAN;
}
double SpeculativeStats::tokens_per_round() const { return rounds ? double(tokens) / rounds : NAN; }

double expected_tokens_per_round(double alpha, int N) {
  require(alpha >= 0.0 && alpha <= 1.0, "alpha (", alpha, ") must be in [0, 1]");
  require(N >= 0, "N (", N, ") must be >= 0");
  if (alpha >= 1.0) return N + 1;
  return (1.0 - std::pow(alpha, N + 1)) / (1.0 - alpha);
}

// ---- Generation

namespace {

void check_prompt(const std::vector<int32_t>& prompt, int V) {
  require(!prompt.empty(), "the prompt is empty: generation needs at least one token");
  require(prompt.size() <= size_t(kMaxPromptTokens), "the prompt has ", prompt.size(),
          " tokens, more than the ", kMaxPromptTokens, " allowed");
  for (int32_t t : prompt)
    require(t >= 0 && t < V, "prompt token ", t, " is outside the vocabulary [0, ", V, ")");
}

}  // namespace

SpeculativeDecoder::SpeculativeDecoder(TinyAttentionLM& target, Draft& draft,
                                       const std::vector<int32_t>& prompt, int n_tokens,
                                       const SpeculativeOptions& options)
    : model_(target),
      draft_(draft),
      options_(options),
      n_tokens_(n_tokens),
      target_(target, true, options.window),
      rng_(options.seed),
      committed_(prompt),
      prompt_size_(prompt.size()) {
  const int V = target.config.vocab_size;
  check_draft_vocab(V, draft.vocab_size());
  check_prompt(prompt, V);
  require(n_tokens >= 0 && n_tokens <= kMaxGenerateTokens, "the number of tokens (", n_tokens,
          ") must be in [0, ", kMaxGenerateTokens, "]");
  options.validate(V);
  draft_.user = this;
  fill_prompt();
  target_passes0_ = target_.passes();
  draft_passes0_ = draft_.passes();
  stats_.draft_tokens = options.draft_tokens;
}

SpeculativeDecoder::~SpeculativeDecoder() {
  if (draft_.user == this) draft_.user = nullptr;
}

int SpeculativeDecoder::round() {
  if (done()) return 0;
  require_state(draft_.user == this, "another generation has used this draft since this one "
                "started; start this one again");
  const int V = model_.config.vocab_size, W = target_.window();
  const SamplingOptions& so = options_.sampling;
  const int pending_t = int(int64_t(committed_.size()) - target_len_);  // 1
  // N proposals, fewer where the rows would cross the target's window, so that they still fit in
  // one cached step: a number chosen before any draw keeps the output exact.
  int n = options_.draft_tokens;
  const int ctx = target_.context_length();
  if (ctx < W) n = std::max(0, std::min(n, W - ctx - pending_t));

  // The draft proposes n tokens, each pushed to get the next one's distribution.
  drafts_.resize(size_t(n));
  p_.resize(n, V);
  const int pending_d = int(int64_t(committed_.size()) - draft_len_);
  if (n > 0) {
    const RowVec* logits = &draft_.push(committed_.data() + draft_len_, pending_d);
    for (int i = 0; i < n; ++i) {
      next_token_distribution(logits->data(), V, so, p_.row(i).data());
      drafts_[size_t(i)] = sample_token(p_.row(i).data(), V, rng_);
      if (i + 1 < n) logits = &draft_.push(&drafts_[size_t(i)], 1);
    }
  }
  // The target scores the pending token and the n drafts: n + 1 distributions in one step.
  rows_.assign(committed_.begin() + target_len_, committed_.end());
  rows_.insert(rows_.end(), drafts_.begin(), drafts_.end());
  const Mat& logits = target_.push_rows(rows_.data(), int(rows_.size()));
  q_.resize(n + 1, V);
  for (int i = 0; i <= n; ++i)
    next_token_distribution(logits.row(pending_t - 1 + i).data(), V, so, q_.row(i).data());
  const Verification v = verify_drafts(q_, p_, drafts_.data(), n, rng_);

  // Both caches back to the accepted tokens. The draft pushed its pending tokens and the first
  // n - 1 drafts; the target the pending token and all n.
  target_.rollback(n - v.accepted);
  target_len_ += pending_t + v.accepted;
  if (n > 0) {
    const int kept = std::min(v.accepted, n - 1);
    draft_.rollback(n - 1 - kept);
    draft_len_ += pending_d + kept;
  }
  int emitted = 0;
  const auto emit = [&](int32_t token, TokenFate fate) {
    committed_.push_back(token);
    if (done()) return;
    tokens_.push_back(token);
    fates_.push_back(fate);
    ++emitted;
  };
  for (int i = 0; i < v.accepted; ++i) emit(drafts_[size_t(i)], TokenFate::Accepted);
  emit(v.token, v.bonus ? TokenFate::Bonus : TokenFate::Resampled);

  ++stats_.rounds;
  stats_.tokens += emitted;
  stats_.proposed += n;
  stats_.judged += v.judged;
  stats_.accepted += v.accepted;
  stats_.overlap_sum += v.overlap_sum;
  stats_.target_passes = target_.passes() - target_passes0_;
  stats_.draft_passes = draft_.passes() - draft_passes0_;
  return emitted;
}

void SpeculativeDecoder::run() {
  while (!done()) round();
}

void SpeculativeDecoder::fill_prompt() {
  draft_.user = this;
  draft_.reset();
  target_.reset();
  if (prompt_size_ > 1) {
    target_.prefill(committed_.data(), prompt_size_ - 1);
    draft_.push(committed_.data(), int(prompt_size_ - 1));
  }
  target_len_ = draft_len_ = int64_t(prompt_size_) - 1;
}

void SpeculativeDecoder::restart() {
  // Each model holds the committed tokens up to its length (every round rolls back its rejected
  // rows), so undoing what came after the prompt is one rollback each, when they can undo that
  // many; otherwise the prompt goes in again.
  const int64_t prompt_len = int64_t(prompt_size_) - 1;
  const int64_t t = target_len_ - prompt_len, d = draft_len_ - prompt_len;
  committed_.resize(prompt_size_);
  tokens_.clear();
  fates_.clear();
  if (draft_.user == this && t <= kMaxRollback && d <= kMaxRollback) {
    target_.rollback(int(t));
    draft_.rollback(int(d));
    target_len_ = draft_len_ = prompt_len;
  } else {
    fill_prompt();
  }
}

double expected_acceptance(TinyAttentionLM& target, Draft& draft, const std::vector<int32_t>& ids,
                           const SamplingOptions& options, int window) {
  const int V = target.config.vocab_size;
  check_draft_vocab(V, draft.vocab_size());
  check_prompt(ids, V);
  require(ids.size() >= 2, "the text needs at least 2 tokens, got ", ids.size());
  options.validate(V);
  Decoder decoder(target, true, window);
  draft.user = nullptr;
  draft.reset();
  std::vector<float> p(static_cast<size_t>(V)), q(static_cast<size_t>(V));
  double sum = 0.0;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    next_token_distribution(decoder.push(ids[t]).data(), V, options, q.data());
    next_token_distribution(draft.push(&ids[t], 1).data(), V, options, p.data());
    sum += distribution_overlap(p.data(), q.data(), V);
  }
  return sum / double(ids.size() - 1);
}

SpeculativeResult speculative_generate(TinyAttentionLM& target, Draft& draft,
                                       const std::vector<int32_t>& prompt, int n_tokens,
                                       const SpeculativeOptions& options, bool compare_plain) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  SpeculativeResult r;
  auto t0 = Clock::now();
  SpeculativeDecoder d(target, draft, prompt, n_tokens, options);
  d.run();
  r.wall_ms = ms_since(t0);
  r.tokens = d.tokens();
  r.fates = d.fates();
  r.stats = d.stats();
  r.plain_ms = NAN;
  if (compare_plain) {
    t0 = Clock::now();
    r.plain_tokens =
        generate(target, prompt, n_tokens, options.sampling, options.seed, options.window);
    r.plain_ms = ms_since(t0);
  }
  return r;
}

Exactness speculative_exactness(TinyAttentionLM& target, Draft& draft,
                                const std::vector<int32_t>& prompt,
                                const SpeculativeOptions& options, int samples) {
  require(samples >= 1 && samples <= 1000000, "samples (", samples, ") must be in [1, 1000000]");
  SpeculativeDecoder d(target, draft, prompt, 2, options);
  const int V = target.config.vocab_size;
  const SamplingOptions& so = options.sampling;
  // The target's own distributions: q after the prompt, and the second token's marginal
  // sum_x q(x) q(. | prompt x), one push and one rollback per x.
  Exactness e;
  e.first.expected.assign(size_t(V), 0.0);
  e.second.expected.assign(size_t(V), 0.0);
  {
    Decoder ref(target, true, options.window);
    std::vector<float> q1(static_cast<size_t>(V)), q2(static_cast<size_t>(V));
    next_token_distribution(ref.prefill(prompt.data(), prompt.size()).data(), V, so, q1.data());
    for (int x = 0; x < V; ++x) {
      e.first.expected[size_t(x)] = q1[size_t(x)];
      if (q1[size_t(x)] <= 0.0f) continue;
      next_token_distribution(ref.push(x).data(), V, so, q2.data());
      for (int y = 0; y < V; ++y) e.second.expected[size_t(y)] += double(q1[size_t(x)]) * q2[size_t(y)];
      ref.rollback(1);
    }
  }
  e.first.counts.assign(size_t(V), 0);
  e.second.counts.assign(size_t(V), 0);
  for (int s = 0; s < samples; ++s) {
    if (s > 0) d.restart();
    d.run();
    ++e.first.counts[size_t(d.tokens()[0])];
    ++e.second.counts[size_t(d.tokens()[1])];
  }
  e.first.test = chi_square_test(e.first.counts, e.first.expected);
  e.second.test = chi_square_test(e.second.counts, e.second.expected);
  e.stats = d.stats();
  return e;
}

}  // namespace attn
