// Looking inside a model (cpp/attn/interp/inspect.h): the parts of the direct attribution add
// up to the logit difference, patching's ends are 0 and 1, the lens's last row is the model's
// own prediction, the circuits are the brute-force products, the copying score of matrices with
// known eigenvalues, and every bad argument is one sentence of kind Input. No file I/O.
#include <algorithm>
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "attn/data/tasks.h"
#include "attn/interp/inspect.h"
#include "attn/kernels/ops.h"
#include "attn/nn/loss.h"
#include "expect_error.h"

using namespace attn;
using Catch::Matchers::WithinAbs;

namespace {

// A model whose numbers are far from their init: embeddings N(0, 1), sharper attention, norm
// weights and biases away from 1 and 0 (as make_block_reference.py perturbs its models).
std::unique_ptr<TinyAttentionLM> perturbed(const ModelConfig& c, uint64_t seed) {
  auto m = std::make_unique<TinyAttentionLM>(c, seed);
  Rng rng(seed + 1);
  for (ParamRef& p : m->parameters()) {
    const bool norm = p.name.find("norm.") != std::string::npos;
    for (int64_t i = 0; i < p.numel(); ++i) {
      float& v = p.value[i];
      if (p.name == "token_emb.embedding.weight") v *= 50.0f;
      else if (p.name.find("qkv_proj.weight") != std::string::npos) v *= 2.0f;
      else if (norm && p.name.find("weight") != std::string::npos) v = 0.6f + 0.8f * rng.uniform();
      else if (norm) v = 0.3f * rng.normal();
    }
  }
  return m;
}

ModelConfig config(int L, NormKind norm, FfnKind ffn, PositionKind pos = PositionKind::Sinusoidal,
                   int kv = 0, NormPosition where = NormPosition::Pre) {
  ModelConfig c;
  c.vocab_size = 11;
  c.d_model = 16;
  c.n_heads = 4;
  c.max_context_length = 10;
  c.n_layers = L;
  c.residual = true;
  c.norm = norm;
  c.ffn = ffn;
  c.ffn_mult = 2;
  c.positions = pos;
  c.kv_heads = kv;
  c.norm_position = where;
  return c;
}

std::vector<ModelConfig> residual_configs() {
  return {config(1, NormKind::None, FfnKind::None), config(2, NormKind::None, FfnKind::None),
          config(2, NormKind::LayerNorm, FfnKind::GELU),
          config(3, NormKind::RMSNorm, FfnKind::SwiGLU, PositionKind::Rope, 2),
          config(2, NormKind::RMSNorm, FfnKind::None, PositionKind::Alibi, 1),
          config(2, NormKind::None, FfnKind::ReLU, PositionKind::Learned)};
}

// An induction sample over V = 11 with its segment, T = 10.
std::vector<int32_t> induction_ids() {
  const std::vector<int32_t> ids = {7, 1, 2, 3, 4, 9, 1, 2, 3, 4};  // segment 1 2 3 4 twice
  REQUIRE(find_repeat(ids.data(), 10).found());
  return ids;
}

Mat model_probs(TinyAttentionLM& m, const std::vector<int32_t>& ids) {
  TinyAttentionLM::State s;
  m.forward(ids.data(), 1, int(ids.size()), s);
  Mat p(s.logits.rows(), s.logits.cols());
  softmax_rows(s.logits, p);
  return p;
}

}  // namespace

TEST_CASE("inspect: the attribution's parts add up to logit[answer] - mean logit",
          "[inspect]") {
  const std::vector<int32_t> ids = induction_ids();
  const std::vector<int32_t> answers = {3, 0, 5, kIgnoreIndex, 1, 2, 3, 4, 10, 6};
  int n = 0;
  for (const ModelConfig& c : residual_configs()) {
    auto m = perturbed(c, 100 + uint64_t(n++));
    const Attribution at = direct_attribution(*m, ids.data(), 10, answers.data());
    REQUIRE(at.applies);
    CHECK(at.reason.empty());
    const int L = c.n_layers, H = c.n_heads;
    REQUIRE(at.heads.rows() == L * H);
    REQUIRE(at.ffn.rows() == (c.ffn == FfnKind::None ? 0 : L));
    for (int t = 0; t < 10; ++t) {
      if (answers[size_t(t)] == kIgnoreIndex) {
        CHECK(std::isnan(at.total[t]));
        CHECK(std::isnan(at.heads(0, t)));
        continue;
      }
      double sum = double(at.embed[t]) + double(at.bias[t]), scale = std::abs(at.embed[t]);
      for (int g = 0; g < L * H; ++g) sum += at.heads(g, t), scale += std::abs(at.heads(g, t));
      for (int l = 0; l < at.ffn.rows(); ++l) sum += at.ffn(l, t), scale += std::abs(at.ffn(l, t));
      INFO("config " << n << " position " << t << ": parts " << sum << ", total " << at.total[t]);
      CHECK(std::abs(sum - at.total[t]) <= 1e-4 * std::max({1.0, std::abs(double(at.total[t])), scale}));
      CHECK(std::abs(at.total[t]) > 1e-3);  // a non-trivial check
    }
  }
}

TEST_CASE("inspect: the attribution of a switched-off head is 0", "[inspect]") {
  auto m = perturbed(config(2, NormKind::LayerNorm, FfnKind::ReLU), 7);
  m->layers[1].head_off[2] = 1;
  const std::vector<int32_t> ids = induction_ids(), answers(10, 5);
  const Attribution at = direct_attribution(*m, ids.data(), 10, answers.data());
  for (int t = 0; t < 10; ++t) {
    CHECK(at.heads(1 * 4 + 2, t) == 0.0f);
    CHECK(at.heads(0, t) != 0.0f);
  }
}

TEST_CASE("inspect: the lens's last row is the model's own softmax", "[inspect]") {
  const std::vector<int32_t> ids = induction_ids();
  std::vector<int32_t> answers(10, 4);
  answers[0] = kIgnoreIndex;
  int n = 0;
  std::vector<ModelConfig> configs = residual_configs();
  configs.push_back(config(2, NormKind::RMSNorm, FfnKind::GELU, PositionKind::None, 0,
                           NormPosition::Post));
  for (const ModelConfig& c : configs) {
    auto m = perturbed(c, 200 + uint64_t(n++));
    const LogitLens lens = logit_lens(*m, ids.data(), 10, answers.data());
    REQUIRE(lens.applies);
    const int L = c.n_layers;
    REQUIRE(lens.top_token.rows() == L + 1);
    const Mat p = model_probs(*m, ids);
    for (int t = 0; t < 10; ++t) {
      Eigen::Index top = 0;
      p.row(t).maxCoeff(&top);
      CHECK(lens.top_token(L, t) == int(top));
      CHECK_THAT(lens.top_prob(L, t), WithinAbs(p(t, top), 1e-6));
      if (t == 0) CHECK(std::isnan(lens.answer_prob(L, t)));
      else CHECK_THAT(lens.answer_prob(L, t), WithinAbs(p(t, 4), 1e-6));
      for (int l = 0; l <= L; ++l)
        if (t > 0) CHECK(lens.top_prob(l, t) >= lens.answer_prob(l, t) - 1e-7f);
    }
  }
}

TEST_CASE("inspect: the lens and the attribution say why they do not apply", "[inspect]") {
  ModelConfig c = config(2, NormKind::None, FfnKind::None);
  c.residual = false;
  auto m = perturbed(c, 3);
  const std::vector<int32_t> ids = induction_ids(), answers(10, 1);
  const LogitLens lens = logit_lens(*m, ids.data(), 10, answers.data());
  CHECK_FALSE(lens.applies);
  CHECK(lens.reason.find("residual stream") != std::string::npos);
  CHECK(lens.top_token.size() == 0);
  const Attribution at = direct_attribution(*m, ids.data(), 10, answers.data());
  CHECK_FALSE(at.applies);
  CHECK(at.reason.find("residual stream") != std::string::npos);
  auto post = perturbed(config(1, NormKind::LayerNorm, FfnKind::None, PositionKind::Sinusoidal, 0,
                               NormPosition::Post), 4);
  const Attribution at_post = direct_attribution(*post, ids.data(), 10, answers.data());
  CHECK_FALSE(at_post.applies);
  CHECK(at_post.reason.find("post-norm") != std::string::npos);
  CHECK(logit_lens(*post, ids.data(), 10, answers.data()).applies);
}

TEST_CASE("inspect: patching nothing gives 0, the clean activation at the end gives 1",
          "[inspect]") {
  const std::vector<int32_t> ids = induction_ids();
  const Corruption cor = induction_corruption(ids.data(), 10, 11);
  CHECK(cor.changed == 4);      // the last token of the first occurrence 1 2 3 4
  CHECK(cor.position == 8);     // query 3 of the second occurrence, whose answer is 4
  CHECK(cor.answer_clean == 4);
  CHECK(cor.answer_corrupt == 0);  // the smallest token not in the sequence
  CHECK(cor.ids[4] == 0);
  std::vector<ModelConfig> configs = residual_configs();
  ModelConfig nores = config(2, NormKind::None, FfnKind::None);
  nores.residual = false;
  configs.push_back(nores);
  configs.push_back(config(2, NormKind::LayerNorm, FfnKind::GELU, PositionKind::Rope, 0,
                           NormPosition::Post));
  int n = 0;
  for (const ModelConfig& c : configs) {
    auto m = perturbed(c, 300 + uint64_t(n++));
    PatchingOptions o;
    o.position = cor.position;
    o.answer_clean = cor.answer_clean;
    o.answer_corrupt = cor.answer_corrupt;
    const Patching p = activation_patching(*m, ids.data(), cor.ids.data(), 10, nullptr, o);
    const int L = c.n_layers, H = c.n_heads;
    INFO("config " << n << ": clean " << p.metric_clean << ", corrupted " << p.metric_corrupt);
    REQUIRE(p.logit_diff);
    REQUIRE(p.metric_clean != p.metric_corrupt);
    REQUIRE(p.resid.rows() == L + 1);
    REQUIRE(p.heads.rows() == L * H);
    REQUIRE(p.heads_all.size() == L * H);
    // A share is (m - corrupted) / (clean - corrupted); near 1 it is checked in the metric's own
    // units, (share - 1) * (clean - corrupted) = m - clean, because the denominator can be small
    // (config 7 in a Release build: 1.07019 - 1.07456) and would magnify a float rounding of m.
    const double span = double(p.metric_clean) - double(p.metric_corrupt);
    const double scale = std::max({1.0, std::abs(double(p.metric_clean)), std::abs(double(p.metric_corrupt))});
    // The stream after the last layer at the answer position is all the answer reads.
    CHECK_THAT((p.resid(L, 8) - 1.0) * span, WithinAbs(0.0, 1e-5 * scale));
    // The changed token's embedding is the whole difference between the inputs.
    CHECK_THAT((p.resid(0, 4) - 1.0) * span, WithinAbs(0.0, 1e-4 * scale));
    // Zero up to rounding: a batch of patched runs rounds a little differently from one run.
    for (int l = 0; l <= L; ++l) {
      CHECK_THAT(p.resid(l, 9), WithinAbs(0.0, 1e-4));  // after the answer position: causal
      if (c.residual) CHECK_THAT(p.resid(l, 2), WithinAbs(0.0, 1e-4));  // the runs agree there
    }
    for (int g = 0; g < L * H; ++g) CHECK_THAT(p.heads(g, 9), WithinAbs(0.0, 1e-4));
  }
}

TEST_CASE("inspect: patching every head of a one-layer residual model restores what they add",
          "[inspect]") {
  // One layer, no norm: at p = 9 the two inputs share the token, so the clean run's logits minus
  // the corrupted run's are the sum of the heads' output differences, linear through lm_head:
  // the heads_all shares add up to 1.
  auto m = perturbed(config(1, NormKind::None, FfnKind::None), 11);
  const std::vector<int32_t> ids = induction_ids();
  const Corruption cor = induction_corruption(ids.data(), 10, 11);
  PatchingOptions o;
  o.answer_clean = cor.answer_clean;
  const Patching p = activation_patching(*m, ids.data(), cor.ids.data(), 10, nullptr, o);
  CHECK(p.position == 9);  // no answers: the last position
  double heads = 0.0;
  for (int h = 0; h < 4; ++h) heads += p.heads_all[h];
  // resid(0, p) patches the embedding at p only, which is the same in both runs.
  CHECK_THAT(p.resid(0, 9), WithinAbs(0.0, 1e-4));
  CHECK_THAT(heads, WithinAbs(1.0, 1e-4));
}

TEST_CASE("inspect: the answers and metric defaults", "[inspect]") {
  auto m = perturbed(config(2, NormKind::RMSNorm, FfnKind::GELU), 5);
  const std::vector<int32_t> ids = induction_ids();
  std::vector<int32_t> answers(10, kIgnoreIndex), other = ids;
  answers[6] = 2;
  other[1] = 5;
  const Patching p = activation_patching(*m, ids.data(), other.data(), 10, answers.data());
  CHECK(p.position == 6);
  CHECK(p.answer_clean == 2);
  // Same answers: the metric is logit[answer] - mean logit.
  PatchingOptions o;
  o.answer_corrupt = 2;
  const Patching q = activation_patching(*m, ids.data(), other.data(), 10, answers.data(), o);
  CHECK_FALSE(q.logit_diff);
  CHECK_THAT(q.resid(2, 6), WithinAbs(1.0, 1e-5));
  // The same input twice: clean and corrupted agree, nothing is normalisable.
  const Patching same = activation_patching(*m, ids.data(), ids.data(), 10, answers.data());
  CHECK(std::isnan(same.resid(0, 0)));
}

TEST_CASE("inspect: QK and OV are the brute-force products", "[inspect]") {
  for (const ModelConfig& c : {config(2, NormKind::RMSNorm, FfnKind::None, PositionKind::Rope, 2),
                               config(1, NormKind::None, FfnKind::None)}) {
    auto m = perturbed(c, 9);
    const int V = c.vocab_size, D = c.d_model, Dh = D / c.n_heads;
    const int group = c.n_heads / c.kv_heads_resolved();
    for (int l = 0; l < c.n_layers; ++l)
      for (int h = 0; h < c.n_heads; ++h) {
        const HeadCircuit hc = head_circuit(*m, l, h);
        REQUIRE(hc.qk.rows() == V);
        REQUIRE(hc.ov.cols() == V);
        const Mat& Wqkv = m->layers[size_t(l)].qkv_proj.weight;
        const Mat& Wo = m->layers[size_t(l)].out_proj.weight;
        const Mat& E = m->token_emb.weight;
        const int qr = h * Dh, kr = (c.n_heads + h / group) * Dh,
                  vr = (c.n_heads + c.kv_heads_resolved() + h / group) * Dh;
        for (int i = 0; i < V; ++i)
          for (int j = 0; j < V; ++j) {
            double qk = 0.0;
            for (int e = 0; e < Dh; ++e) {
              double q = 0.0, k = 0.0;
              for (int d = 0; d < D; ++d) {
                q += double(E(i, d)) * Wqkv(qr + e, d);
                k += double(E(j, d)) * Wqkv(kr + e, d);
              }
              qk += q * k;
            }
            // OV: token i's value through out_proj's head-h columns, the final norm's weight and
            // lm_head's row j.
            double ov = 0.0;
            for (int d = 0; d < D; ++d) {
              double out = 0.0;
              for (int e = 0; e < Dh; ++e) {
                double v = 0.0;
                for (int k = 0; k < D; ++k) v += double(E(i, k)) * Wqkv(vr + e, k);
                out += v * Wo(d, h * Dh + e);
              }
              const double w = m->final_norm ? double(m->final_norm->weight[d]) : 1.0;
              ov += out * w * m->lm_head.weight(j, d);
            }
            CHECK(std::abs(hc.qk(i, j) - qk) <= 1e-4 * (1.0 + std::abs(qk)));
            CHECK(std::abs(hc.ov(i, j) - ov) <= 1e-4 * (1.0 + std::abs(ov)));
          }
        CHECK(hc.copying == copying_score(hc.ov));
      }
  }
}

TEST_CASE("inspect: the copying score of matrices with known eigenvalues", "[inspect]") {
  Mat m(2, 2);
  m << 3, 0, 0, -1;
  CHECK_THAT(copying_score(m), WithinAbs(0.75, 1e-6));
  // The same eigenvalues in another basis: S diag(3, -1) S^-1.
  Mat s(2, 2), d(2, 2), s_inv(2, 2);
  s << 1, 2, 3, 5;
  s_inv << -5, 2, 3, -1;  // det -1
  d << 3, 0, 0, -1;
  REQUIRE((s * s_inv).isApprox(Mat::Identity(2, 2)));
  const Mat similar = s * d * s_inv;
  CHECK_THAT(copying_score(similar), WithinAbs(0.75, 1e-5));
  m << 1, -2, 2, 1;  // eigenvalues 1 +- 2i: positive real parts 2 over |.| sums 2 sqrt(5)
  CHECK_THAT(copying_score(m), WithinAbs(1.0 / std::sqrt(5.0), 1e-6));
  m << 0, -1, 1, 0;  // a rotation by 90 degrees: +-i, no positive mass
  CHECK_THAT(copying_score(m), WithinAbs(0.0, 1e-6));
  CHECK_THAT(copying_score(Mat::Identity(5, 5) * 2.0f), WithinAbs(1.0, 1e-6));
  CHECK_THAT(copying_score(-Mat::Identity(5, 5)), WithinAbs(0.0, 1e-6));
  CHECK(copying_score(Mat::Zero(3, 3)) == 0.0f);
  check_error([&] { copying_score(Mat::Zero(2, 3)); }, ErrorKind::Input, "", "square");
}

TEST_CASE("inspect: one call does it all", "[inspect]") {
  auto m = perturbed(config(2, NormKind::LayerNorm, FfnKind::GELU), 21);
  InspectRequest r;
  r.ids = induction_ids();
  const Corruption cor = induction_corruption(r.ids.data(), 10, 11);
  r.corrupted = cor.ids;
  const Inspection in = inspect(*m, r);
  // No answers: the model's own top tokens.
  const Mat p = model_probs(*m, r.ids);
  for (int t = 0; t < 10; ++t) {
    Eigen::Index top = 0;
    p.row(t).maxCoeff(&top);
    CHECK(in.answers[size_t(t)] == int(top));
    CHECK(in.lens.answer_prob(2, t) == in.lens.top_prob(2, t));
  }
  CHECK(in.lens.applies);
  CHECK(in.attribution.applies);
  CHECK(in.patched);
  CHECK(in.patching.position == 9);
  CHECK(in.circuits.size() == 8);
  r.corrupted.clear();
  CHECK_FALSE(inspect(*m, r).patched);
}

TEST_CASE("inspect: bad arguments are one sentence of kind Input", "[inspect]") {
  auto m = perturbed(config(2, NormKind::None, FfnKind::None), 1);
  const std::vector<int32_t> ids = induction_ids();
  InspectRequest r;
  r.ids = ids;
  r.corrupted = std::vector<int32_t>(ids.begin(), ids.end() - 1);
  check_error([&] { inspect(*m, r); }, ErrorKind::Input, "",
              "the corrupted input has 9 tokens but the clean input has 10");
  r.corrupted = ids;
  r.corrupted[3] = 11;
  check_error([&] { inspect(*m, r); }, ErrorKind::Input, "",
              "token 11 at position 3 of the corrupted input is outside the vocabulary [0, 11)");
  r.corrupted.clear();
  r.ids[0] = -1;
  check_error([&] { inspect(*m, r); }, ErrorKind::Input, "", "token -1 at position 0");
  r.ids = ids;
  r.answers = std::vector<int32_t>(10, 12);
  check_error([&] { inspect(*m, r); }, ErrorKind::Input, "", "answer 12 at position 0");
  r.answers = {1, 2};
  check_error([&] { inspect(*m, r); }, ErrorKind::Input, "", "the answers have 2 tokens");
  r.answers.clear();
  r.ids.assign(11, 1);
  check_error([&] { inspect(*m, r); }, ErrorKind::Input, "", "has 11 tokens, but the model reads 1 to 10");
  PatchingOptions o;
  o.position = 10;
  check_error([&] { activation_patching(*m, ids.data(), ids.data(), 10, nullptr, o); },
              ErrorKind::Input, "", "the answer position (10) must be in [0, 9]");
  o.position = -1;
  o.answer_corrupt = 11;
  check_error([&] { activation_patching(*m, ids.data(), ids.data(), 10, nullptr, o); },
              ErrorKind::Input, "", "the answer token (11)");
  check_error([&] { head_circuit(*m, 2, 0); }, ErrorKind::Input, "", "layer (2) must be in [0, 1]");
  check_error([&] { head_circuit(*m, 0, 4); }, ErrorKind::Input, "", "head (4) must be in [0, 3]");
  check_error([&] { head_circuit(*m, -1, 0); }, ErrorKind::Input, "", "layer (-1)");
  const std::vector<int32_t> plain = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  check_error([&] { induction_corruption(plain.data(), 10, 11); }, ErrorKind::Input, "",
              "no repeated segment");
}
