// Work counts and a GEMM probe for the benchmarks (native `attn bench` and the wasm bench).
// Timing is done by the caller: std::chrono natively, performance.now() in JS.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/model/model.h"
#include "attn/train/trainer.h"

namespace attn {

// Floating-point operations of one training step (forward + backward; matmuls only, counted
// as 2*m*n*k each, every layer's): the sum over the model's report (model_report), so the sum of
// step_products too. The backward does twice the forward's matmul work.
double train_step_flops(const TrainerConfig& config);

// Runs `reps` products C = A B (matmul_nn: the kernel our layers use) of (n,n) matrices and
// returns a checksum so the work cannot be optimised away. FLOPs = reps * 2 n^3.
float gemm_probe(int n, int reps);

// One matrix product of a training step (nn/report.h's ProductSpec): what it computes, its layout
// ("nn", "nt", "tn"), C (m,n), the inner dimension k, and how many times one step runs it.
using StepProduct = ProductSpec;

// Every matrix product of one training step of the resolved config c (Trainer::config(): the
// text task's vocabulary filled in), as the model's modules report them, forward then backward,
// products of the same layout and shape
// merged into one entry whose name joins theirs with " + ". Their flops sum to train_step_flops.
std::vector<StepProduct> step_products(const TrainerConfig& c);

// A product of step_products measured in place: the seconds its calls took in one step (the
// median over the steps), from a Trainer of config that ran one step first.
struct ProductTime {
  StepProduct product;
  double seconds = 0.0;
};
std::vector<ProductTime> profile_step_products(const TrainerConfig& config, int steps);

// The step's non-product half, op by op (kernels.h OpTimer), with two summary rows: "products"
// (every matrix product) and "rest" (the step's time minus all timed ops and products: RoPE,
// residual adds, the attention's own copies and bookkeeping). Each a median over `steps` steps.
struct OpTime {
  std::string name;
  double seconds;
};
std::vector<OpTime> profile_step_ops(const TrainerConfig& config, int steps);

// Runs `reps` products of one layout ("nn", "nt" or "tn") with C (m,n) and inner dimension k on
// operands drawn once, and returns a checksum. FLOPs = reps * 2 m n k.
float product_probe(const std::string& layout, int m, int n, int k, int reps);

// The "Train a GPT on text" preset (web/src/settings/presets.ts) as a Trainer config: the text
// task, 2 pre-norm blocks (LayerNorm, RoPE, GELU), D 64, H 4, T 64, B 16, Adam lr 3e-3, seed 0.
// The speculative and tiled benchmarks run on it.
TrainerConfig text_preset_config();

// The generation benchmark: a GPT-like model, 2 pre-norm layers (LayerNorm), D 64,
// H 4, C 64, RoPE, a GELU FFN, V 60.
ModelConfig generation_bench_config();

// Greedy decoding from the one-token prompt {0}: n_tokens next-token predictions (n_tokens
// pushes into a Decoder with the KV cache, or into the uncached reference), each taking the
// argmax. Returns the sum of the tokens so the work cannot be optimised away. Tokens/s =
// n_tokens / the time it takes.
int64_t generation_probe(TinyAttentionLM& model, int n_tokens, bool use_cache);

}  // namespace attn
