// llm.c's check_tensor for the Catch2 suite: ours against a reference, entry by entry, with
// |ours - ref| <= abs + rel * |ref|; keeps the largest difference and the first few offenders
// for the failure message. (The self-test panel has its own comparison, in attn/selftest.cpp:
// the tests do not take their yardstick from the code they check.)
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "attn/tensor.h"

namespace compare {

struct Stats {
  size_t n = 0;               // values compared
  double max_abs_diff = 0.0;  // largest |ours - ref| (NaN if any difference is NaN)
  size_t bad = 0;             // entries out of tolerance (a NaN difference counts as bad)
  std::string first_bad;      // the first few offenders: " [i] ours x ref y;" each
};

inline Stats within(const float* ours, const float* ref, size_t n, double abs_tol,
                    double rel_tol, size_t show = 4) {
  Stats st;
  st.n = n;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(ours[i]) - double(ref[i]));
    if (!std::isnan(st.max_abs_diff) && (std::isnan(d) || d > st.max_abs_diff))
      st.max_abs_diff = d;  // keeps the first NaN
    if (!(d <= abs_tol + rel_tol * std::fabs(double(ref[i])))) {
      if (st.bad < show)
        st.first_bad += attn::str_cat(" [", i, "] ours ", ours[i], " ref ", ref[i], ";");
      ++st.bad;
    }
  }
  return st;
}

}  // namespace compare
