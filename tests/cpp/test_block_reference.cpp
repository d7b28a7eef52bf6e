// PyTorch parity of the transformer block: tests/reference/make_block_reference.py
// wrote tests/reference/data/block/ (cases.json and, per case, <name>.weights, .input and
// .expected safetensors). Every case's logits, attention, loss and every parameter gradient must
// match within test_reference.cpp's tolerances; the "longer" cases run past max_seq_len and
// check logits, attention and loss.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/base/json.h"
#include "attn/io/weights.h"
#include "attn/nn/loss.h"
#include "attn/teach/selftest.h"
#include "compare.h"
#include "reference_dir.h"

using namespace attn;

namespace {

// test_reference.cpp's tolerances: |ours - torch| <= abs + rel * |torch|.

const json::Value& member(const json::Value& v, const char* key) {
  const json::Value* m = v.find(key);
  if (!m) FAIL("cases.json: no member " << key);
  return *m;
}

json::Value read_cases() {
  const std::vector<uint8_t> bytes = read_file(testdata::reference_path("block/cases.json"));
  return json::parse(std::string(bytes.begin(), bytes.end()));
}

// One case through our model; with_grads: the gradients too (the in-range cases).
void check_case(const json::Value& c, bool with_grads) {
  const std::string name = member(c, "name").string;
  const int B = int(member(c, "B").integer), T = int(member(c, "T").integer);
  const json::Value& cfg = member(c, "config");
  const testdata::ReferenceFile weights("block/" + name + ".weights.safetensors");
  const auto model = load_model_for_length(weights.bytes.data(), weights.bytes.size(), T);
  const ModelConfig& mc = model->config;
  // The file's metadata describes the case's config.
  CHECK(mc.vocab_size == member(cfg, "vocab_size").integer);
  CHECK(mc.d_model == member(cfg, "d_model").integer);
  CHECK(mc.n_heads == member(cfg, "n_heads").integer);
  CHECK(mc.kv_heads_resolved() == member(cfg, "kv_heads").integer);
  CHECK(mc.n_layers == member(cfg, "n_layers").integer);
  CHECK(mc.residual == member(cfg, "residual").boolean);
  CHECK(position_kind_name(mc.positions) == member(cfg, "positions").string);
  CHECK(norm_kind_name(mc.norm) == member(cfg, "norm").string);
  CHECK(norm_position_name(mc.norm_position) == member(cfg, "norm_position").string);
  CHECK(ffn_kind_name(mc.ffn) == member(cfg, "ffn").string);
  CHECK(mc.ffn_mult == member(cfg, "ffn_mult").integer);
  CHECK(objective_name(mc.objective) == member(cfg, "objective").string);
  CHECK(attention_kind_name(mc.attention) == member(cfg, "attention").string);
  if (mc.attention != AttentionKind::Full) CHECK(mc.window == member(cfg, "window").integer);
  if (mc.attention == AttentionKind::Strided) CHECK(mc.stride == member(cfg, "stride").integer);
  CHECK(mc.differential == member(cfg, "differential").boolean);
  // Our parameters are the case's list, in its order.
  const std::vector<ParamRef> params = model->parameters();
  const json::Value& listed = member(c, "params");
  REQUIRE(params.size() == listed.array.size());
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(params[i].name == listed.array[i].array.at(0).string);
    std::vector<int64_t> shape;
    for (const json::Value& d : listed.array[i].array.at(1).array) shape.push_back(d.integer);
    CHECK(params[i].shape == shape);
  }

  const testdata::ReferenceFile input("block/" + name + ".input.safetensors");
  const testdata::ReferenceFile expected("block/" + name + ".expected.safetensors");
  const std::vector<int32_t> ids = input.file.ids("ids"), targets = input.file.ids("targets");
  REQUIRE(input.file.get("ids").shape == std::vector<int64_t>{B, T});
  TinyAttentionLM::State s;
  model->forward(ids.data(), B, T, s);
  const std::vector<int64_t> logits_shape = {B, T, mc.vocab_size};
  compare::check_close("logits", s.logits.data(), expected.file.f32("logits", &logits_shape), kReferenceOutAbs,
              kReferenceOutRel);
  Mat attention;
  s.stacked_weights(attention);
  const std::vector<float> torch_attention = expected.file.f32("attention");
  REQUIRE(size_t(attention.size()) == torch_attention.size());
  compare::check_close("attention", attention.data(), torch_attention, kReferenceOutAbs, kReferenceOutRel);
  s.dlogits.resize(s.logits.rows(), s.logits.cols());
  const float loss = cross_entropy(s.logits, targets.data(), s.dlogits);
  compare::check_close("loss", &loss, expected.file.f32("loss"), kReferenceOutAbs, kReferenceOutRel);
  if (!with_grads) return;
  model->backward(ids.data(), s);
  for (const ParamRef& p : params)
    compare::check_close("grad." + p.name, p.grad, expected.file.f32("grad." + p.name, &p.shape),
                compare::kGradAbs, compare::kGradRel);
}

}  // namespace

TEST_CASE("block reference: the cases cover every option", "[block][reference]") {
  const json::Value cases = read_cases();
  const std::vector<json::Value>& list = member(cases, "cases").array;
  REQUIRE(list.size() >= 100);
  std::vector<std::string> seen;
  for (const json::Value& c : list) {
    const json::Value& cfg = member(c, "config");
    seen.push_back("positions=" + member(cfg, "positions").string);
    seen.push_back("norm=" + member(cfg, "norm").string + "/" + member(cfg, "norm_position").string);
    seen.push_back("ffn=" + member(cfg, "ffn").string);
    seen.push_back("layers=" + std::to_string(member(cfg, "n_layers").integer));
    if (member(cfg, "kv_heads").integer == 1) seen.push_back("kv=1");
    if (member(cfg, "kv_heads").integer * 2 == member(cfg, "n_heads").integer)
      seen.push_back("kv=H/2");
    seen.push_back("objective=" + member(cfg, "objective").string);
    seen.push_back("attention=" + member(cfg, "attention").string);
    if (member(cfg, "differential").boolean) seen.push_back("differential");
  }
  for (const char* want :
       {"positions=sinusoidal", "positions=learned", "positions=rope", "positions=alibi",
        "positions=none", "norm=layernorm/pre", "norm=layernorm/post", "norm=rmsnorm/pre",
        "norm=rmsnorm/post", "ffn=none", "ffn=relu", "ffn=gelu", "ffn=swiglu", "layers=1",
        "layers=2", "layers=3", "kv=1", "kv=H/2", "objective=causal", "objective=mlm",
        "attention=full", "attention=window", "attention=strided", "differential"}) {
    CAPTURE(want);
    CHECK(std::find(seen.begin(), seen.end(), want) != seen.end());
  }
}

TEST_CASE("block reference: forward and backward match PyTorch in every case",
          "[block][reference]") {
  const json::Value cases = read_cases();
  for (const json::Value& c : member(cases, "cases").array) {
    SECTION(member(c, "name").string) { check_case(c, true); }
  }
}

TEST_CASE("block reference: past max_seq_len, the forward matches PyTorch", "[block][reference]") {
  const json::Value cases = read_cases();
  const std::vector<json::Value>& longer = member(cases, "longer").array;
  REQUIRE_FALSE(longer.empty());
  for (const json::Value& c : longer) {
    SECTION(member(c, "name").string) { check_case(c, false); }
  }
}
