// The course's capstone (issue 39): the keys it needs (tie_embeddings, bias, pos_init_std, a
// fractional ffn_mult, AdamW's weight decay, adam_beta2, grad_clip), the presets table and the
// capstone preset's parameter count. Finite differences of the tied and bias-free models are rows
// of test_gradcheck.cpp; AdamW and clipping against PyTorch are in test_adam.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>

#include "attn/data/text.h"
#include "attn/io/weights.h"
#include "attn/model/model.h"
#include "attn/nn/loss.h"
#include "attn/train/adam.h"
#include "attn/train/presets.h"
#include "attn/train/trainer.h"
#include "expect_error.h"
#include "reference_dir.h"

using attn::ErrorKind;
using attn::ModelConfig;
using attn::TinyAttentionLM;

namespace {

// V 7, D 8, H 2, C 5, two residual layers.
ModelConfig small(bool tie, bool bias) {
  ModelConfig c{7, 8, 2, 5};
  c.n_layers = 2;
  c.residual = true;
  c.ffn = attn::FfnKind::GELU;
  c.norm = attn::NormKind::LayerNorm;
  c.tie_embeddings = tie;
  c.bias = bias;
  return c;
}

std::set<std::string> names(TinyAttentionLM& m) {
  std::set<std::string> out;
  for (const attn::ParamRef& p : m.parameters()) out.insert(p.name);
  return out;
}

}  // namespace

TEST_CASE("capstone: the capstone preset on the lesson's excerpt has 154,560 parameters",
          "[capstone]") {
  const attn::Preset& p = attn::find_preset("capstone");
  const std::string& text = attn::builtin_text(attn::BuiltinText::Shakespeare);
  CHECK(text.size() == 999);
  const auto corpus =
      std::make_shared<const attn::TextCorpus>(attn::make_corpus(text, p.config().task.seq_len));
  CHECK(corpus->vocab_size() == 46);
  CHECK(corpus->train.size() == 899);  // int(0.9 * 999), the lesson's split
  attn::Trainer t(p.config(), corpus);
  // The preset's builtin_text gives the same corpus without one.
  attn::Trainer builtin(p.config());
  CHECK(builtin.corpus()->vocab == corpus->vocab);
  CHECK(builtin.corpus()->train == corpus->train);
  // tok_emb 46*64 + pos_emb 64*64 + 3 * (qkv 3*64*64 + out 64*64 + ffn 3*64*170 + 2 norms 64)
  // + norm_f 64 = 2944 + 4096 + 3 * 49152 + 64 = 154560: the tied head adds nothing.
  CHECK(t.family_model().param_count() == 154560);
  CHECK(attn::ffn_hidden_width(attn::FfnKind::SwiGLU, 64, p.config().model.ffn_mult) == 170);
  // nn.Embedding's N(0, 1): the step-0 loss is far above ln 46 (the lesson's is about 41).
  CHECK(t.peek_loss() > 10.0f);
}

TEST_CASE("capstone: ffn_mult is a number, the hidden width floor(ffn_mult * D)", "[capstone]") {
  using attn::FfnKind;
  CHECK(attn::ffn_hidden_width(FfnKind::ReLU, 8, 4.0f) == 32);
  CHECK(attn::ffn_hidden_width(FfnKind::SwiGLU, 64, 2.67f) == 170);  // int(64 * 2.67)
  CHECK(attn::ffn_hidden_width(FfnKind::GELU, 10, 1.55f) == 15);     // 15.5 -> 15
  CHECK(attn::ffn_hidden_width(FfnKind::GELU, 10, 1.3f) == 13);      // not 12 (1.3f < 1.3)
  CHECK(attn::ffn_hidden_width(FfnKind::None, 10, 4.0f) == 0);
}

TEST_CASE("capstone: a tied head is one parameter, named lm_head.weight, with no bias",
          "[capstone]") {
  TinyAttentionLM untied(small(false, true), 3), tied(small(true, true), 3);
  CHECK(names(untied).count("token_emb.embedding.weight") == 1);
  CHECK(names(untied).count("lm_head.bias") == 1);
  const std::set<std::string> n = names(tied);
  CHECK(n.count("lm_head.weight") == 1);
  CHECK(n.count("token_emb.embedding.weight") == 0);
  CHECK(n.count("lm_head.bias") == 0);
  CHECK(tied.param_count() == untied.param_count() - 7 * 8 - 7);
  // The logits are the stream times the embedding's transpose.
  const std::vector<int32_t> ids = {1, 4, 6, 0, 2};
  TinyAttentionLM::State s;
  tied.forward(ids.data(), 1, 5, s);
  const attn::Mat expected = s.a * tied.token_emb.weight.transpose();
  CHECK((s.logits - expected).cwiseAbs().maxCoeff() < 1e-5f);
}

TEST_CASE("capstone: the tied matrix's gradient is the sum of its two uses", "[capstone]") {
  // The same weights as two matrices (an untied model whose head is a copy of the embedding,
  // no head bias) give the two shares; the tied model's gradient is their sum.
  ModelConfig uc = small(false, false), tc = small(true, false);
  TinyAttentionLM untied(uc, 5), tied(tc, 5);
  untied.lm_head.weight = untied.token_emb.weight;
  for (const attn::ParamRef& p : tied.parameters()) {
    for (const attn::ParamRef& q : untied.parameters()) {
      const std::string want = p.name == "lm_head.weight" ? "token_emb.embedding.weight" : p.name;
      if (q.name == want) std::copy(q.value, q.value + q.numel(), p.value);
    }
  }
  const std::vector<int32_t> ids = {1, 4, 6, 0, 2, 3, 3, 5, 1, 0};
  const std::vector<int32_t> targets = {4, 6, 0, 2, 3, 3, 5, 1, 0, 6};
  const auto grads = [&](TinyAttentionLM& m, TinyAttentionLM::State& s) {
    m.forward(ids.data(), 2, 5, s);
    s.dlogits.resize(s.logits.rows(), s.logits.cols());
    attn::cross_entropy(s.logits, targets.data(), s.dlogits);
    m.backward(ids.data(), s);
  };
  TinyAttentionLM::State su, st;
  grads(untied, su);
  grads(tied, st);
  CHECK((su.logits - st.logits).cwiseAbs().maxCoeff() < 1e-6f);
  const attn::Mat sum = untied.token_emb.dweight + untied.lm_head.dweight;
  CHECK((tied.token_emb.dweight - sum).cwiseAbs().maxCoeff() < 1e-6f);
}

TEST_CASE("capstone: bias false removes every Linear's bias and its tensor", "[capstone]") {
  TinyAttentionLM m(small(false, false), 1);
  for (const std::string& n : names(m)) {
    CAPTURE(n);
    const bool linear_bias = n.size() > 5 && n.compare(n.size() - 5, 5, ".bias") == 0 &&
                             n.find("norm") == std::string::npos;
    CHECK_FALSE(linear_bias);
  }
  // LayerNorm keeps its shift: only Linears lose theirs.
  CHECK(names(m).count("layers.0.attn_norm.bias") == 1);
  const ModelConfig with = small(false, true);
  TinyAttentionLM b(with, 1);
  // qkv 3D + out D + ffn up 4D + down D per layer, and the head's V.
  CHECK(b.param_count() - m.param_count() == 2 * (3 * 8 + 8 + 32 + 8) + 7);
}

TEST_CASE("capstone: pos_init_std sets the learned table's spread", "[capstone]") {
  ModelConfig c{7, 64, 2, 64};
  c.positions = attn::PositionKind::Learned;
  c.pos_init_std = 1.0f;
  TinyAttentionLM wide(c, 9);
  c.pos_init_std = 0.02f;
  TinyAttentionLM narrow(c, 9);
  const auto rms = [](const attn::Mat& w) { return std::sqrt(w.squaredNorm() / double(w.size())); };
  CHECK(std::abs(rms(wide.learned_pos->weight) - 1.0) < 0.05);
  CHECK(std::abs(rms(narrow.learned_pos->weight) - 0.02) < 0.001);
  // Today's default is today's init: the table of the default config is the narrow one.
  CHECK(ModelConfig().pos_init_std == 0.02f);
}

TEST_CASE("capstone: the presets table names each preset once; an unknown name is refused",
          "[capstone]") {
  std::set<std::string> seen;
  for (const attn::Preset& p : attn::presets()) {
    CAPTURE(p.name);
    CHECK(seen.insert(p.name).second);
    CHECK(std::string(p.title).size() > 0);
    CHECK_NOTHROW(p.config().validate());
  }
  for (const char* n : {"shift", "induction", "find-circuit", "text", "fill", "window-depth",
                        "capstone"})
    CHECK(seen.count(n) == 1);
  check_error([] { attn::find_preset("gpt-5"); }, ErrorKind::Input, "", "unknown preset \"gpt-5\"");
  const std::string json = attn::presets_json();
  CHECK(json.rfind("[{\"name\":\"shift\",\"title\":\"One position back\",\"config\":{\"task\":\"shift\"}}", 0) == 0);
}

namespace {

// The core's logits for a file's model on the reference's ids (2,T).
attn::Mat logits_of(const std::vector<uint8_t>& bytes, const attn::SafetensorsFile& expected) {
  const std::unique_ptr<TinyAttentionLM> m = attn::load_model(bytes.data(), bytes.size());
  const std::vector<int32_t> ids = expected.ids("ids");
  const int T = int(expected.get("ids").shape[1]);
  TinyAttentionLM::State s;
  m->forward(ids.data(), 2, T, s);
  return s.logits;
}

void check_logits(const attn::Mat& got, const attn::SafetensorsFile& expected) {
  const std::vector<float> want = expected.f32("logits");
  REQUIRE(size_t(got.size()) == want.size());
  float worst = 0.0f;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(got.data()[i] - want[i]));
  CAPTURE(worst);
  CHECK(worst < 2e-5f);
}

std::set<std::string> file_names(const std::vector<uint8_t>& bytes) {
  std::set<std::string> out;
  for (const attn::TensorView& t : attn::parse_safetensors(bytes.data(), bytes.size()).tensors)
    out.insert(t.name);
  return out;
}

}  // namespace

TEST_CASE("capstone: PyTorch's files of the lesson's class load, either tied name, masks ignored",
          "[capstone]") {
  // tests/reference/make_capstone_reference.py: V 46, D 16, H 2, 2 blocks, C 8, F int(16 * 2.67).
  const testdata::ReferenceFile expected("capstone/torch.expected.safetensors");
  for (const char* file : {"capstone/torch.state_dict.safetensors",
                           "capstone/torch.save_model.safetensors"}) {
    CAPTURE(file);
    const std::vector<uint8_t> bytes = attn::read_file(testdata::reference_path(file));
    const ModelConfig c = attn::infer_config(bytes.data(), bytes.size());
    CHECK(c.vocab_size == 46);
    CHECK(c.d_model == 16);
    CHECK(c.n_heads == 2);
    CHECK(c.n_layers == 2);
    CHECK(c.max_context_length == 8);
    CHECK(attn::ffn_hidden_width(c.ffn, c.d_model, c.ffn_mult) == 42);
    CHECK(attn::uses_course_names(c));
    check_logits(logits_of(bytes, expected.file), expected.file);
    // Saved again, the file has the lesson's names, both tied ones, no buffers.
    const auto m = attn::load_model(bytes.data(), bytes.size());
    const std::set<std::string> names = file_names(attn::save_model(*m));
    CHECK(names.count("tok_emb.weight") == 1);
    CHECK(names.count("lm_head.weight") == 1);
    CHECK(names.count("blocks.1.ffn.w3.weight") == 1);
    CHECK(names.count("norm_f.weight") == 1);
    CHECK(names.count("blocks.0.attn.mask") == 0);
    CHECK(names.size() == 2 + 1 + 2 * 7 + 1);
  }
}

TEST_CASE("capstone: the capstone preset's file has the lesson's names and loads into its class",
          "[capstone]") {
  // ours.safetensors: attn train --preset capstone --d-model 16 --heads 2 --layers 2 --seq-len 8
  // --steps 0 --save; the reference script loaded it with load_state_dict(strict=False), missing
  // only the mask buffers, and wrote the class's logits.
  const std::vector<uint8_t> bytes =
      attn::read_file(testdata::reference_path("capstone/ours.safetensors"));
  attn::TrainerConfig c = attn::find_preset("capstone").config();
  c.model.d_model = 16, c.model.n_heads = 2, c.model.n_layers = 2, c.task.seq_len = 8;
  const auto corpus = std::make_shared<const attn::TextCorpus>(
      attn::make_corpus(attn::builtin_text(attn::BuiltinText::Shakespeare), 8));
  attn::Trainer t(c, corpus);
  CHECK(attn::save_model(t.family_model(), corpus->vocab) == bytes);  // what the core writes
  const testdata::ReferenceFile expected("capstone/ours.expected.safetensors");
  check_logits(logits_of(bytes, expected.file), expected.file);
  // The page's import: a Trainer of the preset takes the PyTorch file too.
  const std::vector<uint8_t> torch_file =
      attn::read_file(testdata::reference_path("capstone/torch.state_dict.safetensors"));
  CHECK_NOTHROW(attn::load_weights(t.family_model(), torch_file.data(), torch_file.size()));
}

TEST_CASE("capstone: a course file whose shapes disagree or whose tied names differ is refused",
          "[capstone]") {
  const std::vector<uint8_t> bytes =
      attn::read_file(testdata::reference_path("capstone/torch.state_dict.safetensors"));
  const attn::SafetensorsFile f = attn::parse_safetensors(bytes.data(), bytes.size());
  // Rewrites the file with one tensor changed.
  const auto rewritten = [&](const std::string& name, std::vector<int64_t> shape,
                             const std::vector<float>& data) {
    std::vector<std::vector<float>> keep;
    std::vector<attn::TensorOut> out;
    for (const attn::TensorView& t : f.tensors) {
      if (t.name == name) {
        out.push_back({t.name, "F32", shape, data.data()});
        continue;
      }
      keep.push_back(f.f32(t.name));
      out.push_back({t.name, "F32", t.shape, nullptr});
    }
    size_t k = 0;
    for (attn::TensorOut& o : out)
      if (!o.data) o.data = keep[k++].data();
    return attn::write_safetensors(out, f.metadata);
  };
  std::vector<float> head = f.f32("lm_head.weight");
  head[5] += 1.0f;
  const std::vector<uint8_t> differ = rewritten("lm_head.weight", {46, 16}, head);
  check_error([&] { attn::load_model(differ.data(), differ.size()); }, ErrorKind::Format, "",
              "tok_emb.weight and lm_head.weight differ");
  const std::vector<float> qkv(16 * 16, 0.0f);
  const std::vector<uint8_t> shape = rewritten("blocks.1.attn.qkv.weight", {16, 16}, qkv);
  check_error([&] { attn::load_model(shape.data(), shape.size()); }, ErrorKind::Format, "",
              "tensor \"blocks.1.attn.qkv.weight\" has shape (16,16) but tok_emb.weight (46,16) "
              "implies (48,16)");
}

TEST_CASE("capstone: a tied or bias-free model of our names saves and loads back", "[capstone]") {
  for (const bool tie : {false, true})
    for (const bool bias : {false, true}) {
      CAPTURE(tie, bias);
      TinyAttentionLM m(small(tie, bias), 4);
      const std::vector<uint8_t> bytes = attn::save_model(m);
      const attn::SafetensorsFile f = attn::parse_safetensors(bytes.data(), bytes.size());
      CHECK(f.metadata.count("tie_embeddings") == (tie ? 1u : 0u));
      CHECK(f.metadata.count("bias") == (bias ? 0u : 1u));
      CHECK((f.find("lm_head.weight") != nullptr));
      CHECK((f.find("token_emb.embedding.weight") != nullptr) == !tie);
      const auto back = attn::load_model(bytes.data(), bytes.size());
      CHECK(back->config.tie_embeddings == tie);
      CHECK(back->config.bias == bias);
      CHECK(attn::save_model(*back) == bytes);
    }
}

TEST_CASE("capstone: three of the lesson's training steps match PyTorch's (tied, clipped, AdamW)",
          "[capstone]") {
  // ours.adamw.safetensors: from ours.safetensors, cross-entropy, clip_grad_norm_(1.0) and
  // AdamW(lr 1e-2, betas 0.9 / 0.95, weight decay 0.1) on three fixed batches, in PyTorch.
  const std::vector<uint8_t> bytes =
      attn::read_file(testdata::reference_path("capstone/ours.safetensors"));
  const std::unique_ptr<TinyAttentionLM> m = attn::load_model(bytes.data(), bytes.size());
  const testdata::ReferenceFile ref("capstone/ours.adamw.safetensors");
  attn::AdamConfig cfg;
  cfg.lr = 1e-2f;
  cfg.beta2 = 0.95;
  cfg.weight_decay = 0.1;
  attn::Adam adam(m->parameters(), cfg);
  TinyAttentionLM::State s;
  for (int step = 1; step <= 3; ++step) {
    CAPTURE(step);
    const std::vector<int32_t> ids = ref.file.ids(attn::str_cat("ids", step));
    const std::vector<int32_t> targets = ref.file.ids(attn::str_cat("targets", step));
    m->forward(ids.data(), 2, 8, s);
    s.dlogits.resize(s.logits.rows(), s.logits.cols());
    const float loss = attn::cross_entropy(s.logits, targets.data(), s.dlogits);
    CHECK(std::abs(loss - ref.file.f32(attn::str_cat("loss", step))[0]) < 1e-5f);
    m->backward(ids.data(), s);
    attn::clip_grad_norm(adam.params, 1.0);
    adam.step();
  }
  const std::vector<uint8_t> saved = attn::save_model(*m);
  const attn::SafetensorsFile after = attn::parse_safetensors(saved.data(), saved.size());
  for (const attn::TensorView& t : after.tensors) {
    CAPTURE(t.name);
    const std::vector<float> got = after.f32(t.name), want = ref.file.f32(t.name);
    REQUIRE(got.size() == want.size());
    float worst = 0.0f;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    CAPTURE(worst);
    CHECK(worst < 1e-5f);
  }
}
