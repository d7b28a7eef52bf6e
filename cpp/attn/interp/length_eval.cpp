#include "attn/interp/length_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "attn/data/text.h"
#include "attn/nn/loss.h"

namespace attn {

std::unique_ptr<TinyAttentionLM> model_for_length(TinyAttentionLM& model, int length,
                                                  KeyNamer namer) {
  ModelConfig c = model.config;
  const int cap = std::max(kMaxEvalLength, c.max_context_length);
  require_config(length > c.max_context_length && length <= cap, "seq_len",
                 "the evaluation length (", length, ") must be in [1, ", cap, "]");
  require_config(c.positions != PositionKind::Learned, "max_seq_len", "the evaluation length (",
                 length, ") is longer than the learned position table (",
                 key_name("max_seq_len", namer), " ", c.max_context_length,
                 "): there is no position vector past row ", c.max_context_length - 1);
  c.max_context_length = length;  // no parameter depends on it without learned positions
  auto longer = std::make_unique<TinyAttentionLM>(c, 0);
  std::vector<ParamRef> to = longer->parameters();
  const std::vector<ParamRef> from = model.parameters();
  for (size_t i = 0; i < to.size(); ++i)
    std::memcpy(to[i].value, from[i].value, size_t(from[i].numel()) * sizeof(float));
  for (size_t l = 0; l < model.layers.size(); ++l) {
    longer->layers[l].head_off = model.layers[l].head_off;
    longer->layers[l].scale_scores = model.layers[l].scale_scores;
    longer->layers[l].mask = model.layers[l].mask;
  }
  return longer;
}

LengthEvaluation evaluate_at_length(TinyAttentionLM& model, Task task, int N, int n_batches,
                                    int batch, uint64_t seed, KeyNamer namer,
                                    const std::vector<int32_t>* text, float mask_rate) {
  const int cap = std::max(kMaxEvalLength, model.config.max_context_length);
  require_config(N >= 1 && N <= cap, "seq_len", "the evaluation length (", N,
                 ") must be in [1, ", cap, "]");
  require(n_batches >= 1 && n_batches <= 1000, "n_batches (", n_batches, ") must be in [1, 1000]");
  require(batch >= 1 && batch <= 4096, "batch (", batch, ") must be in [1, 4096]");
  std::unique_ptr<TinyAttentionLM> longer;
  if (N > model.config.max_context_length) longer = model_for_length(model, N, namer);
  const bool mlm = model.config.objective == Objective::Mlm;
  const int V = model.config.real_vocab_size();  // the task's ids
  try {
    check_task(task, V, N);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Config, "task", str_cat(key_name("task", namer), ": ", e.what()));
  }
  TinyAttentionLM& m = longer ? *longer : model;

  Rng rng(seed);
  Batch b;
  TinyAttentionLM::State s;
  s.tiled = N >= kTiledMinLength;  // no weights are read here
  std::vector<double> right(size_t(N), 0.0), count(size_t(N), 0.0);
  double loss_sum = 0.0, total = 0.0;
  for (int i = 0; i < n_batches; ++i) {
    if (task == Task::Text && text)
      make_text_batch(*text, batch, N, rng, b);
    else
      make_batch(task, V, batch, N, rng, b);
    if (mlm) mask_for_mlm(b, V, mask_rate, rng);
    m.forward(b.inputs.data(), batch, N, s);
    const int32_t* targets = b.targets.data();
    int predictable = 0;
    for (Eigen::Index r = 0; r < s.logits.rows(); ++r) {
      if (targets[r] == kIgnoreIndex) continue;
      Eigen::Index best = 0;
      s.logits.row(r).maxCoeff(&best);
      const size_t t = size_t(r % N);
      right[t] += best == targets[r];
      count[t] += 1;
      ++predictable;
    }
    if (predictable == 0) continue;
    loss_sum += double(cross_entropy_loss(s.logits, targets)) * predictable;
    total += predictable;
  }
  LengthEvaluation out{NAN, NAN, std::vector<double>(size_t(N), NAN)};
  double correct = 0.0;
  for (size_t t = 0; t < size_t(N); ++t) {
    correct += right[t];
    if (count[t] > 0) out.accuracy_per_position[t] = right[t] / count[t];
  }
  if (total > 0) {
    out.loss = loss_sum / total;
    out.accuracy = correct / total;
  }
  return out;
}

LengthEvaluation evaluate_at_length(TinyAttentionLM& model, const TaskData& data, int N,
                                    int n_batches, KeyNamer namer) {
  return evaluate_at_length(model, data.task, N, n_batches, data.batch_size, data.eval_seed(),
                            namer, data.corpus ? &data.corpus->val : nullptr,
                            data.mask_rate > 0 ? data.mask_rate : kDefaultMaskRate);
}

}  // namespace attn
