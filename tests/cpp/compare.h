// llm.c's check_tensor for the Catch2 suite: ours against a reference, entry by entry, with
// |ours - ref| <= abs + rel * |ref|. The comparison is the core's (attn/check.h, which the
// self-test panel uses too; test_check.cpp pins it on hand-made inputs).
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "attn/base/check.h"

namespace compare {

using Stats = attn::Closeness;

inline Stats within(const float* ours, const float* ref, size_t n, double abs_tol,
                    double rel_tol, size_t show = 4) {
  return attn::compare_close(ours, ref, n, attn::Tolerance{abs_tol, rel_tol}, show);
}

// Gradients against PyTorch's: a small absolute floor for the exact zeros.
constexpr double kGradAbs = 1e-7, kGradRel = 1e-4;

// One Catch2 check for a whole tensor: on failure it names the tensor, the count out of
// tolerance, the largest difference and the first offenders.
inline void check_close(const std::string& what, const float* ours, const std::vector<float>& ref,
                        double abs_tol, double rel_tol) {
  const Stats st = within(ours, ref.data(), ref.size(), abs_tol, rel_tol);
  INFO(what << ": " << st.n << " values, max |diff| " << st.max_abs_diff << ", " << st.bad
            << " out of tolerance" << st.first_bad);
  CHECK(st.bad == 0);
}

}  // namespace compare
