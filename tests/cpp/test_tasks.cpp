// Task generators: names, and the repeat task's batches.
#include <catch2/catch.hpp>

#include <set>

#include "attn/tasks.h"

using Catch::Matchers::Contains;

TEST_CASE("tasks: names parse and print", "[tasks]") {
  CHECK(attn::parse_task("repeat") == attn::Task::Repeat);
  CHECK(std::string(attn::task_name(attn::Task::Repeat)) == "repeat");
  CHECK_THROWS_AS(attn::parse_task("copy"), std::invalid_argument);
  CHECK_THROWS_WITH(attn::parse_task("copy"), Contains("'copy'") && Contains("repeat"));
  CHECK_THROWS_WITH(attn::parse_task(""), Contains("''"));
}

TEST_CASE("tasks: repeat rows are one id repeated, targets are the inputs shifted by one",
          "[tasks]") {
  // The sequence is [id] * (T+1): inputs seq[:, :-1] and targets seq[:, 1:] are both [id] * T.
  attn::Rng rng(1);
  attn::Batch batch;
  const int V = 7, B = 64, T = 5;
  attn::make_batch(attn::Task::Repeat, V, B, T, rng, batch);
  REQUIRE(batch.inputs.rows() == B);
  REQUIRE(batch.inputs.cols() == T);
  REQUIRE(batch.targets.rows() == B);
  REQUIRE(batch.targets.cols() == T);
  std::set<int32_t> seen;
  for (int b = 0; b < B; ++b) {
    CAPTURE(b);
    const int32_t id = batch.inputs(b, 0);
    CHECK(id >= 0);
    CHECK(id < V);
    seen.insert(id);
    for (int t = 0; t < T; ++t) {
      CHECK(batch.inputs(b, t) == id);
      CHECK(batch.targets(b, t) == id);
    }
  }
  CHECK(seen.size() == size_t(V));  // 64 draws from 7 ids cover all of them (seeded)
}

TEST_CASE("tasks: batches are deterministic and draw one number per row", "[tasks]") {
  attn::Rng a(9), b(9);
  attn::Batch x, y;
  attn::make_batch(attn::Task::Repeat, 50, 16, 12, a, x);
  attn::make_batch(attn::Task::Repeat, 50, 16, 12, b, y);
  CHECK(x.inputs == y.inputs);
  CHECK(x.targets == y.targets);
  CHECK(a.state() == attn::Rng(9).state() + 16 * 0x9E3779B97F4A7C15ULL);
  // Row b's id is below(V) of the b-th draw.
  attn::Rng r(9);
  for (int row = 0; row < 16; ++row) CHECK(x.inputs(row, 0) == int32_t(r.below(50)));
}

TEST_CASE("tasks: storage is reused for the same (B,T)", "[tasks]") {
  attn::Rng rng(2);
  attn::Batch batch;
  attn::make_batch(attn::Task::Repeat, 10, 4, 6, rng, batch);
  const int32_t* in = batch.inputs.data();
  const int32_t* tg = batch.targets.data();
  attn::make_batch(attn::Task::Repeat, 10, 4, 6, rng, batch);
  CHECK(batch.inputs.data() == in);
  CHECK(batch.targets.data() == tg);
}

TEST_CASE("tasks: bad sizes are rejected with the values", "[tasks]") {
  attn::Rng rng(3);
  attn::Batch batch;
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Repeat, 0, 4, 6, rng, batch), Contains("0, 4, 6"));
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Repeat, 5, -1, 6, rng, batch),
                    Contains("5, -1, 6"));
  CHECK_THROWS_AS(attn::make_batch(attn::Task::Repeat, 5, 4, 0, rng, batch),
                  std::invalid_argument);
}
