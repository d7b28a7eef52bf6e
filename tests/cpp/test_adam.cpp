// Adam with torch.optim.Adam's semantics: a two-step case by hand, the class against
// adam_update, and config validation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/train/adam.h"
#include "reference_dir.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("adam: two steps computed by hand", "[adam]") {
  // lr 0.1, betas 0.9 / 0.999, eps 1e-8; p = 1; gradients 0.5 then -0.25.
  // step 1: m = 0.1 * 0.5 = 0.05;  v = 0.001 * 0.25 = 0.00025
  //         bc1 = 1 - 0.9 = 0.1;   bc2 = 1 - 0.999 = 0.001
  //         step_size = lr / bc1 = 1;  denom = sqrt(0.00025) / sqrt(0.001) + eps = 0.5 + 1e-8
  //         p = 1 - 1 * 0.05 / 0.50000001 = 0.900000002   (the first step moves by ~lr)
  // step 2: m = 0.9 * 0.05 + 0.1 * (-0.25) = 0.045 - 0.025 = 0.02
  //         v = 0.999 * 0.00025 + 0.001 * 0.0625 = 0.00024975 + 0.0000625 = 0.00031225
  //         bc1 = 1 - 0.81 = 0.19;  bc2 = 1 - 0.998001 = 0.001999
  //         step_size = 0.1 / 0.19 = 0.5263158
  //         denom = sqrt(0.00031225) / sqrt(0.001999) = 0.0176706 / 0.0447102 = 0.3952254
  //         p = 0.900000002 - 0.5263158 * 0.02 / 0.3952254 = 0.900000002 - 0.0266337 = 0.8733663
  // As in PyTorch, the betas are doubles: 1 - 0.999 is 0.001 before the cast to float.
  float p = 1.0f, m = 0.0f, v = 0.0f;
  float g = 0.5f;
  attn::adam_update(&p, &g, &m, &v, 1, 0.1f, 0.9, 0.999, 1e-8f, 1);
  CHECK_THAT(m, WithinAbs(0.05, 1e-7));
  CHECK_THAT(v, WithinAbs(0.00025, 1e-8));
  CHECK_THAT(p, WithinAbs(0.900000002, 1e-6));
  g = -0.25f;
  attn::adam_update(&p, &g, &m, &v, 1, 0.1f, 0.9, 0.999, 1e-8f, 2);
  CHECK_THAT(m, WithinAbs(0.02, 1e-7));
  CHECK_THAT(v, WithinAbs(0.00031225, 1e-8));
  CHECK_THAT(p, WithinAbs(0.8733663, 1e-6));
}

TEST_CASE("adam: the first step moves every parameter by about lr against its gradient",
          "[adam]") {
  // m / sqrt(v) after bias correction is g / |g| = sign(g) at step 1, whatever the scale of g.
  std::vector<float> p = {0, 0, 0, 0}, g = {1e-3f, -7.0f, 250.0f, -0.5f}, m(4, 0), v(4, 0);
  attn::adam_update(p.data(), g.data(), m.data(), v.data(), 4, 0.01f, 0.9, 0.999, 1e-8f, 1);
  CHECK_THAT(p[0], WithinAbs(-0.01, 1e-6));
  CHECK_THAT(p[1], WithinAbs(0.01, 1e-6));
  CHECK_THAT(p[2], WithinAbs(-0.01, 1e-6));
  CHECK_THAT(p[3], WithinAbs(0.01, 1e-6));
}

TEST_CASE("adam: the class applies adam_update to every parameter with its own step count",
          "[adam]") {
  // Two parameters of different shapes, updated five times with changing gradients.
  std::vector<float> w = {0.5f, -0.25f, 1.0f, 2.0f, -3.0f, 0.125f}, b = {0.1f, -0.2f};
  std::vector<float> dw(6), db(2);
  std::vector<float> ref_w = w, ref_b = b, mw(6, 0), vw(6, 0), mb(2, 0), vb(2, 0);
  attn::AdamConfig cfg;
  cfg.lr = 5e-3f;
  attn::Adam adam({{"w", {2, 3}, w.data(), dw.data()}, {"b", {2}, b.data(), db.data()}}, cfg);
  REQUIRE(adam.m.size() == 2);
  REQUIRE(adam.m[0].size() == 6);
  REQUIRE(adam.v[1].size() == 2);
  for (int step = 1; step <= 5; ++step) {
    for (int i = 0; i < 6; ++i) dw[i] = std::sin(1.0f + i * step);
    for (int i = 0; i < 2; ++i) db[i] = std::cos(2.0f + i - step);
    adam.step();
    CHECK(adam.t == step);
    attn::adam_update(ref_w.data(), dw.data(), mw.data(), vw.data(), 6, 5e-3f, 0.9, 0.999,
                      1e-8f, step);
    attn::adam_update(ref_b.data(), db.data(), mb.data(), vb.data(), 2, 5e-3f, 0.9, 0.999,
                      1e-8f, step);
    CAPTURE(step);
    CHECK(w == ref_w);  // bit-identical: the class is exactly a loop over adam_update
    CHECK(b == ref_b);
    CHECK(adam.m[0] == mw);
    CHECK(adam.v[1] == vb);
  }
}

TEST_CASE("adam: zero gradients leave fresh parameters where they are", "[adam]") {
  std::vector<float> p = {1, 2, 3}, g(3, 0.0f);
  attn::Adam adam({{"p", {3}, p.data(), g.data()}}, attn::AdamConfig{});
  adam.step();
  adam.step();
  CHECK(p == std::vector<float>{1, 2, 3});
}

TEST_CASE("adam: config validation names the bad value", "[adam]") {
  auto with = [](float lr, float b1, float b2, float eps) {
    attn::AdamConfig c;
    c.lr = lr;
    c.beta1 = b1;
    c.beta2 = b2;
    c.eps = eps;
    return c;
  };
  CHECK_NOTHROW(attn::AdamConfig{}.validate());
  CHECK_THROWS_WITH(with(0, 0.9, 0.999, 1e-8f).validate(), Contains("lr (0)"));
  CHECK_THROWS_WITH(with(-1, 0.9, 0.999, 1e-8f).validate(), Contains("lr (-1)"));
  CHECK_THROWS_WITH(with(std::nanf(""), 0.9, 0.999, 1e-8f).validate(), Contains("lr (nan)"));
  CHECK_THROWS_WITH(with(1e-3f, 1.0f, 0.999f, 1e-8f).validate(), Contains("beta1 (1)"));
  CHECK_THROWS_WITH(with(1e-3f, 0.9f, -0.5f, 1e-8f).validate(), Contains("beta2 (-0.5)"));
  CHECK_THROWS_WITH(with(1e-3f, 0.9, 0.999, -1.0f).validate(), Contains("eps (-1)"));
  // The class validates on construction.
  CHECK_THROWS_AS(attn::Adam({}, with(0, 0.9, 0.999, 1e-8f)), std::invalid_argument);
}

TEST_CASE("adam: AdamW decays the parameter before the Adam step, in PyTorch's order",
          "[adam]") {
  // lr 0.1, wd 0.5, p = 2, g = 0.5, step 1: p = 2 * (1 - 0.05) = 1.9, then the Adam step of
  // "two steps computed by hand" moves it by lr * 0.05 / (0.5 + 1e-8) = 0.1: p = 1.8.
  float p = 2.0f, m = 0.0f, v = 0.0f, g = 0.5f;
  attn::adam_update(&p, &g, &m, &v, 1, 0.1f, 0.9, 0.999, 1e-8f, 1, 0.5);
  CHECK_THAT(p, WithinAbs(1.8, 1e-6));
  // With a zero gradient only the decay acts: m = v = 0, the Adam term is 0 / eps = 0.
  float q = 1.0f, mq = 0.0f, vq = 0.0f, zero = 0.0f;
  attn::adam_update(&q, &zero, &mq, &vq, 1, 0.1f, 0.9, 0.999, 1e-8f, 1, 0.5);
  CHECK_THAT(q, WithinAbs(0.95, 1e-7));
}

TEST_CASE("adam: clip_grad_norm scales every gradient by min(1, c / (norm + 1e-6))", "[adam]") {
  // Gradients (3, 4) and (12): total norm sqrt(9 + 16 + 144) = 13; clipped to 1: scale 1 / 13.
  std::vector<float> a = {0, 0}, b = {0}, da = {3.0f, 4.0f}, db = {12.0f};
  const std::vector<attn::ParamRef> ps = {{"a", {2}, a.data(), da.data()},
                                          {"b", {1}, b.data(), db.data()}};
  CHECK_THAT(attn::clip_grad_norm(ps, 1.0), WithinAbs(13.0, 1e-5));
  CHECK_THAT(da[0], WithinAbs(3.0 / (13.0 + 1e-6), 1e-7));
  CHECK_THAT(db[0], WithinAbs(12.0 / (13.0 + 1e-6), 1e-7));
  // Below the bound nothing changes: the new norm is 1 / (1 + 1e-6 / 13), under 100.
  const std::vector<float> before = da;
  CHECK(attn::clip_grad_norm(ps, 100.0) < 1.0f);
  CHECK(da == before);
}

TEST_CASE("adam: AdamW with clipping matches torch.optim.AdamW and clip_grad_norm_", "[adam]") {
  // tests/reference/make_adamw_reference.py: betas 0.9 / 0.95, wd 0.1, lr 1e-2, clip 1.0; three
  // steps, the first two clipped.
  const testdata::ReferenceFile ref("adamw_clip.safetensors");
  const attn::SafetensorsFile& f = ref.file;
  std::vector<float> w = f.f32("w0"), b = f.f32("b0"), dw(w.size()), db(b.size());
  attn::AdamConfig cfg;
  cfg.lr = 1e-2f;
  cfg.beta2 = 0.95;
  cfg.weight_decay = 0.1;
  const std::vector<attn::ParamRef> ps = {{"w", {3, 4}, w.data(), dw.data()},
                                          {"b", {4}, b.data(), db.data()}};
  attn::Adam adam(ps, cfg);
  for (int s = 1; s <= 3; ++s) {
    CAPTURE(s);
    // Copied into the buffers the ParamRefs point at.
    const std::vector<float> gw = f.f32(attn::str_cat("g", s, "_w")), gb = f.f32(attn::str_cat("g", s, "_b"));
    std::copy(gw.begin(), gw.end(), dw.begin());
    std::copy(gb.begin(), gb.end(), db.begin());
    const float norm = attn::clip_grad_norm(ps, 1.0);
    CHECK_THAT(norm, WithinRel(f.f32(attn::str_cat("norm", s))[0], 1e-6f));
    adam.step();
    const std::vector<float> tw = f.f32(attn::str_cat("w", s)), tb = f.f32(attn::str_cat("b", s));
    for (size_t i = 0; i < w.size(); ++i) CHECK_THAT(w[i], WithinAbs(tw[i], 2e-7));
    for (size_t i = 0; i < b.size(); ++i) CHECK_THAT(b[i], WithinAbs(tb[i], 2e-7));
  }
}
