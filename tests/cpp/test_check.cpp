// The comparisons the self-test panel and this suite share (attn/check.h), pinned on hand-made
// inputs whose answers are worked out here, so neither side takes its yardstick on trust.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "attn/base/check.h"

using namespace attn;

TEST_CASE("check: compare_close counts entries outside abs + rel * |ref|", "[check]") {
  const std::vector<float> ref = {1.0f, -2.0f, 0.0f, 10.0f};
  // Differences 0.05, 0.25, 0.05, 1.5; allowed 0.1 + 0.1 * |ref| = 0.2, 0.3, 0.1, 1.1.
  const std::vector<float> ours = {1.05f, -2.25f, 0.05f, 11.5f};
  const Closeness c = compare_close(ours.data(), ref.data(), ref.size(), {0.1, 0.1}, 4, "torch");
  CHECK(c.n == 4);
  CHECK(c.bad == 1);  // only [3]
  CHECK(c.max_abs_diff == Approx(1.5).epsilon(1e-6));
  CHECK(c.max_error == Approx(1.5 / 1.1).epsilon(1e-6));
  CHECK(c.first_bad == " [3] ours 11.5 torch 10;");

  // At most `show` offenders are listed, all are counted; a NaN is out of tolerance and kept.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> far = {5.0f, nan, 5.0f, 5.0f};
  const Closeness f = compare_close(far.data(), ref.data(), ref.size(), {0.1, 0.1}, 2);
  CHECK(f.bad == 4);
  CHECK(f.first_bad == " [0] ours 5 ref 1; [1] ours nan ref -2;");
  CHECK(std::isnan(f.max_abs_diff));
  CHECK(std::isnan(f.max_error));

  // A zero tolerance: exact entries pass with error 0, any difference is infinitely far.
  const Closeness exact = compare_close(ref.data(), ref.data(), ref.size(), {0.0, 0.0});
  CHECK(exact.bad == 0);
  CHECK(exact.max_error == 0.0);
  const Closeness off = compare_close(ours.data(), ref.data(), ref.size(), {0.0, 0.0});
  CHECK(off.bad == 4);
  CHECK(std::isinf(off.max_error));
}

TEST_CASE("check: central_difference of a cubic, and the value restored", "[check]") {
  float v = 0.75f;
  // (x+e)^3 - (x-e)^3 = 6x^2 e + 2e^3, over the step taken (2e up to rounding): 3x^2 + e^2.
  const double d = central_difference(&v, [&] { return double(v) * v * v; }, 1e-3f);
  CHECK(v == 0.75f);
  CHECK(d == Approx(3 * 0.75 * 0.75 + 1e-6).epsilon(1e-5));
}

TEST_CASE("check: fakeloss is sum(out * dout) and refuses mismatched shapes", "[check]") {
  Mat out(2, 2), dout(2, 2);
  out << 1, 2, 3, 4;
  dout << 0.5f, -1, 2, 0;
  CHECK(fakeloss(out, dout) == Approx(0.5 - 2 + 6));
  CHECK_THROWS_AS(fakeloss(out, Mat(2, 3)), std::invalid_argument);
}

TEST_CASE("check: check_gradient passes a right gradient and names a wrong one", "[check]") {
  // loss = sum(w_i^2 * c_i): gradient 2 c_i w_i.
  std::vector<float> w = {0.5f, -1.0f, 2.0f, 0.25f};
  const std::vector<double> c = {1.0, 3.0, -0.5, 2.0};
  auto loss = [&] {
    double s = 0.0;
    for (size_t i = 0; i < w.size(); ++i) s += double(w[i]) * w[i] * c[i];
    return s;
  };
  std::vector<float> grad(w.size());
  for (size_t i = 0; i < w.size(); ++i) grad[i] = float(2 * c[i] * w[i]);
  const GradientCheck good = check_gradient(w.data(), grad.data(), 4, loss);
  CHECK(good.checked == 4);
  CHECK(good.bad == 0);
  CHECK(good.max_grad == Approx(6.0).epsilon(1e-3));  // |2 * 3 * -1|
  CHECK(good.max_error < 0.1);
  CHECK(w == std::vector<float>{0.5f, -1.0f, 2.0f, 0.25f});

  grad[2] = 1.0f;  // should be -2
  const GradientCheck bad = check_gradient(w.data(), grad.data(), 4, loss, {1, 2});
  CHECK(bad.checked == 2);
  REQUIRE(bad.bad == 1);
  REQUIRE(bad.first_bad.size() == 1);
  CHECK(bad.first_bad[0].index == 2);
  CHECK(bad.first_bad[0].analytic == 1.0);
  CHECK(bad.first_bad[0].numeric == Approx(-2.0).epsilon(1e-3));
  CHECK(bad.max_abs_diff_at == 2);
  CHECK(bad.max_abs_diff == Approx(3.0).epsilon(1e-3));
  // |1 - (-2)| / (1e-3 + 2e-2 * 2), the default tolerance at magnitude 2.
  CHECK(bad.max_error_at == 2);
  CHECK(bad.max_error == Approx(3.0 / (1e-3 + 2e-2 * 2)).epsilon(1e-3));
  CHECK(bad.analytic_at == 1.0);
}
