// attn bench: native training throughput (median of timed blocks) and GEMM peak, 1 thread.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "attn/train/bench.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/config_flags.h"

namespace attn::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Named {
  const char* name;
  TrainerConfig config;
};

std::vector<Named> bench_configs(const std::string& which, const Args& args) {
  const TrainerConfig large = sized_config(256, 256, 8, 256, 8);  // the rest DemoConfig's
  // The induction preset (cpp/attn/README.md, "Induction heads"): V 32, D 32, H 2, T 32, B 32, 2
  // layers, residual.
  TrainerConfig induction = sized_config(32, 32, 2, 32, 32);
  induction.training.seed = 0;
  induction.task.name = "induction";
  induction.model.n_layers = 2;
  induction.model.residual = true;
  std::vector<Named> out;
  if (which == "demo" || which == "all") out.push_back({"demo", TrainerConfig{}});
  if (which == "large" || which == "all") out.push_back({"large", large});
  if (which == "induction" || which == "all") out.push_back({"induction", induction});
  // The block preset: pre-norm, RMSNorm, SwiGLU, RoPE, 2 layers, on the demo sizes.
  TrainerConfig block;
  block.model.n_layers = 2;
  block.model.residual = true;
  block.model.norm = NormKind::RMSNorm;
  block.model.ffn = FfnKind::SwiGLU;
  block.model.positions = PositionKind::Rope;
  if (which == "block" || which == "all") out.push_back({"block", block});
  // custom: the model and training flags, as attn train reads them.
  if (which == "custom") out.push_back({"custom", trainer_config_from(args)});
  if (out.empty() && which != "generate" && which != "speculative" && which != "tiled")
    throw UsageError("--config must be demo, large, induction, block, generate, speculative, "
                     "tiled, all or custom, got '" + which + "'");
  return out;
}

// Steps per second of each timed block, after a warm-up of about one block.
std::vector<double> time_training(const TrainerConfig& c, int blocks, double block_seconds) {
  Trainer t(c);
  auto t0 = Clock::now();
  int steps_per_block = 0;
  while (seconds_since(t0) < block_seconds) {
    t.step(1);
    ++steps_per_block;
  }
  std::vector<double> rates;
  for (int b = 0; b < blocks; ++b) {
    t0 = Clock::now();
    t.step(steps_per_block);
    rates.push_back(steps_per_block / seconds_since(t0));
  }
  return rates;
}

// Best median GFLOP/s of C = A B over a few square sizes.
double gemm_peak(int blocks, double block_seconds, std::string& detail) {
  double best = 0.0;
  for (int n : {128, 256, 512}) {
    int reps = 1;
    for (auto t0 = Clock::now(); seconds_since(t0) < block_seconds / 4; reps *= 2) gemm_probe(n, reps);
    std::vector<double> g;
    for (int b = 0; b < blocks; ++b) {
      const auto t0 = Clock::now();
      volatile float sink = gemm_probe(n, reps);
      (void)sink;
      g.push_back(2.0 * n * n * n * reps / seconds_since(t0) / 1e9);
    }
    const double m = median(g);
    detail += (detail.empty() ? "" : ", ") + std::string("\"") + std::to_string(n) +
              "\": " + std::to_string(m);
    best = std::max(best, m);
  }
  return best;
}

// Tokens/s of greedy generation (generation_probe, 64 tokens from a 1-token prompt) in each
// timed block, after a warm-up of about one block, with the KV cache or without.
std::vector<double> time_generation(bool use_cache, int blocks, double block_seconds) {
  constexpr int kTokens = 64;
  TinyAttentionLM model(generation_bench_config(), 1);
  auto t0 = Clock::now();
  int runs_per_block = 0;
  volatile int64_t sink = 0;
  while (seconds_since(t0) < block_seconds) {
    sink = sink + generation_probe(model, kTokens, use_cache);
    ++runs_per_block;
  }
  std::vector<double> rates;
  for (int b = 0; b < blocks; ++b) {
    t0 = Clock::now();
    for (int r = 0; r < runs_per_block; ++r) sink = sink + generation_probe(model, kTokens, use_cache);
    rates.push_back(double(runs_per_block) * kTokens / seconds_since(t0));
  }
  return rates;
}

// "generation": tokens/s with and without the KV cache (medians) and their ratio.
void print_generation(int blocks, double block_seconds) {
  const double cached = median(time_generation(true, blocks, block_seconds));
  const double uncached = median(time_generation(false, blocks, block_seconds));
  std::printf("  \"generation\": {\"config\": \"V60 D64 H4 C64, 2 pre-norm layers, LayerNorm, "
              "RoPE, GELU; 64 greedy tokens from a 1-token prompt\", \"cached_tokens_per_s\": "
              "%.1f, \"uncached_tokens_per_s\": %.1f, \"speedup\": %.2f}",
              cached, uncached, cached / uncached);
}

std::vector<Flag> bench_flags() {
  std::vector<Flag> flags = {
      {"config", "NAME", "all",
       "demo, large, induction, block (pre-norm RMSNorm SwiGLU RoPE, 2 layers), generate "
       "(tokens/s of generation with and without the KV cache), all (those five), custom (the "
       "model flags below), speculative (speculative decoding on the GPT preset: a trained draft "
       "and the bigram, N 4, against plain decoding) or tiled (memory and time of the plain and "
       "the tiled attention)"},
      {"blocks", "N", "5", "timed blocks (the median is reported)"},
      {"target-steps", "N", "500", "with --config speculative: training steps of the GPT preset "
                                   "target (the draft gets draft_config's 300)"},
      {"block-seconds", "S", "1", "approximate length of one block"}};
  for (Flag& f : trainer_flags()) flags.push_back(f);
  return flags;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  const Args args("bench",
                  "Measures training steps/s and GFLOP/s (median of timed blocks after a warm-up) "
                  "and the best single-thread GEMM GFLOP/s, and prints JSON.",
                  bench_flags(), argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const int blocks = args.get_int("blocks", 1, 1000);
  const double block_seconds = args.get_float("block-seconds", 0.01, 600);
  const std::string which = args.get("config");
  const std::vector<Named> configs = bench_configs(which, args);

  std::printf("{\n  \"engine\": \"native\",\n");
  if (which == "generate") {  // generation alone
    print_generation(blocks, block_seconds);
    std::printf("\n}\n");
    return 0;
  }
  if (which == "speculative" || which == "tiled") {
    if (which == "speculative") print_speculative_bench(blocks, block_seconds, args.get_int("target-steps", 0, 100000));
    else print_tiled_bench(blocks);
    std::printf("\n}\n");
    return 0;
  }
  std::printf("  \"configs\": {\n");
  for (size_t i = 0; i < configs.size(); ++i) {
    const std::vector<double> rates = time_training(configs[i].config, blocks, block_seconds);
    const double sps = median(rates);
    std::printf("    \"%s\": {\"steps_per_s\": %.3f, \"gflops\": %.3f, \"blocks\": [", configs[i].name,
                sps, sps * train_step_flops(configs[i].config) / 1e9);
    for (size_t b = 0; b < rates.size(); ++b) std::printf("%s%.3f", b ? ", " : "", rates[b]);
    std::printf("]}%s\n", i + 1 < configs.size() ? "," : "");
    std::fflush(stdout);
  }
  std::printf("  },\n");
  if (which == "all") {
    print_generation(blocks, block_seconds);
    std::printf(",\n");
  }
  std::string detail;
  const double peak = gemm_peak(blocks, block_seconds, detail);
  std::printf("  \"gemm_peak_gflops\": %.3f,\n  \"gemm_gflops_by_n\": {%s}\n}\n", peak,
              detail.c_str());
  return 0;
}

}  // namespace attn::cli
