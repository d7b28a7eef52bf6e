// llm.c's check_tensor for the Catch2 suite: ours against a reference, entry by entry, with
// |ours - ref| <= abs + rel * |ref|. The comparison is the core's (attn/check.h, which the
// self-test panel uses too; test_check.cpp pins it on hand-made inputs).
#pragma once

#include <cstddef>

#include "attn/check.h"

namespace compare {

using Stats = attn::Closeness;

inline Stats within(const float* ours, const float* ref, size_t n, double abs_tol,
                    double rel_tol, size_t show = 4) {
  return attn::compare_close(ours, ref, n, attn::Tolerance{abs_tol, rel_tol}, show);
}

}  // namespace compare
