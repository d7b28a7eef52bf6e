// Work counts and a GEMM probe for the benchmarks (native `attn bench` and the wasm bench).
// Timing is done by the caller: std::chrono natively, performance.now() in JS.
#pragma once

#include <cstdint>

#include "attn/trainer.h"

namespace attn {

// Floating-point operations of one training step (forward + backward; matmuls only, counted
// as 2*m*n*k each, every layer's; the backward does twice the forward's matmul work).
double train_step_flops(const TrainerConfig& config);

// Runs `reps` products C = A B (matmul_nn: the kernel our layers use) of (n,n) matrices and
// returns a checksum so the work cannot be optimised away. FLOPs = reps * 2 n^3.
float gemm_probe(int n, int reps);

}  // namespace attn
