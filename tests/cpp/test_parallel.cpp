// The thread pool (base/parallel.h): every index runs once, in parts on the grain; a loop inside
// a loop runs inline; a part's error reaches the caller. And a training step gives the same
// numbers, bit for bit, on any number of threads. Builds without threads (the SIMD and scalar
// wasm builds) accept one thread only, and say so.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "attn/base/parallel.h"
#include "attn/kernels/kernels.h"
#include "attn/train/bench.h"
#include "attn/train/trainer.h"

using Catch::Matchers::Contains;

namespace {

// The thread counts a test runs: 1, and 2 and 3 where the build has threads.
std::vector<int> thread_counts() {
  std::vector<int> n = {1};
  for (int t : {2, 3})
    if (t <= attn::thread_capacity()) n.push_back(t);
  return n;
}

// Sets a thread count for one scope, back to 1 after.
struct Threads {
  explicit Threads(int n) { attn::set_thread_count(n); }
  ~Threads() { attn::set_thread_count(1); }
};

struct Part {
  int part;
  int64_t begin, end;
  bool operator<(const Part& o) const { return begin < o.begin; }
};

}  // namespace

TEST_CASE("parallel: every index once, in contiguous parts on the grain", "[parallel]") {
  for (int threads : thread_counts()) {
    const Threads use(threads);
    CHECK(attn::thread_count() == threads);
    const int64_t cases[][2] = {{1, 1}, {7, 2}, {100, 8}, {1000, 64}, {5, 10}, {4096, 4}};
    for (const auto& c : cases) {
      const int64_t n = c[0], grain = c[1];
      CAPTURE(threads, n, grain);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::mutex m;
      std::vector<Part> parts;
      attn::parallel_for(n, grain, [&](int part, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
        std::lock_guard<std::mutex> lock(m);
        parts.push_back({part, b, e});
      });
      CHECK(std::all_of(hits.begin(), hits.end(), [](const std::atomic<int>& h) { return h == 1; }));
      std::sort(parts.begin(), parts.end());
      REQUIRE(int(parts.size()) == attn::parallel_parts(n, grain));
      CHECK(int(parts.size()) <= threads);
      for (size_t p = 0; p < parts.size(); ++p) {
        CHECK(parts[p].part == int(p));
        CHECK(parts[p].begin % grain == 0);
        CHECK(parts[p].end == (p + 1 < parts.size() ? parts[p + 1].begin : n));
      }
    }
  }
}

TEST_CASE("parallel: loops inside loops run inline; a part's error reaches the caller",
          "[parallel]") {
  for (int threads : thread_counts()) {
    const Threads use(threads);
    CAPTURE(threads);
    std::atomic<int> inner_parts{0}, inner_hits{0};
    attn::parallel_for(4, 1, [&](int, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        attn::parallel_for(10, 1, [&](int part, int64_t ib, int64_t ie) {
          inner_parts += part == 0 ? 1 : 100;  // only part 0: inline
          inner_hits += int(ie - ib);
        });
    });
    CHECK(inner_parts == 4);
    CHECK(inner_hits == 40);
    const int last = attn::parallel_parts(100, 1) - 1;
    CHECK_THROWS_WITH(attn::parallel_for(100, 1,
                                         [&](int part, int64_t, int64_t) {
                                           if (part == last) throw std::runtime_error("part failed");
                                         }),
                      Contains("part failed"));
    // The pool is still usable afterwards.
    std::atomic<int64_t> sum{0};
    attn::parallel_for(100, 1, [&](int, int64_t b, int64_t e) { sum += e - b; });
    CHECK(sum == 100);
  }
}

TEST_CASE("parallel: the thread count is checked", "[parallel]") {
  const int cap = attn::thread_capacity();
  CHECK(cap >= 1);
  CHECK_THROWS_WITH(attn::set_thread_count(0), Contains("threads (0) must be in [1, "));
  CHECK_THROWS_WITH(attn::set_thread_count(cap + 1), Contains("threads (" + std::to_string(cap + 1) + ")"));
  CHECK(attn::thread_count() == 1);
  if (!attn::threads_supported()) CHECK(cap == 1);
}

TEST_CASE("parallel: products split over threads give the same numbers", "[parallel]") {
  attn::Rng rng(21);
  auto random = [&rng](int r, int c) {
    attn::Mat x(r, c);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform() - 0.5f;
    return x;
  };
  // The model's shapes: rows split (1024 rows), columns split (dW: few rows, many columns).
  const attn::Mat x = random(1024, 64), w = random(192, 64), dy = random(1024, 192);
  const attn::Mat bias = random(1, 192);
  attn::Mat y1(1024, 192), dw1(192, 64), dx1(1024, 64);
  for (int threads : thread_counts()) {
    const Threads use(threads);
    CAPTURE(threads);
    attn::Mat y(1024, 192), dw(192, 64), dx(1024, 64);
    attn::matmul_nt(x, w, y, 1.0f, bias.data());
    attn::matmul_tn(dy, x, dw);
    attn::matmul_nn(dy, w, dx);
    if (threads == 1) {
      y1 = y, dw1 = dw, dx1 = dx;
    } else {
      CHECK((y.array() == y1.array()).all());
      CHECK((dw.array() == dw1.array()).all());
      CHECK((dx.array() == dx1.array()).all());
    }
  }
}

TEST_CASE("parallel: training is bit-identical on any number of threads", "[parallel][trainer]") {
  attn::TrainerConfig text = attn::text_preset_config();  // the GPT preset, smaller
  text.task.seq_len = 32;
  text.training.batch_size = 6;
  attn::TrainerConfig grouped = text;  // grouped K/V heads, swiglu, RMSNorm, dropout
  grouped.model.kv_heads = 2;
  grouped.model.ffn = attn::FfnKind::SwiGLU;
  grouped.model.norm = attn::NormKind::RMSNorm;
  grouped.model.attn_dropout = 0.1f;
  grouped.model.out_dropout = 0.1f;
  for (const attn::TrainerConfig& c : {text, grouped}) {
    CAPTURE(c.model.ffn);
    std::vector<float> want;
    for (int threads : thread_counts()) {
      const Threads use(threads);
      CAPTURE(threads);
      attn::Trainer t(c);
      t.step(4);
      std::vector<float> got = t.loss_history();
      for (const attn::ParamRef& p : t.model().parameters())
        got.insert(got.end(), p.value, p.value + p.numel());
      if (threads == 1) want = got;
      else CHECK(got == want);
    }
  }
}
