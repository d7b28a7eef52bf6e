#include "attn/kernels.h"

#include <vector>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace attn {

namespace {

void check_product(Eigen::Index m, Eigen::Index k1, Eigen::Index k2, Eigen::Index n,
                   const MatRef& C, const char* layout) {
  require(k1 == k2, "matmul_", layout, ": inner dimensions differ (", k1, " vs ", k2, ")");
  require(C.rows() == m && C.cols() == n, "matmul_", layout, ": C is (", C.rows(), ",", C.cols(),
          ") but the product is (", m, ",", n, ")");
}

#ifdef __wasm_simd128__

// C (M,N) = alpha * sum_k a(i,k) B[k][j] with a(i,k) = A[i*ars + k*acs]: covers A and A^T.
// K is cut into blocks of kKc; for each block, 8-column panels of B are packed contiguously
// and swept by a register block of 4 rows x 8 columns (8 f32x4 accumulators), so the inner
// loop reads B sequentially from L1. WebAssembly SIMD has no fused multiply-add: mul + add.
constexpr Eigen::Index kKc = 256;

inline v128_t madd(v128_t acc, v128_t a, v128_t b) {
  return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b));
}

// Adds (or, on the first K block, stores) alpha * acc into 4 floats of C.
inline void store4(float* c, v128_t acc, v128_t alpha, bool first) {
  const v128_t v = wasm_f32x4_mul(acc, alpha);
  wasm_v128_store(c, first ? v : wasm_f32x4_add(wasm_v128_load(c), v));
}

// 4 rows x 8 columns over kn steps; panel is (kn,8) contiguous. a(r,k) = a0[r*ars + k*acs].
// When A is transposed (ars == 1) the 4 values of one k are one vector load and 4 lane splats.
inline void block_4x8(const float* a0, Eigen::Index ars, Eigen::Index acs, const float* panel,
                      Eigen::Index kn, float* c, Eigen::Index ldc, v128_t alpha, bool first) {
  v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00;
  for (Eigen::Index k = 0; k < kn; ++k, panel += 8) {
    const v128_t b0 = wasm_v128_load(panel), b1 = wasm_v128_load(panel + 4);
    v128_t a0v, a1v, a2v, a3v;
    if (ars == 1) {
      const v128_t a = wasm_v128_load(a0 + k * acs);
      a0v = wasm_i32x4_shuffle(a, a, 0, 0, 0, 0);
      a1v = wasm_i32x4_shuffle(a, a, 1, 1, 1, 1);
      a2v = wasm_i32x4_shuffle(a, a, 2, 2, 2, 2);
      a3v = wasm_i32x4_shuffle(a, a, 3, 3, 3, 3);
    } else {
      const float* ak = a0 + k * acs;
      a0v = wasm_f32x4_splat(ak[0]);
      a1v = wasm_f32x4_splat(ak[ars]);
      a2v = wasm_f32x4_splat(ak[2 * ars]);
      a3v = wasm_f32x4_splat(ak[3 * ars]);
    }
    c00 = madd(c00, a0v, b0);
    c01 = madd(c01, a0v, b1);
    c10 = madd(c10, a1v, b0);
    c11 = madd(c11, a1v, b1);
    c20 = madd(c20, a2v, b0);
    c21 = madd(c21, a2v, b1);
    c30 = madd(c30, a3v, b0);
    c31 = madd(c31, a3v, b1);
  }
  store4(c, c00, alpha, first);
  store4(c + 4, c01, alpha, first);
  store4(c + ldc, c10, alpha, first);
  store4(c + ldc + 4, c11, alpha, first);
  store4(c + 2 * ldc, c20, alpha, first);
  store4(c + 2 * ldc + 4, c21, alpha, first);
  store4(c + 3 * ldc, c30, alpha, first);
  store4(c + 3 * ldc + 4, c31, alpha, first);
}

// One row x 8 columns over kn steps (the rows left over after blocks of 4).
inline void block_1x8(const float* a0, Eigen::Index acs, const float* panel, Eigen::Index kn,
                      float* c, v128_t alpha, bool first) {
  v128_t c0 = wasm_f32x4_splat(0.0f), c1 = c0;
  for (Eigen::Index k = 0; k < kn; ++k, panel += 8) {
    const v128_t a = wasm_f32x4_splat(a0[k * acs]);
    c0 = madd(c0, a, wasm_v128_load(panel));
    c1 = madd(c1, a, wasm_v128_load(panel + 4));
  }
  store4(c, c0, alpha, first);
  store4(c + 4, c1, alpha, first);
}

void gemm_simd(Eigen::Index M, Eigen::Index N, Eigen::Index K, const float* A, Eigen::Index ars,
               Eigen::Index acs, const float* B, Eigen::Index ldb, float* C, Eigen::Index ldc,
               float alpha) {
  alignas(16) static float panel[kKc * 8];
  const v128_t va = wasm_f32x4_splat(alpha);
  const Eigen::Index N8 = N - N % 8;
  for (Eigen::Index k0 = 0; k0 < K; k0 += kKc) {
    const Eigen::Index kn = std::min(kKc, K - k0);
    const bool first = k0 == 0;
    const float* Ak = A + k0 * acs;
    const float* Bk = B + k0 * ldb;
    for (Eigen::Index j = 0; j < N8; j += 8) {
      for (Eigen::Index k = 0; k < kn; ++k) {  // pack B[k0:k0+kn, j:j+8]
        wasm_v128_store(panel + 8 * k, wasm_v128_load(Bk + k * ldb + j));
        wasm_v128_store(panel + 8 * k + 4, wasm_v128_load(Bk + k * ldb + j + 4));
      }
      Eigen::Index i = 0;
      for (; i + 4 <= M; i += 4)
        block_4x8(Ak + i * ars, ars, acs, panel, kn, C + i * ldc + j, ldc, va, first);
      for (; i < M; ++i) block_1x8(Ak + i * ars, acs, panel, kn, C + i * ldc + j, va, first);
    }
    for (Eigen::Index j = N8; j < N; ++j)  // the last N % 8 columns, plain loops
      for (Eigen::Index i = 0; i < M; ++i) {
        const float* a0 = Ak + i * ars;
        float s = 0.0f;
        for (Eigen::Index k = 0; k < kn; ++k) s += a0[k * acs] * Bk[k * ldb + j];
        float* cp = C + i * ldc + j;
        *cp = first ? alpha * s : *cp + alpha * s;
      }
  }
  if (K == 0)
    for (Eigen::Index i = 0; i < M; ++i)
      for (Eigen::Index j = 0; j < N; ++j) C[i * ldc + j] = 0.0f;
}

// B (N,K) -> its transpose (K,N), contiguous, in a buffer that grows to the largest size seen
// and is then reused, so steady-state training allocates nothing.
const float* pack_transposed(ConstMatRef B) {
  static std::vector<float> buffer;
  const Eigen::Index N = B.rows(), K = B.cols();
  if (buffer.size() < static_cast<size_t>(N * K)) buffer.resize(static_cast<size_t>(N * K));
  Eigen::Map<Mat>(buffer.data(), K, N) = B.transpose();
  return buffer.data();
}

#endif  // __wasm_simd128__

}  // namespace

bool simd_kernels() {
#ifdef __wasm_simd128__
  return true;
#else
  return false;
#endif
}

void matmul_nn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha) {
  check_product(A.rows(), A.cols(), B.rows(), B.cols(), C, "nn");
#ifdef __wasm_simd128__
  gemm_simd(A.rows(), B.cols(), A.cols(), A.data(), A.outerStride(), 1, B.data(), B.outerStride(),
            C.data(), C.outerStride(), alpha);
#else
  if (alpha == 1.0f)
    C.noalias() = A * B;
  else
    C.noalias() = alpha * (A * B);
#endif
}

void matmul_nt(ConstMatRef A, ConstMatRef B, MatRef C, float alpha) {
  check_product(A.rows(), A.cols(), B.cols(), B.rows(), C, "nt");
#ifdef __wasm_simd128__
  const float* bt = pack_transposed(B);
  gemm_simd(A.rows(), B.rows(), A.cols(), A.data(), A.outerStride(), 1, bt, B.rows(), C.data(),
            C.outerStride(), alpha);
#else
  if (alpha == 1.0f)
    C.noalias() = A * B.transpose();
  else
    C.noalias() = alpha * (A * B.transpose());
#endif
}

void matmul_tn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha) {
  check_product(A.cols(), A.rows(), B.rows(), B.cols(), C, "tn");
#ifdef __wasm_simd128__
  gemm_simd(A.cols(), B.cols(), A.rows(), A.data(), 1, A.outerStride(), B.data(), B.outerStride(),
            C.data(), C.outerStride(), alpha);
#else
  if (alpha == 1.0f)
    C.noalias() = A.transpose() * B;
  else
    C.noalias() = alpha * (A.transpose() * B);
#endif
}

void matmul_reference(ConstMatRef A, bool ta, ConstMatRef B, bool tb, MatRef C, float alpha) {
  const Eigen::Index M = ta ? A.cols() : A.rows(), K = ta ? A.rows() : A.cols();
  const Eigen::Index K2 = tb ? B.cols() : B.rows(), N = tb ? B.rows() : B.cols();
  check_product(M, K, K2, N, C, "reference");
  for (Eigen::Index i = 0; i < M; ++i)
    for (Eigen::Index j = 0; j < N; ++j) {
      double s = 0.0;
      for (Eigen::Index k = 0; k < K; ++k)
        s += double(ta ? A(k, i) : A(i, k)) * double(tb ? B(j, k) : B(k, j));
      C(i, j) = static_cast<float>(alpha * s);
    }
}

}  // namespace attn
