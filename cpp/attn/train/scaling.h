// Scaling laws (the course's lesson 13, 13-scaling-laws/code/main.py): the Chinchilla loss
// L(N, D) = A / N^alpha + B / D^beta + E with Hoffmann et al.'s (2022) fitted constants, the
// compute-optimal split of a budget C = 6 N D (the course's grid search and the closed form),
// and the least-squares fit of L(N) = A N^(-alpha) + E to measured losses. N counts
// parameters, D training tokens, C FLOPs; L is in nats for the Chinchilla constants and in
// whatever unit the fitted losses are in for fit_power_law.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "attn/data/text.h"
#include "attn/train/config.h"

namespace attn {

// Hoffmann et al.'s constants, as the course's code gives them.
struct ChinchillaConstants {
  double A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28, E = 1.69;
};

// A / N^alpha + B / D^beta + E. N and D must be > 0 (an Error of kind Input otherwise).
double chinchilla_loss(double N, double D, const ChinchillaConstants& k = {});

// A split of a compute budget: N parameters and D = C / (6 N) tokens, its loss L.
struct ComputeSplit {
  double N = 0, D = 0, L = 0;
  double tokens_per_param() const { return D / N; }  // D/N
};

// The course's compute_optimal: n_grid log-uniform N in [1e5, 1e13] (both ends in), D = C / (6 N),
// the points with D >= 1e6 only, the one of least chinchilla_loss (the first on a tie). C must be
// finite and > 0 and n_grid >= 2; a budget no point can use (C < 6e11) is an Error of kind Input.
ComputeSplit compute_optimal(double C, int n_grid = 200, const ChinchillaConstants& k = {});

// The same optimum in closed form: minimising A N^-alpha + B (C/6N)^-beta over N gives
// N = G (C/6)^(beta/(alpha+beta)) with G = (alpha A / (beta B))^(1/(alpha+beta)), D = C / (6 N)
// (Hoffmann et al. 2022, appendix D.2). C must be finite and > 0.
ComputeSplit compute_optimal_closed_form(double C, const ChinchillaConstants& k = {});

// L(N) = A N^(-alpha) + E fitted by least squares to points (N_i, L_i).
struct PowerLawFit {
  double A = 0, alpha = 0, E = 0;
  double residual = 0;  // the root mean square of L_i - L(N_i)
  double at(double N) const;  // A N^(-alpha) + E
};

// For each alpha the best A >= 0 and E are a linear least-squares problem in x = N^(-alpha):
// solved exactly, so only alpha is searched, over [alpha_lo, alpha_hi]: a log-uniform grid of 400
// values, then golden-section search in the bracket around the grid's best. Needs at least 3
// points with N > 0, finite L and at least 2 distinct N; anything else is an Error of kind Input.
PowerLawFit fit_power_law(const std::vector<double>& N, const std::vector<double>& L,
                          double alpha_lo = 0.01, double alpha_hi = 4.0);

// ---- The sweep: one model per width, the same data, the law fitted to their losses

// The parameters outside the token embedding, a learned position table and the LM head (Kaplan
// et al.'s N), from the model's report.
int64_t non_embedding_param_count(const ModelConfig& m);

// The heads of a sweep's model of width D: D / 8 rounded down to a divisor of D, at least 1 (so
// Dh is about 8: 8 -> 1, 16 -> 2, 24 -> 3, 32 -> 4, 48 -> 6).
int scaling_heads(int d_model);

// What a sweep shares. base holds every other setting (the task, its keys, the seed, the
// layers); each model gets d_model from sizes and n_heads from scaling_heads. Every model trains
// `steps` steps of base's batch: the same tokens each.
struct ScalingSweepConfig {
  TrainerConfig base = scaling_base_config();
  std::vector<int> sizes = {8, 16, 24, 32, 48};
  int steps = kDefaultSteps;
  int eval_batches = 32;  // the validation batches behind each val_bits

  static constexpr int kDefaultSteps = 1200;
  // The defaults: 2 pre-norm layers with the residual stream, LayerNorm and a GELU FFN (4 D),
  // learned positions, T 32, B 16, lr 3e-3, the markov task (order 2, 8 symbols), seed 42.
  static TrainerConfig scaling_base_config();
};

struct ScalingRun {
  int d_model = 0, n_heads = 0;
  int64_t params = 0, non_embedding_params = 0;
  double val_bits = 0;  // the validation loss in bits per token: text's validation split,
                        // the other tasks' evaluation batches (the Trainer's eval stream)
  double seconds = 0;   // its training's wall time
};

struct ScalingSweep {
  std::vector<ScalingRun> runs;  // in the order of sizes
  PowerLawFit fit;               // of val_bits against non_embedding_params
  double entropy_rate_bits = 0;  // the markov task's chain's; NaN for other tasks
};

// Throws an Error of kind Config (key d_model, naming the list) for fewer than 3 or more than 16
// sizes or a repeated one, the model's own error (prefixed "size D: ") for a size its model
// refuses, and one of kind Input for steps outside [1, 1e6] or eval_batches outside [1, 1000].
void check_scaling_sweep(const ScalingSweepConfig& c);

// Trains one model of width d_model on base's task (text: corpus, nullptr for the default) and
// measures it.
ScalingRun scaling_run(const TrainerConfig& base, int d_model, int steps, int eval_batches,
                       std::shared_ptr<const TextCorpus> corpus = nullptr);

// check_scaling_sweep, then scaling_run for every size, on_run after each (for progress), then
// fit_power_law over the runs.
ScalingSweep scaling_sweep(const ScalingSweepConfig& c,
                           std::shared_ptr<const TextCorpus> corpus = nullptr,
                           void (*on_run)(const ScalingRun&, void*) = nullptr,
                           void* on_run_data = nullptr);

}  // namespace attn
