// Task generators: names, every task's batches and targets, and every task's convergence budget.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "attn/data/tasks.h"
#include "attn/interp/readouts.h"
#include "attn/nn/loss.h"
#include "attn/train/trainer.h"
#include "task_budgets.h"

using Catch::Matchers::Contains;

TEST_CASE("tasks: names parse and print", "[tasks]") {
  for (const attn::Task task : attn::all_tasks())
    CHECK(attn::parse_task(attn::task_name(task)) == task);
  CHECK(attn::all_tasks().size() == 10);
  CHECK(attn::parse_task("induction") == attn::Task::Induction);
  CHECK(attn::parse_task("repeat") == attn::Task::Repeat);
  CHECK_THROWS_AS(attn::parse_task("Copy"), std::invalid_argument);
  CHECK_THROWS_WITH(attn::parse_task("bogus"), Contains("'bogus'") && Contains("repeat, shift"));
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

namespace {

constexpr int32_t kIgnore = attn::kIgnoreIndex;

}  // namespace

TEST_CASE("tasks: shift targets are the previous token; position 0 is ignored", "[tasks]") {
  attn::Rng rng(3);
  attn::Batch batch;
  attn::make_batch(attn::Task::Shift, 9, 8, 7, rng, batch);
  for (int b = 0; b < 8; ++b) {
    CHECK(batch.targets(b, 0) == kIgnore);
    for (int t = 1; t < 7; ++t) CHECK(batch.targets(b, t) == batch.inputs(b, t - 1));
  }
}

TEST_CASE("tasks: copy, reverse and sort build the second half from the first", "[tasks]") {
  // T = 11: z has 12 ids, h = 6; T = 12: z has 13 ids, h = 6 and one spare id (never a target).
  for (int T : {11, 12}) {
    CAPTURE(T);
    const int h = (T + 1) / 2;
    for (attn::Task task : {attn::Task::Copy, attn::Task::Reverse, attn::Task::Sort}) {
      CAPTURE(attn::task_name(task));
      attn::Rng rng(4);
      attn::Batch batch;
      attn::make_batch(task, 20, 16, T, rng, batch);
      for (int b = 0; b < 16; ++b) {
        // Inputs are z[0:T] and targets z[1:T+1] where defined: check the relation on z.
        std::vector<int32_t> z(batch.inputs.row(b).data(), batch.inputs.row(b).data() + T);
        for (int t = 0; t < T; ++t) {
          const bool predictable = t >= h - 1 && (task == attn::Task::Copy || t < 2 * h - 1);
          CHECK((batch.targets(b, t) != kIgnore) == predictable);
          if (t + 1 < T && predictable) CHECK(batch.targets(b, t) == z[t + 1]);
        }
        std::vector<int32_t> first(z.begin(), z.begin() + h), second;
        for (int i = h; i < 2 * h; ++i) second.push_back(i < T ? z[i] : batch.targets(b, T - 1));
        std::vector<int32_t> want = first;
        if (task == attn::Task::Reverse) std::reverse(want.begin(), want.end());
        if (task == attn::Task::Sort) {
          std::sort(want.begin(), want.end());
          CHECK(std::adjacent_find(want.begin(), want.end()) == want.end());  // distinct
        }
        CHECK(second == want);
      }
    }
  }
}

TEST_CASE("tasks: sequences too short, or a vocabulary too small to sort, are rejected",
          "[tasks]") {
  attn::Rng rng(5);
  attn::Batch batch;
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Shift, 5, 2, 1, rng, batch), Contains("seq_len >= 2"));
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Copy, 5, 2, 2, rng, batch), Contains("seq_len >= 3"));
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Sort, 5, 2, 12, rng, batch),
                    Contains("vocab_size (5) must be >= (seq_len + 1) / 2 = 6"));
  attn::TrainerConfig c;
  c.task.name = "sort";
  c.model.vocab_size = 4;
  CHECK_THROWS_WITH(c.validate(), Contains("task: the sort task"));
}

TEST_CASE("tasks: token accuracy counts argmax hits over predictable targets only", "[tasks]") {
  // 3 rows, V 3: row 0 argmax 2 (target 2, hit), row 1 argmax 0 (target 1, miss), row 2 ignored.
  attn::Mat logits(3, 3);
  logits << 0, 1, 5, 4, 3, 2, 9, 9, 9;
  const int32_t targets[3] = {2, 1, kIgnore};
  CHECK(attn::token_accuracy(logits, targets) == 0.5f);
  const int32_t none[3] = {kIgnore, kIgnore, kIgnore};
  CHECK(std::isnan(attn::token_accuracy(logits, none)));
}

// The budgets are tests/task_budgets.json's (with what was measured). The test trains every task
// of the core, so a task added without a row fails here; it stops at the first evaluation that
// reaches the target. Induction trains its preset here once; test_induction_budget.cpp (native)
// trains it on more seeds and checks the circuit it forms.
TEST_CASE("tasks: every task reaches its target within its budget (tests/task_budgets.json)",
          "[tasks][budget]") {
  const budgets::Table table = budgets::table();
  std::vector<std::string> core_tasks;
  for (const attn::Task task : attn::all_tasks()) core_tasks.push_back(attn::task_name(task));
  std::vector<std::string> rows;
  for (const budgets::TaskBudget& b : table.rows) rows.push_back(b.task);
  CHECK(rows == core_tasks);  // one row per task, in the core's order
  for (const std::string& task : core_tasks) {
    const budgets::TaskBudget& b = table.row(task);
    CAPTURE(task, b.target, b.steps);
    attn::Trainer t(b.config);
    const budgets::Run r = budgets::train_to_budget(t, b, table.eval_batches);
    CAPTURE(r.before, r.after, r.steps);
    CHECK(r.before < b.target);
    CHECK(r.after >= b.target);
    CHECK(budgets::metric(t, b, table.eval_batches) == r.after);  // the same eval batches every call
  }
}

TEST_CASE("tasks: task_targets gives exactly the targets make_batch drew, for every task and T",
          "[tasks]") {
  attn::Rng rng(21);
  attn::Batch batch;
  std::vector<int32_t> targets;
  for (const attn::Task task : attn::all_tasks())
    // text: windows of a corpus; markov: rows of its chain (test_markov.cpp)
    for (int T = 1; T <= 17 && task != attn::Task::Text && task != attn::Task::Markov; ++T) {
      const char* name = attn::task_name(task);
      try {
        attn::check_task(task, 40, T);
      } catch (const std::invalid_argument&) {
        continue;
      }
      CAPTURE(name, T);
      attn::make_batch(task, 40, 8, T, rng, batch);
      targets.resize(size_t(T));
      for (int b = 0; b < 8; ++b) {
        attn::task_targets(task, &batch.inputs(b, 0), T, targets.data());
        for (int t = 0; t < T; ++t) CHECK(targets[size_t(t)] == batch.targets(b, t));
      }
    }
  // Any sequence gets the rule's answer. T 5, h 3: positions 2..4 predict z[3..5], the first
  // half reversed (7 6 5) or sorted (5 6 7), whatever the inputs after the first half are.
  const int32_t x[5] = {6, 7, 5, 9, 9};
  int32_t y[5];
  attn::task_targets(attn::Task::Reverse, x, 5, y);
  CHECK(std::vector<int32_t>(y, y + 5) == std::vector<int32_t>{kIgnore, kIgnore, 5, 7, 6});
  attn::task_targets(attn::Task::Sort, x, 5, y);
  CHECK(std::vector<int32_t>(y, y + 5) == std::vector<int32_t>{kIgnore, kIgnore, 5, 6, 7});
}

TEST_CASE("tasks: future targets are the next input; the last is ignored", "[tasks]") {
  attn::Rng rng(22);
  attn::Batch batch;
  attn::make_batch(attn::Task::Future, 30, 6, 9, rng, batch);
  for (int b = 0; b < 6; ++b) {
    for (int t = 0; t + 1 < 9; ++t) CHECK(batch.targets(b, t) == batch.inputs(b, t + 1));
    CHECK(batch.targets(b, 8) == kIgnore);
  }
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Future, 5, 2, 1, rng, batch), Contains("seq_len >= 2"));
}

// Budget measured on the DemoConfig (seeds 42, 1, 2, 3; checked every 25 steps): accuracy >= 0.99
// after 175-200 steps with no mask and 200-250 with the inverted one; the test allows 500. With
// the causal mask the accuracy stays at chance (1/V, measured 0.012-0.020 over 500 steps).
TEST_CASE("tasks: future needs the future: chance with the causal mask, solved once the mask leaks",
          "[tasks][ablation]") {
  for (attn::MaskMode mode : {attn::MaskMode::Causal, attn::MaskMode::None, attn::MaskMode::Inverted}) {
    CAPTURE(attn::mask_mode_name(mode));
    attn::TrainerConfig c;
    c.task.name = "future";
    attn::Trainer t(c);
    attn::Trainer::Ablation a;
    a.mask = mode;
    t.set_ablation(a);
    t.step(500);
    const float acc = evaluate(t.model(), t.data(), 8).accuracy;
    CAPTURE(acc);
    if (mode == attn::MaskMode::Causal) CHECK(acc < 0.1f);  // chance is 1/64
    else CHECK(acc >= 0.99f);
  }
}

// ---- induction ----

namespace {

// The induction rule of find_repeat written out plainly: try every (first, second, length).
attn::Repeat plain_find_repeat(const std::vector<int32_t>& x) {
  const int T = int(x.size());
  const int shortest = std::max(2, std::min(4, std::min(8, T / 2)));
  attn::Repeat best;
  for (int second = 0; second < T; ++second)
    for (int first = 0; first < second; ++first)
      for (int len = shortest; first + len <= second && second + len <= T; ++len) {
        bool equal = true, distinct = true;
        for (int i = 0; i < len; ++i) {
          equal = equal && x[size_t(first + i)] == x[size_t(second + i)];
          for (int j = 0; j < i; ++j) distinct = distinct && x[size_t(second + i)] != x[size_t(second + j)];
        }
        const bool left_open = first > 0 && x[size_t(first - 1)] == x[size_t(second - 1)];
        const bool right_open = second + len < T && x[size_t(first + len)] == x[size_t(second + len)];
        if (!equal || !distinct || left_open || right_open) continue;
        // Loops run second, then first, upwards: only a strictly longer repeat replaces the best.
        if (len > best.length) best = {first, second, len};
      }
  return best;
}

}  // namespace

TEST_CASE("tasks: find_repeat finds the longest maximal repeat of distinct ids", "[tasks][induction]") {
  using V = std::vector<int32_t>;
  const auto find = [](const V& x) { return attn::find_repeat(x.data(), int(x.size())); };
  // T 12: segments of 4..6 ids. 1 2 3 4 at 0 and 6.
  CHECK(find(V{1, 2, 3, 4, 9, 8, 1, 2, 3, 4, 7, 6}) == attn::Repeat{0, 6, 4});
  // The ids before both occurrences match (5): the repeat is 5 1 2 3 4.
  CHECK(find(V{5, 1, 2, 3, 4, 8, 5, 1, 2, 3, 4, 6}) == attn::Repeat{0, 6, 5});
  // Only 3 ids repeat (T 12 needs 4): none.
  CHECK_FALSE(find(V{1, 2, 3, 9, 9, 9, 1, 2, 3, 8, 8, 8}).found());
  // A repeated id inside: 1 2 1 2 is not a segment of distinct ids.
  CHECK_FALSE(find(V{1, 2, 1, 2, 9, 8, 1, 2, 1, 2, 7, 6}).found());
  // Adjacent occurrences are fine; overlapping ones (period 2) are not.
  CHECK(find(V{1, 2, 3, 4, 1, 2, 3, 4, 9, 8, 7, 6}) == attn::Repeat{0, 4, 4});
  CHECK_FALSE(find(V{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}).found());
  // Two repeats of length 4: the one whose second occurrence comes first.
  CHECK(find(V{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}).length == 8);
  CHECK(find(V{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 0, 5, 6, 7, 8}) == attn::Repeat{0, 9, 4});
  // Random sequences, including ones rich in repeats (small V), against the plain rule.
  attn::Rng rng(31);
  for (int trial = 0; trial < 400; ++trial) {
    const int T = 4 + int(rng.below(29)), Vocab = 2 + int(rng.below(6));
    V x(static_cast<size_t>(T));
    for (int32_t& id : x) id = int32_t(rng.below(uint32_t(Vocab)));
    CAPTURE(trial, T, Vocab);
    const attn::Repeat got = find(x), want = plain_find_repeat(x);
    CHECK(got.first == want.first);
    CHECK(got.second == want.second);
    CHECK(got.length == want.length);
  }
}

TEST_CASE("tasks: induction rows hold one segment of distinct ids, twice, and count only its "
          "determined positions", "[tasks][induction]") {
  for (const auto& [Vocab, T] : std::vector<std::pair<int, int>>{{32, 32}, {10, 32}, {64, 12}, {6, 8}, {4, 4}, {12, 17}}) {
    CAPTURE(Vocab, T);
    const attn::SegmentLengths lengths = attn::induction_lengths(T);
    attn::Rng rng(uint64_t(Vocab * 1000 + T));
    attn::Batch batch;
    std::set<int> firsts, seconds, lens, gaps;
    for (int round = 0; round < 8; ++round) {
      attn::make_batch(attn::Task::Induction, Vocab, 64, T, rng, batch);
      for (int b = 0; b < 64; ++b) {
        CAPTURE(round, b);
        const std::vector<int32_t> x(&batch.inputs(b, 0), &batch.inputs(b, 0) + T);
        const attn::Repeat r = plain_find_repeat(x);
        REQUIRE(r.found());
        CHECK(r.length >= lengths.min);
        CHECK(r.length <= lengths.max);
        CHECK(r.first + r.length <= r.second);  // two occurrences, no overlap
        CHECK(r.second + r.length <= T);
        for (int i = 0; i < r.length; ++i) {
          // The segment's ids are distinct and occur exactly twice in the row.
          const int32_t id = x[size_t(r.second + i)];
          CHECK(std::count(x.begin(), x.end(), id) == 2);
          for (int j = 0; j < i; ++j) CHECK(x[size_t(r.second + j)] != id);
        }
        for (int32_t id : x) CHECK((id >= 0 && id < Vocab));
        // Counted: second .. second + length - 2; the answer is the id after the current id's
        // first occurrence, which is also the next input.
        for (int t = 0; t < T; ++t) {
          const bool counted = t >= r.second && t < r.second + r.length - 1;
          CHECK((batch.targets(b, t) != kIgnore) == counted);
          if (counted) {
            CHECK(batch.targets(b, t) == x[size_t(r.first + t - r.second + 1)]);
            CHECK(batch.targets(b, t) == x[size_t(t + 1)]);
          }
        }
        firsts.insert(r.first);
        seconds.insert(r.second);
        lens.insert(r.length);
        gaps.insert(r.second - r.first);
      }
    }
    // Offsets and lengths vary: every length, and at least half of the possible places for each
    // occurrence and for the distance between them (first in [0, spare], where spare = T - 2L
    // fillers around the shortest segments; the extremes need both offset draws to agree).
    CHECK(int(lens.size()) == lengths.max - lengths.min + 1);
    const int spare = T - 2 * lengths.min;
    CAPTURE(firsts.size(), seconds.size(), gaps.size());
    CHECK(2 * int(firsts.size()) >= spare + 1);
    CHECK(2 * int(seconds.size()) >= spare + 1);
    CHECK(2 * int(gaps.size()) >= spare + 1);
  }
}

TEST_CASE("tasks: induction batches are deterministic and need T >= 4 and V >= longest + 2",
          "[tasks][induction]") {
  attn::Rng a(5), b(5), c(6);
  attn::Batch x, y, z;
  attn::make_batch(attn::Task::Induction, 32, 16, 32, a, x);
  attn::make_batch(attn::Task::Induction, 32, 16, 32, b, y);
  attn::make_batch(attn::Task::Induction, 32, 16, 32, c, z);
  CHECK(x.inputs == y.inputs);
  CHECK(x.targets == y.targets);
  CHECK(a.state() == b.state());
  CHECK(x.inputs != z.inputs);
  CHECK(attn::induction_lengths(32).min == 4);
  CHECK(attn::induction_lengths(32).max == 8);
  CHECK(attn::induction_lengths(12).max == 6);
  CHECK(attn::induction_lengths(7).min == 3);
  CHECK(attn::induction_lengths(5).min == 2);
  attn::Batch batch;
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Induction, 32, 2, 3, a, batch),
                    Contains("the induction task needs seq_len >= 4, got 3"));
  CHECK_THROWS_WITH(attn::make_batch(attn::Task::Induction, 9, 2, 32, a, batch),
                    Contains("vocab_size (9) must be >= 10"));
  attn::make_batch(attn::Task::Induction, 10, 2, 32, a, batch);  // the smallest V that works
  // Any sequence gets the rule's answer: 1 2 3 4 at 0 and 6 (T 12): positions 6, 7, 8 predict
  // 2, 3, 4; the last position of the occurrence predicts what follows it (7), not counted.
  const int32_t seq[12] = {1, 2, 3, 4, 9, 8, 1, 2, 3, 4, 7, 6};
  int32_t targets[12];
  attn::task_targets(attn::Task::Induction, seq, 12, targets);
  std::vector<int32_t> want(12, kIgnore);
  want[6] = 2, want[7] = 3, want[8] = 4;
  CHECK(std::vector<int32_t>(targets, targets + 12) == want);
  const int32_t none[6] = {1, 2, 3, 4, 5, 6};
  attn::task_targets(attn::Task::Induction, none, 6, targets);
  CHECK(std::vector<int32_t>(targets, targets + 6) == std::vector<int32_t>(6, kIgnore));
}

TEST_CASE("tasks: task_sample is row 0 of the generator's batch for that seed", "[tasks][sample]") {
  const uint64_t seeds[] = {0, 1, 2, 41, (uint64_t(1) << 40) + 3};
  for (const attn::Task task : attn::all_tasks()) {
    // Induction needs T >= 4 (below); text and markov have no generator (their samples are the
    // corpus's and the chain's, test_markov.cpp).
    if (task == attn::Task::Induction || task == attn::Task::Text || task == attn::Task::Markov)
      continue;
    const char* name = attn::task_name(task);
    for (int T : {3, 12, 13}) {
      for (uint64_t seed : seeds) {
        CAPTURE(name, T, seed);
        attn::Rng rng(seed);
        attn::Batch batch;
        attn::make_batch(task, 16, 5, T, rng, batch);
        const std::vector<int32_t> row(&batch.inputs(0, 0), &batch.inputs(0, 0) + T);
        CHECK(attn::task_sample(task, 16, T, seed) == row);
      }
    }
  }
  // The induction generator needs T >= 4: its rows carry their segment twice.
  for (int T : {12, 32})
    for (uint64_t seed : seeds) {
      CAPTURE(T, seed);
      attn::Rng rng(seed);
      attn::Batch batch;
      attn::make_batch(attn::Task::Induction, 16, 5, T, rng, batch);
      const std::vector<int32_t> row(&batch.inputs(0, 0), &batch.inputs(0, 0) + T);
      CHECK(attn::task_sample(attn::Task::Induction, 16, T, seed) == row);
      CHECK(attn::find_repeat(row.data(), T).found());
    }
  // A plain reference for repeat: the seed's first draw, T times.
  for (uint64_t seed : seeds) {
    attn::Rng r(seed);
    CHECK(attn::task_sample(attn::Task::Repeat, 64, 12, seed) == std::vector<int32_t>(12, int32_t(r.below(64))));
  }
  // Seeds n and n + 1 ("new sample") give different sequences.
  CHECK(attn::task_sample(attn::Task::Shift, 64, 12, 1) != attn::task_sample(attn::Task::Shift, 64, 12, 2));
  // The generator's own checks: a config error naming the task.
  CHECK_THROWS_WITH(attn::task_sample(attn::Task::Sort, 4, 12, 1), Contains("vocab_size (4)"));
  CHECK_THROWS_WITH(attn::task_sample(attn::Task::Copy, 8, 2, 1), Contains("seq_len >= 3"));
}
