// After its first step, a training step allocates nothing (cpp/README.md). NATIVE ONLY (glibc):
// this file replaces the C allocation functions with wrappers that count calls and forward to
// glibc's own implementations. tests.cmake leaves it out of the wasm and ATTN_SANITIZE builds;
// the wasm build checks the same property through the heap size in tests/js-api.
//
// A sanitizer that owns malloc (ASan, HWASan, TSan, MSan) calls it during its own start-up,
// before the runtime is ready, so with these wrappers the binary crashes before main. Under any
// of them, however the flags were given, the file compiles to no tests. (A standalone
// -fsanitize=leak has no macro to detect; tests.cmake fails the build if the suite then lists
// no tests.)
#include <catch2/catch.hpp>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_HWADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTN_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(hwaddress_sanitizer) || \
    __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ATTN_UNDER_SANITIZER 1
#endif
#endif

#ifndef ATTN_UNDER_SANITIZER

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "attn/model/decoder.h"
#include "attn/nn/ffn.h"
#include "attn/nn/multihead.h"
#include "attn/nn/norm.h"
#include "attn/nn/positions.h"
#include "attn/train/trainer.h"

extern "C" {
// glibc's allocator under its internal names; the public names below forward to them.
void* __libc_malloc(size_t size);
void __libc_free(void* ptr);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {
std::atomic<int64_t> g_allocations{0};
// Keeps the compiler from eliding the allocate-then-free pairs of the self-test.
void* volatile g_sink = nullptr;
}

// Every function that can hand out heap memory counts one call. operator new goes through
// malloc in libstdc++, and Eigen's aligned_malloc through malloc, so this sees them all.
extern "C" {
void* malloc(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
void free(void* ptr) { __libc_free(ptr); }
void* calloc(size_t n, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
void* realloc(void* ptr, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(ptr, size);
}
void* memalign(size_t alignment, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace {

int64_t allocations() { return g_allocations.load(std::memory_order_relaxed); }

// Heap calls made by step(10) on a trainer that has already taken one step.
int64_t allocations_in_ten_steps(const attn::TrainerConfig& config) {
  attn::Trainer trainer(config);
  trainer.step(1);
  const int64_t before = allocations();
  trainer.step(10);
  return allocations() - before;
}

}  // namespace

TEST_CASE("alloc: the counter sees malloc, operator new and Eigen", "[alloc]") {
  // Without this, a broken interposition would make the tests below pass vacuously.
  int64_t before = allocations();
  g_sink = malloc(64);
  free(g_sink);
  CHECK(allocations() - before == 1);
  before = allocations();
  g_sink = new int[100];
  delete[] static_cast<int*>(g_sink);
  CHECK(allocations() - before >= 1);
  before = allocations();
  attn::Mat m(64, 64);
  m.setZero();
  g_sink = m.data();
  CHECK(allocations() - before >= 1);
  before = allocations();
  void* r = nullptr;
  CHECK(posix_memalign(&r, 64, 256) == 0);
  CHECK(reinterpret_cast<uintptr_t>(r) % 64 == 0);
  free(r);
  CHECK(allocations() - before == 1);
  // A first step does allocate (workspaces are sized then), so the counter is live there too.
  attn::Trainer t(attn::TrainerConfig{});
  before = allocations();
  t.step(1);
  CHECK(allocations() - before > 0);
}

TEST_CASE("alloc: DemoConfig steps allocate nothing after the first", "[alloc]") {
  CHECK(allocations_in_ten_steps(attn::TrainerConfig{}) == 0);
}

TEST_CASE("alloc: steps with dropout allocate nothing after the first", "[alloc]") {
  attn::TrainerConfig c;
  c.model.attn_dropout = 0.1f;
  c.model.out_dropout = 0.2f;
  CHECK(allocations_in_ten_steps(c) == 0);
}

TEST_CASE("alloc: a larger config allocates nothing after the first step", "[alloc]") {
  // Here Eigen's GEMM packing blocks reach 768 KB, past Eigen's default stack allocation limit
  // of 128 KB: without the raised EIGEN_STACK_ALLOCATION_LIMIT (CMakeLists.txt) each step makes
  // 10 heap calls.
  attn::TrainerConfig c;
  c.model.vocab_size = 256;
  c.model.d_model = 128;
  c.model.n_heads = 8;
  c.task.seq_len = 64;
  c.training.batch_size = 8;
  CHECK(allocations_in_ten_steps(c) == 0);
}

TEST_CASE("alloc: 2 and 3 layers allocate nothing after the first step", "[alloc][depth]") {
  for (const int L : {2, 3})
    for (const bool residual : {false, true}) {
      CAPTURE(L, residual);
      attn::TrainerConfig c;
      c.model.n_layers = L;
      c.model.residual = residual;
      CHECK(allocations_in_ten_steps(c) == 0);
    }
  // Dropout and frozen heads in a deeper layer take their own paths through step().
  attn::TrainerConfig c;
  c.model.n_layers = 3;
  c.model.residual = true;
  c.model.attn_dropout = 0.1f;
  c.model.out_dropout = 0.1f;
  attn::Trainer trainer(c);
  attn::Trainer::Ablation a;
  a.heads_frozen.assign(size_t(3 * c.model.n_heads), 0);
  a.heads_frozen[size_t(1 * c.model.n_heads + 2)] = 1;  // layer 1, head 2
  a.heads_off.assign(size_t(3 * c.model.n_heads), 0);
  a.heads_off[size_t(2 * c.model.n_heads)] = 1;  // layer 2, head 0
  trainer.set_ablation(a);
  trainer.step(1);
  const int64_t before = allocations();
  trainer.step(10);
  CHECK(allocations() - before == 0);
}

TEST_CASE("alloc: the block's layers allocate nothing after their first step",
          "[alloc][norm][ffn]") {
  // One forward and backward of each layer sizes its workspaces; the next ones reuse them.
  const int N = 24, D = 16;
  attn::Rng rng(1);
  attn::Mat x(N, D), y(N, D), dy(N, D), dx(N, D);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    x.data()[i] = rng.normal();
    dy.data()[i] = rng.normal();
  }
  attn::Norm ln(attn::NormKind::LayerNorm, D), rms(attn::NormKind::RMSNorm, D);
  attn::Norm::State sl, sr;
  attn::FeedForward relu(attn::FfnKind::ReLU, D, 4, rng), gelu(attn::FfnKind::GELU, D, 2, rng),
      swiglu(attn::FfnKind::SwiGLU, D, 4, rng);
  attn::FeedForward::State s1, s2, s3;
  const attn::Rope rope(N, 8);
  auto step = [&] {
    ln.forward(x, sl, y);
    ln.backward(sl, dy, dx);
    rms.forward(x, sr, y);
    rms.backward(sr, dy, dx);
    relu.forward(x, s1, y);
    relu.backward(s1, dy, dx);
    gelu.forward(x, s2, y);
    gelu.backward(s2, dy, dx);
    swiglu.forward(x, s3, y);
    swiglu.backward(s3, dy, dx);
    rope.rotate(y.leftCols(8));
    rope.rotate_backward(dx.middleCols(8, 8));
  };
  step();
  const int64_t before = allocations();
  for (int i = 0; i < 5; ++i) step();
  CHECK(allocations() - before == 0);
}

TEST_CASE("alloc: attention with grouped K/V, RoPE and ALiBi allocates nothing after a step",
          "[alloc][gqa]") {
  const int B = 2, T = 8, D = 16, H = 4;
  attn::Rng rng(2);
  attn::Mat x(B * T, D), y(B * T, D), dy(B * T, D), dx(B * T, D);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    x.data()[i] = rng.normal();
    dy.data()[i] = rng.normal();
  }
  attn::AttentionOptions o;
  o.kv_heads = 2;
  o.rope = true;
  o.alibi = true;
  attn::MultiHeadSelfAttention m(D, H, T, 0.1f, 0.1f, rng, o);
  attn::MultiHeadSelfAttention::State s;
  m.forward(x, B, T, true, rng, s, y);
  m.backward(s, dy, dx);
  const int64_t before = allocations();
  for (int i = 0; i < 5; ++i) {
    m.forward(x, B, T, true, rng, s, y);
    m.backward(s, dy, dx);
  }
  CHECK(allocations() - before == 0);
}

TEST_CASE("alloc: training steps of the transformer block allocate nothing after the first",
          "[alloc][block]") {
  struct Case {
    const char* positions;
    const char* norm;
    const char* where;
    const char* ffn;
    int kv_heads, layers;
  };
  const Case cases[] = {
      {"rope", "rmsnorm", "pre", "swiglu", 2, 2},   {"learned", "layernorm", "post", "relu", 1, 3},
      {"alibi", "none", "pre", "gelu", 4, 1},       {"none", "layernorm", "pre", "none", 4, 2},
      {"sinusoidal", "rmsnorm", "post", "none", 1, 1},
  };
  for (const Case& k : cases) {
    CAPTURE(k.positions, k.norm, k.where, k.ffn, k.kv_heads, k.layers);
    attn::TrainerConfig c;
    c.model.residual = true;
    c.model.positions = attn::parse_position_kind(k.positions);
    c.model.norm = attn::parse_norm_kind(k.norm);
    c.model.norm_position = attn::parse_norm_position(k.where);
    c.model.ffn = attn::parse_ffn_kind(k.ffn);
    c.model.kv_heads = k.kv_heads;
    c.model.n_layers = k.layers;
    c.model.max_context_length = 16;
    c.model.attn_dropout = 0.1f;
    CHECK(allocations_in_ten_steps(c) == 0);
  }
}

TEST_CASE("alloc: masked language modelling and the attention variants allocate nothing after "
          "the first step",
          "[alloc][mlm]") {
  struct Case {
    const char* objective;
    const char* attention;
    bool differential;
    const char* task;
  };
  const Case cases[] = {
      {"mlm", "full", false, "copy"},    {"mlm", "strided", true, "text"},
      {"causal", "window", true, "repeat"}, {"causal", "strided", false, "induction"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.objective, k.attention, k.differential, k.task);
    attn::TrainerConfig c;
    c.model.residual = true;
    c.model.n_layers = 2;
    c.model.objective = attn::parse_objective(k.objective);
    c.model.attention = attn::parse_attention_kind(k.attention);
    c.model.window = 3;
    c.model.stride = 4;
    c.model.differential = k.differential;
    c.task.name = k.task;
    c.model.attn_dropout = 0.1f;
    CHECK(allocations_in_ten_steps(c) == 0);
  }
}

TEST_CASE("alloc: decoding allocates nothing after the first push and the first slide",
          "[alloc][decoder]") {
  struct Case {
    attn::PositionKind positions;
    attn::NormKind norm;
    attn::FfnKind ffn;
    int layers;
    attn::AttentionKind attention;
  };
  const Case cases[] = {
      {attn::PositionKind::Rope, attn::NormKind::RMSNorm, attn::FfnKind::SwiGLU, 2, {}},
      {attn::PositionKind::Alibi, attn::NormKind::LayerNorm, attn::FfnKind::GELU, 1, {}},
      {attn::PositionKind::Learned, attn::NormKind::None, attn::FfnKind::None, 3, {}},
      // A window cache of 3 rows that lets its oldest go, kept through the slides; differential.
      {attn::PositionKind::Rope, attn::NormKind::None, attn::FfnKind::None, 2,
       attn::AttentionKind::Window},
      {attn::PositionKind::Alibi, attn::NormKind::RMSNorm, attn::FfnKind::None, 2,
       attn::AttentionKind::Strided},
  };
  for (const Case& k : cases)
    for (bool use_cache : {true, false}) {
      CAPTURE(int(k.positions), k.layers, use_cache, int(k.attention));
      attn::ModelConfig c{20, 16, 4, 8};
      c.residual = true;
      c.positions = k.positions;
      c.norm = k.norm;
      c.ffn = k.ffn;
      c.n_layers = k.layers;
      c.kv_heads = 2;
      c.attention = k.attention;
      c.window = 3;
      c.stride = 3;
      c.differential = k.attention == attn::AttentionKind::Strided;
      attn::TinyAttentionLM model(c, 1);
      attn::Decoder d(model, use_cache);
      d.push(1);
      int64_t before = allocations();
      // While the context grows the reference's forward resizes its State at every length.
      for (int i = 1; i < 8; ++i) d.push(i);
      if (use_cache) CHECK(allocations() - before == 0);
      d.push(9);  // the first slide: the re-encoding reference sizes its State for T = C
      before = allocations();
      for (int i = 0; i < 10; ++i) d.push(i);
      CHECK(allocations() - before == 0);
    }
}

#endif  // ATTN_UNDER_SANITIZER
