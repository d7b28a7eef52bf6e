// Every hand-written backward pass against finite differences, as one table of op cases and one
// driver (ggml's test-backend-ops): a row is a layer at one configuration with its tolerance.
// A case builds the layer and its inputs, recomputes its loss from them, and runs its backward
// for that loss once; the driver compares every input and parameter gradient with central
// differences of the loss (gradcheck.h). The layers' loss is llm.c's fakeloss sum(out * dout)
// with a fixed random dout; the whole model's is the cross-entropy, evaluated in double.
// Dropout masks are the same in every forward: each forward draws them from a generator seeded
// identically, so the loss is a smooth function of the values.
// Each layer's own file keeps its hand-computed cases, its properties and its exact identities.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/model/model.h"
#include "attn/nn/attention.h"
#include "attn/nn/attention_map.h"
#include "attn/nn/cross_attention.h"
#include "attn/nn/embedding.h"
#include "attn/nn/ffn.h"
#include "attn/nn/linear.h"
#include "attn/nn/loss.h"
#include "attn/nn/multihead.h"
#include "attn/nn/norm.h"
#include "attn/nn/positions.h"
#include "gradcheck.h"
#include "mhsa_run.h"

using attn::Mat;
using attn::ModelConfig;

// A named namespace: the test files compile in unity batches, whose anonymous namespaces are
// shared.
namespace opcases {

// A value the driver perturbs (an input or a parameter) and the gradient backward() wrote for it.
struct Tensor {
  std::string name;
  float* value;
  const float* grad;
  int64_t n;
};

// One op at one configuration.
struct OpCase {
  virtual ~OpCase() = default;
  // The loss, recomputed from the current values; changes nothing else the driver reads (it may
  // overwrite the gradient buffers: the driver copies them first).
  virtual double loss() = 0;
  // The analytic gradients of loss() at the current values.
  virtual void backward() = 0;
  virtual std::vector<Tensor> tensors() = 0;
};

// A layer's case: loss = fakeloss(out(), dout).
struct FakelossCase : OpCase {
  Mat dout;
  virtual Mat out() = 0;
  double loss() override { return gradcheck::fakeloss(out(), dout); }
};

Tensor tensor(const std::string& name, Mat& value, const Mat& grad) {
  REQUIRE(grad.size() == value.size());
  return {name, value.data(), grad.data(), value.size()};
}

// x (6,5) -> y (6,4).
struct LinearCase : FakelossCase {
  attn::Rng rng{4};
  attn::Linear lin{5, 4, rng};
  Mat x = gradcheck::random_mat(6, 5, rng), dx = Mat(6, 5);
  LinearCase() { dout = gradcheck::random_mat(6, 4, rng); }
  Mat out() override {
    Mat y(6, 4);
    lin.forward(x, y);
    return y;
  }
  void backward() override { lin.backward(x, dout, dx); }
  std::vector<Tensor> tensors() override {
    return {tensor("x", x, dx), tensor("weight", lin.weight, lin.dweight),
            {"bias", lin.bias.data(), lin.dbias.data(), lin.bias.size()}};
  }
};

// Rows of x (4,6) -> softmax rows.
struct SoftmaxCase : FakelossCase {
  attn::Rng rng{2};
  Mat x = gradcheck::random_mat(4, 6, rng), dx = Mat(4, 6);
  SoftmaxCase() { dout = gradcheck::random_mat(4, 6, rng); }
  Mat out() override {
    Mat y(4, 6);
    attn::softmax_rows(x, y);
    return y;
  }
  void backward() override { attn::softmax_rows_backward(out(), dout, dx); }
  std::vector<Tensor> tensors() override { return {tensor("x", x, dx)}; }
};

// Q (T,4), K (5,4), V (5,3) -> output (T,3); T = 5 causal, else 3 (fewer queries than keys).
struct SdpaCase : FakelossCase {
  bool causal;
  attn::Rng rng{13};
  int T;
  Mat Q, K, V;
  attn::AttentionGrads g;
  explicit SdpaCase(bool c) : causal(c), T(c ? 5 : 3) {
    Q = gradcheck::random_mat(T, 4, rng);
    K = gradcheck::random_mat(5, 4, rng);
    V = gradcheck::random_mat(5, 3, rng);
    dout = gradcheck::random_mat(T, 3, rng);
  }
  Mat out() override { return attn::scaled_dot_product_attention(Q, K, V, causal).output; }
  void backward() override {
    const attn::AttentionResult r = attn::scaled_dot_product_attention(Q, K, V, causal);
    g = attn::scaled_dot_product_attention_backward(Q, K, V, r.weights, dout);
  }
  std::vector<Tensor> tensors() override {
    return {tensor("Q", Q, g.dQ), tensor("K", K, g.dK), tensor("V", V, g.dV)};
  }
};

// The lesson's SelfAttention(6, 4, 3): X (5,6) -> output (5,3).
struct SelfAttentionCase : FakelossCase {
  bool causal;
  attn::SelfAttention sa{6, 4, 3, 7};
  attn::Rng rng{16};
  Mat X = gradcheck::random_mat(5, 6, rng), dX;
  explicit SelfAttentionCase(bool c) : causal(c) { dout = gradcheck::random_mat(5, 3, rng); }
  Mat out() override { return sa.forward(X, causal).output; }
  void backward() override {
    sa.forward(X, causal);
    dX = sa.backward(dout);
  }
  std::vector<Tensor> tensors() override {
    return {tensor("X", X, dX), tensor("Wq", sa.Wq, sa.dWq), tensor("Wk", sa.Wk, sa.dWk),
            tensor("Wv", sa.Wv, sa.dWv)};
  }
};

// Token embedding (6,3) on 7 ids, with repeats (1 three times, 4 twice) and unused rows.
struct EmbeddingCase : FakelossCase {
  attn::Rng rng{4};
  attn::TokenEmbedding emb{6, 3, rng};
  const int32_t ids[7] = {1, 4, 1, 0, 5, 1, 4};
  EmbeddingCase() { dout = gradcheck::random_mat(7, 3, rng); }
  Mat out() override {
    Mat y(7, 3);
    emb.forward(ids, 7, y);
    return y;
  }
  void backward() override { emb.backward(ids, dout); }
  std::vector<Tensor> tensors() override { return {tensor("weight", emb.weight, emb.dweight)}; }
};

// RoPE on x (5,6), a table of 8 positions.
struct RopeCase : FakelossCase {
  const attn::Rope rope{8, 6};
  attn::Rng rng{3};
  Mat x = gradcheck::random_mat(5, 6, rng), dx;
  RopeCase() { dout = gradcheck::random_mat(5, 6, rng); }
  Mat out() override {
    Mat r = x;
    rope.rotate(r);
    return r;
  }
  void backward() override {
    dx = dout;
    rope.rotate_backward(dx);
  }
  std::vector<Tensor> tensors() override { return {tensor("x", x, dx)}; }
};

// A layer with forward(x, state, y), backward(state, dy, dx) and named parameters (a norm, an
// FFN) on x (N,D) -> y (N,D).
template <typename Layer>
struct StatefulCase : FakelossCase {
  std::optional<Layer> layer;
  std::string prefix;  // the parameters' names start with it
  Mat x, dx;
  Mat run(typename Layer::State& s) {
    Mat y(x.rows(), x.cols());
    layer->forward(x, s, y);
    return y;
  }
  Mat out() override {
    typename Layer::State s;
    return run(s);
  }
  void backward() override {
    typename Layer::State s;
    run(s);
    dx.resize(x.rows(), x.cols());
    layer->backward(s, dout, dx);
  }
  std::vector<Tensor> tensors() override {
    std::vector<Tensor> t = {tensor("x", x, dx)};
    std::vector<attn::ParamRef> params;
    layer->append_params(prefix, params);
    for (const attn::ParamRef& p : params) t.push_back({p.name, p.value, p.grad, p.numel()});
    return t;
  }
};

// A norm of width 6 on x (5,6) ~ N(0, 4), its weight (and bias) away from 1 (and 0).
struct NormCase : StatefulCase<attn::Norm> {
  explicit NormCase(attn::NormKind kind) {
    attn::Rng rng(kind == attn::NormKind::LayerNorm ? 2 : 3);
    layer.emplace(kind, 6);
    layer->weight = gradcheck::random_mat(1, 6, rng);
    if (layer->bias.size()) layer->bias = gradcheck::random_mat(1, 6, rng);
    x = gradcheck::random_mat(5, 6, rng, 2.0f);
    dout = gradcheck::random_mat(5, 6, rng);
  }
};

// The FFN, D 4, mult 2, on x (6,4) ~ N(0, 2.25).
struct FfnCase : StatefulCase<attn::FeedForward> {
  explicit FfnCase(attn::FfnKind kind) {
    attn::Rng init(11), data(12);
    layer.emplace(kind, 4, 2, init);
    prefix = "ffn.";
    x = gradcheck::random_mat(6, 4, data, 1.5f);
    dout = gradcheck::random_mat(6, 4, data);
  }
};

// A multi-head attention layer's configuration: heads, options, dropout, interventions.
struct MhsaConfig {
  int H = 2;
  attn::AttentionOptions options;
  float p_attn = 0.0f, p_out = 0.0f;
  int head_off = -1;
  bool scale_scores = true;
  attn::MaskMode mask = attn::MaskMode::Causal;
};

// MultiHeadSelfAttention, D 8, C 6, on x (B*T,D), B 2, T 4.
struct MhsaCase : FakelossCase {
  static constexpr int B = 2, T = 4, D = 8;
  static constexpr uint64_t kDropoutSeed = 77;
  MhsaConfig c;
  attn::Rng init{13}, data{14};
  attn::MultiHeadSelfAttention m;
  Mat x = gradcheck::random_mat(B * T, D, data), dx = Mat(B * T, D);
  bool training;
  explicit MhsaCase(const MhsaConfig& cfg)
      : c(cfg), m(D, cfg.H, 6, cfg.p_attn, cfg.p_out, init, cfg.options),
        training(cfg.p_attn > 0 || cfg.p_out > 0) {
    if (c.head_off >= 0) m.head_off[size_t(c.head_off)] = 1;
    // A differential layer's lambda off its init, a different value per head.
    for (Eigen::Index h = 0; h < m.lambda.size(); ++h) m.lambda[h] = 0.3f + 0.15f * float(h);
    m.scale_scores = c.scale_scores;
    m.mask = c.mask;
    dout = gradcheck::random_mat(B * T, D, data);
  }
  Mat out() override {
    attn::MultiHeadSelfAttention::State s;
    return mhsa_test::run(m, x, B, T, s, training, kDropoutSeed);
  }
  void backward() override {
    attn::MultiHeadSelfAttention::State s;
    mhsa_test::run(m, x, B, T, s, training, kDropoutSeed);
    REQUIRE(s.attn_dropped == (c.p_attn > 0));
    REQUIRE(s.out_dropped == (c.p_out > 0));
    m.backward(s, dout, dx);
  }
  std::vector<Tensor> tensors() override {
    std::vector<Tensor> t = {
        tensor("x", x, dx), tensor("qkv_proj.weight", m.qkv_proj.weight, m.qkv_proj.dweight),
        {"qkv_proj.bias", m.qkv_proj.bias.data(), m.qkv_proj.dbias.data(), m.qkv_proj.bias.size()},
        tensor("out_proj.weight", m.out_proj.weight, m.out_proj.dweight),
        {"out_proj.bias", m.out_proj.bias.data(), m.out_proj.dbias.data(), m.out_proj.bias.size()}};
    if (m.lambda.size()) t.push_back({"diff_lambda", m.lambda.data(), m.dlambda.data(), m.lambda.size()});
    return t;
  }
};

// The shared attention map: q (3,4), k (5,4) -> weights (3,5), the queries at positions 2..4
// and the keys at 0..4 (a rectangular block of the (5,5) map), with the given mask and ALiBi;
// key 1 padding when pad is set.
struct MapCase : FakelossCase {
  attn::AttentionMap map;
  bool pad;
  attn::Rng rng{21};
  Mat q = gradcheck::random_mat(3, 4, rng), k = gradcheck::random_mat(5, 4, rng);
  Mat dq = Mat(3, 4), dk = Mat(5, 4);
  const uint8_t pad_flags[5] = {0, 1, 0, 0, 0};
  MapCase(attn::MaskMode mode, attn::MaskPattern pattern, bool alibi, bool pad_) : pad(pad_) {
    map.scale = 0.5f;
    map.mode = mode;
    map.pattern = pattern;
    map.alibi = alibi;
    map.alibi_slope = alibi ? 0.25f : 0.0f;
    dout = gradcheck::random_mat(3, 5, rng);
  }
  Mat out() override {
    Mat p(3, 5);
    attn::attention_map_forward(map, q, k, p, 2, 0, pad ? pad_flags : nullptr);
    return p;
  }
  void backward() override {
    const Mat p = out();
    Mat ds(3, 5);
    attn::attention_map_backward(p, dout, ds);
    attn::attention_scores_backward(map, ds, q, k, dq, dk, false);
  }
  std::vector<Tensor> tensors() override { return {tensor("q", q, dq), tensor("k", k, dk)}; }
};

// Cross-attention D 8: queries x (B*3,D), source (B*5,D), B 2 (T != S).
struct CrossCase : FakelossCase {
  static constexpr int B = 2, T = 3, S = 5, D = 8;
  static constexpr uint64_t kDropoutSeed = 78;
  attn::Rng init{23}, data{24};
  attn::CrossAttention m;
  std::vector<uint8_t> pad;
  Mat x = gradcheck::random_mat(B * T, D, data), src = gradcheck::random_mat(B * S, D, data);
  Mat dx = Mat(B * T, D), dsrc = Mat(B * S, D);
  CrossCase(int H, int KV, bool padded, float p_attn) : m(D, H, KV, p_attn, init) {
    if (padded) pad = {0, 0, 0, 1, 1, 0, 1, 0, 0, 0};  // sequence 0 ends in two pads
    dout = gradcheck::random_mat(B * T, D, data);
  }
  Mat run(attn::CrossAttention::State& s, attn::CrossAttention::Source& c) {
    m.encode(src, B, S, pad, c);
    attn::Rng drop(kDropoutSeed);
    Mat y(B * T, D);
    m.forward(x, B, T, c, m.attn_dropout > 0, drop, s, y);
    return y;
  }
  Mat out() override {
    attn::CrossAttention::State s;
    attn::CrossAttention::Source c;
    return run(s, c);
  }
  void backward() override {
    attn::CrossAttention::State s;
    attn::CrossAttention::Source c;
    run(s, c);
    m.backward(s, c, dout, dx, dsrc);
  }
  std::vector<Tensor> tensors() override {
    std::vector<Tensor> t = {tensor("x", x, dx), tensor("source", src, dsrc)};
    std::vector<attn::ParamRef> params;
    m.append_params("", params);
    for (const attn::ParamRef& p : params) t.push_back({p.name, p.value, p.grad, p.numel()});
    return t;
  }
};

// Cross-entropy on logits (6,5) ~ N(0, 4), one target ignored: the loss itself, in float.
struct CrossEntropyCase : OpCase {
  attn::Rng rng{1};
  Mat logits = gradcheck::random_mat(6, 5, rng, 2.0f), dlogits = Mat(6, 5);
  const int32_t targets[6] = {0, 4, attn::kIgnoreIndex, 2, 2, 1};
  double loss() override { return attn::cross_entropy_loss(logits, targets); }
  void backward() override { attn::cross_entropy(logits, targets, dlogits); }
  std::vector<Tensor> tensors() override { return {tensor("logits", logits, dlogits)}; }
};

// The whole model through cross-entropy (in double), B 2, T 5, position 3 ignored; with dropout,
// training mode with the same masks in every forward.
struct ModelCase : OpCase {
  static constexpr int B = 2, T = 5;
  static constexpr uint64_t kDropoutSeed = 23;
  attn::TinyAttentionLM model;
  std::vector<int32_t> ids, targets;
  bool training;
  attn::TinyAttentionLM::State s;
  // seed: the model's init; data_seed: the ids and targets.
  ModelCase(const ModelConfig& c, uint64_t seed, uint64_t data_seed)
      : model(c, seed), training(c.attn_dropout > 0 || c.out_dropout > 0) {
    attn::Rng rng(data_seed);
    ids = gradcheck::random_ids(B * T, c.vocab_size, rng);
    targets = gradcheck::random_ids(B * T, c.vocab_size, rng);
    targets[3] = attn::kIgnoreIndex;  // an ignored position must not disturb the gradient
  }
  void forward() {
    attn::Rng drop(kDropoutSeed);
    if (training) model.forward(ids.data(), B, T, /*training=*/true, drop, s);
    else model.forward(ids.data(), B, T, s);
  }
  double loss() override {
    forward();
    return gradcheck::cross_entropy_double(s.logits, targets);
  }
  void backward() override {
    forward();
    s.dlogits.resize(s.logits.rows(), s.logits.cols());
    attn::cross_entropy(s.logits, targets.data(), s.dlogits);
    model.backward(ids.data(), s);
  }
  std::vector<Tensor> tensors() override {
    std::vector<Tensor> t;
    for (const attn::ParamRef& p : model.parameters()) t.push_back({p.name, p.value, p.grad, p.numel()});
    return t;
  }
};

// A row of the table: a layer at one configuration, its tolerance, and how many entries of each
// tensor to check (0: all; else the first, the last and a seeded sample).
struct Row {
  std::string layer, config;
  std::function<std::unique_ptr<OpCase>()> make;
  gradcheck::Tolerance tol = gradcheck::kLayerTol;
  int64_t max_entries = 0;
};

template <typename Case, typename... Args>
std::function<std::unique_ptr<OpCase>()> make(Args... args) {
  return [=] { return std::make_unique<Case>(args...); };
}

MhsaConfig mhsa(int H, int kv_heads = 0, bool rope = false, bool alibi = false) {
  MhsaConfig c;
  c.H = H;
  c.options.kv_heads = kv_heads;
  c.options.rope = rope;
  c.options.alibi = alibi;
  return c;
}
// The keys each query sees (ops.h's MaskPattern): causal or not, a window of W keys (0: all) and
// the strided keys at the multiples of S (0: none); and differential attention.
MhsaConfig with_pattern(MhsaConfig c, bool causal, int window = 0, int stride = 0,
                        bool differential = false) {
  c.options.pattern.causal = causal;
  c.options.pattern.window = window;
  c.options.pattern.stride = stride;
  c.options.differential = differential;
  return c;
}
MhsaConfig with_dropout(MhsaConfig c, float p_attn, float p_out) {
  c.p_attn = p_attn;
  c.p_out = p_out;
  return c;
}
MhsaConfig with_head_off(MhsaConfig c, int h) {
  c.head_off = h;
  return c;
}

// The curriculum's model, small: V 11, D 8, H 2, C 6.
ModelConfig small_model(int L, bool residual, float p_attn = 0.0f, float p_out = 0.0f) {
  ModelConfig c{11, 8, 2, 6};
  c.n_layers = L;
  c.residual = residual;
  c.attn_dropout = p_attn;
  c.out_dropout = p_out;
  return c;
}

// A transformer block's option set, applied to V 11, D 8, H 4 (Dh 2, even for RoPE), C 6,
// residual, ffn_mult 2.
struct BlockVariant {
  const char* name;
  void (*edit)(ModelConfig&);
};
using attn::AttentionKind;
using attn::FfnKind;
using attn::NormKind;
using attn::Objective;
using attn::NormPosition;
using attn::PositionKind;
const BlockVariant kBlockVariants[] = {
    {"positions sinusoidal", [](ModelConfig& c) { c.positions = PositionKind::Sinusoidal; }},
    {"positions learned", [](ModelConfig& c) { c.positions = PositionKind::Learned; }},
    {"positions rope", [](ModelConfig& c) { c.positions = PositionKind::Rope; }},
    {"positions alibi", [](ModelConfig& c) { c.positions = PositionKind::Alibi; }},
    {"positions none", [](ModelConfig& c) { c.positions = PositionKind::None; }},
    {"layernorm pre", [](ModelConfig& c) { c.norm = NormKind::LayerNorm; }},
    {"layernorm post",
     [](ModelConfig& c) { c.norm = NormKind::LayerNorm, c.norm_position = NormPosition::Post; }},
    {"rmsnorm pre", [](ModelConfig& c) { c.norm = NormKind::RMSNorm; }},
    {"rmsnorm post",
     [](ModelConfig& c) { c.norm = NormKind::RMSNorm, c.norm_position = NormPosition::Post; }},
    {"ffn relu", [](ModelConfig& c) { c.ffn = FfnKind::ReLU; }},
    {"ffn gelu", [](ModelConfig& c) { c.ffn = FfnKind::GELU; }},
    {"ffn swiglu", [](ModelConfig& c) { c.ffn = FfnKind::SwiGLU; }},
    {"layernorm pre + gelu", [](ModelConfig& c) { c.norm = NormKind::LayerNorm, c.ffn = FfnKind::GELU; }},
    {"layernorm post + relu",
     [](ModelConfig& c) {
       c.norm = NormKind::LayerNorm, c.norm_position = NormPosition::Post, c.ffn = FfnKind::ReLU;
     }},
    {"rmsnorm pre + swiglu + rope",
     [](ModelConfig& c) {
       c.norm = NormKind::RMSNorm, c.ffn = FfnKind::SwiGLU, c.positions = PositionKind::Rope;
     }},
    {"rmsnorm post + swiglu + learned",
     [](ModelConfig& c) {
       c.norm = NormKind::RMSNorm, c.norm_position = NormPosition::Post, c.ffn = FfnKind::SwiGLU,
       c.positions = PositionKind::Learned;
     }},
    {"tie_embeddings", [](ModelConfig& c) { c.tie_embeddings = true; }},
    {"no bias + relu", [](ModelConfig& c) { c.bias = false, c.ffn = FfnKind::ReLU; }},
    {"the capstone's block: learned, rmsnorm pre, swiglu 2.67, no bias, tied",
     [](ModelConfig& c) {
       c.positions = PositionKind::Learned, c.norm = NormKind::RMSNorm, c.ffn = FfnKind::SwiGLU;
       c.ffn_mult = 2.67f, c.bias = false, c.tie_embeddings = true, c.pos_init_std = 1.0f;
     }},
    {"kv_heads 1", [](ModelConfig& c) { c.kv_heads = 1; }},
    {"kv_heads H/2 + alibi + rmsnorm + gelu",
     [](ModelConfig& c) {
       c.kv_heads = c.n_heads / 2, c.positions = PositionKind::Alibi, c.norm = NormKind::RMSNorm,
       c.ffn = FfnKind::GELU;
     }},
    {"kv_heads H/2 + rope",
     [](ModelConfig& c) { c.kv_heads = c.n_heads / 2, c.positions = PositionKind::Rope; }},
    // The objective and the attention variants (the model's vocab_size counts [MASK]).
    {"objective mlm", [](ModelConfig& c) { c.objective = Objective::Mlm; }},
    {"mlm + alibi + layernorm + gelu",
     [](ModelConfig& c) {
       c.objective = Objective::Mlm, c.positions = PositionKind::Alibi, c.norm = NormKind::LayerNorm,
       c.ffn = FfnKind::GELU;
     }},
    {"window 2", [](ModelConfig& c) { c.attention = AttentionKind::Window, c.window = 2; }},
    {"strided 2 / 3 + rope",
     [](ModelConfig& c) {
       c.attention = AttentionKind::Strided, c.window = 2, c.stride = 3;
       c.positions = PositionKind::Rope;
     }},
    {"differential", [](ModelConfig& c) { c.differential = true; }},
    {"differential + kv_heads 1 + rmsnorm post + swiglu",
     [](ModelConfig& c) {
       c.differential = true, c.kv_heads = 1, c.norm = NormKind::RMSNorm;
       c.norm_position = NormPosition::Post, c.ffn = FfnKind::SwiGLU;
     }},
    {"mlm + window 2 + differential + learned",
     [](ModelConfig& c) {
       c.objective = Objective::Mlm, c.attention = AttentionKind::Window, c.window = 2;
       c.differential = true, c.positions = PositionKind::Learned;
     }},
};

const std::vector<Row>& table() {
  static const std::vector<Row> rows = [] {
    using attn::MaskMode;
    std::vector<Row> r = {
        {"linear", "in 5, out 4, N 6", make<LinearCase>()},
        {"softmax", "rows of 6", make<SoftmaxCase>()},
        {"sdpa", "T 3, S 5, dk 4, dv 3", make<SdpaCase>(false)},
        {"sdpa", "causal, T 5", make<SdpaCase>(true)},
        {"SelfAttention", "D 6, dk 4, dv 3", make<SelfAttentionCase>(false)},
        {"SelfAttention", "causal", make<SelfAttentionCase>(true)},
        {"token embedding", "V 6, D 3, repeated and unused ids", make<EmbeddingCase>()},
        {"rope", "T 5, Dh 6", make<RopeCase>()},
        {"norm", "layernorm", make<NormCase>(NormKind::LayerNorm)},
        {"norm", "rmsnorm", make<NormCase>(NormKind::RMSNorm)},
        {"ffn", "relu", make<FfnCase>(FfnKind::ReLU)},
        {"ffn", "gelu", make<FfnCase>(FfnKind::GELU)},
        {"ffn", "swiglu", make<FfnCase>(FfnKind::SwiGLU)},
        {"cross-entropy", "V 5, one target ignored", make<CrossEntropyCase>()},
        {"attention map", "T 3, S 5, no mask", make<MapCase>(MaskMode::None, attn::MaskPattern{}, false, false)},
        {"attention map", "causal rows 2..4, alibi", make<MapCase>(MaskMode::Causal, attn::MaskPattern{}, true, false)},
        {"attention map", "window 2, key padding", make<MapCase>(MaskMode::Causal, attn::MaskPattern{true, 2, 0}, false, true)},
        {"cross-attention", "H 2, T 3, S 5", make<CrossCase>(2, 0, false, 0.0f)},
        {"cross-attention", "H 4, kv_heads 2, key padding", make<CrossCase>(4, 2, true, 0.0f)},
        {"cross-attention", "H 2, multi-query, attention dropout", make<CrossCase>(2, 1, true, 0.3f)},
        {"multi-head attention", "H 2", make<MhsaCase>(mhsa(2))},
        {"multi-head attention", "attention dropout", make<MhsaCase>(with_dropout(mhsa(2), 0.3f, 0))},
        {"multi-head attention", "output dropout", make<MhsaCase>(with_dropout(mhsa(2), 0, 0.25f))},
        {"multi-head attention", "both dropouts", make<MhsaCase>(with_dropout(mhsa(2), 0.3f, 0.25f))},
        {"multi-head attention", "head 0 off", make<MhsaCase>(with_head_off(mhsa(2), 0))},
        {"multi-head attention", "head 1 off, with dropout",
         make<MhsaCase>(with_head_off(with_dropout(mhsa(2), 0.3f, 0.25f), 1))},
        {"multi-head attention", "H 4, kv_heads 2", make<MhsaCase>(mhsa(4, 2))},
        {"multi-head attention", "H 4, multi-query", make<MhsaCase>(mhsa(4, 1))},
        {"multi-head attention", "H 4, rope", make<MhsaCase>(mhsa(4, 4, true))},
        {"multi-head attention", "H 4, alibi", make<MhsaCase>(mhsa(4, 4, false, true))},
        {"multi-head attention", "H 4, kv_heads 2, rope and alibi", make<MhsaCase>(mhsa(4, 2, true, true))},
        {"multi-head attention", "H 4, multi-query, rope, with dropout",
         make<MhsaCase>(with_dropout(mhsa(4, 1, true), 0.3f, 0.25f))},
        {"multi-head attention", "H 4, kv_heads 2, rope, the first head of a group off",
         make<MhsaCase>(with_head_off(mhsa(4, 2, true), 2))},
        {"multi-head attention", "H 4, kv_heads 2, the second head of a group off",
         make<MhsaCase>(with_head_off(mhsa(4, 2), 1))},
    };
    // The mask patterns and differential attention, alone and mixed with the other options,
    // each also with dropout and with a head off.
    const std::pair<const char*, MhsaConfig> variants[] = {
        {"H 4, bidirectional", with_pattern(mhsa(4), false)},
        {"H 4, window 2", with_pattern(mhsa(4), true, 2)},
        {"H 4, window 3, bidirectional, alibi", with_pattern(mhsa(4, 0, false, true), false, 3)},
        {"H 4, strided 2 / 3", with_pattern(mhsa(4), true, 2, 3)},
        {"H 4, strided 2 / 3, bidirectional, rope", with_pattern(mhsa(4, 0, true), false, 2, 3)},
        {"H 4, differential", with_pattern(mhsa(4), true, 0, 0, true)},
        {"H 4, differential, bidirectional, kv_heads 2, rope",
         with_pattern(mhsa(4, 2, true), false, 0, 0, true)},
        {"H 4, differential, window 2, multi-query, alibi",
         with_pattern(mhsa(4, 1, false, true), true, 2, 0, true)},
        {"H 4, differential, strided 1 / 2", with_pattern(mhsa(4), true, 1, 2, true)},
    };
    for (const auto& [name, c] : variants) {
      r.push_back({"multi-head attention", name, make<MhsaCase>(c)});
      r.push_back({"multi-head attention", std::string(name) + ", with dropout",
                   make<MhsaCase>(with_dropout(c, 0.3f, 0.2f))});
      r.push_back({"multi-head attention", std::string(name) + ", head 1 off",
                   make<MhsaCase>(with_head_off(c, 1))});
    }
    MhsaConfig unscaled = mhsa(2), unmasked = mhsa(2), inverted = mhsa(2);
    unscaled.scale_scores = false;
    unmasked.mask = MaskMode::None;
    inverted.mask = MaskMode::Inverted;
    r.push_back({"multi-head attention", "no score scaling", make<MhsaCase>(unscaled)});
    r.push_back({"multi-head attention", "no mask", make<MhsaCase>(unmasked)});
    r.push_back({"multi-head attention", "inverted mask", make<MhsaCase>(inverted)});
    // The whole model, sampling 24 entries of each parameter: the curriculum's model at 1 to 3
    // layers, with and without the residual stream and dropout; then every block option at 1 to
    // 3 layers, sampling 12.
    const auto model_row = [&](const std::string& config, const ModelConfig& c) {
      r.push_back({"model", config, make<ModelCase>(c, uint64_t(21), uint64_t(22)),
                   gradcheck::kDoubleLossTol, 24});
    };
    model_row("1 layer", small_model(1, false));
    model_row("1 layer, dropout", small_model(1, false, 0.2f, 0.1f));
    model_row("1 layer, residual", small_model(1, true));
    for (const int L : {2, 3})
      for (const bool residual : {false, true})
        model_row(std::to_string(L) + " layers" + (residual ? ", residual" : ""), small_model(L, residual));
    model_row("2 layers, residual, dropout", small_model(2, true, 0.2f, 0.1f));
    for (const int L : {1, 2, 3})
      for (const BlockVariant& v : kBlockVariants) {
        ModelConfig c{11, 8, 4, 6};
        c.residual = true;
        c.ffn_mult = 2;
        c.n_layers = L;
        v.edit(c);
        r.push_back({"block model", std::string(v.name) + ", " + std::to_string(L) + " layer(s)",
                     make<ModelCase>(c, uint64_t(31), uint64_t(32)), gradcheck::kDoubleLossTol, 12});
      }
    return r;
  }();
  return rows;
}

// The driver: backward once, then every tensor against central differences of the loss.
void check(const Row& row) {
  const std::unique_ptr<OpCase> c = row.make();
  c->backward();
  attn::Rng pick(24);
  for (const Tensor& t : c->tensors()) {
    std::vector<int64_t> idx;
    if (row.max_entries > 0) idx = gradcheck::sample_indices(t.n, row.max_entries, pick);
    gradcheck::check_grad(row.layer + " " + t.name, t.value, t.grad, t.n, [&] { return c->loss(); },
                          idx, row.tol);
  }
}

}  // namespace opcases

TEST_CASE("gradcheck: every layer and option's backward matches finite differences",
          "[gradcheck]") {
  for (const opcases::Row& row : opcases::table()) {
    SECTION(row.layer + ": " + row.config) { opcases::check(row); }
  }
}
