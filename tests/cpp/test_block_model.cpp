// TinyAttentionLM as a transformer block: the state dict's names and order; the init order; the
// forward composed by hand; the legacy default bit for bit; and the config's errors. Finite
// differences of every parameter at 1 to 3 layers for each position method, norm, FFN and grouped
// K/V heads: test_gradcheck.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/model/model.h"
#include "attn/nn/loss.h"
#include "attn/train/trainer.h"
#include "expect_error.h"
#include "gradcheck.h"

using attn::FfnKind;
using attn::Mat;
using attn::ModelConfig;
using attn::NormKind;
using attn::NormPosition;
using gradcheck::random_ids;
using attn::PositionKind;
using attn::TinyAttentionLM;

namespace {

// V 11, D 8, H 4 (Dh 2, even for RoPE), C 6, with the residual stream a block needs.
ModelConfig block_config() {
  ModelConfig c{11, 8, 4, 6};
  c.residual = true;
  c.ffn_mult = 2;
  return c;
}

}  // namespace

TEST_CASE("block model: the state dict names every layer layers.<l>. in the spec's order",
          "[block]") {
  ModelConfig c = block_config();
  c.positions = PositionKind::Learned;
  c.norm = NormKind::LayerNorm;
  c.ffn = FfnKind::ReLU;
  c.kv_heads = 2;
  const int64_t V = 11, D = 8, F = 16, W = (4 + 2 * 2) * 2;  // W = (H + 2 KV) Dh
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"token_emb.embedding.weight", {V, D}}, {"pos_emb.weight", {6, D}},
      {"layers.0.attn_norm.weight", {D}},     {"layers.0.attn_norm.bias", {D}},
      {"layers.0.qkv_proj.weight", {W, D}},   {"layers.0.qkv_proj.bias", {W}},
      {"layers.0.out_proj.weight", {D, D}},   {"layers.0.out_proj.bias", {D}},
      {"layers.0.ffn_norm.weight", {D}},      {"layers.0.ffn_norm.bias", {D}},
      {"layers.0.ffn.up.weight", {F, D}},     {"layers.0.ffn.up.bias", {F}},
      {"layers.0.ffn.down.weight", {D, F}},   {"layers.0.ffn.down.bias", {D}},
      {"final_norm.weight", {D}},             {"final_norm.bias", {D}},
      {"lm_head.weight", {V, D}},             {"lm_head.bias", {V}},
  };
  TinyAttentionLM model(c, 1);
  const std::vector<attn::ParamRef> params = model.parameters();
  REQUIRE(params.size() == expected.size());
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(params[i].name == expected[i].first);
    CHECK(params[i].shape == expected[i].second);
  }

  // SwiGLU: gate, up, down without biases; RMSNorm: weight only; post-norm: no final norm.
  c.positions = PositionKind::Rope;
  c.norm = NormKind::RMSNorm;
  c.norm_position = NormPosition::Post;
  c.ffn = FfnKind::SwiGLU;
  std::vector<std::string> names;
  for (const attn::ParamSpec& p : attn::state_dict_specs(c)) names.push_back(p.name);
  const std::vector<std::string> swiglu = {
      "token_emb.embedding.weight", "layers.0.attn_norm.weight", "layers.0.qkv_proj.weight",
      "layers.0.qkv_proj.bias",     "layers.0.out_proj.weight",  "layers.0.out_proj.bias",
      "layers.0.ffn_norm.weight",   "layers.0.ffn.gate.weight",  "layers.0.ffn.up.weight",
      "layers.0.ffn.down.weight",   "lm_head.weight",            "lm_head.bias"};
  CHECK(names == swiglu);
}

TEST_CASE("block model: init draws token_emb, pos_emb, then each layer's attention and FFN, "
          "then lm_head",
          "[block]") {
  ModelConfig c = block_config();
  c.n_layers = 2;
  c.positions = PositionKind::Learned;
  c.ffn = FfnKind::SwiGLU;
  c.norm = NormKind::RMSNorm;
  c.kv_heads = 1;
  TinyAttentionLM model(c, 77);
  attn::Rng rng(77);
  const attn::TokenEmbedding emb(c.vocab_size, c.d_model, rng);
  const attn::TokenEmbedding pos(c.max_context_length, c.d_model, rng);
  CHECK(gradcheck::max_abs_diff(model.token_emb.weight, emb.weight) == 0.0f);
  CHECK(gradcheck::max_abs_diff(model.learned_pos->weight, pos.weight) == 0.0f);
  attn::AttentionOptions options;
  options.kv_heads = 1;
  for (int l = 0; l < 2; ++l) {
    const attn::MultiHeadSelfAttention m(c.d_model, c.n_heads, c.max_context_length, 0, 0, rng,
                                         options);
    const attn::FeedForward f(c.ffn, c.d_model, c.ffn_mult, rng);
    CHECK(gradcheck::max_abs_diff(model.layers[size_t(l)].qkv_proj.weight, m.qkv_proj.weight) ==
          0.0f);
    CHECK(gradcheck::max_abs_diff(model.ffns[size_t(l)].down.weight, f.down.weight) == 0.0f);
  }
  const attn::Linear head(c.d_model, c.vocab_size, rng);
  CHECK(gradcheck::max_abs_diff(model.lm_head.weight, head.weight) == 0.0f);
}

TEST_CASE("block model: a pre-norm and a post-norm forward are their layers composed by hand",
          "[block]") {
  for (const NormPosition where : {NormPosition::Pre, NormPosition::Post}) {
    ModelConfig c = block_config();
    c.norm = NormKind::LayerNorm;
    c.norm_position = where;
    c.ffn = FfnKind::GELU;
    c.positions = PositionKind::None;
    TinyAttentionLM model(c, 5);
    // Non-trivial norm parameters, so that a swapped norm would show.
    attn::Rng r(6);
    for (attn::ParamRef& p : model.parameters())
      if (p.name.find("norm") != std::string::npos)
        for (int64_t i = 0; i < p.numel(); ++i) p.value[i] += 0.3f * r.normal();
    attn::Rng rng(7);
    const int B = 2, T = 4;
    const auto ids = random_ids(B * T, c.vocab_size, rng);
    TinyAttentionLM::State s;
    model.forward(ids.data(), B, T, s);

    Mat x(B * T, c.d_model), y(B * T, c.d_model), n(B * T, c.d_model);
    model.token_emb.forward(ids.data(), B * T, x);
    attn::Norm::State ns;
    attn::MultiHeadSelfAttention::State as;
    attn::FeedForward::State fs;
    if (where == NormPosition::Pre) {
      model.attn_norms[0].forward(x, ns, n);
      model.layers[0].forward(n, B, T, as, y);
      x += y;
      model.ffn_norms[0].forward(x, ns, n);
      model.ffns[0].forward(n, fs, y);
      x += y;
      model.final_norm->forward(x, ns, x);
    } else {
      REQUIRE_FALSE(model.final_norm);
      model.layers[0].forward(x, B, T, as, y);
      x += y;
      model.attn_norms[0].forward(x, ns, x);
      model.ffns[0].forward(x, fs, y);
      x += y;
      model.ffn_norms[0].forward(x, ns, x);
    }
    Mat logits(B * T, c.vocab_size);
    model.lm_head.forward(x, logits);
    CAPTURE(attn::norm_position_name(where));
    CHECK(gradcheck::max_abs_diff(logits, s.logits) == 0.0f);
  }
}

TEST_CASE("block model: every block key at its default is today's model, bit for bit",
          "[block]") {
  for (const int L : {1, 2}) {
    ModelConfig legacy{11, 8, 4, 6};
    legacy.n_layers = L;
    ModelConfig spelled = legacy;  // the defaults written out
    spelled.kv_heads = 4;
    spelled.positions = PositionKind::Sinusoidal;
    spelled.norm = NormKind::None;
    spelled.norm_position = NormPosition::Pre;
    spelled.ffn = FfnKind::None;
    spelled.ffn_mult = 4;
    CHECK(spelled.legacy());
    TinyAttentionLM a(legacy, 9), b(spelled, 9);
    const auto pa = a.parameters(), pb = b.parameters();
    REQUIRE(pa.size() == pb.size());
    for (size_t i = 0; i < pa.size(); ++i) {
      CHECK(pa[i].name == pb[i].name);
      CHECK(std::equal(pa[i].value, pa[i].value + pa[i].numel(), pb[i].value));
    }
    CHECK(pa[1].name == (L == 1 ? "attn.qkv_proj.weight" : "layers.0.qkv_proj.weight"));
  }
  // Any other value makes a block model: layers.0. even with one layer.
  ModelConfig rope{11, 8, 4, 6};
  rope.positions = PositionKind::Rope;
  CHECK_FALSE(rope.legacy());
  CHECK(attn::state_dict_specs(rope)[1].name == "layers.0.qkv_proj.weight");
  // Without norms or an FFN, the block's position methods need no residual stream.
  CHECK_NOTHROW(TinyAttentionLM(rope, 1));
}

TEST_CASE("block model: bad block settings are config errors naming their keys", "[block]") {
  using attn::ErrorKind;
  const auto invalid = [](void (*edit)(ModelConfig&)) {
    return [edit] {
      ModelConfig c{11, 8, 4, 6};
      edit(c);
      c.validate();
    };
  };
  check_error(invalid([](ModelConfig& c) { c.norm = NormKind::RMSNorm; }), ErrorKind::Config,
              "norm", "norm (rmsnorm) needs residual");
  check_error(invalid([](ModelConfig& c) { c.ffn = FfnKind::SwiGLU; }), ErrorKind::Config, "ffn",
              "ffn (swiglu) needs residual");
  check_error(invalid([](ModelConfig& c) { c.kv_heads = 3; }), ErrorKind::Config, "kv_heads",
              "n_heads (4) must be divisible by kv_heads (3)");
  check_error(invalid([](ModelConfig& c) { c.ffn_mult = 9; }), ErrorKind::Config, "ffn_mult",
              "ffn_mult (9)");
  check_error(invalid([](ModelConfig& c) { c.d_model = 12, c.n_heads = 4, c.positions = PositionKind::Rope; }),
              ErrorKind::Config, "positions", "even head width");
  check_error([] { attn::parse_position_kind("absolute"); }, ErrorKind::Config, "positions",
              "'absolute'");
  check_error([] { attn::parse_norm_position("middle"); }, ErrorKind::Config, "norm_position",
              "'middle'");

  // The Trainer's config: the same rules, with its own keys.
  const auto trainer = [](void (*edit)(attn::TrainerConfig&)) {
    return [edit] {
      attn::TrainerConfig c;
      edit(c);
      c.validate();
    };
  };
  check_error(trainer([](attn::TrainerConfig& c) { c.model.norm = NormKind::LayerNorm; }), ErrorKind::Config,
              "norm", "norm (layernorm) needs residual");
  check_error(trainer([](attn::TrainerConfig& c) { c.model.ffn = FfnKind::ReLU; }), ErrorKind::Config, "ffn",
              "ffn (relu) needs residual");
  check_error(trainer([](attn::TrainerConfig& c) { c.model.kv_heads = 3; }), ErrorKind::Config,
              "kv_heads", "n_heads (4) must be divisible by kv_heads (3)");
  check_error(trainer([](attn::TrainerConfig& c) { c.model.kv_heads = 8; }), ErrorKind::Config,
              "kv_heads", "kv_heads (8) must be in [0, 4]");
  check_error(trainer([](attn::TrainerConfig& c) { c.model.max_context_length = 11; }), ErrorKind::Config,
              "max_seq_len", "max_seq_len (11) must be 0 or >= seq_len (12)");
  check_error(trainer([](attn::TrainerConfig& c) { attn::set_choice(c, *attn::find_config_key("positions"), "absolute", nullptr); }),
              ErrorKind::Config, "positions", "positions: unknown positions 'absolute'");
  check_error(trainer([](attn::TrainerConfig& c) { attn::set_choice(c, *attn::find_config_key("norm_position"), "mid", nullptr); }),
              ErrorKind::Config, "norm_position", "norm_position: unknown position 'mid'");
  check_error(trainer([](attn::TrainerConfig& c) { c.model.ffn_mult = 0; }), ErrorKind::Config,
              "ffn_mult", "ffn_mult (0) must be in [1, 8]");
  // max_seq_len is the model's C; 0 keeps seq_len.
  attn::TrainerConfig t;
  CHECK(t.model_config().max_context_length == 12);
  t.model.max_context_length = 40;
  CHECK(t.model_config().max_context_length == 40);
}
