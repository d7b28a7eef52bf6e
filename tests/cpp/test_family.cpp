// The model seam (model/family.h): the lm family through the interface gives the numbers of the
// direct calls, the auxiliary-loss channel is summed and reported apart from the cross-entropy,
// a batch says what it carries, and a task whose batches a family does not take is a config
// error naming both.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/interp/receptive_field.h"
#include "attn/io/weights.h"
#include "attn/model/family.h"
#include "attn/model/model.h"
#include "attn/nn/loss.h"
#include "attn/train/trainer.h"
#include "expect_error.h"

using namespace attn;

namespace {

ModelConfig seam_config() {
  ModelConfig c;
  c.vocab_size = 11;
  c.d_model = 8;
  c.n_heads = 2;
  c.max_context_length = 6;
  c.n_layers = 2;
  c.residual = true;
  c.norm = NormKind::LayerNorm;
  c.ffn = FfnKind::GELU;
  c.out_dropout = 0.25f;
  return c;
}

// A (3,6) batch of ids with a few ignored targets.
Batch seam_batch() {
  Batch b;
  b.inputs.resize(3, 6);
  b.targets.resize(3, 6);
  for (int i = 0; i < 18; ++i) {
    b.inputs.data()[i] = (7 * i + 3) % 11;
    b.targets.data()[i] = i % 5 == 0 ? kIgnoreIndex : (5 * i + 1) % 11;
  }
  return b;
}

// A test-only family: the lm with an L2 term on lm_head.bias in its auxiliary channel,
// aux = 0.5 * weight * |b|^2, whose gradient weight * b it adds in backward.
class PenalisedLm : public Model {
 public:
  PenalisedLm(const ModelConfig& c, uint64_t seed, float weight) : lm(c, seed), weight(weight) {}
  const char* family() const override { return "penalised-lm"; }
  const ModelConfig& model_config() const override { return lm.config; }
  std::unique_ptr<ModelState> new_state() const override { return lm.new_state(); }
  void forward(const Batch& b, bool training, Rng& rng, ModelState& s) override {
    lm.forward(b, training, rng, s);
    add_term(s);
  }
  void forward(const Batch& b, ModelState& s) override {
    lm.forward(b, s);
    add_term(s);
  }
  void backward(const Batch& b, ModelState& s) override {
    lm.backward(b, s);
    lm.lm_head.dbias += weight * lm.lm_head.bias;
  }
  std::vector<ParamRef> parameters() override { return lm.parameters(); }
  int64_t param_count() const override { return lm.param_count(); }
  int64_t active_param_count() const override { return lm.active_param_count(); }
  int n_heads_total() const override { return lm.n_heads_total(); }
  void set_ablation(const Ablation& a) override { lm.set_ablation(a); }
  void hold_frozen() override { lm.hold_frozen(); }
  void restore_frozen() override { lm.restore_frozen(); }
  int n_attention_layers() const override { return lm.n_attention_layers(); }
  const MultiHeadSelfAttention& attention_layer(int l) const override {
    return lm.attention_layer(l);
  }
  const MultiHeadSelfAttention::State& attention_state(const ModelState& s,
                                                       int l) const override {
    return lm.attention_state(s, l);
  }
  float position_loss_backward(const int32_t* ids, int T, int query, int target,
                               ModelState& s) override {
    return lm.position_loss_backward(ids, T, query, target, s);
  }
  const Mat& input_gradient(const ModelState& s) const override { return lm.input_gradient(s); }

  TinyAttentionLM lm;
  float weight;

 private:
  void add_term(ModelState& s) const {
    s.aux.push_back({"bias_l2", 0.5f * weight * lm.lm_head.bias.squaredNorm()});
  }
};

}  // namespace

TEST_CASE("family lm: through the seam, the same logits, loss and gradients as the direct calls") {
  const ModelConfig c = seam_config();
  const Batch b = seam_batch();
  TinyAttentionLM direct(c, 7);
  const std::unique_ptr<Model> seam = make_model("lm", c, 7);
  CHECK(std::string(seam->family()) == "lm");
  CHECK(seam->param_count() == direct.param_count());

  Rng r1(3), r2(3);
  TinyAttentionLM::State ds;
  direct.forward(b.inputs.data(), 3, 6, /*training=*/true, r1, ds);
  ds.dlogits.resize(ds.logits.rows(), ds.logits.cols());
  const float loss = cross_entropy(ds.logits, b.targets.data(), ds.dlogits);
  direct.backward(b.inputs.data(), ds);

  const std::unique_ptr<ModelState> ss = seam->new_state();
  seam->forward(b, /*training=*/true, r2, *ss);
  const StepLoss parts = model_loss(b, *ss);
  seam->backward(b, *ss);

  CHECK(parts.cross_entropy == loss);
  CHECK(parts.aux == 0.0f);
  CHECK(parts.total() == loss);
  CHECK(ss->aux.empty());
  CHECK(ss->logits == ds.logits);
  const std::vector<ParamRef> want = direct.parameters(), got = seam->parameters();
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(want[i].name);
    CHECK(got[i].name == want[i].name);
    CHECK(std::equal(want[i].grad, want[i].grad + want[i].numel(), got[i].grad));
  }
  // Eval mode through the seam: the direct eval forward's logits.
  seam->forward(b, *ss);
  direct.forward(b.inputs.data(), 3, 6, ds);
  CHECK(ss->logits == ds.logits);
}

TEST_CASE("family lm: the Trainer's step reports the cross-entropy and the aux sum apart") {
  TrainerConfig tc;
  Trainer t(tc);
  CHECK(std::isnan(t.last_loss_parts().cross_entropy));
  const float peek = t.peek_loss();
  const float loss = t.step(1);
  CHECK(loss == peek);
  CHECK(t.last_loss_parts().cross_entropy == loss);
  CHECK(t.last_loss_parts().aux == 0.0f);
  CHECK(std::string(t.family_model().family()) == "lm");
  CHECK(&t.family_model() == static_cast<Model*>(&t.model()));
}

TEST_CASE("model seam: auxiliary terms are summed, reported apart and their gradients added") {
  const ModelConfig c = seam_config();
  const Batch b = seam_batch();
  PenalisedLm pen(c, 7, 0.5f);
  TinyAttentionLM plain(c, 7);
  pen.lm.lm_head.bias.setConstant(0.25f);  // |b|^2 = 11 / 16
  plain.lm_head.bias.setConstant(0.25f);
  const std::unique_ptr<ModelState> ps = pen.new_state(), qs = plain.new_state();
  pen.forward(b, *ps);
  plain.forward(b, *qs);
  // A second term from another module: the channel sums them.
  ps->aux.push_back({"other", 0.125f});
  const StepLoss p = model_loss(b, *ps), q = model_loss(b, *qs);
  CHECK(p.cross_entropy == q.cross_entropy);  // the aux channel leaves the cross-entropy alone
  // 0.5 * 0.5 * 11/16 = 11/64, plus 1/8.
  CHECK_THAT(p.aux, Catch::Matchers::WithinAbs(11.0 / 64 + 0.125, 1e-7));
  CHECK(p.total() == p.cross_entropy + p.aux);
  CHECK(q.aux == 0.0f);
  CHECK(model_loss_value(b, *ps).aux == p.aux);
  pen.backward(b, *ps);
  plain.backward(b, *qs);
  // d(aux)/d(bias) = 0.5 * bias = 0.125 on every entry, on top of the cross-entropy's.
  const RowVec diff = pen.lm.lm_head.dbias - plain.lm_head.dbias;
  CHECK_THAT(diff.minCoeff(), Catch::Matchers::WithinAbs(0.125, 1e-6));
  CHECK_THAT(diff.maxCoeff(), Catch::Matchers::WithinAbs(0.125, 1e-6));
  // A fresh forward clears the terms of the last one.
  pen.forward(b, *ps);
  CHECK(ps->aux.size() == 1);
}

TEST_CASE("batch kinds: a batch says what it carries, and its shapes are checked by kind") {
  Batch ids = seam_batch();
  CHECK_NOTHROW(check_batch(ids));
  CHECK(ids.rows() == 3);
  CHECK(ids.positions() == 6);

  Batch floats;  // two images of 4 patches, 5 floats each
  floats.kind = BatchKind::Floats;
  floats.floats.setZero(8, 5);
  floats.targets.setConstant(2, 4, kIgnoreIndex);
  CHECK_NOTHROW(check_batch(floats));
  floats.floats.setZero(7, 5);
  check_error([&] { check_batch(floats); }, ErrorKind::Input, "", "expected (8,F)");
  floats.floats.setZero(8, 5);
  floats.inputs.setZero(2, 4);
  check_error([&] { check_batch(floats); }, ErrorKind::Input, "", "carries no token ids");

  Batch pair;  // source (2,3), target side (2,4)
  pair.kind = BatchKind::Pair;
  pair.source.setZero(2, 3);
  pair.inputs.setZero(2, 4);
  pair.targets.setZero(2, 4);
  CHECK_NOTHROW(check_batch(pair));
  pair.source.setZero(1, 3);
  check_error([&] { check_batch(pair); }, ErrorKind::Input, "", "source is (1,3)");
  pair.source.resize(0, 0);
  check_error([&] { check_batch(pair); }, ErrorKind::Input, "", "source is (0,0)");
  ids.source.setZero(3, 2);
  check_error([&] { check_batch(ids); }, ErrorKind::Input, "", "carries no source");

  // The lm reads ids only: a floats batch is refused, not misread.
  TinyAttentionLM lm(seam_config(), 1);
  const std::unique_ptr<ModelState> s = lm.new_state();
  floats.inputs.resize(0, 0);
  check_error([&] { lm.forward(floats, *s); }, ErrorKind::Input, "",
              "family 'lm' takes token ids, not float batches");
  CHECK(std::string(batch_kind_name(BatchKind::Pair)) == "pair");
}

TEST_CASE("batch kinds: a task whose batches the family does not take is a config error naming both") {
  const FamilyInfo& lm = find_family("lm");
  CHECK(lm.takes_kind(BatchKind::Ids));
  CHECK_FALSE(lm.takes_kind(BatchKind::Floats));
  CHECK_NOTHROW(check_family_takes("repeat", task_batch_kind(Task::Repeat), lm));
  check_error([&] { check_family_takes("images", BatchKind::Floats, lm); }, ErrorKind::Config,
              "family",
              "task 'images' produces float batches (images, audio frames); family 'lm' takes "
              "token ids");
  // Test-only families: one that takes images, one that takes ids or pairs.
  const FamilyInfo vit{"vit-test", {BatchKind::Floats}, nullptr};
  const FamilyInfo s2s{"s2s-test", {BatchKind::Ids, BatchKind::Pair}, nullptr};
  CHECK_NOTHROW(check_family_takes("images", BatchKind::Floats, vit));
  check_error([&] { check_family_takes("repeat", BatchKind::Ids, vit); }, ErrorKind::Config,
              "family", "task 'repeat' produces token-id batches; family 'vit-test' takes float inputs");
  CHECK_NOTHROW(check_family_takes("translate", BatchKind::Pair, s2s));
  check_error([&] { check_family_takes("images", BatchKind::Floats, s2s); }, ErrorKind::Config,
              "family", "family 's2s-test' takes token ids or source/target pairs");
  // Every task of today produces ids, which the lm takes: every config's Trainer builds.
  for (Task task : all_tasks()) CHECK(task_batch_kind(task) == BatchKind::Ids);
}

TEST_CASE("family registry: one row per name, unknown names a config error on key family") {
  REQUIRE(families().size() == size_t(kFamilies.count));
  for (int i = 0; i < kFamilies.count; ++i)
    CHECK(std::string(families()[size_t(i)].name) == kFamilyNames[i]);
  check_error([&] { find_family("rnn"); }, ErrorKind::Config, "family", "'rnn'");
  // The config key refuses a family it does not know as it is set, and keeps its value.
  TrainerConfig tc;
  CHECK_FALSE(set_value_text(tc, *find_config_key("family"), "vit"));
  CHECK(std::string(family_name(tc.model.family)) == "lm");
  // lm_of: the lm behind the seam, or an error naming who needed it.
  PenalisedLm pen(seam_config(), 1, 1.0f);
  check_error([&] { lm_of(pen, "head_scores"); }, ErrorKind::Config, "family",
              "head_scores needs a model of family 'lm', not 'penalised-lm'");
}

TEST_CASE("family in weights files: kept only off its default, checked on load") {
  TrainerConfig tc;
  Trainer t(tc);
  const std::vector<uint8_t> bytes = save_model(t.family_model());
  const SafetensorsFile file = parse_safetensors(bytes.data(), bytes.size());
  CHECK(file.metadata.count("family") == 0);  // the default: today's files keep their bytes
  // A file of another family does not load into an lm: its metadata names the family.
  std::map<std::string, std::string> meta = file.metadata;
  meta["family"] = "vit";
  std::vector<TensorOut> tensors;
  for (const ParamRef& p : t.family_model().parameters())
    tensors.push_back({p.name, "F32", p.shape, p.value});
  const std::vector<uint8_t> other = write_safetensors(tensors, meta);
  check_error([&] { load_weights(t.family_model(), other.data(), other.size()); },
              ErrorKind::Format, "", "family");
  // family lm written out is the same as absent.
  meta["family"] = "lm";
  const std::vector<uint8_t> explicit_lm = write_safetensors(tensors, meta);
  CHECK_NOTHROW(load_weights(t.family_model(), explicit_lm.data(), explicit_lm.size()));
}

TEST_CASE("model seam: the read-outs read any family through its hooks") {
  // PenalisedLm is not a TinyAttentionLM: every read-out below reaches the lm only through the
  // seam, and gives the numbers it gives on the lm itself (the loss adds the aux term).
  PenalisedLm pen(seam_config(), 5, 2.0f);
  TinyAttentionLM& lm = pen.lm;
  const std::vector<int32_t> ids = {1, 4, 2, 8, 5, 7};
  Mat w1, l1, w2, l2;
  sequence_attention(pen, ids.data(), 6, w1, l1);
  sequence_attention(lm, ids.data(), 6, w2, l2);
  CHECK(w1 == w2);
  CHECK(l1 == l2);
  CHECK(w1.rows() == 2 * 2 * 6);  // (L,H,T,T), L = 2, H = 2
  CHECK(predictions(pen, ids.data(), 6, 3, nullptr).top == predictions(lm, ids.data(), 6, 3, nullptr).top);
  CHECK(receptive_field(pen, ids.data(), 6) == receptive_field(lm, ids.data(), 6));
  const RowBackward r1 = row_backward(pen, ids.data(), 6, 3, 4, 2),
                    r2 = row_backward(lm, ids.data(), 6, 3, 4, 2);
  CHECK(r1.loss == r2.loss);
  CHECK(r1.row.d_scores == r2.row.d_scores);
  const TaskData data{Task::Shift, 11, 4, 6, 9, nullptr, 0.0f, {}, nullptr};
  const HeadStats s1 = attention_stats(pen, data), s2 = attention_stats(lm, data);
  CHECK(s1.entropy == s2.entropy);
  const Evaluation e1 = evaluate(pen, data, 2), e2 = evaluate(lm, data, 2);
  CHECK(e1.accuracy == e2.accuracy);
  const float aux = 0.5f * 2.0f * lm.lm_head.bias.squaredNorm();
  CHECK_THAT(e1.loss - e2.loss, Catch::Matchers::WithinAbs(aux, 1e-5));
}
