// Structured errors: every kind the core throws, with its key, on a representative call each.
// The messages are checked elsewhere; here the kind, the key and the exception's base class.
#include <catch2/catch.hpp>

#include <cfloat>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/base/error.h"
#include "attn/base/json.h"
#include "attn/data/tasks.h"
#include "attn/io/safetensors.h"
#include "attn/io/weights.h"
#include "attn/kernels/kernels.h"
#include "attn/kernels/ops.h"
#include "attn/train/trainer.h"

using namespace attn;
using Catch::Matchers::StartsWith;

namespace {

// What f threw: its kind, key and message (FAIL when it throws nothing).
struct Caught {
  ErrorKind kind = ErrorKind::Internal;
  std::string key, message;
};

template <typename F>
Caught caught(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return {error_kind(e), error_key(e), e.what()};
  }
  FAIL("nothing was thrown");
  return {};
}

TrainerConfig small_trainer_config() { return sized_config(16, 8, 2, 6, 4); }

}  // namespace

TEST_CASE("errors: the kinds' JS names", "[errors]") {
  CHECK(std::string(error_kind_name(ErrorKind::Config)) == "config");
  CHECK(std::string(error_kind_name(ErrorKind::Input)) == "input");
  CHECK(std::string(error_kind_name(ErrorKind::NonFinite)) == "nonFinite");
  CHECK(std::string(error_kind_name(ErrorKind::Format)) == "format");
  CHECK(std::string(error_kind_name(ErrorKind::State)) == "state");
  CHECK(std::string(error_kind_name(ErrorKind::Io)) == "io");
  CHECK(std::string(error_kind_name(ErrorKind::Internal)) == "internal");
}

TEST_CASE("errors: Error is an invalid_argument, RuntimeError a runtime_error, others internal",
          "[errors]") {
  CHECK_THROWS_AS(throw Error(ErrorKind::Input, "", "x"), std::invalid_argument);
  CHECK_THROWS_AS(throw RuntimeError(ErrorKind::Io, "", "x"), std::runtime_error);
  const Caught plain = caught([] { throw std::runtime_error("boom"); });
  CHECK(plain.kind == ErrorKind::Internal);
  CHECK(plain.key.empty());
  CHECK(plain.message == "boom");
  const Caught keyed = caught([] { throw Error(ErrorKind::Config, "lr", "lr is bad"); });
  CHECK(keyed.kind == ErrorKind::Config);
  CHECK(keyed.key == "lr");
  CHECK(keyed.message == "lr is bad");
}

TEST_CASE("errors: config, keyed by the snake_case name however the message spells keys",
          "[errors]") {
  TrainerConfig c = small_trainer_config();
  c.model.d_model = 10;
  c.model.n_heads = 3;
  // A namer as the JS edge's: camelCase.
  const KeyNamer camel = [](std::string_view k) -> std::string {
    return k == "d_model" ? "dModel" : k == "n_heads" ? "nHeads" : std::string(k);
  };
  for (KeyNamer namer : {KeyNamer(nullptr), camel}) {
    const Caught e = caught([&] { c.validate(namer); });
    CHECK(e.kind == ErrorKind::Config);
    CHECK(e.key == "d_model");
  }
  CHECK(caught([&] { c.validate(); }).message == "d_model (10) must be divisible by n_heads (3)");
  CHECK(caught([&] { c.validate(camel); }).message ==
        "dModel (10) must be divisible by nHeads (3)");

  // One case per key, through the Trainer's constructor.
  struct Case {
    const char* key;
    void (*spoil)(TrainerConfig&);
  };
  const Case cases[] = {
      {"vocab_size", [](TrainerConfig& t) { t.model.vocab_size = 0; }},
      {"d_model", [](TrainerConfig& t) { t.model.d_model = 7; }},
      {"n_heads", [](TrainerConfig& t) { t.model.n_heads = 16; }},
      {"seq_len", [](TrainerConfig& t) { t.task.seq_len = 5000; }},
      {"batch_size", [](TrainerConfig& t) { t.training.batch_size = 0; }},
      {"lr", [](TrainerConfig& t) { t.training.lr = 1e30f; }},
      {"attn_dropout", [](TrainerConfig& t) { t.model.attn_dropout = 1.0f; }},
      {"out_dropout", [](TrainerConfig& t) { t.model.out_dropout = -0.5f; }},
      {"task", [](TrainerConfig& t) { t.task.name = "bogus"; }},
      {"task", [](TrainerConfig& t) { t.task.name = "copy", t.task.seq_len = 2; }},
      {"n_layers", [](TrainerConfig& t) { t.model.n_layers = 0; }},
      {"n_layers", [](TrainerConfig& t) { t.model.n_layers = 5; }},
  };
  for (const Case& k : cases) {
    TrainerConfig bad = small_trainer_config();
    k.spoil(bad);
    const Caught e = caught([&] { Trainer t(bad); });
    CAPTURE(k.key, e.message);
    CHECK(e.kind == ErrorKind::Config);
    CHECK(e.key == k.key);
  }

  // Too much state as a whole: no single key.
  TrainerConfig big = small_trainer_config();
  big.model.vocab_size = 4096, big.model.d_model = 1024, big.task.seq_len = 1024, big.training.batch_size = 64;
  const Caught e = caught([&] { big.validate(); });
  CHECK(e.kind == ErrorKind::Config);
  CHECK(e.key.empty());
  CHECK_THAT(e.message, StartsWith("this config needs about "));
}

TEST_CASE("errors: config below the Trainer (model, layers, Adam, tasks)", "[errors]") {
  ModelConfig m;
  m.n_heads = 0;
  CHECK(caught([&] { m.validate(); }).key == "n_heads");
  m = ModelConfig{};
  m.max_context_length = 0;
  CHECK(caught([&] { TinyAttentionLM model(m, 1); }).key == "seq_len");
  m = ModelConfig{};
  m.attn_dropout = 1.0f;
  const Caught dropout = caught([&] { TinyAttentionLM model(m, 1); });
  CHECK(dropout.kind == ErrorKind::Config);
  CHECK(dropout.key == "attn_dropout");
  CHECK(dropout.message == "attn_dropout (1) must be in [0, 1)");

  AdamConfig adam;
  adam.beta1 = 1.0;
  const Caught beta = caught([&] { adam.validate(); });
  CHECK(beta.kind == ErrorKind::Config);
  CHECK(beta.key.empty());  // not a key of the Trainer config

  const Caught task = caught([] { parse_task("Copy"); });
  CHECK(task.kind == ErrorKind::Config);
  CHECK(task.key == "task");
  CHECK(task.message ==
        "unknown task 'Copy' (expected repeat, shift, copy, reverse, sort, future, induction, text, markov or lag)");
  CHECK(caught([] { check_task(Task::Sort, 2, 9); }).key == "task");
}

TEST_CASE("errors: input for bad call arguments", "[errors]") {
  Trainer t(small_trainer_config());
  Mat w, logits;
  const std::vector<int32_t> ids = {1, 16, 2};
  const Caught id = caught([&] { sequence_attention(t.model(), ids.data(), 3, w, logits); });
  CHECK(id.kind == ErrorKind::Input);
  CHECK(id.key.empty());
  CHECK(id.message == "token id 16 at position 1 is outside [0, 16)");
  CHECK(caught([&] { sequence_attention(t.model(), ids.data(), 7, w, logits); }).kind == ErrorKind::Input);
  CHECK(caught([&] { t.step(-1); }).kind == ErrorKind::Input);
  CHECK(caught([&] { row_backward(t.model(), ids.data(), 1, 2, 0, 0); }).kind == ErrorKind::Input);
  Trainer::Ablation a;
  a.heads_off = {1, 0, 0};
  CHECK(caught([&] { t.set_ablation(a); }).kind == ErrorKind::Input);
  CHECK(caught([] { parse_mask_mode("triu"); }).kind == ErrorKind::Input);
  Mat A(2, 3), B(4, 2), C(2, 2);
  CHECK(caught([&] { matmul_nn(A, B, C); }).kind == ErrorKind::Input);
  const float x = 1.0f;
  CHECK(caught([&] { write_safetensors({{"a", "F99", {1}, &x}}, {}); }).kind == ErrorKind::Input);
}

TEST_CASE("errors: nonFinite is a RuntimeError (a std::runtime_error) without a key",
          "[errors]") {
  Trainer t(small_trainer_config());
  t.step(1);
  // As in test_trainer: biases at +-FLT_MAX make the loss of half the targets infinite.
  Linear& head = t.model().lm_head;
  head.weight.setZero();
  for (Eigen::Index v = 0; v < head.bias.size(); ++v) head.bias[v] = v % 2 ? -FLT_MAX : FLT_MAX;
  CHECK_THROWS_AS(t.step(1), std::runtime_error);
  const Caught e = caught([&] { t.step(1); });
  CHECK(e.kind == ErrorKind::NonFinite);
  CHECK(e.key.empty());
  CHECK_THAT(e.message, StartsWith("training stopped at step 2 because the loss became non-finite"));
}

TEST_CASE("errors: format for malformed or unfitting files", "[errors]") {
  TinyAttentionLM model(ModelConfig{11, 6, 3, 5}, 1);
  const std::vector<uint8_t> good = save_model(model);
  const std::vector<uint8_t> truncated(good.begin(), good.begin() + 100);
  const Caught cut = caught([&] { parse_safetensors(truncated.data(), truncated.size()); });
  CHECK(cut.kind == ErrorKind::Format);
  CHECK(cut.key.empty());
  CHECK_THAT(cut.message, StartsWith("safetensors: header length "));
  CHECK(caught([&] { load_weights(model, truncated.data(), truncated.size()); }).kind ==
        ErrorKind::Format);

  CHECK(caught([] { json::parse("{\"a\": }"); }).kind == ErrorKind::Format);

  // A well-formed file of another config, and one whose metadata the model rejects.
  TinyAttentionLM other(ModelConfig{12, 6, 3, 5}, 1);
  const std::vector<uint8_t> other_bytes = save_model(other);
  const Caught shape = caught([&] { load_weights(model, other_bytes.data(), other_bytes.size()); });
  CHECK(shape.kind == ErrorKind::Format);
  CHECK_THAT(shape.message, StartsWith("weights: tensor "));
  std::vector<TensorOut> tensors;
  for (const ParamRef& p : model.parameters()) tensors.push_back({p.name, "F32", p.shape, p.value});
  const std::vector<uint8_t> four_heads =
      write_safetensors(tensors, {{"n_heads", "4"}, {"max_context_length", "5"}});
  const Caught heads = caught([&] { load_model(four_heads.data(), four_heads.size()); });
  CHECK(heads.kind == ErrorKind::Format);
  CHECK(heads.key.empty());
  CHECK(heads.message == "weights: d_model (6) must be divisible by n_heads (4)");
}

TEST_CASE("errors: state for a call made too early", "[errors]") {
  Rng rng(1);
  MultiHeadSelfAttention attn(8, 2, 4, 0.0f, 0.0f, rng);
  const MultiHeadSelfAttention::State empty;
  const Caught e = caught([&] { attn::head_row(attn, empty, 0, 0, 0); });
  CHECK(e.kind == ErrorKind::State);
  CHECK(e.message == "head_row needs a forward and a backward pass first");
}

TEST_CASE("errors: io for files that cannot be read or written", "[errors]") {
  const Caught e = caught([] { read_file("/nonexistent-dir/w.safetensors"); });
  CHECK(e.kind == ErrorKind::Io);
  CHECK_THAT(e.message, StartsWith("cannot open '/nonexistent-dir/w.safetensors': "));
  CHECK_THROWS_AS(write_file_atomic("/nonexistent-dir/w.safetensors", {1, 2}),
                  std::runtime_error);
}
