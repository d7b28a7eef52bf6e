// Pearson's chi-square goodness-of-fit test: observed counts against the probabilities a
// distribution gives them, with the p-value from the chi-square distribution's upper tail. The
// speculative decoder's exactness check and its tests use it.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

// The test's result. Bins whose expected count (samples * probability) is below min_expected are
// pooled into one bin (kept only if its expected count is positive), so the chi-square
// approximation holds; dof = bins - 1.
struct ChiSquare {
  double statistic = 0.0;  // sum over bins of (observed - expected)^2 / expected
  int dof = 0;             // degrees of freedom
  double p_value = 1.0;    // P(X >= statistic) for X ~ chi-square(dof); 1 when dof is 0
  int64_t samples = 0;     // the sum of the counts
  // Counts in bins of probability 0: such a count is impossible under the distribution, and
  // makes the statistic infinite and the p-value 0.
  int64_t impossible = 0;
};

// counts (n) against probs (n, summing to 1 within 1e-4; each >= 0). An Error of kind Input for
// mismatched sizes, a negative count or probability, probabilities that do not sum to 1, or no
// samples.
ChiSquare chi_square_test(const std::vector<int64_t>& counts, const std::vector<double>& probs,
                          double min_expected = 5.0);

// P(X >= x) for X ~ chi-square(dof), dof >= 1, x >= 0: the regularised upper incomplete gamma
// function Q(dof/2, x/2), by its series below a + 1 and its continued fraction above.
double chi_square_upper_tail(double x, int dof);

}  // namespace attn
