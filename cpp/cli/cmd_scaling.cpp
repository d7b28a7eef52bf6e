// attn scaling: train one model per width on the same data and fit L(N) = A N^(-alpha) + E to
// their validation losses (train/scaling.h); --chinchilla C: the compute-optimal split of C FLOPs.
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attn/train/scaling.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/config_flags.h"

namespace attn::cli {

namespace {

// The config keys a sweep shares besides its sizes, each its row's flag (the others are the
// sweep's own: train/scaling.h, ScalingSweepConfig::scaling_base_config).
constexpr const char* kSharedKeys[] = {"task",    "markov_order", "markov_symbols", "lag",
                                       "seq_len", "batch_size",   "lr",             "seed",
                                       "n_layers"};

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> sizes;
  size_t pos = 0;
  for (;;) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    const long d = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || end != item.c_str() + item.size() || errno != 0 || d < 2 || d > 4096)
      throw UsageError(str_cat("--sizes: '", item, "' is not a model width in [2, 4096]"));
    sizes.push_back(int(d));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return sizes;
}

double parse_budget(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double c = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(c) ||
      c < 6e11)
    throw UsageError(str_cat("--chinchilla: '", text,
                             "' is not a compute budget in FLOPs of at least 6e11 (1e6 tokens for "
                             "the smallest model of the grid)"));
  return c;
}

// A JSON number with 9 significant digits (every value printed is finite).
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string split_json(const ComputeSplit& s) {
  return str_cat("{\"N\": ", num(s.N), ", \"D\": ", num(s.D), ", \"D_per_N\": ",
                 num(s.tokens_per_param()), ", \"L\": ", num(s.L), "}");
}

int print_chinchilla(double C, bool json) {
  const ComputeSplit grid = compute_optimal(C), closed = compute_optimal_closed_form(C);
  if (json) {
    std::printf("{\"C\": %s, \"grid\": %s, \"closed_form\": %s}\n", num(C).c_str(),
                split_json(grid).c_str(), split_json(closed).c_str());
    return 0;
  }
  std::printf("# Chinchilla (Hoffmann et al. 2022): L = 406.4/N^0.34 + 410.7/D^0.28 + 1.69 nats, "
              "C = 6 N D = %.6g FLOPs\n", C);
  const auto line = [](const char* name, const ComputeSplit& s) {
    std::printf("%-11s N %.6g D %.6g D/N %.2f L %.6f\n", name, s.N, s.D, s.tokens_per_param(), s.L);
  };
  line("grid", grid);
  line("closed_form", closed);
  return 0;
}

struct Progress {
  bool json;
};

void print_run(const ScalingRun& r, void* data) {
  if (static_cast<Progress*>(data)->json) return;
  std::printf("d_model %d heads %d params %lld non_embedding_params %lld val_bits %.4f (%.1f s)\n",
              r.d_model, r.n_heads, static_cast<long long>(r.params),
              static_cast<long long>(r.non_embedding_params), r.val_bits, r.seconds);
  std::fflush(stdout);
}

}  // namespace

int cmd_scaling(const std::vector<std::string>& argv) {
  const ScalingSweepConfig defaults;
  std::vector<Flag> flags;
  for (const char* name : kSharedKeys) {
    const ConfigKey& k = *find_config_key(name);
    flags.push_back({k.flag, k.symbol, value_text(defaults.base, k), key_help(k, &config_flag_name)});
  }
  flags.push_back({"text", "FILE", "",
                   "train on the characters of FILE (the text task; without it --task text uses "
                   "the built-in corpus)"});
  flags.push_back({"sizes", "LIST", "8,16,24,32,48",
                   "the models' widths d_model, 3 to 16 of them, comma-separated; heads = d_model "
                   "/ 8 rounded down to a divisor (at least 1)"});
  flags.push_back({"steps", "N", std::to_string(ScalingSweepConfig::kDefaultSteps),
                   "training steps of every model (the same tokens each: N x batch x seq-len)"});
  flags.push_back({"json", "", "", "print one JSON object instead of the text report"});
  flags.push_back({"chinchilla", "C", "",
                   "print the compute-optimal split of C FLOPs instead (the course's grid and the "
                   "closed form: N, D, D/N, L), training nothing"});
  const Args args("scaling",
                  "Trains one model per width (2 pre-norm layers with LayerNorm, a GELU FFN and "
                  "learned positions; the other settings shared, the same tokens each), prints "
                  "each one's parameters, non-embedding parameters and validation loss in bits "
                  "per token, then the least-squares fit L(N) = A N^-alpha + E over the "
                  "non-embedding counts; with --task markov also the chain's entropy rate, the "
                  "floor E approaches.",
                  flags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const bool json = args.has("json");
  if (args.has("chinchilla")) return print_chinchilla(parse_budget(args.get("chinchilla")), json);

  ScalingSweepConfig c;
  for (const char* name : kSharedKeys) {
    const ConfigKey& k = *find_config_key(name);
    if (k.type == ConfigType::String)
      set_choice(c.base, k, args.get(k.flag), &config_flag_name);
    else if (!set_value_text(c.base, k, args.get(k.flag)))
      throw UsageError(str_cat("--", k.flag, ": '", args.get(k.flag), "' is not ",
                               k.type == ConfigType::Float ? "a number" : "an integer"));
  }
  if (args.has("text") && !args.has("task")) c.base.task.name = "text";
  c.sizes = parse_sizes(args.get("sizes"));
  c.steps = args.get_int("steps", 1, 1000000);
  // Each size's model as the flags name it: a shared setting's error as it is, a size's own
  // (the width, its heads, the state's size) after the size.
  for (int d : c.sizes) {
    TrainerConfig m = c.base;
    m.model.d_model = d, m.model.n_heads = scaling_heads(d);
    try {
      m.validate(&config_flag_name);
    } catch (const Error& e) {
      if (e.key() != "d_model" && e.key() != "n_heads" && !e.key().empty()) throw;
      throw Error(e.kind(), e.key(), str_cat("--sizes ", d, ": ", e.what()));
    }
  }
  try {
    check_scaling_sweep(c);  // the list itself: its length, a repeated size
  } catch (const Error& e) {
    throw Error(e.kind(), e.key(), str_cat("--sizes: ", e.what()));
  }
  const std::shared_ptr<const TextCorpus> corpus = corpus_from(args, c.base);
  const bool markov = c.base.task.name == "markov";
  if (!json) {
    std::printf("# scaling: task %s", c.base.task.name.c_str());
    if (markov)
      std::printf(" (order %d, %d symbols)", c.base.task.markov_order, c.base.task.markov_symbols);
    if (c.base.task.name == "lag") std::printf(" (lag %d)", c.base.task.lag);
    std::printf(", %d layers, T %d, B %d, lr %g, seed %llu; %d steps, %lld tokens per model\n",
                c.base.model.n_layers, c.base.task.seq_len, c.base.training.batch_size,
                static_cast<double>(c.base.training.lr),
                static_cast<unsigned long long>(c.base.training.seed), c.steps,
                static_cast<long long>(c.steps) * c.base.training.batch_size * c.base.task.seq_len);
    std::fflush(stdout);
  }
  Progress progress{json};
  const auto t0 = std::chrono::steady_clock::now();
  const ScalingSweep s = scaling_sweep(c, corpus, &print_run, &progress);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (json) {
    std::string out = "{\"runs\": [";
    for (size_t i = 0; i < s.runs.size(); ++i) {
      const ScalingRun& r = s.runs[i];
      out += str_cat(i ? ", " : "", "{\"d_model\": ", r.d_model, ", \"params\": ", r.params,
                     ", \"non_embedding_params\": ", r.non_embedding_params,
                     ", \"val_bits\": ", num(r.val_bits), "}");
    }
    out += str_cat("], \"fit\": {\"A\": ", num(s.fit.A), ", \"alpha\": ", num(s.fit.alpha),
                   ", \"E\": ", num(s.fit.E), ", \"residual\": ", num(s.fit.residual), "}");
    if (markov) out += str_cat(", \"entropy_rate\": ", num(s.entropy_rate_bits));
    std::printf("%s}\n", out.c_str());
    return 0;
  }
  std::printf("fit A %.6g alpha %.4f E %.4f bits residual %.4g bits (L = A N^-alpha + E over "
              "the non-embedding counts)\n", s.fit.A, s.fit.alpha, s.fit.E, s.fit.residual);
  if (markov)
    std::printf("entropy_rate %.4f bits per symbol (the chain's exact floor; fitted E / rate = "
                "%.3f)\n", s.entropy_rate_bits, s.fit.E / s.entropy_rate_bits);
  std::printf("# %zu models in %.1f s\n", s.runs.size(), secs);
  return 0;
}

}  // namespace attn::cli
