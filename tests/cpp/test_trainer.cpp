// Trainer: the curriculum's loss-drop test, convergence of the DemoConfig, determinism, config
// validation, the non-finite guard, the bounded loss history and eval-mode attention.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/train/trainer.h"
#include "gradcheck.h"

using attn::Mat;
using attn::Trainer;
using attn::TrainerConfig;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// A key namer unlike any edge's, to see that validate() spells keys only through it.
std::string shouted(std::string_view key) {
  std::string s(key);
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The smallest legal model, for tests that need many steps.
TrainerConfig tiny_config() {
  return attn::sized_config(2, 2, 1, 1, 1);
}

bool all_weights_finite(Trainer& t) {
  for (const attn::ParamRef& p : t.model().parameters())
    for (int64_t i = 0; i < p.numel(); ++i)
      if (!std::isfinite(p.value[i])) return false;
  return true;
}

std::vector<std::vector<float>> snapshot(Trainer& t) {
  std::vector<std::vector<float>> out;
  for (const attn::ParamRef& p : t.model().parameters())
    out.emplace_back(p.value, p.value + p.numel());
  return out;
}

void restore(Trainer& t, const std::vector<std::vector<float>>& values) {
  auto params = t.model().parameters();
  for (size_t i = 0; i < params.size(); ++i)
    std::copy(values[i].begin(), values[i].end(), params[i].value);
}

}  // namespace

TEST_CASE("trainer: repeat task, the loss halves within 150 steps", "[trainer]") {
  // The curriculum's test: V 32, D 16, H 4, T 10, B 16, lr 5e-3.
  TrainerConfig c = attn::sized_config(32, 16, 4, 10, 16);
  c.training.lr = 5e-3f;
  Trainer t(c);
  const float last = t.step(150);
  REQUIRE(t.loss_history().size() == 150);
  const float first = t.loss_history().front();
  CAPTURE(first, last);
  CHECK(std::isfinite(first));
  CHECK(last < first / 2);
  CHECK(last == t.loss_history().back());
}

TEST_CASE("trainer: the DemoConfig converges (mean of the last 20 of 360 steps < 0.05)",
          "[trainer]") {
  Trainer t(TrainerConfig{});  // V 64, D 32, H 4, T 12, B 16, lr 5e-3, seed 42
  t.step(360);
  const auto& h = t.loss_history();
  REQUIRE(h.size() == 360);
  const double mean_last = std::accumulate(h.end() - 20, h.end(), 0.0) / 20;
  CAPTURE(h.front(), mean_last);
  CHECK(mean_last < 0.05);
  // First loss is near log(V) = 4.16 (near-uniform predictions at init).
  CHECK_THAT(h.front(), WithinAbs(std::log(64.0), 0.5));

  // The trained model predicts the repeated id from every position.
  std::vector<int32_t> ids(12, 17);
  Mat weights, logits;
  sequence_attention(t.model(), ids.data(), 12, weights, logits);
  for (int pos = 0; pos < 12; ++pos) {
    Eigen::Index best;
    logits.row(pos).maxCoeff(&best);
    CAPTURE(pos);
    CHECK(best == 17);
  }
}

TEST_CASE("trainer: same seed gives bit-identical loss histories, another seed does not",
          "[trainer]") {
  for (float p : {0.0f, 0.2f}) {
    CAPTURE(p);
    TrainerConfig c;
    c.model.attn_dropout = p;
    c.model.out_dropout = p;
    Trainer a(c), b(c);
    a.step(50);
    for (int i = 0; i < 5; ++i) b.step(10);  // chunking does not matter
    REQUIRE(a.loss_history().size() == 50);
    CHECK(a.loss_history() == b.loss_history());
    CHECK(snapshot(a) == snapshot(b));
    c.training.seed = 43;
    Trainer other(c);
    other.step(50);
    CHECK(a.loss_history() != other.loss_history());
  }
}

TEST_CASE("trainer: dropout draws from its own generator: the same seed gives the same batches "
          "with dropout on or off", "[trainer][dropout]") {
  // The curriculum keeps dropout's randomness apart from the data's. Every task, since each
  // consumes the batch generator differently.
  for (const attn::Task task : attn::all_tasks()) {
    CAPTURE(attn::task_name(task));
    TrainerConfig off;
    off.task.name = attn::task_name(task);
    off.training.seed = 1234;
    TrainerConfig on = off;
    on.model.attn_dropout = 0.3f;
    on.model.out_dropout = 0.3f;
    Trainer a(off), b(on);
    bool losses_differ = false;
    constexpr int kSteps = 25;
    for (int step = 0; step < kSteps; ++step) {
      CAPTURE(step);
      const float la = a.step(1), lb = b.step(1);
      REQUIRE(a.last_batch().inputs == b.last_batch().inputs);
      REQUIRE(a.last_batch().targets == b.last_batch().targets);
      losses_differ = losses_differ || la != lb;
    }
    CHECK(losses_differ);  // dropout did act, and still the data stayed the same
    // peek_loss() rewinds both generators: the next step still sees the same batch on both.
    a.peek_loss();
    b.peek_loss();
    a.step(1);
    b.step(1);
    CHECK(a.last_batch().inputs == b.last_batch().inputs);
  }
}

TEST_CASE("trainer: step() before any step returns NaN, and step(0) repeats the last loss",
          "[trainer]") {
  Trainer t(tiny_config());
  CHECK(std::isnan(t.step(0)));
  CHECK(t.steps_done() == 0);
  CHECK(t.loss_history().empty());
  const float l = t.step(3);
  CHECK(t.step(0) == l);
  CHECK(t.steps_done() == 3);
  CHECK(t.loss_history().size() == 3);
  CHECK_THROWS_WITH(t.step(-1), Contains("step count (-1)"));
}

TEST_CASE("trainer: config validation names the bad value", "[trainer]") {
  auto bad = [](auto edit) {
    TrainerConfig c;
    edit(c);
    return c;
  };
  CHECK_NOTHROW(TrainerConfig{}.validate());
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.training.lr = 0.0f; })),
                    Contains("lr (0)") && Contains("(0, 10]"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.training.lr = -0.5f; })), Contains("lr (-0.5)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.training.lr = 11.0f; })), Contains("lr (11)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.training.lr = std::nanf(""); })),
                    Contains("lr (nan)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.model.d_model = 10, c.model.n_heads = 3; })),
                    Contains("d_model (10)") && Contains("n_heads (3)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.model.n_heads = 0; })), Contains("n_heads (0)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.task.seq_len = 0; })), Contains("seq_len (0)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.training.batch_size = 0; })),
                    Contains("batch_size (0)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.model.d_model = 0; })), Contains("d_model (0)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.model.attn_dropout = 1.0f; })),
                    Contains("attn_dropout (1)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.model.out_dropout = -0.1f; })),
                    Contains("out_dropout (-0.1)"));
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) { c.task.name = "bogus"; })),
                    Contains("task") && Contains("'bogus'"));
  // A config whose state would not fit is refused before anything is allocated.
  CHECK_THROWS_WITH(Trainer(bad([](TrainerConfig& c) {
                      c.model.vocab_size = 65536, c.model.d_model = 4096, c.task.seq_len = 4096;
                    })),
                    Contains("floats of state"));
  // The same check with the keys spelled by the caller (as the JS and CLI edges do).
  const TrainerConfig v0 = bad([](TrainerConfig& c) { c.model.vocab_size = 0; });
  CHECK_THROWS_WITH(v0.validate(), Contains("vocab_size (0)"));
  CHECK_THROWS_WITH(v0.validate(shouted), Contains("VOCAB_SIZE (0)"));
}

TEST_CASE("trainer: a non-finite loss stops the step, keeps the weights, and the trainer "
          "stays usable", "[trainer]") {
  Trainer t(TrainerConfig{});
  t.step(3);
  const auto good = snapshot(t);
  // Plant logits that overflow the loss: lm_head = 0 and biases at +-FLT_MAX make a row's
  // log-sum-exp FLT_MAX and the loss of a target with bias -FLT_MAX infinite.
  attn::Linear& head = t.model().lm_head;
  head.weight.setZero();
  for (Eigen::Index v = 0; v < head.bias.size(); ++v) head.bias[v] = v % 2 ? -FLT_MAX : FLT_MAX;
  const auto planted = snapshot(t);
  CHECK_THROWS_AS(t.step(1), std::runtime_error);
  CHECK_THROWS_WITH(t.step(1), Contains("non-finite") && Contains("lr"));
  // Not applied: same weights, same step count, no history entry.
  CHECK(snapshot(t) == planted);
  CHECK(all_weights_finite(t));
  CHECK(t.steps_done() == 3);
  CHECK(t.loss_history().size() == 3);
  // Still usable: eval attention works, and training resumes once the weights are sane.
  std::vector<int32_t> ids(12, 1);
  Mat w, logits;
  CHECK_NOTHROW(sequence_attention(t.model(), ids.data(), 12, w, logits));
  CHECK(w.allFinite());
  restore(t, good);
  const float l = t.step(2);
  CHECK(std::isfinite(l));
  CHECK(t.steps_done() == 5);
  CHECK(all_weights_finite(t));
}

TEST_CASE("trainer: lr 10 never leaves non-finite weights", "[trainer]") {
  // The largest allowed lr. Measured: on the repeat task it drives the loss to 0 without
  // overflowing; either way, every step must leave finite weights or throw the runtime_error.
  TrainerConfig c;
  c.training.lr = 10.0f;
  Trainer t(c);
  int done = 0;
  try {
    for (; done < 300; ++done) {
      const float l = t.step(1);
      REQUIRE(std::isfinite(l));
    }
  } catch (const std::runtime_error& e) {
    CHECK_THAT(std::string(e.what()), Contains("non-finite"));
  }
  CAPTURE(done);
  CHECK(all_weights_finite(t));
  std::vector<int32_t> ids(5, 3);
  Mat w, logits;
  CHECK_NOTHROW(sequence_attention(t.model(), ids.data(), 5, w, logits));
  for (Eigen::Index i = 0; i < w.rows(); ++i) CHECK_THAT(w.row(i).sum(), WithinAbs(1.0, 1e-5));
}

TEST_CASE("trainer: the loss history is bounded and thinned in place", "[trainer]") {
  Trainer t(tiny_config());
  Trainer ref(tiny_config());
  const size_t cap = Trainer::kMaxHistory;
  const int64_t n = int64_t(cap) + 100;
  const float* before = t.loss_history().data();
  t.step(int(n));
  std::vector<float> every;  // the loss of every step, from an identical trainer
  for (int64_t i = 0; i < n; ++i) every.push_back(ref.step(1));
  const auto& h = t.loss_history();
  CHECK(t.steps_done() == n);
  CHECK(h.size() <= cap);
  CHECK(t.history_stride() > 1);
  CHECK(h.data() == before);  // never reallocated
  // Entry i is the loss of step i * stride (0-based), and no kept step is missing.
  const int64_t stride = t.history_stride();
  CHECK(int64_t(h.size()) == (n + stride - 1) / stride);
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i] != every[size_t(i * stride)]) {
      CAPTURE(i, stride, h[i], every[size_t(i * stride)]);
      FAIL("thinned history does not match the per-step losses");
    }
}

TEST_CASE("trainer: attention() in eval mode", "[trainer]") {
  Trainer t(TrainerConfig{});  // H 4, T 12, V 64
  t.step(5);
  attn::Rng rng(3);
  std::vector<int32_t> ids(12);
  for (int32_t& id : ids) id = int32_t(rng.below(64));
  Mat w1, l1, w2, l2;
  sequence_attention(t.model(), ids.data(), 12, w1, l1);
  REQUIRE(w1.rows() == 4 * 12);
  REQUIRE(w1.cols() == 12);
  REQUIRE(l1.rows() == 12);
  REQUIRE(l1.cols() == 64);
  for (Eigen::Index r = 0; r < w1.rows(); ++r) {
    CAPTURE(r);
    CHECK_THAT(w1.row(r).sum(), WithinAbs(1.0, 1e-5));
    for (Eigen::Index j = r % 12 + 1; j < 12; ++j) CHECK(w1(r, j) == 0.0f);
  }
  sequence_attention(t.model(), ids.data(), 12, w2, l2);
  CHECK(gradcheck::max_abs_diff(w1, w2) == 0.0f);
  CHECK(gradcheck::max_abs_diff(l1, l2) == 0.0f);
  // A shorter sequence gives (H*T,T) and (T,V) for that T.
  sequence_attention(t.model(), ids.data(), 3, w2, l2);
  CHECK(w2.rows() == 4 * 3);
  CHECK(w2.cols() == 3);
  CHECK(l2.rows() == 3);
  CHECK_THROWS_WITH(sequence_attention(t.model(), ids.data(), 13, w2, l2),
                    Contains("sequence length (13)") && Contains("[1, 12]"));
  CHECK_THROWS_WITH(sequence_attention(t.model(), ids.data(), 0, w2, l2), Contains("sequence length (0)"));
  ids[4] = 64;
  CHECK_THROWS_WITH(sequence_attention(t.model(), ids.data(), 12, w2, l2),
                    Contains("token id 64") && Contains("position 4"));
  ids[4] = -1;
  CHECK_THROWS_WITH(sequence_attention(t.model(), ids.data(), 12, w2, l2), Contains("token id -1"));
}

TEST_CASE("trainer: attention() does not disturb training", "[trainer]") {
  TrainerConfig c;
  c.model.attn_dropout = 0.1f;  // so that a stray draw from the data generator would show
  Trainer a(c), b(c);
  a.step(5);
  std::vector<int32_t> ids(12, 2);
  Mat w, l;
  sequence_attention(a.model(), ids.data(), 12, w, l);
  a.step(5);
  b.step(10);
  CHECK(a.loss_history() == b.loss_history());
}

TEST_CASE("trainer: accessors", "[trainer]") {
  TrainerConfig c = tiny_config();
  c.training.seed = 1234;
  Trainer t(c);
  CHECK(t.config().training.seed == 1234);
  CHECK(t.config().model.vocab_size == 2);
  CHECK(t.model().config.vocab_size == 2);
  CHECK(t.model().config.max_context_length == 1);
  t.step(1);
  CHECK(t.last_batch().inputs.rows() == 1);
  CHECK(t.last_batch().inputs.cols() == 1);
}

TEST_CASE("trainer: peek_loss() is the loss the next step reports, and changes nothing",
          "[trainer]") {
  for (float p : {0.0f, 0.2f}) {
    CAPTURE(p);
    attn::TrainerConfig c;
    c.model.attn_dropout = p;
    c.model.out_dropout = p;
    attn::Trainer t(c);
    const std::vector<float> before(t.model().lm_head.weight.data(),
                                    t.model().lm_head.weight.data() + t.model().lm_head.weight.size());
    const float peeked = t.peek_loss();
    CHECK(t.peek_loss() == peeked);
    CHECK(t.steps_done() == 0);
    CHECK(std::equal(before.begin(), before.end(), t.model().lm_head.weight.data()));
    CHECK(std::abs(peeked - std::log(64.0f)) < 0.5f);  // about ln V at initialisation
    CHECK(t.step(1) == peeked);                         // same batch, same dropout masks
    const float next = t.peek_loss();
    CHECK(t.step(1) == next);
  }
}

// ---- Ablation, evaluation, attention statistics and the one-row backward --------------------

TEST_CASE("trainer: set_ablation validates sizes and changes nothing on error", "[trainer][ablation]") {
  Trainer t(TrainerConfig{});
  Trainer::Ablation a;
  a.heads_off = {1, 0};
  CHECK_THROWS_WITH(t.set_ablation(a), Contains("heads_off has 2 entries") && Contains("(4)"));
  a.heads_off = {};
  a.heads_frozen = {1, 1, 1, 1, 1};
  CHECK_THROWS_WITH(t.set_ablation(a), Contains("heads_frozen has 5 entries"));
  CHECK(t.model().attn.head_off == std::vector<uint8_t>(4, 0));
  a.heads_frozen = {};
  a.scale_scores = false;
  a.mask = attn::MaskMode::None;
  t.set_ablation(a);
  CHECK(t.ablation().heads_off == std::vector<uint8_t>(4, 0));  // empty means none, per head
  CHECK(!t.model().attn.scale_scores);
  CHECK(t.model().attn.mask == attn::MaskMode::None);
}

TEST_CASE("trainer: switching a trained head off changes the loss at once, and back restores it",
          "[trainer][ablation]") {
  TrainerConfig c;
  c.task.name = "copy";
  Trainer t(c);
  t.step(400);
  const attn::Evaluation base = evaluate(t.model(), t.data(), 4);
  CHECK(base.accuracy >= 0.99f);
  CHECK(base.accuracy == evaluate(t.model(), t.data(), 4).accuracy);
  float worst = base.loss;
  for (int h = 0; h < 4; ++h) {
    Trainer::Ablation a;
    a.heads_off.assign(4, 0);
    a.heads_off[size_t(h)] = 1;
    t.set_ablation(a);
    const attn::Evaluation e = evaluate(t.model(), t.data(), 4);
    CAPTURE(h, e.loss, e.accuracy);
    CHECK(e.loss != base.loss);
    worst = std::max(worst, e.loss);
  }
  // Heads share the copy (measured: the worst single head adds about 0.1 to a loss near 0.01).
  CHECK(worst > base.loss + 0.05f);
  Trainer::Ablation all;
  all.heads_off.assign(4, 1);
  t.set_ablation(all);
  CHECK(evaluate(t.model(), t.data(), 4).accuracy < 0.2f);  // no attention at all: the copy is gone
  t.set_ablation(Trainer::Ablation{});
  CHECK(evaluate(t.model(), t.data(), 4).loss == base.loss);
  CHECK(evaluate(t.model(), t.data(), 4).accuracy == base.accuracy);
}

TEST_CASE("trainer: a frozen head does not move while the others train", "[trainer][ablation]") {
  Trainer t(TrainerConfig{});
  Trainer::Ablation a;
  a.heads_frozen = {0, 0, 1, 0};
  t.set_ablation(a);
  const Mat qkv0 = t.model().attn.qkv_proj.weight, out0 = t.model().attn.out_proj.weight;
  const attn::RowVec bias0 = t.model().attn.qkv_proj.bias;
  t.step(20);
  const auto& m = t.model().attn;
  const int D = 32, Dh = 8;
  for (int part = 0; part < 3; ++part) {
    CAPTURE(part);
    CHECK((m.qkv_proj.weight.middleRows(part * D + 2 * Dh, Dh).array() ==
           qkv0.middleRows(part * D + 2 * Dh, Dh).array()).all());
    CHECK((m.qkv_proj.bias.segment(part * D + 2 * Dh, Dh).array() ==
           bias0.segment(part * D + 2 * Dh, Dh).array()).all());
    CHECK(gradcheck::max_abs_diff(m.qkv_proj.weight.middleRows(part * D + Dh, Dh),
                                  qkv0.middleRows(part * D + Dh, Dh)) > 0.0f);
  }
  CHECK((m.out_proj.weight.middleCols(2 * Dh, Dh).array() == out0.middleCols(2 * Dh, Dh).array()).all());
  CHECK(gradcheck::max_abs_diff(m.out_proj.weight.middleCols(0, Dh), out0.middleCols(0, Dh)) > 0.0f);
  // Unfrozen, it trains again.
  t.set_ablation(Trainer::Ablation{});
  t.step(1);
  CHECK(gradcheck::max_abs_diff(t.model().attn.out_proj.weight.middleCols(2 * Dh, Dh),
                                out0.middleCols(2 * Dh, Dh)) > 0.0f);
}

TEST_CASE("trainer: attention statistics: entropy within [0, ln T], mass on the answer",
          "[trainer][ablation]") {
  TrainerConfig c;
  c.task.name = "shift";
  Trainer t(c);
  const attn::HeadStats before = attention_stats(t.model(), t.data());
  REQUIRE(before.entropy.size() == 4);
  REQUIRE(before.answer_mass.size() == 4);
  for (int h = 0; h < 4; ++h) {
    CHECK(before.entropy[size_t(h)] >= 0.0f);
    CHECK(before.entropy[size_t(h)] <= std::log(12.0f));
    CHECK(before.answer_mass[size_t(h)] < 0.5f);
    CHECK(before.max_weight[size_t(h)] > 1.0f / 12);  // a row's largest weight is >= 1/T
    CHECK(before.max_weight[size_t(h)] <= 1.0f);
  }
  t.step(500);
  const attn::HeadStats after = attention_stats(t.model(), t.data());
  REQUIRE(evaluate(t.model(), t.data(), 4).accuracy >= 0.99f);
  // Shift is solved by a head that looks one key back: it puts most of its mass there.
  const float best = *std::max_element(after.answer_mass.begin(), after.answer_mass.end());
  CHECK(best > 0.6f);  // measured 0.77
  CHECK(attention_stats(t.model(), t.data()).entropy == after.entropy);  // same eval batch every call
  // Removing the mask raises the entropy of an untrained model: the early rows see more keys.
  Trainer u(TrainerConfig{});
  const float causal = attention_stats(u.model(), u.data()).entropy[0];
  Trainer::Ablation a;
  a.mask = attn::MaskMode::None;
  u.set_ablation(a);
  CHECK(attention_stats(u.model(), u.data()).entropy[0] > causal);
  // Without the 1/sqrt(dk) scaling the softmax saturates: larger top weights, lower entropy.
  a.mask = attn::MaskMode::Causal;
  u.set_ablation(a);
  const attn::HeadStats scaled = attention_stats(u.model(), u.data());
  a.scale_scores = false;
  u.set_ablation(a);
  const attn::HeadStats raw = attention_stats(u.model(), u.data());
  for (int h = 0; h < 4; ++h) {
    CAPTURE(h);
    CHECK(raw.max_weight[size_t(h)] > scaled.max_weight[size_t(h)]);
    CHECK(raw.entropy[size_t(h)] < scaled.entropy[size_t(h)]);
  }
}

TEST_CASE("trainer: row_backward is the model's backward for the loss at one position",
          "[trainer][ablation]") {
  TrainerConfig c;
  Trainer t(c);
  t.step(30);
  const std::vector<int32_t> ids = {3, 14, 15, 9, 26, 5, 35, 8};
  const int T = 8, query = 5, target = 35, H = 4, D = 32, Dh = 8;
  // The same loss through the whole model: dlogits only on row `query`.
  attn::TinyAttentionLM& model = t.model();
  attn::TinyAttentionLM::State s;
  model.forward(ids.data(), 1, T, s);
  const attn::RowVec row = s.logits.row(query);
  const float lse = std::log((row.array() - row.maxCoeff()).exp().sum()) + row.maxCoeff();
  s.dlogits = Mat::Zero(T, c.model.vocab_size);
  s.dlogits.row(query) = (row.array() - lse).exp().matrix();
  s.dlogits(query, target) -= 1.0f;
  model.backward(ids.data(), s);
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    const attn::RowBackward r = row_backward(t.model(), ids.data(), T, h, query, target);
    CHECK_THAT(r.loss, WithinAbs(lse - row[target], 1e-5));
    CHECK(gradcheck::max_abs_diff(r.row.d_q, s.attn.dqkv.block(query, h * Dh, 1, Dh)) < 1e-6f);
    CHECK(gradcheck::max_abs_diff(r.row.d_k, s.attn.dqkv.block(0, D + h * Dh, T, Dh)) < 1e-6f);
    CHECK(gradcheck::max_abs_diff(r.row.d_v, s.attn.dqkv.block(0, 2 * D + h * Dh, T, Dh)) < 1e-6f);
    for (int j = query + 1; j < T; ++j) CHECK(r.row.d_scores[j] == 0.0f);  // masked keys
  }
  CHECK_THROWS_WITH(row_backward(t.model(), ids.data(), T, 4, 0, 1), Contains("head (4)"));
  CHECK_THROWS_WITH(row_backward(t.model(), ids.data(), T, 0, 8, 1), Contains("query position (8)"));
  CHECK_THROWS_WITH(row_backward(t.model(), ids.data(), T, 0, 0, 64), Contains("target (64)"));
  CHECK_THROWS_WITH(row_backward(t.model(), ids.data(), 13, 0, 0, 1), Contains("sequence length (13)"));
}

// ---- Depth: n_layers and residual through the Trainer; heads are global, g = l*H + h.

namespace {
TrainerConfig deep_trainer_config(int L, bool residual) {
  TrainerConfig c;
  c.model.n_layers = L;
  c.model.residual = residual;
  return c;
}
}  // namespace

TEST_CASE("trainer: n_layers is validated, keyed n_layers however the message spells it",
          "[trainer][depth]") {
  for (const int L : {0, 5}) {
    const TrainerConfig c = deep_trainer_config(L, false);
    const std::string v = "(" + std::to_string(L) + ")";
    CHECK_THROWS_WITH(c.validate(), Contains("n_layers " + v) && Contains("[1, 4]"));
    CHECK_THROWS_WITH(c.validate(shouted), Contains("N_LAYERS " + v));
    bool thrown = false;
    try {
      c.validate(shouted);
    } catch (const attn::Error& e) {
      thrown = true;
      CHECK(e.kind() == attn::ErrorKind::Config);
      CHECK(e.key() == "n_layers");
    }
    CHECK(thrown);
  }
  Trainer t(deep_trainer_config(3, true));
  CHECK(t.model().config.n_layers == 3);
  CHECK(t.model().config.residual);
  CHECK(t.model().layers.size() == 3);
  // The defaults are the curriculum's model.
  CHECK(TrainerConfig{}.model_config().n_layers == 1);
  CHECK(!TrainerConfig{}.model_config().residual);
}

TEST_CASE("trainer: a 2-layer model with residual trains, and is deterministic per seed",
          "[trainer][depth]") {
  TrainerConfig c = deep_trainer_config(2, true);
  Trainer a(c), b(c);
  a.step(150);
  b.step(150);
  CHECK(a.loss_history() == b.loss_history());
  const auto& h = a.loss_history();
  CHECK(h.back() < 0.5f * h.front());
}

TEST_CASE("trainer: attention() of a deep model is (L,H,T,T), layer-major", "[trainer][depth]") {
  Trainer t(deep_trainer_config(3, true));  // H 4, T 12
  t.step(3);
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6, 7};
  const int T = 7, H = 4;
  Mat w, logits;
  sequence_attention(t.model(), ids.data(), T, w, logits);
  REQUIRE(w.rows() == 3 * H * T);
  REQUIRE(w.cols() == T);
  attn::TinyAttentionLM::State s;
  t.model().forward(ids.data(), 1, T, s);
  for (int l = 0; l < 3; ++l) {
    CAPTURE(l);
    CHECK(w.middleRows(l * H * T, H * T) == s.layers[size_t(l)].weights());
  }
  CHECK(logits == s.logits);
  // Layers differ: each has its own weights.
  CHECK(gradcheck::max_abs_diff(w.middleRows(0, H * T), w.middleRows(H * T, H * T)) > 0.0f);
}

TEST_CASE("trainer: the ablation of a deep model has L*H entries, global index l*H + h",
          "[trainer][depth][ablation]") {
  Trainer t(deep_trainer_config(2, true));  // H 4: 8 heads
  Trainer::Ablation a;
  a.heads_off = {1, 0, 0, 0};  // one layer's worth is not enough
  CHECK_THROWS_WITH(t.set_ablation(a),
                    Contains("heads_off has 4 entries") && Contains("2 layers x 4 heads = 8"));
  a.heads_off = {0, 0, 0, 0, 0, 1, 0, 0};  // layer 1, head 1
  a.heads_frozen = std::vector<uint8_t>(9, 0);
  CHECK_THROWS_WITH(t.set_ablation(a), Contains("heads_frozen has 9 entries"));
  CHECK(t.model().layers[1].head_off == std::vector<uint8_t>(4, 0));  // unchanged on error
  a.heads_frozen = {};
  a.mask = attn::MaskMode::None;
  a.scale_scores = false;
  t.set_ablation(a);
  CHECK(t.model().layers[0].head_off == std::vector<uint8_t>(4, 0));
  CHECK(t.model().layers[1].head_off == std::vector<uint8_t>({0, 1, 0, 0}));
  CHECK(t.ablation().heads_frozen == std::vector<uint8_t>(8, 0));
  for (const auto& m : t.model().layers) {  // mask and scaling apply to every layer
    CHECK(m.mask == attn::MaskMode::None);
    CHECK(!m.scale_scores);
  }
  // A head that is off in layer 1 contributes nothing there: its merged output is zero.
  const std::vector<int32_t> ids = {5, 6, 7, 8};
  attn::TinyAttentionLM::State s;
  t.model().forward(ids.data(), 1, 4, s);
  CHECK(s.layers[1].merged.middleCols(8, 8).isZero(0.0f));
  CHECK(!s.layers[0].merged.middleCols(8, 8).isZero(0.0f));
}

TEST_CASE("trainer: a frozen head of layer 1 does not move while every other head trains",
          "[trainer][depth][ablation]") {
  Trainer t(deep_trainer_config(2, true));
  const int H = 4, D = 32, Dh = 8, h = 2;
  Trainer::Ablation a;
  a.heads_frozen.assign(8, 0);
  a.heads_frozen[size_t(1 * H + h)] = 1;
  t.set_ablation(a);
  const Mat qkv1 = t.model().layers[1].qkv_proj.weight, out1 = t.model().layers[1].out_proj.weight;
  const attn::RowVec bias1 = t.model().layers[1].qkv_proj.bias;
  const Mat out0 = t.model().layers[0].out_proj.weight;
  t.step(20);
  const auto& m = t.model().layers[1];
  for (int part = 0; part < 3; ++part) {
    CAPTURE(part);
    CHECK(m.qkv_proj.weight.middleRows(part * D + h * Dh, Dh) ==
          qkv1.middleRows(part * D + h * Dh, Dh));
    CHECK(m.qkv_proj.bias.segment(part * D + h * Dh, Dh) == bias1.segment(part * D + h * Dh, Dh));
    CHECK(gradcheck::max_abs_diff(m.qkv_proj.weight.middleRows(part * D, Dh),
                                  qkv1.middleRows(part * D, Dh)) > 0.0f);
  }
  CHECK(m.out_proj.weight.middleCols(h * Dh, Dh) == out1.middleCols(h * Dh, Dh));
  // The same head index in layer 0 is not frozen.
  CHECK(gradcheck::max_abs_diff(t.model().layers[0].out_proj.weight.middleCols(h * Dh, Dh),
                                out0.middleCols(h * Dh, Dh)) > 0.0f);
}

TEST_CASE("trainer: attention_stats of a deep model has L*H entries, each its layer's head",
          "[trainer][depth][ablation]") {
  Trainer t(deep_trainer_config(2, false));
  const attn::HeadStats st = attention_stats(t.model(), t.data());
  REQUIRE(st.entropy.size() == 8);
  REQUIRE(st.max_weight.size() == 8);
  REQUIRE(st.answer_mass.size() == 8);
  for (int g = 0; g < 8; ++g) {
    CAPTURE(g);
    CHECK(st.entropy[size_t(g)] >= 0.0f);
    CHECK(st.entropy[size_t(g)] <= std::log(12.0f));
    CHECK(st.max_weight[size_t(g)] >= 1.0f / 12);
  }
  // Layer 0 of a deeper model is the 1-layer model's layer (same init draws, same eval batch):
  // entries 0..H-1 are the 1-layer trainer's, exactly.
  Trainer one(TrainerConfig{});
  const attn::HeadStats ref = attention_stats(one.model(), one.data());
  for (int h = 0; h < 4; ++h) {
    CAPTURE(h);
    CHECK(st.entropy[size_t(h)] == ref.entropy[size_t(h)]);
    CHECK(st.max_weight[size_t(h)] == ref.max_weight[size_t(h)]);
  }
  // A head of layer 1 switched off changes no weights (they are computed before its output);
  // a head of layer 0 switched off changes layer 1's input, and so layer 1's weights only.
  Trainer::Ablation a;
  a.heads_off.assign(8, 0);
  a.heads_off[5] = 1;
  t.set_ablation(a);
  CHECK(attention_stats(t.model(), t.data()).entropy == st.entropy);
  a.heads_off.assign(8, 0);
  a.heads_off[1] = 1;
  t.set_ablation(a);
  const attn::HeadStats off0 = attention_stats(t.model(), t.data());
  bool moved = false;
  for (int g = 0; g < 4; ++g) CHECK(off0.entropy[size_t(g)] == st.entropy[size_t(g)]);
  for (int g = 4; g < 8; ++g) moved = moved || off0.entropy[size_t(g)] != st.entropy[size_t(g)];
  CHECK(moved);
}

TEST_CASE("trainer: row_backward of a deep model takes the global head index",
          "[trainer][depth][ablation]") {
  for (const bool residual : {false, true}) {
    CAPTURE(residual);
    TrainerConfig c = deep_trainer_config(3, residual);
    Trainer t(c);
    t.step(10);
    const std::vector<int32_t> ids = {3, 14, 15, 9, 26, 5, 35, 8};
    const int T = 8, query = 5, target = 35, H = 4, D = 32, Dh = 8;
    attn::TinyAttentionLM& model = t.model();
    attn::TinyAttentionLM::State s;
    model.forward(ids.data(), 1, T, s);
    const attn::RowVec row = s.logits.row(query);
    const float lse = std::log((row.array() - row.maxCoeff()).exp().sum()) + row.maxCoeff();
    s.dlogits = Mat::Zero(T, c.model.vocab_size);
    s.dlogits.row(query) = (row.array() - lse).exp().matrix();
    s.dlogits(query, target) -= 1.0f;
    model.backward(ids.data(), s);
    for (int l = 0; l < 3; ++l)
      for (int h = 0; h < H; ++h) {
        CAPTURE(l, h);
        const attn::RowBackward r = row_backward(t.model(), ids.data(), T, l * H + h, query, target);
        const Mat& dqkv = s.layers[size_t(l)].dqkv;
        CHECK_THAT(r.loss, WithinAbs(lse - row[target], 1e-5));
        CHECK(r.row.weights == s.layers[size_t(l)].probs.row(h * T + query));
        CHECK(gradcheck::max_abs_diff(r.row.d_q, dqkv.block(query, h * Dh, 1, Dh)) < 1e-6f);
        CHECK(gradcheck::max_abs_diff(r.row.d_k, dqkv.block(0, D + h * Dh, T, Dh)) < 1e-6f);
        CHECK(gradcheck::max_abs_diff(r.row.d_v, dqkv.block(0, 2 * D + h * Dh, T, Dh)) < 1e-6f);
      }
    CHECK_THROWS_WITH(row_backward(t.model(), ids.data(), T, 12, 0, 1),
                      Contains("head (12)") && Contains("[0, 11]"));
  }
}
