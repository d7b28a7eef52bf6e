// Modules describe themselves (nn/report.h): each module's report names exactly the tensors it
// appends (names, shapes, counts), the model's report is its parameters(), and the FLOPs and
// activations of a small config are what a hand count gives.
#include <catch2/catch.hpp>

#include "attn/model/family.h"
#include "attn/model/model.h"
#include "attn/nn/report.h"

using attn::AttentionOptions;
using attn::FfnKind;
using attn::ModelConfig;
using attn::ModuleReport;
using attn::NormKind;
using attn::ParamRef;
using attn::Rng;

namespace {

// The report r, mounted at "m.", against what the module appended under "m.".
void check_names(const ModuleReport& r, const std::vector<ParamRef>& refs) {
  ModuleReport mounted;
  mounted.add(r, "m.");
  REQUIRE(mounted.tensors.size() == refs.size());
  int64_t total = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    CAPTURE(i, refs[i].name);
    CHECK(mounted.tensors[i].name == refs[i].name);
    CHECK(mounted.tensors[i].shape == refs[i].shape);
    total += refs[i].numel();
  }
  CHECK(r.param_count() == total);
}

}  // namespace

TEST_CASE("report: each module's report names the tensors it appends", "[report]") {
  Rng rng(3);
  const int64_t N = 6;
  for (const bool bias : {true, false}) {
    attn::Linear l(5, 7, rng, bias);
    std::vector<ParamRef> refs;
    l.append_params("m.", refs);
    CAPTURE(bias);
    check_names(attn::Linear::report(5, 7, bias, N), refs);
    CHECK(refs[0].value == l.weight.data());
  }
  {
    attn::TokenEmbedding e(11, 4, rng);
    std::vector<ParamRef> refs;
    e.append_params("m.", refs);
    check_names(attn::TokenEmbedding::report(11, 4), refs);
  }
  for (const NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    attn::Norm n(kind, 8);
    std::vector<ParamRef> refs;
    n.append_params("m.", refs);
    CAPTURE(attn::norm_kind_name(kind));
    check_names(attn::Norm::report(kind, 8, N), refs);
  }
  for (const FfnKind kind : {FfnKind::ReLU, FfnKind::GELU, FfnKind::SwiGLU}) {
    for (const int mult : {1, 3}) {
      attn::FeedForward f(kind, 8, mult, rng);
      std::vector<ParamRef> refs;
      f.append_params("m.", refs);
      CAPTURE(attn::ffn_kind_name(kind), mult);
      const ModuleReport r = attn::FeedForward::report(kind, 8, mult, N);
      check_names(r, refs);
      CHECK(r.tensors[kind == FfnKind::SwiGLU ? 1 : 0].shape[0] == f.hidden_dim);
    }
  }
  for (const int kv : {0, 2, 1}) {
    for (const bool diff : {false, true}) {
      AttentionOptions o;
      o.kv_heads = kv;
      o.differential = diff;
      attn::MultiHeadSelfAttention m(16, 4, 8, 0.0f, 0.0f, rng, o);
      std::vector<ParamRef> refs;
      m.append_params("m.", refs);
      CAPTURE(kv, diff);
      const ModuleReport r = attn::MultiHeadSelfAttention::report(16, 4, o, 2, 3);
      check_names(r, refs);
      CHECK(r.own == (diff ? 1u : 0u));  // diff_lambda, the layer's own
    }
  }
}

TEST_CASE("report: the model's report is its parameters(), in the state dict's order",
          "[report]") {
  ModelConfig deep;  // every module: learned positions, norms, GQA, swiglu, differential
  deep.n_layers = 2;
  deep.residual = true;
  deep.positions = attn::PositionKind::Learned;
  deep.norm = NormKind::LayerNorm;
  deep.ffn = FfnKind::SwiGLU;
  deep.kv_heads = 2;
  deep.differential = true;
  ModelConfig post = deep;
  post.norm_position = attn::NormPosition::Post;
  post.norm = NormKind::RMSNorm;
  post.ffn = FfnKind::GELU;
  post.positions = attn::PositionKind::Rope;
  post.differential = false;
  ModelConfig mlm;
  mlm.objective = attn::Objective::Mlm;
  mlm.n_layers = 3;
  mlm.residual = true;
  mlm.ffn = FfnKind::ReLU;
  mlm.ffn_mult = 2;
  for (const ModelConfig& c : {ModelConfig{}, deep, post, mlm}) {
    attn::TinyAttentionLM model(c, 1);
    const std::vector<ParamRef> params = model.parameters();
    const ModuleReport r = attn::TinyAttentionLM::report(c, 2, 5);
    CAPTURE(c.n_layers, c.differential, attn::norm_kind_name(c.norm));
    REQUIRE(r.tensors.size() == params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      CAPTURE(i, params[i].name);
      CHECK(r.tensors[i].name == params[i].name);
      CHECK(r.tensors[i].shape == params[i].shape);
    }
    CHECK(r.param_count() == model.param_count());
    CHECK(attn::model_report(c, 2, 5).param_count() == r.param_count());
    // A layer's diff_lambda comes before its submodules' (PyTorch's order).
    if (c.differential) CHECK(params[2].name == "layers.0.diff_lambda");
  }
}

TEST_CASE("report: FLOPs and activations of a small model, counted by hand", "[report]") {
  // B 2, T 3 (N 6), D 4, H 2 (Dh 2), V 5, one residual layer with a ReLU FFN of F 8.
  ModelConfig c{5, 4, 2, 3};
  c.residual = true;
  c.ffn = FfnKind::ReLU;
  c.ffn_mult = 2;
  const ModuleReport r = attn::TinyAttentionLM::report(c, 2, 3);
  // Forward, 2 m n k each: qkv 2*6*4*12 = 576, scores 2*3*3*2 per head, 4 heads: 144, weights v
  // 144, out_proj 2*6*4*4 = 192, ffn up 2*6*8*4 = 384, down 384, lm_head 2*6*5*4 = 240: 2064.
  // The backward does twice that: 3 * 2064.
  double forward = 0.0;
  for (const auto& p : r.forward) forward += p.flops();
  CHECK(forward == 2064.0);
  CHECK(r.flops() == 3 * 2064.0);
  // Activations: attention x 24, qkv 6*12, probs 2*2*3*3, merged 24 (156); FFN x 24, up and
  // hidden 2*6*8 (120); the model's x, a, y 3*24 and logits 6*5 (102).
  CHECK(r.activations == 156 + 120 + 102);

  // Differential heads: qkv is (2 (H + KV) + KV) Dh = 20 rows, 2*6*4*20 = 960, and each head has
  // two score maps, 288; the rest as above: 960 + 288 + 144 + 192 + 768 + 240 = 2592.
  c.differential = true;
  const ModuleReport d = attn::TinyAttentionLM::report(c, 2, 3);
  forward = 0.0;
  for (const auto& p : d.forward) forward += p.flops();
  CHECK(forward == 2592.0);
  CHECK(d.flops() == 3 * 2592.0);
  // probs2 and combined beside probs, qkv 6*20: 24 + 120 + 3*36 + 24 + 120 + 102.
  CHECK(d.activations == 24 + 120 + 108 + 24 + 120 + 102);
}

TEST_CASE("report: mounting prefixes names and labels, flattening keeps own tensors first",
          "[report]") {
  ModuleReport layer;
  layer.add(attn::Norm::report(NormKind::RMSNorm, 4, 1), "attn_norm.");
  AttentionOptions o;
  o.differential = true;
  layer.add(attn::MultiHeadSelfAttention::report(4, 2, o, 1, 1), "");
  REQUIRE(layer.tensors.size() == 6);
  CHECK(layer.tensors[0].name == "diff_lambda");
  CHECK(layer.tensors[1].name == "attn_norm.weight");
  CHECK(layer.tensors[2].name == "qkv_proj.weight");
  CHECK(layer.forward.front().name == "qkv_proj");
  // The backward runs from the last step down: out_proj's first, qkv_proj's last.
  CHECK(layer.backward.front().name == "out_proj dW");
  CHECK(layer.backward.back().name == "qkv_proj dx");
  ModuleReport model;
  model.add(layer, "layers.0.", /*label_products=*/false);
  CHECK(model.tensors[0].name == "layers.0.diff_lambda");
  CHECK(model.own == 0u);
  CHECK(model.forward.front().name == "qkv_proj");
}
