#include "attn/data/task_data.h"

namespace attn {

void TaskData::draw(Rng& rng, Batch& batch, bool validation) const {
  if (corpus)
    make_text_batch(validation ? corpus->val : corpus->train, batch_size, seq_len, rng, batch);
  else
    make_batch(task, vocab_size, batch_size, seq_len, rng, batch);
  if (mask_rate > 0) mask_for_mlm(batch, vocab_size, mask_rate, rng);
}

uint64_t TaskData::eval_seed() const { return seed ^ 0x2545F4914F6CDD1DULL; }

std::vector<int32_t> TaskData::sample(uint64_t sample_seed) const {
  if (corpus) return text_sample(*corpus, seq_len);
  return task_sample(task, vocab_size, seq_len, sample_seed);
}

}  // namespace attn
