// Cross-entropy (mean over non-ignored rows) and its gradient.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attn/nn/loss.h"
#include "gradcheck.h"

using attn::Mat;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("cross-entropy: a tiny case computed by hand", "[loss]") {
  // row 0: logits [1, 2, 3], target 2
  //   loss0 = log(e^1 + e^2 + e^3) - 3 = log(30.1928) - 3 = 3.4076060 - 3 = 0.4076060
  // row 1: logits [0, 0, 0], target 0
  //   loss1 = log(3) - 0 = 1.0986123
  // mean = (0.4076060 + 1.0986123) / 2 = 0.7531091
  // dlogits = (softmax - onehot) / 2:
  //   row 0: ([0.0900306, 0.2447285, 0.6652410] - [0, 0, 1]) / 2
  //          = [0.0450153, 0.1223642, -0.1673795]
  //   row 1: ([1/3, 1/3, 1/3] - [1, 0, 0]) / 2 = [-1/3, 1/6, 1/6]
  Mat logits(2, 3), dlogits(2, 3);
  logits << 1, 2, 3, 0, 0, 0;
  const int32_t targets[2] = {2, 0};
  const float loss = attn::cross_entropy(logits, targets, dlogits);
  CHECK_THAT(loss, WithinAbs(0.7531091, 1e-6));
  CHECK_THAT(dlogits(0, 0), WithinAbs(0.0450153, 1e-6));
  CHECK_THAT(dlogits(0, 1), WithinAbs(0.1223642, 1e-6));
  CHECK_THAT(dlogits(0, 2), WithinAbs(-0.1673795, 1e-6));
  CHECK_THAT(dlogits(1, 0), WithinAbs(-1.0 / 3.0, 1e-6));
  CHECK_THAT(dlogits(1, 1), WithinAbs(1.0 / 6.0, 1e-6));
  CHECK_THAT(dlogits(1, 2), WithinAbs(1.0 / 6.0, 1e-6));
  CHECK(attn::cross_entropy_loss(logits, targets) == loss);
}

TEST_CASE("cross-entropy: ignored rows do not count and get zero gradient", "[loss]") {
  // The same two rows as above plus an ignored one: the mean is still over 2 rows.
  Mat logits(3, 3), dlogits = Mat::Constant(3, 3, 9.0f);
  logits << 1, 2, 3, 5, -5, 7, 0, 0, 0;
  const int32_t targets[3] = {2, attn::kIgnoreIndex, 0};
  CHECK_THAT(attn::cross_entropy(logits, targets, dlogits), WithinAbs(0.7531091, 1e-6));
  CHECK(dlogits.row(1).isZero(0));
  CHECK_THAT(dlogits(2, 0), WithinAbs(-1.0 / 3.0, 1e-6));
  // Every row ignored: the loss is 0 and so is the gradient.
  const int32_t none[3] = {attn::kIgnoreIndex, attn::kIgnoreIndex, attn::kIgnoreIndex};
  CHECK(attn::cross_entropy(logits, none, dlogits) == 0.0f);
  CHECK(dlogits.isZero(0));
  CHECK(attn::cross_entropy_loss(logits, none) == 0.0f);
}

TEST_CASE("cross-entropy: stable for large logits", "[loss]") {
  // Adding 10000 to a row changes nothing mathematically; a naive exp would overflow.
  Mat small(1, 4), big(1, 4), d1(1, 4), d2(1, 4);
  small << 0.5f, -1.0f, 2.0f, 0.0f;
  big = small.array() + 10000.0f;
  const int32_t t[1] = {1};
  const float a = attn::cross_entropy(small, t, d1), b = attn::cross_entropy(big, t, d2);
  REQUIRE(std::isfinite(b));
  CHECK_THAT(b, WithinAbs(a, 2e-3));  // 10000 has float spacing 1e-3
  CHECK(gradcheck::max_abs_diff(d1, d2) < 1e-3f);
  // A confident, correct prediction: loss ~ 0, not NaN.
  Mat sure(1, 3), d(1, 3);
  sure << 0, 200, 0;
  const int32_t t2[1] = {1};
  CHECK_THAT(attn::cross_entropy(sure, t2, d), WithinAbs(0.0, 1e-6));
  CHECK(d.allFinite());
}

// Finite differences: tests/cpp/test_gradcheck.cpp.
TEST_CASE("cross-entropy: each row of the gradient sums to 0", "[loss]") {
  attn::Rng rng(1);
  Mat logits = gradcheck::random_mat(6, 5, rng, 2.0f);
  const int32_t targets[6] = {0, 4, attn::kIgnoreIndex, 2, 2, 1};
  Mat dlogits(6, 5);
  attn::cross_entropy(logits, targets, dlogits);
  // Each row of the gradient sums to 0 (softmax sums to 1, the one-hot to 1).
  for (int i = 0; i < 6; ++i) CHECK_THAT(dlogits.row(i).sum(), WithinAbs(0.0, 1e-6));
}

TEST_CASE("cross-entropy: bad targets and shapes are rejected with the values", "[loss]") {
  Mat logits = Mat::Zero(3, 4), d(3, 4);
  const int32_t high[3] = {0, 4, 1};
  const int32_t neg[3] = {0, 1, -1};
  CHECK_THROWS_WITH(attn::cross_entropy(logits, high, d),
                    Contains("target id 4") && Contains("position 1") && Contains("[0, 4)"));
  CHECK_THROWS_WITH(attn::cross_entropy_loss(logits, neg),
                    Contains("target id -1") && Contains("position 2"));
  Mat wrong(3, 5);
  const int32_t ok[3] = {0, 1, 2};
  CHECK_THROWS_AS(attn::cross_entropy(logits, ok, wrong), std::invalid_argument);
}
