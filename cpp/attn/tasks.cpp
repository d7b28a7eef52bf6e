#include "attn/tasks.h"

#include <algorithm>
#include <array>

#include "attn/loss.h"

namespace attn {

namespace {

constexpr std::array<const char*, 6> kNames = {"repeat", "shift", "copy", "reverse", "sort", "future"};

// Largest T + 1 a row can have; keeps the per-row scratch on the stack.
constexpr int kMaxRow = 4097;

}  // namespace

Task parse_task(const std::string& name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<Task>(i);
  throw Error(ErrorKind::Config, "task",
              str_cat("unknown task '", name,
                      "' (expected repeat, shift, copy, reverse, sort or future)"));
}

const char* task_name(Task task) { return kNames[static_cast<size_t>(task)]; }

void check_task(Task task, int V, int T) {
  require_config(T >= 1 && T < kMaxRow, "seqLen", "sequence length (", T, ") must be in [1, ",
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
}

void make_batch(Task task, int V, int B, int T, Rng& rng, Batch& batch) {
  require(V >= 1 && B >= 1 && T >= 1, "make_batch needs V, B, T >= 1, got ", V, ", ", B, ", ", T);
  check_task(task, V, T);
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
    }
    std::copy(z, z + T, &batch.inputs(b, 0));
    task_targets(task, &batch.inputs(b, 0), T, &batch.targets(b, 0));
  }
}

// Each rule reads only inputs: z[t+1], the id after input t, is an input itself whenever the
// task determines it (z[T] is never needed, except by future, whose last target is ignored).
void task_targets(Task task, const int32_t* x, int T, int32_t* targets) {
  require(T >= 1 && T < kMaxRow, "sequence length (", T, ") must be in [1, ", kMaxRow - 1, "]");
  const int h = (T + 1) / 2;
  int32_t sorted[kMaxRow];
  if (task == Task::Sort) {
    std::copy(x, x + h, sorted);
    std::sort(sorted, sorted + h);
  }
  for (int t = 0; t < T; ++t) {
    int32_t y = kIgnoreIndex;
    const bool second_half = t >= h - 1 && t < 2 * h - 1;  // predicting z[h..2h-1]
    switch (task) {
      case Task::Repeat: y = x[t]; break;
      case Task::Shift: if (t > 0) y = x[t - 1]; break;
      case Task::Future: if (t + 1 < T) y = x[t + 1]; break;
      case Task::Copy: if (t >= h - 1) y = x[t + 1 - h]; break;
      case Task::Reverse: if (second_half) y = x[2 * h - 2 - t]; break;
      case Task::Sort: if (second_half) y = sorted[t + 1 - h]; break;
    }
    targets[t] = y;
  }
}

std::vector<int32_t> task_sample(Task task, int V, int T, uint64_t seed) {
  Rng rng(seed);
  Batch batch;
  make_batch(task, V, 1, T, rng, batch);
  return std::vector<int32_t>(&batch.inputs(0, 0), &batch.inputs(0, 0) + T);
}

}  // namespace attn
