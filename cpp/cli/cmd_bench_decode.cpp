// attn bench --config speculative | tiled: the figures of speculative decoding on the "Train a GPT
// on text" preset (a trained draft and the bigram, N = 4) and the memory and time of the plain
// and the tiled attention. Side by side in each timed block, medians over the blocks.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "attn/data/text.h"
#include "attn/interp/readouts.h"
#include "attn/model/speculative.h"
#include "attn/nn/tiled_attention.h"
#include "attn/train/bench.h"
#include "attn/train/draft.h"
#include "attn/train/trainer.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Heap bytes in use (glibc's allocator: the small chunks and the mmap'd large ones), -1 where it
// cannot be read.
int64_t heap_in_use() {
#if defined(__GLIBC__)
  const struct mallinfo2 m = mallinfo2();
  return int64_t(m.uordblks) + int64_t(m.hblkhd);
#else
  return -1;
#endif
}

}  // namespace

void print_speculative_bench(int blocks, double block_seconds, int target_steps) {
  const std::shared_ptr<const TextCorpus> corpus =
      std::make_shared<const TextCorpus>(make_corpus(default_corpus(), 64));
  Trainer target(text_preset_config(), corpus);
  target.step(target_steps);
  Trainer draft_trainer(draft_config(target.config()), corpus);
  draft_trainer.step(kDraftSteps);
  const TextEvaluation te = evaluate_text(target.model(), target.data(), 8),
                       de = evaluate_text(draft_trainer.model(), draft_trainer.data(), 8);
  ModelDraft trained(draft_trainer.model());
  std::unique_ptr<BigramDraft> bigram = make_bigram_draft(corpus->vocab, *corpus);
  const std::vector<int32_t> prompt = encode(corpus->vocab, "The ");
  std::printf("  \"speculative\": {\"target\": \"the GPT preset after %d steps (validation %.3f "
              "bits/char)\", \"draft\": \"draft_config (1 pre-norm block, D 32) after %d steps "
              "(%.3f bits/char)\", \"draft_tokens\": 4, \"calls_per_block\": \"as many as "
              "fill --block-seconds / 2\", \"runs\": [\n",
              target_steps, te.val_bits_per_char, kDraftSteps, de.val_bits_per_char);
  struct Run {
    const char* draft_name;
    Draft* draft;
    float temperature;
    int tokens;
  };
  // 60 tokens after a 4-character prompt stay in the window of 64 (every verification is one
  // cached step of 5 rows); 300 run past it (a verification is then one forward of 5 windows).
  const Run runs[] = {{"trained", &trained, 0.0f, 60},   {"trained", &trained, 1.0f, 60},
                      {"trained", &trained, 0.0f, 300},  {"trained", &trained, 1.0f, 300},
                      {"bigram", bigram.get(), 0.0f, 60}, {"bigram", bigram.get(), 1.0f, 60},
                      {"bigram", bigram.get(), 0.0f, 300}, {"bigram", bigram.get(), 1.0f, 300}};
  for (size_t i = 0; i < std::size(runs); ++i) {
    const Run& r = runs[i];
    SpeculativeOptions o;
    o.draft_tokens = 4;
    o.sampling.temperature = r.temperature;
    // One generation of each kind, the seed moving on with every call: plain generate() and
    // speculative decoding, whose figures add up in stats.
    uint64_t seed = 0;
    SpeculativeStats stats;
    const auto plain = [&] { generate(target.model(), prompt, r.tokens, o.sampling, seed++); };
    const auto speculative = [&] {
      o.seed = seed++;
      SpeculativeDecoder d(target.model(), *r.draft, prompt, r.tokens, o);
      d.run();
      const SpeculativeStats& s = d.stats();
      stats.tokens += s.tokens;
      stats.rounds += s.rounds;
      stats.target_passes += s.target_passes;
      stats.draft_passes += s.draft_passes;
      stats.proposed += s.proposed;
      stats.judged += s.judged;
      stats.accepted += s.accepted;
      stats.overlap_sum += s.overlap_sum;
    };
    // Calls per block: as many as fill block_seconds (measured on the warm-up), the same for
    // both; each block times both, in turns, and the medians are of the blocks.
    auto t0 = Clock::now();
    int reps = 0;
    while (ms_since(t0) < 500.0 * block_seconds) {
      speculative();
      ++reps;
    }
    stats = SpeculativeStats{};
    std::vector<double> spec_ms, plain_ms;
    for (int b = 0; b < blocks; ++b)
      for (int side = 0; side < 2; ++side) {
        const bool spec_side = (side == 0) == (b % 2 == 0);
        t0 = Clock::now();
        for (int k = 0; k < reps; ++k) spec_side ? speculative() : plain();
        (spec_side ? spec_ms : plain_ms).push_back(ms_since(t0) / reps);
      }
    const double alpha = stats.alpha();
    std::printf("    {\"draft\": \"%s\", \"temperature\": %g, \"tokens\": %d, "
                "\"target_passes_per_token\": %.3f, \"draft_passes_per_token\": %.3f, "
                "\"alpha\": %.3f, \"mean_overlap\": %.3f, \"tokens_per_target_pass\": %.2f, "
                "\"expected_tokens_per_pass\": %.2f, \"speculative_ms\": %.2f, \"plain_ms\": %.2f, "
                "\"time_ratio\": %.2f}%s\n",
                r.draft_name, double(r.temperature), r.tokens,
                double(stats.target_passes) / double(stats.tokens),
                double(stats.draft_passes) / double(stats.tokens), alpha, stats.mean_overlap(),
                stats.tokens_per_target_pass(), expected_tokens_per_round(alpha, 4),
                median_of(spec_ms), median_of(plain_ms), median_of(spec_ms) / median_of(plain_ms),
                i + 1 < std::size(runs) ? "," : "");
    std::fflush(stdout);
  }
  std::printf("  ]}");
}

void print_tiled_bench(int blocks) {
  // The preset's shapes: D 64, H 4, 2 layers: a training step and a forward at T 64 and 256
  // (B 16), and forwards (eval) at long T.
  TrainerConfig tc = text_preset_config();
  tc.model.vocab_size = 35;
  std::printf("  \"tiled\": {\"model\": \"the GPT preset's shapes (V 35, D 64, H 4, 2 layers)\", "
              "\"tiles\": [%d, %d], \"runs\": [\n", TileSizes{}.query, TileSizes{}.key);
  struct Case {
    int T, B;
    bool training;
  };
  const Case cases[] = {{64, 16, true}, {64, 16, false}, {256, 16, true}, {256, 16, false},
                        {1024, 4, false}, {4096, 1, false}, {4096, 4, false}};
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    ModelConfig mc = tc.model_config();
    mc.max_context_length = c.T;
    TinyAttentionLM model(mc, 1);
    std::vector<int32_t> ids(size_t(c.B) * c.T);
    Rng g(1);
    for (int32_t& id : ids) id = int32_t(g.below(uint32_t(mc.vocab_size)));
    const int64_t L = mc.n_layers, H = mc.n_heads, Dh = mc.d_model / mc.n_heads;
    // The plain path holds every layer's (B*H*T,T) weights: past 1 GB it is not run.
    const int64_t plain_bytes = L * plain_attention_bytes(c.B, H, c.T, c.training);
    const int64_t tiled_bytes = L * tiled_attention_bytes(c.B, H, c.T, Dh, TileSizes{}, c.training);
    std::printf("    {\"T\": %d, \"B\": %d, \"pass\": \"%s\", \"attention_bytes_computed\": "
                "{\"plain\": %lld, \"tiled\": %lld}",
                c.T, c.B, c.training ? "forward+backward" : "forward", (long long)plain_bytes,
                (long long)tiled_bytes);
    // Each path's first pass sizes its State (the heap it holds after, measured); then every
    // block times both, in turns.
    const bool run_plain = plain_bytes <= (int64_t(1) << 30);  // past 1 GB the plain path is not run
    TinyAttentionLM::State states[2];
    int64_t measured[2] = {-1, -1};
    const auto pass = [&](int tiled) {
      TinyAttentionLM::State& s = states[tiled];
      s.tiled = tiled;
      model.forward(ids.data(), c.B, c.T, s);
      if (c.training) {
        s.dlogits.setConstant(s.logits.rows(), s.logits.cols(), 1e-3f);
        model.backward(ids.data(), s);
      }
    };
    for (int tiled = run_plain ? 0 : 1; tiled < 2; ++tiled) {
      const int64_t before = heap_in_use();
      pass(tiled);
      if (before >= 0) measured[tiled] = heap_in_use() - before;
    }
    std::vector<double> ms[2];
    for (int b = 0; b < blocks; ++b)
      for (int side = 0; side < 2; ++side) {
        const int tiled = (side == 0) == (b % 2 == 0) ? 1 : 0;
        if (!tiled && !run_plain) continue;
        const auto t0 = Clock::now();
        pass(tiled);
        ms[tiled].push_back(ms_since(t0));
      }
    if (!run_plain)
      std::printf(", \"plain\": \"not run: its weights alone need %.1f GB\"", plain_bytes / 1e9);
    for (int tiled = run_plain ? 0 : 1; tiled < 2; ++tiled)
      std::printf(", \"%s\": {\"state_bytes_measured\": %lld, \"ms\": %.2f}",
                  tiled ? "tiled" : "plain", (long long)measured[tiled], median_of(ms[tiled]));
    std::printf("}%s\n", i + 1 < std::size(cases) ? "," : "");
    std::fflush(stdout);
  }
  std::printf("  ]}");
}

}  // namespace attn::cli
