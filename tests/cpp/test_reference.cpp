// PyTorch parity: the committed files in tests/reference/data were written by
// tests/reference/make_reference.py (PyTorch 1.13); here the core must reproduce them.
// Per config: <name>.weights (state dict + metadata), <name>.input (ids, targets),
// <name>.expected (logits, attention, loss, grad.<param>), <name>.adam (3 fixed batches and
// the parameters after 3 torch.optim.Adam steps). Plus single-head attend cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "attn/io/weights.h"
#include "attn/nn/attention.h"
#include "attn/nn/loss.h"
#include "attn/teach/selftest.h"
#include "attn/train/adam.h"
#include "compare.h"
#include "reference_dir.h"

using namespace attn;

namespace {

// The parity tolerances: |ours - torch| <= abs + rel * |torch|. Logits, attention, loss and
// attend: kReferenceOutAbs/Rel (attn/selftest.h, shared with the self-test panel); gradients:
// compare::kGradAbs/Rel; parameters after 3 Adam steps:
constexpr double kAdamAbs = 1e-5, kAdamRel = 1e-5;

struct RefConfig {
  const char* name;
  int V, D, H, C, T, B;
  int L = 1;              // attention layers
  bool residual = false;  // x = x + attn_l(x)
};

// Must match CONFIGS in make_reference.py.
const RefConfig kConfigs[] = {
    {"demo", 64, 32, 4, 12, 12, 3},  {"h1", 16, 8, 1, 6, 6, 2},
    {"short", 20, 12, 3, 10, 5, 2},  {"dhead1_t1", 10, 4, 4, 4, 1, 3},
    {"dhead1", 12, 6, 6, 5, 5, 2},   {"vocab160", 160, 16, 2, 8, 8, 2},
    {"layers2_residual", 24, 16, 2, 10, 10, 2, 2, true},
    {"layers3", 20, 12, 3, 8, 6, 2, 3, false},
};

// The expected attention: (B,H,T,T) for one layer, (L,B,H,T,T) for more (layer-major).
std::vector<int64_t> attention_shape(const RefConfig& rc) {
  std::vector<int64_t> shape = {rc.B, rc.H, rc.T, rc.T};
  if (rc.L > 1) shape.insert(shape.begin(), rc.L);
  return shape;
}

std::unique_ptr<TinyAttentionLM> load_reference_model(const RefConfig& rc) {
  const std::vector<uint8_t> bytes = read_file(testdata::reference_path(str_cat(rc.name, ".weights.safetensors")));
  const ModelConfig c = infer_config(bytes.data(), bytes.size());
  CHECK(c.vocab_size == rc.V);
  CHECK(c.d_model == rc.D);
  CHECK(c.n_heads == rc.H);
  CHECK(c.max_context_length == rc.C);
  CHECK(c.n_layers == rc.L);
  CHECK(c.residual == rc.residual);
  return load_model(bytes.data(), bytes.size());
}

}  // namespace

TEST_CASE("reference: configs cover DemoConfig, H=1, T<C, Dh=1 with T=1, V>=128, and depth") {
  bool demo = false, h1 = false, short_t = false, dh1_t1 = false, big_v = false;
  bool two_residual = false, three_plain = false;
  for (const RefConfig& c : kConfigs) {
    two_residual = two_residual || (c.L == 2 && c.residual);
    three_plain = three_plain || (c.L == 3 && !c.residual);
    if (c.L != 1) continue;  // the curriculum's cases are 1-layer models
    demo = demo || (c.V == 64 && c.D == 32 && c.H == 4 && c.C == 12 && c.T == 12);
    h1 = h1 || c.H == 1;
    short_t = short_t || c.T < c.C;
    dh1_t1 = dh1_t1 || (c.D / c.H == 1 && c.T == 1);
    big_v = big_v || c.V >= 128;
  }
  CHECK(demo);
  CHECK(h1);
  CHECK(short_t);
  CHECK(dh1_t1);
  CHECK(big_v);
  CHECK(two_residual);
  CHECK(three_plain);
}

TEST_CASE("reference: forward and backward match PyTorch") {
  for (const RefConfig& rc : kConfigs) {
    SECTION(rc.name) {
      const auto model = load_reference_model(rc);
      const testdata::ReferenceFile input(str_cat(rc.name, ".input.safetensors"));
      const testdata::ReferenceFile expected(str_cat(rc.name, ".expected.safetensors"));
      const std::vector<int32_t> ids = input.file.ids("ids");
      const std::vector<int32_t> targets = input.file.ids("targets");
      REQUIRE(input.file.get("ids").shape == std::vector<int64_t>{rc.B, rc.T});
      REQUIRE(targets.size() == ids.size());

      TinyAttentionLM::State s;
      model->forward(ids.data(), rc.B, rc.T, s);
      const std::vector<int64_t> logits_shape = {rc.B, rc.T, rc.V};
      const std::vector<int64_t> attn_shape = attention_shape(rc);
      compare::check_close("logits", s.logits.data(), expected.file.f32("logits", &logits_shape), kReferenceOutAbs,
                  kReferenceOutRel);
      Mat weights;
      s.stacked_weights(weights);  // every layer, layer-major
      compare::check_close("attention", weights.data(), expected.file.f32("attention", &attn_shape),
                  kReferenceOutAbs, kReferenceOutRel);

      s.dlogits.resize(s.logits.rows(), s.logits.cols());
      const float loss = cross_entropy(s.logits, targets.data(), s.dlogits);
      compare::check_close("loss", &loss, expected.file.f32("loss"), kReferenceOutAbs, kReferenceOutRel);
      model->backward(ids.data(), s);
      for (const ParamRef& p : model->parameters())
        compare::check_close("grad." + p.name, p.grad, expected.file.f32("grad." + p.name, &p.shape),
                    compare::kGradAbs, compare::kGradRel);
    }
  }
}

TEST_CASE("reference: 3 Adam steps match torch.optim.Adam") {
  for (const RefConfig& rc : kConfigs) {
    SECTION(rc.name) {
      const auto model = load_reference_model(rc);
      const testdata::ReferenceFile adam_file(str_cat(rc.name, ".adam.safetensors"));
      const testdata::ReferenceFile initial(str_cat(rc.name, ".weights.safetensors"));
      const SafetensorsFile& f = adam_file.file;
      AdamConfig ac;
      ac.lr = std::stof(f.metadata.at("lr"));
      ac.beta1 = std::stod(f.metadata.at("beta1"));
      ac.beta2 = std::stod(f.metadata.at("beta2"));
      ac.eps = std::stof(f.metadata.at("eps"));
      const int steps = std::stoi(f.metadata.at("steps"));
      REQUIRE(steps == 3);
      REQUIRE(f.get("ids").shape == std::vector<int64_t>{steps, rc.B, rc.T});
      const std::vector<int32_t> ids = f.ids("ids"), targets = f.ids("targets");
      const std::vector<float> torch_losses = f.f32("loss");

      Adam adam(model->parameters(), ac);
      Rng rng(0);
      TinyAttentionLM::State s;
      const size_t n = static_cast<size_t>(rc.B) * rc.T;
      for (int step = 0; step < steps; ++step) {
        const int32_t* batch_ids = ids.data() + step * n;
        model->forward(batch_ids, rc.B, rc.T, true, rng, s);  // training; no dropout configured
        s.dlogits.resize(s.logits.rows(), s.logits.cols());
        const float loss = cross_entropy(s.logits, targets.data() + step * n, s.dlogits);
        compare::check_close(str_cat("loss of step ", step + 1), &loss, {torch_losses[size_t(step)]},
                    kReferenceOutAbs, kReferenceOutRel);
        model->backward(batch_ids, s);
        adam.step();
      }
      for (const ParamRef& p : model->parameters()) {
        std::vector<float> torch_p = f.f32(p.name, &p.shape);
        const std::string suffix = "qkv_proj.bias";  // attn.* or layers.<l>.*: every layer's
        if (p.name.size() >= suffix.size() &&
            p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
          // The key bias adds q.b_k to a whole row of scores, which softmax ignores: its true
          // gradient is 0, and both sides hold only rounding noise (~1e-9). Adam divides that
          // noise by its own RMS, so the key bias takes +-lr-sized steps in directions neither
          // side controls. Compare the query and value parts; bound the key part by Adam's
          // largest possible move from where it started.
          const std::vector<float> start = initial.file.f32(p.name, &p.shape);
          for (int64_t i = rc.D; i < 2 * rc.D; ++i) {
            CHECK(std::fabs(p.value[i] - start[size_t(i)]) <= steps * ac.lr * 1.01f);
            torch_p[size_t(i)] = p.value[i];
          }
        }
        compare::check_close(p.name + " after 3 Adam steps", p.value, torch_p, kAdamAbs, kAdamRel);
      }
    }
  }
}

TEST_CASE("reference: save_model reproduces every committed weights file byte for byte") {
  // The PyTorch-written files of every folder: the curriculum's, the block's, the inspect and
  // text cases (with their vocabulary), so the metadata the config schema writes is the files'.
  int n = 0;
  namespace fs = std::filesystem;
  const std::string suffix = ".weights.safetensors";
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(testdata::reference_dir())) {
    const std::string path = e.path().string();
    if (path.size() < suffix.size() ||
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    CAPTURE(path);
    const std::vector<uint8_t> bytes = read_file(path);
    const auto model = load_model(bytes.data(), bytes.size());
    const std::optional<std::u32string> vocab = read_vocab(bytes.data(), bytes.size());
    const std::vector<uint8_t> saved = vocab ? save_model(*model, *vocab) : save_model(*model);
    size_t first = 0;  // the first byte that differs, for the report (not the whole file)
    while (first < saved.size() && first < bytes.size() && saved[first] == bytes[first]) ++first;
    CAPTURE(saved.size(), bytes.size(), first);
    const bool same = saved == bytes;
    CHECK(same);
    ++n;
  }
  CHECK(n >= 100);
}

TEST_CASE("reference: single-head attention matches PyTorch, causal and not") {
  const testdata::ReferenceFile input("attend.input.safetensors");
  const SafetensorsFile& f = input.file;
  const std::vector<float> X = f.f32("X"), Wq = f.f32("Wq"), Wk = f.f32("Wk"), Wv = f.f32("Wv");
  const int64_t T = f.get("X").shape[0], D = f.get("X").shape[1];
  const int64_t dk = f.get("Wq").shape[1], dv = f.get("Wv").shape[1];
  const auto view = [](const std::vector<float>& v, int64_t r, int64_t c) {
    return ConstMatMap(v.data(), r, c, Eigen::OuterStride<>(c));
  };
  for (const bool causal : {false, true}) {
    SECTION(causal ? "causal" : "full") {
      const testdata::ReferenceFile expected(causal ? "attend_causal.expected.safetensors"
                                    : "attend.expected.safetensors");
      const std::vector<int64_t> out_shape = {T, dv}, w_shape = {T, T};
      const std::vector<float> out = expected.file.f32("output", &out_shape);
      const std::vector<float> w = expected.file.f32("weights", &w_shape);

      const AttentionStages st =
          self_attention_stages(view(X, T, D), view(Wq, D, dk), view(Wk, D, dk), view(Wv, D, dv),
                                causal);
      compare::check_close("stages output", st.output.data(), out, kReferenceOutAbs, kReferenceOutRel);
      compare::check_close("stages weights", st.weights.data(), w, kReferenceOutAbs, kReferenceOutRel);

      const AttentionResult r = scaled_dot_product_attention(st.Q, st.K, st.V, causal);
      compare::check_close("sdpa output", r.output.data(), out, kReferenceOutAbs, kReferenceOutRel);
      compare::check_close("sdpa weights", r.weights.data(), w, kReferenceOutAbs, kReferenceOutRel);
    }
  }
}
