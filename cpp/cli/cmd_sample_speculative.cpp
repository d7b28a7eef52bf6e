// attn sample --draft D --draft-tokens N: the same continuation as attn sample, drawn by
// speculative decoding (attn/model/speculative.h), with one more line: the figures of the
// generation against plain decoding of as many characters.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "attn/data/text.h"
#include "attn/io/weights.h"
#include "attn/model/speculative.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int sample_speculative(const Args& args, TinyAttentionLM& target, const std::u32string& vocab,
                       const std::string& prompt, const std::vector<int32_t>& ids, int n_tokens,
                       const SamplingOptions& options, uint64_t seed, int window) {
  const std::string draft_path = args.get("draft");
  const bool bigram = draft_path == "bigram";
  if (args.has("text") && !bigram)
    throw UsageError("--text needs --draft bigram (the bigram counts the text's training split)");
  SpeculativeOptions o;
  o.draft_tokens = args.get_int("draft-tokens", 1, kMaxDraftTokens);
  o.sampling = options;
  o.seed = seed;
  o.window = window;

  std::unique_ptr<TinyAttentionLM> draft_model;
  std::unique_ptr<Draft> draft;
  std::string described;
  if (bigram) {
    const std::vector<int32_t> train = text_split_ids(args, vocab, 1, false);
    draft = std::make_unique<BigramDraft>(train.data(), train.size(), target.config.vocab_size);
    described = "bigram of " + text_source(args) + "'s training split";
  } else {
    draft_model = load_model_file(draft_path);
    try {
      check_draft_vocab(target.config.vocab_size, draft_model->config.vocab_size);
    } catch (const Error& e) {
      throw Error(e.kind(), "draft", str_cat("--draft ", draft_path, ": ", e.what()));
    }
    draft = std::make_unique<ModelDraft>(*draft_model);
    described = "model " + draft_path;
  }

  const SpeculativeResult r = speculative_generate(target, *draft, ids, n_tokens, o);
  const std::string text = prompt + decode(vocab, r.tokens) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  const SpeculativeStats& s = r.stats;
  const double alpha = s.alpha();
  std::printf(
      "speculative decoding (draft %s, N %d): %lld tokens in %lld target passes (%s per token) "
      "and %lld draft passes; %lld of %lld judged draft tokens accepted: alpha %s, mean sum "
      "min(p, q) %s; %s tokens per target pass, (1 - alpha^%d) / (1 - alpha) = %s; %s ms, plain "
      "decoding %s ms (%s times as long)\n",
      described.c_str(), o.draft_tokens, (long long)s.tokens, (long long)s.target_passes,
      fixed(double(s.target_passes) / double(std::max<int64_t>(s.tokens, 1)), 3).c_str(),
      (long long)s.draft_passes, (long long)s.accepted, (long long)s.judged, fixed(alpha, 3).c_str(),
      fixed(s.mean_overlap(), 3).c_str(), fixed(s.tokens_per_target_pass(), 2).c_str(),
      o.draft_tokens + 1,
      std::isfinite(alpha) ? fixed(expected_tokens_per_round(alpha, o.draft_tokens), 2).c_str() : "n/a",
      fixed(r.wall_ms, 1).c_str(), fixed(r.plain_ms, 1).c_str(),
      fixed(r.wall_ms / r.plain_ms, 2).c_str());
  return 0;
}

}  // namespace attn::cli
