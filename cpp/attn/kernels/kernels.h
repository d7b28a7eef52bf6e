// Matrix products in the three layouts the forward and backward passes need, plus the plain
// references the tests compare them against. With WebAssembly SIMD they run our f32x4
// kernels (wasm_simd128.h); elsewhere Eigen's products, which measure faster natively.
// C may not alias A or B. Shapes are checked; a mismatch throws std::invalid_argument.
#pragma once

#include "attn/base/tensor.h"

namespace attn {

// C (M,N) = alpha * A (M,K) B (K,N)
void matmul_nn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f);
// C (M,N) = alpha * A (M,K) B^T, B (N,K); then, given bias (N floats), C += bias on every row
// (rounded as a separate add: the same numbers as adding it afterwards).
void matmul_nt(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f,
               const float* bias = nullptr);
// C (M,N) = alpha * A^T B, A (K,M), B (K,N)
void matmul_tn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f);

// Triple loops with a double accumulator: the slow, obvious version of all three layouts.
void matmul_reference(ConstMatRef A, bool transpose_a, ConstMatRef B, bool transpose_b,
                      MatRef C, float alpha = 1.0f);

// Stable softmax of one contiguous row x (n) -> y (n); y may alias x. -inf entries give exactly
// 0; an all -inf row gives zeros. The SIMD build uses an f32x4 exp (Cephes' polynomial, about
// 1 ulp); elsewhere Eigen's vectorised exp.
void softmax_row(const float* x, float* y, Eigen::Index n);
// The plain loop with std::exp that softmax_row is tested against.
void softmax_row_reference(const float* x, float* y, Eigen::Index n);

// Backward of y = softmax(x) for one row: dx = y * (dy - sum(dy * y)). dx may alias dy.
void softmax_backward_row(const float* y, const float* dy, float* dx, Eigen::Index n);
void softmax_backward_row_reference(const float* y, const float* dy, float* dx, Eigen::Index n);

// Row helpers of the loss and the linear layers (SIMD in the wasm SIMD build, Eigen elsewhere).
// The largest of x[0..n) (n >= 1). For rows with NaN the result is unspecified (as Eigen's).
float row_max(const float* x, Eigen::Index n);
// The index of the first largest entry of x[0..n) (n >= 1), as Eigen's maxCoeff(&index): NaN
// entries are skipped, and a NaN x[0] gives 0.
Eigen::Index row_argmax(const float* x, Eigen::Index n);
// y = exp(x - shift) for n entries (y may be nullptr: the values are only summed); returns their
// float sum, the same with or without y. The SIMD build uses the same f32x4 exp as softmax_row,
// elsewhere Eigen's exp (evaluated twice when y is given, so the sum's rounding cannot depend on
// y's alignment).
float exp_shifted_sum(const float* x, float shift, float* y, Eigen::Index n);
// out (C) = the column sums of x (R,C), each summed over the rows in order.
void col_sums(ConstMatRef x, float* out);

// One Adam update of n values, in PyTorch's order of operations (see adam.h), given the
// step's scalars: step_size = lr / (1 - beta1^t), bc2_sqrt = sqrt(1 - beta2^t), and
// one_b1 = 1 - beta1, one_b2 = 1 - beta2 (computed in double by the caller).
void adam_kernel(float* p, const float* g, float* m, float* v, Eigen::Index n, float beta1,
                 float beta2, float one_b1, float one_b2, float eps, float step_size,
                 float bc2_sqrt);
void adam_kernel_reference(float* p, const float* g, float* m, float* v, Eigen::Index n,
                           float beta1, float beta2, float one_b1, float one_b2, float eps,
                           float step_size, float bc2_sqrt);

}  // namespace attn
