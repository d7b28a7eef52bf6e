// The self-test panel's checks (attn/selftest.h): they pass on healthy models, leave the model
// untouched, report a broken or missing reference as a failing result, and can actually fail.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/io/safetensors.h"
#include "attn/io/weights.h"
#include "attn/nn/attention.h"
#include "attn/nn/multihead.h"
#include "attn/teach/selftest.h"
#include "attn/train/trainer.h"
#include "gradcheck.h"
#include "reference_dir.h"

using namespace attn;

namespace {

const char* const kIds[] = {"rows_and_mask", "future_invariance", "split_merge",
                            "fused_qkv",     "gradcheck",         "pytorch_reference"};

ReferenceCase load_case(const std::string& name) {
  return {read_file(testdata::reference_path(name + ".weights.safetensors")),
          read_file(testdata::reference_path(name + ".input.safetensors")),
          read_file(testdata::reference_path(name + ".expected.safetensors"))};
}

std::string describe(const SelfTestResult& r) {
  return str_cat(r.id, ": ", r.pass ? "pass" : "FAIL", ", max_error ", r.max_error,
                 " (tolerance ", r.tolerance, "), ", r.name, " -- ", r.detail);
}

const SelfTestResult& find(const std::vector<SelfTestResult>& rs, const std::string& id) {
  for (const SelfTestResult& r : rs)
    if (r.id == id) return r;
  throw std::logic_error("no result " + id);
}

// Every check in order, each with a title and a detail, passing iff its max_error is within
// tolerance (the extra exactness conditions only ever turn a pass into a fail).
void check_shape_of_results(const std::vector<SelfTestResult>& rs) {
  REQUIRE(rs.size() == 6);
  for (size_t i = 0; i < rs.size(); ++i) {
    INFO(describe(rs[i]));
    CHECK(rs[i].id == kIds[i]);
    CHECK_FALSE(rs[i].name.empty());
    CHECK_FALSE(rs[i].detail.empty());
    if (rs[i].pass) CHECK(rs[i].max_error <= rs[i].tolerance);
  }
}

void require_all_pass(const std::vector<SelfTestResult>& rs) {
  check_shape_of_results(rs);
  for (const SelfTestResult& r : rs) {
    INFO(describe(r));
    CHECK(r.pass);
  }
}

// Checks that everything but `failing` passes, and `failing` fails.
void require_only_failure(const std::vector<SelfTestResult>& rs, const std::string& failing) {
  check_shape_of_results(rs);
  for (const SelfTestResult& r : rs) {
    INFO(describe(r));
    CHECK(r.pass == (r.id != failing));
  }
}

// Every parameter value and gradient of the model, as bytes.
std::vector<uint8_t> snapshot(TinyAttentionLM& m) {
  std::vector<uint8_t> bytes;
  for (const ParamRef& p : m.parameters()) {
    const auto* v = reinterpret_cast<const uint8_t*>(p.value);
    const auto* g = reinterpret_cast<const uint8_t*>(p.grad);
    const size_t n = size_t(p.numel()) * sizeof(float);
    bytes.insert(bytes.end(), v, v + n);
    bytes.insert(bytes.end(), g, g + n);
  }
  return bytes;
}

// The model's forward written out by hand from its layers, with single-head attention per head,
// causal or not: causal reproduces the model; not causal is the model with its mask removed.
SelfTestForward hand_forward(TinyAttentionLM& m, bool causal) {
  return [&m, causal](const int32_t* ids, int B, int T, Mat& logits, Mat& weights) {
    const ModelConfig& c = m.config;
    const int D = c.d_model, H = c.n_heads, Dh = D / H;
    const Eigen::Index N = Eigen::Index(B) * T;
    Mat x(N, D);
    m.token_emb.forward(ids, N, x);
    for (int b = 0; b < B; ++b) x.middleRows(Eigen::Index(b) * T, T) += m.pos_emb.forward(T);
    Mat qkv(N, 3 * D);
    m.attn.qkv_proj.forward(x, qkv);
    Mat merged(N, D);
    weights.resize(N * H, T);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        const Eigen::Index r0 = Eigen::Index(b) * T;
        const AttentionResult r = scaled_dot_product_attention(
            qkv.block(r0, h * Dh, T, Dh), qkv.block(r0, D + h * Dh, T, Dh),
            qkv.block(r0, 2 * D + h * Dh, T, Dh), causal);
        merged.block(r0, h * Dh, T, Dh) = r.output;
        weights.block((Eigen::Index(b) * H + h) * T, 0, T, T) = r.weights;
      }
    Mat a(N, D);
    m.attn.out_proj.forward(merged, a);
    logits.resize(N, c.vocab_size);
    m.lm_head.forward(a, logits);
  };
}

// split_heads with the wrong layout: head h takes the interleaved columns j*H + h. Its merge
// is its exact inverse, so only the head-block comparison can notice.
Mat interleaved_split(ConstMatRef x, int B, int T, int H) {
  const Eigen::Index Dh = x.cols() / H;
  Mat out(Eigen::Index(B) * H * T, Dh);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (Eigen::Index j = 0; j < Dh; ++j)
        out.block((Eigen::Index(b) * H + h) * T, j, T, 1) =
            x.block(Eigen::Index(b) * T, j * H + h, T, 1);
  return out;
}
Mat interleaved_merge(ConstMatRef x, int B, int T, int H) {
  const Eigen::Index Dh = x.cols();
  Mat out(Eigen::Index(B) * T, H * Dh);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (Eigen::Index j = 0; j < Dh; ++j)
        out.block(Eigen::Index(b) * T, j * H + h, T, 1) =
            x.block((Eigen::Index(b) * H + h) * T, j, T, 1);
  return out;
}

// The message parse_safetensors gives for these bytes.
std::string loader_message(const std::vector<uint8_t>& bytes) {
  try {
    parse_safetensors(bytes.data(), bytes.size());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  FAIL("the bytes parsed");
  return "";
}

}  // namespace

TEST_CASE("selftest: all six checks pass on a fresh demo model with the real reference", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  const ReferenceCase ref = load_case("short");
  const std::vector<SelfTestResult> rs = run_self_tests(model, &ref);
  require_all_pass(rs);
  // The exact checks are exact on a healthy model.
  CHECK(find(rs, "future_invariance").max_error == 0.0);
  CHECK(find(rs, "split_merge").max_error == 0.0);
  CHECK(find(rs, "rows_and_mask").detail.find("(0 of 528 nonzero)") != std::string::npos);
}

TEST_CASE("selftest: the shipped case (cpp/attn/teach/selftest_case) is the reference case short, "
          "byte for byte", "[selftest]") {
  // `attn selftest` and the page load it; make_reference.py writes both copies.
  const std::string shipped = testdata::reference_dir() + "/../../../cpp/attn/teach/selftest_case/";
  for (const char* kind : {"weights", "input", "expected"}) {
    CAPTURE(kind);
    CHECK(read_file(shipped + "short." + kind + ".safetensors") ==
          read_file(testdata::reference_path(std::string("short.") + kind + ".safetensors")));
  }
}

TEST_CASE("selftest: all checks pass on a model trained for 300 steps", "[selftest]") {
  Trainer trainer{TrainerConfig{}};
  const float first = trainer.step(1);
  const float last = trainer.step(299);
  CHECK(last < 0.5f * first);  // it did learn something, so the weights are far from init
  const ReferenceCase ref = load_case("short");
  require_all_pass(run_self_tests(trainer.model(), &ref));
}

TEST_CASE("selftest: run_self_tests leaves weights and gradients bitwise unchanged", "[selftest]") {
  Trainer trainer{TrainerConfig{}};
  trainer.step(20);  // non-zero gradients too
  TinyAttentionLM& model = trainer.model();
  const std::vector<uint8_t> before = snapshot(model);
  const ModelConfig config = model.config;
  const ReferenceCase ref = load_case("short");
  const std::vector<SelfTestResult> first = run_self_tests(model, &ref);
  CHECK(snapshot(model) == before);
  CHECK(model.config.vocab_size == config.vocab_size);
  CHECK(model.config.max_context_length == config.max_context_length);
  // And the run is deterministic.
  const std::vector<SelfTestResult> second = run_self_tests(model, &ref);
  REQUIRE(first.size() == second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].detail == second[i].detail);
    CHECK(first[i].max_error == second[i].max_error);
  }
  // Training continues from the same place as a twin that never ran the self-test.
  Trainer twin{TrainerConfig{}};
  twin.step(20);
  CHECK(trainer.step(5) == twin.step(5));
}

TEST_CASE("selftest: corrupted expected logits fail pytorch_reference and nothing else", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  ReferenceCase ref = load_case("short");
  const SafetensorsFile f = parse_safetensors(ref.expected.data(), ref.expected.size());
  const TensorView& logits = f.get("logits");
  const size_t offset = size_t(logits.data - ref.expected.data());
  for (size_t i : {size_t(0), size_t(7), size_t(31)})
    ref.expected[offset + 4 * i + 2] ^= 0x40;  // the top mantissa bit of logit i: 25-50% off
  const std::vector<SelfTestResult> rs = run_self_tests(model, &ref);
  require_only_failure(rs, "pytorch_reference");
  const SelfTestResult& r = find(rs, "pytorch_reference");
  CHECK(r.max_error > r.tolerance);
  CHECK(r.detail.find("3 of ") != std::string::npos);
  CHECK(r.detail.find("logits:") != std::string::npos);
}

TEST_CASE("selftest: a truncated reference file fails with the loader's message", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  for (const char* which : {"weights", "input", "expected"}) {
    SECTION(which) {
      ReferenceCase ref = load_case("short");
      std::vector<uint8_t>& bytes = std::string(which) == "weights" ? ref.weights
                                    : std::string(which) == "input" ? ref.input
                                                                    : ref.expected;
      bytes.resize(bytes.size() / 2);
      const std::string message = loader_message(bytes);
      std::vector<SelfTestResult> rs;
      REQUIRE_NOTHROW(rs = run_self_tests(model, &ref));
      require_only_failure(rs, "pytorch_reference");
      const SelfTestResult& r = find(rs, "pytorch_reference");
      INFO(r.detail);
      CHECK(r.detail.find(message) != std::string::npos);
      CHECK(r.detail.find(str_cat("reference ", which, " file")) != std::string::npos);
    }
  }
  SECTION("empty weights") {
    ReferenceCase ref = load_case("short");
    ref.weights.clear();
    const std::vector<SelfTestResult> rs = run_self_tests(model, &ref);
    CHECK_FALSE(find(rs, "pytorch_reference").pass);
    CHECK(find(rs, "pytorch_reference").detail.find("empty") != std::string::npos);
  }
  SECTION("weights of another config than the input") {
    ReferenceCase ref = load_case("short");
    ref.weights = load_case("h1").weights;  // V=16 but the input's ids go up to 19, T to 5 <= 6
    const std::vector<SelfTestResult> rs = run_self_tests(model, &ref);
    CHECK_FALSE(find(rs, "pytorch_reference").pass);
    INFO(find(rs, "pytorch_reference").detail);
    CHECK(find(rs, "pytorch_reference").detail.rfind("error: ", 0) == 0);
  }
}

TEST_CASE("selftest: without a reference case pytorch_reference fails and says why", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  const std::vector<SelfTestResult> rs = run_self_tests(model, nullptr);
  require_only_failure(rs, "pytorch_reference");
  CHECK(find(rs, "pytorch_reference").detail.find("no reference case was given") !=
        std::string::npos);
}

TEST_CASE("selftest: pytorch_reference passes on every reference config", "[selftest]") {
  for (const char* name : {"demo", "h1", "short", "dhead1_t1", "dhead1", "vocab160",
                           "layers2_residual", "layers3"}) {
    SECTION(name) {
      const ReferenceCase ref = load_case(name);
      const SelfTestResult r = check_pytorch_reference(&ref);
      INFO(describe(r));
      CHECK(r.pass);
    }
  }
}

TEST_CASE("selftest: model checks pass on edge configs, T=1, H=1, Dh=1, V=1", "[selftest]") {
  struct Edge {
    int V, D, H, C;
  };
  for (const Edge e : {Edge{1, 2, 1, 1}, Edge{1, 4, 2, 5}, Edge{10, 4, 4, 1}, Edge{12, 6, 6, 5},
                       Edge{16, 8, 1, 6}, Edge{160, 16, 2, 8}}) {
    ModelConfig c;
    c.vocab_size = e.V;
    c.d_model = e.D;
    c.n_heads = e.H;
    c.max_context_length = e.C;
    TinyAttentionLM model(c, 7);
    const std::vector<SelfTestResult> rs = run_self_tests(model, nullptr);
    require_only_failure(rs, "pytorch_reference");
  }
}

TEST_CASE("selftest: a model without the causal mask fails rows_and_mask and future_invariance", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  const ModelConfig& c = model.config;

  // The hand-written forward is faithful: with the mask it is the model, and it passes.
  const SelfTestForward with_mask = hand_forward(model, true);
  {
    Mat l0, w0, l1, w1;
    const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
    model_forward(model)(ids.data(), 1, 12, l0, w0);
    with_mask(ids.data(), 1, 12, l1, w1);
    CHECK((l0 - l1).cwiseAbs().maxCoeff() < 1e-5f);
    CHECK((w0 - w1).cwiseAbs().maxCoeff() < 1e-6f);
  }
  CHECK(check_rows_and_mask(with_mask, c).pass);
  CHECK(check_future_invariance(with_mask, c).pass);

  // Without the mask, the past sees the future.
  const SelfTestForward no_mask = hand_forward(model, false);
  const SelfTestResult rows = check_rows_and_mask(no_mask, c);
  INFO(describe(rows));
  CHECK_FALSE(rows.pass);
  CHECK(rows.detail.find("nonzero") != std::string::npos);
  const SelfTestResult future = check_future_invariance(no_mask, c);
  INFO(describe(future));
  CHECK_FALSE(future.pass);
  CHECK(future.max_error > 1e-3);
}

TEST_CASE("selftest: the live model with a broken mask fails the mask checks only", "[selftest]") {
  Trainer trainer{TrainerConfig{}};
  trainer.step(100);
  TinyAttentionLM& model = trainer.model();
  const ReferenceCase ref = load_case("short");
  for (const MaskMode mode : {MaskMode::None, MaskMode::Inverted}) {
    SECTION(mask_mode_name(mode)) {
      model.attn.mask = mode;
      const std::vector<SelfTestResult> rs = run_self_tests(model, &ref);
      check_shape_of_results(rs);
      for (const SelfTestResult& r : rs) {
        INFO(describe(r));
        CHECK(r.pass == (r.id != "rows_and_mask" && r.id != "future_invariance"));
      }
      CHECK(find(rs, "future_invariance").max_error > 1e-3);
      model.attn.mask = MaskMode::Causal;
      require_all_pass(run_self_tests(model, &ref));
    }
  }
}

TEST_CASE("selftest: rows_and_mask catches rows that do not sum to 1", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  const SelfTestForward base = model_forward(model);
  const SelfTestForward scaled = [&](const int32_t* ids, int B, int T, Mat& l, Mat& w) {
    base(ids, B, T, l, w);
    w *= 1.001f;
  };
  const SelfTestResult r = check_rows_and_mask(scaled, model.config);
  INFO(describe(r));
  CHECK_FALSE(r.pass);
  CHECK(r.max_error == Approx(1e-3).epsilon(1e-2));
  // A NaN never passes.
  const SelfTestForward nan = [&](const int32_t* ids, int B, int T, Mat& l, Mat& w) {
    base(ids, B, T, l, w);
    w(5, 0) = std::numeric_limits<float>::quiet_NaN();
  };
  CHECK_FALSE(check_rows_and_mask(nan, model.config).pass);
}

TEST_CASE("selftest: fused_qkv catches swapped weight blocks or bias slices", "[selftest]") {
  TinyAttentionLM model(ModelConfig{}, 42);
  const int D = model.config.d_model;
  Rng rng(3);
  Mat x(24, D);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal();
  const Mat& W = model.attn.qkv_proj.weight;
  const RowVec& b = model.attn.qkv_proj.bias;
  Mat fused(24, 3 * D);
  model.attn.qkv_proj.forward(x, fused);
  CHECK(check_fused_qkv(x, fused, W, b).pass);

  Mat W_kqv = W;  // rows in the order K, Q, V
  W_kqv.middleRows(0, D) = W.middleRows(D, D);
  W_kqv.middleRows(D, D) = W.middleRows(0, D);
  const SelfTestResult wrong_w = check_fused_qkv(x, fused, W_kqv, b);
  INFO(describe(wrong_w));
  CHECK_FALSE(wrong_w.pass);

  RowVec b_vqk = b;  // bias slices in the order V, Q, K
  b_vqk.segment(0, D) = b.segment(2 * D, D);
  b_vqk.segment(D, D) = b.segment(0, D);
  b_vqk.segment(2 * D, D) = b.segment(D, D);
  const SelfTestResult wrong_b = check_fused_qkv(x, fused, W, b_vqk);
  INFO(describe(wrong_b));
  CHECK_FALSE(wrong_b.pass);

  // A malformed input is a failing result, not an exception.
  const SelfTestResult bad_shape = check_fused_qkv(x, fused.leftCols(2 * D), W, b);
  CHECK_FALSE(bad_shape.pass);
  CHECK(bad_shape.detail.find("fused projection has shape") != std::string::npos);
}

TEST_CASE("selftest: split_merge catches a head layout that round-trips but is wrong", "[selftest]") {
  const ModelConfig c;
  CHECK(check_split_merge(c, &split_heads, &merge_heads).pass);
  const SelfTestResult r = check_split_merge(c, &interleaved_split, &interleaved_merge);
  INFO(describe(r));
  CHECK_FALSE(r.pass);
  CHECK(r.detail.find("max |merge(split(x)) - x| = 0;") != std::string::npos);  // round trip ok
}

TEST_CASE("selftest: a throwing forward gives a failing result, not an exception", "[selftest]") {
  const SelfTestForward throws = [](const int32_t*, int, int, Mat&, Mat&) {
    throw std::runtime_error("boom");
  };
  SelfTestResult r;
  REQUIRE_NOTHROW(r = check_rows_and_mask(throws, ModelConfig{}));
  CHECK_FALSE(r.pass);
  CHECK(r.detail == "error: boom");
  REQUIRE_NOTHROW(r = check_future_invariance(throws, ModelConfig{}));
  CHECK_FALSE(r.pass);
}

TEST_CASE("selftest: central_difference divides by the step taken and restores the value", "[selftest]") {
  float v = 3.0f;
  // 3 v^2 = 27
  const double d = gradcheck::central_difference(&v, [&] { return double(v) * v * v; });
  CHECK(v == 3.0f);
  CHECK(d == Approx(27.0).epsilon(1e-5));
  const SelfTestResult g = check_gradcheck();
  INFO(describe(g));
  CHECK(g.pass);
  CHECK(g.max_error > 0.0);  // a real measurement, not a constant
}

// ---- Depth: every check covers every layer

TEST_CASE("selftest: every check passes on 2- and 3-layer models, and says so",
          "[selftest][depth]") {
  for (const int L : {2, 3})
    for (const bool residual : {false, true}) {
      SECTION(str_cat(L, " layers", residual ? " with residual" : "")) {
        TrainerConfig tc;
        tc.model.n_layers = L;
        tc.model.residual = residual;
        Trainer trainer(tc);
        trainer.step(20);
        TinyAttentionLM& model = trainer.model();
        const std::vector<uint8_t> before = snapshot(model);
        const std::vector<SelfTestResult> rs = run_self_tests(model, nullptr);
        require_only_failure(rs, "pytorch_reference");
        CHECK(snapshot(model) == before);
        const std::string all = str_cat("all ", L, " layers");
        CHECK_THAT(find(rs, "rows_and_mask").detail, Catch::Matchers::Contains(all));
        CHECK_THAT(find(rs, "rows_and_mask").detail,
                   Catch::Matchers::Contains(str_cat(L * 2 * 4 * 12, " rows")));
        CHECK_THAT(find(rs, "future_invariance").detail, Catch::Matchers::Contains(all));
        CHECK_THAT(find(rs, "fused_qkv").detail, Catch::Matchers::Contains(all));
        CHECK_THAT(find(rs, "fused_qkv").detail,
                   Catch::Matchers::Contains(str_cat("layer ", L - 1, ": ")));
        CHECK_THAT(find(rs, "gradcheck").detail,
                   Catch::Matchers::Contains(str_cat(" L=", L, residual ? " with" : " without",
                                                     " residual")));
        // The gradcheck covers every layer's parameters.
        CHECK_THAT(find(rs, "gradcheck").detail,
                   Catch::Matchers::Contains(str_cat("layers.", L - 1, ".out_proj.bias")));
      }
    }
}

TEST_CASE("selftest: a broken mask in a deeper layer only fails the mask checks",
          "[selftest][depth]") {
  TrainerConfig tc;
  tc.model.n_layers = 2;
  tc.model.residual = true;
  Trainer trainer(tc);
  TinyAttentionLM& model = trainer.model();
  model.layers[1].mask = MaskMode::None;  // layer 0 stays causal
  const std::vector<SelfTestResult> rs = run_self_tests(model, nullptr);
  check_shape_of_results(rs);
  for (const SelfTestResult& r : rs) {
    INFO(describe(r));
    CHECK(r.pass == (r.id != "rows_and_mask" && r.id != "future_invariance" &&
                     r.id != "pytorch_reference"));
  }
}

TEST_CASE("selftest: fused_qkv of a deep model catches a layer whose qkv is not its weights'",
          "[selftest][depth]") {
  TrainerConfig tc;
  tc.model.n_layers = 3;
  Trainer trainer(tc);
  TinyAttentionLM& model = trainer.model();
  CHECK(check_fused_qkv(model).pass);
  // Layer 2's input is layer 1's output: checking layer 2's qkv against layer 1's weights fails.
  TinyAttentionLM::State s;
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5};
  model.forward(ids.data(), 1, 5, s);
  CHECK(check_fused_qkv(s.layers[2].x, s.layers[2].qkv, model.layers[2].qkv_proj.weight,
                        model.layers[2].qkv_proj.bias).pass);
  CHECK_FALSE(check_fused_qkv(s.layers[2].x, s.layers[2].qkv, model.layers[1].qkv_proj.weight,
                              model.layers[1].qkv_proj.bias).pass);
}

TEST_CASE("selftest: gradcheck passes at 1, 2 and 3 layers", "[selftest][depth]") {
  for (const int L : {1, 2, 3})
    for (const bool residual : {false, true}) {
      CAPTURE(L, residual);
      const SelfTestResult r = check_gradcheck(L, residual);
      INFO(describe(r));
      CHECK(r.pass);
    }
  CHECK(check_gradcheck().detail == check_gradcheck(1, false).detail);
}
