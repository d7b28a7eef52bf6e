#include "attn/data/tasks.h"

#include <algorithm>

#include "attn/nn/loss.h"

namespace attn {

namespace {

// Largest T + 1 a row can have; keeps the per-row scratch on the stack.
constexpr int kMaxRow = 4097;

// A uniform id in [0, V) that is not in excluded (n ids, sorted ascending, distinct, all < V,
// n < V): draws r in [0, V - n) and steps r past each excluded id at or below it.
int32_t draw_excluding(Rng& rng, int V, const int32_t* excluded, int n) {
  int32_t id = static_cast<int32_t>(rng.below(uint32_t(V - n)));
  for (int i = 0; i < n; ++i)
    if (excluded[i] <= id) ++id;
  return id;
}

// Inserts id into the n sorted ids at a (room for n + 1), keeping them sorted.
void insert_sorted(int32_t* a, int n, int32_t id) {
  int i = n;
  for (; i > 0 && a[i - 1] > id; --i) a[i] = a[i - 1];
  a[i] = id;
}

// One induction row z[0:T]: the segment length L, its L distinct ids, the two offsets, then
// fillers from the other ids, redrawn until find_repeat finds exactly this segment (the only
// way it can fail once the two boundary fillers differ is a repeat among the fillers that is as
// long as the segment: rare, and each redraw succeeds with the same probability).
void draw_induction_row(int V, int T, Rng& rng, int32_t* z) {
  const SegmentLengths lengths = induction_lengths(T);
  const int L = lengths.min + int(rng.below(uint32_t(lengths.max - lengths.min + 1)));
  int32_t segment[8], sorted[8], plus[9];
  for (int i = 0; i < L; ++i) {
    int32_t id;
    do id = static_cast<int32_t>(rng.below(uint32_t(V)));
    while (std::find(segment, segment + i, id) != segment + i);
    segment[i] = id;
    insert_sorted(sorted, i, id);
  }
  // first = a, second = b + L with a <= b: every split of the T - 2L fillers into the three
  // gaps (before, between, after) is possible.
  const uint32_t spare = uint32_t(T - 2 * L + 1);
  const int u = int(rng.below(spare)), v = int(rng.below(spare));
  const Repeat want{std::min(u, v), std::max(u, v) + L, L};
  const auto in_segment = [&](int t) {
    return (t >= want.first && t < want.first + L) || (t >= want.second && t < want.second + L);
  };
  for (int i = 0; i < L; ++i) z[want.first + i] = z[want.second + i] = segment[i];
  // The filler that must differ from neighbour, among the ids outside the segment.
  const auto redraw_unlike = [&](int t, int32_t neighbour) {
    std::copy(sorted, sorted + L, plus);
    insert_sorted(plus, L, neighbour);
    z[t] = draw_excluding(rng, V, plus, L + 1);
  };
  for (;;) {
    for (int t = 0; t < T; ++t)
      if (!in_segment(t)) z[t] = draw_excluding(rng, V, sorted, L);
    // A filler can only equal a filler: these two are the cases where the ids on both sides of
    // the occurrences match, which would make the repeat longer than the segment.
    const int before = want.second - 1, after = want.second + L;
    if (want.first > 0 && z[before] == z[want.first - 1]) redraw_unlike(before, z[want.first - 1]);
    if (after < T && z[after] == z[want.first + L]) redraw_unlike(after, z[want.first + L]);
    if (find_repeat(z, T) == want) return;
  }
}

// True when the n ids at x are distinct (scratch holds n ids).
bool distinct_ids(const int32_t* x, int n, int32_t* scratch) {
  std::copy(x, x + n, scratch);
  std::sort(scratch, scratch + n);
  return std::adjacent_find(scratch, scratch + n) == scratch + n;
}

}  // namespace

Task parse_task(const std::string& name) {
  return static_cast<Task>(parse_enum(kTasks, name));
}

const char* task_name(Task task) { return kTaskNames[static_cast<int>(task)]; }

BatchKind task_batch_kind(Task) { return BatchKind::Ids; }

std::vector<Task> all_tasks() {
  std::vector<Task> tasks;
  for (size_t i = 0; i < std::size(kTaskNames); ++i) tasks.push_back(static_cast<Task>(i));
  return tasks;
}

void check_task(Task task, int V, int T, const TaskParams& p) {
  require_config(T >= 1 && T < kMaxRow, "seq_len", "sequence length (", T, ") must be in [1, ",
                 kMaxRow - 1, "]");
  const int h = (T + 1) / 2;
  if (task == Task::Shift || task == Task::Future)
    require_config(T >= 2, "task", "the ", task_name(task), " task needs seq_len >= 2, got ", T);
  if (task == Task::Copy || task == Task::Reverse || task == Task::Sort)
    require_config(T >= 3, "task", "the ", task_name(task), " task needs seq_len >= 3, got ", T);
  if (task == Task::Sort)
    require_config(V >= h, "task", "the sort task draws ", h,
                   " distinct ids per row, so vocab_size (", V,
                   ") must be >= (seq_len + 1) / 2 = ", h);
  if (task == Task::Lag)
    require_config(p.lag >= 1 && p.lag < T, "lag", "lag (", p.lag,
                   ") must be in [1, seq_len) = [1, ", T, ")");
  if (task == Task::Markov)
    require_config(T >= p.markov_order + 1, "task", "the markov task of order ", p.markov_order,
                   " needs seq_len >= ", p.markov_order + 1, " (a scored position), got ", T);
  if (task == Task::Induction) {
    require_config(T >= 4, "task", "the induction task needs seq_len >= 4, got ", T);
    const int longest = induction_lengths(T).max;
    require_config(V >= longest + 2, "task", "the induction task draws segments of up to ",
                   longest, " distinct ids and fillers from at least 2 other ids, so vocab_size (",
                   V, ") must be >= ", longest + 2);
  }
}

SegmentLengths induction_lengths(int T) {
  const int longest = std::min(8, T / 2);
  return {std::max(2, std::min(4, longest)), longest};
}

Repeat find_repeat(const int32_t* x, int T) {
  require(T >= 1 && T < kMaxRow, "sequence length (", T, ") must be in [1, ", kMaxRow - 1, "]");
  const int shortest = induction_lengths(T).min;
  int32_t scratch[kMaxRow];
  Repeat best;
  // d = second - first. For each d, the maximal runs of x[t] == x[t - d] are the maximal repeats
  // at that distance; a run longer than d overlaps itself (and repeats an id).
  for (int d = 1; d < T; ++d)
    for (int t = d; t < T;) {
      if (x[t] != x[t - d]) {
        ++t;
        continue;
      }
      const int second = t;
      while (t < T && x[t] == x[t - d]) ++t;
      const Repeat r{second - d, second, t - second};
      const bool better = r.length > best.length ||
                          (r.length == best.length && (r.second < best.second ||
                                                       (r.second == best.second && r.first < best.first)));
      if (r.length >= shortest && r.length <= d && better && distinct_ids(x + second, r.length, scratch))
        best = r;
    }
  return best;
}

void make_batch(Task task, int V, int B, int T, Rng& rng, Batch& batch, const TaskParams& p) {
  require(V >= 1 && B >= 1 && T >= 1, "make_batch needs V, B, T >= 1, got ", V, ", ", B, ", ", T);
  check_task(task, V, T, p);
  require(task != Task::Text,
          "the text task draws its windows from a corpus, not from the task generator");
  require(task != Task::Markov,
          "the markov task draws its rows from its chain (make_markov_batch), not from the task "
          "generator");
  batch.inputs.resize(B, T);
  batch.targets.resize(B, T);
  const int h = (T + 1) / 2;  // length of the first half of z (T+1 ids)
  int32_t z[kMaxRow];
  for (int b = 0; b < B; ++b) {
    switch (task) {
      case Task::Repeat:
        std::fill(z, z + T, static_cast<int32_t>(rng.below(static_cast<uint32_t>(V))));
        break;
      case Task::Shift:
      case Task::Future:
      case Task::Lag:
        for (int i = 0; i <= T; ++i) z[i] = static_cast<int32_t>(rng.below(uint32_t(V)));
        break;
      case Task::Copy:
        for (int i = 0; i < h; ++i) z[i] = static_cast<int32_t>(rng.below(uint32_t(V)));
        for (int i = h; i <= T; ++i) z[i] = z[i - h];
        break;
      case Task::Reverse:
        for (int i = 0; i < h; ++i) z[i] = static_cast<int32_t>(rng.below(uint32_t(V)));
        for (int i = 0; i < h && h + i <= T; ++i) z[h + i] = z[h - 1 - i];
        if (2 * h <= T) z[2 * h] = z[0];  // T+1 odd: one spare id, never a target
        break;
      case Task::Sort: {
        // h distinct ids by rejection, then the same ids sorted.
        for (int i = 0; i < h; ++i) {
          int32_t id;
          bool fresh;
          do {
            id = static_cast<int32_t>(rng.below(uint32_t(V)));
            fresh = std::find(z, z + i, id) == z + i;
          } while (!fresh);
          z[i] = id;
        }
        std::copy(z, z + h, z + h);
        std::sort(z + h, z + std::min(2 * h, T + 1));
        if (2 * h <= T) z[2 * h] = z[0];
        break;
      }
      case Task::Induction:
        draw_induction_row(V, T, rng, z);  // z[T] is never read
        break;
      case Task::Text:
      case Task::Markov: break;  // refused above
    }
    std::copy(z, z + T, &batch.inputs(b, 0));
    task_targets(task, &batch.inputs(b, 0), T, &batch.targets(b, 0), p);
  }
}

// Each rule reads only inputs: z[t+1], the id after input t, is an input itself whenever the
// task determines it (z[T] is never needed, except by future, whose last target is ignored).
void task_targets(Task task, const int32_t* x, int T, int32_t* targets, const TaskParams& p) {
  require(T >= 1 && T < kMaxRow, "sequence length (", T, ") must be in [1, ", kMaxRow - 1, "]");
  const int h = (T + 1) / 2;
  int32_t sorted[kMaxRow];
  if (task == Task::Sort) {
    std::copy(x, x + h, sorted);
    std::sort(sorted, sorted + h);
  }
  if (task == Task::Induction) {
    std::fill(targets, targets + T, kIgnoreIndex);
    const Repeat r = find_repeat(x, T);
    // The segment's next id, at each position of the second occurrence but its last.
    for (int t = r.second; t >= 0 && t < r.second + r.length - 1; ++t) targets[t] = x[t + 1];
    return;
  }
  for (int t = 0; t < T; ++t) {
    int32_t y = kIgnoreIndex;
    const bool second_half = t >= h - 1 && t < 2 * h - 1;  // predicting z[h..2h-1]
    switch (task) {
      case Task::Repeat: y = x[t]; break;
      case Task::Shift: if (t > 0) y = x[t - 1]; break;
      case Task::Lag: if (t >= p.lag) y = x[t - p.lag]; break;
      case Task::Markov: if (t + 1 < T && t + 1 >= p.markov_order) y = x[t + 1]; break;
      case Task::Future:
      case Task::Text: if (t + 1 < T) y = x[t + 1]; break;
      case Task::Copy: if (t >= h - 1) y = x[t + 1 - h]; break;
      case Task::Reverse: if (second_half) y = x[2 * h - 2 - t]; break;
      case Task::Sort: if (second_half) y = sorted[t + 1 - h]; break;
      case Task::Induction: break;  // handled above
    }
    targets[t] = y;
  }
}

void make_markov_batch(const MarkovChain& chain, int B, int T, Rng& rng, Batch& batch) {
  require(B >= 1 && T >= 1, "make_markov_batch needs B, T >= 1, got ", B, ", ", T);
  TaskParams p;
  p.markov_order = chain.order(), p.markov_symbols = chain.symbols();
  check_task(Task::Markov, chain.symbols(), T, p);
  batch.inputs.resize(B, T);
  batch.targets.resize(B, T);
  for (int b = 0; b < B; ++b) {
    chain.draw(rng, T, &batch.inputs(b, 0));
    task_targets(Task::Markov, &batch.inputs(b, 0), T, &batch.targets(b, 0), p);
  }
}

std::vector<int32_t> task_sample(Task task, int V, int T, uint64_t seed, const TaskParams& p) {
  Rng rng(seed);
  Batch batch;
  make_batch(task, V, 1, T, rng, batch, p);
  return std::vector<int32_t>(&batch.inputs(0, 0), &batch.inputs(0, 0) + T);
}

}  // namespace attn
