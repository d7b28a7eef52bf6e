// The matmul kernels (SIMD in the wasm SIMD build, Eigen elsewhere) against the plain
// triple-loop reference, in all three layouts, on shapes that exercise every remainder path
// (rows not a multiple of 4, columns not a multiple of 8 or 4, K across the 256 block) and on
// strided views like the per-head q/k/v blocks.
#include <catch2/catch.hpp>

#include "attn/kernels.h"
#include "attn/rng.h"

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

}  // namespace

TEST_CASE("kernels: the three layouts match the reference on awkward shapes") {
  attn::Rng rng(7);
  const int shapes[][3] = {{1, 1, 1},  {3, 5, 2},   {4, 8, 8},     {5, 9, 7},
                           {12, 12, 8}, {13, 17, 33}, {64, 96, 300}, {7, 4, 513}};
  for (const auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2];
    CAPTURE(M, N, K);
    const Mat A = random_mat(M, K, rng), B = random_mat(K, N, rng);
    const Mat At = A.transpose(), Bt = B.transpose();
    Mat want(M, N), got(M, N);
    attn::matmul_reference(A, false, B, false, want, 0.5f);

    got.setConstant(123.0f);  // the kernels overwrite C
    attn::matmul_nn(A, B, got, 0.5f);
    CHECK(max_rel_diff(got, want) <= kKernelTol);

    got.setConstant(123.0f);
    attn::matmul_nt(A, Bt, got, 0.5f);
    CHECK(max_rel_diff(got, want) <= kKernelTol);

    got.setConstant(123.0f);
    attn::matmul_tn(At, B, got, 0.5f);
    CHECK(max_rel_diff(got, want) <= kKernelTol);
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
