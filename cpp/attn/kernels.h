// Matrix products in the three layouts the forward and backward passes need, plus the plain
// references the tests compare them against. With WebAssembly SIMD they run our f32x4
// kernels (wasm_simd128.h); elsewhere Eigen's products, which measure faster natively.
// C may not alias A or B. Shapes are checked; a mismatch throws std::invalid_argument.
#pragma once

#include "attn/tensor.h"

namespace attn {

// C (M,N) = alpha * A (M,K) B (K,N)
void matmul_nn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f);
// C (M,N) = alpha * A (M,K) B^T, B (N,K)
void matmul_nt(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f);
// C (M,N) = alpha * A^T B, A (K,M), B (K,N)
void matmul_tn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f);

// Triple loops with a double accumulator: the slow, obvious version of all three layouts.
void matmul_reference(ConstMatRef A, bool transpose_a, ConstMatRef B, bool transpose_b,
                      MatRef C, float alpha = 1.0f);

// True when this build runs the hand-written WebAssembly SIMD kernels.
bool simd_kernels();

}  // namespace attn
