// TinyAttentionLM: config validation, parameter list, shapes and causality of the logits; at 1
// layer (the curriculum's model) and at 2 and 3 layers, with and without the residual stream.
// Finite differences of every parameter through cross-entropy: test_gradcheck.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/model/model.h"
#include "attn/nn/loss.h"
#include "gradcheck.h"

using attn::Mat;
using attn::ModelConfig;
using attn::TinyAttentionLM;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using gradcheck::random_ids;

namespace {

ModelConfig small_config() { return ModelConfig{11, 8, 2, 6}; }  // V, D, H, C



}  // namespace

TEST_CASE("model: config validation names the bad value", "[model]") {
  CHECK_NOTHROW(ModelConfig{}.validate());
  auto bad = [](auto edit) {
    ModelConfig c;
    edit(c);
    return c;
  };
  CHECK_THROWS_WITH(bad([](ModelConfig& c) { c.vocab_size = 0; }).validate(),
                    Contains("vocab_size (0)"));
  CHECK_THROWS_WITH(bad([](ModelConfig& c) { c.d_model = 0; }).validate(), Contains("d_model (0)"));
  CHECK_THROWS_WITH(bad([](ModelConfig& c) { c.n_heads = 0; }).validate(), Contains("n_heads (0)"));
  CHECK_THROWS_WITH(bad([](ModelConfig& c) { c.d_model = 10, c.n_heads = 3; }).validate(),
                    Contains("d_model (10)") && Contains("n_heads (3)"));
  CHECK_THROWS_WITH(bad([](ModelConfig& c) { c.d_model = 9, c.n_heads = 3; }).validate(),
                    Contains("d_model (9)") && Contains("even"));
  CHECK_THROWS_WITH(bad([](ModelConfig& c) { c.max_context_length = 0; }).validate(),
                    Contains("seq_len (0) must be >= 1"));  // the model's C is the trainer's seq_len
  // The constructor validates too.
  CHECK_THROWS_WITH(TinyAttentionLM(bad([](ModelConfig& c) { c.d_model = 10, c.n_heads = 3; }), 1),
                    Contains("d_model (10)") && Contains("n_heads (3)"));
  CHECK_THROWS_AS(TinyAttentionLM(bad([](ModelConfig& c) { c.attn_dropout = 1.0f; }), 1),
                  std::invalid_argument);
}

TEST_CASE("model: parameters() is the state dict, in the PyTorch module's order", "[model]") {
  TinyAttentionLM model(ModelConfig{}, 42);  // V 64, D 32
  const auto params = model.parameters();
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"token_emb.embedding.weight", {64, 32}},
      {"attn.qkv_proj.weight", {96, 32}},
      {"attn.qkv_proj.bias", {96}},
      {"attn.out_proj.weight", {32, 32}},
      {"attn.out_proj.bias", {32}},
      {"lm_head.weight", {64, 32}},
      {"lm_head.bias", {64}},
  };
  REQUIRE(params.size() == expected.size());
  for (size_t i = 0; i < params.size(); ++i) {
    CAPTURE(i, params[i].name);
    CHECK(params[i].name == expected[i].first);
    CHECK(params[i].shape == expected[i].second);
    CHECK(params[i].value != nullptr);
    CHECK(params[i].grad != nullptr);
  }
  // Each name goes with its own member's value and gradient.
  const std::vector<std::pair<float*, float*>> members = {
      {model.token_emb.weight.data(), model.token_emb.dweight.data()},
      {model.attn.qkv_proj.weight.data(), model.attn.qkv_proj.dweight.data()},
      {model.attn.qkv_proj.bias.data(), model.attn.qkv_proj.dbias.data()},
      {model.attn.out_proj.weight.data(), model.attn.out_proj.dweight.data()},
      {model.attn.out_proj.bias.data(), model.attn.out_proj.dbias.data()},
      {model.lm_head.weight.data(), model.lm_head.dweight.data()},
      {model.lm_head.bias.data(), model.lm_head.dbias.data()},
  };
  for (size_t i = 0; i < params.size(); ++i) {
    CAPTURE(i);
    CHECK(params[i].value == members[i].first);
    CHECK(params[i].grad == members[i].second);
  }
  // The names and shapes are state_dict_specs', the list the weights file reads too.
  const std::vector<attn::ParamSpec> specs = attn::state_dict_specs(model.config);
  REQUIRE(specs.size() == params.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    CHECK(specs[i].name == params[i].name);
    CHECK(specs[i].shape == params[i].shape);
  }
  int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  CHECK(total == 64 * 32 + 96 * 32 + 96 + 32 * 32 + 32 + 64 * 32 + 64);
}

TEST_CASE("model: param_count is the sum of the state dict's tensor sizes", "[model]") {
  ModelConfig deep;
  deep.n_layers = 2;
  deep.residual = true;
  deep.positions = attn::PositionKind::Learned;
  deep.norm = attn::NormKind::LayerNorm;
  deep.ffn = attn::FfnKind::SwiGLU;
  deep.differential = true;
  for (const ModelConfig& c : {ModelConfig{}, deep}) {
    TinyAttentionLM model(c, 7);
    int64_t total = 0;
    for (const auto& p : model.parameters()) total += p.numel();
    CHECK(model.param_count() == total);
    CHECK(model.active_param_count() == total);  // no experts: every weight is used
  }
  CHECK(TinyAttentionLM(ModelConfig{}, 7).param_count() ==
        64 * 32 + 96 * 32 + 96 + 32 * 32 + 32 + 64 * 32 + 64);
}

TEST_CASE("model: same seed gives the same weights, another seed does not", "[model]") {
  TinyAttentionLM a(small_config(), 5), b(small_config(), 5), c(small_config(), 6);
  auto pa = a.parameters(), pb = b.parameters(), pc = c.parameters();
  bool all_differ = true;
  for (size_t i = 0; i < pa.size(); ++i) {
    CAPTURE(pa[i].name);
    const int64_t n = pa[i].numel();
    CHECK(std::equal(pa[i].value, pa[i].value + n, pb[i].value));
    all_differ = all_differ && !std::equal(pa[i].value, pa[i].value + n, pc[i].value);
  }
  CHECK(all_differ);
  // Init ranges: embedding ~ N(0, 0.02), Linear ~ U(-1/sqrt(in), 1/sqrt(in)) with in = D = 8.
  const float bound = 1.0f / std::sqrt(8.0f);
  CHECK(a.attn.qkv_proj.weight.cwiseAbs().maxCoeff() <= bound);
  CHECK(a.lm_head.weight.cwiseAbs().maxCoeff() <= bound);
  CHECK(a.token_emb.weight.cwiseAbs().maxCoeff() < 0.02f * 6);
}

TEST_CASE("model: forward shapes, and inputs are validated", "[model]") {
  TinyAttentionLM model(small_config(), 1);
  attn::Rng rng(2);
  const int B = 3, T = 5;
  const auto ids = random_ids(B * T, 11, rng);
  TinyAttentionLM::State s;
  model.forward(ids.data(), B, T, s);
  CHECK(s.logits.rows() == B * T);
  CHECK(s.logits.cols() == 11);
  CHECK(s.attn.weights().rows() == B * 2 * T);
  CHECK(s.attn.weights().cols() == T);
  CHECK(s.logits.allFinite());

  std::vector<int32_t> bad = ids;
  bad[7] = 11;
  CHECK_THROWS_WITH(model.forward(bad.data(), B, T, s),
                    Contains("token id 11") && Contains("position 7"));
  bad[7] = -3;
  CHECK_THROWS_WITH(model.forward(bad.data(), B, T, s), Contains("token id -3"));
  std::vector<int32_t> long_ids(7, 0);
  CHECK_THROWS_WITH(model.forward(long_ids.data(), 1, 7, s),
                    Contains("sequence length (7)") && Contains("(6)"));
  CHECK_THROWS_WITH(model.forward(long_ids.data(), 1, 0, s),
                    Contains("sequence length (0)"));
}

TEST_CASE("model: the positional table is added once per sequence", "[model]") {
  // With every token the same, x differs between positions only by the sinusoidal rows.
  TinyAttentionLM model(small_config(), 3);
  attn::Rng rng(4);
  const std::vector<int32_t> ids(2 * 4, 5);
  TinyAttentionLM::State s;
  model.forward(ids.data(), 2, 4, s);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 4; ++t) {
      CAPTURE(b, t);
      const Mat expected = model.token_emb.weight.row(5) + model.pos_emb.table.row(t);
      CHECK(gradcheck::max_abs_diff(s.x.row(b * 4 + t), expected) == 0.0f);
    }
}

TEST_CASE("model: changing tokens 4.. leaves logits 0..3 unchanged", "[model]") {
  ModelConfig c = small_config();
  c.max_context_length = 9;
  TinyAttentionLM model(c, 7);
  attn::Rng rng(8);
  const int B = 2, T = 9;
  const auto ids = random_ids(B * T, c.vocab_size, rng);
  std::vector<int32_t> changed = ids;
  for (int b = 0; b < B; ++b)
    for (int t = 4; t < T; ++t) changed[b * T + t] = (ids[b * T + t] + 1 + t) % c.vocab_size;
  TinyAttentionLM::State s1, s2;
  model.forward(ids.data(), B, T, s1);
  model.forward(changed.data(), B, T, s2);
  for (int b = 0; b < B; ++b) {
    CAPTURE(b);
    const float past = gradcheck::max_abs_diff(s1.logits.middleRows(b * T, 4),
                                               s2.logits.middleRows(b * T, 4));
    const float future = gradcheck::max_abs_diff(s1.logits.middleRows(b * T + 4, T - 4),
                                                 s2.logits.middleRows(b * T + 4, T - 4));
    CHECK(past <= 1e-5f);
    CHECK(future > 0.0f);
  }
}

TEST_CASE("model: backward needs dlogits of the right shape", "[model]") {
  TinyAttentionLM model(small_config(), 1);
  attn::Rng rng(2);
  const std::vector<int32_t> ids(4, 1);
  TinyAttentionLM::State s;
  model.forward(ids.data(), 1, 4, s);
  s.dlogits = Mat::Zero(4, 10);
  CHECK_THROWS_WITH(model.backward(ids.data(), s), Contains("(4,11)"));
}

// ---- Depth: n_layers and residual

namespace {
ModelConfig deep_config(int L, bool residual) {
  ModelConfig c = small_config();
  c.n_layers = L;
  c.residual = residual;
  return c;
}
}  // namespace

TEST_CASE("model: n_layers is validated in [1, 4]", "[model][depth]") {
  for (const int L : {0, 5, -1}) {
    CAPTURE(L);
    CHECK_THROWS_WITH(deep_config(L, false).validate(),
                      Contains("n_layers (" + std::to_string(L) + ")") && Contains("[1, 4]"));
  }
  for (const int L : {1, 2, 3, 4}) CHECK_NOTHROW(deep_config(L, true).validate());
  CHECK(ModelConfig{}.n_layers == 1);
  CHECK(!ModelConfig{}.residual);
}

TEST_CASE("model: state-dict names are attn.* for one layer and layers.<l>.* for more",
          "[model][depth]") {
  // One layer keeps the curriculum's names, with or without residual.
  for (const bool residual : {false, true}) {
    const auto specs = attn::state_dict_specs(deep_config(1, residual));
    REQUIRE(specs.size() == 7);
    CHECK(specs[1].name == "attn.qkv_proj.weight");
    CHECK(specs[4].name == "attn.out_proj.bias");
  }
  TinyAttentionLM model(deep_config(3, true), 9);  // V 11, D 8
  const auto params = model.parameters();
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.name);
  const std::vector<std::string> expected = {
      "token_emb.embedding.weight",
      "layers.0.qkv_proj.weight", "layers.0.qkv_proj.bias",
      "layers.0.out_proj.weight", "layers.0.out_proj.bias",
      "layers.1.qkv_proj.weight", "layers.1.qkv_proj.bias",
      "layers.1.out_proj.weight", "layers.1.out_proj.bias",
      "layers.2.qkv_proj.weight", "layers.2.qkv_proj.bias",
      "layers.2.out_proj.weight", "layers.2.out_proj.bias",
      "lm_head.weight", "lm_head.bias",
  };
  CHECK(names == expected);
  for (int l = 0; l < 3; ++l) {
    CAPTURE(l);
    const attn::MultiHeadSelfAttention& m = model.layers[size_t(l)];
    CHECK(params[size_t(1 + 4 * l)].value == m.qkv_proj.weight.data());
    CHECK(params[size_t(1 + 4 * l)].grad == m.qkv_proj.dweight.data());
    CHECK(params[size_t(1 + 4 * l)].shape == std::vector<int64_t>{24, 8});
    CHECK(params[size_t(2 + 4 * l)].value == m.qkv_proj.bias.data());
    CHECK(params[size_t(3 + 4 * l)].value == m.out_proj.weight.data());
    CHECK(params[size_t(3 + 4 * l)].shape == std::vector<int64_t>{8, 8});
    CHECK(params[size_t(4 + 4 * l)].grad == m.out_proj.dbias.data());
  }
  CHECK(&model.attn == &model.layers[0]);
  CHECK(model.n_heads_total() == 6);
}

TEST_CASE("model: init draws token_emb, then each layer's qkv_proj and out_proj, then lm_head",
          "[model][depth]") {
  // The PyTorch module order, from one generator: rebuilt here member by member.
  const ModelConfig c = deep_config(2, true);
  TinyAttentionLM model(c, 31);
  attn::Rng rng(31);
  const attn::TokenEmbedding emb(c.vocab_size, c.d_model, rng);
  const attn::Linear q0(c.d_model, 3 * c.d_model, rng), o0(c.d_model, c.d_model, rng);
  const attn::Linear q1(c.d_model, 3 * c.d_model, rng), o1(c.d_model, c.d_model, rng);
  const attn::Linear head(c.d_model, c.vocab_size, rng);
  CHECK(model.token_emb.weight == emb.weight);
  CHECK(model.layers[0].qkv_proj.weight == q0.weight);
  CHECK(model.layers[0].qkv_proj.bias == q0.bias);
  CHECK(model.layers[0].out_proj.weight == o0.weight);
  CHECK(model.layers[1].qkv_proj.weight == q1.weight);
  CHECK(model.layers[1].out_proj.bias == o1.bias);
  CHECK(model.lm_head.weight == head.weight);
  CHECK(model.lm_head.bias == head.bias);
  // The first layer of a deeper model is the 1-layer model's layer, bit for bit.
  TinyAttentionLM one(small_config(), 31);
  CHECK(one.attn.qkv_proj.weight == model.layers[0].qkv_proj.weight);
  CHECK(one.attn.out_proj.bias == model.layers[0].out_proj.bias);
}

TEST_CASE("model: a deep forward is the layers composed by hand", "[model][depth]") {
  attn::Rng rng(41);
  const int B = 2, T = 6;
  for (const int L : {1, 2, 3})
    for (const bool residual : {false, true}) {
      CAPTURE(L, residual);
      TinyAttentionLM model(deep_config(L, residual), 40 + L);
      const auto ids = random_ids(B * T, 11, rng);
      TinyAttentionLM::State s;
      model.forward(ids.data(), B, T, s);
      REQUIRE(s.layers.size() == size_t(L));

      // x = emb + pe; then x = x + attn_l(x) or x = attn_l(x); logits = lm_head(x).
      Mat x(B * T, 8);
      for (int i = 0; i < B * T; ++i)
        x.row(i) = model.token_emb.weight.row(ids[size_t(i)]) + model.pos_emb.table.row(i % T);
      for (int l = 0; l < L; ++l) {
        attn::MultiHeadSelfAttention::State st;
        Mat y(B * T, 8);
        model.layers[size_t(l)].forward(x, B, T, st, y);
        CHECK(st.weights() == s.layers[size_t(l)].weights());
        CHECK(gradcheck::max_abs_diff(st.x, s.layers[size_t(l)].x) == 0.0f);
        if (residual) x += y;
        else x = y;
      }
      Mat logits(B * T, 11);
      model.lm_head.forward(x, logits);
      CHECK(gradcheck::max_abs_diff(logits, s.logits) == 0.0f);

      // Stacked weights: layer-major (L,B,H,T,T).
      Mat w;
      s.stacked_weights(w);
      REQUIRE(w.rows() == L * B * 2 * T);
      for (int l = 0; l < L; ++l)
        CHECK(w.middleRows(l * B * 2 * T, B * 2 * T) == s.layers[size_t(l)].weights());
    }
}

TEST_CASE("model: the default model has one layer and no residual stream", "[model][depth]") {
  // logits = lm_head(attn(x)): no x is added back (that is residual's job).
  TinyAttentionLM plain(small_config(), 5), res(deep_config(1, true), 5);
  attn::Rng rng(6);
  const auto ids = random_ids(6, 11, rng);
  TinyAttentionLM::State sp, sr;
  plain.forward(ids.data(), 1, 6, sp);
  res.forward(ids.data(), 1, 6, sr);
  CHECK(sp.layers.size() == 1);
  CHECK(&sp.attn == &sp.layers[0]);
  Mat a_plain(6, 8), logits(6, 11);
  attn::MultiHeadSelfAttention::State st;
  plain.attn.forward(sp.x, 1, 6, st, a_plain);
  CHECK(gradcheck::max_abs_diff(sp.a, a_plain) == 0.0f);
  CHECK(gradcheck::max_abs_diff(sr.a, sp.x + a_plain) == 0.0f);
  res.lm_head.forward(sp.x + a_plain, logits);
  CHECK(gradcheck::max_abs_diff(sr.logits, logits) == 0.0f);
}

TEST_CASE("model: changing later tokens leaves earlier logits of a deep model unchanged",
          "[model][depth]") {
  for (const bool residual : {false, true}) {
    CAPTURE(residual);
    ModelConfig c = deep_config(3, residual);
    c.max_context_length = 9;
    TinyAttentionLM model(c, 17);
    attn::Rng rng(18);
    const int T = 9;
    const auto ids = random_ids(T, c.vocab_size, rng);
    std::vector<int32_t> changed = ids;
    for (int t = 5; t < T; ++t) changed[size_t(t)] = (ids[size_t(t)] + 1) % c.vocab_size;
    TinyAttentionLM::State s1, s2;
    model.forward(ids.data(), 1, T, s1);
    model.forward(changed.data(), 1, T, s2);
    CHECK(gradcheck::max_abs_diff(s1.logits.topRows(5), s2.logits.topRows(5)) == 0.0f);
    CHECK(gradcheck::max_abs_diff(s1.logits.bottomRows(4), s2.logits.bottomRows(4)) > 0.0f);
  }
}
