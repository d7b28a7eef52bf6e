// Read-outs over a model (interp/readouts.h) as free functions: the predictions' top k with
// their probabilities, by hand on a model whose logits are its lm_head bias; and every read-out
// on a model outside any Trainer gives what it gives on a Trainer's model with the Trainer's data.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attn/interp/length_eval.h"
#include "attn/interp/readouts.h"
#include "attn/io/weights.h"
#include "attn/model/sampling.h"
#include "attn/nn/loss.h"
#include "attn/train/trainer.h"
#include "expect_error.h"

using attn::Mat;
using attn::ModelConfig;
using attn::TinyAttentionLM;
using Catch::Matchers::WithinAbs;

namespace {

// A model whose logits are b at every position: lm_head's weight is zero, its bias b.
void set_logits(TinyAttentionLM& m, std::vector<float> b) {
  m.lm_head.weight.setZero();
  for (size_t v = 0; v < b.size(); ++v) m.lm_head.bias[Eigen::Index(v)] = b[v];
}

}  // namespace

TEST_CASE("predictions: the top k by probability, ties to the smaller id, no overflow",
          "[readouts]") {
  TinyAttentionLM m(ModelConfig{4, 8, 2, 5}, 1);
  const int32_t ids[3] = {0, 1, 2};
  // softmax(1, 3, 2, 3) = (e, e^3, e^2, e^3) / z: ids 1 and 3 tie, the smaller id first.
  set_logits(m, {1, 3, 2, 3});
  const int32_t answers[3] = {2, attn::kIgnoreIndex, 0};
  attn::Predictions p = attn::predictions(m, ids, 3, 3, answers);
  const double z = std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0);
  CHECK(p.k == 3);
  REQUIRE(p.top.size() == 9);
  for (int t = 0; t < 3; ++t) {
    CAPTURE(t);
    CHECK(std::vector<int32_t>(p.top.begin() + 3 * t, p.top.begin() + 3 * t + 3) ==
          std::vector<int32_t>{1, 3, 2});
    CHECK_THAT(p.probs[size_t(3 * t)], WithinAbs(std::exp(3.0) / z, 1e-7));
    CHECK(p.probs[size_t(3 * t)] == p.probs[size_t(3 * t + 1)]);
    CHECK_THAT(p.probs[size_t(3 * t + 2)], WithinAbs(std::exp(2.0) / z, 1e-7));
  }
  CHECK_THAT(p.answer_probs[0], WithinAbs(std::exp(2.0) / z, 1e-7));
  CHECK(std::isnan(p.answer_probs[1]));  // no answer at position 1
  CHECK_THAT(p.answer_probs[2], WithinAbs(std::exp(1.0) / z, 1e-7));
  // The maximum is subtracted: 1000 and 999 give 1 / (1 + e^-1) and e^-1 / (1 + e^-1).
  set_logits(m, {1000, -1000, 999, 0});
  p = attn::predictions(m, ids, 1, 2, nullptr);
  CHECK(p.top == std::vector<int32_t>{0, 2});
  CHECK_THAT(p.probs[0], WithinAbs(1 / (1 + std::exp(-1.0)), 1e-7));
  CHECK_THAT(p.probs[1], WithinAbs(std::exp(-1.0) / (1 + std::exp(-1.0)), 1e-7));
  CHECK(std::isnan(p.answer_probs[0]));  // no answers given
  // k is capped at V; every probability is the sampler's distribution at temperature 1.
  set_logits(m, {0.5f, 1, -2, 0});
  p = attn::predictions(m, ids, 2, 9, nullptr);
  CHECK(p.k == 4);
  const std::vector<float> dist = attn::next_token_distribution({0.5f, 1, -2, 0}, {});
  CHECK(std::vector<int32_t>(p.top.begin(), p.top.begin() + 4) == std::vector<int32_t>{1, 0, 3, 2});
  for (int j = 0; j < 4; ++j) CHECK(p.probs[size_t(j)] == dist[size_t(p.top[size_t(j)])]);
  check_error([&] { attn::predictions(m, ids, 0, 3, nullptr); }, attn::ErrorKind::Input, "",
              "sequence length (0)");
  check_error([&] { attn::predictions(m, ids, 3, 0, nullptr); }, attn::ErrorKind::Input, "", "k (0)");
}

TEST_CASE("read-outs: a model loaded from a Trainer's weights reads out as the Trainer's model",
          "[readouts]") {
  attn::TrainerConfig c;
  c.task.name = "copy";
  c.model.n_layers = 2;
  c.model.residual = true;
  attn::Trainer t(c);
  t.step(30);
  const std::vector<uint8_t> bytes = attn::save_model(t.model());
  const std::unique_ptr<TinyAttentionLM> loaded = attn::load_model(bytes.data(), bytes.size());
  const attn::TaskData& data = t.data();
  CHECK(attn::evaluate(*loaded, data, 3).loss == attn::evaluate(t.model(), data, 3).loss);
  CHECK(attn::attention_stats(*loaded, data).entropy == attn::attention_stats(t.model(), data).entropy);
  CHECK(attn::head_scores(*loaded, data).prefix_matching ==
        attn::head_scores(t.model(), data).prefix_matching);
  CHECK(attn::evaluate_at_length(*loaded, data, 16, 2).loss ==
        attn::evaluate_at_length(t.model(), data, 16, 2).loss);
  const std::vector<int32_t> ids = data.sample(3);
  Mat w1, l1, w2, l2;
  attn::sequence_attention(*loaded, ids.data(), int(ids.size()), w1, l1);
  attn::sequence_attention(t.model(), ids.data(), int(ids.size()), w2, l2);
  CHECK(w1 == w2);
  CHECK(l1 == l2);
  // The evaluation batches are data's own: the training stream is not touched, and the same
  // batches come back on every call.
  const float next = t.peek_loss();
  CHECK(attn::evaluate(t.model(), data, 2).accuracy == attn::evaluate(t.model(), data, 2).accuracy);
  CHECK(t.peek_loss() == next);
  // evaluate_at_length at the task's own length measures what evaluate does.
  const attn::Evaluation e = attn::evaluate(t.model(), data, 2);
  CHECK_THAT(attn::evaluate_at_length(t.model(), data, data.seq_len, 2).loss, WithinAbs(e.loss, 1e-6));
}
