#include "attn/base/stats.h"

#include <cmath>
#include <limits>

#include "attn/base/tensor.h"

namespace attn {

namespace {

// P(a, x), the regularised lower incomplete gamma, by its power series
// x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a + 1) ... (a + k)); converges quickly for x < a + 1.
double lower_gamma_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int k = 1; k < 10000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (std::abs(term) < std::abs(sum) * 1e-16) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Q(a, x) = 1 - P(a, x) by Legendre's continued fraction, evaluated with the modified Lentz
// method; converges quickly for x > a + 1.
double upper_gamma_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

}  // namespace

double chi_square_upper_tail(double x, int dof) {
  require(dof >= 1, "the chi-square test needs at least 1 degree of freedom, got ", dof);
  require(x >= 0.0, "a chi-square statistic is >= 0, got ", x);
  if (std::isinf(x)) return 0.0;
  if (x == 0.0) return 1.0;
  const double a = 0.5 * dof, h = 0.5 * x;
  return h < a + 1.0 ? 1.0 - lower_gamma_series(a, h) : upper_gamma_fraction(a, h);
}

ChiSquare chi_square_test(const std::vector<int64_t>& counts, const std::vector<double>& probs,
                          double min_expected) {
  require(counts.size() == probs.size() && !counts.empty(), "the chi-square test needs one count "
          "per probability, got ", counts.size(), " counts and ", probs.size(), " probabilities");
  ChiSquare r;
  double total_p = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    require(counts[i] >= 0, "count ", i, " (", counts[i], ") is negative");
    require(probs[i] >= 0.0 && std::isfinite(probs[i]), "probability ", i, " (", probs[i],
            ") is not a probability");
    r.samples += counts[i];
    total_p += probs[i];
  }
  require(std::abs(total_p - 1.0) <= 1e-4, "the probabilities sum to ", total_p, ", not 1");
  require(r.samples > 0, "the chi-square test needs at least one sample");
  const double n = double(r.samples);
  double pooled_observed = 0.0, pooled_expected = 0.0;
  int bins = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = n * probs[i] / total_p;
    if (probs[i] == 0.0) {
      r.impossible += counts[i];
      continue;
    }
    if (expected < min_expected) {
      pooled_observed += double(counts[i]);
      pooled_expected += expected;
      continue;
    }
    const double d = double(counts[i]) - expected;
    r.statistic += d * d / expected;
    ++bins;
  }
  if (pooled_expected > 0.0) {
    const double d = pooled_observed - pooled_expected;
    r.statistic += d * d / pooled_expected;
    ++bins;
  }
  r.dof = bins - 1;
  if (r.impossible > 0) {
    r.statistic = std::numeric_limits<double>::infinity();
    r.p_value = 0.0;
  } else {
    r.p_value = r.dof >= 1 ? chi_square_upper_tail(r.statistic, r.dof) : 1.0;
  }
  return r;
}

}  // namespace attn
