#include "attn/kernels/kernels.h"

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

// C (M,N) = alpha * sum_k a(i,k) b(k,j) (+ bias[j]) with a(i,k) = A[i*ars + k*acs] and
// b(k,j) = B[k*brs + j*bcs]: the strides cover A, A^T, B and B^T without copying the operands.
// K is cut into blocks of kKc. For each block, the columns are swept 8 at a time (then 4, then one
// by one) by register blocks of 4 rows (then 1) x 8 or 4 columns (f32x4 accumulators). A panel of
// B is read in place when its rows are contiguous and few rows of A reuse it, else packed
// contiguously first (transposed B is always packed). WebAssembly SIMD has no fused multiply-add:
// mul + add. At the page's sizes (12 x 12 x 8 head products) the calls are short, so the
// remainders are vectorised too and nothing is copied that need not be.
constexpr Eigen::Index kKc = 256;
// Below this many rows of A, a panel with contiguous rows is read in place rather than packed.
constexpr Eigen::Index kPackMinRows = 32;

inline v128_t madd(v128_t acc, v128_t a, v128_t b) {
  return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b));
}

// Adds (or, on the first K block, stores) alpha * acc into 4 floats of C, then on the last K
// block adds the bias: the same roundings as a product followed by a separate bias add.
inline void store4(float* c, v128_t acc, v128_t alpha, bool first, const float* bias) {
  v128_t v = wasm_f32x4_mul(acc, alpha);
  if (!first) v = wasm_f32x4_add(wasm_v128_load(c), v);
  if (bias) v = wasm_f32x4_add(v, wasm_v128_load(bias));
  wasm_v128_store(c, v);
}

// R rows (4 or 1) x 4*NV columns (NV = 2 or 1) over kn steps. a(r,k) = a0[r*ars + k*acs];
// b(k, 4v..4v+3) = b[k*bs + 4v..]. When A is transposed (ars == 1) the 4 values of one k are
// one vector load and 4 lane splats. bias (or nullptr) points at the block's first column.
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
    v128_t av[R];
    if (R == 4 && ars == 1) {
      const v128_t a = wasm_v128_load(a0 + k * acs);
      av[0] = wasm_i32x4_shuffle(a, a, 0, 0, 0, 0);
      av[R > 1 ? 1 : 0] = wasm_i32x4_shuffle(a, a, 1, 1, 1, 1);
      av[R > 2 ? 2 : 0] = wasm_i32x4_shuffle(a, a, 2, 2, 2, 2);
      av[R > 3 ? 3 : 0] = wasm_i32x4_shuffle(a, a, 3, 3, 3, 3);
    } else {
      const float* ak = a0 + k * acs;
      for (int r = 0; r < R; ++r) av[r] = wasm_f32x4_splat(ak[r * ars]);
    }
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = madd(acc[r][v], av[r], bv[v]);
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      store4(c + r * ldc + 4 * v, acc[r][v], alpha, first, bias ? bias + 4 * v : nullptr);
}

// Columns [j, j + 4*NV) of C for all M rows, over one K block.
template <int NV>
inline void column_block(Eigen::Index M, const float* Ak, Eigen::Index ars, Eigen::Index acs,
                         const float* b, Eigen::Index bs, Eigen::Index kn, float* c,
                         Eigen::Index ldc, v128_t alpha, bool first, const float* bias) {
  Eigen::Index i = 0;
  for (; i + 4 <= M; i += 4)
    block<4, NV>(Ak + i * ars, ars, acs, b, bs, kn, c + i * ldc, ldc, alpha, first, bias);
  for (; i < M; ++i) block<1, NV>(Ak + i * ars, ars, acs, b, bs, kn, c + i * ldc, ldc, alpha, first, bias);
}

void gemm_simd(Eigen::Index M, Eigen::Index N, Eigen::Index K, const float* A, Eigen::Index ars,
               Eigen::Index acs, const float* B, Eigen::Index brs, Eigen::Index bcs, float* C,
               Eigen::Index ldc, float alpha, const float* bias = nullptr) {
  alignas(16) static float panel[kKc * 8];
  const v128_t va = wasm_f32x4_splat(alpha);
  const bool in_place = bcs == 1 && M < kPackMinRows;
  for (Eigen::Index k0 = 0; k0 < K; k0 += kKc) {
    const Eigen::Index kn = std::min(kKc, K - k0);
    const bool first = k0 == 0;
    const float* bias_k = k0 + kn == K ? bias : nullptr;
    const float* Ak = A + k0 * acs;
    const float* Bk = B + k0 * brs;
    // The panel of columns [j, j + w) over this K block: in place, or packed as (kn, w).
    auto panel_of = [&](Eigen::Index j, Eigen::Index w, Eigen::Index& bs) -> const float* {
      if (in_place) {
        bs = brs;
        return Bk + j;
      }
      bs = w;
      if (bcs == 1) {
        for (Eigen::Index k = 0; k < kn; ++k)
          for (Eigen::Index jj = 0; jj < w; jj += 4)
            wasm_v128_store(panel + w * k + jj, wasm_v128_load(Bk + k * brs + j + jj));
      } else {
        for (Eigen::Index jj = 0; jj < w; ++jj) {
          const float* src = Bk + (j + jj) * bcs;
          for (Eigen::Index k = 0; k < kn; ++k) panel[w * k + jj] = src[k * brs];
        }
      }
      return panel;
    };
    Eigen::Index j = 0, bs = 0;
    for (; j + 8 <= N; j += 8) {
      const float* b = panel_of(j, 8, bs);
      column_block<2>(M, Ak, ars, acs, b, bs, kn, C + j, ldc, va, first, bias_k ? bias_k + j : nullptr);
    }
    if (j + 4 <= N) {
      const float* b = panel_of(j, 4, bs);
      column_block<1>(M, Ak, ars, acs, b, bs, kn, C + j, ldc, va, first, bias_k ? bias_k + j : nullptr);
      j += 4;
    }
    for (; j < N; ++j)  // the last N % 4 columns, plain loops
      for (Eigen::Index i = 0; i < M; ++i) {
        const float* a0 = Ak + i * ars;
        float s = 0.0f;
        for (Eigen::Index k = 0; k < kn; ++k) s += a0[k * acs] * Bk[k * brs + j * bcs];
        float* cp = C + i * ldc + j;
        *cp = first ? alpha * s : *cp + alpha * s;
        if (bias_k) *cp += bias_k[j];
      }
  }
  if (K == 0)
    for (Eigen::Index i = 0; i < M; ++i)
      for (Eigen::Index j = 0; j < N; ++j) C[i * ldc + j] = bias ? bias[j] : 0.0f;
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
  const Eigen::Index C4 = C - C % 4;
  for (Eigen::Index j = 0; j < C; ++j) out[j] = 0.0f;
  for (Eigen::Index i = 0; i < R; ++i) {
    const float* row = x.row(i).data();
    for (Eigen::Index j = 0; j < C4; j += 4)
      wasm_v128_store(out + j, wasm_f32x4_add(wasm_v128_load(out + j), wasm_v128_load(row + j)));
    for (Eigen::Index j = C4; j < C; ++j) out[j] += row[j];
  }
#else
  Eigen::Map<RowVec>(out, C) = x.colwise().sum();
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
            1, C.data(), C.outerStride(), alpha);
#else
  if (alpha == 1.0f)
    C.noalias() = A * B;
  else
    C.noalias() = alpha * (A * B);
#endif
}

void matmul_nt(ConstMatRef A, ConstMatRef B, MatRef C, float alpha, const float* bias) {
  check_product(A.rows(), A.cols(), B.cols(), B.rows(), C, "nt");
#ifdef __wasm_simd128__
  gemm_simd(A.rows(), B.rows(), A.cols(), A.data(), A.outerStride(), 1, B.data(), 1,
            B.outerStride(), C.data(), C.outerStride(), alpha, bias);
#else
  if (alpha == 1.0f)
    C.noalias() = A * B.transpose();
  else
    C.noalias() = alpha * (A * B.transpose());
  if (bias) C.rowwise() += Eigen::Map<const RowVec>(bias, C.cols());
#endif
}

void matmul_tn(ConstMatRef A, ConstMatRef B, MatRef C, float alpha) {
  check_product(A.cols(), A.rows(), B.rows(), B.cols(), C, "tn");
#ifdef __wasm_simd128__
  gemm_simd(A.cols(), B.cols(), A.rows(), A.data(), 1, A.outerStride(), B.data(), B.outerStride(),
            1, C.data(), C.outerStride(), alpha);
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
