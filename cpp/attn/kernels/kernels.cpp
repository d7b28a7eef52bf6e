#include "attn/kernels/kernels.h"

#include "attn/base/parallel.h"

#include <chrono>
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

thread_local std::vector<ProductRecord>* product_log = nullptr;

// Times one product into product_log when it is set (set_product_log).
class ProductTimer {
 public:
  ProductTimer(const char* layout, Eigen::Index m, Eigen::Index n, Eigen::Index k)
      : layout_(layout), m_(int(m)), n_(int(n)), k_(int(k)) {
    if (product_log) t0_ = std::chrono::steady_clock::now();
  }
  ~ProductTimer() {
    if (!product_log) return;
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0_;
    product_log->push_back({layout_, m_, n_, k_, dt.count()});
  }

 private:
  const char* layout_;
  int m_, n_, k_;
  std::chrono::steady_clock::time_point t0_;
};

#ifdef __wasm_simd128__

// C (M,N) = alpha * sum_k a(i,k) b(k,j) (+ bias[j]) with a(i,k) = A[i*ars + k*acs] and
// b(k,j) = B[k*brs + j*bcs]: the strides cover A, A^T, B and B^T without copying the operands.
// K is cut into blocks of kKc. For each block, the columns are swept 8 at a time, then 4, then the
// last 1-3 as a 4-wide panel padded with zeros, by register blocks of 4 rows (then the last 1-3) x
// 8 or 4 columns (f32x4 accumulators). A panel of B is read in place when its rows are contiguous
// and few rows of A reuse it, else packed contiguously first (transposed B is always packed).
// WebAssembly SIMD has no fused multiply-add: mul + add (madd; relaxed SIMD's fused one in that
// build). Every entry of C is the same sum in the
// same order whatever block computes it, so splitting C's rows or columns into parts (threads)
// gives bit-identical results.
constexpr Eigen::Index kKc = 256;
// Below this many rows of A, a panel with contiguous rows is read in place rather than packed.
constexpr Eigen::Index kPackMinRows = 32;

// The causal structure a product may skip, in the a(i,k) / C(i,j) view: a(i,k) = 0 for k > i
// (a_lower) or for k < i (a_upper), or only C(i,j) with j <= i wanted (c_lower).
struct Skip {
  bool a_lower = false, a_upper = false, c_lower = false;
};

// acc + a * b. The relaxed-SIMD build (ATTN_RELAXED_SIMD, clang's __wasm_relaxed_simd__) fuses
// it into one f32x4.relaxed_madd: one rounding where the engine has FMA (x86 with FMA3, ARM64),
// two where it has not, so that build's sums may differ from this one's in their last bits
// (tests/cpp/test_kernels.cpp, "relaxed"). Every other build multiplies, then adds.
inline v128_t madd(v128_t acc, v128_t a, v128_t b) {
#ifdef __wasm_relaxed_simd__
  return wasm_f32x4_relaxed_madd(a, b, acc);
#else
  return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b));
#endif
}

// Adds (or, on the first K block, stores) alpha * acc into 4 floats of C, then on the last K
// block adds the bias: the same roundings as a product followed by a separate bias add.
inline void store4(float* c, v128_t acc, v128_t alpha, bool first, const float* bias) {
  v128_t v = wasm_f32x4_mul(acc, alpha);
  if (!first) v = wasm_f32x4_add(wasm_v128_load(c), v);
  if (bias) v = wasm_f32x4_add(v, wasm_v128_load(bias));
  wasm_v128_store(c, v);
}

// R rows (1 to 4) x 4*NV columns (NV = 2 or 1) over kn steps. a(r,k) = a0[r*ars + k*acs];
// b(k, 4v..4v+3) = b[k*bs + 4v..]. Each a(r,k) is splatted from memory (a load, no shuffle).
// bias (or nullptr) points at the block's first column.
template <int R, int NV>
inline void block(const float* a0, Eigen::Index ars, Eigen::Index acs, const float* b,
                  Eigen::Index bs, Eigen::Index kn, float* c, Eigen::Index ldc, v128_t alpha,
                  bool first, const float* bias) {
  v128_t acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_splat(0.0f);
  for (Eigen::Index k = 0; k < kn; ++k, b += bs) {
    v128_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = wasm_v128_load(b + 4 * v);
    const float* ak = a0 + k * acs;
    for (int r = 0; r < R; ++r) {
      const v128_t av = wasm_v128_load32_splat(ak + r * ars);
      for (int v = 0; v < NV; ++v) acc[r][v] = madd(acc[r][v], av, bv[v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      store4(c + r * ldc + 4 * v, acc[r][v], alpha, first, bias ? bias + 4 * v : nullptr);
}

// Rows [i, i + r) (r = 1..4) of one column block: block<r, NV>.
template <int NV>
inline void block_rows(int r, const float* a0, Eigen::Index ars, Eigen::Index acs, const float* b,
                       Eigen::Index bs, Eigen::Index kn, float* c, Eigen::Index ldc, v128_t alpha,
                       bool first, const float* bias) {
  switch (r) {
    case 4: block<4, NV>(a0, ars, acs, b, bs, kn, c, ldc, alpha, first, bias); break;
    case 3: block<3, NV>(a0, ars, acs, b, bs, kn, c, ldc, alpha, first, bias); break;
    case 2: block<2, NV>(a0, ars, acs, b, bs, kn, c, ldc, alpha, first, bias); break;
    default: block<1, NV>(a0, ars, acs, b, bs, kn, c, ldc, alpha, first, bias); break;
  }
}

// Columns [j, j + 4*NV) of C for rows [0, M), over the K block [k0, k0 + kn) whose panel is b
// (row k - k0 at b + (k - k0) * bs). Skips what `skip` says is zero or unwanted.
template <int NV>
void column_block(Eigen::Index M, Eigen::Index j, const float* A, Eigen::Index ars,
                  Eigen::Index acs, const float* b, Eigen::Index bs, Eigen::Index k0,
                  Eigen::Index kn, float* c, Eigen::Index ldc, v128_t alpha, bool first,
                  const float* bias, Skip skip) {
  // c_lower: rows below the block's first column only (whole blocks of 4 from row 0).
  for (Eigen::Index i = skip.c_lower ? j / 4 * 4 : 0; i < M; i += 4) {
    const int r = int(std::min<Eigen::Index>(4, M - i));
    Eigen::Index lo = k0, hi = k0 + kn;  // the k range of rows [i, i + r) in this block
    if (skip.a_lower) hi = std::min(hi, i + r);
    if (skip.a_upper) lo = std::max(lo, i);
    const Eigen::Index n = std::max<Eigen::Index>(0, hi - lo);  // 0: stores alpha * 0
    block_rows<NV>(r, A + i * ars + lo * acs, ars, acs, b + (lo - k0) * bs, bs, n, c + i * ldc,
                   ldc, alpha, first, bias);
  }
}

void gemm_simd(Eigen::Index M, Eigen::Index N, Eigen::Index K, const float* A, Eigen::Index ars,
               Eigen::Index acs, const float* B, Eigen::Index brs, Eigen::Index bcs, float* C,
               Eigen::Index ldc, float alpha, const float* bias = nullptr, Skip skip = {}) {
  alignas(16) float panel[kKc * 8];
  const v128_t va = wasm_f32x4_splat(alpha);
  const bool in_place = bcs == 1 && M < kPackMinRows;
  for (Eigen::Index k0 = 0; k0 < K; k0 += kKc) {
    const Eigen::Index kn = std::min(kKc, K - k0);
    const bool first = k0 == 0;
    const float* bias_k = k0 + kn == K ? bias : nullptr;
    const float* Bk = B + k0 * brs;
    // The panel of columns [j, j + w) over this K block: in place, or packed as (kn, pw) with
    // pw = w rounded up to 4 and the padding zero.
    auto panel_of = [&](Eigen::Index j, Eigen::Index w, Eigen::Index pw,
                        Eigen::Index& bs) -> const float* {
      if (in_place && w == pw) {
        bs = brs;
        return Bk + j;
      }
      bs = pw;
      if (bcs == 1 && w == pw) {
        for (Eigen::Index k = 0; k < kn; ++k)
          for (Eigen::Index jj = 0; jj < w; jj += 4)
            wasm_v128_store(panel + pw * k + jj, wasm_v128_load(Bk + k * brs + j + jj));
      } else {
        for (Eigen::Index jj = 0; jj < pw; ++jj) {
          if (jj >= w) {
            for (Eigen::Index k = 0; k < kn; ++k) panel[pw * k + jj] = 0.0f;
            continue;
          }
          const float* src = Bk + (j + jj) * bcs;
          for (Eigen::Index k = 0; k < kn; ++k) panel[pw * k + jj] = src[k * brs];
        }
      }
      return panel;
    };
    Eigen::Index j = 0, bs = 0;
    for (; j + 8 <= N; j += 8) {
      const float* b = panel_of(j, 8, 8, bs);
      column_block<2>(M, j, A, ars, acs, b, bs, k0, kn, C + j, ldc, va, first,
                      bias_k ? bias_k + j : nullptr, skip);
    }
    if (j + 4 <= N) {
      const float* b = panel_of(j, 4, 4, bs);
      column_block<1>(M, j, A, ars, acs, b, bs, k0, kn, C + j, ldc, va, first,
                      bias_k ? bias_k + j : nullptr, skip);
      j += 4;
    }
    if (j < N) {  // the last 1-3 columns: a zero-padded panel, computed into a 4-wide copy
      const Eigen::Index w = N - j;
      const float* b = panel_of(j, w, 4, bs);
      alignas(16) float tile[4 * 4];
      alignas(16) float bias4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (bias_k)
        for (Eigen::Index jj = 0; jj < w; ++jj) bias4[jj] = bias_k[j + jj];
      for (Eigen::Index i = skip.c_lower ? j / 4 * 4 : 0; i < M; i += 4) {
        const int r = int(std::min<Eigen::Index>(4, M - i));
        for (int rr = 0; rr < r; ++rr)
          for (Eigen::Index jj = 0; jj < 4; ++jj)
            tile[rr * 4 + jj] = !first && jj < w ? C[(i + rr) * ldc + j + jj] : 0.0f;
        // One row block of column_block<1>, on the tile.
        Eigen::Index lo = k0, hi = k0 + kn;
        if (skip.a_lower) hi = std::min(hi, i + r);
        if (skip.a_upper) lo = std::max(lo, i);
        const Eigen::Index n = std::max<Eigen::Index>(0, hi - lo);
        block_rows<1>(r, A + i * ars + lo * acs, ars, acs, b + (lo - k0) * bs, bs, n, tile, 4, va,
                      first, bias_k ? bias4 : nullptr);
        for (int rr = 0; rr < r; ++rr)
          for (Eigen::Index jj = 0; jj < w; ++jj) C[(i + rr) * ldc + j + jj] = tile[rr * 4 + jj];
      }
    }
  }
  if (K == 0)
    for (Eigen::Index i = 0; i < M; ++i)
      for (Eigen::Index j = 0; j < N; ++j) C[i * ldc + j] = bias ? bias[j] : 0.0f;
}

// Threads split element-wise loops in parts of multiples of this many entries, and column sums
// in multiples of this many columns (multiples of 4: the f32x4 lanes and the scalar tail see the
// same entries whatever the split).
constexpr int64_t kElementGrain = 4096;
constexpr int64_t kColumnGrain = 16;

// Products of fewer flops than this run on one thread: a part must outweigh waking a worker.
constexpr double kMinParallelFlops = 1 << 18;

// gemm_simd with C cut into parts for the threads (parallel.h): by rows in blocks of 4 when there
// are enough, else by columns in blocks of 8. Causal products, called per head from the head
// loops (which run in parallel themselves), stay whole.
void gemm(Eigen::Index M, Eigen::Index N, Eigen::Index K, const float* A, Eigen::Index ars,
          Eigen::Index acs, const float* B, Eigen::Index brs, Eigen::Index bcs, float* C,
          Eigen::Index ldc, float alpha, const float* bias, Skip skip) {
  const bool whole = skip.a_lower || skip.a_upper || skip.c_lower ||
                     2.0 * double(M) * double(N) * double(K) < kMinParallelFlops;
  if (whole || (parallel_parts(M, 4) < 2 && parallel_parts(N, 8) < 2)) {
    gemm_simd(M, N, K, A, ars, acs, B, brs, bcs, C, ldc, alpha, bias, skip);
  } else if (M >= N || parallel_parts(N, 8) < 2) {
    parallel_for(M, 4, [&](int, int64_t i0, int64_t i1) {
      gemm_simd(i1 - i0, N, K, A + i0 * ars, ars, acs, B, brs, bcs, C + i0 * ldc, ldc, alpha, bias);
    });
  } else {
    parallel_for(N, 8, [&](int, int64_t j0, int64_t j1) {
      gemm_simd(M, j1 - j0, K, A, ars, acs, B + j0 * bcs, brs, bcs, C + j0, ldc, alpha,
                bias ? bias + j0 : nullptr);
    });
  }
}

// exp of 4 floats: n = round(x / ln 2), r = x - n ln 2 (in two parts), exp(r) by Cephes'
// degree-6 polynomial, times 2^n built in the exponent bits. Below ln(FLT_MIN) (and -inf) the
// result is exactly 0; above the float range, +inf; NaN stays NaN.
// Lanes below the range are computed as exp(0) and then zeroed: clamping them to lo instead would
// make the last multiply produce a subnormal, which costs x86 a microcode assist (~100 cycles)
// per lane, and the masked half of every causal score row goes through here.
inline v128_t exp4(v128_t x) {
  const v128_t lo = wasm_f32x4_splat(-87.33654475f), hi = wasm_f32x4_splat(88.72283905f);
  const v128_t under = wasm_f32x4_lt(x, lo);
  // pmin/pmax are one instruction each (min/max with NaN rules are several); a NaN lane is
  // restored at the end.
  const v128_t xc = wasm_v128_andnot(wasm_f32x4_pmin(wasm_f32x4_pmax(x, lo), hi), under);
  // n = round-to-nearest-even(xc / ln 2) by adding and removing 1.5 * 2^23; the integer n is
  // then the low bits of the sum, with no float-to-int conversion (|n| <= 128).
  const v128_t magic = wasm_f32x4_splat(12582912.0f);
  const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(xc, wasm_f32x4_splat(1.44269504088896341f)), magic);
  const v128_t n = wasm_f32x4_sub(t, magic);
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
  const v128_t ni = wasm_i32x4_sub(t, magic);
  const v128_t big = wasm_i32x4_gt(ni, wasm_i32x4_splat(127));
  const v128_t e = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_sub(ni, wasm_v128_and(big, wasm_i32x4_splat(1))), wasm_i32x4_splat(127)), 23);
  y = wasm_f32x4_mul(y, e);
  y = wasm_v128_bitselect(wasm_f32x4_mul(y, wasm_f32x4_splat(2.0f)), y, big);
  y = wasm_v128_bitselect(wasm_f32x4_splat(INFINITY), y, wasm_f32x4_gt(x, hi));
  y = wasm_v128_andnot(y, under);  // exactly 0 below the range
  return wasm_v128_bitselect(x, y, wasm_f32x4_ne(x, x));  // NaN in, NaN out
}

inline float hsum(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) +
         wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

// erf of 4 floats: x clamped to [-4, 4] (beyond, the float erf is +-1), then x P(x^2) / Q(x^2),
// the rational approximation Eigen and XLA use for float (within a few ulps).
inline v128_t erf4(v128_t z) {
  const v128_t x = wasm_f32x4_pmin(wasm_f32x4_pmax(z, wasm_f32x4_splat(-4.0f)), wasm_f32x4_splat(4.0f));
  const v128_t x2 = wasm_f32x4_mul(x, x);
  auto step = [&](v128_t acc, float c) { return wasm_f32x4_add(wasm_f32x4_mul(x2, acc), wasm_f32x4_splat(c)); };
  v128_t p = wasm_f32x4_splat(-2.72614225801306e-10f);
  p = step(p, 2.77068142495902e-08f);
  p = step(p, -2.10102402082508e-06f);
  p = step(p, -5.69250639462346e-05f);
  p = step(p, -7.34990630326855e-04f);
  p = step(p, -2.95459980854025e-03f);
  p = step(p, -1.60960333262415e-02f);
  p = wasm_f32x4_mul(x, p);
  v128_t q = wasm_f32x4_splat(-1.45660718464996e-05f);
  q = step(q, -2.13374055278905e-04f);
  q = step(q, -1.68282697438203e-03f);
  q = step(q, -7.37332916720468e-03f);
  q = step(q, -1.42647390514189e-02f);
  return wasm_f32x4_div(p, q);
}

// Phi(x) = 0.5 (1 + erf(x / sqrt 2)) of 4 floats; exactly 0 and 1 where erf's argument is past
// -4 and 4 (NaN stays NaN).
inline v128_t phi_cdf4(v128_t x) {
  const v128_t z = wasm_f32x4_mul(x, wasm_f32x4_splat(0.70710678118654752f));
  v128_t cdf = wasm_f32x4_mul(wasm_f32x4_splat(0.5f),
                              wasm_f32x4_add(wasm_f32x4_splat(1.0f), erf4(z)));
  cdf = wasm_v128_andnot(cdf, wasm_f32x4_lt(z, wasm_f32x4_splat(-4.0f)));
  return wasm_v128_bitselect(wasm_f32x4_splat(1.0f), cdf, wasm_f32x4_gt(z, wasm_f32x4_splat(4.0f)));
}

// gelu'(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi), of 4 floats given
// cdf = phi_cdf4(x).
inline v128_t gelu_grad4(v128_t x, v128_t cdf) {
  const v128_t c = wasm_f32x4_splat(float(0.39894228040143267794)), mhalf = wasm_f32x4_splat(-0.5f);
  const v128_t pdf = wasm_f32x4_mul(c, exp4(wasm_f32x4_mul(mhalf, wasm_f32x4_mul(x, x))));
  return madd(cdf, x, pdf);
}

#endif  // __wasm_simd128__

}  // namespace

void set_product_log(std::vector<ProductRecord>* log) { product_log = log; }

namespace {
thread_local std::vector<OpRecord>* op_log = nullptr;
}  // namespace

void set_op_log(std::vector<OpRecord>* log) { op_log = log; }

OpTimer::OpTimer(const char* name) : name_(name) {
  if (op_log) t0_ = std::chrono::steady_clock::now();
}

OpTimer::~OpTimer() {
  if (!op_log) return;
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0_;
  op_log->push_back({name_, dt.count()});
}

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

void softmax_row_prefix(float* x, Eigen::Index valid, Eigen::Index n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  valid = std::max<Eigen::Index>(0, std::min(valid, n));
#ifdef __wasm_simd128__
  // softmax_row's steps on the lanes below `valid`: a masked lane adds -inf to the max and 0 to
  // the sum in softmax_row, so leaving it out changes no rounding.
  const Eigen::Index n4 = n - n % 4, v4 = std::min(n4, (valid + 3) / 4 * 4);
  const v128_t lane = wasm_i32x4_make(0, 1, 2, 3);
  auto load_valid = [&](Eigen::Index j) {  // x[j..j+4) with the lanes from `valid` on -inf
    const v128_t keep = wasm_i32x4_lt(wasm_i32x4_add(lane, wasm_i32x4_splat(int32_t(j))),
                                      wasm_i32x4_splat(int32_t(valid)));
    return wasm_v128_bitselect(wasm_v128_load(x + j), wasm_f32x4_splat(ninf), keep);
  };
  // Only the block holding `valid` (from f4 on, when f4 < v4) needs its lanes masked.
  const Eigen::Index f4 = std::min(n4, valid / 4 * 4);
  v128_t vmax = wasm_f32x4_splat(ninf);
  for (Eigen::Index j = 0; j < f4; j += 4) vmax = wasm_f32x4_pmax(vmax, wasm_v128_load(x + j));
  if (f4 < v4) vmax = wasm_f32x4_pmax(vmax, load_valid(f4));
  float mx = std::max(std::max(wasm_f32x4_extract_lane(vmax, 0), wasm_f32x4_extract_lane(vmax, 1)),
                      std::max(wasm_f32x4_extract_lane(vmax, 2), wasm_f32x4_extract_lane(vmax, 3)));
  for (Eigen::Index j = n4; j < valid; ++j) mx = x[j] > mx ? x[j] : mx;
  if (mx == ninf) {
    for (Eigen::Index j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  const v128_t vm = wasm_f32x4_splat(mx);
  v128_t vsum = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < v4; j += 4) {
    const v128_t e = exp4(wasm_f32x4_sub(j < f4 ? wasm_v128_load(x + j) : load_valid(j), vm));
    wasm_v128_store(x + j, e);
    vsum = wasm_f32x4_add(vsum, e);
  }
  for (Eigen::Index j = v4; j < n4; ++j) x[j] = 0.0f;
  float sum = hsum(vsum);
  if (n4 < n) {
    alignas(16) float tail[4] = {ninf, ninf, ninf, ninf};
    for (Eigen::Index j = n4; j < valid; ++j) tail[j - n4] = x[j] - mx;
    wasm_v128_store(tail, exp4(wasm_v128_load(tail)));
    for (Eigen::Index j = n4; j < n; ++j) sum += (x[j] = tail[j - n4]);
  }
  const v128_t inv = wasm_f32x4_splat(1.0f / sum);
  for (Eigen::Index j = 0; j < v4; j += 4) wasm_v128_store(x + j, wasm_f32x4_mul(wasm_v128_load(x + j), inv));
  for (Eigen::Index j = n4; j < n; ++j) x[j] *= 1.0f / sum;
#else
  for (Eigen::Index j = valid; j < n; ++j) x[j] = ninf;
  softmax_row(x, x, n);
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

void softmax_backward_row_prefix(const float* y, const float* dy, float* dx, Eigen::Index valid,
                                 Eigen::Index n) {
  valid = std::max<Eigen::Index>(0, std::min(valid, n));
#ifdef __wasm_simd128__
  // softmax_backward_row's steps below `valid`: there a lane with y = 0 adds 0 to the dot.
  const Eigen::Index n4 = n - n % 4, v4 = std::min(n4, (valid + 3) / 4 * 4);
  const v128_t lane = wasm_i32x4_make(0, 1, 2, 3);
  // dy[j..j+4) with the lanes from `valid` on 0; only the block holding `valid` needs the mask.
  const Eigen::Index f4 = std::min(n4, valid / 4 * 4);
  auto load_dy = [&](Eigen::Index j) {
    if (j < f4) return wasm_v128_load(dy + j);
    const v128_t keep = wasm_i32x4_lt(wasm_i32x4_add(lane, wasm_i32x4_splat(int32_t(j))),
                                      wasm_i32x4_splat(int32_t(valid)));
    return wasm_v128_and(wasm_v128_load(dy + j), keep);
  };
  v128_t vdot = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < v4; j += 4)
    vdot = wasm_f32x4_add(vdot, wasm_f32x4_mul(load_dy(j), wasm_v128_load(y + j)));
  float dot = hsum(vdot);
  for (Eigen::Index j = n4; j < valid; ++j) dot += dy[j] * y[j];
  const v128_t vd = wasm_f32x4_splat(dot);
  for (Eigen::Index j = 0; j < v4; j += 4)
    wasm_v128_store(dx + j, wasm_f32x4_mul(wasm_v128_load(y + j), wasm_f32x4_sub(load_dy(j), vd)));
  for (Eigen::Index j = v4; j < n4; ++j) dx[j] = 0.0f;
  for (Eigen::Index j = n4; j < n; ++j) dx[j] = j < valid ? y[j] * (dy[j] - dot) : 0.0f;
#else
  float dot = 0.0f;
  for (Eigen::Index j = 0; j < valid; ++j) dot += dy[j] * y[j];
  for (Eigen::Index j = 0; j < n; ++j) dx[j] = j < valid ? y[j] * (dy[j] - dot) : 0.0f;
#endif
}

float row_max(const float* x, Eigen::Index n) {
#ifdef __wasm_simd128__
  if (x[0] != x[0]) return x[0];
  const Eigen::Index n4 = n - n % 4;
  v128_t vmax = wasm_f32x4_splat(x[0]);
  // pmax(a, b) = a < b ? b : a keeps a when b is NaN.
  for (Eigen::Index j = 0; j < n4; j += 4) vmax = wasm_f32x4_pmax(vmax, wasm_v128_load(x + j));
  float mx = std::max(std::max(wasm_f32x4_extract_lane(vmax, 0), wasm_f32x4_extract_lane(vmax, 1)),
                      std::max(wasm_f32x4_extract_lane(vmax, 2), wasm_f32x4_extract_lane(vmax, 3)));
  for (Eigen::Index j = n4; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  return mx;
#else
  return Eigen::Map<const Eigen::ArrayXf>(x, n).maxCoeff();
#endif
}

Eigen::Index row_argmax(const float* x, Eigen::Index n) {
#ifdef __wasm_simd128__
  const float mx = row_max(x, n);
  if (mx != mx) return 0;
  Eigen::Index j = 0;
  while (j < n - 1 && x[j] != mx) ++j;
  return j;
#else
  Eigen::Index arg = 0;
  Eigen::Map<const Eigen::ArrayXf>(x, n).maxCoeff(&arg);
  return arg;
#endif
}

float exp_shifted_sum(const float* x, float shift, float* y, Eigen::Index n) {
#ifdef __wasm_simd128__
  const float ninf = -std::numeric_limits<float>::infinity();
  const Eigen::Index n4 = n - n % 4;
  const v128_t vs = wasm_f32x4_splat(shift);
  v128_t vsum = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < n4; j += 4) {
    const v128_t e = exp4(wasm_f32x4_sub(wasm_v128_load(x + j), vs));
    if (y) wasm_v128_store(y + j, e);
    vsum = wasm_f32x4_add(vsum, e);
  }
  float sum = hsum(vsum);
  if (n4 < n) {  // the last n % 4 entries through the same exp, padded with -inf (exp = 0)
    alignas(16) float tail[4] = {ninf, ninf, ninf, ninf};
    for (Eigen::Index j = n4; j < n; ++j) tail[j - n4] = x[j] - shift;
    wasm_v128_store(tail, exp4(wasm_v128_load(tail)));
    for (Eigen::Index j = n4; j < n; ++j) {
      if (y) y[j] = tail[j - n4];
      sum += tail[j - n4];
    }
  }
  return sum;
#else
  // The sum is always reduced from x's expression, never from y: Eigen peels a reduction by the
  // address's alignment, so summing y would give another rounding whenever x and y are aligned
  // differently (and the result would depend on where the heap put y).
  const Eigen::Map<const Eigen::ArrayXf> xr(x, n);
  if (y) Eigen::Map<Eigen::ArrayXf>(y, n) = (xr - shift).exp();
  return (xr - shift).exp().sum();
#endif
}

void col_sums(ConstMatRef x, float* out) {
  const Eigen::Index C = x.cols();
#ifdef __wasm_simd128__
  const Eigen::Index R = x.rows();
  parallel_for(C, kColumnGrain, [&](int, int64_t j0, int64_t j1) {
    const Eigen::Index j4 = j1 - (j1 - j0) % 4;
    for (Eigen::Index j = j0; j < j1; ++j) out[j] = 0.0f;
    for (Eigen::Index i = 0; i < R; ++i) {
      const float* row = x.row(i).data();
      for (Eigen::Index j = j0; j < j4; j += 4)
        wasm_v128_store(out + j, wasm_f32x4_add(wasm_v128_load(out + j), wasm_v128_load(row + j)));
      for (Eigen::Index j = j4; j < j1; ++j) out[j] += row[j];
    }
  });
#else
  Eigen::Map<RowVec>(out, C) = x.colwise().sum();
#endif
}

namespace {
constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
}  // namespace

float gelu(float x) {
  const double xd = x;
  return float(0.5 * xd * (1.0 + std::erf(xd * kSqrtHalf)));
}

float gelu_grad(float x) {
  const double xd = x;
  const double cdf = 0.5 * (1.0 + std::erf(xd * kSqrtHalf));
  return float(cdf + xd * kInvSqrt2Pi * std::exp(-0.5 * xd * xd));
}

void gelu_rows_reference(const float* u, float* h, Eigen::Index n) {
  for (Eigen::Index i = 0; i < n; ++i) h[i] = gelu(u[i]);
}

void gelu_backward_rows_reference(const float* u, float* dh, Eigen::Index n) {
  for (Eigen::Index i = 0; i < n; ++i) dh[i] *= gelu_grad(u[i]);
}

void gelu_rows(const float* u, float* h, Eigen::Index n) {
#ifdef __wasm_simd128__
  parallel_for(n, kElementGrain, [&](int, int64_t i0, int64_t i1) {
    const Eigen::Index n4 = i1 - (i1 - i0) % 4;
    for (Eigen::Index i = i0; i < n4; i += 4) {
      const v128_t x = wasm_v128_load(u + i);
      wasm_v128_store(h + i, wasm_f32x4_mul(x, phi_cdf4(x)));
    }
    gelu_rows_reference(u + n4, h + n4, i1 - n4);
  });
#else
  gelu_rows_reference(u, h, n);
#endif
}

void gelu_backward_rows(const float* u, float* dh, Eigen::Index n) {
#ifdef __wasm_simd128__
  parallel_for(n, kElementGrain, [&](int, int64_t i0, int64_t i1) {
    const Eigen::Index n4 = i1 - (i1 - i0) % 4;
    for (Eigen::Index i = i0; i < n4; i += 4) {
      const v128_t x = wasm_v128_load(u + i);
      wasm_v128_store(dh + i, wasm_f32x4_mul(wasm_v128_load(dh + i), gelu_grad4(x, phi_cdf4(x))));
    }
    gelu_backward_rows_reference(u + n4, dh + n4, i1 - n4);
  });
#else
  gelu_backward_rows_reference(u, dh, n);
#endif
}

namespace {
// gelu_forward_rows on entries [i0, i1) with gelu() and gelu_grad() (gelu_rows's scalar tail).
void gelu_forward_span(const float* u, float* h, float* dgelu, Eigen::Index i0, Eigen::Index i1) {
  for (Eigen::Index i = i0; i < i1; ++i) {
    const float x = u[i];
    dgelu[i] = gelu_grad(x);
    h[i] = gelu(x);
  }
}
}  // namespace

void gelu_forward_rows_reference(const float* u, float* h, float* dgelu, Eigen::Index n) {
  for (Eigen::Index i = 0; i < n; ++i) dgelu[i] = 1.0f;
  gelu_backward_rows(u, dgelu, n);  // before h is written: h may alias u
  gelu_rows(u, h, n);
}

void gelu_forward_rows(const float* u, float* h, float* dgelu, Eigen::Index n) {
#ifdef __wasm_simd128__
  // gelu_rows's and gelu_backward_rows's operations on the same chunks, Phi(x) computed once.
  parallel_for(n, kElementGrain, [&](int, int64_t i0, int64_t i1) {
    const Eigen::Index n4 = i1 - (i1 - i0) % 4;
    for (Eigen::Index i = i0; i < n4; i += 4) {
      const v128_t x = wasm_v128_load(u + i);
      const v128_t cdf = phi_cdf4(x);
      wasm_v128_store(dgelu + i, gelu_grad4(x, cdf));
      wasm_v128_store(h + i, wasm_f32x4_mul(x, cdf));
    }
    gelu_forward_span(u, h, dgelu, n4, i1);
  });
#else
  gelu_forward_span(u, h, dgelu, 0, n);
#endif
}

float norm_row_reference(const float* x, const float* w, const float* b, bool center, double eps,
                         Eigen::Index n, float* xhat, float* y) {
  double mean = 0.0;
  if (center) {
    for (Eigen::Index j = 0; j < n; ++j) mean += x[j];
    mean /= double(n);
  }
  // Centred second moment (LayerNorm) or the plain mean square (RMSNorm: mean stays 0).
  double m2 = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double c = double(x[j]) - mean;
    m2 += c * c;
  }
  const double rstd = 1.0 / std::sqrt(m2 / double(n) + eps);
  for (Eigen::Index j = 0; j < n; ++j) {
    const float xh = float((double(x[j]) - mean) * rstd);
    xhat[j] = xh;
    y[j] = b ? xh * w[j] + b[j] : xh * w[j];
  }
  return float(rstd);
}

float norm_row(const float* x, const float* w, const float* b, bool center, double eps,
               Eigen::Index n, float* xhat, float* y) {
#ifdef __wasm_simd128__
  if (n % 4 != 0) return norm_row_reference(x, w, b, center, eps, n, xhat, y);
  float mean = 0.0f;
  if (center) {
    v128_t s = wasm_f32x4_splat(0.0f);
    for (Eigen::Index j = 0; j < n; j += 4) s = wasm_f32x4_add(s, wasm_v128_load(x + j));
    mean = hsum(s) / float(n);
  }
  const v128_t vm = wasm_f32x4_splat(mean);
  v128_t s2 = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < n; j += 4) {
    const v128_t c = wasm_f32x4_sub(wasm_v128_load(x + j), vm);
    s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(c, c));
  }
  const float rstd = float(1.0 / std::sqrt(double(hsum(s2)) / double(n) + eps));
  const v128_t vr = wasm_f32x4_splat(rstd);
  for (Eigen::Index j = 0; j < n; j += 4) {
    const v128_t xh = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + j), vm), vr);
    wasm_v128_store(xhat + j, xh);
    v128_t v = wasm_f32x4_mul(xh, wasm_v128_load(w + j));
    if (b) v = wasm_f32x4_add(v, wasm_v128_load(b + j));
    wasm_v128_store(y + j, v);
  }
  return rstd;
#else
  return norm_row_reference(x, w, b, center, eps, n, xhat, y);
#endif
}

// Forward per row: y = xhat * w (+ b), xhat = (x - mean) * rstd (mean = 0 for RMSNorm).
void norm_backward_row_reference(const float* dy, const float* xhat, const float* w, float rstd,
                                 bool center, Eigen::Index n, float* dx) {
  double g_mean = 0.0, gx_mean = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double g = double(dy[j]) * w[j];
    g_mean += g;
    gx_mean += g * xhat[j];
  }
  g_mean = center ? g_mean / double(n) : 0.0;
  gx_mean /= double(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const double g = double(dy[j]) * w[j];
    dx[j] = float(rstd * (g - g_mean - double(xhat[j]) * gx_mean));
  }
}

void norm_backward_row(const float* dy, const float* xhat, const float* w, float rstd,
                       bool center, Eigen::Index n, float* dx) {
#ifdef __wasm_simd128__
  if (n % 4 != 0) return norm_backward_row_reference(dy, xhat, w, rstd, center, n, dx);
  v128_t sg = wasm_f32x4_splat(0.0f), sgx = wasm_f32x4_splat(0.0f);
  for (Eigen::Index j = 0; j < n; j += 4) {
    const v128_t g = wasm_f32x4_mul(wasm_v128_load(dy + j), wasm_v128_load(w + j));
    sg = wasm_f32x4_add(sg, g);
    sgx = wasm_f32x4_add(sgx, wasm_f32x4_mul(g, wasm_v128_load(xhat + j)));
  }
  const v128_t gm = wasm_f32x4_splat(center ? hsum(sg) / float(n) : 0.0f);
  const v128_t gxm = wasm_f32x4_splat(hsum(sgx) / float(n));
  const v128_t vr = wasm_f32x4_splat(rstd);
  for (Eigen::Index j = 0; j < n; j += 4) {
    const v128_t g = wasm_f32x4_mul(wasm_v128_load(dy + j), wasm_v128_load(w + j));
    const v128_t t = wasm_f32x4_sub(wasm_f32x4_sub(g, gm), wasm_f32x4_mul(wasm_v128_load(xhat + j), gxm));
    wasm_v128_store(dx + j, wasm_f32x4_mul(vr, t));
  }
#else
  norm_backward_row_reference(dy, xhat, w, rstd, center, n, dx);
#endif
}

void col_sums_product(ConstMatRef a, ConstMatRef b, float* out) {
  const Eigen::Index R = a.rows(), C = a.cols();
  require(b.rows() == R && b.cols() == C, "col_sums_product: b is (", b.rows(), ",", b.cols(),
          "), a is (", R, ",", C, ")");
#ifdef __wasm_simd128__
  parallel_for(C, kColumnGrain, [&](int, int64_t j0, int64_t j1) {
    const Eigen::Index j4 = j1 - (j1 - j0) % 4;
    for (Eigen::Index j = j0; j < j1; ++j) out[j] = 0.0f;
    for (Eigen::Index i = 0; i < R; ++i) {
      const float *ra = a.row(i).data(), *rb = b.row(i).data();
      for (Eigen::Index j = j0; j < j4; j += 4)
        wasm_v128_store(out + j, wasm_f32x4_add(wasm_v128_load(out + j),
                                                wasm_f32x4_mul(wasm_v128_load(ra + j), wasm_v128_load(rb + j))));
      for (Eigen::Index j = j4; j < j1; ++j) out[j] += ra[j] * rb[j];
    }
  });
#else
  for (Eigen::Index j = 0; j < C; ++j) out[j] = 0.0f;
  for (Eigen::Index i = 0; i < R; ++i)
    for (Eigen::Index j = 0; j < C; ++j) out[j] += a(i, j) * b(i, j);
#endif
}

namespace {
// Rows per part when the threads share a norm layer's rows.
constexpr int64_t kRowGrain = 32;
}  // namespace

void norm_backward_rows_reference(ConstMatRef dy, ConstMatRef xhat, const float* rstd,
                                  const float* w, bool center, MatRef dx, float* dw, float* db) {
  const Eigen::Index N = xhat.rows(), D = xhat.cols();
  col_sums_product(dy, xhat, dw);
  if (db) col_sums(dy, db);
  parallel_for(N, kRowGrain, [&](int, int64_t n0, int64_t n1) {
    for (Eigen::Index n = n0; n < n1; ++n)
      norm_backward_row(dy.row(n).data(), xhat.row(n).data(), w, rstd[n], center, D,
                        dx.row(n).data());
  });
}

void norm_backward_rows(ConstMatRef dy, ConstMatRef xhat, const float* rstd, const float* w,
                        bool center, MatRef dx, float* dw, float* db) {
  const Eigen::Index N = xhat.rows(), D = xhat.cols();
  require(dy.rows() == N && dy.cols() == D && dx.rows() == N && dx.cols() == D,
          "norm_backward_rows: dy (", dy.rows(), ",", dy.cols(), ") and dx (", dx.rows(), ",",
          dx.cols(), ") must have xhat's shape (", N, ",", D, ")");
#ifdef __wasm_simd128__
  // On several threads the twin's split (columns for the sums, rows for dx) gives the same numbers.
  if (thread_count() > 1) return norm_backward_rows_reference(dy, xhat, rstd, w, center, dx, dw, db);
  const Eigen::Index D4 = D - D % 4;
  for (Eigen::Index j = 0; j < D; ++j) dw[j] = 0.0f;
  if (db)
    for (Eigen::Index j = 0; j < D; ++j) db[j] = 0.0f;
  for (Eigen::Index n = 0; n < N; ++n) {
    const float *g = dy.row(n).data(), *xh = xhat.row(n).data();
    // col_sums_product's and col_sums's adds for this row, in the same order
    for (Eigen::Index j = 0; j < D4; j += 4) {
      const v128_t gv = wasm_v128_load(g + j);
      wasm_v128_store(dw + j, madd(wasm_v128_load(dw + j), gv, wasm_v128_load(xh + j)));
      if (db) wasm_v128_store(db + j, wasm_f32x4_add(wasm_v128_load(db + j), gv));
    }
    for (Eigen::Index j = D4; j < D; ++j) {
      dw[j] += g[j] * xh[j];
      if (db) db[j] += g[j];
    }
    norm_backward_row(g, xh, w, rstd[n], center, D, dx.row(n).data());
  }
#else
  norm_backward_rows_reference(dy, xhat, rstd, w, center, dx, dw, db);
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
  parallel_for(n, kElementGrain, [&](int, int64_t i0, int64_t i1) {
    const Eigen::Index n4 = i1 - (i1 - i0) % 4;
    for (Eigen::Index i = i0; i < n4; i += 4) {
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
    adam_kernel_reference(p + n4, g + n4, m + n4, v + n4, i1 - n4, beta1, beta2, one_b1, one_b2,
                          eps, step_size, bc2_sqrt);
  });
#else
  adam_kernel_reference(p, g, m, v, n, beta1, beta2, one_b1, one_b2, eps, step_size, bc2_sqrt);
#endif
}

void matmul_nn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha, Causal causal) {
  check_product(A.rows(), A.cols(), B.rows(), B.cols(), C, "nn");
  const ProductTimer timer("nn", C.rows(), C.cols(), A.cols());
#ifdef __wasm_simd128__
  Skip skip;
  skip.a_lower = causal == Causal::kLowerA;
  skip.c_lower = causal == Causal::kLowerC;
  gemm(A.rows(), B.cols(), A.cols(), A.data(), A.outerStride(), 1, B.data(), B.outerStride(), 1,
       C.data(), C.outerStride(), alpha, nullptr, skip);
#else
  (void)causal;
  if (alpha == 1.0f)
    C.noalias() = A * B;
  else
    C.noalias() = alpha * (A * B);
#endif
}

void matmul_nt(ConstMatRef A, ConstMatRef B, MatRef C, float alpha, const float* bias,
               Causal causal) {
  check_product(A.rows(), A.cols(), B.cols(), B.rows(), C, "nt");
  const ProductTimer timer("nt", C.rows(), C.cols(), A.cols());
#ifdef __wasm_simd128__
  Skip skip;
  skip.a_lower = causal == Causal::kLowerA;
  skip.c_lower = causal == Causal::kLowerC;
  gemm(A.rows(), B.rows(), A.cols(), A.data(), A.outerStride(), 1, B.data(), 1, B.outerStride(),
       C.data(), C.outerStride(), alpha, bias, skip);
#else
  (void)causal;
  if (alpha == 1.0f)
    C.noalias() = A * B.transpose();
  else
    C.noalias() = alpha * (A * B.transpose());
  if (bias) C.rowwise() += Eigen::Map<const RowVec>(bias, C.cols());
#endif
}

void matmul_tn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha, Causal causal) {
  check_product(A.cols(), A.rows(), B.rows(), B.cols(), C, "tn");
  const ProductTimer timer("tn", C.rows(), C.cols(), A.rows());
#ifdef __wasm_simd128__
  Skip skip;
  skip.a_upper = causal == Causal::kLowerA;  // a(i,k) = A(k,i): zero for k < i
  skip.c_lower = causal == Causal::kLowerC;
  gemm(A.cols(), B.cols(), A.rows(), A.data(), 1, A.outerStride(), B.data(), B.outerStride(), 1,
       C.data(), C.outerStride(), alpha, nullptr, skip);
#else
  (void)causal;
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
