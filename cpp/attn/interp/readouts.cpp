#include "attn/interp/readouts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <utility>

#include "attn/interp/circuits.h"
#include "attn/model/sampling.h"
#include "attn/nn/loss.h"

namespace attn {

namespace {

void require_length(const Model& model, int T) {
  const int C = model.model_config().max_context_length;
  require(T >= 1 && T <= C, "sequence length (", T, ") must be in [1, ", C, "]");
}

void require_batches(int n_batches) {
  require(n_batches >= 1 && n_batches <= 1000, "n_batches (", n_batches, ") must be in [1, 1000]");
}

}  // namespace

void sequence_attention(Model& model, const int32_t* ids, int T, Mat& weights,
                        Mat& logits) {
  require_length(model, T);
  const std::unique_ptr<ModelState> s = model.new_state();
  model.forward(ids_batch(ids, 1, T), *s);
  stacked_attention(model, *s, weights);  // B = 1: (L,H,T,T)
  logits = std::move(s->logits);
}

Evaluation evaluate(Model& model, const TaskData& data, int n_batches) {
  require_batches(n_batches);
  Rng rng = data.eval_rng();
  Batch batch;
  const std::unique_ptr<ModelState> state = model.new_state();
  const ModelState& s = *state;
  double right = 0.0, loss = 0.0, count = 0.0;
  for (int i = 0; i < n_batches; ++i) {
    data.draw(rng, batch, /*validation=*/true);
    model.forward(batch, *state);
    const float acc = token_accuracy(s.logits, batch.targets.data());
    if (std::isnan(acc)) continue;
    int predictable = 0;
    for (Eigen::Index k = 0; k < batch.targets.size(); ++k)
      predictable += batch.targets.data()[k] != kIgnoreIndex;
    right += double(acc) * predictable;
    loss += double(model_loss_value(batch, s).total()) * predictable;
    count += predictable;
  }
  if (count == 0) return {std::nanf(""), std::nanf("")};
  return {static_cast<float>(loss / count), static_cast<float>(right / count)};
}

TextEvaluation evaluate_text(Model& model, const TaskData& data, int n_batches) {
  require_state(data.corpus != nullptr, "the validation loss in bits per character needs the "
                "text task, but the task is ", task_name(data.task));
  const Evaluation e = evaluate(model, data, n_batches);
  const double ln2 = std::log(2.0), unigram = data.corpus->unigram_entropy_nats();
  return {e.loss, e.loss / ln2, e.accuracy, unigram, unigram / ln2};
}

HeadStats attention_stats(Model& model, const TaskData& data) {
  const int B = data.batch_size, T = data.seq_len;
  const int H = model.model_config().n_heads, L = model.n_attention_layers();
  Rng rng = data.eval_rng();
  Batch batch;
  const std::unique_ptr<ModelState> s = model.new_state();
  data.draw(rng, batch, /*validation=*/true);
  model.forward(batch, *s);
  HeadStats st;
  st.entropy.assign(size_t(L) * H, 0.0f);
  st.max_weight.assign(size_t(L) * H, 0.0f);
  st.answer_mass.assign(size_t(L) * H, 0.0f);
  for (int l = 0; l < L; ++l) {
    const Mat& w = model.attention_state(*s, l).weights();
    for (int h = 0; h < H; ++h) {
      double entropy = 0.0, top = 0.0, mass = 0.0;
      int predictable = 0;
      for (int b = 0; b < B; ++b)
        for (int i = 0; i < T; ++i) {
          const auto row = w.row((Eigen::Index(b) * H + h) * T + i);
          // A row's entropy in float (logf: a double log per weight cost a third of a step
          // here), summed over rows in double.
          float e = 0.0f;
          for (int j = 0; j < T; ++j)
            if (row[j] > 0.0f) e -= row[j] * std::log(row[j]);
          entropy += e;
          top += row.maxCoeff();
          const int32_t target = batch.targets(b, i);
          if (target == kIgnoreIndex) continue;
          ++predictable;
          for (int j = 0; j < T; ++j)
            if (batch.inputs(b, j) == target) mass += row[j];
        }
      const size_t g = size_t(l) * H + h;
      st.entropy[g] = static_cast<float>(entropy / (double(B) * T));
      st.max_weight[g] = static_cast<float>(top / (double(B) * T));
      st.answer_mass[g] = predictable ? static_cast<float>(mass / predictable) : std::nanf("");
    }
  }
  return st;
}

namespace {

// k_composition_baseline for heads of shape (D, Dh). It depends on the shapes alone, so it is
// drawn once per (D, Dh) in the process: the page builds a new Trainer on every configure and
// reset, and 200 draws take ~150 ms in wasm.
float composition_baseline(int D, int Dh) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, float> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find({D, Dh});
  if (it == cache.end())
    it = cache.emplace(std::make_pair(D, Dh), k_composition_baseline(D, Dh, kBaselineSamples, 0x5EED)).first;
  return it->second;
}

}  // namespace

HeadScores head_scores(Model& model, const TaskData& data) {
  const int B = data.batch_size, T = data.seq_len, V = data.vocab_size;
  const ModelConfig& c = model.model_config();
  const int H = c.n_heads, L = model.n_attention_layers(), D = c.d_model;
  bool induction = true;
  try {
    check_task(Task::Induction, V, T);
  } catch (const std::invalid_argument&) {
    induction = false;
  }
  std::vector<ScoreSum> previous(size_t(L * H)), prefix(size_t(L * H));
  Rng rng(data.seed ^ 0x6A09E667F3BCC909ULL);
  Batch batch;
  const std::unique_ptr<ModelState> s = model.new_state();
  for (int rows = 0; rows < kScoreRows && T >= 2; rows += B) {
    make_batch(induction ? Task::Induction : Task::Shift, V, B, T, rng, batch);
    model.forward(batch, *s);
    for (int l = 0; l < L; ++l) {
      const Mat& w = model.attention_state(*s, l).weights();
      add_previous_token(w, B, H, T, &previous[size_t(l * H)]);
      if (induction) add_prefix_matching(w, batch.inputs.data(), B, H, T, &prefix[size_t(l * H)]);
    }
  }
  HeadScores out;
  for (int g = 0; g < L * H; ++g) {
    out.previous_token.push_back(previous[size_t(g)].mean());
    out.prefix_matching.push_back(prefix[size_t(g)].mean());
  }
  for (int l = 0; l + 1 < L; ++l)
    for (int h1 = 0; h1 < H; ++h1) {
      const Mat ov = ov_circuit(model.attention_layer(l), h1);
      for (int h2 = 0; h2 < H; ++h2)
        out.composition.push_back(k_composition(qk_circuit(model.attention_layer(l + 1), h2), ov));
    }
  out.composition_baseline = L > 1 ? composition_baseline(D, D / H)
                                   : std::numeric_limits<float>::quiet_NaN();
  return out;
}

RowBackward row_backward(Model& model, const int32_t* ids, int T, int head, int query,
                         int target) {
  require_length(model, T);
  const int V = model.model_config().vocab_size, H = model.model_config().n_heads,
            L = model.n_attention_layers();
  require(target >= 0 && target < V, "target (", target, ") must be in [0, ", V - 1, "]");
  const int G = L * H;
  require(head >= 0 && head < G, "head (", head, ") must be in [0, ", G - 1, "]",
          L > 1 ? " (global index layer * n_heads + head)" : "");
  const std::unique_ptr<ModelState> s = model.new_state();
  s->inspect = true;
  const float loss = model.position_loss_backward(ids, T, query, target, *s);
  const int l = head / H;
  return {loss, head_row(model.attention_layer(l), model.attention_state(*s, l), 0, head % H, query)};
}

Predictions predictions(Model& model, const int32_t* ids, int T, int k,
                        const int32_t* answers) {
  require_length(model, T);
  require(k >= 1, "k (", k, ") must be >= 1");
  const int V = model.model_config().vocab_size;
  const std::unique_ptr<ModelState> state = model.new_state();
  const ModelState& s = *state;
  model.forward(ids_batch(ids, 1, T), *state);
  Predictions out;
  out.k = std::min(k, V);
  out.top.resize(size_t(T) * out.k);
  out.probs.resize(size_t(T) * out.k);
  out.answer_probs.assign(size_t(T), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> p(static_cast<size_t>(V));
  std::vector<int32_t> order(static_cast<size_t>(V));
  for (int t = 0; t < T; ++t) {
    next_token_distribution(s.logits.row(t).data(), V, SamplingOptions{}, p.data());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + out.k, order.end(),
                      [&](int32_t a, int32_t b) { return p[size_t(a)] > p[size_t(b)] || (p[size_t(a)] == p[size_t(b)] && a < b); });
    for (int j = 0; j < out.k; ++j) {
      out.top[size_t(t) * out.k + j] = order[size_t(j)];
      out.probs[size_t(t) * out.k + j] = p[size_t(order[size_t(j)])];
    }
    if (answers && answers[t] >= 0 && answers[t] < V) out.answer_probs[size_t(t)] = p[size_t(answers[t])];
  }
  return out;
}

}  // namespace attn
