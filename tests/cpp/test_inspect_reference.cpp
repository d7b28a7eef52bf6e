// PyTorch parity of looking inside a model: tests/reference/make_inspect_reference.py
// computed the logit lens, the direct attribution, activation patching (with forward hooks) and
// the QK/OV circuits of block.py's BlockLM for 1 to 3 layers with the residual stream, RMSNorm and
// LayerNorm pre-norm, a GELU FFN, RoPE, ALiBi, learned positions, GQA and a post-norm model, and
// wrote tests/reference/data/inspect/. Every number must match within test_reference.cpp's output
// tolerances; every top token exactly.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/base/json.h"
#include "attn/interp/inspect.h"
#include "attn/io/weights.h"
#include "attn/teach/selftest.h"
#include "compare.h"
#include "reference_dir.h"

using namespace attn;

namespace {

// The tensor `name` of the expected file (which must have this shape) against ours.
void check_tensor(const testdata::ReferenceFile& expected, const std::string& name,
                  const float* ours, std::vector<int64_t> shape) {
  compare::check_close(name, ours, expected.file.f32(name, &shape), kReferenceOutAbs,
                       kReferenceOutRel);
}

}  // namespace

TEST_CASE("inspect reference: lens, attribution, patching and circuits match PyTorch hooks",
          "[inspect][reference]") {
  const std::vector<uint8_t> listing = read_file(testdata::reference_path("inspect/cases.json"));
  const json::Value cases = json::parse(std::string(listing.begin(), listing.end()));
  const std::vector<json::Value>& list = cases.find("cases")->array;
  REQUIRE(list.size() >= 4);
  for (const json::Value& c : list) {
    const std::string name = c.find("name")->string;
    CAPTURE(name);
    const testdata::ReferenceFile weights("inspect/" + name + ".weights.safetensors");
    const auto model = load_model(weights.bytes.data(), weights.bytes.size());
    const testdata::ReferenceFile input("inspect/" + name + ".input.safetensors"),
        expected("inspect/" + name + ".expected.safetensors");
    const std::vector<int32_t> ids = input.file.ids("ids"), corrupted = input.file.ids("corrupted");
    const std::vector<int32_t> answers = input.file.ids("answers"), patch = input.file.ids("patch");
    const int T = int(ids.size());
    const int64_t L = model->config.n_layers, H = model->config.n_heads,
                  V = model->config.vocab_size;
    // The reference's corruption is the core's default for the induction task.
    const Corruption cor = induction_corruption(ids.data(), T, int(V));
    CHECK(cor.ids == corrupted);
    CHECK(cor.position == patch[0]);
    CHECK(cor.answer_clean == patch[1]);
    CHECK(cor.answer_corrupt == patch[2]);

    InspectRequest r;
    r.ids = ids;
    r.answers = answers;
    r.corrupted = corrupted;
    r.patching = {patch[0], patch[1], patch[2]};
    const Inspection in = inspect(*model, r);

    REQUIRE(in.lens.applies);
    const std::vector<int32_t> top = expected.file.ids("lens.top_token");
    CHECK(std::vector<int32_t>(in.lens.top_token.data(), in.lens.top_token.data() + top.size()) ==
          top);
    check_tensor(expected, "lens.top_prob", in.lens.top_prob.data(), {L + 1, T});
    check_tensor(expected, "lens.answer_prob", in.lens.answer_prob.data(), {L + 1, T});

    const Attribution& at = in.attribution;
    REQUIRE(at.applies == c.find("attribution")->boolean);
    if (at.applies) {
      check_tensor(expected, "attribution.heads", at.heads.data(), {L, H, T});
      check_tensor(expected, "attribution.embed", at.embed.data(), {T});
      check_tensor(expected, "attribution.bias", at.bias.data(), {T});
      check_tensor(expected, "attribution.total", at.total.data(), {T});
      if (at.ffn.rows() > 0) check_tensor(expected, "attribution.ffn", at.ffn.data(), {L, T});
      else CHECK(expected.file.find("attribution.ffn") == nullptr);
    }

    REQUIRE(in.patched);
    CHECK(in.patching.logit_diff);
    const float metric[2] = {in.patching.metric_clean, in.patching.metric_corrupt};
    check_tensor(expected, "patching.metric", metric, {2});
    check_tensor(expected, "patching.resid", in.patching.resid.data(), {L + 1, T});
    check_tensor(expected, "patching.heads", in.patching.heads.data(), {L, H, T});
    check_tensor(expected, "patching.heads_all", in.patching.heads_all.data(), {L, H});

    std::vector<float> qk, ov, copying;
    for (const HeadCircuit& hc : in.circuits) {
      qk.insert(qk.end(), hc.qk.data(), hc.qk.data() + hc.qk.size());
      ov.insert(ov.end(), hc.ov.data(), hc.ov.data() + hc.ov.size());
      copying.push_back(hc.copying);
    }
    check_tensor(expected, "circuits.qk", qk.data(), {L, H, V, V});
    check_tensor(expected, "circuits.ov", ov.data(), {L, H, V, V});
    check_tensor(expected, "circuits.copying", copying.data(), {L, H});
  }
}
