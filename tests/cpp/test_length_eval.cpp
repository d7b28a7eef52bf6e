// Length extrapolation: evaluate_at_length, model_for_length and its overload on a TaskData,
// the one computation behind `attn eval` and the page's "Longer than trained" panel.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/interp/length_eval.h"
#include "attn/io/weights.h"
#include "attn/train/trainer.h"
#include "expect_error.h"

using namespace attn;
using Catch::Matchers::WithinAbs;

namespace {

TrainerConfig small(const std::string& positions) {
  TrainerConfig c;
  c.task.name = "shift";
  c.task.seq_len = 8;
  c.model.vocab_size = 16;
  c.model.d_model = 16;
  c.model.n_heads = 2;
  c.training.batch_size = 8;
  c.model.residual = true;
  c.model.positions = attn::parse_position_kind(positions);
  return c;
}

}  // namespace

TEST_CASE("evaluate_at at the training length measures what evaluate does", "[length_eval]") {
  for (const char* p : {"sinusoidal", "learned", "rope", "alibi", "none"}) {
    INFO("positions " << p);
    Trainer t(small(p));
    t.step(30);
    const attn::Evaluation e = evaluate(t.model(), t.data(), 3);
    const LengthEvaluation l = evaluate_at_length(t.model(), t.data(), 8, 3);
    CHECK_THAT(l.loss, WithinAbs(e.loss, 1e-5));
    CHECK_THAT(l.accuracy, WithinAbs(e.accuracy, 1e-6));
    REQUIRE(l.accuracy_per_position.size() == 8);
    CHECK(std::isnan(l.accuracy_per_position[0]));  // shift: position 0 has no target
    for (size_t i = 1; i < 8; ++i) CHECK(l.accuracy_per_position[i] >= 0.0);
  }
}

TEST_CASE("evaluate_at_length: the numbers attn eval prints, from the saved file", "[length_eval]") {
  for (const char* p : {"sinusoidal", "rope", "alibi", "none"}) {
    INFO("positions " << p);
    Trainer t(small(p));
    t.step(20);
    const std::vector<uint8_t> bytes = save_model(t.model());
    // attn eval --weights W --task shift --seq-len 32 (defaults: 8 batches of 16, seed 1).
    const auto loaded = load_model(bytes.data(), bytes.size());
    const LengthEvaluation cli = evaluate_at_length(*loaded, Task::Shift, 32, 8, 16, 1);
    const LengthEvaluation live = evaluate_at_length(t.model(), Task::Shift, 32, 8, 16, 1);
    CHECK(cli.loss == live.loss);
    CHECK(cli.accuracy == live.accuracy);
    REQUIRE(cli.accuracy_per_position.size() == 32);
    REQUIRE(live.accuracy_per_position.size() == 32);
    for (size_t i = 1; i < 32; ++i) CHECK(cli.accuracy_per_position[i] == live.accuracy_per_position[i]);
    CHECK(std::isfinite(cli.loss));
    // The accuracy is the per-position accuracies' mean (every position has as many targets).
    double sum = 0.0;
    for (size_t i = 1; i < 32; ++i) sum += cli.accuracy_per_position[i];
    CHECK_THAT(cli.accuracy, WithinAbs(sum / 31, 1e-12));
    // Two calls see the same data.
    CHECK(evaluate_at_length(*loaded, Task::Shift, 32, 8, 16, 1).loss == cli.loss);
    // The trainer's own evaluation at 4x: length 32, finite.
    const LengthEvaluation at4 = evaluate_at_length(t.model(), t.data(), 32, 2);
    CHECK(at4.accuracy_per_position.size() == 32);
    CHECK(std::isfinite(at4.loss));
  }
}

TEST_CASE("model_for_length keeps the weights: a longer model's prefix gives the same logits",
          "[length_eval]") {
  for (const char* p : {"sinusoidal", "rope", "alibi", "none"}) {
    INFO("positions " << p);
    Trainer t(small(p));
    t.step(5);
    const auto longer = model_for_length(t.model(), 24);
    CHECK(longer->config.max_context_length == 24);
    std::vector<int32_t> ids(24);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 7 + 3) % 16);
    Rng rng(1);
    TinyAttentionLM::State a, b;
    t.model().forward(ids.data(), 1, 8, a);
    longer->forward(ids.data(), 1, 24, b);
    // Causal: the first 8 rows see the same 8 tokens at the same positions.
    CHECK(a.logits.isApprox(b.logits.topRows(8), 1e-5f));
  }
}

TEST_CASE("learned positions past max_seq_len: an error of kind config naming max_seq_len",
          "[length_eval]") {
  TrainerConfig c = small("learned");
  Trainer t(c);
  check_error([&] { evaluate_at_length(t.model(), t.data(), 16, 1); }, ErrorKind::Config, "max_seq_len", "max_seq_len 8");
  check_error([&] { evaluate_at_length(t.model(), Task::Shift, 9, 1, 4, 1); }, ErrorKind::Config,
              "max_seq_len", "learned position table");
  // The key as an edge spells it.
  check_error([&] { evaluate_at_length(t.model(), t.data(), 16, 1, [](std::string_view) { return std::string("maxSeqLen"); }); },
              ErrorKind::Config, "max_seq_len", "maxSeqLen 8");
  // A table with room: max_seq_len 32 evaluates at 16 and 32.
  c.model.max_context_length = 32;
  Trainer roomy(c);
  CHECK(evaluate_at_length(roomy.model(), roomy.data(), 32, 1).accuracy_per_position.size() == 32);
  check_error([&] { evaluate_at_length(roomy.model(), roomy.data(), 33, 1); }, ErrorKind::Config, "max_seq_len", "33");
  // Bad lengths name seq_len; a task that cannot fit the length names task.
  check_error([&] { evaluate_at_length(t.model(), t.data(), 0, 1); }, ErrorKind::Config, "seq_len", "(0)");
  check_error([&] { evaluate_at_length(t.model(), t.data(), kMaxEvalLength + 1, 1); }, ErrorKind::Config, "seq_len", "4097");
  TrainerConfig ind = small("rope");
  ind.task.name = "induction";
  Trainer it(ind);
  check_error([&] { evaluate_at_length(it.model(), it.data(), 2, 1); }, ErrorKind::Config, "task", "task");
}
