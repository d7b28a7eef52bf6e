#include "attn/data/task_data.h"

namespace attn {

void TaskData::draw(Rng& rng, Batch& batch, bool validation) const {
  if (corpus)
    make_text_batch(validation ? corpus->val : corpus->train, batch_size, seq_len, rng, batch);
  else if (chain)
    make_markov_batch(*chain, batch_size, seq_len, rng, batch);
  else
    make_batch(task, vocab_size, batch_size, seq_len, rng, batch, params);
  if (mask_rate > 0) mask_for_mlm(batch, vocab_size, mask_rate, rng);
}

uint64_t TaskData::eval_seed() const { return seed ^ 0x2545F4914F6CDD1DULL; }

std::vector<int32_t> TaskData::sample(uint64_t sample_seed) const {
  if (corpus) return text_sample(*corpus, seq_len);
  if (chain) {
    Rng rng(sample_seed);
    Batch batch;
    make_markov_batch(*chain, 1, seq_len, rng, batch);
    return std::vector<int32_t>(&batch.inputs(0, 0), &batch.inputs(0, 0) + seq_len);
  }
  return task_sample(task, vocab_size, seq_len, sample_seed, params);
}

std::shared_ptr<const MarkovChain> markov_chain_for(const TaskParams& p, uint64_t seed) {
  return std::make_shared<const MarkovChain>(
      MarkovChain::random(p.markov_order, p.markov_symbols, seed ^ 0x6A09E667F3BCC909ULL));
}

}  // namespace attn
