// The matmul kernels (SIMD in the wasm SIMD build, Eigen elsewhere) against the plain
// triple-loop reference, in all three layouts, on shapes that exercise every remainder path
// (rows not a multiple of 4, columns not a multiple of 8 or 4, K across the 256 block) and on
// strided views like the per-head q/k/v blocks.
#include <catch2/catch.hpp>

#include "attn/base/rng.h"
#include "attn/kernels/kernels.h"
#include "attn/kernels/ops.h"

#include <cmath>
#include <limits>
#include <vector>

using attn::Mat;

namespace {

constexpr float kKernelTol = 1e-5f;  // relative to the largest |entry| of the product

Mat random_mat(Eigen::Index r, Eigen::Index c, attn::Rng& rng) {
  Mat m(r, c);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.uniform() * 2.0f - 1.0f;
  return m;
}

float max_rel_diff(const Mat& got, const Mat& want) {
  const float scale = std::max(1.0f, want.cwiseAbs().maxCoeff());
  return (got - want).cwiseAbs().maxCoeff() / scale;
}

// alpha A B in the three layouts (A B, A (B^T)^T, (A^T)^T B) against the reference, each into a C
// filled with garbage first (the kernels overwrite it); with a bias (1,N), also A B^T + bias.
void check_layouts(const Mat& A, const Mat& B, float alpha, const Mat* bias = nullptr) {
  const Mat At = A.transpose(), Bt = B.transpose();
  Mat want(A.rows(), B.cols()), got(A.rows(), B.cols());
  attn::matmul_reference(A, false, B, false, want, alpha);
  got.setConstant(123.0f);
  attn::matmul_nn(A, B, got, alpha);
  CHECK(max_rel_diff(got, want) <= kKernelTol);
  got.setConstant(123.0f);
  attn::matmul_nt(A, Bt, got, alpha);
  CHECK(max_rel_diff(got, want) <= kKernelTol);
  got.setConstant(123.0f);
  attn::matmul_tn(At, B, got, alpha);
  CHECK(max_rel_diff(got, want) <= kKernelTol);
  if (bias) {
    got.setConstant(123.0f);
    attn::matmul_nt(A, Bt, got, alpha, bias->data());
    const Mat want_b = want.rowwise() + Eigen::Map<const attn::RowVec>(bias->data(), B.cols());
    CHECK(max_rel_diff(got, want_b) <= kKernelTol);
  }
}

}  // namespace

TEST_CASE("kernels: the three layouts match the reference on awkward shapes") {
  attn::Rng rng(7);
  const int shapes[][3] = {{1, 1, 1},  {3, 5, 2},   {4, 8, 8},     {5, 9, 7},
                           {12, 12, 8}, {13, 17, 33}, {64, 96, 300}, {7, 4, 513}};
  for (const auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2];
    CAPTURE(M, N, K);
    const Mat A = random_mat(M, K, rng), B = random_mat(K, N, rng);  // A drawn first
    check_layouts(A, B, 0.5f);
  }
}

TEST_CASE("kernels: strided views in and out, as the per-head blocks use them") {
  attn::Rng rng(8);
  // qkv (N,3D) with D = 12, Dh = 4: head 1's q and k are column blocks with stride 36.
  const Mat qkv = random_mat(10, 36, rng);
  const auto q = qkv.block(0, 4, 10, 4), k = qkv.block(0, 16, 10, 4), v = qkv.block(0, 28, 10, 4);
  Mat scores(10, 10), want(10, 10);
  attn::matmul_nt(q, k, scores);
  attn::matmul_reference(q, false, k, true, want);
  CHECK(max_rel_diff(scores, want) <= kKernelTol);

  Mat merged = Mat::Constant(10, 12, 9.0f);
  attn::matmul_nn(scores, v, merged.block(0, 4, 10, 4));
  Mat want_out(10, 4);
  attn::matmul_reference(scores, false, v, false, want_out);
  CHECK(max_rel_diff(merged.block(0, 4, 10, 4), want_out) <= kKernelTol);
  CHECK((merged.leftCols(4).array() == 9.0f).all());  // neighbours untouched
  CHECK((merged.rightCols(4).array() == 9.0f).all());

  Mat dv(10, 4), want_dv(10, 4);
  attn::matmul_tn(scores, merged.block(0, 4, 10, 4), dv);
  attn::matmul_reference(scores, true, merged.block(0, 4, 10, 4), false, want_dv);
  CHECK(max_rel_diff(dv, want_dv) <= kKernelTol);
}

TEST_CASE("kernels: mismatched shapes are rejected with the sizes") {
  Mat A(3, 4), B(5, 6), C(3, 6);
  CHECK_THROWS_WITH(attn::matmul_nn(A, B, C), Catch::Contains("(4 vs 5)"));
  Mat B2(4, 6), C2(2, 6);
  CHECK_THROWS_WITH(attn::matmul_nn(A, B2, C2), Catch::Contains("(2,6)"));
}

TEST_CASE("kernels: softmax_row matches the std::exp reference, masks give exact zeros") {
  attn::Rng rng(9);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int n : {1, 3, 4, 5, 8, 12, 13, 64, 257}) {
    CAPTURE(n);
    std::vector<float> x(n), got(n), want(n);
    for (int j = 0; j < n; ++j) x[j] = (rng.uniform() - 0.5f) * 40.0f;  // logits in [-20, 20]
    for (int j = 1; j < n; j += 3) x[j] = ninf;                          // masked cells
    attn::softmax_row(x.data(), got.data(), n);
    attn::softmax_row_reference(x.data(), want.data(), n);
    float worst = 0.0f, sum = 0.0f;
    for (int j = 0; j < n; ++j) {
      worst = std::max(worst, std::abs(got[j] - want[j]) / std::max(want[j], 1e-30f));
      sum += got[j];
      if (x[j] == ninf) CHECK(got[j] == 0.0f);
    }
    CHECK(worst <= 1e-5f);  // relative, per entry
    CHECK(sum == Approx(1.0f).margin(1e-5));
  }
  // Extremes: a row of equal huge values, a row far below exp's range, and all -inf.
  std::vector<float> big(7, 3e38f), y(7);
  attn::softmax_row(big.data(), y.data(), 7);
  for (float v : y) CHECK(v == Approx(1.0f / 7));
  std::vector<float> spread = {0.0f, -100.0f, -1000.0f, -1e30f, 5.0f};
  std::vector<float> ys(5), yr(5);
  attn::softmax_row(spread.data(), ys.data(), 5);
  attn::softmax_row_reference(spread.data(), yr.data(), 5);
  for (int j = 0; j < 5; ++j) CHECK(ys[j] == Approx(yr[j]).margin(1e-12));
  std::vector<float> dead(6, ninf), z(6, 9.0f);
  attn::softmax_row(dead.data(), z.data(), 6);
  for (float v : z) CHECK(v == 0.0f);
}

TEST_CASE("kernels: softmax backward and Adam match their references") {
  attn::Rng rng(10);
  for (int n : {1, 4, 7, 12, 33}) {
    CAPTURE(n);
    std::vector<float> x(n), y(n), dy(n), got(n), want(n);
    for (int j = 0; j < n; ++j) {
      x[j] = rng.uniform() * 4.0f;
      dy[j] = rng.uniform() - 0.5f;
    }
    attn::softmax_row_reference(x.data(), y.data(), n);
    attn::softmax_backward_row(y.data(), dy.data(), got.data(), n);
    attn::softmax_backward_row_reference(y.data(), dy.data(), want.data(), n);
    for (int j = 0; j < n; ++j) CHECK(got[j] == Approx(want[j]).margin(1e-7));
  }
  for (int n : {1, 4, 9, 100}) {
    CAPTURE(n);
    std::vector<float> g(n), p1(n), m1(n, 0.0f), v1(n, 0.0f);
    for (int i = 0; i < n; ++i) {
      g[i] = rng.uniform() - 0.5f;
      p1[i] = rng.uniform();
    }
    std::vector<float> p2 = p1, m2 = m1, v2 = v1;
    for (int t = 0; t < 3; ++t) {
      attn::adam_kernel(p1.data(), g.data(), m1.data(), v1.data(), n, 0.9f, 0.999f, 0.1f, 0.001f,
                        1e-8f, 0.05f, 0.03f);
      attn::adam_kernel_reference(p2.data(), g.data(), m2.data(), v2.data(), n, 0.9f, 0.999f,
                                  0.1f, 0.001f, 1e-8f, 0.05f, 0.03f);
    }
    // Same operations in the same order (no fused multiply-add anywhere): bit-identical.
    CHECK(p1 == p2);
    CHECK(m1 == m2);
    CHECK(v1 == v2);
  }
}

TEST_CASE("kernels: the loss's row helpers match plain references") {
  attn::Rng rng(11);
  // exp_shifted_sum: each exp within 2 ulps of exp computed in double (measured on every 7th
  // float bit pattern in [-87.3, 88.7]: the wasm SIMD exp is within 0.99 ulp, glibc's expf 0.50),
  // the sum as a float sum of those, and exp(0) = 1 exactly.
  for (int n : {1, 3, 4, 5, 8, 13, 64, 257}) {
    CAPTURE(n);
    std::vector<float> x(n), y(n, -1.0f);
    for (int j = 0; j < n; ++j) x[j] = (rng.uniform() - 0.5f) * 60.0f;  // x - shift in [-40, 20]
    const float shift = 10.0f;
    const float sum = attn::exp_shifted_sum(x.data(), shift, y.data(), n);
    double want_sum = 0.0;
    for (int j = 0; j < n; ++j) {
      const double want = std::exp(double(x[j] - shift));
      want_sum += want;
      CAPTURE(j, x[j]);
      CHECK(std::abs(double(y[j]) - want) <= 2.4e-7 * want);  // 2 ulps: 2^-22 relative
    }
    CHECK(std::abs(double(sum) - want_sum) <= 1e-6 * want_sum);
    CHECK(attn::exp_shifted_sum(x.data(), shift, nullptr, n) == sum);  // the same without y
  }
  std::vector<float> edge = {2.0f, -3.0f, 2.0f};
  std::vector<float> ye(3);
  attn::exp_shifted_sum(edge.data(), 2.0f, ye.data(), 3);
  CHECK(ye[0] == 1.0f);  // the row's largest entry
  CHECK(ye[2] == 1.0f);
  // row_max and row_argmax (the first largest entry), col_sums.
  for (int n : {1, 2, 4, 5, 12, 17}) {
    CAPTURE(n);
    std::vector<float> x(n);
    for (int j = 0; j < n; ++j) x[j] = float(int(rng.uniform() * 6.0f));  // ties are common
    float mx = x[0];
    int arg = 0;
    for (int j = 1; j < n; ++j)
      if (x[j] > mx) {
        mx = x[j];
        arg = j;
      }
    CHECK(attn::row_max(x.data(), n) == mx);
    CHECK(attn::row_argmax(x.data(), n) == arg);
  }
  for (Eigen::Index rows : {1, 3, 8}) {
    const Mat m = random_mat(rows, 13, rng);
    std::vector<float> got(13);
    attn::col_sums(m, got.data());
    for (Eigen::Index j = 0; j < 13; ++j) {
      float want = 0.0f;
      for (Eigen::Index i = 0; i < rows; ++i) want += m(i, j);
      CHECK(got[size_t(j)] == Approx(want).margin(1e-6));
    }
  }
}

TEST_CASE("kernels: row remainders and column tails of the model's shapes") {
  attn::Rng rng(12);
  // M not a multiple of 4 (1, 2, 3 left), N with 1, 2 or 3 columns past a multiple of 4, K over
  // the 256 block; with a bias on the nt layout.
  const int shapes[][3] = {{6, 35, 64}, {35, 64, 1024}, {1026, 3, 17}, {2, 7, 300}, {3, 2, 5}};
  for (const auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2];
    CAPTURE(M, N, K);
    const Mat A = random_mat(M, K, rng), B = random_mat(K, N, rng);
    const Mat bias = random_mat(1, N, rng);
    check_layouts(A, B, 2.0f, &bias);
  }
}

TEST_CASE("kernels: causal products match the full product where it is wanted") {
  attn::Rng rng(13);
  using attn::Causal;
  // (T, Dh) as in the heads: T square operands, Dh the head width; T past 256 crosses a K block.
  const int shapes[][2] = {{1, 1}, {5, 3}, {12, 8}, {13, 5}, {64, 16}, {300, 8}};
  for (const auto& s : shapes) {
    const int T = s[0], Dh = s[1];
    CAPTURE(T, Dh);
    Mat L = random_mat(T, T, rng);  // lower triangular, as the weights and dscores are
    for (int i = 0; i < T; ++i)
      for (int j = i + 1; j < T; ++j) L(i, j) = 0.0f;
    // The SIMD kernels skip the blocks above the diagonal: NaN there, 4 rows and columns away
    // from it, never reaches C. (Next to the diagonal they read the zeros.)
    Mat a = L;
#ifdef __wasm_simd128__
    for (int i = 0; i < T; ++i)
      for (int j = i / 4 * 4 + 4; j < T; ++j) a(i, j) = std::numeric_limits<float>::quiet_NaN();
#endif
    const Mat V = random_mat(T, Dh, rng), Q = random_mat(T, Dh, rng);
    Mat want(T, Dh), got(T, Dh);
    // weights v, dq = dscores k: nn with A lower triangular
    attn::matmul_reference(L, false, V, false, want, 0.5f);
    attn::matmul_nn(a, V, got, 0.5f, Causal::kLowerA);
    CHECK(max_rel_diff(got, want) <= kKernelTol);
    // dv = w^T dout, dk = dscores^T q: tn with A lower triangular
    attn::matmul_reference(L, true, V, false, want, 0.5f);
    attn::matmul_tn(a, V, got, 0.5f, Causal::kLowerA);
    CHECK(max_rel_diff(got, want) <= kKernelTol);
    // scores = q k^T: nt, only the lower triangle wanted
    Mat scores(T, T), want_s(T, T);
    scores.setConstant(7.0f);
    attn::matmul_reference(Q, false, V, true, want_s, 0.25f);
    attn::matmul_nt(Q, V, scores, 0.25f, nullptr, Causal::kLowerC);
    float worst = 0.0f;
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) worst = std::max(worst, std::abs(scores(i, j) - want_s(i, j)));
    CHECK(worst <= kKernelTol * std::max(1.0f, want_s.cwiseAbs().maxCoeff()));
  }
}

TEST_CASE("kernels: the causal softmax is the masked softmax, bit for bit") {
  attn::Rng rng(14);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int T : {1, 3, 5, 8, 13, 64}) {
    CAPTURE(T);
    Mat x = random_mat(T, T, rng) * 8.0f, want = x, dy = random_mat(T, T, rng);
    attn::apply_causal_mask(want);
    attn::softmax_rows(want, want);
    Mat got = x;
    for (int i = 0; i < T; ++i)
      for (int j = i + 1; j < T; ++j) got(i, j) = nan;  // unspecified above the diagonal
    attn::softmax_rows_causal(got);
    CHECK((got.array() == want.array()).all());
    for (int i = 0; i < T; ++i)
      for (int j = i + 1; j < T; ++j) CHECK(got(i, j) == 0.0f);
    Mat dx_want(T, T), dx_got = dy;
    attn::softmax_rows_backward(want, dy, dx_want);
    for (int i = 0; i < T; ++i)
      for (int j = i + 1; j < T; ++j) dx_got(i, j) = nan;
    attn::softmax_rows_backward_causal(got, dx_got, dx_got);
    CHECK((dx_got.array() == dx_want.array()).all());
  }
}

TEST_CASE("kernels: gelu rows and their backward match the double references") {
  attn::Rng rng(15);
  // Every 4 ulps of erf's input range and beyond, plus the edges: the float erf's error stays
  // within kGeluTol of gelu in double, absolute, scaled by max(1, |x|).
  constexpr float kGeluTol = 3e-7f;
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.0037f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 5.6568f, -5.6568f, 5.66f, -5.66f, 200.0f, -200.0f})
    x.push_back(v);
  const Eigen::Index n = Eigen::Index(x.size());
  std::vector<float> h(x.size()), hr(x.size()), dh(x.size()), dhr(x.size());
  for (size_t i = 0; i < x.size(); ++i) dh[i] = dhr[i] = rng.uniform() - 0.5f;
  attn::gelu_rows(x.data(), h.data(), n);
  attn::gelu_rows_reference(x.data(), hr.data(), n);
  attn::gelu_backward_rows(x.data(), dh.data(), n);
  attn::gelu_backward_rows_reference(x.data(), dhr.data(), n);
  float worst = 0.0f, worst_d = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    const float scale = std::max(1.0f, std::abs(x[i]));
    worst = std::max(worst, std::abs(h[i] - hr[i]) / scale);
    worst_d = std::max(worst_d, std::abs(dh[i] - dhr[i]) / scale);
  }
  CAPTURE(worst, worst_d);
  CHECK(worst <= kGeluTol);
  CHECK(worst_d <= kGeluTol);
  // Exact limits far out, as gelu() gives them.
  float far[] = {-200.0f, 200.0f, 0.0f, 0.0f}, hf[4];
  attn::gelu_rows(far, hf, 4);
  CHECK(hf[0] == 0.0f);
  CHECK(hf[1] == 200.0f);
  CHECK(hf[2] == 0.0f);
}

TEST_CASE("kernels: norm rows and their backward match the double references") {
  attn::Rng rng(16);
  for (int n : {4, 7, 64, 256}) {
    for (bool center : {true, false}) {
      CAPTURE(n, center);
      std::vector<float> x(n), w(n), b(n), dy(n);
      for (int j = 0; j < n; ++j) {
        x[j] = (rng.uniform() - 0.3f) * 6.0f;
        w[j] = rng.uniform() + 0.5f;
        b[j] = rng.uniform() - 0.5f;
        dy[j] = rng.uniform() - 0.5f;
      }
      std::vector<float> xh(n), y(n), xhr(n), yr(n), dx(n), dxr(n);
      const float rstd = attn::norm_row(x.data(), w.data(), center ? b.data() : nullptr, center,
                                        1e-5, n, xh.data(), y.data());
      const float rstdr = attn::norm_row_reference(x.data(), w.data(), center ? b.data() : nullptr,
                                                   center, 1e-5, n, xhr.data(), yr.data());
      CHECK(rstd == Approx(rstdr).epsilon(1e-6));
      attn::norm_backward_row(dy.data(), xh.data(), w.data(), rstd, center, n, dx.data());
      attn::norm_backward_row_reference(dy.data(), xhr.data(), w.data(), rstdr, center, n, dxr.data());
      for (int j = 0; j < n; ++j) {
        CHECK(xh[j] == Approx(xhr[j]).margin(2e-6));
        CHECK(y[j] == Approx(yr[j]).margin(4e-6));
        CHECK(dx[j] == Approx(dxr[j]).margin(4e-6));
      }
    }
  }
  const Mat a = random_mat(5, 13, rng), b = random_mat(5, 13, rng);
  std::vector<float> got(13);
  attn::col_sums_product(a, b, got.data());
  for (Eigen::Index j = 0; j < 13; ++j) {
    float want = 0.0f;
    for (Eigen::Index i = 0; i < 5; ++i) want += a(i, j) * b(i, j);
    CHECK(got[size_t(j)] == Approx(want).margin(1e-6));
  }
}

TEST_CASE("kernels: the fused gelu forward is its unfused twin bit for bit, dgelu its slope") {
  attn::Rng rng(17);
  // Lengths with and without a tail of 1-3 entries; values over erf's whole range and beyond.
  for (Eigen::Index n : {1, 7, 64, 4099, 9001}) {
    CAPTURE(n);
    std::vector<float> u(static_cast<size_t>(n)), h(static_cast<size_t>(n)), dg(static_cast<size_t>(n)), hr(static_cast<size_t>(n)), dgr(static_cast<size_t>(n));
    for (float& v : u) v = (rng.uniform() - 0.5f) * 14.0f;
    attn::gelu_forward_rows(u.data(), h.data(), dg.data(), n);
    attn::gelu_forward_rows_reference(u.data(), hr.data(), dgr.data(), n);
    CHECK(h == hr);
    CHECK(dg == dgr);
    // In place (h aliasing u) gives the same numbers.
    std::vector<float> inplace = u, dgi(static_cast<size_t>(n));
    attn::gelu_forward_rows(inplace.data(), inplace.data(), dgi.data(), n);
    CHECK(inplace == h);
    CHECK(dgi == dg);
  }
  // dgelu against central differences of gelu() in double, on points away from the clamp at
  // |x| = 4 sqrt 2 (where the float erf's slope jumps to 0).
  constexpr double kStep = 1e-3, kSlopeTol = 1e-5;
  std::vector<float> u, h, dg;
  for (float v = -5.5f; v <= 5.5f; v += 0.0137f) u.push_back(v);
  h.resize(u.size());
  dg.resize(u.size());
  attn::gelu_forward_rows(u.data(), h.data(), dg.data(), Eigen::Index(u.size()));
  auto gelu_d = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  double worst = 0.0;
  for (size_t i = 0; i < u.size(); ++i) {
    const double fd = (gelu_d(u[i] + kStep) - gelu_d(u[i] - kStep)) / (2.0 * kStep);
    worst = std::max(worst, std::abs(fd - double(dg[i])));
  }
  CAPTURE(worst);
  CHECK(worst <= kSlopeTol);
}

TEST_CASE("kernels: the one-pass norm backward is its three-pass twin bit for bit, and d(sum y dout)") {
  attn::Rng rng(18);
  for (Eigen::Index D : {4, 7, 64}) {
    for (bool center : {true, false}) {
      CAPTURE(D, center);
      const Eigen::Index N = 37;
      const Mat x = random_mat(N, D, rng) * 3.0f, dy = random_mat(N, D, rng);
      std::vector<float> w(static_cast<size_t>(D)), b(static_cast<size_t>(D));
      for (Eigen::Index j = 0; j < D; ++j) w[size_t(j)] = rng.uniform() + 0.5f, b[size_t(j)] = rng.uniform() - 0.5f;
      Mat xhat(N, D), y(N, D);
      std::vector<float> rstd(static_cast<size_t>(N));
      for (Eigen::Index n = 0; n < N; ++n)
        rstd[size_t(n)] = attn::norm_row(x.row(n).data(), w.data(), center ? b.data() : nullptr,
                                         center, 1e-5, D, xhat.row(n).data(), y.row(n).data());
      // Both into the same dw and db (Eigen's column sums, natively, round by the address).
      Mat dx(N, D), dxr(N, D);
      std::vector<float> dw(static_cast<size_t>(D), 7.0f), db(static_cast<size_t>(D), 7.0f);
      attn::norm_backward_rows_reference(dy, xhat, rstd.data(), w.data(), center, dxr, dw.data(),
                                         center ? db.data() : nullptr);
      const std::vector<float> dwr = dw, dbr = db;
      attn::norm_backward_rows(dy, xhat, rstd.data(), w.data(), center, dx, dw.data(),
                               center ? db.data() : nullptr);
      // dw sums g * xhat over the rows: the relaxed-SIMD build fuses each multiply-add (madd) where
      // the twin rounds the product first, so there the sums agree to 1e-6 of their size instead.
      auto check_dw = [&] {
#ifdef __wasm_relaxed_simd__
        for (size_t j = 0; j < dw.size(); ++j)
          CHECK(std::abs(dw[j] - dwr[j]) <= 1e-6f * std::max(1.0f, std::abs(dwr[j])));
#else
        CHECK(dw == dwr);
#endif
      };
      CHECK((dx.array() == dxr.array()).all());
      check_dw();
      if (center) CHECK(db == dbr);
      Mat alias = dy;  // dx aliasing dy
      attn::norm_backward_rows(alias, xhat, rstd.data(), w.data(), center, alias, dw.data(),
                               center ? db.data() : nullptr);
      CHECK((alias.array() == dxr.array()).all());
      check_dw();
      // dx against central differences of L = sum(y * dy) through norm_row_reference (double).
      constexpr double kStep = 1e-3, kGradTol = 2e-3;
      auto loss = [&](const Mat& xs) {
        double L = 0.0;
        std::vector<float> xh(static_cast<size_t>(D)), yr(static_cast<size_t>(D));
        for (Eigen::Index n = 0; n < N; ++n) {
          attn::norm_row_reference(xs.row(n).data(), w.data(), center ? b.data() : nullptr,
                                   center, 1e-5, D, xh.data(), yr.data());
          for (Eigen::Index j = 0; j < D; ++j) L += double(yr[size_t(j)]) * dy(n, j);
        }
        return L;
      };
      double worst = 0.0;
      for (Eigen::Index n : {Eigen::Index(0), N / 2, N - 1})
        for (Eigen::Index j = 0; j < D; ++j) {
          Mat xp = x, xm = x;
          xp(n, j) += float(kStep);
          xm(n, j) -= float(kStep);
          const double fd = (loss(xp) - loss(xm)) / (double(xp(n, j)) - double(xm(n, j)));
          worst = std::max(worst, std::abs(fd - double(dx(n, j))) / std::max(1.0, std::abs(fd)));
        }
      CAPTURE(worst);
      CHECK(worst <= kGradTol);
    }
  }
}

// The one difference between the relaxed-SIMD build and the SIMD one: the products' multiply-add
// is fused (f32x4.relaxed_madd), rounding once. C = 1 * (-p) + x * x with x = 1 + 2^-12 and
// p = fl(x * x) = 1 + 2^-11 is x * x's own rounding error, 2^-24, when fused, and 0 when the
// product is rounded before the sum. Engines lower relaxed_madd to a real FMA on x86 with FMA3
// and on ARM64 (every machine this suite runs on); without FMA the relaxed build would give 0.
TEST_CASE("kernels: the SIMD build's products round each product; the relaxed build's fuse it") {
  const float x = 1.0f + std::ldexp(1.0f, -12), p = 1.0f + std::ldexp(1.0f, -11);
  REQUIRE(x * x == p);
  Mat A(1, 2), B(2, 5), C(1, 5);
  A << 1.0f, x;
  B.row(0).setConstant(-p);
  B.row(1).setConstant(x);
  attn::matmul_nn(A, B, C);
#ifdef __wasm_relaxed_simd__
  for (int j = 0; j < 5; ++j) CHECK(C(0, j) == std::ldexp(1.0f, -24));
#elif defined(__wasm_simd128__)
  for (int j = 0; j < 5; ++j) CHECK(C(0, j) == 0.0f);
#else
  // Eigen's products: natively (-march=native) they may fuse; the scalar wasm build has no FMA.
  for (int j = 0; j < 5; ++j) CHECK((C(0, j) == 0.0f || C(0, j) == std::ldexp(1.0f, -24)));
#endif
}
