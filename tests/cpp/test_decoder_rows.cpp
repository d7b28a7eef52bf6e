// The decoder's multi-row step, prefill and rollback (cpp/attn/model/decoder.h), which speculative
// decoding stands on: push_rows gives the logits m pushes give, prefill the state n pushes leave,
// and after rollback the caches hold what a fresh decoder of the kept tokens holds, within the
// window, across it and past it, for every position method at 1-3 layers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "attn/model/decoder.h"
#include "attn/model/model.h"
#include "expect_error.h"
#include "scrambled_model.h"

using namespace attn;

namespace {

constexpr float kRowsTolerance = 1e-5f;  // the products of m rows round as those of one may not

// V 11, D 16, H 4, C 10, pre-norm LayerNorm and a GELU FFN.
ModelConfig rows_config(PositionKind pos, int layers) {
  ModelConfig c{11, 16, 4, 10};
  c.residual = true;
  c.positions = pos;
  c.n_layers = layers;
  c.norm = NormKind::LayerNorm;
  c.ffn = FfnKind::GELU;
  c.ffn_mult = 2;
  return c;
}

float rows_max_diff(ConstMatRef a, ConstMatRef b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return a.rows() == 0 || a.cols() == 0 ? 0.0f : (a - b).cwiseAbs().maxCoeff();
}

// Every layer's cache rows [0, length) in a against b: the same length, the same keys and values.
void check_same_caches(const Decoder& a, const Decoder& b, int layers) {
  for (int l = 0; l < layers; ++l) {
    const KVCache &ca = a.cache(l), &cb = b.cache(l);
    INFO("layer " << l);
    REQUIRE(ca.length == cb.length);
    CHECK(rows_max_diff(ca.k.topRows(ca.length), cb.k.topRows(cb.length)) <= kRowsTolerance);
    CHECK(rows_max_diff(ca.v.topRows(ca.length), cb.v.topRows(cb.length)) <= kRowsTolerance);
  }
}

// Runs check(model) on a scrambled model of rows_config for every position method at 1 to
// max_layers layers.
template <typename Check>
void for_each_model(int max_layers, uint64_t seed, Check&& check) {
  for (PositionKind pos : {PositionKind::Sinusoidal, PositionKind::Learned, PositionKind::Rope,
                           PositionKind::Alibi, PositionKind::None})
    for (int layers = 1; layers <= max_layers; ++layers) {
      CAPTURE(position_kind_name(pos), layers);
      TinyAttentionLM model(rows_config(pos, layers), seed);
      scramble(model, seed + 1);
      check(model);
    }
}

}  // namespace

TEST_CASE("push_rows: m rows give the logits of m pushes, within, across and past the window") {
  for_each_model(3, 3, [](TinyAttentionLM& model) {
    const std::vector<int32_t> tokens = random_tokens(40, model.config.vocab_size, 5);
    Decoder rows(model), pushes(model);
    // Steps of 1, 4, 2, 5, 3, ... rows: some fit the window, one crosses it, the rest are past it.
    size_t at = 0;
    for (int step = 0; at < tokens.size(); ++step) {
      const int m = std::min<int>(1 + (step * 3) % 5, int(tokens.size() - at));
      CAPTURE(at, m);
      const Mat got = rows.push_rows(tokens.data() + at, m);
      REQUIRE(got.rows() == m);
      for (int i = 0; i < m; ++i)
        CHECK(rows_max_diff(got.row(i), pushes.push(tokens[at + size_t(i)])) <= kRowsTolerance);
      CHECK(rows.context() == pushes.context());
      CHECK(rows_max_diff(rows.attention(), pushes.attention()) <= kRowsTolerance);
      at += size_t(m);
    }
    CHECK(rows.length() == int64_t(tokens.size()));
  });
}

TEST_CASE("push_rows: one evaluation where the rows fit the window or the window is full") {
  const ModelConfig c = rows_config(PositionKind::Rope, 2);
  TinyAttentionLM model(c, 6);
  const std::vector<int32_t> t = random_tokens(30, c.vocab_size, 7);
  Decoder d(model);
  d.push_rows(t.data(), 4);  // 4 of 10
  CHECK(d.passes() == 1);
  d.push_rows(t.data() + 4, 6);  // exactly fills the window
  CHECK(d.passes() == 2);
  d.push_rows(t.data() + 10, 5);  // a full window: 5 windows in one batched forward
  CHECK(d.passes() == 3);
  d.rollback(3);
  d.push(t[15]);
  CHECK(d.passes() == 4);
}

TEST_CASE("prefill: the state and logits of n pushes in one evaluation, for prompts past the window") {
  for_each_model(2, 8, [](TinyAttentionLM& model) {
    for (int n : {1, 6, 10, 11, 25}) {
      CAPTURE(n);
      const std::vector<int32_t> prompt = random_tokens(n, model.config.vocab_size, 10);
      const std::vector<int32_t> next = random_tokens(12, model.config.vocab_size, 11);
      Decoder filled(model), pushed(model);
      const RowVec got = filled.prefill(prompt.data(), prompt.size());
      CHECK(filled.passes() == 1);
      const RowVec* want = nullptr;
      for (int32_t t : prompt) want = &pushed.push(t);
      CHECK(rows_max_diff(got, *want) <= kRowsTolerance);
      CHECK(filled.context() == pushed.context());
      CHECK(filled.length() == pushed.length());
      for (int32_t t : next) CHECK(rows_max_diff(filled.push(t), pushed.push(t)) <= kRowsTolerance);
    }
  });
}

TEST_CASE("rollback: the caches after a rollback are a fresh decoder's of the kept tokens") {
  for_each_model(3, 12, [](TinyAttentionLM& model) {
    const int layers = model.config.n_layers;
    const std::vector<int32_t> t = random_tokens(9, model.config.vocab_size, 14);
    // 3 kept tokens, then 5 rows of which 2 are kept (a speculative round that accepted 1 of
    // 4 drafts), then one more push.
    Decoder d(model);
    d.push_rows(t.data(), 3);
    d.push_rows(t.data() + 3, 5);
    d.rollback(3);
    CHECK(d.length() == 5);
    Decoder fresh(model);
    for (int i = 0; i < 5; ++i) fresh.push(t[size_t(i)]);
    check_same_caches(d, fresh, layers);
    CHECK(d.context() == fresh.context());
    CHECK(rows_max_diff(d.push(t[8]), fresh.push(t[8])) <= kRowsTolerance);
    check_same_caches(d, fresh, layers);
    // Back to nothing, and again.
    d.rollback(int(d.length()));
    CHECK(d.length() == 0);
    CHECK(d.cache(0).length == 0);
    Decoder empty(model);
    CHECK(rows_max_diff(d.push(t[0]), empty.push(t[0])) <= kRowsTolerance);
  });
}

TEST_CASE("rollback: across and past the window the next pushes are those of the kept tokens") {
  for_each_model(2, 15, [](TinyAttentionLM& model) {
    for (int kept : {7, 10, 14}) {  // before, at and past the window of 10
      CAPTURE(kept);
      const std::vector<int32_t> t = random_tokens(30, model.config.vocab_size, 17);
      Decoder d(model), fresh(model);
      for (int i = 0; i < kept + 6; ++i) d.push(t[size_t(i)]);  // slides 2 to 10 times
      d.rollback(6);
      CHECK(d.length() == kept);
      for (int i = 0; i < kept; ++i) fresh.push(t[size_t(i)]);
      CHECK(d.context() == fresh.context());
      for (int i = 20; i < 30; ++i) {
        INFO("push " << i);
        CHECK(rows_max_diff(d.push(t[size_t(i)]), fresh.push(t[size_t(i)])) <= kRowsTolerance);
      }
    }
  });
}

TEST_CASE("rollback: a mask that is not causal, a short window, and the limits") {
  ModelConfig c = rows_config(PositionKind::Sinusoidal, 2);
  TinyAttentionLM model(c, 18);
  scramble(model, 19);
  model.layers[0].mask = MaskMode::None;
  const std::vector<int32_t> t = random_tokens(200, c.vocab_size, 20);
  {
    Decoder d(model), fresh(model);
    REQUIRE_FALSE(d.cached());
    const Mat rows = d.push_rows(t.data(), 4);  // 4 pushes: no shared forward can keep the rows apart
    CHECK(d.passes() == 4);
    for (int i = 0; i < 4; ++i) CHECK(rows_max_diff(rows.row(i), fresh.push(t[size_t(i)])) == 0.0f);
    d.rollback(2);
    fresh.rollback(2);
    CHECK(d.push(t[9]) == fresh.push(t[9]));
  }
  model.layers[0].mask = MaskMode::Causal;
  Decoder d(model, true, 4);
  for (int i = 0; i < 100; ++i) d.push(t[size_t(i)]);
  check_error([&] { d.rollback(kMaxRollback + 1); }, ErrorKind::Input, "", "the last 64 pushes");
  check_error([&] { d.rollback(101); }, ErrorKind::Input, "", "holds 100 tokens");
  check_error([&] { d.push_rows(t.data(), 0); }, ErrorKind::Input, "", "at least one token");
  const int32_t bad[] = {1, 11};
  check_error([&] { d.push_rows(bad, 2); }, ErrorKind::Input, "", "token 11");
  CHECK(d.length() == 100);  // a bad call changes nothing
  d.rollback(kMaxRollback);
  CHECK(d.length() == 100 - kMaxRollback);
  Decoder fresh(model, true, 4);
  for (int i = 0; i < 100 - kMaxRollback; ++i) fresh.push(t[size_t(i)]);
  CHECK(rows_max_diff(d.push(t[150]), fresh.push(t[150])) <= kRowsTolerance);
}

TEST_CASE("push_rows and rollback with the attention patterns and differential heads") {
  // A window of 3 keys (its cache keeps 3 rows and lets older positions go), the strided pattern
  // (window 2, stride 3) and differential heads, at 1 and 2 layers: push_rows gives the logits of
  // pushes, and after a rollback the next pushes are those of a fresh decoder of the kept tokens.
  struct Variant {
    const char* name;
    AttentionKind attention;
    int window, stride;
    bool differential;
  };
  for (const Variant& v : {Variant{"window 3", AttentionKind::Window, 3, 4, false},
                           Variant{"strided 2/3", AttentionKind::Strided, 2, 3, false},
                           Variant{"differential", AttentionKind::Full, 4, 4, true},
                           Variant{"window 3, differential", AttentionKind::Window, 3, 4, true}})
    for (PositionKind pos : {PositionKind::Rope, PositionKind::Learned})
      for (int layers = 1; layers <= 2; ++layers) {
        CAPTURE(v.name, position_kind_name(pos), layers);
        ModelConfig c = rows_config(pos, layers);
        c.attention = v.attention;
        c.window = v.window;
        c.stride = v.stride;
        c.differential = v.differential;
        TinyAttentionLM model(c, 21);
        scramble(model, 22);
        const std::vector<int32_t> t = random_tokens(30, c.vocab_size, 23);
        Decoder rows(model), pushes(model);
        size_t at = 0;
        for (int step = 0; at < t.size(); ++step) {
          const int m = std::min<int>(1 + (step * 3) % 5, int(t.size() - at));
          CAPTURE(at, m);
          const Mat got = rows.push_rows(t.data() + at, m);
          for (int i = 0; i < m; ++i)
            CHECK(rows_max_diff(got.row(i), pushes.push(t[at + size_t(i)])) <= kRowsTolerance);
          at += size_t(m);
        }
        for (int kept : {5, 8}) {  // a speculative round's rejection: 4 rows back
          CAPTURE(kept);
          Decoder d(model), fresh(model);
          for (int i = 0; i < kept; ++i) d.push(t[size_t(i)]);
          d.push_rows(t.data() + kept, 4);
          d.rollback(4);
          for (int i = 0; i < kept; ++i) fresh.push(t[size_t(i)]);
          for (int i = 20; i < 26; ++i)
            CHECK(rows_max_diff(d.push(t[size_t(i)]), fresh.push(t[size_t(i)])) <= kRowsTolerance);
        }
      }
}
