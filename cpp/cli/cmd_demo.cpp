// attn demo: the curriculum's main.py walk-through, in four parts.
#include <cmath>
#include <cstdio>

#include "attn/multihead.h"
#include "attn/trainer.h"
#include "cli/commands.h"
#include "cli/config_flags.h"

namespace attn::cli {

namespace {

// Part 1 and 2 on one layer: x (B*T,D) of N(0,1) through MultiHeadSelfAttention.
void shape_and_mask_check(uint64_t seed) {
  const int B = 2, T = 7, D = 16, H = 4, C = 10;
  Rng rng(seed);
  MultiHeadSelfAttention layer(D, H, C, 0.0f, 0.0f, rng);
  Mat x(B * T, D), y(B * T, D);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal();
  MultiHeadSelfAttention::State s;
  layer.forward(x, B, T, /*training=*/false, rng, s, y);
  const Mat& w = s.weights();
  std::printf("1. Shape contract\n");
  std::printf("   input   (B,T,D)   = (%d, %d, %d)\n", B, T, D);
  std::printf("   output  (B,T,D)   = (%d, %d, %d)\n", B, static_cast<int>(y.rows()) / B,
              static_cast<int>(y.cols()));
  std::printf("   weights (B,H,T,T) = (%d, %d, %d, %d)\n", B, H,
              static_cast<int>(w.rows()) / (B * H), static_cast<int>(w.cols()));
  double future = 0.0, worst_row = 0.0;
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    const Eigen::Index i = r % T;  // query position
    for (Eigen::Index j = i + 1; j < T; ++j) future += w(r, j);
    worst_row = std::max(worst_row, std::abs(double(w.row(r).sum()) - 1.0));
  }
  std::printf("\n2. Causal mask check\n");
  std::printf("   attention mass on future positions: %.3g (must be 0)\n", future);
  std::printf("   max |row sum - 1|:                  %.3g (must be < 1e-5)\n", worst_row);
}

// Part 4: one heatmap per head, rows = queries, columns = keys, darker = more weight.
void print_heatmaps(const Mat& weights, int H, int T) {
  static const char kShades[] = " .:-=+*#%@";
  for (int h0 = 0; h0 < H; h0 += 2) {
    for (int h = h0; h < std::min(H, h0 + 2); ++h) std::printf("   head %-*d", T + 1, h);
    std::printf("\n");
    for (int i = 0; i < T; ++i) {
      for (int h = h0; h < std::min(H, h0 + 2); ++h) {
        std::printf("   q%-2d |", i);
        for (int j = 0; j < T; ++j) {
          const float v = weights(h * T + i, j);
          const int k = std::min(9, static_cast<int>(v * 9.0f + 0.5f));
          std::printf("%c", j > i ? ' ' : kShades[k]);
        }
        std::printf("|");
      }
      std::printf("\n");
    }
    std::printf("\n");
  }
}

}  // namespace

int cmd_demo(const std::vector<std::string>& argv) {
  std::vector<Flag> flags = trainer_flags();
  flags.push_back({"epochs", "N", "3", "training epochs"});
  flags.push_back({"steps-per-epoch", "N", "120", "steps per epoch"});
  const Args args("demo",
                  "Walks through the lesson: the shape contract, the causal-mask check, training "
                  "on the repeat task, and a per-head ASCII heatmap.",
                  flags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const TrainerConfig config = trainer_config_from(args);
  const int epochs = args.get_int("epochs", 1, 1000);
  const int per_epoch = args.get_int("steps-per-epoch", 1, 1000000);

  shape_and_mask_check(config.seed);

  std::printf("\n3. Training TinyAttentionLM on the '%s' task\n", config.task.c_str());
  std::printf("   V=%d D=%d H=%d T=%d B=%d lr=%g seed=%llu; chance loss ln(V) = %.3f\n",
              config.vocab_size, config.d_model, config.n_heads, config.seq_len,
              config.batch_size, config.lr, static_cast<unsigned long long>(config.seed),
              std::log(double(config.vocab_size)));
  Trainer trainer(config);
  for (int e = 0; e < epochs; ++e) {
    trainer.step(per_epoch);
    const auto& h = trainer.loss_history();
    double sum = 0.0;
    for (size_t i = h.size() - per_epoch; i < h.size(); ++i) sum += h[i];
    std::printf("   epoch %d: mean loss %.4f\n", e + 1, sum / per_epoch);
  }

  const int T = config.seq_len;
  std::vector<int32_t> ids(T, 7 % config.vocab_size);
  Mat weights, logits;
  trainer.attention(ids.data(), T, weights, logits);
  Eigen::Index predicted;
  logits.row(T - 1).maxCoeff(&predicted);
  std::printf("\n4. Attention per head for the repeated sample [%d x %d]; next token predicted: "
              "%d\n   (rows = queries, columns = keys; ' ' ~ 0 or masked, '@' ~ 1)\n\n",
              ids[0], T, static_cast<int>(predicted));
  print_heatmaps(weights, config.n_heads, T);
  return 0;
}

}  // namespace attn::cli
