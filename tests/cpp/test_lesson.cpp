// The lesson's inputs (teach/lesson.h): one embedding row per word from the word's own stream,
// every head the lesson's SelfAttention of seed + h, W_o from its own stream; the same on every
// call and platform, and bad arguments named.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/base/rng.h"
#include "attn/nn/attention.h"
#include "attn/teach/lesson.h"
#include "expect_error.h"

using attn::LessonInputs;
using attn::Mat;

TEST_CASE("lesson inputs: equal words share a row, from the word's own stream", "[lesson]") {
  const std::vector<std::string> words = {"the", "cat", "sat", "on", "the", "mat"};
  const LessonInputs in = attn::lesson_inputs(words, 8, 4, 3, 2, 42);
  REQUIRE(in.E.rows() == 6);
  REQUIRE(in.E.cols() == 8);
  CHECK(in.E.row(0) == in.E.row(4));  // "the" twice
  CHECK(in.E.row(0) != in.E.row(1));
  // Row of "cat": 8 normals from Rng(42 ^ fnv1a64("cat")), whatever the other words are.
  attn::Rng rng(42 ^ attn::fnv1a64("cat"));
  for (int j = 0; j < 8; ++j) CHECK(in.E(1, j) == rng.normal());
  const LessonInputs alone = attn::lesson_inputs({"a", "cat"}, 8, 4, 3, 1, 42);
  CHECK(alone.E.row(1) == in.E.row(1));
  // FNV-1a of "a" (0xaf63dc4c8601ec8c), the published test vector.
  CHECK(attn::fnv1a64("a") == 0xAF63DC4C8601EC8CULL);
  CHECK(attn::fnv1a64("") == 0xCBF29CE484222325ULL);
}

TEST_CASE("lesson inputs: head h is SelfAttention(D, dk, dv, seed + h); W_o its own stream",
          "[lesson]") {
  const int D = 6, dk = 4, dv = 3, H = 3;
  const LessonInputs in = attn::lesson_inputs({"x"}, D, dk, dv, H, 7);
  REQUIRE(in.Wq.size() == size_t(H));
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    const attn::SelfAttention a(D, dk, dv, 7 + uint64_t(h));
    CHECK(in.Wq[size_t(h)] == a.Wq);
    CHECK(in.Wk[size_t(h)] == a.Wk);
    CHECK(in.Wv[size_t(h)] == a.Wv);
  }
  REQUIRE(in.Wo.rows() == H * dv);
  REQUIRE(in.Wo.cols() == D);
  attn::Rng wo(7 ^ attn::kLessonWoStream);
  const float std_wo = float(std::sqrt(2.0 / (H * dv + D)));
  for (Eigen::Index i = 0; i < in.Wo.size(); ++i) CHECK(in.Wo.data()[i] == wo.normal() * std_wo);
  // The same inputs on every call; another seed, other inputs.
  const LessonInputs again = attn::lesson_inputs({"x"}, D, dk, dv, H, 7);
  CHECK(again.E == in.E);
  CHECK(again.Wo == in.Wo);
  CHECK(attn::lesson_inputs({"x"}, D, dk, dv, H, 8).E != in.E);
}

TEST_CASE("lesson inputs: bad sizes are named", "[lesson]") {
  using attn::ErrorKind;
  check_error([] { attn::lesson_inputs({}, 8, 4, 4, 1, 0); }, ErrorKind::Input, "", "got 0");
  check_error([] { attn::lesson_inputs(std::vector<std::string>(65, "a"), 8, 4, 4, 1, 0); },
              ErrorKind::Input, "", "got 65");
  check_error([] { attn::lesson_inputs({"a"}, 0, 4, 4, 1, 0); }, ErrorKind::Input, "", "d_model (0)");
  check_error([] { attn::lesson_inputs({"a"}, 8, 65, 4, 1, 0); }, ErrorKind::Input, "", "dk (65)");
  check_error([] { attn::lesson_inputs({"a"}, 8, 4, 0, 1, 0); }, ErrorKind::Input, "", "dv (0)");
  check_error([] { attn::lesson_inputs({"a"}, 8, 4, 4, 9, 0); }, ErrorKind::Input, "", "heads (9)");
}
