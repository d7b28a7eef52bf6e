// Where a model's batches come from: its task at its batch shape, and for the text task the
// corpus's splits. The Trainer draws its training batches from it; the read-outs over a model
// (interp/readouts.h) draw their fixed evaluation batches from eval_rng(), so every call sees the
// same batches and the training stream is not disturbed.
#pragma once

#include <cstdint>
#include <memory>
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
  TaskParams params;  // the markov and lag tasks' settings
  // The markov task's chain (markov_chain_for); nullptr for the others.
  std::shared_ptr<const MarkovChain> chain;

  // A (B,T) batch from rng: for text, windows of the validation split (validation) or of the
  // training split; for markov rows of the chain; for the other tasks make_batch, whatever
  // validation says; then masked with mask_rate > 0.
  void draw(Rng& rng, Batch& batch, bool validation) const;
  // The seed of the evaluation batches, apart from the training stream's.
  uint64_t eval_seed() const;
  // Rng(eval_seed()): the same evaluation batches on every call.
  Rng eval_rng() const { return Rng(eval_seed()); }
  // The task's sample sequence (T ids) for sample_seed: task_sample(task, V, T, sample_seed), and
  // for text the first T characters of the validation split whatever the seed; for markov the
  // chain's row 0 of a batch drawn from Rng(sample_seed).
  std::vector<int32_t> sample(uint64_t sample_seed) const;
};

// The chain of the markov task for a run's seed: MarkovChain::random(order, symbols, s) with s
// derived from seed, apart from the weights' and the batches' streams.
std::shared_ptr<const MarkovChain> markov_chain_for(const TaskParams& params, uint64_t seed);

}  // namespace attn
