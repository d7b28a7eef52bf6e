#include "attn/kernels.h"

#include <cmath>
#include <limits>
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

// exp of 4 floats: n = round(x / ln 2), r = x - n ln 2 (in two parts), exp(r) by Cephes'
// degree-6 polynomial, times 2^n built in the exponent bits. Below ln(FLT_MIN) (and -inf) the
// result is exactly 0; above the float range, +inf; NaN stays NaN.
inline v128_t exp4(v128_t x) {
  const v128_t lo = wasm_f32x4_splat(-87.33654475f), hi = wasm_f32x4_splat(88.72283905f);
  const v128_t xc = wasm_f32x4_min(wasm_f32x4_max(x, lo), hi);
  const v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(xc, wasm_f32x4_splat(1.44269504088896341f)));
  v128_t r = wasm_f32x4_sub(xc, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t y = wasm_f32x4_splat(1.9875691500E-4f);
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(1.3981999507E-3f));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(8.3334519073E-3f));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(4.1665795894E-2f));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(1.6666665459E-1f));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(5.0000001201E-1f));
  y = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(y, r), r), r);
  y = wasm_f32x4_add(y, wasm_f32x4_splat(1.0f));
  // 2^n for n in [-126, 128): (n + 127) << 23; n = 128 (x near hi) is split as 2^127 * 2.
  const v128_t ni = wasm_i32x4_trunc_sat_f32x4(n);
  const v128_t big = wasm_i32x4_gt(ni, wasm_i32x4_splat(127));
  const v128_t e = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_sub(ni, wasm_v128_and(big, wasm_i32x4_splat(1))), wasm_i32x4_splat(127)), 23);
  y = wasm_f32x4_mul(y, e);
  y = wasm_v128_bitselect(wasm_f32x4_mul(y, wasm_f32x4_splat(2.0f)), y, big);
  y = wasm_v128_bitselect(wasm_f32x4_splat(INFINITY), y, wasm_f32x4_gt(x, hi));
  y = wasm_v128_andnot(y, wasm_f32x4_lt(x, lo));  // exactly 0 below the range
  return wasm_v128_bitselect(x, y, wasm_f32x4_ne(x, x));  // NaN in, NaN out
}

inline float hsum(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) +
         wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

#endif  // __wasm_simd128__

}  // namespace

void softmax_row_reference(const float* x, float* y, Eigen::Index n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  float mx = ninf;
  for (Eigen::Index j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  if (mx == ninf) {  // fully masked row
    for (Eigen::Index j = 0; j < n; ++j) y[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (Eigen::Index j = 0; j < n; ++j) sum += (y[j] = std::exp(x[j] - mx));
  const float inv = 1.0f / sum;
  for (Eigen::Index j = 0; j < n; ++j) y[j] *= inv;
}

void softmax_row(const float* x, float* y, Eigen::Index n) {
  const float ninf = -std::numeric_limits<float>::infinity();
#ifdef __wasm_simd128__
  const Eigen::Index n4 = n - n % 4;
  v128_t vmax = wasm_f32x4_splat(ninf);
  for (Eigen::Index j = 0; j < n4; j += 4) vmax = wasm_f32x4_pmax(vmax, wasm_v128_load(x + j));
  float mx = std::max(std::max(wasm_f32x4_extract_lane(vmax, 0), wasm_f32x4_extract_lane(vmax, 1)),
                      std::max(wasm_f32x4_extract_lane(vmax, 2), wasm_f32x4_extract_lane(vmax, 3)));
  for (Eigen::Index j = n4; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  if (mx == ninf) {
    for (Eigen::Index j = 0; j < n; ++j) y[j] = 0.0f;
    return;
  }
  const v128_t vm = wasm_f32x4_splat(mx);
  v128_t vsum = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < n4; j += 4) {
    const v128_t e = exp4(wasm_f32x4_sub(wasm_v128_load(x + j), vm));
    wasm_v128_store(y + j, e);
    vsum = wasm_f32x4_add(vsum, e);
  }
  float sum = hsum(vsum);
  if (n4 < n) {  // the last n % 4 entries through the same exp, padded with -inf (exp = 0)
    alignas(16) float tail[4] = {ninf, ninf, ninf, ninf};
    for (Eigen::Index j = n4; j < n; ++j) tail[j - n4] = x[j] - mx;
    wasm_v128_store(tail, exp4(wasm_v128_load(tail)));
    for (Eigen::Index j = n4; j < n; ++j) sum += (y[j] = tail[j - n4]);
  }
  const v128_t inv = wasm_f32x4_splat(1.0f / sum);
  for (Eigen::Index j = 0; j < n4; j += 4) wasm_v128_store(y + j, wasm_f32x4_mul(wasm_v128_load(y + j), inv));
  for (Eigen::Index j = n4; j < n; ++j) y[j] *= 1.0f / sum;
#else
  float mx = ninf;
  for (Eigen::Index j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  if (mx == ninf) {
    for (Eigen::Index j = 0; j < n; ++j) y[j] = 0.0f;
    return;
  }
  // Eigen's vectorised exp clamps, so exp(-inf) is tiny rather than 0: select masked cells.
  const Eigen::Map<const Eigen::ArrayXf> xr(x, n);
  Eigen::Map<Eigen::ArrayXf> yr(y, n);
  yr = (xr == ninf).select(0.0f, (xr - mx).exp());
  yr *= 1.0f / yr.sum();
#endif
}

// Backward of: y_j = exp(x_j) / sum_k exp(x_k).
// dL/dx_j = sum_i dy_i * y_i * (delta_ij - y_j) = y_j * (dy_j - sum_i dy_i * y_i).
void softmax_backward_row_reference(const float* y, const float* dy, float* dx, Eigen::Index n) {
  float dot = 0.0f;
  for (Eigen::Index j = 0; j < n; ++j) dot += dy[j] * y[j];
  for (Eigen::Index j = 0; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
}

void softmax_backward_row(const float* y, const float* dy, float* dx, Eigen::Index n) {
#ifdef __wasm_simd128__
  const Eigen::Index n4 = n - n % 4;
  v128_t vdot = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < n4; j += 4)
    vdot = wasm_f32x4_add(vdot, wasm_f32x4_mul(wasm_v128_load(dy + j), wasm_v128_load(y + j)));
  float dot = hsum(vdot);
  for (Eigen::Index j = n4; j < n; ++j) dot += dy[j] * y[j];
  const v128_t vd = wasm_f32x4_splat(dot);
  for (Eigen::Index j = 0; j < n4; j += 4)
    wasm_v128_store(dx + j, wasm_f32x4_mul(wasm_v128_load(y + j),
                                           wasm_f32x4_sub(wasm_v128_load(dy + j), vd)));
  for (Eigen::Index j = n4; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
#else
  softmax_backward_row_reference(y, dy, dx, n);
#endif
}

void adam_kernel_reference(float* p, const float* g, float* m, float* v, Eigen::Index n,
                           float beta1, float beta2, float one_b1, float one_b2, float eps,
                           float step_size, float bc2_sqrt) {
  for (Eigen::Index i = 0; i < n; ++i) {
    m[i] = m[i] * beta1 + g[i] * one_b1;          // exp_avg.mul_(b1).add_(g, alpha=1-b1)
    v[i] = v[i] * beta2 + one_b2 * g[i] * g[i];  // exp_avg_sq.mul_(b2).addcmul_(g, g, 1-b2)
    const float denom = std::sqrt(v[i]) / bc2_sqrt + eps;
    p[i] += (-step_size * m[i]) / denom;  // addcdiv_(m, denom, value=-step_size)
  }
}

void adam_kernel(float* p, const float* g, float* m, float* v, Eigen::Index n, float beta1,
                 float beta2, float one_b1, float one_b2, float eps, float step_size,
                 float bc2_sqrt) {
#ifdef __wasm_simd128__
  // The same operations in the same order, 4 lanes at a time: bit-identical to the reference.
  const v128_t b1 = wasm_f32x4_splat(beta1), b2 = wasm_f32x4_splat(beta2);
  const v128_t ob1 = wasm_f32x4_splat(one_b1), ob2 = wasm_f32x4_splat(one_b2);
  const v128_t ve = wasm_f32x4_splat(eps), vs = wasm_f32x4_splat(-step_size);
  const v128_t vb = wasm_f32x4_splat(bc2_sqrt);
  const Eigen::Index n4 = n - n % 4;
  for (Eigen::Index i = 0; i < n4; i += 4) {
    const v128_t gi = wasm_v128_load(g + i);
    const v128_t mi = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(m + i), b1), wasm_f32x4_mul(gi, ob1));
    const v128_t vi = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(v + i), b2),
                                     wasm_f32x4_mul(wasm_f32x4_mul(ob2, gi), gi));
    const v128_t denom = wasm_f32x4_add(wasm_f32x4_div(wasm_f32x4_sqrt(vi), vb), ve);
    wasm_v128_store(m + i, mi);
    wasm_v128_store(v + i, vi);
    wasm_v128_store(p + i, wasm_f32x4_add(wasm_v128_load(p + i),
                                          wasm_f32x4_div(wasm_f32x4_mul(vs, mi), denom)));
  }
  adam_kernel_reference(p + n4, g + n4, m + n4, v + n4, n - n4, beta1, beta2, one_b1, one_b2, eps,
                        step_size, bc2_sqrt);
#else
  adam_kernel_reference(p, g, m, v, n, beta1, beta2, one_b1, one_b2, eps, step_size, bc2_sqrt);
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
