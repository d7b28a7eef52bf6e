// Generation (cpp/attn/model/decoder.h): the KV-cached decoder against the uncached reference (the
// model's forward over the window) at every step, through and past the window, for every
// position method, norm, norm position, FFN, depth, grouped K/V and no residual; the attention
// it reports; generate's greedy and seeded draws; and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/kernels/kernels.h"
#include "attn/model/decoder.h"
#include "attn/model/model.h"
#include "expect_error.h"
#include "scrambled_model.h"

using namespace attn;

namespace {

// V 13, D 16, H 4 (Dh 4, even for RoPE), C 8: 20 pushes run 12 steps past the window.
ModelConfig decoder_config() {
  ModelConfig c{13, 16, 4, 8};
  c.ffn_mult = 2;
  return c;
}

float max_abs_diff(ConstMatRef a, ConstMatRef b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return (a - b).cwiseAbs().maxCoeff();
}

// Pushes n tokens into a cached and an uncached decoder and compares every step.
void check_cached_matches_reference(TinyAttentionLM& model, int n = 20, int window = 0) {
  const ModelConfig& c = model.config;
  Decoder cached(model, true, window), reference(model, /*use_cache=*/false, window);
  const int W = window > 0 ? window : c.max_context_length;
  REQUIRE(cached.window() == W);
  REQUIRE(cached.cached());
  REQUIRE_FALSE(reference.cached());
  const std::vector<int32_t> tokens = random_tokens(n, c.vocab_size, 5);
  for (int i = 0; i < n; ++i) {
    INFO("push " << i);
    const RowVec got = cached.push(tokens[size_t(i)]);
    const RowVec& want = reference.push(tokens[size_t(i)]);
    const int len = std::min(i + 1, W);
    REQUIRE(cached.context_length() == len);
    REQUIRE(reference.context_length() == len);
    CHECK(cached.context() == reference.context());
    CHECK(max_abs_diff(got, want) <= 1e-5f);
    const Mat w = cached.attention();
    REQUIRE(w.rows() == model.n_heads_total());
    CHECK(max_abs_diff(w, reference.attention()) <= 1e-5f);
    for (Eigen::Index g = 0; g < w.rows(); ++g) {
      // A differential head's row sums to 1 - its lambda.
      const MultiHeadSelfAttention& layer = model.layers[size_t(g / c.n_heads)];
      const float want = c.differential ? 1.0f - layer.lambda[g % c.n_heads] : 1.0f;
      CHECK(std::abs(w.row(g).sum() - want) <= 1e-5f);
    }
  }
}

}  // namespace

TEST_CASE("decoder: the uncached reference is the forward over the last C tokens") {
  ModelConfig c = decoder_config();
  c.n_layers = 2;
  c.residual = true;
  TinyAttentionLM model(c, 1);
  scramble(model, 2);
  const std::vector<int32_t> tokens = random_tokens(12, c.vocab_size, 3);
  Decoder d(model, false);
  TinyAttentionLM::State s;
  for (int i = 0; i < 12; ++i) {
    const RowVec& logits = d.push(tokens[size_t(i)]);
    const int start = std::max(0, i + 1 - c.max_context_length), T = i + 1 - start;
    model.forward(tokens.data() + start, 1, T, s);
    CHECK(logits == s.logits.row(T - 1));
    CHECK(d.context() == std::vector<int32_t>(tokens.begin() + start, tokens.begin() + i + 1));
    // The attention is the last query row of each head's weights.
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < c.n_heads; ++h)
        CHECK(d.attention().row(l * c.n_heads + h) ==
              s.layers[size_t(l)].weights().row(h * T + T - 1));
  }
}

TEST_CASE("decoder: cached logits and attention match the reference for every block option") {
  const PositionKind positions[] = {PositionKind::Sinusoidal, PositionKind::Learned,
                                    PositionKind::Rope, PositionKind::Alibi, PositionKind::None};
  const NormKind norms[] = {NormKind::None, NormKind::LayerNorm, NormKind::RMSNorm};
  const FfnKind ffns[] = {FfnKind::None, FfnKind::ReLU, FfnKind::GELU, FfnKind::SwiGLU};
  const int kv_heads[] = {0, 1, 2};
  int index = 0;
  for (PositionKind pos : positions)
    for (NormKind norm : norms)
      for (NormPosition where : {NormPosition::Pre, NormPosition::Post}) {
        if (norm == NormKind::None && where == NormPosition::Post) continue;  // the same model
        for (FfnKind ffn : ffns)
          for (int layers = 1; layers <= 3; ++layers, ++index) {
            ModelConfig c = decoder_config();
            c.residual = true;
            c.positions = pos;
            c.norm = norm;
            c.norm_position = where;
            c.ffn = ffn;
            c.n_layers = layers;
            c.kv_heads = kv_heads[index % 3];
            CAPTURE(position_kind_name(pos), norm_kind_name(norm), norm_position_name(where),
                    ffn_kind_name(ffn), layers, c.kv_heads);
            TinyAttentionLM model(c, uint64_t(index));
            scramble(model, uint64_t(index) + 100);
            check_cached_matches_reference(model);
          }
      }
}

TEST_CASE("decoder: cached matches the reference without residual, with GQA, at 1-4 layers") {
  for (PositionKind pos : {PositionKind::Sinusoidal, PositionKind::Learned, PositionKind::Rope,
                           PositionKind::Alibi, PositionKind::None})
    for (int layers = 1; layers <= kMaxLayers; ++layers)
      for (int kv : {0, 1, 2}) {
        ModelConfig c = decoder_config();
        c.positions = pos;
        c.n_layers = layers;
        c.kv_heads = kv;
        CAPTURE(position_kind_name(pos), layers, kv);
        TinyAttentionLM model(c, 7);
        scramble(model, 8);
        check_cached_matches_reference(model);
      }
}

TEST_CASE("decoder: window, strided and differential models: cached matches the reference") {
  struct Pattern {
    AttentionKind kind;
    int window, stride;
  };
  const Pattern patterns[] = {{AttentionKind::Full, 4, 4},
                              {AttentionKind::Window, 1, 4},
                              {AttentionKind::Window, 3, 4},
                              {AttentionKind::Strided, 2, 3}};
  int index = 0;
  for (const Pattern& pt : patterns)
    for (bool differential : {false, true})
      for (PositionKind pos : {PositionKind::Sinusoidal, PositionKind::Rope, PositionKind::Alibi,
                               PositionKind::None})
        for (int layers = 1; layers <= 3; ++layers)
          for (int window : {0, 6}) {
            ++index;
            if (pt.kind == AttentionKind::Full && !differential) continue;  // tested above
            ModelConfig c = decoder_config();
            c.residual = true;
            c.norm = NormKind::RMSNorm;
            c.ffn = FfnKind::GELU;
            c.positions = pos;
            c.n_layers = layers;
            c.kv_heads = index % 2 ? 2 : 0;
            c.attention = pt.kind;
            c.window = pt.window;
            c.stride = pt.stride;
            c.differential = differential;
            CAPTURE(attention_kind_name(pt.kind), pt.window, pt.stride, differential,
                    position_kind_name(pos), layers, window, c.kv_heads);
            TinyAttentionLM model(c, uint64_t(index));
            scramble(model, uint64_t(index) + 200);
            for (MultiHeadSelfAttention& l : model.layers)  // lambda off its init, per head
              for (Eigen::Index h = 0; h < l.lambda.size(); ++h) l.lambda[h] = 0.2f + 0.1f * h;
            check_cached_matches_reference(model, 20, window);
          }
}

TEST_CASE("decoder: a sliding window's cache holds W rows, and a narrow window keeps every "
          "layer's cache as the context slides") {
  ModelConfig c = decoder_config();  // C 8
  c.residual = true;
  c.positions = PositionKind::Rope;
  c.attention = AttentionKind::Window;
  c.window = 3;
  c.n_layers = 3;  // reach 3 (3 - 1) = 6 <= C - 1 = 7
  TinyAttentionLM model(c, 30);
  scramble(model, 31);
  Decoder d(model);
  CHECK(d.keeps_cache_when_sliding());
  for (int32_t t : random_tokens(20, c.vocab_size, 32)) d.push(t);
  for (int l = 0; l < 3; ++l) {
    CHECK(d.cache(l).k.rows() == 3);  // W rows, not C
    CHECK(d.cache(l).length == 3);
    CHECK(d.cache(l).first == 5);  // positions 5..7 of the window of 8
  }
  // The weights past the window are exactly 0.
  CHECK(d.attention().leftCols(5).cwiseAbs().maxCoeff() == 0.0f);
  check_cached_matches_reference(model, 24);
  // Four layers reach 8 > 7 back: the slide re-encodes; positions added to x always do.
  c.n_layers = 4;
  TinyAttentionLM deep(c, 33);
  CHECK_FALSE(Decoder(deep).keeps_cache_when_sliding());
  c.n_layers = 2;
  c.positions = PositionKind::Learned;
  TinyAttentionLM learned(c, 34);
  CHECK_FALSE(Decoder(learned).keeps_cache_when_sliding());
  // The strided pattern reaches back to the start: a full cache, re-encoded past 1 layer.
  c.positions = PositionKind::Alibi;
  c.attention = AttentionKind::Strided;
  TinyAttentionLM strided(c, 35);
  Decoder ds(strided);
  CHECK(ds.cache(0).k.rows() == c.max_context_length);
  CHECK_FALSE(ds.keeps_cache_when_sliding());
}

TEST_CASE("decoder: a masked language model cannot generate left to right") {
  ModelConfig c = decoder_config();
  c.objective = Objective::Mlm;
  TinyAttentionLM model(c, 36);
  check_error([&] { Decoder d(model); }, ErrorKind::Config, "objective",
              "cannot generate left to right");
  check_error([&] { generate(model, {1, 2}, 3, SamplingOptions{}, 0); }, ErrorKind::Config,
              "objective", "cannot generate left to right");
}

TEST_CASE("decoder: a window of one token, and the curriculum's default model") {
  for (PositionKind pos : {PositionKind::Sinusoidal, PositionKind::Rope, PositionKind::Alibi}) {
    ModelConfig c = decoder_config();
    c.max_context_length = 1;
    c.positions = pos;
    c.residual = true;
    c.norm = NormKind::RMSNorm;
    c.ffn = FfnKind::GELU;
    CAPTURE(position_kind_name(pos));
    TinyAttentionLM model(c, 9);
    scramble(model, 10);
    check_cached_matches_reference(model, 5);
  }
  TinyAttentionLM legacy(ModelConfig{}, 11);
  scramble(legacy, 12);
  check_cached_matches_reference(legacy, 30);
}

TEST_CASE("decoder: a window shorter than the model's context slides at its own length") {
  for (PositionKind pos : {PositionKind::Learned, PositionKind::Rope, PositionKind::Alibi})
    for (int layers : {1, 2}) {
      ModelConfig c = decoder_config();
      c.residual = true;
      c.positions = pos;
      c.n_layers = layers;
      c.norm = NormKind::LayerNorm;
      CAPTURE(position_kind_name(pos), layers);
      TinyAttentionLM model(c, 25);
      scramble(model, 26);
      check_cached_matches_reference(model, 15, 5);
    }
}

TEST_CASE("decoder: switched-off heads and unscaled scores are cached as the forward runs them") {
  ModelConfig c = decoder_config();
  c.n_layers = 2;
  c.residual = true;
  c.positions = PositionKind::Rope;
  c.kv_heads = 2;
  TinyAttentionLM model(c, 13);
  scramble(model, 14);
  model.layers[0].head_off[1] = 1;
  model.layers[1].head_off[3] = 1;
  model.layers[1].scale_scores = false;
  check_cached_matches_reference(model);
}

TEST_CASE("decoder: a mask that is not causal runs the reference") {
  ModelConfig c = decoder_config();
  c.n_layers = 2;
  c.residual = true;
  TinyAttentionLM model(c, 15);
  scramble(model, 16);
  model.layers[1].mask = MaskMode::None;
  Decoder d(model);
  CHECK_FALSE(d.cached());
  Decoder reference(model, false);
  for (int32_t t : random_tokens(10, c.vocab_size, 17)) CHECK(d.push(t) == reference.push(t));
  model.layers[1].mask = MaskMode::Causal;
  d.reset();
  CHECK(d.cached());
  CHECK(d.context_length() == 0);
}

TEST_CASE("decoder: reset empties the context and the caches") {
  ModelConfig c = decoder_config();
  c.residual = true;
  c.positions = PositionKind::Rope;
  TinyAttentionLM model(c, 18);
  scramble(model, 19);
  Decoder d(model), fresh(model);
  for (int32_t t : random_tokens(11, c.vocab_size, 20)) d.push(t);
  d.reset();
  CHECK(d.context().empty());
  CHECK(d.attention().cols() == 0);
  for (int32_t t : random_tokens(5, c.vocab_size, 21)) CHECK(d.push(t) == fresh.push(t));
}

TEST_CASE("generate: greedy is the argmax of the reference's logits, a seed repeats its tokens") {
  ModelConfig c = decoder_config();
  c.n_layers = 2;
  c.residual = true;
  c.norm = NormKind::LayerNorm;
  c.ffn = FfnKind::GELU;
  c.positions = PositionKind::Learned;
  TinyAttentionLM model(c, 22);
  scramble(model, 23);
  const std::vector<int32_t> prompt = {3, 1, 4};
  SamplingOptions greedy;
  greedy.temperature = 0.0f;
  const std::vector<int32_t> got = generate(model, prompt, 20, greedy, 1);
  REQUIRE(got.size() == 20);
  Decoder reference(model, false);
  const RowVec* logits = nullptr;
  for (int32_t t : prompt) logits = &reference.push(t);
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("token " << i);
    CHECK(got[i] == int32_t(row_argmax(logits->data(), logits->size())));
    logits = &reference.push(got[i]);
  }

  SamplingOptions sample;
  sample.top_k = 5;
  const std::vector<int32_t> a = generate(model, prompt, 30, sample, 42);
  CHECK(a == generate(model, prompt, 30, sample, 42));
  CHECK(generate(model, prompt, 0, sample, 42).empty());
  for (int32_t t : a) CHECK((t >= 0 && t < c.vocab_size));
}

TEST_CASE("decoder and generate: bad input is an error of kind input") {
  ModelConfig c = decoder_config();
  TinyAttentionLM model(c, 24);
  Decoder d(model);
  check_error([&] { d.push(13); }, ErrorKind::Input, "", "token 13");
  check_error([&] { d.push(-1); }, ErrorKind::Input, "", "token -1");
  CHECK(d.context_length() == 0);  // nothing was pushed
  check_error([&] { Decoder(model, true, 9); }, ErrorKind::Input, "", "window (9)");
  check_error([&] { Decoder(model, true, -1); }, ErrorKind::Input, "", "window (-1)");
  const SamplingOptions o;
  check_error([&] { generate(model, {}, 5, o, 0); }, ErrorKind::Input, "", "prompt is empty");
  check_error([&] { generate(model, std::vector<int32_t>(size_t(kMaxPromptTokens) + 1, 1), 5, o, 0); },
              ErrorKind::Input, "", "the prompt has 10001 tokens, more than the 10000 allowed");
  check_error([&] { generate(model, {1}, -1, o, 0); }, ErrorKind::Input, "", "(-1)");
  check_error([&] { generate(model, {1}, 10001, o, 0); }, ErrorKind::Input, "", "(10001)");
  check_error([&] { generate(model, {1, 20}, 5, o, 0); }, ErrorKind::Input, "", "token 20");
  SamplingOptions bad;
  bad.top_p = 0.0f;
  check_error([&] { generate(model, {1}, 5, bad, 0); }, ErrorKind::Input, "", "top_p");
}
