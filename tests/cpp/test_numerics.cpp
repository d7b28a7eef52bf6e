// Numerical faults: extreme logits keep softmax_rows and cross_entropy finite, with the right
// limits (a dominant logit takes all the mass, ties share it), including huge vocabulary rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "attn/kernels/ops.h"
#include "attn/nn/loss.h"

using attn::Mat;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr float kBig = 1e30f;
constexpr float kMax = std::numeric_limits<float>::max();
// Eigen's vectorised exp clamps its argument near -88, so exp(-2e30) is ~1e-38 rather than 0.
constexpr double kTiny = 1e-30;

// Every entry finite; reports the first one that is not.
bool all_finite(const Mat& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      if (!std::isfinite(m(i, j))) {
        UNSCOPED_INFO("entry (" << i << "," << j << ") = " << m(i, j));
        return false;
      }
  return true;
}

// Each row of a softmax sums to 1 and lies in [0, 1].
void check_probability_rows(const Mat& y) {
  REQUIRE(all_finite(y));
  for (Eigen::Index i = 0; i < y.rows(); ++i) {
    CAPTURE(i);
    CHECK(y.row(i).minCoeff() >= 0.0f);
    CHECK(y.row(i).maxCoeff() <= 1.0f);
    CHECK_THAT(y.row(i).sum(), WithinAbs(1.0, 1e-5));
  }
}

}  // namespace

TEST_CASE("numerics: softmax of extreme logits is finite and sums to 1", "[numerics][softmax]") {
  // Row 0: one dominant logit; exp(x - max) = [0, 1, 0] (0 up to Eigen's clamp, see kTiny).
  // Row 1: ties at +1e30 share the mass: [1/2, 1/2, 0].
  // Row 2: everything -1e30 (finite): equal logits, 1/3 each.
  // Row 3: +-FLT_MAX: x - max = -2 FLT_MAX overflows to -inf, exp gives 0, not NaN.
  // Row 4: a tiny spread around 1e30 is below float resolution: equal, 1/3 each.
  Mat x(5, 3), y(5, 3);
  x << -kBig, kBig, -kBig,
       kBig, kBig, -kBig,
       -kBig, -kBig, -kBig,
       kMax, -kMax, 0.0f,
       kBig, kBig + 1.0f, kBig - 1.0f;
  attn::softmax_rows(x, y);
  check_probability_rows(y);
  CHECK(y(0, 1) == 1.0f);
  CHECK_THAT(y(0, 0), WithinAbs(0.0, kTiny));
  CHECK_THAT(y(1, 0), WithinAbs(0.5, 1e-7));
  CHECK_THAT(y(1, 2), WithinAbs(0.0, kTiny));
  for (int j = 0; j < 3; ++j) CHECK_THAT(y(2, j), WithinAbs(1.0 / 3.0, 1e-7));
  CHECK(y(3, 0) == 1.0f);
  for (int j = 0; j < 3; ++j) CHECK_THAT(y(4, j), WithinAbs(1.0 / 3.0, 1e-7));

  // In place (y may alias x), as the attention layers use it.
  Mat z = x;
  attn::softmax_rows(z, z);
  CHECK(z == y);
}

TEST_CASE("numerics: softmax with -inf masks and extreme finite logits", "[numerics][softmax]") {
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: masked cells stay exactly 0 beside a -1e30 logit, which gets all the mass.
  // Row 1: a fully masked row is all zeros (documented), never NaN.
  Mat x(2, 4), y(2, 4);
  x << -kBig, -inf, -inf, -inf,
       -inf, -inf, -inf, -inf;
  attn::softmax_rows(x, y);
  REQUIRE(all_finite(y));
  CHECK(y(0, 0) == 1.0f);
  CHECK(y.row(0).tail(3).isZero(0.0f));
  CHECK(y.row(1).isZero(0.0f));
}

TEST_CASE("numerics: softmax backward stays finite at saturated probabilities",
          "[numerics][softmax]") {
  Mat x(1, 4), y(1, 4), dy(1, 4), dx(1, 4);
  x << kBig, -kBig, 0.0f, kBig;
  dy << 1e6f, -1e6f, 3.0f, 0.5f;
  attn::softmax_rows(x, y);
  attn::softmax_rows_backward(y, dy, dx);
  REQUIRE(all_finite(dx));
  // y = [1/2, 0, 0, 1/2]; dot = (1e6 + 0.5) / 2; dx_j = y_j (dy_j - dot):
  // dx = [(1e6 - 0.5) / 4, 0, 0, -(1e6 - 0.5) / 4]
  CHECK_THAT(dx(0, 0), WithinRel((1e6 - 0.5) / 4, 1e-6));
  CHECK_THAT(dx(0, 1), WithinAbs(0.0, kTiny));
  CHECK_THAT(dx(0, 3), WithinRel(-(1e6 - 0.5) / 4, 1e-6));
}

TEST_CASE("numerics: cross-entropy of extreme logits is finite, with its limits",
          "[numerics][loss]") {
  // Row 0: target holds the dominant logit: loss 0, gradient 0 (softmax is one-hot).
  // Row 1: target holds -1e30 while another holds +1e30: loss = 1e30 - (-1e30) = 2e30, and
  //        the gradient is (onehot(argmax) - onehot(target)) / N, finite.
  // Row 2: all +1e30 (ties): loss = log(3).
  // Row 3: mixed, target at 0 among {0, 1e30, -1e30}: loss = 1e30.
  Mat logits(4, 3), dlogits(4, 3);
  logits << -kBig, kBig, -kBig,
            -kBig, kBig, -kBig,
            kBig, kBig, kBig,
            0.0f, kBig, -kBig;
  const int32_t targets[4] = {1, 0, 2, 0};
  const float loss = attn::cross_entropy(logits, targets, dlogits);
  REQUIRE(std::isfinite(loss));
  REQUIRE(all_finite(dlogits));
  // mean = (0 + 2e30 + log 3 + 1e30) / 4 = 7.5e29
  CHECK_THAT(loss, WithinRel(7.5e29, 1e-6));
  CHECK(dlogits.row(0).cwiseAbs().maxCoeff() <= kTiny);
  CHECK_THAT(dlogits(1, 0), WithinAbs(-0.25, 1e-7));
  CHECK_THAT(dlogits(1, 1), WithinAbs(0.25, 1e-7));
  CHECK_THAT(dlogits(2, 2), WithinAbs((1.0 / 3.0 - 1.0) / 4, 1e-7));
  // The gradient of each row sums to 0 (softmax sums to 1, minus the one-hot).
  for (int i = 0; i < 4; ++i) CHECK_THAT(dlogits.row(i).sum(), WithinAbs(0.0, 1e-6));
  CHECK_THAT(attn::cross_entropy_loss(logits, targets), WithinRel(7.5e29, 1e-6));
}

TEST_CASE("numerics: cross-entropy over a huge vocabulary row", "[numerics][loss]") {
  // V = 65536 (the largest vocabulary a file may describe). Row 0: all logits equal at 1e30,
  // loss = log(V) = 11.0903549. Row 1: one +1e30 spike at the target among -1e30: loss 0.
  // Row 2: a spike away from the target among -1e30: loss 2e30, gradient finite.
  // Row 3: random logits of magnitude up to 1e30: finite.
  const int V = 65536;
  Mat logits = Mat::Constant(4, V, -kBig), dlogits(4, V);
  logits.row(0).setConstant(kBig);
  logits(1, 12345) = kBig;
  logits(2, 7) = kBig;
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int j = 0; j < V; ++j) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    logits(3, j) = (static_cast<float>(s >> 40) / 16777216.0f * 2.0f - 1.0f) * kBig;
  }
  const int32_t targets[4] = {V - 1, 12345, 8, 0};
  Mat single(1, V), dsingle(1, V);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    single = logits.row(i);
    const float l = attn::cross_entropy(single, &targets[i], dsingle);
    REQUIRE(std::isfinite(l));
    REQUIRE(all_finite(dsingle));
    if (i == 0) CHECK_THAT(l, WithinAbs(std::log(double(V)), 1e-4));
    if (i == 1) CHECK(l == 0.0f);
    if (i == 2) CHECK_THAT(l, WithinRel(2e30, 1e-6));
  }
  const float loss = attn::cross_entropy(logits, targets, dlogits);
  REQUIRE(std::isfinite(loss));
  REQUIRE(all_finite(dlogits));

  Mat y(4, V);
  attn::softmax_rows(logits, y);
  check_probability_rows(y);
  CHECK_THAT(y(0, 0), WithinRel(1.0 / V, 1e-4));
}

TEST_CASE("numerics: cross-entropy where every row is ignored is 0, not NaN", "[numerics][loss]") {
  Mat logits = Mat::Constant(3, 5, kBig), dlogits = Mat::Constant(3, 5, 7.0f);
  const int32_t targets[3] = {attn::kIgnoreIndex, attn::kIgnoreIndex, attn::kIgnoreIndex};
  CHECK(attn::cross_entropy(logits, targets, dlogits) == 0.0f);
  CHECK(dlogits.isZero(0.0f));
}
