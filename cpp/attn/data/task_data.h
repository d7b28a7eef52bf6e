// Where a model's batches come from: its task at its batch shape, and for the text task the
// corpus's splits. The Trainer draws its training batches from it; the read-outs over a model
// (interp/readouts.h) draw their fixed evaluation batches from eval_rng(), so every call sees the
// same batches and the training stream is not disturbed.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/base/rng.h"
#include "attn/data/mlm.h"
#include "attn/data/tasks.h"
#include "attn/data/text.h"

namespace attn {

struct TaskData {
  Task task = Task::Repeat;
  int vocab_size = 64;  // V (the corpus's for text)
  int batch_size = 16;  // B
  int seq_len = 12;     // T
  uint64_t seed = 42;   // the run's seed; eval_seed() derives from it
  const TextCorpus* corpus = nullptr;  // the text task's (not owned); nullptr for the others
  // Objective mlm: every batch is masked (mask_for_mlm, data/mlm.h) at this rate, from the rng
  // that drew it; 0 for a causal model.
  float mask_rate = 0.0f;

  // A (B,T) batch from rng: for text, windows of the validation split (validation) or of the
  // training split; for the other tasks make_batch, whatever validation says; then masked with
  // mask_rate > 0.
  void draw(Rng& rng, Batch& batch, bool validation) const;
  // The seed of the evaluation batches, apart from the training stream's.
  uint64_t eval_seed() const;
  // Rng(eval_seed()): the same evaluation batches on every call.
  Rng eval_rng() const { return Rng(eval_seed()); }
  // The task's sample sequence (T ids) for sample_seed: task_sample(task, V, T, sample_seed), and
  // for text the first T characters of the validation split whatever the seed.
  std::vector<int32_t> sample(uint64_t sample_seed) const;
};

}  // namespace attn
