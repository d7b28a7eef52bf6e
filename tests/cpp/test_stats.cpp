// The chi-square test (cpp/attn/base/stats.h): the upper tail against closed forms, a statistic
// by hand, the pooling of small bins, impossible counts and the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attn/base/stats.h"
#include "expect_error.h"

using namespace attn;

TEST_CASE("chi-square: the upper tail matches the closed forms for 1 to 20 degrees of freedom") {
  constexpr double kPi = 3.14159265358979323846;
  for (double x : {0.01, 0.5, 1.0, 2.0, 3.841458820694124, 7.5, 15.0, 40.0, 90.0}) {
    const double h = x / 2;
    CAPTURE(x);
    // 1 dof: erfc(sqrt(x/2)); 3 dof: erfc(sqrt(h)) + 2 sqrt(h/pi) e^-h.
    CHECK(chi_square_upper_tail(x, 1) == Approx(std::erfc(std::sqrt(h))).epsilon(1e-9).margin(1e-300));
    CHECK(chi_square_upper_tail(x, 3) ==
          Approx(std::erfc(std::sqrt(h)) + 2 * std::sqrt(h / kPi) * std::exp(-h)).epsilon(1e-9).margin(1e-300));
    // 2k dof: e^-h sum_{i<k} h^i / i!.
    for (int k = 1; k <= 10; ++k) {
      double term = 1.0, sum = 0.0;
      for (int i = 0; i < k; ++i) {
        sum += term;
        term *= h / (i + 1);
      }
      CAPTURE(k);
      CHECK(chi_square_upper_tail(x, 2 * k) == Approx(std::exp(-h) * sum).epsilon(1e-9).margin(1e-300));
    }
  }
  CHECK(chi_square_upper_tail(3.841458820694124, 1) == Approx(0.05).epsilon(1e-9));
  CHECK(chi_square_upper_tail(11.070497693516351, 5) == Approx(0.05).epsilon(1e-9));
  CHECK(chi_square_upper_tail(0.0, 4) == 1.0);
  CHECK(chi_square_upper_tail(INFINITY, 4) == 0.0);
}

TEST_CASE("chi-square: a statistic by hand, small bins pooled, impossible counts") {
  // 100 samples, 4 equal bins: expected 25 each; (15^2 + 5^2 + 5^2 + 15^2) / 25 = 20, 3 dof.
  ChiSquare t = chi_square_test({10, 20, 30, 40}, {0.25, 0.25, 0.25, 0.25});
  CHECK(t.statistic == Approx(20.0));
  CHECK(t.dof == 3);
  CHECK(t.samples == 100);
  CHECK(t.p_value == Approx(chi_square_upper_tail(20.0, 3)));
  // Expected 48, 48, 2, 2: the last two (below 5) are pooled into one bin of 4: observed 50, 40, 10.
  // (2^2 / 48) + (8^2 / 48) + (6^2 / 4) = 0.0833 + 1.3333 + 9 = 10.4167, 2 dof.
  t = chi_square_test({50, 40, 6, 4}, {0.48, 0.48, 0.02, 0.02});
  CHECK(t.statistic == Approx(4.0 / 48 + 64.0 / 48 + 36.0 / 4));
  CHECK(t.dof == 2);
  // One bin only: nothing to test, p = 1.
  t = chi_square_test({7, 0}, {1.0, 0.0});
  CHECK(t.dof == 0);
  CHECK(t.p_value == 1.0);
  // A count where the probability is 0 cannot happen: infinite statistic, p = 0.
  t = chi_square_test({7, 1}, {1.0, 0.0});
  CHECK(t.impossible == 1);
  CHECK(std::isinf(t.statistic));
  CHECK(t.p_value == 0.0);

  check_error([] { chi_square_test({1, 2}, {1.0}); }, ErrorKind::Input, "", "2 counts and 1 probabilities");
  check_error([] { chi_square_test({1, -2}, {0.5, 0.5}); }, ErrorKind::Input, "", "count 1 (-2)");
  check_error([] { chi_square_test({1, 2}, {0.5, 0.6}); }, ErrorKind::Input, "", "sum to 1.1");
  check_error([] { chi_square_test({0, 0}, {0.5, 0.5}); }, ErrorKind::Input, "", "at least one sample");
  check_error([] { chi_square_upper_tail(1.0, 0); }, ErrorKind::Input, "", "got 0");
}
