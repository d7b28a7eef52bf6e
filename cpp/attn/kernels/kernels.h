// Matrix products in the three layouts the forward and backward passes need, plus the plain
// references the tests compare them against. With WebAssembly SIMD they run our f32x4
// kernels (wasm_simd128.h); elsewhere Eigen's products, which measure faster natively.
// C may not alias A or B. Shapes are checked; a mismatch throws std::invalid_argument.
#pragma once

#include <chrono>
#include <vector>

#include "attn/base/tensor.h"

namespace attn {

// The causal structure of an attention product (square operands), which the SIMD kernels skip:
// kLowerA: A as stored is lower triangular (A(i,k) = 0 for k > i, zeros the kernels may read next
// to the diagonal; the blocks of 4 rows wholly above it are not read); kLowerC: only C's lower
// triangle (j <= i) is wanted, the rest is left unspecified. Elsewhere (Eigen) the full product
// is computed, which gives the same wanted entries.
enum class Causal { kNone, kLowerA, kLowerC };

// C (M,N) = alpha * A (M,K) B (K,N)
void matmul_nn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f,
               Causal causal = Causal::kNone);
// C (M,N) = alpha * A (M,K) B^T, B (N,K); then, given bias (N floats), C += bias on every row
// (rounded as a separate add: the same numbers as adding it afterwards).
void matmul_nt(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f,
               const float* bias = nullptr, Causal causal = Causal::kNone);
// C (M,N) = alpha * A^T B, A (K,M), B (K,N)
void matmul_tn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha = 1.0f,
               Causal causal = Causal::kNone);

// One matrix product as the kernels ran it: layout "nn", "nt" or "tn", C (m,n), inner dimension
// k, and its wall-clock time in seconds.
struct ProductRecord {
  const char* layout;
  int m, n, k;
  double seconds;
};
// For the benchmarks: while log is set (not nullptr), every matmul_* call appends its record.
// Only the thread that set it records; set nullptr to stop.
void set_product_log(std::vector<ProductRecord>* log);

// One non-product op of a step as it ran (name a string literal, e.g. "layernorm forward") and its
// wall-clock time in seconds.
struct OpRecord {
  const char* name;
  double seconds;
};
// For the benchmarks' per-op profile: while log is set, every OpTimer appends its record. When it
// is not set an OpTimer costs one thread-local load and branch, and reads no clock.
void set_op_log(std::vector<OpRecord>* log);
// Times the scope it lives in into the op log when one is set (set_op_log).
class OpTimer {
 public:
  explicit OpTimer(const char* name);
  ~OpTimer();
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

// Triple loops with a double accumulator: the slow, obvious version of all three layouts.
void matmul_reference(ConstMatRef A, bool transpose_a, ConstMatRef B, bool transpose_b,
                      MatRef C, float alpha = 1.0f);

// Stable softmax of one contiguous row x (n) -> y (n); y may alias x. -inf entries give exactly
// 0; an all -inf row gives zeros. The SIMD build uses an f32x4 exp (Cephes' polynomial, about
// 1 ulp); elsewhere Eigen's vectorised exp.
void softmax_row(const float* x, float* y, Eigen::Index n);
// The plain loop with std::exp that softmax_row is tested against.
void softmax_row_reference(const float* x, float* y, Eigen::Index n);

// softmax_row in place on x (n) whose entries from `valid` on are taken as -inf and never read:
// the same numbers, bit for bit, as masking them and calling softmax_row; they become 0.
void softmax_row_prefix(float* x, Eigen::Index valid, Eigen::Index n);

// Backward of y = softmax(x) for one row: dx = y * (dy - sum(dy * y)). dx may alias dy.
void softmax_backward_row(const float* y, const float* dy, float* dx, Eigen::Index n);
void softmax_backward_row_reference(const float* y, const float* dy, float* dx, Eigen::Index n);
// softmax_backward_row where y is 0 from `valid` on: dy there is never read and dx is 0. The same
// numbers as softmax_backward_row on a finite dy (dx may alias dy).
void softmax_backward_row_prefix(const float* y, const float* dy, float* dx, Eigen::Index valid,
                                 Eigen::Index n);

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

// GELU, exact (erf) form: gelu(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), and its derivative
// gelu'(x) = Phi(x) + x phi(x); each evaluated in double and rounded once.
float gelu(float x);
float gelu_grad(float x);
// h = gelu(u) for n entries (h may alias u). The SIMD build evaluates erf in float, as a
// rational function on [-4, 4] (within a few ulps; the float erf is +-1 beyond), elsewhere gelu().
void gelu_rows(const float* u, float* h, Eigen::Index n);
void gelu_rows_reference(const float* u, float* h, Eigen::Index n);
// dh *= gelu_grad(u) for n entries (the same float erf, and exp4, in the SIMD build).
void gelu_backward_rows(const float* u, float* dh, Eigen::Index n);
void gelu_backward_rows_reference(const float* u, float* dh, Eigen::Index n);

// The GELU's forward fused with the factor its backward needs, in one pass sharing Phi(u) (one
// erf per entry where gelu_rows then gelu_backward_rows take two): h = gelu(u) and
// dgelu = gelu'(u) for n entries (h may alias u). Bit for bit the unfused twin's numbers.
void gelu_forward_rows(const float* u, float* h, float* dgelu, Eigen::Index n);
// The unfused twin: gelu_rows(u, h), then dgelu = 1 and gelu_backward_rows(u, dgelu).
void gelu_forward_rows_reference(const float* u, float* h, float* dgelu, Eigen::Index n);

// One row of LayerNorm (center: subtract the mean) or RMSNorm: x (n) -> xhat = (x - mean) * rstd
// (n), y = xhat * w (+ b, unless b is nullptr) (n); returns rstd = 1 / sqrt(var + eps). y may
// alias x. The reference accumulates in double; the SIMD build in float, 4 lanes.
float norm_row(const float* x, const float* w, const float* b, bool center, double eps,
               Eigen::Index n, float* xhat, float* y);
float norm_row_reference(const float* x, const float* w, const float* b, bool center, double eps,
                         Eigen::Index n, float* xhat, float* y);
// Its backward for dx alone, given dy, the cached xhat and rstd: with g = dy * w,
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) (mean(g) only with center). dx may alias dy.
void norm_backward_row(const float* dy, const float* xhat, const float* w, float rstd, bool center,
                       Eigen::Index n, float* dx);
void norm_backward_row_reference(const float* dy, const float* xhat, const float* w, float rstd,
                                 bool center, Eigen::Index n, float* dx);
// out (C) = the column sums of a * b (R,C, elementwise), each summed over the rows in order.
void col_sums_product(ConstMatRef a, ConstMatRef b, float* out);

// A norm layer's whole backward over dy (N,D), given the cached xhat (N,D) and rstd (N):
// dw (D) = col_sums_product(dy, xhat), db (D, unless nullptr) = col_sums(dy), and every row's dx
// (N,D) as norm_backward_row (dx may alias dy: a row of dy is summed before its dx is written).
// The SIMD build on one thread reads dy and xhat once (one pass over the rows, each column still
// summed over the rows in order: bit for bit the unfused twin); elsewhere it runs the twin.
void norm_backward_rows(ConstMatRef dy, ConstMatRef xhat, const float* rstd, const float* w,
                        bool center, MatRef dx, float* dw, float* db);
// The unfused twin: col_sums_product, col_sums, then norm_backward_row on each row (three passes).
void norm_backward_rows_reference(ConstMatRef dy, ConstMatRef xhat, const float* rstd,
                                  const float* w, bool center, MatRef dx, float* dw, float* db);

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
